/* search(): the top k of one segment, carried on from the previous segments' (see topk.h).
 *
 * In named steps: read the arguments (counts, the segment's buffers), set up one cursor per
 * term (its PostingList, weight, tables and overflow values, all checked), take the previous
 * segments' top k, traverse the segment without the GIL (maxscore.c), and return the result
 * sorted. Everything the steps hold is in one Search, released in one place. */
#include "search.h"

void
search_release(Search *s)
{
    for (int i = 0; s->tv && i < s->n; i++) {
        if (s->tv[i].haveT) {
            PyBuffer_Release(&s->tv[i].T);
        }
        if (s->tv[i].haveU) {
            PyBuffer_Release(&s->tv[i].U);
        }
        if (s->tv[i].haveO) {
            PyBuffer_Release(&s->tv[i].ov);
        }
    }
    Py_buffer *views[] = {&s->dli, &s->allow, &s->deny, &s->pv[0], &s->pv[1], &s->pv[2], &s->pv[3]};
    int have[] = {s->have_dli, s->have_allow, s->have_deny, s->have_pv[0],
                  s->have_pv[1], s->have_pv[2], s->have_pv[3]};
    for (int i = 0; i < 7; i++) {
        if (have[i]) {
            PyBuffer_Release(views[i]);
        }
    }
    arena_close(&s->arena);
    Py_XDECREF(s->terms);
}

/* The segment's length index (*dli_w: its item size) and its optional allow and deny masks. */
int
search_segment(Search *s, PyObject *dli, PyObject *allow, PyObject *deny, int *dli_w)
{
    if (get_dli_buffer(dli, &s->dli, dli_w) < 0) {
        return -1;
    }
    s->have_dli = 1;
    s->ndocs = buf_len(&s->dli);
    if (get_optional_buffer(allow, &s->allow, &s->have_allow, 'b', "allow") < 0 ||
        get_optional_buffer(deny, &s->deny, &s->have_deny, 'b', "deny") < 0) {
        return -1;
    }
    if ((s->have_allow && buf_len(&s->allow) < s->ndocs) ||
        (s->have_deny && buf_len(&s->deny) < s->ndocs)) {
        PyErr_SetString(PyExc_ValueError, "allow and deny must cover every document of dl_index");
        return -1;
    }
    return 0;
}

/* Step 1: the arguments other than the terms; the segment's buffers. */
static int
read_arguments(Search *s, PyObject *args, PyObject *kwds, double *seed_ratio, PyObject **prev)
{
    static char *kwlist[] = {"terms", "dl_index", "k",          "ncols", "allow",
                             "deny",  "base",     "prev",       "stats", "seed",
                             "exhaustive", "rows", NULL};
    PyObject *terms, *dli, *k, *ncols, *allow = Py_None, *deny = Py_None, *base = NULL;
    *prev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO|OOOOpdpp", kwlist, &terms, &dli, &k, &ncols,
                                     &allow, &deny, &base, prev, &s->want_stats, seed_ratio,
                                     &s->exhaustive, &s->rows)) {
        return -1;
    }
    /* k beyond the postings means "all of them": a huge k is clamped, not an overflow. */
    if (get_count(k, "k", 1, PY_SSIZE_T_MAX, 1, &s->k) < 0 ||
        get_count(ncols, "ncols", 0, MAX_COLUMNS, 0, &s->ncols) < 0) {
        return -1;
    }
    s->terms = PySequence_Tuple(terms);
    if (!s->terms) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_SetString(PyExc_TypeError, "terms must be a sequence");
        }
        return -1;
    }
    Py_ssize_t nt = PyTuple_GET_SIZE(s->terms);
    if (nt > s->ncols) {
        PyErr_SetString(PyExc_ValueError, "more terms than columns");
        return -1;
    }
    s->n = (int)nt;
    int dli_w;
    if (search_segment(s, dli, allow, deny, &dli_w) < 0) {
        return -1;
    }
    Py_ssize_t b = 0;
    if (base && get_count(base, "base", 0, PY_SSIZE_T_MAX - s->ndocs, 0, &b) < 0) {
        return -1;
    }
    s->base = (int64_t)b;
    return 0;
}

/* Step 2: scratch arrays sized by the number of terms and columns (from the arena: they were
 * some twenty mallocs, as costly as the traversal of a query of rare terms). */
