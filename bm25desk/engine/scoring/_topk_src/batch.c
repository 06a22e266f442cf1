/* batch(): the exhaustive top k of many queries in one call (evaluation runs), without the GIL.
 *
 * An evaluation run asks for the top 1,000 of hundreds of queries under one weighting. One call
 * per query cost more in Python (argument tuples, cache look-ups, result objects) than the
 * traversal itself on small collections. Here the caller hands, once per chunk of queries, a
 * table of the chunk's distinct terms (per segment: PostingList, Table, overflow values, Parts)
 * and the queries as slots into it with their weights qw = qtf * idf; every argument is checked
 * once, then each query runs the exhaustive traversal (exhaustive.c) over every segment with the
 * previous segments' top k carried in its heap, exactly as search(exhaustive=True) does query by
 * query: the same sums in query order from 0.0, the same tie rule, bit for bit. The result is
 * one array of docnos and one of scores, k places per query, with each query's size and match
 * count. */
#include "topk.h"

/* One distinct term in one segment, checked. */
typedef struct {
    const PostingList *pl; /* NULL: the term has no postings in this segment */
    const double *T, *U;
    double tmin; /* T's smallest tf part */
    Py_ssize_t rows;
    const double *ovf;
    Parts *parts;
} TermSeg;

typedef struct {
    Py_buffer dli, deny;
    int have_dli, have_deny;
    int64_t base;
    Py_ssize_t ndocs;
    TermSeg *e; /* nslots */
    Py_buffer *ov; /* the overflow views taken (nslots, have_ov says which) */
    char *have_ov;
} Seg;

typedef struct {
    Seg *segs;
    Py_ssize_t nseg, nslots, nq, k, nterms;
    Py_buffer slots, qws, offs;
    int have_slots, have_qws, have_offs;
    Py_buffer *allow; /* per query (have_allow says which) */
    char *have_allow;
    PyObject *lists; /* a tuple of tuples (ours: the caller's lists may change) */
    int split;       /* a large windowed query may use threads (exhaustive_threads()) */
} Batch;

static void
batch_release(Batch *b)
{
    for (Py_ssize_t s = 0; b->segs && s < b->nseg; s++) {
        Seg *sg = &b->segs[s];
        if (sg->have_dli) {
            PyBuffer_Release(&sg->dli);
        }
        if (sg->have_deny) {
            PyBuffer_Release(&sg->deny);
        }
        for (Py_ssize_t t = 0; sg->have_ov && t < b->nslots; t++) {
            if (sg->have_ov[t]) {
                PyBuffer_Release(&sg->ov[t]);
            }
        }
        free(sg->e);
        free(sg->ov);
        free(sg->have_ov);
    }
    free(b->segs);
    for (Py_ssize_t q = 0; b->have_allow && q < b->nq; q++) {
        if (b->have_allow[q]) {
            PyBuffer_Release(&b->allow[q]);
        }
    }
    free(b->allow);
    free(b->have_allow);
    if (b->have_slots) {
        PyBuffer_Release(&b->slots);
    }
    if (b->have_qws) {
        PyBuffer_Release(&b->qws);
    }
    if (b->have_offs) {
        PyBuffer_Release(&b->offs);
    }
    Py_XDECREF(b->lists);
}

/* One term's entry in one segment given as a Parts (postings_cache.py): it holds its list, its
 * table and its overflow values. */
static int
take_parts(Seg *sg, Py_ssize_t t, Parts *pa)
{
    TermSeg *e = &sg->e[t];
    const PostingList *pl = pa->list;
    const Table *tb = (const Table *)pa->table;
    if (pl->n_docs != sg->ndocs || pl->dli_view.buf != sg->dli.buf) {
        PyErr_SetString(PyExc_ValueError, "PostingList was built for another dl_index");
        return -1;
    }
    if (!tb->ready || tb->cap != pl->cap || (pl->max_j >= 0 && tb->rows <= pl->max_j)) {
        PyErr_SetString(PyExc_ValueError, "table does not fit the posting list");
        return -1;
    }
    if (pa->novf && !pa->have_ovf) {
        PyErr_SetString(PyExc_ValueError, "overflow values are missing");
        return -1;
    }
    e->T = tb->T;
    e->U = tb->U;
    e->tmin = tb->tmin;
    e->rows = tb->rows;
    e->ovf = pa->novf ? pa->ovf : NULL;
    e->parts = pa->fillable || parts_ready(pa) ? pa : NULL;
    e->pl = pl;
    pa->ref = 1;
    return 0;
}

