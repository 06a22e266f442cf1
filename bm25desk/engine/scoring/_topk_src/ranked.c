/* ranked(): the top k of one stored segment for term ids, in one call.
 *
 * What search() does for (stored(arrays, tid, ...), qw, table, None, None, column) per term, with
 * the segment's arrays taken once and each term's list set up in the call's arena (the same
 * ranges, overflow and frontier checks as stored(); the frontier read only when the pruning
 * traversal runs: the short path needs no bounds), no PostingList object and no previous
 * segment. None when a term has postings with tf > cap: their tf parts come from numpy, so the
 * caller runs search() instead. (What it shares with search() is declared in search.h.)
 *
 * ranked_terms(): the same for the query's TermSpecs (text, qtf, weighting) and the lexicon's
 * memo of term -> id, read here as topk.py's ranked() read them (ranked_specs): no Python loop
 * and no lists of ids and weights per query. What it does not take (a term the memo lacks, a
 * per-term k1, a value of another type) it hands back (NotImplemented) to that loop. */
#include "search.h"

/* The term ids and weights: two sequences of n numbers (ints; finite floats). */
static int
ranked_sequences(PyObject *tids, PyObject *qws, PyObject **ft, PyObject **fq, Py_ssize_t *n)
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

/* A call's terms as C arrays: n ids and weights (and, for tids/qws, which of them did not
 * convert: reported in order, as the set-up reaches them), on the stack for a short query. */
typedef struct {
    Py_ssize_t n;
    Py_ssize_t *tid;
    double *qw;
    char *bad; /* NULL: every one converted */
    Py_ssize_t local_tid[32];
    double local_qw[32];
    char local_bad[32];
} TermArrays;

static int
term_arrays(TermArrays *ta, Py_ssize_t n, int with_bad)
{
    ta->n = 0;
    ta->bad = NULL;
    if (n <= 32) {
        ta->tid = ta->local_tid;
        ta->qw = ta->local_qw;
        ta->bad = with_bad ? ta->local_bad : NULL;
        return 0;
    }
    ta->tid = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)n);
    ta->qw = PyMem_Malloc(sizeof(double) * (size_t)n);
    ta->bad = with_bad ? PyMem_Malloc((size_t)n) : NULL;
    if (!ta->tid || !ta->qw || (with_bad && !ta->bad)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void
term_arrays_free(TermArrays *ta)
{
    if (ta->tid && ta->tid != ta->local_tid) {
        PyMem_Free(ta->tid);
        PyMem_Free(ta->qw);
        PyMem_Free(ta->bad);
    }
}

/* tids and qws (ranked_sequences) converted; one that does not convert is marked bad (no
 * error set: the set-up reports it when it reaches it, after the other arguments). */
static void
convert_sequences(TermArrays *ta, PyObject *ft, PyObject *fq)
{
    for (Py_ssize_t i = 0; i < ta->n; i++) {
        ta->tid[i] = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(ft, i));
        ta->qw[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fq, i));
        ta->bad[i] = PyErr_Occurred() != NULL;
        PyErr_Clear();
    }
}

/* Decline codes of ranked_specs (besides -1, an exception, and 0, the terms taken). */
#define SPECS_NONE 1  /* a weight is not finite, or no term is in the vocabulary: None */
#define SPECS_LATER 2 /* for topk.py's loop (a term the memo lacks, an odd value): NotImplemented */

/* The TermSpecs (text, qtf, weighting) as ranked() in topk.py reads them, term by term in query
 * order: the weighting's k1 (None, else SPECS_LATER: BM25Adpt's tables per term are the loop's
 * decline), qw = qtf * idf as Python computes it (an int's nearest double times the float: a qtf
 * not an int or an idf not a float is SPECS_LATER), a weight not finite SPECS_NONE, the term's id
 * from the lexicon's memo (a term it lacks: SPECS_LATER, for its look-up), and a term of id < 0
 * (not in the vocabulary) left out. specs: a tuple (ours). */
