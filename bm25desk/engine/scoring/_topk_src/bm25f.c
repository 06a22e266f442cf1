/* bm25f(): BM25F over one segment, every posting of every scored field (bm25f.py's rank).
 *
 * BM25F saturates a pseudo-tf summed over a document's fields, so a term's contribution depends
 * on all its fields at once and the tf-part tables of the other variants do not apply. Per query
 * term (in query order) this walks the term's posting list in each scored field together, in
 * docno order (the stored blocks, decoded and checked by the cursor steps of topk.h), and per
 * document of their union computes, exactly as the numpy path does:
 *
 *     ptf  = ((0.0 + p_1) + p_2) + ...   over the fields holding the document, in field order,
 *     p_f  = (w_f * tf) / ((1 - b_f) + (b_f * L_f(d)) / Lavg_f)
 *     acc[d] += qw * (ptf > 0 ? (ptf * (k1 + 1)) / (k1 + ptf) : 0.0)
 *
 * (acc from 0.0, terms in query order: numpy's `scores[docnos] += qw * saturate(ptf)`). Every
 * allowed live document touched then goes through the heap of the top k (score descending,
 * docno ascending), carried on from the previous segments' result; the match count is free.
 * Nothing here prunes. Called with the GIL released around the traversal. */
#include "topk.h"

#define MAX_FIELDS 256

typedef struct {
    double w;           /* the field's weight */
    const double *norm; /* B_f = (1 - b) + (b * L) / Lavg of every document, by local docno */
} Field;

/* The scratch of one call, by local docno: the score (acc), whether touched (seen), a term's
 * pseudo-tf and whether it has one (ptf, mark), and the documents touched (by the query, by the
 * term). acc, seen and mark are all zero on entry and left so (reset where written), so that a
 * caller's workspace is reused without clearing n_docs entries per query. */
typedef struct {
    double *acc, *ptf;
    int32_t *touched, *list;
    uint8_t *seen, *mark;
} Work;

#define WORK_BYTES (2 * sizeof(double) + 2 * sizeof(int32_t) + 2) /* per document */

typedef struct {
    PyObject *terms;   /* tuple of the terms (ours: the caller's list may change) */
    PyObject **fseq;   /* per term: its fields as a tuple (keeps the PostingLists alive) */
    int n;             /* terms */
    Py_ssize_t ndocs, k;
    int64_t base;
    double k1;
    Py_buffer allow, deny, pd, ps, wv;
    int have_allow, have_deny, have_pd, have_ps, have_wv;
    Work w;
    void *own_work;    /* the scratch allocated here (no workspace given), or NULL */
    Py_ssize_t np_prev;
    double *qw;        /* per term */
    int *first;        /* per term: its first cursor; first[n] = cursors in all */
    Cursor *cs;        /* per (term, field) */
    Field *fs;
    Py_buffer *lv;     /* per cursor: the lengths buffer */
    int nlv;           /* length buffers held */
    int32_t *scratch;
    int broken;
    Heap h;
} Run;

static void
run_release(Run *r)
{
    for (int i = 0; i < r->nlv; i++) {
        PyBuffer_Release(&r->lv[i]);
    }
    Py_buffer *views[] = {&r->allow, &r->deny, &r->pd, &r->ps, &r->wv};
    int have[] = {r->have_allow, r->have_deny, r->have_pd, r->have_ps, r->have_wv};
    for (int i = 0; i < 5; i++) {
        if (have[i]) {
            PyBuffer_Release(views[i]);
        }
    }
    for (int i = 0; r->fseq && i < r->n; i++) {
        Py_XDECREF(r->fseq[i]);
    }
    void *blocks[] = {r->fseq, r->qw,  r->first, r->cs,     r->fs,       r->lv,
                      r->scratch, r->h.s, r->h.d, r->h.slot, r->own_work};
    for (size_t i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
        free(blocks[i]);
    }
    Py_XDECREF(r->terms);
}

