/* ranked(): the top k of one stored segment for term ids, in one call.
 *
 * What search() does for (stored(arrays, tid, ...), qw, table, None, None, column) per term, with
 * the segment's arrays taken once and each term's list set up in the call's arena (the same
 * ranges, overflow and frontier checks as stored(); the frontier read only when the pruning
 * traversal runs: the short path needs no bounds), no PostingList object and no previous
 * segment. None when a term has postings with tf > cap: their tf parts come from numpy, so the
 * caller runs search() instead. (What it shares with search() is declared in search.h.) */
#include "search.h"

/* The term ids and weights: two sequences of n numbers (ints; finite floats). */
static int
ranked_terms(PyObject *tids, PyObject *qws, PyObject **ft, PyObject **fq, Py_ssize_t *n)
{
    *ft = PySequence_Fast(tids, "tids must be a sequence");
    *fq = *ft ? PySequence_Fast(qws, "qws must be a sequence") : NULL;
    if (!*fq) {
        return -1;
    }
    *n = PySequence_Fast_GET_SIZE(*ft);
    if (PySequence_Fast_GET_SIZE(*fq) != *n || *n > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "tids and qws must be as many (at most a million)");
        return -1;
    }
    return 0;
}

/* One term's cursor: its list (lists[i], set up here), weight and the table's T and U. */
static void
ranked_term(Search *s, int i, PostingList *pl, const Table *t, double qw)
{
    s->cols[i] = i;
    Cursor *c = &s->cs[i];
    cursor_setup(c, pl, &s->q.broken, s->scratch + (Py_ssize_t)CURSOR_SCRATCH * i);
    c->T = t->Tc; /* the kernel's copy by column, as term_tables() reads a Table */
    c->U = t->Uc;
    c->stride = 1;
    c->tstride = t->rows;
    c->rows = t->rows;
    c->ovf_val = NULL; /* none: ranked() declines lists with overflow postings */
    search_term_weight(s, i, pl, qw);
}

/* The arguments beside the terms: k, the length index, allow/deny, the table and the layout. */
static int
ranked_arguments(Search *s, PyObject *dli, PyObject *k, PyObject *allow, PyObject *deny,
                 PyObject *table, PyObject *cap_o, PyObject *shift_o, int *dli_w, int *cap,
                 int *shift)
{
    Py_ssize_t c = 32, sh = 7;
    if (get_count(k, "k", 1, PY_SSIZE_T_MAX, 1, &s->k) < 0 ||
        (cap_o && get_count(cap_o, "cap", 1, MAX_CAP, 0, &c) < 0) ||
        (shift_o && get_count(shift_o, "shift", 2, BLK_MAX_SHIFT, 0, &sh) < 0)) {
        return -1;
    }
    *cap = (int)c;
    *shift = (int)sh;
    if (!PyObject_TypeCheck(table, &TableType) || !((Table *)table)->ready ||
        ((Table *)table)->cap != *cap) {
        PyErr_SetString(PyExc_ValueError, "table must be an initialised Table of the list's cap");
        return -1;
    }
    if (search_segment(s, dli, allow, deny, dli_w) < 0) {
        return -1;
    }
    if (s->ndocs > INT32_MAX - 1) { /* what a PostingList's length index is held to */
        PyErr_SetString(PyExc_ValueError, "dl_index is too long");
        return -1;
    }
    return 0;
}

PyObject *
topk_ranked(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"arrays", "dl_index", "tids",  "qws",   "table", "k",
                             "allow",  "deny",     "cap",   "shift", NULL};
    PyObject *arrays, *dli, *tids, *qws, *table, *k, *allow = Py_None, *deny = Py_None;
    PyObject *cap_o = NULL, *shift_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|OOOO", kwlist, &arrays, &dli, &tids,
                                     &qws, &table, &k, &allow, &deny, &cap_o, &shift_o)) {
        return NULL;
    }
    Search s;
    memset(&s, 0, sizeof(s));
    s.rows = 1;
    Py_buffer av[9];
    int nav = 0, dli_w = 1, cap = 32, shift = 7;
    PyObject *ft = NULL, *fq = NULL, *result = NULL;
    PostingList *lists = NULL;
    Py_ssize_t n = 0, *tid_of = NULL;
    if (ranked_terms(tids, qws, &ft, &fq, &n) < 0 ||
        ranked_arguments(&s, dli, k, allow, deny, table, cap_o, shift_o, &dli_w, &cap, &shift) < 0) {
        goto done;
    }
    s.n = (int)n;
    s.ncols = n;
    nav = stored_views(arrays, av);
    if (nav < 9 || search_scratch(&s) < 0) {
        goto done;
    }
    /* A list with overflow postings declines the call: found before any list is set up (whose
     * set-up copies the term's overflow positions and block offsets: a frequent term of long
     * documents has thousands), once every term id and weight is known good. Anything odd is
     * left to the set-up below to report (a bad weight beside a list with overflow postings is
     * an error, not a decline). */
    int decline = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t tid = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(ft, i));
        double qw = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fq, i));
        int has = PyErr_Occurred() ? -1 : stored_has_overflow(av, tid);
        if (has < 0 || !isfinite(qw)) {
            PyErr_Clear();
            decline = 0;
            break;
        }
        decline |= has;
    }
    if (decline) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    lists = arena_alloc(&s.arena, (n ? (size_t)n : 1) * sizeof(PostingList), 0);
    tid_of = arena_alloc(&s.arena, (n ? (size_t)n : 1) * sizeof(Py_ssize_t), 0);
    if (!lists || !tid_of) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t made = 0; made < n; made++) { /* (their arrays in the arena: nothing to free) */
        Py_ssize_t tid = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(ft, made));
        double qw = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fq, made));
        if (PyErr_Occurred()) {
            PyErr_SetString(PyExc_TypeError, "tids must be ints and qws floats");
            goto done;
        }
        if (!isfinite(qw)) {
            PyErr_SetString(PyExc_ValueError, "term weight is not finite");
            goto done;
        }
        if (stored_list(&lists[made], av, tid, &s.dli, dli_w, cap, shift, &s.arena) < 0) {
            goto done;
        }
        tid_of[made] = tid;
        if (lists[made].novf) { /* tf parts from numpy: search(), once the others are checked */
            decline = 1;
            continue;
        }
        ranked_term(&s, (int)made, &lists[made], (const Table *)table, qw);
    }
    if (decline) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (!short_taken(s.cs, s.n)) { /* the pruning traversal: the terms' frontiers (bounds) */
        for (Py_ssize_t i = 0; i < n; i++) {
            if (stored_list_frontier(&lists[i], av, tid_of[i], &s.arena) < 0) {
                goto done;
            }
        }
    }
    result = search_set_up(&s, Py_None, 4.0);
done:
    for (int i = 0; i < nav; i++) {
        PyBuffer_Release(&av[i]);
    }
    Py_XDECREF(ft);
    Py_XDECREF(fq);
    search_release(&s);
    return result;
}
