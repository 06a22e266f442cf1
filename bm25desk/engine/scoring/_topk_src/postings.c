/* PostingList: one term's postings in one segment, with per-block metadata (see topk.h).
 *
 * Built in named steps: take the buffers (docs, tfs and the length index, kept referenced),
 * allocate the metadata, scan the blocks (checking every posting: docnos strictly ascending and
 * below n_docs, tf >= 1, length index >= 0), then list the overflow postings (tf > cap). */
#include "topk.h"

static void
PostingList_dealloc(PostingList *self)
{
    if (self->have_views) {
        PyBuffer_Release(&self->docs_view);
        PyBuffer_Release(&self->tfs_view);
        PyBuffer_Release(&self->dli_view);
    }
    free(self->blk_last);
    free(self->prof_ptr);
    free(self->prof_tf);
    free(self->prof_j);
    free(self->tprof_tf);
    free(self->tprof_j);
    free(self->ovf_pos);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

PostingList *
as_posting_list(PyObject *obj)
{
    if (!PyObject_TypeCheck(obj, &PostingListType)) {
        PyErr_Format(PyExc_TypeError, "expected a PostingList, not %.80s", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PostingList *pl = (PostingList *)obj;
    if (!pl->ready) {
        PyErr_SetString(PyExc_ValueError, "PostingList is not initialised");
        return NULL;
    }
    return pl;
}

void
cursor_init(Cursor *c, const PostingList *pl, int *broken)
{
    memset(c, 0, sizeof(Cursor));
    c->docs = pl->docs;
    c->tfs = pl->tfs;
    c->n = pl->n;
    c->ndocs = pl->n_docs;
    c->broken = broken;
    c->blk_last = pl->blk_last;
    c->nblk = pl->nblk;
    c->shift = pl->shift;
    c->cap = pl->cap;
    c->stride = pl->cap + 1;
    c->prof_ptr = pl->prof_ptr;
    c->prof_j = pl->prof_j;
    c->prof_tf = pl->prof_tf;
    c->ovf_pos = pl->ovf_pos;
    c->novf = pl->novf;
    cur_rewind(c);
}

/* Frontier of (tf, j) pairs from minj[1..cap] (minj[t] = smallest j with tf t, INT32_MAX if
 * none): walk tf downwards, keep an entry when its j is smaller than every larger tf's j. */
static int
frontier(const int32_t *minj, int cap, uint8_t *out_tf, int32_t *out_j)
{
    int m = 0;
    int32_t best = INT32_MAX;
    for (int t = cap; t >= 1; t--) {
        if (minj[t] < best) {
            best = minj[t];
            out_tf[m] = (uint8_t)t;
            out_j[m] = best;
            m++;
        }
    }
    return m;
}

/* Step 1: the three int32 buffers, their lengths checked. */
static int
take_buffers(PostingList *self, PyObject *docs, PyObject *tfs, PyObject *dli)
{
    if (get_buffer(docs, &self->docs_view, 'i', "docs") < 0) {
        return -1;
    }
    if (get_buffer(tfs, &self->tfs_view, 'i', "tfs") < 0) {
        PyBuffer_Release(&self->docs_view);
        return -1;
    }
    if (get_buffer(dli, &self->dli_view, 'i', "dl_index") < 0) {
        PyBuffer_Release(&self->docs_view);
        PyBuffer_Release(&self->tfs_view);
        return -1;
    }
    self->have_views = 1;
    self->docs = (const int32_t *)self->docs_view.buf;
    self->tfs = (const int32_t *)self->tfs_view.buf;
    self->n = buf_len(&self->docs_view);
    if (buf_len(&self->tfs_view) != self->n) {
        PyErr_SetString(PyExc_ValueError, "docs and tfs differ in length");
        return -1;
    }
    if (buf_len(&self->dli_view) > INT32_MAX - 1) {
        PyErr_SetString(PyExc_ValueError, "dl_index is too long");
        return -1;
    }
    if (self->n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "posting list is too long");
        return -1;
    }
    self->n_docs = (int32_t)buf_len(&self->dli_view);
    return 0;
}

/* Step 2: block metadata arrays (a block's frontier has at most min(B, cap) entries). */
static int
alloc_metadata(PostingList *self)
{
    Py_ssize_t n = self->n, B = (Py_ssize_t)1 << self->shift;
    Py_ssize_t nblk = (n + B - 1) / B, cap = self->cap;
    Py_ssize_t maxprof = n < nblk * cap ? n : nblk * cap;
    self->nblk = nblk;
    self->blk_last = malloc(sizeof(int32_t) * (nblk ? nblk : 1));
    self->prof_ptr = malloc(sizeof(int32_t) * (nblk + 1));
    self->prof_tf = malloc(maxprof ? maxprof : 1);
    self->prof_j = malloc(sizeof(int32_t) * (maxprof ? maxprof : 1));
    self->tprof_tf = malloc(cap + 1);
    self->tprof_j = malloc(sizeof(int32_t) * (cap + 1));
    if (!self->blk_last || !self->prof_ptr || !self->prof_tf || !self->prof_j ||
        !self->tprof_tf || !self->tprof_j) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

enum scan_error { SCAN_OK, SCAN_ORDER, SCAN_TF, SCAN_LENGTH, SCAN_MEMORY };

/* Step 3 (without the GIL): check every posting, fill the blocks' last docnos and profiles, the
 * term's own profile, the largest length index and the overflow count. */
static enum scan_error
scan_blocks(PostingList *self, const int32_t *dl, int32_t *minj, int32_t *tminj)
{
    const int32_t *docs = self->docs, *tfs = self->tfs;
    Py_ssize_t n = self->n, B = (Py_ssize_t)1 << self->shift, np_ = 0, novf = 0;
    int cap = self->cap;
    int32_t prev = -1, max_j = -1, ndocs = self->n_docs;
    for (int t = 0; t <= cap; t++) {
        tminj[t] = INT32_MAX;
    }
    for (Py_ssize_t b = 0; b < self->nblk; b++) {
        Py_ssize_t a = b * B, e = a + B < n ? a + B : n;
        for (int t = 0; t <= cap; t++) {
            minj[t] = INT32_MAX;
        }
        for (Py_ssize_t i = a; i < e; i++) {
            int32_t d = docs[i], tf = tfs[i];
            if (d <= prev || d >= ndocs) {
                return SCAN_ORDER;
            }
            prev = d;
            if (tf < 1) {
                return SCAN_TF;
            }
            int32_t j = dl[d];
            if (j < 0 || j == INT32_MAX) {
                return SCAN_LENGTH;
            }
            if (j > max_j) {
                max_j = j;
            }
            if (tf > cap) {
                novf++;
            }
            else if (j < minj[tf]) {
                minj[tf] = j;
            }
        }
        self->blk_last[b] = docs[e - 1];
        self->prof_ptr[b] = (int32_t)np_;
        np_ += frontier(minj, cap, self->prof_tf + np_, self->prof_j + np_);
        for (int t = 1; t <= cap; t++) {
            if (minj[t] < tminj[t]) {
                tminj[t] = minj[t];
            }
        }
    }
    self->prof_ptr[self->nblk] = (int32_t)np_;
    self->n_tprof = frontier(tminj, cap, self->tprof_tf, self->tprof_j);
    self->max_j = max_j;
    self->novf = novf;
    /* Step 4: the positions of the overflow postings, ascending. */
    self->ovf_pos = malloc(sizeof(int32_t) * (novf ? novf : 1));
    if (!self->ovf_pos) {
        return SCAN_MEMORY;
    }
    Py_ssize_t o = 0;
    for (Py_ssize_t i = 0; i < n && o < novf; i++) {
        if (tfs[i] > cap) {
            self->ovf_pos[o++] = (int32_t)i;
        }
    }
    return SCAN_OK;
}

static int
PostingList_init(PostingList *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"docs", "tfs", "dl_index", "cap", "shift", NULL};
    PyObject *docs_obj, *tfs_obj, *dli_obj, *cap_obj = NULL, *shift_obj = NULL;
    Py_ssize_t cap = 32, shift = 7;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OO", kwlist, &docs_obj, &tfs_obj, &dli_obj,
                                     &cap_obj, &shift_obj)) {
        return -1;
    }
    if (self->have_views) {
        PyErr_SetString(PyExc_RuntimeError, "PostingList is already initialised");
        return -1;
    }
    if ((cap_obj && get_count(cap_obj, "cap", 1, MAX_CAP, 0, &cap) < 0) ||
        (shift_obj && get_count(shift_obj, "shift", 2, 16, 0, &shift) < 0)) {
        return -1;
    }
    self->cap = (int)cap;
    self->shift = (int)shift;
    if (take_buffers(self, docs_obj, tfs_obj, dli_obj) < 0 || alloc_metadata(self) < 0) {
        return -1;
    }
    int32_t *minj = malloc(sizeof(int32_t) * (cap + 1));
    int32_t *tminj = malloc(sizeof(int32_t) * (cap + 1));
    if (!minj || !tminj) {
        free(minj);
        free(tminj);
        PyErr_NoMemory();
        return -1;
    }
    const int32_t *dl = (const int32_t *)self->dli_view.buf;
    enum scan_error err;
    /* The scan reads the whole posting list, which at scale means page faults on a memory-mapped
     * file: without the GIL, so the GUI thread and other searches go on meanwhile. */
    Py_BEGIN_ALLOW_THREADS
    err = scan_blocks(self, dl, minj, tminj);
    Py_END_ALLOW_THREADS
    free(minj);
    free(tminj);
    switch (err) {
    case SCAN_OK:
        self->ready = 1;
        return 0;
    case SCAN_ORDER:
        PyErr_Format(PyExc_ValueError, "postings must be strictly ascending docnos below %d",
                     (int)self->n_docs);
        return -1;
    case SCAN_TF:
        PyErr_SetString(PyExc_ValueError, "term frequencies must be positive");
        return -1;
    case SCAN_LENGTH:
        PyErr_SetString(PyExc_ValueError, "negative length index");
        return -1;
    default:
        PyErr_NoMemory();
        return -1;
    }
}

