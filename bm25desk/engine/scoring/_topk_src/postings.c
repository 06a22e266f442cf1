/* PostingList: one term's postings in one segment, as blocks with their frontiers (see topk.h).
 *
 * Two ways to make one:
 *   PostingList(docs, tfs, dl_index, cap=32, shift=7): from int32 arrays (an index of format 1
 *     or 2, tests): every posting is checked (docnos strictly ascending and below n_docs, tf >= 1,
 *     length index >= 0) and encoded here, in named steps: take the buffers, encode the blocks
 *     (the frontiers by length index, which orders documents as their lengths do), list the
 *     overflow postings (tf > cap) and the term's own frontier;
 *   stored(arrays, tid, dl_index, cap, shift): term tid's blocks in a stored segment (format 3),
 *     by reference: its ranges, overflow postings and frontier are looked up here (binary
 *     searches), no block is read; the traversal checks every block it decodes. */
#include "topk.h"

/* n bytes from the arena (a list set up inside a call: freed with the call's scratch), or from
 * malloc (a PostingList object's own, freed with it). */
static void *
list_alloc(Arena *arena, size_t n)
{
    return arena ? arena_alloc(arena, n, 0) : malloc(n);
}

static void
PostingList_dealloc(PostingList *self)
{
    if (self->have_dli) {
        PyBuffer_Release(&self->dli_view);
    }
    if (self->have_stored) {
        PyBuffer_Release(&self->stream_view);
        PyBuffer_Release(&self->off_view);
        PyBuffer_Release(&self->last_view);
    }
    free(self->own_stream);
    free(self->own_off);
    free(self->own_last);
    free(self->tprof_tf);
    free(self->tprof_doc);
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
cursor_setup(Cursor *c, const PostingList *pl, int *broken, int32_t *scratch)
{
    memset(c, 0, sizeof(Cursor));
    c->stream = pl->stream;
    c->slen = pl->slen;
    c->blk_off = pl->blk_off;
    c->n = pl->n;
    c->ndocs = pl->n_docs;
    c->broken = broken;
    c->blk_last = pl->blk_last;
    c->nblk = pl->nblk;
    c->shift = pl->shift;
    c->cap = pl->cap;
    c->stride = pl->cap + 1; /* rows of cap + 1 (plain arrays); a Table's columns: search.c */
    c->tstride = 1;
    c->dli = pl->dli_view.buf;
    c->dli_w = pl->dli_w;
    c->ovf_pos = pl->ovf_pos;
    c->novf = pl->novf;
    c->bd = scratch;
    c->bt = scratch + BLK_MAX;
    c->dblk = c->tblk = -1;
    c->cur = -1;
    c->tmin = NAN;
}

void
cursor_init(Cursor *c, const PostingList *pl, int *broken, int32_t *scratch)
{
    cursor_setup(c, pl, broken, scratch);
    cur_rewind(c);
}

/* The length-index buffer (kept: search() must be given the same one). */
static int
take_dli(PostingList *self, PyObject *dli)
{
    if (get_dli_buffer(dli, &self->dli_view, &self->dli_w) < 0) {
        return -1;
    }
    self->have_dli = 1;
    if (buf_len(&self->dli_view) > INT32_MAX - 1) {
        PyErr_SetString(PyExc_ValueError, "dl_index is too long");
        return -1;
    }
    self->n_docs = (int32_t)buf_len(&self->dli_view);
    return 0;
}

static int
take_layout(PostingList *self, PyObject *cap_obj, PyObject *shift_obj)
{
    Py_ssize_t cap = 32, shift = 7;
    if ((cap_obj && get_count(cap_obj, "cap", 1, MAX_CAP, 0, &cap) < 0) ||
        (shift_obj && get_count(shift_obj, "shift", 2, BLK_MAX_SHIFT, 0, &shift) < 0)) {
        return -1;
    }
    self->cap = (int)cap;
    self->shift = (int)shift;
    return 0;
}

enum scan_error { SCAN_OK, SCAN_ORDER, SCAN_TF, SCAN_LENGTH, SCAN_MEMORY };

/* Check every posting; note the largest length index and the overflow postings. */
static enum scan_error
scan_postings(PostingList *self, const int32_t *docs, const int32_t *tfs)
{
    const void *dl = self->dli_view.buf;
    int w = self->dli_w;
    int32_t prev = -1, max_j = -1;
    Py_ssize_t novf = 0;
    for (Py_ssize_t i = 0; i < self->n; i++) {
        int32_t d = docs[i];
        if (d <= prev || d >= self->n_docs) {
            return SCAN_ORDER;
        }
        prev = d;
        if (tfs[i] < 1) {
            return SCAN_TF;
        }
        int32_t j = dli_at(dl, w, d);
        if (j < 0 || j == INT32_MAX) {
            return SCAN_LENGTH;
        }
        max_j = j > max_j ? j : max_j;
        novf += tfs[i] > self->cap;
    }
    self->max_j = max_j;
    self->novf = novf;
    self->ovf_pos = malloc(sizeof(int32_t) * (novf ? novf : 1));
    if (!self->ovf_pos) {
        return SCAN_MEMORY;
    }
    Py_ssize_t o = 0;
    for (Py_ssize_t i = 0; i < self->n && o < novf; i++) {
        if (tfs[i] > self->cap) {
            self->ovf_pos[o++] = (int32_t)i;
        }
    }
    return SCAN_OK;
}

/* The frontier over a whole list (tf <= cap): per tf the docno of the smallest length index. */
static enum scan_error
term_frontier(PostingList *self, const int32_t *docs, const int32_t *tfs)
{
    const void *dl = self->dli_view.buf;
    int w = self->dli_w;
    int cap = self->cap;
    int32_t minj[MAX_CAP + 1], mind[MAX_CAP + 1];
    for (int t = 0; t <= cap; t++) {
        minj[t] = INT32_MAX;
    }
    for (Py_ssize_t i = 0; i < self->n; i++) {
        int tf = tfs[i];
        int32_t j = dli_at(dl, w, docs[i]);
        if (tf <= cap && j < minj[tf]) {
            minj[tf] = j;
            mind[tf] = docs[i];
        }
    }
    self->tprof_tf = malloc(cap + 1);
    self->tprof_doc = malloc(sizeof(int32_t) * (cap + 1));
    if (!self->tprof_tf || !self->tprof_doc) {
        return SCAN_MEMORY;
    }
    int m = 0;
    int32_t best = INT32_MAX;
    for (int t = cap; t >= 1; t--) {
        if (minj[t] < best) {
            best = minj[t];
            self->tprof_tf[m] = (uint8_t)t;
            self->tprof_doc[m++] = mind[t];
        }
    }
    self->n_tprof = m;
    return SCAN_OK;
}

/* Encode the checked postings into owned blocks (frontiers by length index). */
static enum scan_error
encode_blocks(PostingList *self, const int32_t *docs, const int32_t *tfs)
{
    Py_ssize_t B = (Py_ssize_t)1 << self->shift, n = self->n;
    Py_ssize_t nblk = (n + B - 1) / B;
    BlockScratch *s = malloc(sizeof(BlockScratch));
    size_t room = (size_t)nblk * (BLK_HEADER + (size_t)self->cap * BLK_ENTRY) +
                  (size_t)n * 8 + BLK_PAD;
    self->own_stream = calloc(room, 1);
    self->own_off = malloc(sizeof(int64_t) * (nblk + 1));
    self->own_last = malloc(sizeof(int32_t) * (nblk ? nblk : 1));
    if (!s || !self->own_stream || !self->own_off || !self->own_last) {
        free(s);
        return SCAN_MEMORY;
    }
    const void *dl = self->dli_view.buf;
    int w = self->dli_w;
    int32_t plen[BLK_MAX];
    size_t at = 0;
    int32_t prev = -1;
    for (Py_ssize_t b = 0; b < nblk; b++) {
        Py_ssize_t a = b * B, cnt = a + B < n ? B : n - a;
        int nprof, wd, wt;
        for (Py_ssize_t i = 0; i < cnt; i++) {
            plen[i] = dli_at(dl, w, docs[a + i]); /* rows order documents as lengths do */
        }
        self->own_off[b] = (int64_t)at;
        at += blk_plan(docs + a, tfs + a, cnt, prev, plen, self->cap, s, &nprof, &wd, &wt);
        blk_write(self->own_stream + self->own_off[b], cnt, self->cap, s, nprof, wd, wt);
        prev = docs[a + cnt - 1];
        self->own_last[b] = prev;
    }
    self->own_off[nblk] = (int64_t)at;
    free(s);
    self->nblk = nblk;
    self->stream = self->own_stream;
    self->slen = (Py_ssize_t)(at + BLK_PAD);
    self->blk_off = self->own_off;
    self->blk_last = self->own_last;
    return SCAN_OK;
}

static int
PostingList_init(PostingList *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"docs", "tfs", "dl_index", "cap", "shift", NULL};
    PyObject *docs_obj, *tfs_obj, *dli_obj, *cap_obj = NULL, *shift_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|OO", kwlist, &docs_obj, &tfs_obj, &dli_obj,
                                     &cap_obj, &shift_obj)) {
        return -1;
    }
    if (self->have_dli || self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "PostingList is already initialised");
        return -1;
    }
    if (take_layout(self, cap_obj, shift_obj) < 0) {
        return -1;
    }
    Py_buffer dv, tv;
    if (get_buffer(docs_obj, &dv, 'i', "docs") < 0) {
        return -1;
    }
    if (get_buffer(tfs_obj, &tv, 'i', "tfs") < 0) {
        PyBuffer_Release(&dv);
        return -1;
    }
    int rc = -1;
    if (take_dli(self, dli_obj) < 0) {
        goto done;
    }
    self->n = buf_len(&dv);
    if (buf_len(&tv) != self->n) {
        PyErr_SetString(PyExc_ValueError, "docs and tfs differ in length");
        goto done;
    }
    if (self->n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "posting list is too long");
        goto done;
    }
    const int32_t *docs = dv.buf, *tfs = tv.buf;
    enum scan_error err;
    /* The scan reads the whole posting list: without the GIL, so the GUI thread and other
     * searches go on meanwhile. */
    Py_BEGIN_ALLOW_THREADS
    err = scan_postings(self, docs, tfs);
    if (err == SCAN_OK) {
        err = term_frontier(self, docs, tfs);
    }
    if (err == SCAN_OK) {
        err = encode_blocks(self, docs, tfs);
    }
    Py_END_ALLOW_THREADS
    switch (err) {
    case SCAN_OK:
        self->ready = 1;
        rc = 0;
        break;
    case SCAN_ORDER:
        PyErr_Format(PyExc_ValueError, "postings must be strictly ascending docnos below %d",
                     (int)self->n_docs);
        break;
    case SCAN_TF:
        PyErr_SetString(PyExc_ValueError, "term frequencies must be positive");
        break;
    case SCAN_LENGTH:
        PyErr_SetString(PyExc_ValueError, "negative length index");
        break;
    default:
        PyErr_NoMemory();
    }
