/* exhaustive_query(): one query's exhaustive top k over every segment of an index, in one call.
 *
 * The exhaustive path (exhaustive.c) used to be driven from Python one segment at a time: per
 * term a cache look-up, a tuple of arguments, and search() checking each tuple again. On SciFact
 * (12 terms a query, 5 k documents) that was as long as the traversal itself. Here the caller
 * hands the query's terms (the TermSpecs: term, qtf, weighting) and, per segment, the cache's
 * map of each weight table (term -> Parts, or None when the term is absent there); the weights
 * qw = qtf * idf are computed as Python computes them (float multiplication of the same
 * operands), each term's Parts is read with one dictionary look-up, and the terms the maps do not
 * hold go to the caller's `miss` callback in one list, whose answers are checked like the rest.
 * Then, without the GIL, the segments are traversed in turn (exhaustive()), the top k carried in
 * one heap from one segment to the next, exactly as search(exhaustive=True) did segment by
 * segment: the same sums in query order from 0.0, the same tie rule, bit for bit.
 *
 * Segment (segview.c): what the traversal and parts() need of a segment, taken once per open
 * index.
 *
 * The sums, marks and list of touched documents come from the spare set (sums.c: sheet_take),
 * so that a query does not allocate and clear a segment's worth of them. */
#include "exhaustive.h"

/* -- exhaustive_query ----------------------------------------------------------------------- */

typedef struct {
    PyObject *terms;   /* the caller's terms as a tuple (ours: a callback may change the list) */
    PyObject *groups;  /* the same for the groups, or NULL */
    Py_ssize_t n, nseg, k, hcap;
    int rows;
    const SegView **segs;
    PyObject **word;   /* per term: its text (borrowed from terms) */
    int *group;        /* per term: its (Table, map) pair in each segment's tuple */
    double *qw;
    Parts **cell;      /* per segment and term (nseg * n): a reference, or NULL (absent) */
    const Table **tab; /* the same: the table it is weighted by */
    Py_buffer allow;
    int have_allow;
    int prune;         /* the caller wants no match count: windows may skip (winprune.c) */
} XQ;

static void
xq_release(XQ *x)
{
    for (Py_ssize_t i = 0; x->cell && i < x->nseg * x->n; i++) {
        Py_XDECREF(x->cell[i]);
    }
    free(x->cell);
    free(x->tab);
    free(x->segs);
    free(x->word);
    free(x->group);
    free(x->qw);
    if (x->have_allow) {
        PyBuffer_Release(&x->allow);
    }
    Py_XDECREF(x->terms);
    Py_XDECREF(x->groups);
}

/* The terms: text, weight qw = qtf * idf (Python's product) and group. Returns 1 when every
 * weight is finite (and, without groups, every term's k1 is the first's), 0 when not (the caller
 * answers None, or NotImplemented), -1 with an exception. */