/* One term's entry in one segment: a Parts, or (PostingList, Table, overflow values or None,
 * Parts or None), checked as search() checks a term. */
static int
take_entry(Seg *sg, Py_ssize_t t, PyObject *item)
{
    TermSeg *e = &sg->e[t];
    PyObject *plo, *tobj, *oobj, *pobj;
    if (item == Py_None) {
        return 0;
    }
    if (PyObject_TypeCheck(item, &PartsType)) {
        return take_parts(sg, t, (Parts *)item);
    }
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "O!O!OO", &PostingListType, &plo,
                                                  &TableType, &tobj, &oobj, &pobj)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError,
                        "each entry is None, a Parts or (PostingList, Table, overflow values, "
                        "parts)");
        return -1;
    }
    PostingList *pl = as_posting_list(plo);
    if (!pl) {
        return -1;
    }
    if (pl->n_docs != sg->ndocs || pl->dli_view.buf != sg->dli.buf) {
        PyErr_SetString(PyExc_ValueError, "PostingList was built for another dl_index");
        return -1;
    }
    Table *tb = (Table *)tobj;
    if (!tb->ready || tb->cap != pl->cap) {
        PyErr_SetString(PyExc_ValueError, "table does not fit the posting list (cap)");
        return -1;
    }
    if (pl->max_j >= 0 && tb->rows <= pl->max_j) {
        PyErr_SetString(PyExc_ValueError, "table does not fit the posting list (too few rows)");
        return -1;
    }
    e->T = tb->T;
    e->U = tb->U;
    e->tmin = tb->tmin;
    e->rows = tb->rows;
    e->ovf = NULL;
    if (pl->novf) {
        if (oobj == Py_None || get_buffer(oobj, &sg->ov[t], 'd', "overflow values") < 0) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "overflow values are missing");
            }
            return -1;
        }
        sg->have_ov[t] = 1;
        const double *v = (const double *)sg->ov[t].buf;
        if (buf_len(&sg->ov[t]) != pl->novf) {
            PyErr_SetString(PyExc_ValueError, "overflow values do not fit the posting list");
            return -1;
        }
        for (Py_ssize_t i = 0; i < pl->novf; i++) {
            if (!isfinite(v[i]) || v[i] < 0.0) {
                PyErr_SetString(PyExc_ValueError, "tf parts must be finite and non-negative");
                return -1;
            }
        }
        e->ovf = v;
    }
    e->parts = NULL;
    if (pobj != Py_None) {
        Parts *pa = (Parts *)pobj;
        if (!PyObject_TypeCheck(pobj, &PartsType) || !parts_fit(pa, pl) || pa->table != tobj) {
            PyErr_SetString(PyExc_ValueError, "parts were made for another posting list or table");
            return -1;
        }
        e->parts = pa;
    }
    e->pl = pl;
    return 0;
}

