/* A query's new terms weighed by df (search.Searcher._weigh_many): for a variant whose weighting
 * depends on df alone, each term takes the weighting of its df, kept per df (by_df), so that a
 * new term costs a look-up; remember_weighing() puts them in the search's weight table and df
 * memo in one call instead of a few Python lines per term, making a new df's weighting itself
 * (a copy of the variant's prototype with its idf). weighed() reads them back for every query:
 * its terms' (term, qtf, weighting) in query order, in one call too. */
#include "topk.h"

#include <structmember.h> /* T_OBJECT_EX, READONLY: a weighting's slots */

/* Whether df (an int) is positive: 1 or 0, or -1 with an exception. */
static int
positive(PyObject *df)
{
    if (!PyLong_Check(df)) {
        PyErr_SetString(PyExc_TypeError, "remember_weighing: dfs must be ints");
        return -1;
    }
    long long v = PyLong_AsLongLong(df);
    return v == -1 && PyErr_Occurred() ? -1 : v > 0;
}

/* weighed(scored, table, dfs): a query's (term, qtf) pairs with their weightings from table, in
 * one call instead of a few Python lines per term (Searcher._weighed, every query). See
 * by_df.weighed_python, which this equals. */
PyObject *
topk_weighed(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *scored, *table, *dfs;
    if (!PyArg_ParseTuple(args, "OO!O!", &scored, &PyDict_Type, &table, &PyDict_Type, &dfs)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(scored, "weighed: scored must be a sequence");
    if (!seq) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = NULL, *unknown = NULL, *missing = NULL, *result = NULL;
    /* First whether every term has an entry: else the terms without one, nothing else made. */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = items[i];
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "weighed: scored holds (term, qtf) pairs");
            goto done;
        }
        PyObject *term = PyTuple_GET_ITEM(pair, 0);
        if (PyDict_GetItemWithError(table, term) || PyErr_Occurred()) {
            if (PyErr_Occurred()) {
                goto done;
            }
            continue;
        }
        if ((!missing && !(missing = PyList_New(0))) || PyList_Append(missing, term) < 0) {
            goto done;
        }
    }
    if (missing) {
        result = Py_NewRef(missing);
        goto done;
    }
    out = PyList_New(0);
    unknown = PyList_New(0);
    long long postings = 0;
    for (Py_ssize_t i = 0; out && unknown && i < n; i++) {
        PyObject *term = PyTuple_GET_ITEM(items[i], 0);
        PyObject *w = PyDict_GetItemWithError(table, term);
        if (!w) { /* (read twice: the table cannot change while this call holds the GIL) */
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_RuntimeError, "weighed: a weighting went missing");
            }
            goto done;
        }
        if (w == Py_None) {
            if (PyList_Append(unknown, term) < 0) {
                goto done;
            }
            continue;
        }
        PyObject *df = PyDict_GetItemWithError(dfs, term);
        if (df) {
            long long v = PyLong_AsLongLong(df);
            if (v == -1 && PyErr_Occurred()) {
                goto done;
            }
            postings += v;
        }
        else if (PyErr_Occurred()) {
            goto done;
        }
        PyObject *spec = PyTuple_Pack(3, term, PyTuple_GET_ITEM(items[i], 1), w);
        int bad = !spec || PyList_Append(out, spec) < 0;
        Py_XDECREF(spec);
        if (bad) {
            goto done;
        }
    }
    if (out && unknown) {
        PyObject *total = PyLong_FromLongLong(postings);
        result = total ? PyTuple_Pack(3, out, unknown, total) : NULL;
        Py_XDECREF(total);
    }
done:
    Py_XDECREF(out);
    Py_XDECREF(unknown);
    Py_XDECREF(missing);
    Py_DECREF(seq);
    return result;
}

/* The object slots of a weighting's type (a frozen dataclass with __slots__: TermWeight), so
 * that a new weighting is a copy of the variant's prototype with its idf and df set: what
 * TermWeight.with_text_later makes, without running its Python lines for each new df. */
typedef struct {
    PyTypeObject *type; /* held: its layout below stays valid */
    Py_ssize_t off[16];
    int n;
    Py_ssize_t idf, text_df, k1; /* (k1: -1 when the type has no such slot) */
} Layout;

static Layout layout_cache;

/* The layout of proto's type, or NULL (and no exception) when it is not one this can copy. */
static Layout *
layout_of(PyObject *proto)
{
    PyTypeObject *tp = Py_TYPE(proto);
    if (layout_cache.type == tp) {
        return &layout_cache;
    }
    if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) || tp->tp_dictoffset != 0 || !tp->tp_members) {
        return NULL;
    }
    Layout got = {.n = 0, .idf = -1, .text_df = -1, .k1 = -1};
    for (PyMemberDef *m = tp->tp_members; m->name; m++) {
        if (m->type != T_OBJECT_EX || (m->flags & READONLY) || got.n == 16) {
            return NULL;
        }
        if (!strcmp(m->name, "idf")) {
            got.idf = m->offset;
        }
        else if (!strcmp(m->name, "_text_df")) {
            got.text_df = m->offset;
        }
        else if (!strcmp(m->name, "k1")) {
            got.k1 = m->offset;
        }
        got.off[got.n++] = m->offset;
    }
    if (got.idf < 0 || got.text_df < 0) {
        return NULL;
    }
    Py_XDECREF(layout_cache.type);
    got.type = (PyTypeObject *)Py_NewRef((PyObject *)tp);
    layout_cache = got;
    return &layout_cache;
}