static int
xq_terms(XQ *x, PyObject *terms, PyObject *groups, int *same_k1)
{
    static PyObject *s_idf = NULL, *s_k1 = NULL;
    if (!s_idf && !(s_idf = PyUnicode_InternFromString("idf"))) {
        return -1;
    }
    if (!s_k1 && !(s_k1 = PyUnicode_InternFromString("k1"))) {
        return -1;
    }
    x->terms = PySequence_Tuple(terms);
    if (!x->terms) {
        return -1;
    }
    x->n = PyTuple_GET_SIZE(x->terms);
    if (x->n > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "too many terms");
        return -1;
    }
    Py_ssize_t n1 = x->n ? x->n : 1;
    x->word = malloc(sizeof(PyObject *) * (size_t)n1);
    x->group = calloc((size_t)n1, sizeof(int));
    x->qw = malloc(sizeof(double) * (size_t)n1);
    if (!x->word || !x->group || !x->qw) {
        PyErr_NoMemory();
        return -1;
    }
    if (groups != Py_None) {
        x->groups = PySequence_Tuple(groups);
        if (!x->groups) {
            return -1;
        }
        if (PyTuple_GET_SIZE(x->groups) != x->n) {
            PyErr_SetString(PyExc_ValueError, "groups: one per term");
            return -1;
        }
    }
    int finite = 1, rc = -1;
    PyObject *k1_first = NULL; /* (a reference: the first term's k1, to compare by identity) */
    *same_k1 = 1;
    for (Py_ssize_t t = 0; t < x->n; t++) {
        PyObject *spec = PyTuple_GET_ITEM(x->terms, t);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 3 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))) {
            PyErr_SetString(PyExc_TypeError, "each term is (text, qtf, weighting)");
            goto done;
        }
        x->word[t] = PyTuple_GET_ITEM(spec, 0);
        PyObject *w = PyTuple_GET_ITEM(spec, 2);
        PyObject *idf = weighting_attr(w, s_idf, 0);
        PyObject *prod = idf ? PyNumber_Multiply(PyTuple_GET_ITEM(spec, 1), idf) : NULL;
        Py_XDECREF(idf);
        if (!prod) {
            goto done;
        }
        double v = PyFloat_AsDouble(prod);
        Py_DECREF(prod);
        if (v == -1.0 && PyErr_Occurred()) {
            goto done;
        }
        x->qw[t] = v;
        finite &= isfinite(v) != 0;
        if (x->groups) {
            Py_ssize_t g = PyLong_AsSsize_t(PyTuple_GET_ITEM(x->groups, t));
            if (g == -1 && PyErr_Occurred()) {
                goto done;
            }
            if (g < 0 || g > INT32_MAX) {
                PyErr_SetString(PyExc_ValueError, "groups: an index of the segment's tables");
                goto done;
            }
            x->group[t] = (int)g;
            continue;
        }
        PyObject *k1 = weighting_attr(w, s_k1, 1);
        if (!k1) {
            goto done;
        }
        if (!k1_first) {
            k1_first = k1;
            continue;
        }
        *same_k1 &= k1 == k1_first;
        Py_DECREF(k1);
    }
    rc = finite;
done:
    Py_XDECREF(k1_first);
    return rc;
}

/* The pair (Table, map) of group g in segment s's tuple of the maps. */
static int
xq_pair(PyObject *maps, Py_ssize_t s, int g, const Table **tb, PyObject **map)
{
    PyObject *per = PyTuple_GET_ITEM(maps, s);
    if (!PyTuple_Check(per) || g >= PyTuple_GET_SIZE(per)) {
        PyErr_SetString(PyExc_ValueError, "maps: per segment, a tuple of (Table, dict) per group");
        return -1;
    }
    PyObject *pair = PyTuple_GET_ITEM(per, g);
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
        !PyObject_TypeCheck(PyTuple_GET_ITEM(pair, 0), &TableType) ||
        !PyDict_Check(PyTuple_GET_ITEM(pair, 1))) {
        PyErr_SetString(PyExc_TypeError, "maps: per segment, a tuple of (Table, dict) per group");
        return -1;
    }
    *tb = (const Table *)PyTuple_GET_ITEM(pair, 0);
    *map = PyTuple_GET_ITEM(pair, 1);
    if (!(*tb)->ready || (*tb)->cap < 1) {
        PyErr_SetString(PyExc_ValueError, "a Table must be initialised");
        return -1;
    }
    return 0;
}

/* Check a map's (or the callback's) entry for term t of segment s: None, or a Parts made for the
 * segment's blocks under the term's table, with its overflow values. Keeps a reference. */