done:
    PyBuffer_Release(&dv);
    PyBuffer_Release(&tv);
    return rc;
}

/* Lower bound of v in the ascending int64 array a[0..n). */
static Py_ssize_t
lower_i64(const int64_t *a, Py_ssize_t n, int64_t v)
{
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo;
}

/* The term's overflow positions (a range of the segment's ascending ovf, made relative). */
static int
stored_overflow(PostingList *pl, const int64_t *ovf, Py_ssize_t novf_all, int64_t a, int64_t z,
                Arena *arena)
{
    Py_ssize_t i = lower_i64(ovf, novf_all, a);
    pl->ovf_lo = i;
    if (i == novf_all || ovf[i] >= z) { /* none (most lists): one search, no array */
        pl->novf = 0;
        pl->ovf_pos = NULL;
        return 0;
    }
    pl->novf = lower_i64(ovf, novf_all, z) - i;
    pl->ovf_pos = list_alloc(arena, sizeof(int32_t) * (size_t)pl->novf);
    if (!pl->ovf_pos) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t e = 0; e < pl->novf; e++) {
        int64_t p = ovf[i + e] - a;
        if (p < 0 || p >= pl->n || (e && p <= pl->ovf_pos[e - 1])) {
            PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
            return -1;
        }
        pl->ovf_pos[e] = (int32_t)p;
    }
    return 0;
}

