/*
 * Buffers taken from Python objects, shared by the _blocks module's sources (module.c: the
 * codec; terms.c: the lexicon's look-ups and the read-ahead of a term's blocks).
 */
#ifndef BM25DESK_BLOCKS_VIEW_H
#define BM25DESK_BLOCKS_VIEW_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer v;
    int have;
} View;

/* Take obj's C-contiguous buffer of items of itemsize bytes (TypeError naming what if not). */
int view_take(PyObject *obj, View *view, Py_ssize_t itemsize, const char *what);

/* Release the views taken. */
void view_drop(View *views, int n);

/* terms.c */
PyObject *blocks_find(PyObject *module, PyObject *args);
PyObject *blocks_find_many(PyObject *module, PyObject *args);
PyObject *blocks_strictly_sorted(PyObject *module, PyObject *args);
PyObject *blocks_prefetch(PyObject *module, PyObject *args);
PyObject *blocks_prefetch_many(PyObject *module, PyObject *args);
PyObject *blocks_resident(PyObject *module, PyObject *data);
PyObject *blocks_map_in(PyObject *module, PyObject *args);
PyObject *blocks_hash_find(PyObject *module, PyObject *args);
PyObject *blocks_hash_dfs(PyObject *module, PyObject *args);
PyObject *blocks_terms_hash(PyObject *module, PyObject *args);
PyObject *blocks_term_hash(PyObject *module, PyObject *args);

#endif