static int
xq_put(XQ *x, Py_ssize_t s, Py_ssize_t t, PyObject *v)
{
    Py_ssize_t i = s * x->n + t;
    if (v == Py_None) {
        return 0;
    }
    if (!PyObject_TypeCheck(v, &PartsType)) {
        PyErr_SetString(PyExc_TypeError, "an entry is None or a Parts");
        return -1;
    }
    Parts *pa = (Parts *)v;
    const SegView *sv = x->segs[s];
    const PostingList *pl = pa->list;
    const Table *tb = x->tab[i];
    if ((const Table *)pa->table != tb || pl->n_docs != sv->ndocs ||
        pl->dli_view.buf != sv->dli.buf || pl->cap != sv->cap || pl->shift != sv->shift ||
        tb->cap != pl->cap || (pl->max_j >= 0 && tb->rows <= pl->max_j)) {
        PyErr_SetString(PyExc_ValueError, "parts were made for another segment or table");
        return -1;
    }
    if (pa->novf && !pa->have_ovf) {
        PyErr_SetString(PyExc_ValueError, "overflow values are missing");
        return -1;
    }
    pa->ref = 1;
    Py_INCREF(v);
    x->cell[i] = pa;
    return 0;
}

/* Make the entry of term t in segment s here (parts_fresh), keep it in the map and note it: 1;
 * or 0 when it is not for here (miss() makes it); -1 with an exception. */
static int
xq_make(XQ *x, Py_ssize_t s, Py_ssize_t t, PyObject *map, const Fresh *f)
{
    PyObject *memo = f->found ? PyTuple_GET_ITEM(f->found, s) : Py_None;
    PyObject *entry = parts_fresh((PyObject *)x->segs[s], memo, x->word[t],
                                  (PyObject *)x->tab[s * x->n + t], map, f);
    if (!entry) {
        return PyErr_Occurred() ? -1 : 0;
    }
    int rc = xq_put(x, s, t, entry) < 0 ? -1 : 1;
    Py_DECREF(entry);
    return rc;
}

/* Every term's entry in every segment: from the maps, the missing ones made here (fresh) or by
 * miss(). */
static int
xq_lookup(XQ *x, PyObject *maps, PyObject *miss, const Fresh *fresh)
{
    Py_ssize_t cells = x->nseg * x->n;
    x->cell = calloc((size_t)(cells ? cells : 1), sizeof(Parts *));
    x->tab = calloc((size_t)(cells ? cells : 1), sizeof(Table *));
    PyObject *missing = PyList_New(0);
    int rc = -1;
    if (!x->cell || !x->tab || !missing) {
        if (!PyErr_Occurred()) {
            PyErr_NoMemory();
        }
        goto done;
    }
    for (Py_ssize_t s = 0; s < x->nseg; s++) {
        for (Py_ssize_t t = 0; t < x->n; t++) {
            PyObject *map;
            if (xq_pair(maps, s, x->group[t], &x->tab[s * x->n + t], &map) < 0) {
                goto done;
            }
            PyObject *v = PyDict_GetItemWithError(map, x->word[t]);
            if (v) {
                if (xq_put(x, s, t, v) < 0) {
                    goto done;
                }
                continue;
            }
            if (PyErr_Occurred()) {
                goto done;
            }
            int made = fresh->added ? xq_make(x, s, t, map, fresh) : 0;
            if (made) {
                if (made < 0) {
                    goto done;
                }
                continue;
            }
            PyObject *st = Py_BuildValue("(nn)", s, t);
            if (!st || PyList_Append(missing, st) < 0) {
                Py_XDECREF(st);
                goto done;
            }
            Py_DECREF(st);
        }
    }
    Py_ssize_t nm = PyList_GET_SIZE(missing);
    if (nm) {
        if (miss == Py_None) {
            PyErr_SetString(PyExc_ValueError, "terms are missing from the maps and no miss given");
            goto done;
        }
        PyObject *asked = PyList_AsTuple(missing); /* (the callback may change the list) */
        PyObject *got = asked ? PyObject_CallOneArg(miss, missing) : NULL;
        PyObject *seq = got ? PySequence_Fast(got, "miss() must return a sequence") : NULL;
        Py_XDECREF(got);
        Py_XDECREF(missing);
        missing = asked;
        if (!seq) {
            goto done;
        }
        if (PySequence_Fast_GET_SIZE(seq) != nm) {
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "miss() must return one entry per missing term");
            goto done;
        }
        for (Py_ssize_t e = 0; e < nm; e++) {
            PyObject *st = PyTuple_GET_ITEM(missing, e);
            Py_ssize_t s = PyLong_AsSsize_t(PyTuple_GET_ITEM(st, 0));
            Py_ssize_t t = PyLong_AsSsize_t(PyTuple_GET_ITEM(st, 1));
            if (xq_put(x, s, t, PySequence_Fast_GET_ITEM(seq, e)) < 0) {
                Py_DECREF(seq);
                goto done;
            }
        }
        Py_DECREF(seq);
    }
    rc = 0;