int
stored_frontier_at(Py_ssize_t tid, const Py_buffer *terms, const Py_buffer *off,
                   const Py_buffer *data, int64_t *a, int64_t *z)
{
    const int32_t *tt = terms->buf;
    Py_ssize_t nt = buf_len(terms), lo = 0, hi = nt;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (tt[mid] < tid) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    const int64_t *fo = off->buf;
    if (lo >= nt || tt[lo] != tid || buf_len(off) != nt + 1) {
        return -1;
    }
    *a = fo[lo];
    *z = fo[lo + 1];
    return *a < 0 || *z < *a || *z > (int64_t)data->len || (*z - *a) % BLK_ENTRY ? -1 : 0;
}

/* The term's frontier: stored for a list of several blocks; its block's for one (n_tprof -1). */
static int
stored_frontier(PostingList *pl, Py_ssize_t tid, const Py_buffer *terms, const Py_buffer *off,
                const Py_buffer *data, Arena *arena)
{
    pl->n_tprof = -1;
    if (pl->nblk <= 1) {
        return 0;
    }
    int64_t a, z;
    if (stored_frontier_at(tid, terms, off, data, &a, &z) < 0 || (z - a) / BLK_ENTRY > pl->cap) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return -1;
    }
    int64_t m = (z - a) / BLK_ENTRY;
    pl->tprof_tf = list_alloc(arena, (size_t)m + 1);
    pl->tprof_doc = list_alloc(arena, sizeof(int32_t) * (size_t)(m + 1));
    if (!pl->tprof_tf || !pl->tprof_doc) {
        PyErr_NoMemory();
        return -1;
    }
    for (int64_t e = 0; e < m; e++) {
        const uint8_t *p = (const uint8_t *)data->buf + a + e * BLK_ENTRY;
        uint32_t d = blk_load32(p + 1);
        if (p[0] < 1 || p[0] > pl->cap || d >= (uint32_t)pl->n_docs) {
            PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
            return -1;
        }
        pl->tprof_tf[e] = p[0];
        pl->tprof_doc[e] = (int32_t)d;
    }
    pl->n_tprof = (int)m;
    return 0;
}