static PyObject *
PostingList_overflow(PostingList *self, PyObject *Py_UNUSED(ignored))
{
    /* Positions of the postings with tf > cap, as bytes of int32 (np.frombuffer(..., int32)). */
    if (!as_posting_list((PyObject *)self)) {
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)self->ovf_pos,
                                     (Py_ssize_t)(sizeof(int32_t) * self->novf));
}

static PyObject *
PostingList_info(PostingList *self, PyObject *Py_UNUSED(ignored))
{
    if (!as_posting_list((PyObject *)self)) {
        return NULL;
    }
    return Py_BuildValue("{s:n,s:n,s:i,s:n,s:i}", "postings", self->n, "blocks", self->nblk,
                         "profile_entries", (int)self->prof_ptr[self->nblk], "overflow",
                         self->novf, "max_j", (int)self->max_j);
}

static PyObject *
PostingList_len(PostingList *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->n);
}

static PyObject *
PostingList_novf(PostingList *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->novf);
}

static PyObject *
PostingList_maxj(PostingList *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(self->max_j);
}

static PyObject *
PostingList_cap(PostingList *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(self->cap);
}

static PyMethodDef PostingList_methods[] = {
    {"overflow_positions", (PyCFunction)PostingList_overflow, METH_NOARGS,
     "Return the positions of postings with tf > cap (bytes of int32)."},
    {"info", (PyCFunction)PostingList_info, METH_NOARGS, "Return sizes (a dict)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef PostingList_getset[] = {
    {"n", (getter)PostingList_len, NULL, "number of postings", NULL},
    {"n_overflow", (getter)PostingList_novf, NULL, "postings with tf > cap", NULL},
    {"max_j", (getter)PostingList_maxj, NULL, "largest length index", NULL},
    {"cap", (getter)PostingList_cap, NULL, "tf cap", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PostingListType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.PostingList",
    .tp_basicsize = sizeof(PostingList),
    .tp_dealloc = (destructor)PostingList_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PostingList(docs, tfs, dl_index, cap=32, shift=7): one term's postings in one "
              "segment (int32 buffers, kept referenced, with the length index they are read "
              "through) with per-block metadata.",
    .tp_methods = PostingList_methods,
    .tp_getset = PostingList_getset,
    .tp_init = (initproc)PostingList_init,
    .tp_new = PyType_GenericNew,
};