int
search_scratch(Search *s)
{
    size_t n1 = s->n ? (size_t)s->n : 1, c1 = s->ncols ? (size_t)s->ncols : 1;
    Arena *a = &s->arena;
    if (arena_open(a) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    s->tv = arena_alloc(a, n1 * sizeof(TermViews), 1);
    s->cs = arena_alloc(a, n1 * sizeof(Cursor), 1);
    s->seedcs = arena_alloc(a, n1 * sizeof(Cursor), 0); /* (copied before use, as probes) */
    s->ord = arena_alloc(a, sizeof(int) * n1, 0);
    s->cols = arena_alloc(a, sizeof(int) * n1, 0);
    s->present = arena_alloc(a, sizeof(int) * n1, 0);
    s->prefix = arena_alloc(a, sizeof(double) * n1, 0);
    s->vals = arena_alloc(a, sizeof(double) * n1, 0);
    s->tpv = arena_alloc(a, sizeof(double) * n1, 0);
    s->tfv = arena_alloc(a, sizeof(int32_t) * n1, 0);
    s->qb = arena_alloc(a, sizeof(double) * n1, 0);
    s->tb = arena_alloc(a, sizeof(double) * n1, 0);
    s->seen_col = arena_alloc(a, c1, 1);
    s->scratch = arena_alloc(a, sizeof(int32_t) * CURSOR_SCRATCH * 2 * n1, 0);
    s->pend = arena_alloc(a, sizeof(int32_t) * BLK_MAX, 0);
    s->pend_b = arena_alloc(a, sizeof(double) * BLK_MAX, 0);
    s->probes = arena_alloc(a, n1 * sizeof(Cursor), 0);
    s->rest = arena_alloc(a, sizeof(Cursor *) * n1, 0);
    s->probe_scratch = arena_alloc(a, sizeof(int32_t) * CURSOR_SCRATCH * n1, 0);
    if (!s->scratch || !s->tv || !s->cs || !s->seedcs || !s->ord || !s->cols || !s->present ||
        !s->prefix || !s->vals || !s->tpv || !s->tfv || !s->qb || !s->tb || !s->seen_col ||
        !s->pend || !s->pend_b || !s->probes || !s->rest || !s->probe_scratch) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The tables of one term: a checked Table, or (T, U) arrays checked now. */
static int
term_tables(Search *s, int i, PyObject *Tobj, PyObject *Uobj, const PostingList *pl)
{
    Cursor *c = &s->cs[i];
    Py_ssize_t stride = (Py_ssize_t)pl->cap + 1, rows;
    if (PyObject_TypeCheck(Tobj, &TableType)) {
        Table *t = (Table *)Tobj;
        if (!t->ready || (Uobj != Py_None && Uobj != Tobj)) {
            PyErr_SetString(PyExc_ValueError, "a Table must be initialised, with bounds None");
            return -1;
        }
        if (t->cap != pl->cap) {
            PyErr_SetString(PyExc_ValueError, "table does not fit the posting list (cap)");
            return -1;
        }
        c->T = t->Tc;
        c->U = t->Uc;
        c->tmin = t->tmin;
        rows = t->rows;
        c->stride = 1;
        c->tstride = rows;
    }
    else {
        TermViews *tv = &s->tv[i];
        if (get_buffer(Tobj, &tv->T, 'd', "table") < 0) {
            return -1;
        }
        tv->haveT = 1;
        if (get_buffer(Uobj, &tv->U, 'd', "bound table") < 0) {
            return -1;
        }
        tv->haveU = 1;
        Py_ssize_t tl = buf_len(&tv->T);
        if (tl % stride != 0 || buf_len(&tv->U) != tl) {
            PyErr_SetString(PyExc_ValueError, "table does not fit the posting list");
            return -1;
        }
        c->T = (const double *)tv->T.buf;
        c->U = (const double *)tv->U.buf;
        rows = tl / stride;
        if (check_tables(c->T, c->U, rows, pl->cap) < 0) {
            return -1;
        }
        c->tmin = table_min(c->T, rows, pl->cap);
    }
    if (pl->max_j >= 0 && rows <= pl->max_j) {
        PyErr_SetString(PyExc_ValueError, "table does not fit the posting list (too few rows)");
        return -1;
    }
    c->rows = rows;
    return 0;
}

/* The overflow values of one term: one finite, non-negative tf part per overflow posting. */
static int
term_overflow(Search *s, int i, PyObject *oobj, const PostingList *pl)
{
    Cursor *c = &s->cs[i];
    c->ovf_val = NULL;
    if (!pl->novf) {
        return 0;
    }
    if (oobj == Py_None) {
        PyErr_SetString(PyExc_ValueError, "overflow values are missing");
        return -1;
    }
    TermViews *tv = &s->tv[i];
    if (get_buffer(oobj, &tv->ov, 'd', "overflow values") < 0) {
        return -1;
    }
    tv->haveO = 1;
    if (buf_len(&tv->ov) != pl->novf) {
        PyErr_SetString(PyExc_ValueError, "overflow values do not fit the posting list");
        return -1;
    }
    c->ovf_val = (const double *)tv->ov.buf;
    /* Checked and their maximum taken in one pass without branches (frequent terms of long
     * documents have tens of thousands): NaN fails both comparisons, infinity the second. */
    const double *ov = c->ovf_val;
    double mx = 0.0;
    int ok = 1;
    for (Py_ssize_t e = 0; e < pl->novf; e++) {
        double v = ov[e];
        ok &= (v >= 0.0) & (v <= DBL_MAX);
        mx = v > mx ? v : mx;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "tf parts must be finite and non-negative");
        return -1;
    }
    tv->ovmax = mx;
    return 0;
}

/* The largest U over the term's frontier (stored, or its single block's): *mx, or -1. */
static int
term_maximum(Cursor *c, const PostingList *pl, double *mx)
{
    *mx = 0.0;
    if (pl->n_tprof < 0 && pl->nblk > 1) {
        return -1; /* (a stored list of several blocks has a frontier: never left unread) */
    }
    if (pl->n_tprof >= 0) {
        for (int e = 0; e < pl->n_tprof; e++) {
            int32_t d = pl->tprof_doc[e];
            if (d < 0 || d >= c->ndocs) {
                return -1;
            }
            int32_t j = row_of(c, d);
            if (j < 0) {
                return -1;
            }
            double t = c->U[(Py_ssize_t)j * c->stride + pl->tprof_tf[e] * c->tstride];
            *mx = t > *mx ? t : *mx;
        }
        return 0;
    }
    if (c->nblk == 0) {
        return 0;
    }
    double nan = NAN;
    c->bub = &nan; /* one block: its maximum is the term's */
    *mx = blk_max(c, 0);
    c->bub = NULL;
    return *c->broken ? -1 : 0;
}

/* Cursor i's list and weight, and the query's totals of blocks and postings. */
void
search_term_weight(Search *s, int i, const PostingList *pl, double qw)
{
    Cursor *c = &s->cs[i];
    s->tv[i].pl = pl;
    c->qw = qw;
    c->qwp = qw > 0.0 ? qw : 0.0;
    c->qi = i;
    s->total_blocks += pl->nblk;
    s->total_postings += pl->n;
}

/* Cursor i's upper bound: the term's maximum of U (its frontier) and of its exact overflow
 * values, times max(qw, 0); and the query's total of their magnitudes. */
static int
term_bound(Search *s, int i)
{
    Cursor *c = &s->cs[i];
    const PostingList *pl = s->tv[i].pl;
    double mx;
    if (term_maximum(c, pl, &mx) < 0) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return -1;
    }
    if (s->tv[i].ovmax > mx) { /* its exact overflow values' maximum (term_overflow) */
        mx = s->tv[i].ovmax;
    }
    c->ub = c->qwp * mx;
    s->total_abs += fabs(c->qw) * mx;
    return 0;
}