/* A finite float argument, else a ValueError naming it. */
static int
finite_arg(double v, const char *what)
{
    if (!isfinite(v)) {
        PyErr_Format(PyExc_ValueError, "%s is not finite", what);
        return -1;
    }
    return 0;
}

/* The previous segments' result: (docnos int64, scores float64) of equal length. */
static int
take_prev(Run *r, PyObject *prev)
{
    if (prev == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(prev) || PyTuple_GET_SIZE(prev) != 2) {
        PyErr_SetString(PyExc_TypeError, "prev must be (docnos, scores)");
        return -1;
    }
    if (get_buffer(PyTuple_GET_ITEM(prev, 0), &r->pd, 'q', "prev docnos") < 0) {
        return -1;
    }
    r->have_pd = 1;
    if (get_buffer(PyTuple_GET_ITEM(prev, 1), &r->ps, 'd', "prev scores") < 0) {
        return -1;
    }
    r->have_ps = 1;
    r->np_prev = buf_len(&r->pd);
    if (buf_len(&r->ps) != r->np_prev) {
        PyErr_SetString(PyExc_ValueError, "prev arrays do not agree in size");
        return -1;
    }
    return 0;
}

static int
read_args(Run *r, PyObject *args, PyObject *kwds, PyObject **prev, PyObject **work)
{
    static char *kwlist[] = {"terms", "n_docs", "k",    "k1",  "allow",
                             "deny",  "base",   "prev", "work", NULL};
    PyObject *terms, *ndocs, *k, *allow = Py_None, *deny = Py_None, *base = NULL;
    *prev = Py_None;
    *work = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOd|OOOOO", kwlist, &terms, &ndocs, &k, &r->k1,
                                     &allow, &deny, &base, prev, work)) {
        return -1;
    }
    if (get_count(ndocs, "n_docs", 0, INT32_MAX - 1, 0, &r->ndocs) < 0 ||
        get_count(k, "k", 1, PY_SSIZE_T_MAX, 1, &r->k) < 0 || finite_arg(r->k1, "k1") < 0) {
        return -1;
    }
    Py_ssize_t b = 0;
    if (base && get_count(base, "base", 0, PY_SSIZE_T_MAX - r->ndocs, 0, &b) < 0) {
        return -1;
    }
    r->base = (int64_t)b;
    if (get_optional_buffer(allow, &r->allow, &r->have_allow, 'b', "allow") < 0 ||
        get_optional_buffer(deny, &r->deny, &r->have_deny, 'b', "deny") < 0) {
        return -1;
    }
    if ((r->have_allow && buf_len(&r->allow) < r->ndocs) ||
        (r->have_deny && buf_len(&r->deny) < r->ndocs)) {
        PyErr_SetString(PyExc_ValueError, "allow and deny must cover n_docs documents");
        return -1;
    }
    r->terms = PySequence_Tuple(terms);
    if (!r->terms) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_SetString(PyExc_TypeError, "terms must be a sequence");
        }
        return -1;
    }
    if (PyTuple_GET_SIZE(r->terms) > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "too many terms");
        return -1;
    }
    r->n = (int)PyTuple_GET_SIZE(r->terms);
    return take_prev(r, *prev);
}

/* Term i: (qw, fields), fields a sequence of (PostingList, w, b, Lavg, lengths); its fields'
 * tuple goes to fseq[i], and *nf is how many there are. */
static int
read_term(Run *r, int i, Py_ssize_t *nf)
{
    PyObject *item = PyTuple_GET_ITEM(r->terms, i), *fields;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "dO", &r->qw[i], &fields)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "each term is (qw, fields)");
        return -1;
    }
    if (finite_arg(r->qw[i], "term weight") < 0) {
        return -1;
    }
    r->fseq[i] = PySequence_Tuple(fields);
    if (!r->fseq[i]) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "a term's fields must be a sequence");
        return -1;
    }
    *nf = PyTuple_GET_SIZE(r->fseq[i]);
    if (*nf > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many fields");
        return -1;
    }
    return 0;
}