/* One segment: (dl_index, deny or None, base) and its entries, one per slot. */
static int
take_segment(Batch *b, Py_ssize_t s, PyObject *desc, PyObject *entries)
{
    Seg *sg = &b->segs[s];
    PyObject *dli, *deny, *base;
    if (!PyTuple_Check(desc) || !PyArg_ParseTuple(desc, "OOO", &dli, &deny, &base)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "each segment is (dl_index, deny or None, base)");
        return -1;
    }
    int w;
    if (get_dli_buffer(dli, &sg->dli, &w) < 0) {
        return -1;
    }
    sg->have_dli = 1;
    sg->ndocs = buf_len(&sg->dli);
    Py_ssize_t bv;
    if (get_count(base, "base", 0, PY_SSIZE_T_MAX - sg->ndocs, 0, &bv) < 0 ||
        get_optional_buffer(deny, &sg->deny, &sg->have_deny, 'b', "deny") < 0) {
        return -1;
    }
    sg->base = (int64_t)bv;
    if (sg->have_deny && buf_len(&sg->deny) < sg->ndocs) {
        PyErr_SetString(PyExc_ValueError, "deny must cover every document of dl_index");
        return -1;
    }
    Py_ssize_t n1 = b->nslots ? b->nslots : 1;
    sg->e = calloc((size_t)n1, sizeof(TermSeg));
    sg->ov = calloc((size_t)n1, sizeof(Py_buffer));
    sg->have_ov = calloc((size_t)n1, 1);
    if (!sg->e || !sg->ov || !sg->have_ov) {
        PyErr_NoMemory();
        return -1;
    }
    if (!PyTuple_Check(entries) || PyTuple_GET_SIZE(entries) != b->nslots) {
        PyErr_SetString(PyExc_ValueError, "every segment needs one entry per slot");
        return -1;
    }
    for (Py_ssize_t t = 0; t < b->nslots; t++) {
        if (take_entry(sg, t, PyTuple_GET_ITEM(entries, t)) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The queries: slots (int32) and weights (float64) in query order, offsets (int64, nq + 1),
 * each query's slots distinct and in range, every weight finite. */
static int
take_queries(Batch *b, PyObject *slots, PyObject *qws, PyObject *offs)
{
    if (get_buffer(slots, &b->slots, 'i', "slots") < 0) {
        return -1;
    }
    b->have_slots = 1;
    if (get_buffer(qws, &b->qws, 'd', "weights") < 0) {
        return -1;
    }
    b->have_qws = 1;
    if (get_buffer(offs, &b->offs, 'q', "offsets") < 0) {
        return -1;
    }
    b->have_offs = 1;
    Py_ssize_t nt = buf_len(&b->slots), no = buf_len(&b->offs);
    const int64_t *o = (const int64_t *)b->offs.buf;
    const int32_t *sl = (const int32_t *)b->slots.buf;
    const double *w = (const double *)b->qws.buf;
    if (buf_len(&b->qws) != nt || no < 1 || o[0] != 0 || o[no - 1] != nt) {
        PyErr_SetString(PyExc_ValueError, "slots, weights and offsets do not agree");
        return -1;
    }
    b->nq = no - 1;
    b->nterms = 0;
    int64_t *seen = malloc(sizeof(int64_t) * (size_t)(b->nslots ? b->nslots : 1));
    if (!seen) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t t = 0; t < b->nslots; t++) {
        seen[t] = -1;
    }
    for (Py_ssize_t q = 0; q < b->nq; q++) {
        if (o[q + 1] < o[q]) {
            free(seen);
            PyErr_SetString(PyExc_ValueError, "offsets must ascend");
            return -1;
        }
        for (int64_t j = o[q]; j < o[q + 1]; j++) {
            if (sl[j] < 0 || sl[j] >= b->nslots || seen[sl[j]] == q || !isfinite(w[j])) {
                free(seen);
                PyErr_SetString(PyExc_ValueError, "a query's slots must be distinct, in range, "
                                                  "with finite weights");
                return -1;
            }
            seen[sl[j]] = q;
        }
        if (o[q + 1] - o[q] > b->nterms) {
            b->nterms = o[q + 1] - o[q];
        }
    }
    free(seen);
    return 0;
}

/* Per query: None, or a boolean mask over every document of the segments (base + ndocs). */
static int
take_allows(Batch *b, PyObject *allows)
{
    if (allows == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(allows) || PyTuple_GET_SIZE(allows) != b->nq) {
        PyErr_SetString(PyExc_ValueError, "allows must be None or one item per query");
        return -1;
    }
    Py_ssize_t total = 0;
    for (Py_ssize_t s = 0; s < b->nseg; s++) {
        Py_ssize_t end = (Py_ssize_t)b->segs[s].base + b->segs[s].ndocs;
        total = end > total ? end : total;
    }
    b->allow = calloc((size_t)(b->nq ? b->nq : 1), sizeof(Py_buffer));
    b->have_allow = calloc((size_t)(b->nq ? b->nq : 1), 1);
    if (!b->allow || !b->have_allow) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t q = 0; q < b->nq; q++) {
        int have;
        if (get_optional_buffer(PyTuple_GET_ITEM(allows, q), &b->allow[q], &have, 'b',
                                "allow") < 0) {
            return -1;
        }
        b->have_allow[q] = (char)have;
        if (have && buf_len(&b->allow[q]) < total) {
            PyErr_SetString(PyExc_ValueError, "allow must cover every document");
            return -1;
        }
    }
    return 0;
}