done:
    Py_XDECREF(missing);
    return rc;
}

/* What the traversal holds for the whole query (sized by the largest segment). */
typedef struct {
    Cursor *cs;
    int32_t *scratch;
    int *cols;
    Heap h;
    int32_t *rows_tf;
    double *rows_tp;
    Py_ssize_t *slot_of;
    Entry *es;
    Sheet *sheet;
    Py_ssize_t *win;     /* per segment: its window (0: whole) */
    Py_ssize_t *total;   /* per segment: its postings */
} XWork;

static void
xwork_free(XWork *w, int clean)
{
    void *p[] = {w->cs,      w->scratch, w->cols,    w->h.s, w->h.d, w->h.slot, w->rows_tf,
                 w->rows_tp, w->slot_of, w->es,      w->win, w->total};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        free(p[i]);
    }
    if (w->sheet) {
        sheet_give(w->sheet, clean);
    }
}

/* A Query over segment s's terms, for exhaustive_window() (total postings) and the traversal;
 * with bounds, each cursor's upper bound too (parts_umax), and Q->prune set. */
static int
xq_cursors(const XQ *x, XWork *w, Py_ssize_t s, Query *Q, int bounds)
{
    int m = 0;
    Py_ssize_t total = 0;
    memset(Q, 0, sizeof(*Q));
    for (Py_ssize_t t = 0; t < x->n; t++) {
        Parts *pa = x->cell[s * x->n + t];
        if (!pa) {
            continue;
        }
        const Table *tb = x->tab[s * x->n + t];
        Cursor *c = &w->cs[m];
        cursor_setup(c, pa->list, &Q->broken, w->scratch + (Py_ssize_t)CURSOR_SCRATCH * m);
        c->T = tb->Tc; /* the kernel's copy by column, as search() reads a Table */
        c->U = tb->Uc;
        c->tmin = tb->tmin;
        c->stride = 1;
        c->tstride = tb->rows;
        c->rows = tb->rows;
        c->ovf_val = pa->novf ? pa->ovf : NULL;
        c->parts = pa->fillable || parts_ready(pa) ? pa : NULL;
        c->qw = x->qw[t];
        c->qwp = c->qw > 0.0 ? c->qw : 0.0;
        c->qi = m;
        c->ub = bounds ? c->qwp * parts_umax(pa, c) : NAN;
        w->cols[m] = (int)t;
        total += pa->n;
        m++;
    }
    const SegView *sv = x->segs[s];
    Q->cs = w->cs;
    Q->n = m;
    Q->allow = x->have_allow ? (const uint8_t *)x->allow.buf + sv->base : NULL;
    Q->deny = sv->have_deny ? (const uint8_t *)sv->deny.buf : NULL;
    Q->base = sv->base;
    Q->h = &w->h;
    Q->cols = w->cols;
    Q->ncols = x->rows ? (int)x->n : 0;
    Q->rows_tf = w->rows_tf;
    Q->rows_tp = w->rows_tp;
    Q->total_postings = total;
    Q->prune = bounds;
    return m;
}