/* The cursors at their first posting, with their bounds: where the pruning and exhaustive
 * traversals start (the short path needs neither). */
static int
start_cursors(Search *s)
{
    for (int i = 0; i < s->n; i++) {
        cur_rewind(&s->cs[i]);
        if (term_bound(s, i) < 0) {
            return -1;
        }
    }
    return 0;
}

/* Step 3: one cursor per term: (PostingList, qw, table, bound table, overflow values, column). */
static int
setup_term(Search *s, int i)
{
    PyObject *item = PyTuple_GET_ITEM(s->terms, i);
    PyObject *plo, *Tobj, *Uobj, *oobj, *colobj, *partsobj = Py_None;
    double qw;
    if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "O!dOOOO|O", &PostingListType, &plo, &qw,
                                                  &Tobj, &Uobj, &oobj, &colobj, &partsobj)) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) { /* a qw beyond any float */
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "term weight is not finite");
        }
        else if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "each term is (PostingList, qw, table, "
                                             "bound table, overflow values, column[, parts])");
        }
        return -1;
    }
    PostingList *pl = as_posting_list(plo);
    Py_ssize_t col;
    if (!pl || get_count(colobj, "column", 0, PY_SSIZE_T_MAX, 0, &col) < 0) {
        return -1;
    }
    if (!isfinite(qw)) {
        PyErr_SetString(PyExc_ValueError, "term weight is not finite");
        return -1;
    }
    if (col >= s->ncols || s->seen_col[col] || (i > 0 && col <= s->cols[i - 1])) {
        PyErr_SetString(PyExc_ValueError, "columns must be distinct, ascending, < ncols");
        return -1;
    }
    s->seen_col[col] = 1;
    s->cols[i] = (int)col;
    if (pl->n_docs != s->ndocs || pl->dli_view.buf != s->dli.buf) {
        PyErr_SetString(PyExc_ValueError, "PostingList was built for another dl_index");
        return -1;
    }
    Cursor *c = &s->cs[i];
    cursor_setup(c, pl, &s->q.broken, s->scratch + (Py_ssize_t)CURSOR_SCRATCH * i);
    if (term_tables(s, i, Tobj, Uobj, pl) < 0 || term_overflow(s, i, oobj, pl) < 0) {
        return -1;
    }
    if (partsobj != Py_None) { /* exhaustive path's decoded tf parts (parts.c) */
        Parts *pa = (Parts *)partsobj;
        if (!PyObject_TypeCheck(partsobj, &PartsType) || !parts_fit(pa, pl) || pa->table != Tobj) {
            PyErr_SetString(PyExc_ValueError, "parts were made for another posting list or table");
            return -1;
        }
        c->parts = pa;
    }
    search_term_weight(s, i, pl, qw);
    return 0;
}