/* Scratch for the traversal of one query at a time (sized by the largest segment and query). */
typedef struct {
    Cursor *cs;
    int32_t *scratch;
    double *acc;
    uint8_t *seen;
    int32_t *touched;
    Heap h;
    Entry *es;
} Work;

static int
work_alloc(Work *w, const Batch *b)
{
    Py_ssize_t nd = 1, nt = b->nterms ? b->nterms : 1, k1 = b->k ? b->k : 1;
    for (Py_ssize_t s = 0; s < b->nseg; s++) {
        nd = b->segs[s].ndocs > nd ? b->segs[s].ndocs : nd;
    }
    memset(w, 0, sizeof(*w));
    w->cs = calloc((size_t)nt, sizeof(Cursor));
    w->scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * (size_t)nt);
    w->acc = calloc((size_t)nd, sizeof(double));
    w->seen = calloc((size_t)nd, 1);
    w->touched = malloc(sizeof(int32_t) * (size_t)nd);
    w->h.s = malloc(sizeof(double) * (size_t)k1);
    w->h.d = malloc(sizeof(int64_t) * (size_t)k1);
    w->h.slot = malloc(sizeof(Py_ssize_t) * (size_t)k1);
    w->es = malloc(sizeof(Entry) * (size_t)k1);
    return w->cs && w->scratch && w->acc && w->seen && w->touched && w->h.s && w->h.d &&
                   w->h.slot && w->es
               ? 0
               : -1;
}

static void
work_free(Work *w)
{
    void *p[] = {w->cs, w->scratch, w->acc, w->seen, w->touched, w->h.s, w->h.d, w->h.slot, w->es};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        free(p[i]);
    }
}

/* The heap's entries best first into docnos and scores (a selection leaves them sorted already:
 * checked in one pass, sorted only when not). Returns how many. */
static Py_ssize_t
put_sorted(Work *w, int64_t *od, double *os)
{
    Py_ssize_t m = w->h.size;
    heap_best_first(&w->h, w->es);
    for (Py_ssize_t i = 0; i < m; i++) {
        od[i] = w->es[i].d;
        os[i] = w->es[i].s;
    }
    return m;
}

/* Rank query q over every segment into od/os: its size, or -1 (out of memory), or -2 (the
 * postings changed). */
static Py_ssize_t
run_query(const Batch *b, Work *w, Py_ssize_t q, int64_t *od, double *os, long long *matches)
{
    const int64_t *o = (const int64_t *)b->offs.buf;
    const int32_t *sl = (const int32_t *)b->slots.buf;
    const double *qw = (const double *)b->qws.buf;
    const uint8_t *allow = b->have_allow && b->have_allow[q] ? (const uint8_t *)b->allow[q].buf
                                                               : NULL;
    w->h.size = 0;
    w->h.cap = b->k;
    *matches = 0;
    for (Py_ssize_t s = 0; s < b->nseg; s++) {
        const Seg *sg = &b->segs[s];
        Query Q;
        memset(&Q, 0, sizeof(Q));
        int n = 0;
        Py_ssize_t total = 0;
        for (int64_t j = o[q]; j < o[q + 1]; j++) {
            const TermSeg *e = &sg->e[sl[j]];
            if (!e->pl) {
                continue;
            }
            Cursor *c = &w->cs[n];
            cursor_setup(c, e->pl, &Q.broken, w->scratch + (Py_ssize_t)CURSOR_SCRATCH * n);
            c->T = e->T;
            c->U = e->U;
            c->tmin = e->tmin;
            c->rows = e->rows;
            c->ovf_val = e->ovf;
            c->parts = e->parts;
            c->qw = qw[j];
            c->qwp = qw[j] > 0.0 ? qw[j] : 0.0;
            c->qi = n;
            total += e->pl->n;
            n++;
        }
        if (!n) {
            continue;
        }
        heap_rebuild(&w->h, w->es);
        Q.cs = w->cs;
        Q.n = n;
        Q.allow = allow ? allow + sg->base : NULL;
        Q.deny = sg->have_deny ? (const uint8_t *)sg->deny.buf : NULL;
        Q.base = sg->base;
        Q.h = &w->h;
        Q.total_postings = total;
        /* acc and seen hold a whole segment, so the window (when one is used) fits them. */
        Py_ssize_t win = exhaustive_window(&Q, sg->ndocs);
        long long m = exhaustive(&Q, sg->ndocs, win, 0, w->acc, w->seen, win ? NULL : w->touched,
                                 NULL, b->split);
        if (Q.broken) {
            return -2;
        }
        if (m < 0) {
            return -1;
        }
        *matches += m;
    }
    return put_sorted(w, od, os);
}