/* Element i of an offsets buffer of kind 'x' (uint32 or int64). */
static inline int64_t
offset_at(const Py_buffer *v, Py_ssize_t i)
{
    return v->itemsize == 4 ? (int64_t)((const uint32_t *)v->buf)[i] : ((const int64_t *)v->buf)[i];
}

/* The term's block offsets: the segment's own (int64), or widened into own_off (uint32). */
static int
stored_offsets(PostingList *pl, int64_t b0, Arena *arena)
{
    if (pl->off_view.itemsize == 8) {
        pl->blk_off = (const int64_t *)pl->off_view.buf + b0;
        return 0;
    }
    pl->own_off = list_alloc(arena, sizeof(int64_t) * (size_t)(pl->nblk + 1));
    if (!pl->own_off) {
        PyErr_NoMemory();
        return -1;
    }
    const uint32_t *src = (const uint32_t *)pl->off_view.buf + b0;
    for (Py_ssize_t b = 0; b <= pl->nblk; b++) {
        pl->own_off[b] = (int64_t)src[b];
    }
    pl->blk_off = pl->own_off;
    return 0;
}

/* The term's postings: counts and block range from ptr/bptr, checked against the arrays. */
static int
stored_range(PostingList *pl, Py_ssize_t tid, const Py_buffer *ptr, const Py_buffer *bptr,
             Arena *arena)
{
    Py_ssize_t nterms = buf_len(ptr) - 1, total = buf_len(&pl->last_view);
    if (tid < 0 || tid >= nterms || buf_len(bptr) != nterms + 1 ||
        buf_len(&pl->off_view) != total + 1) {
        PyErr_SetString(PyExc_ValueError, "stored: the term or arrays do not fit");
        return -1;
    }
    int64_t a = offset_at(ptr, tid), z = offset_at(ptr, tid + 1);
    int64_t b0 = offset_at(bptr, tid), b1 = offset_at(bptr, tid + 1);
    int64_t B = (int64_t)1 << pl->shift;
    if (a < 0 || z < a || z - a > INT32_MAX || b0 < 0 || b1 > total || b1 - b0 != (z - a + B - 1) / B) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        return -1;
    }
    pl->n = (Py_ssize_t)(z - a);
    pl->nblk = (Py_ssize_t)(b1 - b0);
    if (stored_offsets(pl, b0, arena) < 0) {
        return -1;
    }
    pl->blk_last = (const int32_t *)pl->last_view.buf + b0;
    pl->stream = pl->stream_view.buf;
    pl->slen = pl->stream_view.len;
    pl->max_j = -1;
    pl->post_lo = a;
    return 0;
}