/* Step 4: block maxima scratch (NaN = not computed yet; blk_max folds a block's overflow values
 * in when it computes the block's maximum). */
static int
block_maxima(Search *s)
{
    s->bub = arena_alloc(&s->arena, sizeof(double) * (s->total_blocks ? s->total_blocks : 1), 0);
    if (!s->bub) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t off = 0;
    for (int i = 0; i < s->n; i++) {
        Cursor *c = &s->cs[i];
        c->bub = s->bub + off;
        for (Py_ssize_t b = 0; b < c->nblk; b++) {
            c->bub[b] = NAN;
        }
        off += c->nblk;
    }
    return 0;
}

/* Step 5: the previous segments' top k: (docnos, scores, tfs, tf parts), rows of ncols; typed
 * arrays, or the bytes this function returned. */
static int
take_previous(Search *s, PyObject *prev)
{
    static const char kinds[4] = {'q', 'd', 'i', 'd'};
    static const char *names[4] = {"prev docnos", "prev scores", "prev tfs", "prev parts"};
    if (prev == Py_None) {
        return 0;
    }
    if (!PyTuple_Check(prev) || PyTuple_GET_SIZE(prev) != 4) {
        PyErr_SetString(PyExc_TypeError, "prev must be (docnos, scores, tfs, parts)");
        return -1;
    }
    for (int i = 0; i < 4; i++) {
        PyObject *o = PyTuple_GET_ITEM(prev, i);
        if (PyBytes_Check(o)) {
            if (PyObject_GetBuffer(o, &s->pv[i], PyBUF_SIMPLE) < 0) {
                return -1;
            }
            s->pv[i].itemsize = kinds[i] == 'i' ? 4 : 8;
        }
        else if (get_buffer(o, &s->pv[i], kinds[i], names[i]) < 0) {
            return -1;
        }
        s->have_pv[i] = 1;
    }
    Py_ssize_t m = buf_len(&s->pv[0]), c = s->ncols;
    if (s->pv[0].len % 8 || s->pv[1].len % 8 || s->pv[2].len % 4 || s->pv[3].len % 8 ||
        buf_len(&s->pv[1]) != m || !product_fits(m, c, 8) || buf_len(&s->pv[2]) != m * c ||
        buf_len(&s->pv[3]) != m * c) {
        PyErr_SetString(PyExc_ValueError, "prev arrays do not agree in size");
        return -1;
    }
    s->np_prev = m;
    return 0;
}