/* Cursor c of term i: field f of its fields, (PostingList, w, norms), checked. */
static int
read_field(Run *r, int i, Py_ssize_t f, int c)
{
    PyObject *item = PyTuple_GET_ITEM(r->fseq[i], f), *plo, *lens;
    Field *fd = &r->fs[c];
    if (!PyTuple_Check(item) ||
        !PyArg_ParseTuple(item, "O!dO", &PostingListType, &plo, &fd->w, &lens)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "each field is (PostingList, w, norms)");
        return -1;
    }
    PostingList *pl = as_posting_list(plo);
    if (!pl) {
        return -1;
    }
    if (pl->n_docs != r->ndocs) {
        PyErr_SetString(PyExc_ValueError, "PostingList was built for another n_docs");
        return -1;
    }
    if (finite_arg(fd->w, "field weight") < 0) {
        return -1;
    }
    if (get_buffer(lens, &r->lv[r->nlv], 'd', "norms") < 0) {
        return -1;
    }
    if (buf_len(&r->lv[r->nlv++]) < r->ndocs) {
        PyErr_SetString(PyExc_ValueError, "norms must cover n_docs documents");
        return -1;
    }
    fd->norm = (const double *)r->lv[r->nlv - 1].buf;
    cursor_init(&r->cs[c], pl, &r->broken, r->scratch + (Py_ssize_t)CURSOR_SCRATCH * c);
    return 0;
}

/* Every term's fields: cursors at their first postings. */
static int
read_terms(Run *r)
{
    Py_ssize_t n1 = r->n ? r->n : 1, total = 0;
    r->fseq = calloc(n1, sizeof(PyObject *));
    r->qw = malloc(sizeof(double) * n1);
    r->first = malloc(sizeof(int) * (n1 + 1));
    if (!r->fseq || !r->qw || !r->first) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < r->n; i++) {
        Py_ssize_t nf;
        if (read_term(r, i, &nf) < 0) {
            return -1;
        }
        r->first[i] = (int)total;
        total += nf;
        if (total > INT32_MAX / CURSOR_SCRATCH / 2) {
            PyErr_SetString(PyExc_ValueError, "too many posting lists");
            return -1;
        }
    }
    r->first[r->n] = (int)total;
    Py_ssize_t t1 = total ? total : 1;
    r->cs = calloc(t1, sizeof(Cursor));
    r->fs = calloc(t1, sizeof(Field));
    r->lv = calloc(t1, sizeof(Py_buffer));
    r->scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * t1);
    if (!r->cs || !r->fs || !r->lv || !r->scratch) {
        PyErr_NoMemory();
        return -1;
    }
    for (int i = 0; i < r->n; i++) {
        for (int c = r->first[i]; c < r->first[i + 1]; c++) {
            if (read_field(r, i, c - r->first[i], c) < 0) {
                return -1;
            }
        }
    }
    return 0;
}

/* The blocks of cursor c in turn (decoded and checked): docnos in c->bd, tfs returned, *m of
 * them; NULL at the end or when a block does not decode (the cursor is then broken). */
static inline const int32_t *
next_block(Cursor *c, Py_ssize_t b, Py_ssize_t *m)
{
    if (b >= c->nblk || (c->dblk != b && cur_load(c, b) < 0)) {
        return NULL;
    }
    *m = blk_count(c, b);
    return cur_tfs(c);
}

/* Add qw * saturate(ptf) to acc[d] (numpy's `scores[docnos] += qw * part`), marking d seen. */
static inline void
add_score(Run *r, double qw, double ptf, int32_t d, Py_ssize_t *nt)
{
    double part = ptf > 0.0 ? (ptf * (r->k1 + 1.0)) / (r->k1 + ptf) : 0.0;
    r->w.acc[d] += qw * part;
    if (!r->w.seen[d]) {
        r->w.seen[d] = 1;
        r->w.touched[(*nt)++] = d;
    }
}

