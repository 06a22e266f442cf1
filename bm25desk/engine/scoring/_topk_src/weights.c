/* A query's new terms weighed by df (search.Searcher._weigh_many): for a variant whose weighting
 * depends on df alone, each term takes the weighting of its df, kept per df (by_df), so that a
 * new term costs a look-up; this puts them in the search's weight table and df memo in one call
 * instead of a few Python lines per term. weighed() reads them back for every query: its terms'
 * (term, qtf, weighting) in query order, in one call too. */
#include "topk.h"

/* Whether df (an int) is positive: 1 or 0, or -1 with an exception. */
static int
positive(PyObject *df)
{
    if (!PyLong_Check(df)) {
        PyErr_SetString(PyExc_TypeError, "remember: dfs must be ints");
        return -1;
    }
    long long v = PyLong_AsLongLong(df);
    return v == -1 && PyErr_Occurred() ? -1 : v > 0;
}

/* The weighting of df from by_df, else extra (a dict or None): borrowed, or NULL (absent, or an
 * exception set). */
static PyObject *
weighting_of(PyObject *df, PyObject *by_df, PyObject *extra)
{
    PyObject *w = PyDict_GetItemWithError(by_df, df);
    if (!w && !PyErr_Occurred() && extra != Py_None) {
        w = PyDict_GetItemWithError(extra, df);
    }
    return w;
}

PyObject *
topk_remember(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *terms, *dfs, *by_df, *extra, *table, *memo;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!O!", &PyList_Type, &terms, &PyList_Type, &dfs,
                          &PyDict_Type, &by_df, &extra, &PyDict_Type, &table, &PyDict_Type,
                          &memo)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(terms);
    if (PyList_GET_SIZE(dfs) != n || (extra != Py_None && !PyDict_Check(extra))) {
        PyErr_SetString(PyExc_TypeError, "remember: one df per term, extra a dict or None");
        return NULL;
    }
    /* First every df's weighting: the missing ones (distinct, in order) and nothing written. */
    PyObject *missing = PyList_New(0), *seen = NULL;
    if (!missing) {
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *df = PyList_GET_ITEM(dfs, i);
        int pos = positive(df);
        if (pos < 0) {
            goto fail;
        }
        if (!pos || weighting_of(df, by_df, extra)) {
            continue;
        }
        if (PyErr_Occurred() || (!seen && !(seen = PySet_New(NULL)))) {
            goto fail;
        }
        int had = PySet_Contains(seen, df);
        if (had < 0 || (!had && (PySet_Add(seen, df) < 0 || PyList_Append(missing, df) < 0))) {
            goto fail;
        }
    }
    Py_XDECREF(seen);
    if (PyList_GET_SIZE(missing)) {
        return missing;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *term = PyList_GET_ITEM(terms, i), *df = PyList_GET_ITEM(dfs, i);
        PyObject *w = positive(df) ? weighting_of(df, by_df, extra) : Py_None;
        if (!w || PyDict_SetItem(table, term, w) < 0 ||
            (w != Py_None && PyDict_SetItem(memo, term, df) < 0)) {
            if (!PyErr_Occurred()) { /* (by_df changed meanwhile: no weighting after all) */
                PyErr_SetString(PyExc_RuntimeError, "remember: a weighting went missing");
            }
            Py_DECREF(missing);
            return NULL;
        }
    }
    return missing;
fail:
    Py_XDECREF(seen);
    Py_DECREF(missing);
    return NULL;
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