/* Step 6: the heap of the top k (at most every posting and previous hit) with its rows, filled
 * with the previous segments' top k. */
static int
start_heap(Search *s)
{
    Py_ssize_t hcap = s->k, most = s->total_postings + s->np_prev;
    if (hcap > most) {
        hcap = most;
    }
    Py_ssize_t h1 = hcap ? hcap : 1, c1 = s->ncols ? s->ncols : 1, nc = s->ncols;
    if (!product_fits(h1, c1, sizeof(double))) {
        PyErr_NoMemory();
        return -1;
    }
    s->h.cap = hcap;
    Arena *a = &s->arena;
    s->h.s = arena_alloc(a, sizeof(double) * h1, 0);
    s->h.d = arena_alloc(a, sizeof(int64_t) * h1, 0);
    s->h.slot = arena_alloc(a, sizeof(Py_ssize_t) * h1, 0);
    s->rows_tf = arena_alloc(a, (size_t)h1 * c1 * sizeof(int32_t), 1);
    s->rows_tp = arena_alloc(a, (size_t)h1 * c1 * sizeof(double), 1);
    if (!s->h.s || !s->h.d || !s->h.slot || !s->rows_tf || !s->rows_tp) {
        PyErr_NoMemory();
        return -1;
    }
    const double *ps = s->have_pv[1] ? (const double *)s->pv[1].buf : NULL;
    const int64_t *pd = s->have_pv[0] ? (const int64_t *)s->pv[0].buf : NULL;
    for (Py_ssize_t i = 0; i < s->np_prev && s->h.cap > 0; i++) {
        Py_ssize_t sl = heap_push(&s->h, ps[i], pd[i]);
        if (sl >= 0 && nc) {
            memcpy(s->rows_tf + sl * nc, (const int32_t *)s->pv[2].buf + i * nc,
                   sizeof(int32_t) * nc);
            memcpy(s->rows_tp + sl * nc, (const double *)s->pv[3].buf + i * nc,
                   sizeof(double) * nc);
        }
    }
    return 0;
}

/* Step 7: the query the traversal reads (see maxscore.c). */
static void
prepare_query(Search *s, double seed_ratio)
{
    Query *q = &s->q;
    q->cs = s->cs;
    q->n = s->n;
    q->allow = s->have_allow ? (const uint8_t *)s->allow.buf : NULL;
    q->deny = s->have_deny ? (const uint8_t *)s->deny.buf : NULL;
    /* Rounding slack. A score and every bound are sums of at most 2n + 2 terms whose magnitudes
     * add up to at most 2 * total_abs, each operation erring by half an ulp of its result:
     * 16 (n + 2) eps * total_abs is several times the worst case. */
    q->slack = 16.0 * (double)(s->n + 2) * DBL_EPSILON * s->total_abs + DBL_MIN;
    q->base = s->base;
    q->h = &s->h;
    q->vals = s->vals;
    q->tfv = s->tfv;
    q->tpv = s->tpv;
    q->present = s->present;
    q->qb = s->qb;
    q->tb = s->tb;
    for (int i = 0; i < s->n; i++) {
        s->qb[i] = NAN;
    }
    q->cols = s->cols;
    q->ncols = (int)s->ncols;
    q->rows_tf = s->rows_tf;
    q->rows_tp = s->rows_tp;
    q->ord = s->ord;
    q->prefix = s->prefix;
    q->seedcs = s->seedcs;
    q->seed_scratch = s->scratch + (Py_ssize_t)CURSOR_SCRATCH * (s->n ? s->n : 1);
    q->seed_ratio = seed_ratio;
    q->total_postings = s->total_postings;
    q->pend = s->pend;
    q->pend_b = s->pend_b;
    q->probes = s->probes;
    q->rest = s->rest;
    q->probe_scratch = s->probe_scratch;
    q->pend_e = NULL;
}

/* Sort e[0..n) best first: quicksort with the comparison inlined (qsort's call per comparison
 * was a fifth of an evaluation search at k = 1000), insertion sort below 16 entries. */
