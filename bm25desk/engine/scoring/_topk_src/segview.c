/* Segment: what exhaustive_query() (exquery.c) and parts() (parts.c) need of a segment, taken once
 * per open index (postings_cache.py): its length index, deletions, first docno and block layout,
 * and the views of its stored arrays (kept: a Parts made by parts() borrows them, and holds the
 * Segment). */
#include "exhaustive.h"

static void
segview_release(SegView *self)
{
    for (int i = 0; i < self->nviews; i++) {
        PyBuffer_Release(&self->v[i]);
    }
    self->nviews = 0;
    if (self->have_dli) {
        PyBuffer_Release(&self->dli);
        self->have_dli = 0;
    }
    if (self->have_deny) {
        PyBuffer_Release(&self->deny);
        self->have_deny = 0;
    }
}

static void
segview_dealloc(SegView *self)
{
    segview_release(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
segview_init(SegView *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"dl_index", "deny", "base", "arrays", "cap", "shift", NULL};
    PyObject *dli, *deny = Py_None, *base = NULL, *arrays = Py_None, *cap_o = NULL,
                   *shift_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOOO", kwlist, &dli, &deny, &base, &arrays,
                                     &cap_o, &shift_o)) {
        return -1;
    }
    if (self->ready || self->have_dli) {
        PyErr_SetString(PyExc_RuntimeError, "Segment is already initialised");
        return -1;
    }
    Py_ssize_t cap = 32, shift = 7, b = 0;
    if ((cap_o && get_count(cap_o, "cap", 1, MAX_CAP, 0, &cap) < 0) ||
        (shift_o && get_count(shift_o, "shift", 2, BLK_MAX_SHIFT, 0, &shift) < 0)) {
        return -1;
    }
    if (get_dli_buffer(dli, &self->dli, &self->dli_w) < 0) {
        return -1;
    }
    self->have_dli = 1;
    self->ndocs = buf_len(&self->dli);
    if (self->ndocs > INT32_MAX - 1) { /* what a PostingList's length index is held to */
        PyErr_SetString(PyExc_ValueError, "dl_index is too long");
        goto fail;
    }
    if (get_optional_buffer(deny, &self->deny, &self->have_deny, 'b', "deny") < 0 ||
        (base && get_count(base, "base", 0, PY_SSIZE_T_MAX - self->ndocs, 0, &b) < 0)) {
        goto fail;
    }
    if (self->have_deny && buf_len(&self->deny) < self->ndocs) {
        PyErr_SetString(PyExc_ValueError, "deny must cover every document of dl_index");
        goto fail;
    }
    if (arrays != Py_None) {
        self->nviews = stored_views(arrays, self->v);
        if (self->nviews < 9) {
            goto fail;
        }
    }
    self->base = (int64_t)b;
    self->cap = (int)cap;
    self->shift = (int)shift;
    self->ready = 1;
    return 0;
fail:
    segview_release(self);
    return -1;
}

static PyObject *
segview_ndocs(SegView *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->ndocs);
}

static PyGetSetDef segview_getset[] = {
    {"n_docs", (getter)segview_ndocs, NULL, "documents (the length index's)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject SegViewType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.Segment",
    .tp_basicsize = sizeof(SegView),
    .tp_dealloc = (destructor)segview_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Segment(dl_index, deny=None, base=0, arrays=None, cap=32, shift=7): one segment as "
              "exhaustive_query() reads it (arrays: a stored segment's 9 arrays, as for stored(): "
              "kept, for parts()).",
    .tp_getset = segview_getset,
    .tp_init = (initproc)segview_init,
    .tp_new = PyType_GenericNew,
};