int
stored_has_overflow(const Py_buffer v[9], Py_ssize_t tid)
{
    Py_ssize_t nterms = buf_len(&v[3]) - 1;
    if (tid < 0 || tid >= nterms || v[5].itemsize != 8) {
        return -1;
    }
    int64_t a = offset_at(&v[3], tid), z = offset_at(&v[3], tid + 1);
    if (a < 0 || z < a) {
        return -1;
    }
    const int64_t *ovf = v[5].buf;
    Py_ssize_t n = buf_len(&v[5]), i = lower_i64(ovf, n, a);
    return i < n && ovf[i] < z;
}

/* A list over borrowed views of a stored segment's arrays (see topk.h); nothing is referenced. */
int
stored_list(PostingList *pl, const Py_buffer v[9], Py_ssize_t tid, const Py_buffer *dli, int dli_w,
            int cap, int shift, Arena *arena)
{
    memset(pl, 0, sizeof(PostingList));
    pl->dli_view = *dli;
    pl->dli_w = dli_w;
    pl->n_docs = (int32_t)buf_len(dli);
    pl->cap = cap;
    pl->shift = shift;
    pl->stream_view = v[0];
    pl->off_view = v[1];
    pl->last_view = v[2];
    pl->n_tprof = -1;
    if (stored_range(pl, tid, &v[3], &v[4], arena) < 0 ||
        stored_overflow(pl, v[5].buf, buf_len(&v[5]), pl->post_lo, pl->post_lo + pl->n, arena) <
            0) {
        return -1;
    }
    pl->ready = 1;
    return 0;
}

int
stored_list_frontier(PostingList *pl, const Py_buffer v[9], Py_ssize_t tid, Arena *arena)
{
    return stored_frontier(pl, tid, &v[6], &v[7], &v[8], arena);
}

void
stored_list_free(PostingList *pl)
{
    free(pl->own_off);
    free(pl->tprof_tf);
    free(pl->tprof_doc);
    free(pl->ovf_pos);
    memset(pl, 0, sizeof(PostingList));
}

/* The segment's arrays: (stream, blk_off, blk_last, ptr, bptr, ovf, tfront_term, tfront_off,
 * tfront); the first three are kept by the list, the others read now. */
int
stored_views(PyObject *arrays, Py_buffer v[9])
{
    static const char kinds[9] = {'b', 'x', 'i', 'x', 'x', 'q', 'i', 'q', 'b'};
    static const char *names[9] = {"stream", "blk_off", "blk_last", "ptr", "bptr", "ovf",
                                   "tfront_term", "tfront_off", "tfront"};
    if (!PyTuple_Check(arrays) || PyTuple_GET_SIZE(arrays) != 9) {
        PyErr_SetString(PyExc_TypeError, "stored: arrays must be a tuple of 9 segment arrays");
        return 0;
    }
    int have = 0;
    for (; have < 9; have++) {
        if (get_buffer(PyTuple_GET_ITEM(arrays, have), &v[have], kinds[have], names[have]) < 0) {
            break;
        }
    }
    return have;
}

static int
stored_init(PostingList *pl, PyObject *arrays, Py_ssize_t tid)
{
    Py_buffer v[9];
    int have = stored_views(arrays, v), rc = -1;
    if (have == 9) {
        pl->stream_view = v[0];
        pl->off_view = v[1];
        pl->last_view = v[2];
        pl->have_stored = 1;
        if (stored_range(pl, tid, &v[3], &v[4], NULL) == 0 &&
            stored_overflow(pl, v[5].buf, buf_len(&v[5]), pl->post_lo, pl->post_lo + pl->n,
                            NULL) == 0 &&
            stored_frontier(pl, tid, &v[6], &v[7], &v[8], NULL) == 0) {
            rc = 0;
        }
    }
    for (int i = have == 9 ? 3 : 0; i < have; i++) {
        PyBuffer_Release(&v[i]);
    }
    return rc;
}