void
sort_entries(Entry *e, Py_ssize_t n)
{
    while (n > 16) {
        Py_ssize_t i, j;
        partition_entries(e, 0, n - 1, &i, &j);
        /* recurse into the smaller part, loop on the larger (stack depth O(log n)) */
        if (j + 1 < n - i) {
            sort_entries(e, j + 1);
            e += i;
            n -= i;
        }
        else {
            sort_entries(e + i, n - i);
            n = j + 1;
        }
    }
    for (Py_ssize_t a = 1; a < n; a++) {
        Entry x = e[a];
        Py_ssize_t b = a - 1;
        while (b >= 0 && entry_before(&x, &e[b])) {
            e[b + 1] = e[b];
            b--;
        }
        e[b + 1] = x;
    }
}

void
heap_best_first(const Heap *h, Entry *es)
{
    int sorted = 1;
    for (Py_ssize_t i = 0; i < h->size; i++) {
        es[i].s = h->s[i];
        es[i].d = h->d[i];
        es[i].slot = h->slot[i];
        sorted = sorted && (i == 0 || entry_before(&es[i - 1], &es[i]));
    }
    if (!sorted) {
        sort_entries(es, h->size);
    }
}

void
heap_rebuild(Heap *h, Entry *es)
{
    Py_ssize_t m = h->size;
    for (Py_ssize_t i = 0; i < m; i++) {
        es[i].s = h->s[i];
        es[i].d = h->d[i];
    }
    h->size = 0;
    for (Py_ssize_t i = 0; i < m; i++) {
        heap_push(h, es[i].s, es[i].d);
    }
}

int
entries_bytes(const Entry *es, Py_ssize_t m, Py_ssize_t nc, const int32_t *rows_tf,
              const double *rows_tp, PyObject *out[4])
{
    const size_t widths[4] = {sizeof(int64_t), sizeof(double), sizeof(int32_t) * (size_t)nc,
                              sizeof(double) * (size_t)nc};
    for (int i = 0; i < 4; i++) {
        out[i] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((size_t)m * widths[i]));
        if (!out[i]) {
            for (int j = 0; j <= i; j++) {
                Py_CLEAR(out[j]);
            }
            return -1;
        }
    }
    int64_t *od = (int64_t *)PyBytes_AS_STRING(out[0]);
    double *os = (double *)PyBytes_AS_STRING(out[1]);
    int32_t *ot = (int32_t *)PyBytes_AS_STRING(out[2]);
    double *op = (double *)PyBytes_AS_STRING(out[3]);
    for (Py_ssize_t i = 0; i < m; i++) {
        od[i] = es[i].d;
        os[i] = es[i].s;
        if (nc) {
            memcpy(ot + i * nc, rows_tf + es[i].slot * nc, sizeof(int32_t) * (size_t)nc);
            memcpy(op + i * nc, rows_tp + es[i].slot * nc, sizeof(double) * (size_t)nc);
        }
    }
    return 0;
}

/* Step 8: the top k sorted (score descending, docno ascending) as bytes: docnos (int64),
 * scores (float64), and rows of ncols tfs (int32) and tf parts (float64). */
static PyObject *
build_result(Search *s)
{
    Py_ssize_t m = s->h.size;
    Entry *es = arena_alloc(&s->arena, sizeof(Entry) * (m ? m : 1), 0);
    PyObject *b[4];
    if (!es) {
        return PyErr_NoMemory();
    }
    heap_best_first(&s->h, es);
    if (entries_bytes(es, m, s->ncols, s->rows_tf, s->rows_tp, b) < 0) {
        return NULL;
    }
    const Query *q = &s->q;
    if (s->want_stats) {
        return Py_BuildValue("(NNNN{s:L,s:L,s:L,s:L})", b[0], b[1], b[2], b[3], "candidates",
                             (long long)q->n_cand, "scored", (long long)q->n_scored, "skips",
                             (long long)q->n_skips, "seeded", (long long)q->n_seeded);
    }
    return Py_BuildValue("(NNNN)", b[0], b[1], b[2], b[3]);
}

/* The exhaustive traversal (exhaustive.c) instead of the pruning one: the result of
 * build_result with the number of matching documents appended. */