static int
ranked_specs(TermArrays *ta, PyObject *specs, PyObject *memo)
{
    static PyObject *s_idf = NULL, *s_k1 = NULL;
    if ((!s_idf && !(s_idf = PyUnicode_InternFromString("idf"))) ||
        (!s_k1 && !(s_k1 = PyUnicode_InternFromString("k1")))) {
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(specs);
    for (Py_ssize_t t = 0; t < n; t++) {
        PyObject *spec = PyTuple_GET_ITEM(specs, t);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 3 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(spec, 0))) {
            PyErr_SetString(PyExc_TypeError, "each term is (text, qtf, weighting)");
            return -1;
        }
        PyObject *qtf = PyTuple_GET_ITEM(spec, 1), *w = PyTuple_GET_ITEM(spec, 2);
        PyObject *k1 = weighting_attr(w, s_k1, 1);
        if (!k1) {
            return -1;
        }
        Py_DECREF(k1); /* (compared by identity only) */
        if (k1 != Py_None || !PyLong_CheckExact(qtf)) {
            return SPECS_LATER;
        }
        PyObject *idf = weighting_attr(w, s_idf, 0);
        if (!idf) {
            return -1;
        }
        int is_float = PyFloat_CheckExact(idf);
        double f = is_float ? PyFloat_AS_DOUBLE(idf) : 0.0;
        Py_DECREF(idf);
        double q = is_float ? PyLong_AsDouble(qtf) : 0.0; /* what float * int converts it with */
        if (!is_float || (q == -1.0 && PyErr_Occurred())) {
            PyErr_Clear(); /* (an int too large for a double: the loop raises its error) */
            return SPECS_LATER;
        }
        double qw = q * f;
        if (!isfinite(qw)) {
            return SPECS_NONE;
        }
        PyObject *id = PyDict_GetItemWithError(memo, PyTuple_GET_ITEM(spec, 0));
        if (!id) {
            return PyErr_Occurred() ? -1 : SPECS_LATER;
        }
        Py_ssize_t tid = PyLong_CheckExact(id) ? PyLong_AsSsize_t(id) : -1;
        if (!PyLong_CheckExact(id) || (tid == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return SPECS_LATER;
        }
        if (tid >= 0) {
            ta->tid[ta->n] = tid;
            ta->qw[ta->n++] = qw;
        }
    }
    return ta->n ? 0 : SPECS_NONE;
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
    c->tmin = t->tmin;
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

/* The top k for the terms of ta (ids and weights) once every argument is read: None when a list
 * has overflow postings. */
static PyObject *
ranked_run(PyObject *arrays, PyObject *dli, const TermArrays *ta, PyObject *table, PyObject *k,
           PyObject *allow, PyObject *deny, PyObject *cap_o, PyObject *shift_o)
{
    Search s;
    memset(&s, 0, sizeof(s));
    s.rows = 1;
    Py_buffer av[9];
    int nav = 0, dli_w = 1, cap = 32, shift = 7;
    PyObject *result = NULL;
    PostingList *lists = NULL;
    Py_ssize_t n = ta->n;
    if (ranked_arguments(&s, dli, k, allow, deny, table, cap_o, shift_o, &dli_w, &cap, &shift) < 0) {
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
        int has = ta->bad && ta->bad[i] ? -1 : stored_has_overflow(av, ta->tid[i]);
        if (has < 0 || !isfinite(ta->qw[i])) {
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
    if (!lists) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t made = 0; made < n; made++) { /* (their arrays in the arena: nothing to free) */
        if (ta->bad && ta->bad[made]) {
            PyErr_SetString(PyExc_TypeError, "tids must be ints and qws floats");
            goto done;
        }
        if (!isfinite(ta->qw[made])) {
            PyErr_SetString(PyExc_ValueError, "term weight is not finite");
            goto done;
        }
        if (stored_list(&lists[made], av, ta->tid[made], &s.dli, dli_w, cap, shift, &s.arena) < 0) {
            goto done;
        }
        if (lists[made].novf) { /* tf parts from numpy: search(), once the others are checked */
            decline = 1;
            continue;
        }
        ranked_term(&s, (int)made, &lists[made], (const Table *)table, ta->qw[made]);
    }
    if (decline) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (!short_taken(s.cs, s.n)) { /* the pruning traversal: the terms' frontiers (bounds) */
        for (Py_ssize_t i = 0; i < n; i++) {
            if (stored_list_frontier(&lists[i], av, ta->tid[i], &s.arena) < 0) {
                goto done;
            }
        }
    }
    result = search_set_up(&s, Py_None, 4.0);
done:
    for (int i = 0; i < nav; i++) {
        PyBuffer_Release(&av[i]);
    }
    search_release(&s);
    return result;
}

/* tids and qws (ranked()) as C arrays; *ft and *fq: references to release. */
static int
read_ids(TermArrays *ta, PyObject *tids, PyObject *qws, PyObject **ft, PyObject **fq)
{
    Py_ssize_t n = 0;
    if (ranked_sequences(tids, qws, ft, fq, &n) < 0 || term_arrays(ta, n, 1) < 0) {
        return -1;
    }
    ta->n = n;
    convert_sequences(ta, *ft, *fq);
    return 0;
}

/* The TermSpecs and the memo (ranked_terms()) as C arrays, or a decline code (ranked_specs);
 * *specs: a reference to release. */
static int
read_specs(TermArrays *ta, PyObject *terms, PyObject *memo, PyObject **specs)
{
    if (!PyDict_Check(memo)) {
        PyErr_SetString(PyExc_TypeError, "memo must be a dict");
        return -1;
    }
    /* (a tuple of ours: reading a weighting's attributes may run code that changes a list) */
    *specs = PySequence_Tuple(terms);
    if (!*specs) {
        return -1;
    }
    if (PyTuple_GET_SIZE(*specs) > MAX_COLUMNS) {
        PyErr_SetString(PyExc_ValueError, "too many terms (at most a million)");
        return -1;
    }
    if (term_arrays(ta, PyTuple_GET_SIZE(*specs), 0) < 0) {
        return -1;
    }
    return ranked_specs(ta, *specs, memo);
}

/* ranked() (by_specs 0: tids and qws) and ranked_terms() (1: terms and memo). */
static PyObject *
ranked_call(PyObject *args, PyObject *kwds, int by_specs)
{
    static char *by_ids[] = {"arrays", "dl_index", "tids",  "qws",   "table", "k",
                             "allow",  "deny",     "cap",   "shift", NULL};
    static char *by_terms[] = {"arrays", "dl_index", "terms", "memo",  "table", "k",
                               "allow",  "deny",     "cap",   "shift", NULL};
    PyObject *arrays, *dli, *a, *b, *table, *k, *allow = Py_None, *deny = Py_None;
    PyObject *cap_o = NULL, *shift_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOO|OOOO", by_specs ? by_terms : by_ids,
                                     &arrays, &dli, &a, &b, &table, &k, &allow, &deny, &cap_o,
                                     &shift_o)) {
        return NULL;
    }
    PyObject *ra = NULL, *rb = NULL, *result = NULL;
    TermArrays ta;
    ta.tid = NULL;
    int r = by_specs ? read_specs(&ta, a, b, &ra) : read_ids(&ta, a, b, &ra, &rb);
    if (r == 0) {
        result = ranked_run(arrays, dli, &ta, table, k, allow, deny, cap_o, shift_o);
    } else if (r > 0) {
        result = Py_NewRef(r == SPECS_NONE ? Py_None : Py_NotImplemented);
    }
    term_arrays_free(&ta);
    Py_XDECREF(ra);
    Py_XDECREF(rb);
    return result;
}

PyObject *
topk_ranked(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    return ranked_call(args, kwds, 0);
}

PyObject *
topk_ranked_terms(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    return ranked_call(args, kwds, 1);
}