/* Rank every query (without the GIL): 0, -1 (out of memory) or -2 (the postings changed). */
static int
run_all(const Batch *b, int64_t *od, double *os, int64_t *sizes, int64_t *matches)
{
    Work w;
    int r = 0;
    if (work_alloc(&w, b) < 0) {
        work_free(&w);
        return -1;
    }
    for (Py_ssize_t q = 0; q < b->nq; q++) {
        long long m;
        Py_ssize_t got = run_query(b, &w, q, od + q * b->k, os + q * b->k, &m);
        if (got < 0) {
            r = (int)got;
            break;
        }
        sizes[q] = got;
        matches[q] = m;
    }
    work_free(&w);
    return r;
}

PyObject *
topk_batch(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"segments", "lists", "slots", "weights", "offsets", "k", "allows",
                             "split", NULL};
    PyObject *segments, *lists, *slots, *qws, *offs, *kobj, *allows = Py_None, *out = NULL;
    PyObject *bd = NULL, *bs = NULL, *bz = NULL, *bm = NULL;
    Batch b;
    memset(&b, 0, sizeof(b));
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|Op", kwlist, &segments, &lists, &slots,
                                     &qws, &offs, &kobj, &allows, &b.split)) {
        return NULL;
    }
    if (!PyTuple_Check(segments) || !PyTuple_Check(lists) ||
        PyTuple_GET_SIZE(segments) != PyTuple_GET_SIZE(lists)) {
        PyErr_SetString(PyExc_TypeError, "segments and lists must be tuples of one length");
        return NULL;
    }
    b.nseg = PyTuple_GET_SIZE(segments);
    b.nslots = b.nseg ? (PyTuple_Check(PyTuple_GET_ITEM(lists, 0))
                             ? PyTuple_GET_SIZE(PyTuple_GET_ITEM(lists, 0))
                             : 0)
                      : 0;
    Py_INCREF(lists);
    b.lists = lists;
    if (get_count(kobj, "k", 1, PY_SSIZE_T_MAX, 1, &b.k) < 0) {
        goto done;
    }
    b.segs = calloc((size_t)(b.nseg ? b.nseg : 1), sizeof(Seg));
    if (!b.segs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t s = 0; s < b.nseg; s++) {
        if (take_segment(&b, s, PyTuple_GET_ITEM(segments, s), PyTuple_GET_ITEM(lists, s)) < 0) {
            goto done;
        }
    }
    if (take_queries(&b, slots, qws, offs) < 0 || take_allows(&b, allows) < 0) {
        goto done;
    }
    /* k beyond every document means every document: no result is larger than that. */
    Py_ssize_t most = 0;
    for (Py_ssize_t s = 0; s < b.nseg; s++) {
        most += b.segs[s].ndocs;
    }
    b.k = b.k < most ? b.k : (most ? most : 1);
    if (!product_fits(b.nq, b.k, 8)) {
        PyErr_NoMemory();
        goto done;
    }
    bd = PyBytes_FromStringAndSize(NULL, b.nq * b.k * 8);
    bs = PyBytes_FromStringAndSize(NULL, b.nq * b.k * 8);
    bz = PyBytes_FromStringAndSize(NULL, b.nq * 8);
    bm = PyBytes_FromStringAndSize(NULL, b.nq * 8);
    if (!bd || !bs || !bz || !bm) {
        goto done;
    }
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = run_all(&b, (int64_t *)PyBytes_AS_STRING(bd), (double *)PyBytes_AS_STRING(bs),
                (int64_t *)PyBytes_AS_STRING(bz), (int64_t *)PyBytes_AS_STRING(bm));
    Py_END_ALLOW_THREADS
    if (r == -1) {
        PyErr_NoMemory();
        goto done;
    }
    if (r == -2) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        goto done;
    }
    out = Py_BuildValue("(OOOOn)", bd, bs, bz, bm, b.k);
done:
    Py_XDECREF(bd);
    Py_XDECREF(bs);
    Py_XDECREF(bz);
    Py_XDECREF(bm);
    batch_release(&b);
    return out;
}