static int
xwork_alloc(const XQ *x, XWork *w)
{
    Py_ssize_t n1 = x->n ? x->n : 1, h1 = x->hcap ? x->hcap : 1, s1 = x->nseg ? x->nseg : 1;
    Py_ssize_t nacc = 1, ntouch = 1, nslot = 1, c1 = x->rows && x->n ? x->n : 1;
    memset(w, 0, sizeof(*w));
    w->win = calloc((size_t)s1, sizeof(Py_ssize_t));
    w->total = calloc((size_t)s1, sizeof(Py_ssize_t));
    w->cs = calloc((size_t)n1, sizeof(Cursor));
    w->cols = malloc(sizeof(int) * (size_t)n1);
    w->scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * (size_t)n1);
    if (!w->win || !w->total || !w->cs || !w->cols || !w->scratch || !product_fits(h1, c1, 8)) {
        return -1;
    }
    for (Py_ssize_t s = 0; s < x->nseg; s++) {
        Query Q;
        Py_ssize_t nd = x->segs[s]->ndocs;
        if (xq_cursors(x, w, s, &Q, 0) == 0) {
            continue;
        }
        w->win[s] = exhaustive_window(&Q, nd);
        w->total[s] = Q.total_postings;
        Py_ssize_t na = w->win[s] ? w->win[s] : nd;
        nacc = na > nacc ? na : nacc;
        ntouch = !w->win[s] && nd > ntouch ? nd : ntouch;
        nslot = nd > nslot ? nd : nslot;
    }
    w->h.cap = x->hcap;
    w->h.s = malloc(sizeof(double) * (size_t)h1);
    w->h.d = malloc(sizeof(int64_t) * (size_t)h1);
    w->h.slot = malloc(sizeof(Py_ssize_t) * (size_t)h1);
    w->es = malloc(sizeof(Entry) * (size_t)h1);
    if (x->rows) {
        w->rows_tf = calloc((size_t)(h1 * c1), sizeof(int32_t));
        w->rows_tp = calloc((size_t)(h1 * c1), sizeof(double));
        w->slot_of = malloc(sizeof(Py_ssize_t) * (size_t)nslot);
        if (!w->rows_tf || !w->rows_tp || !w->slot_of) {
            return -1;
        }
    }
    w->sheet = sheet_take(nacc, ntouch);
    return w->h.s && w->h.d && w->h.slot && w->es && w->sheet ? 0 : -1;
}

/* Every segment in turn (without the GIL): the matches, -1 (out of memory) or -2 (the postings
 * changed). */
static long long
xq_run(const XQ *x, XWork *w)
{
    long long matches = 0;
    Sheet *sh = w->sheet;
    for (Py_ssize_t s = 0; s < x->nseg; s++) {
        Query Q;
        if (xq_cursors(x, w, s, &Q, x->prune && !x->rows && w->win[s]) == 0) {
            continue;
        }
        if (!x->rows && w->h.cap > 64) { /* (a selection may have left it best first) */
            heap_rebuild(&w->h, w->es);
        }
        Py_ssize_t win = w->win[s];
        long long m = exhaustive(&Q, x->segs[s]->ndocs, win, x->rows, sh->acc, sh->seen,
                                 win ? NULL : sh->touched, w->slot_of, 1);
        if (Q.broken) {
            return -2;
        }
        if (m < 0) {
            return -1;
        }
        matches += m;
    }
    return matches;
}

/* The top k best first (score descending, docno ascending) as bytes: docnos (int64), scores
 * (float64), and with rows the per-term tfs (int32) and tf parts (float64), then the matches. */
static PyObject *
xq_result(const XQ *x, XWork *w, long long matches)
{
    PyObject *b[4];
    heap_best_first(&w->h, w->es);
    if (entries_bytes(w->es, w->h.size, x->rows ? x->n : 0, w->rows_tf, w->rows_tp, b) < 0) {
        return NULL;
    }
    return Py_BuildValue("(NNNNL)", b[0], b[1], b[2], b[3], matches);
}