/* Add term i's contribution to every document of its fields' union into acc, in numpy's order:
 * each field's share (w * tf) / B_f(d) summed into ptf[d] field after field from 0.0 (the first
 * share is stored as 0.0 + x), then saturated and weighted. A term in one field only needs no
 * ptf. */
static void
add_term(Run *r, int i, Py_ssize_t *nt)
{
    Cursor *cs = r->cs + r->first[i];
    const Field *fs = r->fs + r->first[i];
    int nf = r->first[i + 1] - r->first[i];
    double qw = r->qw[i];
    double *ptf = r->w.ptf;
    uint8_t *mark = r->w.mark;
    int32_t *list = r->w.list;
    const int32_t *tfs;
    Py_ssize_t m;
    if (nf == 1) {
        double w = fs[0].w;
        const double *norm = fs[0].norm;
        for (Py_ssize_t b = 0; (tfs = next_block(cs, b, &m)) != NULL; b++) {
            for (Py_ssize_t j = 0; j < m; j++) {
                int32_t d = cs->bd[j];
                add_score(r, qw, 0.0 + (w * (double)tfs[j]) / norm[d], d, nt);
            }
        }
        return;
    }
    Py_ssize_t nl = 0;
    for (int f = 0; f < nf && !r->broken; f++) {
        double w = fs[f].w;
        const double *norm = fs[f].norm;
        for (Py_ssize_t b = 0; (tfs = next_block(&cs[f], b, &m)) != NULL; b++) {
            const int32_t *docs = cs[f].bd;
            for (Py_ssize_t j = 0; j < m; j++) {
                int32_t d = docs[j];
                double x = (w * (double)tfs[j]) / norm[d];
                if (!mark[d]) {
                    mark[d] = 1;
                    ptf[d] = 0.0 + x;
                    list[nl++] = d;
                }
                else {
                    ptf[d] += x;
                }
            }
        }
    }
    for (Py_ssize_t j = 0; j < nl; j++) {
        int32_t d = list[j];
        mark[d] = 0;
        if (!r->broken) {
            add_score(r, qw, ptf[d], d, nt);
        }
    }
}

/* Score the segment and push its allowed live documents into the heap; acc and seen are left
 * zero. Returns the number of them, with *nonfinite set when a score is not finite (the caller
 * then ranks with numpy). */
static long long
score_segment(Run *r, int *nonfinite)
{
    Py_ssize_t nt = 0;
    for (int i = 0; i < r->n && !r->broken; i++) {
        add_term(r, i, &nt);
    }
    const uint8_t *al = r->have_allow ? (const uint8_t *)r->allow.buf : NULL;
    const uint8_t *de = r->have_deny ? (const uint8_t *)r->deny.buf : NULL;
    Heap *h = &r->h;
    long long matches = 0;
    for (Py_ssize_t j = 0; j < nt; j++) {
        int32_t d = r->w.touched[j];
        double s = r->w.acc[d];
        r->w.acc[d] = 0.0;
        r->w.seen[d] = 0;
        if (r->broken || (al && !al[d]) || (de && de[d])) {
            continue;
        }
        matches++;
        int64_t g = (int64_t)d + r->base;
        *nonfinite |= !isfinite(s);
        /* most documents of a query with a frequent term do not enter a full heap */
        if (h->cap == 0) {
            continue;
        }
        if (h->size < h->cap || s > h->s[0] || (s == h->s[0] && g < h->d[0])) {
            heap_push(h, s, g);
        }
    }
    return matches;
}