static PyObject *
search_exhaustive(Search *s, PyObject *prev, double seed_ratio)
{
    if (!s->rows) {
        s->ncols = 0; /* no rows: none allocated, copied or returned (the columns were checked) */
    }
    if (take_previous(s, prev) < 0 || start_heap(s) < 0) {
        return NULL;
    }
    prepare_query(s, seed_ratio);
    /* Windowed, the sums and marks of one window only (256 KB, not 8 MB at 1 M documents: no
     * second clearing of the whole segment's slots), and no list of touched documents. */
    Py_ssize_t nd = s->ndocs ? s->ndocs : 1, win = exhaustive_window(&s->q, s->ndocs);
    Py_ssize_t na = win ? win : nd;
    double *acc = calloc((size_t)na, sizeof(double));
    uint8_t *seen = calloc((size_t)na, 1);
    int32_t *touched = win ? NULL : malloc(sizeof(int32_t) * (size_t)nd);
    Py_ssize_t *slot_of = s->rows ? malloc(sizeof(Py_ssize_t) * (size_t)nd) : NULL;
    if (!acc || !seen || (!win && !touched) || (s->rows && !slot_of)) {
        free(acc);
        free(seen);
        free(touched);
        free(slot_of);
        return PyErr_NoMemory();
    }
    long long matches;
    Py_BEGIN_ALLOW_THREADS
    matches = exhaustive(&s->q, s->ndocs, win, s->rows, acc, seen, touched, slot_of, 1);
    Py_END_ALLOW_THREADS
    free(acc);
    free(seen);
    free(touched);
    free(slot_of);
    if (matches < 0) {
        return PyErr_NoMemory();
    }
    if (s->q.broken) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return NULL;
    }
    PyObject *got = build_result(s);
    if (!got) {
        return NULL;
    }
    PyObject *out = Py_BuildValue("(OOOOL)", PyTuple_GET_ITEM(got, 0), PyTuple_GET_ITEM(got, 1),
                                  PyTuple_GET_ITEM(got, 2), PyTuple_GET_ITEM(got, 3), matches);
    Py_DECREF(got);
    return out;
}

/* The pruning traversal (maxscore.c) of the set-up cursors, after the previous segments' top k:
 * the result of build_result. */
static PyObject *
search_pruning(Search *s, PyObject *prev, double seed_ratio)
{
    if (block_maxima(s) < 0 || take_previous(s, prev) < 0 || start_heap(s) < 0) {
        return NULL;
    }
    prepare_query(s, seed_ratio);
    Py_BEGIN_ALLOW_THREADS
    traverse(&s->q);
    Py_END_ALLOW_THREADS
    if (s->q.broken) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return NULL;
    }
    return build_result(s);
}

/* The short path (short.c) instead of the pruning traversal: the result of build_result. */
static PyObject *
search_short(Search *s, PyObject *prev)
{
    if (take_previous(s, prev) < 0 || start_heap(s) < 0) {
        return NULL;
    }
    prepare_query(s, 0.0);
    void *scratch = arena_alloc(&s->arena, short_scratch_bytes(s->total_postings, s->n), 0);
    if (!scratch) {
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    short_rank(&s->q, scratch);
    Py_END_ALLOW_THREADS
    if (s->q.broken) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return NULL;
    }
    return build_result(s);
}

/* After the terms' set-up: the short path, the exhaustive traversal or the pruning one. */
PyObject *
search_set_up(Search *s, PyObject *prev, double seed_ratio)
{
    if (!s->exhaustive && short_taken(s->cs, s->n)) {
        return search_short(s, prev);
    }
    if (start_cursors(s) < 0) {
        return NULL;
    }
    if (s->exhaustive) {
        return search_exhaustive(s, prev, seed_ratio);
    }
    return search_pruning(s, prev, seed_ratio);
}

PyObject *
topk_search(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    Search s;
    memset(&s, 0, sizeof(s));
    s.rows = 1;
    double seed_ratio = 4.0;
    PyObject *prev, *result = NULL;
    if (read_arguments(&s, args, kwds, &seed_ratio, &prev) < 0 || search_scratch(&s) < 0) {
        goto done;
    }
    for (int i = 0; i < s.n; i++) {
        if (setup_term(&s, i) < 0) {
            goto done;
        }
    }
    result = search_set_up(&s, prev, seed_ratio);
done:
    search_release(&s);
    return result;
}