PyObject *
weighting_attr(PyObject *w, PyObject *name, int k1)
{
    const Layout *lay = layout_of(w);
    Py_ssize_t off = lay ? (k1 ? lay->k1 : lay->idf) : -1;
    PyObject *v = off >= 0 ? *(PyObject **)((char *)w + off) : NULL;
    return v ? Py_NewRef(v) : PyObject_GetAttr(w, name);
}

/* A new reference: proto's copy with idf and the df of its text set (idf_text left unset). */
static PyObject *
weighting_like(PyObject *proto, const Layout *lay, PyObject *idf, PyObject *df)
{
    PyTypeObject *tp = Py_TYPE(proto);
    PyObject *w = tp->tp_alloc(tp, 0);
    if (!w) {
        return NULL;
    }
    for (int i = 0; i < lay->n; i++) {
        Py_ssize_t off = lay->off[i];
        PyObject *v = off == lay->idf ? idf : off == lay->text_df ? df : *(PyObject **)((char *)proto + off);
        *(PyObject **)((char *)w + off) = Py_XNewRef(v);
    }
    return w;
}

/* The idf of df (1 <= df <= top) from its chunk of idfs (a list of floats), borrowed; NULL (no
 * exception) when that chunk is not computed yet. */
static PyObject *
chunk_idf(PyObject *chunks, long long df, Py_ssize_t size)
{
    long long c = (df - 1) / size;
    PyObject *key = PyLong_FromLongLong(c);
    if (!key) {
        return NULL;
    }
    PyObject *idfs = PyDict_GetItemWithError(chunks, key);
    Py_DECREF(key);
    if (!idfs || !PyList_Check(idfs)) {
        return NULL;
    }
    Py_ssize_t at = (Py_ssize_t)(df - 1 - c * size);
    if (at >= PyList_GET_SIZE(idfs)) {
        return NULL;
    }
    PyObject *idf = PyList_GET_ITEM(idfs, at);
    return PyFloat_CheckExact(idf) ? idf : NULL;
}

/* remember_weighing(terms, dfs, by_df, table, memo, chunks, size, top, proto): see
 * by_df.remember_weighing_python, which this equals. */
PyObject *
topk_remember_weighing(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *terms, *dfs, *by_df, *table, *memo, *chunks, *proto;
    Py_ssize_t size;
    long long top;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!nLO", &PyList_Type, &terms, &PyList_Type, &dfs,
                          &PyDict_Type, &by_df, &PyDict_Type, &table, &PyDict_Type, &memo,
                          &PyDict_Type, &chunks, &size, &top, &proto)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(terms);
    if (PyList_GET_SIZE(dfs) != n || size < 1) {
        PyErr_SetString(PyExc_TypeError, "remember_weighing: one df per term, a chunk size >= 1");
        return NULL;
    }
    const Layout *lay = proto == Py_None ? NULL : layout_of(proto);
    /* Each term's weighting (owned here: another search may clear by_df meanwhile). */
    PyObject **ws = PyMem_Calloc((size_t)(n ? n : 1), sizeof(PyObject *));
    PyObject *missing = PyList_New(0), *seen = NULL, *result = NULL;
    if (!ws || !missing) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *df = PyList_GET_ITEM(dfs, i);
        int pos = positive(df);
        if (pos < 0) {
            goto done;
        }
        if (!pos) {
            ws[i] = Py_NewRef(Py_None);
            continue;
        }
        PyObject *w = PyDict_GetItemWithError(by_df, df);
        if (w) {
            ws[i] = Py_NewRef(w);
            continue;
        }
        if (PyErr_Occurred()) {
            goto done;
        }
        long long v = PyLong_AsLongLong(df);
        PyObject *idf = lay && v <= top ? chunk_idf(chunks, v, size) : NULL;
        if (PyErr_Occurred()) {
            goto done;
        }
        if (idf) {
            w = weighting_like(proto, lay, idf, df);
            if (!w || PyDict_SetItem(by_df, df, w) < 0) {
                Py_XDECREF(w);
                goto done;
            }
            ws[i] = w;
            continue;
        }
        if (!seen && !(seen = PySet_New(NULL))) {
            goto done;
        }
        int had = PySet_Contains(seen, df);
        if (had < 0 || (!had && (PySet_Add(seen, df) < 0 || PyList_Append(missing, df) < 0))) {
            goto done;
        }
    }
    if (PyList_GET_SIZE(missing)) {
        result = Py_NewRef(missing);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *term = PyList_GET_ITEM(terms, i), *df = PyList_GET_ITEM(dfs, i);
        if (PyDict_SetItem(table, term, ws[i]) < 0 ||
            (ws[i] != Py_None && PyDict_SetItem(memo, term, df) < 0)) {
            goto done;
        }
    }
    result = Py_NewRef(missing);
done:
    if (ws) {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_XDECREF(ws[i]);
        }
        PyMem_Free(ws);
    }
    Py_XDECREF(seen);
    Py_XDECREF(missing);
    return result;
}