/* The heap: room for k entries (at most every document and previous hit), the previous ones in. */
static int
start_heap(Run *r)
{
    Py_ssize_t cap = r->k, most = r->ndocs + r->np_prev;
    cap = cap < most ? cap : most;
    Py_ssize_t c1 = cap ? cap : 1;
    r->h.cap = cap;
    r->h.s = malloc(sizeof(double) * c1);
    r->h.d = malloc(sizeof(int64_t) * c1);
    r->h.slot = malloc(sizeof(Py_ssize_t) * c1);
    if (!r->h.s || !r->h.d || !r->h.slot) {
        PyErr_NoMemory();
        return -1;
    }
    const int64_t *pd = r->have_pd ? (const int64_t *)r->pd.buf : NULL;
    const double *ps = r->have_ps ? (const double *)r->ps.buf : NULL;
    for (Py_ssize_t i = 0; i < r->np_prev && cap > 0; i++) {
        heap_push(&r->h, ps[i], pd[i]);
    }
    return 0;
}

/* The heap's entries best first (score descending, docno ascending) as bytes: docnos (int64)
 * and scores (float64). */
static PyObject *
result(Run *r, long long matches, int nonfinite)
{
    Py_ssize_t m = r->h.size;
    Entry *es = malloc(sizeof(Entry) * (size_t)(m ? m : 1));
    if (!es) {
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < m; i++) {
        es[i].s = r->h.s[i];
        es[i].d = r->h.d[i];
        es[i].slot = i;
    }
    sort_entries(es, m);
    for (Py_ssize_t i = 0; i < m; i++) { /* back into the heap's arrays, now in order */
        r->h.s[i] = es[i].s;
        r->h.d[i] = es[i].d;
    }
    free(es);
    PyObject *bd = PyBytes_FromStringAndSize((const char *)r->h.d, m * (Py_ssize_t)sizeof(int64_t));
    PyObject *bs = PyBytes_FromStringAndSize((const char *)r->h.s, m * (Py_ssize_t)sizeof(double));
    if (!bd || !bs) {
        Py_XDECREF(bd);
        Py_XDECREF(bs);
        return NULL;
    }
    return Py_BuildValue("(NNLO)", bd, bs, matches, nonfinite ? Py_True : Py_False);
}

/* The scratch: the caller's workspace (a writable, 8-byte aligned buffer of WORK_BYTES per
 * document, all zero; laid out by its own size, so that one workspace serves segments of any
 * size up to it), or allocated here. */
static int
take_work(Run *r, PyObject *work)
{
    size_t nd = (size_t)(r->ndocs ? r->ndocs : 1);
    uint8_t *p;
    if (work == Py_None) {
        p = r->own_work = calloc(nd, WORK_BYTES);
        if (!p) {
            PyErr_NoMemory();
            return -1;
        }
    }
    else {
        if (PyObject_GetBuffer(work, &r->wv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "work must be a writable contiguous buffer");
            return -1;
        }
        r->have_wv = 1;
        p = r->wv.buf;
        if ((size_t)r->wv.len / WORK_BYTES < nd || ((uintptr_t)p & 7)) {
            PyErr_SetString(PyExc_ValueError, "work is too small or not 8-byte aligned");
            return -1;
        }
        nd = (size_t)r->wv.len / WORK_BYTES; /* the same layout whatever the segment's size */
    }
    r->w.acc = (double *)p;
    r->w.ptf = r->w.acc + nd;
    r->w.touched = (int32_t *)(r->w.ptf + nd);
    r->w.list = r->w.touched + nd;
    r->w.seen = (uint8_t *)(r->w.list + nd);
    r->w.mark = r->w.seen + nd;
    return 0;
}

PyObject *
topk_bm25f(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    Run r;
    memset(&r, 0, sizeof(r));
    PyObject *prev, *work, *out = NULL;
    if (read_args(&r, args, kwds, &prev, &work) < 0 || read_terms(&r) < 0 || start_heap(&r) < 0 ||
        take_work(&r, work) < 0) {
        goto done;
    }
    if (r.broken) { /* a first block that does not decode */
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        goto done;
    }
    long long matches;
    int nonfinite = 0;
    Py_BEGIN_ALLOW_THREADS
    matches = score_segment(&r, &nonfinite);
    Py_END_ALLOW_THREADS
    if (r.broken) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        goto done;
    }
    out = result(&r, matches, nonfinite);
done:
    run_release(&r);
    return out;
}