PyObject *
topk_stored(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"arrays", "tid", "dl_index", "cap", "shift", NULL};
    PyObject *arrays, *dli, *cap_obj = NULL, *shift_obj = NULL;
    Py_ssize_t tid;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OnO|OO", kwlist, &arrays, &tid, &dli, &cap_obj,
                                     &shift_obj)) {
        return NULL;
    }
    PostingList *pl = (PostingList *)PyType_GenericNew(&PostingListType, NULL, NULL);
    if (!pl) {
        return NULL;
    }
    if (take_layout(pl, cap_obj, shift_obj) < 0 || take_dli(pl, dli) < 0 ||
        stored_init(pl, arrays, tid) < 0) {
        Py_DECREF(pl);
        return NULL;
    }
    pl->ready = 1;
    return (PyObject *)pl;
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
    return Py_BuildValue("{s:n,s:n,s:n,s:i,s:i,s:n}", "postings", self->n, "blocks", self->nblk,
                         "overflow", self->novf, "max_j", (int)self->max_j, "stored",
                         self->have_stored, "overflow_from", self->ovf_lo);
}

/* tfs_of(docnos): the tf of each of the ascending docnos (0 when absent), as bytes of int32. */
static PyObject *
PostingList_tfs_of(PostingList *self, PyObject *arg)
{
    if (!as_posting_list((PyObject *)self)) {
        return NULL;
    }
    Py_buffer dv;
    if (get_buffer(arg, &dv, 'i', "docnos") < 0) {
        return NULL;
    }
    Py_ssize_t m = buf_len(&dv);
    const int32_t *want = dv.buf;
    PyObject *out = PyBytes_FromStringAndSize(NULL, m * 4);
    int32_t *scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH);
    int broken = 0, order = 0;
    if (out && scratch) {
        int32_t *tf = (int32_t *)PyBytes_AS_STRING(out);
        Cursor c;
        cursor_init(&c, self, &broken, scratch);
        for (Py_ssize_t i = 0; i < m; i++) {
            if (i && want[i] < want[i - 1]) {
                order = 1;
                break;
            }
            next_geq(&c, want[i]);
            const int32_t *tfs = c.cur == want[i] ? cur_tfs(&c) : NULL;
            tf[i] = tfs ? tfs[c.pos & (((Py_ssize_t)1 << c.shift) - 1)] : 0;
        }
    }
    free(scratch);
    PyBuffer_Release(&dv);
    if (!out) {
        return NULL;
    }
    if (!scratch || order || broken) {
        Py_DECREF(out);
        if (!scratch) {
            return PyErr_NoMemory();
        }
        PyErr_SetString(PyExc_ValueError, order ? "docnos must ascend" : CHANGED_POSTINGS);
        return NULL;
    }
    return out;
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
PostingList_ovf_lo(PostingList *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->ovf_lo);
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
    {"tfs_of", (PyCFunction)PostingList_tfs_of, METH_O,
     "tfs_of(docnos): the tf of each ascending int32 docno, 0 when absent (bytes of int32)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef PostingList_getset[] = {
    {"n", (getter)PostingList_len, NULL, "number of postings", NULL},
    {"n_overflow", (getter)PostingList_novf, NULL, "postings with tf > cap", NULL},
    {"max_j", (getter)PostingList_maxj, NULL, "largest length index (-1: not known)", NULL},
    {"cap", (getter)PostingList_cap, NULL, "tf cap", NULL},
    {"overflow_from", (getter)PostingList_ovf_lo, NULL,
     "index of its first overflow posting in the segment's overflow arrays (stored lists)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PostingListType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.PostingList",
    .tp_basicsize = sizeof(PostingList),
    .tp_dealloc = (destructor)PostingList_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PostingList(docs, tfs, dl_index, cap=32, shift=7): one term's postings in one "
              "segment (int32 arrays, checked and encoded into blocks; the length index they "
              "are read through is kept referenced) with per-block frontiers. stored() makes one "
              "over a stored segment's blocks.",
    .tp_methods = PostingList_methods,
    .tp_getset = PostingList_getset,
    .tp_init = (initproc)PostingList_init,
    .tp_new = PyType_GenericNew,
};