/* The segments (a tuple of Segment) and the allow mask over all of them. */
static int
xq_segments(XQ *x, PyObject *segments, PyObject *maps, PyObject *allow)
{
    if (!PyTuple_Check(segments) || !PyTuple_Check(maps) ||
        PyTuple_GET_SIZE(maps) != PyTuple_GET_SIZE(segments)) {
        PyErr_SetString(PyExc_TypeError, "segments and maps must be tuples, one item each");
        return -1;
    }
    x->nseg = PyTuple_GET_SIZE(segments);
    x->segs = malloc(sizeof(SegView *) * (size_t)(x->nseg ? x->nseg : 1));
    if (!x->segs) {
        PyErr_NoMemory();
        return -1;
    }
    if (get_optional_buffer(allow, &x->allow, &x->have_allow, 'b', "allow") < 0) {
        return -1;
    }
    for (Py_ssize_t s = 0; s < x->nseg; s++) {
        PyObject *o = PyTuple_GET_ITEM(segments, s);
        if (!PyObject_TypeCheck(o, &SegViewType) || !((SegView *)o)->ready) {
            PyErr_SetString(PyExc_TypeError, "segments: initialised Segment objects");
            return -1;
        }
        x->segs[s] = (const SegView *)o;
        if (x->have_allow && buf_len(&x->allow) < x->segs[s]->base + x->segs[s]->ndocs) {
            PyErr_SetString(PyExc_ValueError, "allow must cover every document");
            return -1;
        }
    }
    return 0;
}

PyObject *
topk_exhaustive_query(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"segments", "maps",   "terms", "k",     "allow",
                             "rows",     "miss",   "groups", "fresh", "prune", NULL};
    PyObject *segments, *maps, *terms, *k, *allow = Py_None, *miss = Py_None, *groups = Py_None;
    PyObject *fresh_o = Py_None;
    int rows = 0, same_k1 = 1, prune = 0;
    Fresh fresh = {NULL, NULL, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|OpOOOp", kwlist, &segments, &maps, &terms,
                                     &k, &allow, &rows, &miss, &groups, &fresh_o, &prune)) {
        return NULL;
    }
    if (fresh_o != Py_None &&
        (!PyTuple_Check(fresh_o) ||
         !PyArg_ParseTuple(fresh_o, "O!nnO!", &PyTuple_Type, &fresh.found, &fresh.short_n,
                           &fresh.entry_bytes, &PyList_Type, &fresh.added) ||
         !PyTuple_Check(segments) ||
         PyTuple_GET_SIZE(fresh.found) != PyTuple_GET_SIZE(segments))) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "fresh: (memo per segment, short, entry bytes, list)");
        return NULL;
    }
    XQ x;
    memset(&x, 0, sizeof(x));
    x.rows = rows;
    x.prune = prune;
    XWork w;
    memset(&w, 0, sizeof(w));
    PyObject *result = NULL;
    long long matches = 0;
    int r;
    if (get_count(k, "k", 1, PY_SSIZE_T_MAX, 1, &x.k) < 0 ||
        xq_segments(&x, segments, maps, allow) < 0 ||
        (r = xq_terms(&x, terms, groups, &same_k1)) < 0) {
        goto done;
    }
    if (!r || !same_k1) { /* numpy's weights, or tables per term (the caller's groups) */
        result = Py_NewRef(r ? Py_NotImplemented : Py_None);
        goto done;
    }
    if (xq_lookup(&x, maps, miss, &fresh) < 0) {
        goto done;
    }
    Py_ssize_t most = 0; /* at most every document with a posting */
    for (Py_ssize_t s = 0; s < x.nseg; s++) {
        Py_ssize_t post = 0;
        for (Py_ssize_t t = 0; t < x.n; t++) {
            post += x.cell[s * x.n + t] ? x.cell[s * x.n + t]->n : 0;
        }
        most += post < x.segs[s]->ndocs ? post : x.segs[s]->ndocs;
    }
    x.hcap = x.k < most ? x.k : most;
    if (xwork_alloc(&x, &w) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    matches = xq_run(&x, &w);
    Py_END_ALLOW_THREADS
    if (matches == -2) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        goto done;
    }
    if (matches < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = xq_result(&x, &w, x.prune ? -1 : matches); /* (pruned: not counted) */
done:
    xwork_free(&w, matches >= 0);
    xq_release(&x);
    return result;
}
