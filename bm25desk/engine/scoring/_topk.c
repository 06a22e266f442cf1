/*
 * _topk: exact top-k retrieval for bm25desk (document-at-a-time, block-max MaxScore).
 *
 * Dependency-free CPython extension (buffer protocol only; no numpy headers). The Python side is
 * bm25desk/engine/scoring/topk.py, which builds everything this module reads; nothing here knows a
 * ranking formula. Scores are float64 and bit-identical to the numpy path of search.py:
 *
 *     score(d) = ((0.0 + c_1) + c_2) + ...   over the query's terms present in d, in query order,
 *     c_t      = qw_t * T[dl_index[d]][tf]    (qw_t = qtf * idf, T the variant's tf-part table)
 *
 * where T was computed by the variant's own numpy tf_part, and postings with tf > cap take their
 * tf part from a per-term "overflow" array (also computed by numpy).
 *
 * Pruning only ever skips a document whose score provably cannot enter the top k:
 *
 * - Bounds come from a table U >= T that is non-decreasing in tf and non-increasing in the length
 *   index, so a block's "profile" (for each tf in the block, the smallest length index with that
 *   tf, reduced to its Pareto frontier) gives the block's maximum exactly. A negative weight
 *   (bim*, BM25Adpt, relevance feedback) is bounded by 0.
 * - Traversal: if the list with the largest bound is short, its documents are scored first
 *   (term-at-a-time "seeding", probing the other lists) to raise the threshold early; then
 *   document-at-a-time MaxScore over the other lists (those that together cannot reach the
 *   threshold are only probed), with a block-max pre-check that skips whole blocks.
 * - Rounding: bounds are summed in bound order, the score in query order. A comparison clearly
 *   away from the threshold uses a slack that covers float rounding; one within the slack is
 *   settled exactly by summing the same per-term bounds in query order (float addition is
 *   monotone, so that sum bounds the float score bit for bit).
 * - Ties: the heap orders by (score desc, docno asc); a document at the threshold's score enters
 *   only with a lower docno than the heap's worst, so ties keep the lower docnos.
 *
 * For each document in the top k, the per-term tf and tf part it was scored with are returned
 * too (the explanation of a hit without looking anything up again).
 *
 * Compile without floating-point contraction (-ffp-contract=off): an FMA would change the
 * rounding of `acc + qw * t` and break bit-identity with numpy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define LIKELY(x) (x)
#define UNLIKELY(x) (x)
#endif
#if defined(_MSC_VER)
#pragma fp_contract(off)
#endif

#define END_DOC INT32_MAX
#define MAX_CAP 255

/* ------------------------------------------------------------------------------------------ */
/* buffers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* kind: 'i' = int32, 'q' = int64, 'd' = float64, 'b' = 1 byte (bool / uint8 / int8). */
static int
get_buffer(PyObject *obj, Py_buffer *view, char kind, const char *what)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        return -1;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    int ok = 0;
    if (kind == 'i') {
        ok = view->itemsize == 4 && (*f == 'i' || (*f == 'l' && sizeof(long) == 4)) && f[1] == 0;
    }
    else if (kind == 'q') {
        ok = view->itemsize == 8 && (*f == 'q' || (*f == 'l' && sizeof(long) == 8)) && f[1] == 0;
    }
    else if (kind == 'd') {
        ok = view->itemsize == 8 && *f == 'd' && f[1] == 0;
    }
    else if (kind == 'b') {
        ok = view->itemsize == 1 && (*f == '?' || *f == 'B' || *f == 'b') && f[1] == 0;
    }
    if (!ok) {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous %s buffer (got format %s)",
                     what,
                     kind == 'i'   ? "int32"
                     : kind == 'q' ? "int64"
                     : kind == 'd' ? "float64"
                                   : "bool/uint8",
                     view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static Py_ssize_t
buf_len(const Py_buffer *v)
{
    return v->len / v->itemsize;
}

/* ------------------------------------------------------------------------------------------ */
/* PostingList: one term's postings in one segment, with block metadata                       */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Py_buffer docs_view;
    Py_buffer tfs_view;
    int have_views;
    const int32_t *docs;
    const int32_t *tfs;
    Py_ssize_t n;        /* postings */
    int cap;             /* tf values above cap are "overflow" postings */
    int shift;           /* block size = 1 << shift */
    Py_ssize_t nblk;
    int32_t *blk_last;   /* last docno of each block */
    int32_t *prof_ptr;   /* block b's profile entries: prof_ptr[b] .. prof_ptr[b+1] */
    uint8_t *prof_tf;
    int32_t *prof_j;
    int n_tprof;         /* the term's own profile (frontier over all its postings) */
    uint8_t *tprof_tf;
    int32_t *tprof_j;
    Py_ssize_t novf;
    int32_t *ovf_pos;    /* positions (within this list) of postings with tf > cap, ascending */
    int32_t max_j;       /* largest length index seen (tables must have more rows) */
    int32_t n_docs;      /* length of the dl-index array it was built with */
} PostingList;

static void
PostingList_dealloc(PostingList *self)
{
    if (self->have_views) {
        PyBuffer_Release(&self->docs_view);
        PyBuffer_Release(&self->tfs_view);
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

static int
PostingList_init(PostingList *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"docs", "tfs", "dl_index", "cap", "shift", NULL};
    PyObject *docs_obj, *tfs_obj, *dli_obj;
    int cap = 32, shift = 7;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO|ii", kwlist, &docs_obj, &tfs_obj, &dli_obj,
                                     &cap, &shift)) {
        return -1;
    }
    if (self->have_views) {
        PyErr_SetString(PyExc_RuntimeError, "PostingList is already initialised");
        return -1;
    }
    if (cap < 1 || cap > MAX_CAP || shift < 2 || shift > 16) {
        PyErr_SetString(PyExc_ValueError, "cap must be in 1..255 and shift in 2..16");
        return -1;
    }
    Py_buffer dli;
    if (get_buffer(docs_obj, &self->docs_view, 'i', "docs") < 0) {
        return -1;
    }
    if (get_buffer(tfs_obj, &self->tfs_view, 'i', "tfs") < 0) {
        PyBuffer_Release(&self->docs_view);
        return -1;
    }
    if (get_buffer(dli_obj, &dli, 'i', "dl_index") < 0) {
        PyBuffer_Release(&self->docs_view);
        PyBuffer_Release(&self->tfs_view);
        return -1;
    }
    self->have_views = 1;
    self->docs = (const int32_t *)self->docs_view.buf;
    self->tfs = (const int32_t *)self->tfs_view.buf;
    self->n = buf_len(&self->docs_view);
    self->cap = cap;
    self->shift = shift;
    const int32_t *dl = (const int32_t *)dli.buf;
    Py_ssize_t ndocs = buf_len(&dli);
    int ret = -1;
    int32_t *minj = NULL, *tminj = NULL;
    if (buf_len(&self->tfs_view) != self->n) {
        PyErr_SetString(PyExc_ValueError, "docs and tfs differ in length");
        goto done;
    }
    if (ndocs > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "dl_index is too long");
        goto done;
    }
    if (self->n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "posting list is too long");
        goto done;
    }
    self->n_docs = (int32_t)ndocs;
    Py_ssize_t n = self->n;
    Py_ssize_t B = (Py_ssize_t)1 << shift;
    Py_ssize_t nblk = (n + B - 1) / B;
    self->nblk = nblk;
    self->blk_last = malloc(sizeof(int32_t) * (nblk ? nblk : 1));
    self->prof_ptr = malloc(sizeof(int32_t) * (nblk + 1));
    /* A block's frontier has at most min(B, cap) entries. */
    Py_ssize_t maxprof = n < nblk * (Py_ssize_t)cap ? n : nblk * (Py_ssize_t)cap;
    self->prof_tf = malloc(maxprof ? maxprof : 1);
    self->prof_j = malloc(sizeof(int32_t) * (maxprof ? maxprof : 1));
    self->tprof_tf = malloc(cap + 1);
    self->tprof_j = malloc(sizeof(int32_t) * (cap + 1));
    minj = malloc(sizeof(int32_t) * (cap + 1));
    tminj = malloc(sizeof(int32_t) * (cap + 1));
    if (!self->blk_last || !self->prof_ptr || !self->prof_tf || !self->prof_j ||
        !self->tprof_tf || !self->tprof_j || !minj || !tminj) {
        PyErr_NoMemory();
        goto done;
    }
    const int32_t *docs = self->docs, *tfs = self->tfs;
    int32_t prev = -1, max_j = -1;
    Py_ssize_t novf = 0, np_ = 0;
    for (int t = 0; t <= cap; t++) {
        tminj[t] = INT32_MAX;
    }
    /* The scan reads the whole posting list, which at scale means page faults on a memory-mapped
     * file: without the GIL, so the GUI thread and other searches go on meanwhile. */
    int err = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t b = 0; b < nblk; b++) {
        Py_ssize_t a = b * B, e = a + B < n ? a + B : n;
        for (int t = 0; t <= cap; t++) {
            minj[t] = INT32_MAX;
        }
        for (Py_ssize_t i = a; i < e; i++) {
            int32_t d = docs[i], tf = tfs[i];
            if (d <= prev || d >= ndocs) {
                err = 1;
                goto scanned;
            }
            prev = d;
            if (tf < 1) {
                err = 2;
                goto scanned;
            }
            int32_t j = dl[d];
            if (j < 0) {
                err = 3;
                goto scanned;
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
    self->prof_ptr[nblk] = (int32_t)np_;
    self->n_tprof = frontier(tminj, cap, self->tprof_tf, self->tprof_j);
    self->max_j = max_j;
    self->novf = novf;
    self->ovf_pos = malloc(sizeof(int32_t) * (novf ? novf : 1));
    if (!self->ovf_pos) {
        err = 4;
        goto scanned;
    }
    Py_ssize_t o = 0;
    for (Py_ssize_t i = 0; i < n && o < novf; i++) {
        if (tfs[i] > cap) {
            self->ovf_pos[o++] = (int32_t)i;
        }
    }
scanned:;
    Py_END_ALLOW_THREADS
    if (err == 1) {
        PyErr_Format(PyExc_ValueError, "postings must be strictly ascending docnos below %zd",
                     ndocs);
    }
    else if (err == 2) {
        PyErr_SetString(PyExc_ValueError, "term frequencies must be positive");
    }
    else if (err == 3) {
        PyErr_SetString(PyExc_ValueError, "negative length index");
    }
    else if (err == 4) {
        PyErr_NoMemory();
    }
    if (err) {
        goto done;
    }
    ret = 0;
done:
    free(minj);
    free(tminj);
    PyBuffer_Release(&dli);
    return ret;
}

static PyObject *
PostingList_overflow(PostingList *self, PyObject *Py_UNUSED(ignored))
{
    /* Positions of the postings with tf > cap, as bytes of int32 (np.frombuffer(..., int32)). */
    return PyBytes_FromStringAndSize((const char *)self->ovf_pos,
                                     (Py_ssize_t)(sizeof(int32_t) * self->novf));
}

static PyObject *
PostingList_profile_info(PostingList *self, PyObject *Py_UNUSED(ignored))
{
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
    {"info", (PyCFunction)PostingList_profile_info, METH_NOARGS, "Return sizes (a dict)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef PostingList_getset[] = {
    {"n", (getter)PostingList_len, NULL, "number of postings", NULL},
    {"n_overflow", (getter)PostingList_novf, NULL, "postings with tf > cap", NULL},
    {"max_j", (getter)PostingList_maxj, NULL, "largest length index", NULL},
    {"cap", (getter)PostingList_cap, NULL, "tf cap", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PostingListType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.PostingList",
    .tp_basicsize = sizeof(PostingList),
    .tp_dealloc = (destructor)PostingList_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PostingList(docs, tfs, dl_index, cap=32, shift=7): one term's postings in one "
              "segment (int32 buffers, kept referenced) with per-block metadata.",
    .tp_methods = PostingList_methods,
    .tp_getset = PostingList_getset,
    .tp_init = (initproc)PostingList_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------------------------------ */
/* heap of the current top k: root = worst (lowest score; among equal scores, highest docno).  */
/* Each entry owns a row slot: the per-term tf and tf part of its document (for explanations). */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    double *s;
    int64_t *d;
    Py_ssize_t *slot;
    Py_ssize_t size, cap;
} Heap;

static inline int
worse(double s1, int64_t d1, double s2, int64_t d2)
{
    return s1 < s2 || (s1 == s2 && d1 > d2);
}

static void
heap_sift_down(Heap *h, Py_ssize_t i)
{
    double s = h->s[i];
    int64_t d = h->d[i];
    Py_ssize_t sl = h->slot[i];
    for (;;) {
        Py_ssize_t l = 2 * i + 1;
        if (l >= h->size) {
            break;
        }
        Py_ssize_t r = l + 1, m = l;
        if (r < h->size && worse(h->s[r], h->d[r], h->s[l], h->d[l])) {
            m = r;
        }
        if (!worse(h->s[m], h->d[m], s, d)) {
            break;
        }
        h->s[i] = h->s[m];
        h->d[i] = h->d[m];
        h->slot[i] = h->slot[m];
        i = m;
    }
    h->s[i] = s;
    h->d[i] = d;
    h->slot[i] = sl;
}

/* Insert (s, d) if it belongs to the top k; return the row slot it now owns, or -1. */
static inline Py_ssize_t
heap_push(Heap *h, double s, int64_t d)
{
    if (h->size < h->cap) {
        Py_ssize_t sl = h->size;
        Py_ssize_t i = h->size++;
        while (i > 0) {
            Py_ssize_t p = (i - 1) / 2;
            if (!worse(s, d, h->s[p], h->d[p])) {
                break;
            }
            h->s[i] = h->s[p];
            h->d[i] = h->d[p];
            h->slot[i] = h->slot[p];
            i = p;
        }
        h->s[i] = s;
        h->d[i] = d;
        h->slot[i] = sl;
        return sl;
    }
    if (!worse(h->s[0], h->d[0], s, d)) {
        return -1;
    }
    Py_ssize_t sl = h->slot[0];
    h->s[0] = s;
    h->d[0] = d;
    heap_sift_down(h, 0);
    return sl;
}

/* ------------------------------------------------------------------------------------------ */
/* cursors                                                                                     */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    const int32_t *docs, *tfs;
    Py_ssize_t n, pos;
    int32_t cur;                     /* docs[pos], or END_DOC */
    const int32_t *blk_last;
    Py_ssize_t nblk, blk;            /* blk: block pointer for bound look-ups (monotone) */
    int shift, cap, stride;
    const int32_t *prof_ptr, *prof_j;
    const uint8_t *prof_tf;
    double *bub;                     /* lazily computed block maxima of U (NaN = unknown) */
    const double *T, *U;
    const int32_t *ovf_pos;
    const double *ovf_val;
    Py_ssize_t novf, oi;
    double qw, qwp;                  /* qwp = max(qw, 0): bounds of a negative weight are 0 */
    double ub;                       /* the term's upper bound (qwp * max U) */
    double bb;                       /* the block bound used for the current candidate */
    int qi;                          /* position in query order */
    int32_t tf_last;                 /* tf and tf part of the last contribution computed */
    double tp_last;
} Cursor;

static inline void
cur_set(Cursor *c, Py_ssize_t p)
{
    c->pos = p;
    c->cur = p < c->n ? c->docs[p] : END_DOC;
}

static inline void
advance(Cursor *c)
{
    cur_set(c, c->pos + 1);
}

/* Move to the first posting with docno >= d (block skips, then a search inside the block). */
static inline void
next_geq(Cursor *c, int32_t d)
{
    if (c->cur >= d) {
        return;
    }
    Py_ssize_t b = c->pos >> c->shift;
    if (c->blk > b) {
        b = c->blk;
    }
    const int32_t *bl = c->blk_last;
    while (b < c->nblk && bl[b] < d) {
        b++;
    }
    if (b >= c->nblk) {
        cur_set(c, c->n);
        return;
    }
    Py_ssize_t lo = b << c->shift;
    if (lo < c->pos) {
        lo = c->pos;
    }
    /* docs[hi] >= d (the block's last docno): find the first index in [lo, hi] with docs >= d */
    Py_ssize_t hi = ((b + 1) << c->shift) - 1;
    if (hi >= c->n) {
        hi = c->n - 1;
    }
    const int32_t *docs = c->docs;
    while (hi - lo > 8) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (docs[mid] < d) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    while (docs[lo] < d) {
        lo++;
    }
    c->pos = lo;
    c->cur = docs[lo];
}

/* Block maximum of U over block b (unscaled), computed on first use from the block's profile. */
static inline double
blk_max(Cursor *c, Py_ssize_t b)
{
    double v = c->bub[b];
    if (LIKELY(v == v)) {
        return v;
    }
    double m = 0.0;
    const double *U = c->U;
    for (int32_t i = c->prof_ptr[b], e = c->prof_ptr[b + 1]; i < e; i++) {
        double t = U[(Py_ssize_t)c->prof_j[i] * c->stride + c->prof_tf[i]];
        if (t > m) {
            m = t;
        }
    }
    c->bub[b] = m;
    return m;
}

/* Bound of this term's contribution to document d: the maximum of the block that would hold d
 * (0 when the list has no posting >= d). Moves the block pointer to that block. */
static inline double
block_bound(Cursor *c, int32_t d)
{
    if (c->qwp == 0.0) {
        return 0.0;
    }
    Py_ssize_t b = c->blk;
    Py_ssize_t pb = c->pos >> c->shift;
    if (pb > b) {
        b = pb;
    }
    const int32_t *bl = c->blk_last;
    while (b < c->nblk && bl[b] < d) {
        b++;
    }
    c->blk = b;
    if (b >= c->nblk) {
        return 0.0;
    }
    return c->qwp * blk_max(c, b);
}

/* The contribution qw * tf_part of the posting under the cursor (as numpy computes it). */
static inline double
contrib(Cursor *c, const int32_t *dlidx)
{
    int32_t tf = c->tfs[c->pos];
    double tp;
    if (LIKELY(tf <= c->cap)) {
        tp = c->T[(Py_ssize_t)dlidx[c->cur] * c->stride + tf];
    }
    else {
        while (c->ovf_pos[c->oi] < c->pos) {
            c->oi++;
        }
        tp = c->ovf_val[c->oi];
    }
    c->tf_last = tf;
    c->tp_last = tp;
    return c->qw * tp;
}

/* ------------------------------------------------------------------------------------------ */
/* the query                                                                                   */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    Cursor *cs;
    int n;                        /* terms (cursors), in query order */
    const int32_t *dlidx;
    const uint8_t *allow, *deny;
    double slack;
    int64_t base;
    Heap *h;
    Cursor *excl;                 /* a list whose documents were all handled (seeded), or NULL */
    /* per term of the document being scored (indexed by query position) */
    double *vals;
    int32_t *tfv;
    double *tpv;
    int *present;
    /* per term, the bound behind the current pruning decision (NaN: known absent); summed in
     * query order it bounds the score exactly (see prune) */
    double *qb;
    double *tb;
    /* rows: per heap slot, per column (query term), tf and tf part */
    const int *cols;
    int ncols;
    int32_t *rows_tf;
    double *rows_tp;
    /* statistics */
    int64_t n_cand, n_scored, n_skips, n_seeded;
} Query;

static inline int
excluded(const Query *q, int32_t d)
{
    return (q->allow && !q->allow[d]) || (q->deny && q->deny[d]);
}

/* Exact bound: the per-term bounds q->qb summed in query order from 0.0, like the score. Float
 * addition is monotone in both operands, so a document whose contributions are each at most its
 * term's bound (absent terms: 0.0 at most) scores at most this, bit for bit. */
static inline double
exact_bound(const Query *q, const double *b)
{
    double eb = 0.0;
    for (int i = 0; i < q->n; i++) {
        if (b[i] == b[i]) {
            eb += b[i];
        }
    }
    return eb;
}

/* Whether document `doc`, bounded by `bound` (the same bounds as q->qb, summed in another order),
 * cannot enter the top k. Clear cases use the rounding slack; a bound within the slack of the
 * threshold is settled exactly, ties included: at an equal score the lower docno stays. */
static inline int
prune(const Query *q, double bound, int32_t doc)
{
    const Heap *h = q->h;
    if (h->size < h->cap) {
        return 0;
    }
    double theta = h->s[0];
    if (bound + q->slack <= theta) {
        return 1;
    }
    if (bound - q->slack > theta) {
        return 0;
    }
    double eb = exact_bound(q, q->qb);
    return eb < theta || (eb == theta && q->base + doc > h->d[0]);
}

/* Extend the non-essential prefix ord[0..ne): lists that together cannot lift any later
 * document (docno > cur) into the top k. */
static int
extend_ne(Query *q, const int *ord, int n, const double *prefix, int ne, int32_t cur)
{
    const Heap *h = q->h;
    if (h->size < h->cap) {
        return ne;
    }
    double theta = h->s[0];
    while (ne < n) {
        if (prefix[ne] + q->slack <= theta) {
            ne++;
            continue;
        }
        if (prefix[ne] - q->slack > theta) {
            break;
        }
        for (int i = 0; i < q->n; i++) {
            q->tb[i] = NAN;
        }
        for (int i = 0; i <= ne; i++) {
            q->tb[ord[i]] = q->cs[ord[i]].ub;
        }
        double eb = exact_bound(q, q->tb);
        /* At an equal score a later document loses to the root, and while theta stays the same
         * the root's docno can only decrease. */
        if (eb < theta || (eb == theta && h->d[0] <= q->base + cur)) {
            ne++;
        }
        else {
            break;
        }
    }
    return ne;
}

static inline void
record(Query *q, Cursor *c, double v)
{
    q->vals[c->qi] = v;
    q->tfv[c->qi] = c->tf_last;
    q->tpv[c->qi] = c->tp_last;
}

/* Score the document from the m recorded terms (summed in query order, from 0.0 like numpy's
 * `scores[d] += c`), offer it to the heap, and fill its row. Return 1 when the heap changed. */
static int
finish(Query *q, int m, int64_t docno)
{
    int *present = q->present;
    for (int a = 1; a < m; a++) {
        int x = present[a], b2 = a - 1;
        while (b2 >= 0 && present[b2] > x) {
            present[b2 + 1] = present[b2];
            b2--;
        }
        present[b2 + 1] = x;
    }
    double s = 0.0;
    for (int a = 0; a < m; a++) {
        s += q->vals[present[a]];
    }
    q->n_scored++;
    Py_ssize_t sl = heap_push(q->h, s, docno);
    if (sl < 0) {
        return 0;
    }
    int32_t *rt = q->rows_tf + sl * q->ncols;
    double *rp = q->rows_tp + sl * q->ncols;
    memset(rt, 0, sizeof(int32_t) * q->ncols);
    memset(rp, 0, sizeof(double) * q->ncols);
    for (int a = 0; a < m; a++) {
        int qi = present[a];
        rt[q->cols[qi]] = q->tfv[qi];
        rp[q->cols[qi]] = q->tpv[qi];
    }
    return 1;
}

/* Term-at-a-time seeding: score every document of the short list S exactly, probing `others`
 * (copies of the other cursors, by descending upper bound), so that the threshold is high before
 * the document-at-a-time pass over the other lists, which then skips S's documents. */
static void
seed(Query *q, Cursor *S, Cursor *others, int m)
{
    const int32_t *dlidx = q->dlidx;
    double *qb = q->qb;
    double rest = 0.0;
    for (int i = m - 1; i >= 0; i--) {
        rest += others[i].ub;
    }
    for (Py_ssize_t p = 0; p < S->n; p++) {
        cur_set(S, p);
        int32_t d = S->cur;
        if (UNLIKELY(excluded(q, d))) {
            continue;
        }
        q->n_seeded++;
        double vs = contrib(S, dlidx);
        double bound = vs + rest;
        qb[S->qi] = vs;
        for (int i = 0; i < m; i++) {
            qb[others[i].qi] = others[i].ub;
        }
        if (prune(q, bound, d)) {
            continue;
        }
        int full = q->h->size >= q->h->cap;
        if (full) {
            for (int i = 0; i < m; i++) {
                Cursor *o = &others[i];
                double bb = block_bound(o, d);
                o->bb = bb;
                qb[o->qi] = bb;
                bound -= o->ub - bb;
                if (prune(q, bound, d)) {
                    goto next;
                }
            }
        }
        int mm = 0;
        record(q, S, vs);
        q->present[mm++] = S->qi;
        for (int i = 0; i < m; i++) {
            Cursor *o = &others[i];
            next_geq(o, d);
            if (o->cur == d) {
                double v = contrib(o, dlidx);
                record(q, o, v);
                q->present[mm++] = o->qi;
                if (full) {
                    bound += v - o->bb;
                    qb[o->qi] = v;
                }
            }
            else if (full) {
                bound -= o->bb;
                qb[o->qi] = NAN;
            }
            if (full && prune(q, bound, d)) {
                goto next;
            }
        }
        finish(q, mm, q->base + d);
    next:;
    }
    cur_set(S, 0);
    S->blk = 0;
    S->oi = 0;
}

/* Document-at-a-time MaxScore over the cursors ord[0..n) (ascending upper bounds, prefix[] their
 * running sums) with block-max checks, skipping the documents of q->excl. */
static void
run(Query *q, const int *ord, int n, const double *prefix)
{
    Cursor *cs = q->cs;
    Heap *h = q->h;
    const int32_t *dlidx = q->dlidx;
    double *qb = q->qb;
    int ne = extend_ne(q, ord, n, prefix, 0, -1); /* ord[0..ne): the non-essential lists */
    int32_t cur = END_DOC;
    for (int i = ne; i < n; i++) {
        if (cs[ord[i]].cur < cur) {
            cur = cs[ord[i]].cur;
        }
    }
    while (ne < n && cur != END_DOC) {
        int32_t next = END_DOC;
        int full = h->size >= h->cap;
        q->n_cand++;
        if (UNLIKELY(excluded(q, cur))) {
            for (int i = ne; i < n; i++) {
                Cursor *c = &cs[ord[i]];
                if (c->cur == cur) {
                    advance(c);
                }
                if (c->cur < next) {
                    next = c->cur;
                }
            }
            cur = next;
            continue;
        }
        /* Non-essential lists: bounded by their upper bounds, except those whose cursor is
         * already past cur (left there by an earlier probe): they do not hold cur. */
        double noness = 0.0;
        int32_t ne_upto = END_DOC;
        for (int i = 0; i < ne; i++) {
            Cursor *c = &cs[ord[i]];
            if (c->cur > cur) {
                qb[ord[i]] = NAN;
                if (c->cur < ne_upto) {
                    ne_upto = c->cur;
                }
            }
            else {
                qb[ord[i]] = c->ub;
                noness += c->ub;
            }
        }
        if (full) {
            /* Block-max pre-check of the essential lists, before touching lengths or tfs. */
            double bound = noness;
            for (int i = ne; i < n; i++) {
                Cursor *c = &cs[ord[i]];
                if (c->cur == cur) {
                    double bb = block_bound(c, cur);
                    qb[ord[i]] = bb;
                    bound += bb;
                }
                else {
                    qb[ord[i]] = NAN;
                }
            }
            if (prune(q, bound, cur)) {
                /* No document before `target` can enter either: one that is in an essential
                 * list is in a list now at cur (the others are at `upto` or later) and inside
                 * that list's current block (d <= bnd), it is not in the non-essential lists
                 * known to be past cur (before ne_upto), so the same bounds hold, and it comes
                 * after cur (ties lose the same way). */
                int32_t upto = ne_upto, bnd = END_DOC;
                for (int i = ne; i < n; i++) {
                    Cursor *c = &cs[ord[i]];
                    if (c->cur == cur) {
                        /* (a list bounded by 0 bounds every block by 0: no limit) */
                        if (c->qwp != 0.0 && c->blk_last[c->blk] < bnd) {
                            bnd = c->blk_last[c->blk];
                        }
                    }
                    else if (c->cur < upto) {
                        upto = c->cur;
                    }
                }
                int32_t target = bnd < upto ? bnd + 1 : upto;
                if (target <= cur) {
                    target = cur + 1;
                }
                for (int i = ne; i < n; i++) {
                    Cursor *c = &cs[ord[i]];
                    if (c->cur == cur) {
                        next_geq(c, target);
                    }
                    if (c->cur < next) {
                        next = c->cur;
                    }
                }
                q->n_skips++;
                cur = next;
                continue;
            }
        }
        int m = 0;
        double sum = 0.0;
        for (int i = ne; i < n; i++) {
            Cursor *c = &cs[ord[i]];
            if (c->cur == cur) {
                double v = contrib(c, dlidx);
                record(q, c, v);
                qb[ord[i]] = v;
                q->present[m++] = c->qi;
                sum += v;
                advance(c);
            }
            else {
                qb[ord[i]] = NAN;
            }
            if (c->cur < next) {
                next = c->cur;
            }
        }
        if (full) {
            double bound = sum + noness;
            if (prune(q, bound, cur)) {
                goto skip;
            }
            if (ne > 0) {
                /* Replace the non-essential lists' bounds by their block maxima... */
                for (int i = ne - 1; i >= 0; i--) {
                    Cursor *c = &cs[ord[i]];
                    if (c->cur > cur) {
                        continue; /* known absent: not in the bound */
                    }
                    double bb = block_bound(c, cur);
                    c->bb = bb;
                    qb[ord[i]] = bb;
                    bound -= c->ub - bb;
                    if (prune(q, bound, cur)) {
                        goto skip;
                    }
                }
                /* ...then by their actual contributions, largest bound first. */
                for (int i = ne - 1; i >= 0; i--) {
                    Cursor *c = &cs[ord[i]];
                    if (c->cur > cur) {
                        continue;
                    }
                    next_geq(c, cur);
                    if (c->cur == cur) {
                        double v = contrib(c, dlidx);
                        record(q, c, v);
                        qb[ord[i]] = v;
                        q->present[m++] = c->qi;
                        bound += v - c->bb;
                    }
                    else {
                        qb[ord[i]] = NAN;
                        bound -= c->bb;
                    }
                    if (prune(q, bound, cur)) {
                        goto skip;
                    }
                }
            }
        }
        if (q->excl) {
            next_geq(q->excl, cur);
            if (q->excl->cur == cur) {
                goto skip; /* scored (or pruned) by the seeding pass */
            }
        }
        if (finish(q, m, q->base + cur)) {
            ne = extend_ne(q, ord, n, prefix, ne, cur);
        }
    skip:
        cur = next;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* search()                                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct {
    Py_buffer T, U, ov;
    int haveT, haveU, haveO;
} TermViews;

typedef struct {
    double s;
    int64_t d;
    Py_ssize_t slot;
} Entry;

static int
cmp_entry(const void *a, const void *b)
{
    const Entry *x = (const Entry *)a, *y = (const Entry *)b;
    if (x->s > y->s) {
        return -1;
    }
    if (x->s < y->s) {
        return 1;
    }
    return (x->d > y->d) - (x->d < y->d);
}

static PyObject *
topk_search(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"terms", "dl_index", "k",     "ncols", "allow", "deny",
                             "base",  "prev",     "stats", "seed",  NULL};
    PyObject *terms, *dli_obj, *allow_obj = Py_None, *deny_obj = Py_None, *prev_obj = Py_None;
    Py_ssize_t k;
    int ncols;
    long long base = 0;
    int want_stats = 0;
    double seed_ratio = 4.0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOni|OOLOpd", kwlist, &terms, &dli_obj, &k,
                                     &ncols, &allow_obj, &deny_obj, &base, &prev_obj,
                                     &want_stats, &seed_ratio)) {
        return NULL;
    }
    if (k < 1) {
        PyErr_SetString(PyExc_ValueError, "k must be at least 1");
        return NULL;
    }
    if (ncols < 0 || ncols > 1000000) {
        PyErr_SetString(PyExc_ValueError, "ncols is out of range");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(terms, "terms must be a sequence");
    if (!seq) {
        return NULL;
    }
    Py_ssize_t nt = PySequence_Fast_GET_SIZE(seq);
    if (nt > ncols) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "more terms than columns");
        return NULL;
    }
    int n = (int)nt;
    int n1 = n ? n : 1, c1 = ncols ? ncols : 1;
    PyObject *result = NULL;
    Py_buffer dli, allow, deny, pv[4];
    int have_dli = 0, have_allow = 0, have_deny = 0, have_pv[4] = {0, 0, 0, 0};
    TermViews *tv = calloc(n1, sizeof(TermViews));
    Cursor *cs = calloc(n1, sizeof(Cursor));
    Cursor *seedcs = calloc(n1, sizeof(Cursor));
    int *ord = malloc(sizeof(int) * n1);
    int *cols = malloc(sizeof(int) * n1);
    int *present = malloc(sizeof(int) * n1);
    double *prefix = malloc(sizeof(double) * n1);
    double *vals = malloc(sizeof(double) * n1);
    double *tpv = malloc(sizeof(double) * n1);
    int32_t *tfv = malloc(sizeof(int32_t) * n1);
    double *qb = malloc(sizeof(double) * n1);
    double *tb = malloc(sizeof(double) * n1);
    char *seen_col = calloc(c1, 1);
    double *bub = NULL;
    Heap h = {NULL, NULL, NULL, 0, 0};
    int32_t *rows_tf = NULL;
    double *rows_tp = NULL;
    Entry *es = NULL;
    Query q;
    memset(&q, 0, sizeof(q));
    if (!tv || !cs || !seedcs || !ord || !cols || !present || !prefix || !vals || !tpv || !tfv ||
        !seen_col || !qb || !tb) {
        PyErr_NoMemory();
        goto done;
    }
    if (get_buffer(dli_obj, &dli, 'i', "dl_index") < 0) {
        goto done;
    }
    have_dli = 1;
    Py_ssize_t ndocs = buf_len(&dli);
    if (allow_obj != Py_None) {
        if (get_buffer(allow_obj, &allow, 'b', "allow") < 0) {
            goto done;
        }
        have_allow = 1;
        if (buf_len(&allow) < ndocs) {
            PyErr_SetString(PyExc_ValueError, "allow is shorter than dl_index");
            goto done;
        }
    }
    if (deny_obj != Py_None) {
        if (get_buffer(deny_obj, &deny, 'b', "deny") < 0) {
            goto done;
        }
        have_deny = 1;
        if (buf_len(&deny) < ndocs) {
            PyErr_SetString(PyExc_ValueError, "deny is shorter than dl_index");
            goto done;
        }
    }
    /* Cursors. Each term: (PostingList, qw, T, U, overflow values or None, column). */
    Py_ssize_t total_blocks = 0, total_postings = 0;
    double total_abs = 0.0;
    for (int i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *plo, *Tobj, *Uobj, *oobj;
        double qw;
        int col;
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "O!dOOOi", &PostingListType, &plo,
                                                      &qw, &Tobj, &Uobj, &oobj, &col)) {
            if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_TypeError)) {
                PyErr_Clear();
                PyErr_SetString(PyExc_TypeError, "each term is (PostingList, qw, table, "
                                                 "bound table, overflow values, column)");
            }
            goto done;
        }
        PostingList *pl = (PostingList *)plo;
        if (!isfinite(qw)) {
            PyErr_SetString(PyExc_ValueError, "term weight is not finite");
            goto done;
        }
        if (col < 0 || col >= ncols || seen_col[col] || (i > 0 && col <= cols[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "columns must be distinct, ascending, < ncols");
            goto done;
        }
        seen_col[col] = 1;
        cols[i] = col;
        if (pl->n_docs != ndocs) {
            PyErr_SetString(PyExc_ValueError, "PostingList was built for another dl_index");
            goto done;
        }
        if (get_buffer(Tobj, &tv[i].T, 'd', "table") < 0) {
            goto done;
        }
        tv[i].haveT = 1;
        if (get_buffer(Uobj, &tv[i].U, 'd', "bound table") < 0) {
            goto done;
        }
        tv[i].haveU = 1;
        Py_ssize_t stride = pl->cap + 1;
        Py_ssize_t tl = buf_len(&tv[i].T);
        if (tl % stride != 0 || tl / stride <= pl->max_j || buf_len(&tv[i].U) != tl) {
            PyErr_SetString(PyExc_ValueError, "table does not fit the posting list");
            goto done;
        }
        Cursor *c = &cs[i];
        c->ovf_val = NULL;
        if (pl->novf) {
            if (oobj == Py_None) {
                PyErr_SetString(PyExc_ValueError, "overflow values are missing");
                goto done;
            }
            if (get_buffer(oobj, &tv[i].ov, 'd', "overflow values") < 0) {
                goto done;
            }
            tv[i].haveO = 1;
            if (buf_len(&tv[i].ov) != pl->novf) {
                PyErr_SetString(PyExc_ValueError, "overflow values do not fit the posting list");
                goto done;
            }
            c->ovf_val = (const double *)tv[i].ov.buf;
        }
        c->docs = pl->docs;
        c->tfs = pl->tfs;
        c->n = pl->n;
        c->blk_last = pl->blk_last;
        c->nblk = pl->nblk;
        c->blk = 0;
        c->shift = pl->shift;
        c->cap = pl->cap;
        c->stride = (int)stride;
        c->prof_ptr = pl->prof_ptr;
        c->prof_j = pl->prof_j;
        c->prof_tf = pl->prof_tf;
        c->T = (const double *)tv[i].T.buf;
        c->U = (const double *)tv[i].U.buf;
        c->ovf_pos = pl->ovf_pos;
        c->novf = pl->novf;
        c->oi = 0;
        c->qw = qw;
        c->qwp = qw > 0.0 ? qw : 0.0;
        c->qi = i;
        cur_set(c, 0);
        /* The term's maximum of U (its profile's frontier) and of its exact overflow values. */
        double mx = 0.0;
        for (int e = 0; e < pl->n_tprof; e++) {
            double t = c->U[(Py_ssize_t)pl->tprof_j[e] * stride + pl->tprof_tf[e]];
            if (t > mx) {
                mx = t;
            }
        }
        for (Py_ssize_t e = 0; e < pl->novf; e++) {
            if (c->ovf_val[e] > mx) {
                mx = c->ovf_val[e];
            }
        }
        if (!(mx >= 0.0) || !isfinite(mx)) {
            PyErr_SetString(PyExc_ValueError, "tf parts must be finite and non-negative");
            goto done;
        }
        c->ub = c->qwp * mx;
        total_abs += fabs(qw) * mx;
        total_blocks += pl->nblk;
        total_postings += pl->n;
    }
    /* Block maxima scratch (NaN = not computed yet), with the overflow values folded in. */
    bub = malloc(sizeof(double) * (total_blocks ? total_blocks : 1));
    if (!bub) {
        PyErr_NoMemory();
        goto done;
    }
    {
        Py_ssize_t off = 0;
        for (int i = 0; i < n; i++) {
            Cursor *c = &cs[i];
            c->bub = bub + off;
            for (Py_ssize_t b = 0; b < c->nblk; b++) {
                c->bub[b] = NAN;
            }
            off += c->nblk;
            for (Py_ssize_t e = 0; e < c->novf; e++) {
                Py_ssize_t b = c->ovf_pos[e] >> c->shift;
                double m = blk_max(c, b);
                if (c->ovf_val[e] > m) {
                    c->bub[b] = c->ovf_val[e];
                }
            }
        }
    }
    /* The previous segments' top k: (docnos, scores, tfs, tf parts), rows of ncols. */
    Py_ssize_t np_prev = 0;
    if (prev_obj != Py_None) {
        static const char kinds[4] = {'q', 'd', 'i', 'd'};
        static const char *names[4] = {"prev docnos", "prev scores", "prev tfs", "prev parts"};
        if (!PyTuple_Check(prev_obj) || PyTuple_GET_SIZE(prev_obj) != 4) {
            PyErr_SetString(PyExc_TypeError, "prev must be (docnos, scores, tfs, parts)");
            goto done;
        }
        /* typed arrays, or the bytes this function returned */
        for (int i = 0; i < 4; i++) {
            PyObject *o = PyTuple_GET_ITEM(prev_obj, i);
            if (PyBytes_Check(o)) {
                if (PyObject_GetBuffer(o, &pv[i], PyBUF_SIMPLE) < 0) {
                    goto done;
                }
                pv[i].itemsize = kinds[i] == 'i' ? 4 : 8;
            }
            else if (get_buffer(o, &pv[i], kinds[i], names[i]) < 0) {
                goto done;
            }
            have_pv[i] = 1;
        }
        np_prev = buf_len(&pv[0]);
        if (pv[0].len % 8 || pv[1].len % 8 || pv[2].len % 4 || pv[3].len % 8 ||
            buf_len(&pv[1]) != np_prev || buf_len(&pv[2]) != np_prev * ncols ||
            buf_len(&pv[3]) != np_prev * ncols) {
            PyErr_SetString(PyExc_ValueError, "prev arrays do not agree in size");
            goto done;
        }
    }
    Py_ssize_t hcap = k;
    if (hcap > total_postings + np_prev) {
        hcap = total_postings + np_prev;
    }
    Py_ssize_t h1 = hcap ? hcap : 1;
    h.cap = hcap;
    h.s = malloc(sizeof(double) * h1);
    h.d = malloc(sizeof(int64_t) * h1);
    h.slot = malloc(sizeof(Py_ssize_t) * h1);
    rows_tf = calloc((size_t)h1 * c1, sizeof(int32_t));
    rows_tp = calloc((size_t)h1 * c1, sizeof(double));
    if (!h.s || !h.d || !h.slot || !rows_tf || !rows_tp) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < np_prev && h.cap > 0; i++) {
        Py_ssize_t sl =
            heap_push(&h, ((const double *)pv[1].buf)[i], ((const int64_t *)pv[0].buf)[i]);
        if (sl >= 0) {
            memcpy(rows_tf + sl * ncols, (const int32_t *)pv[2].buf + i * ncols,
                   sizeof(int32_t) * ncols);
            memcpy(rows_tp + sl * ncols, (const double *)pv[3].buf + i * ncols,
                   sizeof(double) * ncols);
        }
    }
    /* Order the cursors by upper bound (ascending); running sums of the bounds. */
    for (int i = 0; i < n; i++) {
        ord[i] = i;
    }
    for (int a = 1; a < n; a++) {
        int x = ord[a], b2 = a - 1;
        while (b2 >= 0 && (cs[ord[b2]].ub > cs[x].ub ||
                           (cs[ord[b2]].ub == cs[x].ub && ord[b2] > x))) {
            ord[b2 + 1] = ord[b2];
            b2--;
        }
        ord[b2 + 1] = x;
    }
    q.cs = cs;
    q.n = n;
    q.dlidx = (const int32_t *)dli.buf;
    q.allow = have_allow ? (const uint8_t *)allow.buf : NULL;
    q.deny = have_deny ? (const uint8_t *)deny.buf : NULL;
    /* Rounding slack. A score and every bound are sums of at most 2n + 2 terms whose magnitudes
     * add up to at most 2 * total_abs, each operation erring by half an ulp of its result:
     * 16 (n + 2) eps * total_abs is several times the worst case. */
    q.slack = 16.0 * (double)(n + 2) * DBL_EPSILON * total_abs + DBL_MIN;
    q.base = (int64_t)base;
    q.h = &h;
    q.vals = vals;
    q.tfv = tfv;
    q.tpv = tpv;
    q.present = present;
    q.qb = qb;
    q.tb = tb;
    for (int i = 0; i < n; i++) {
        qb[i] = NAN;
    }
    q.cols = cols;
    q.ncols = ncols;
    q.rows_tf = rows_tf;
    q.rows_tp = rows_tp;
    if (h.cap > 0 && n > 0) {
        /* Seed with the list of the largest upper bound when it is short. */
        int sd = -1;
        if (seed_ratio > 0.0 && n >= 2) {
            sd = ord[n - 1];
            if (!(cs[sd].ub > 0.0) ||
                (double)cs[sd].n * seed_ratio > (double)(total_postings - cs[sd].n)) {
                sd = -1;
            }
        }
        Py_BEGIN_ALLOW_THREADS
        int na = n;
        if (sd >= 0) {
            for (int i = 0; i < n - 1; i++) {
                seedcs[i] = cs[ord[n - 2 - i]];
            }
            seed(&q, &cs[sd], seedcs, n - 1);
            q.excl = &cs[sd];
            qb[sd] = NAN; /* the main pass never sees its documents */
            na = n - 1;
        }
        double acc = 0.0;
        for (int i = 0; i < na; i++) {
            acc += cs[ord[i]].ub;
            prefix[i] = acc;
        }
        run(&q, ord, na, prefix);
        Py_END_ALLOW_THREADS
    }
    /* Sorted output: score descending, docno ascending; rows in the same order. */
    {
        Py_ssize_t m = h.size;
        es = malloc(sizeof(Entry) * (m ? m : 1));
        if (!es) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < m; i++) {
            es[i].s = h.s[i];
            es[i].d = h.d[i];
            es[i].slot = h.slot[i];
        }
        qsort(es, (size_t)m, sizeof(Entry), cmp_entry);
        PyObject *bd = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * sizeof(int64_t)));
        PyObject *bs = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * sizeof(double)));
        PyObject *bt = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * ncols * sizeof(int32_t)));
        PyObject *bp = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(m * ncols * sizeof(double)));
        if (!bd || !bs || !bt || !bp) {
            Py_XDECREF(bd);
            Py_XDECREF(bs);
            Py_XDECREF(bt);
            Py_XDECREF(bp);
            goto done;
        }
        int64_t *od = (int64_t *)PyBytes_AS_STRING(bd);
        double *os = (double *)PyBytes_AS_STRING(bs);
        int32_t *ot = (int32_t *)PyBytes_AS_STRING(bt);
        double *op = (double *)PyBytes_AS_STRING(bp);
        for (Py_ssize_t i = 0; i < m; i++) {
            od[i] = es[i].d;
            os[i] = es[i].s;
            if (ncols) {
                memcpy(ot + i * ncols, rows_tf + es[i].slot * ncols, sizeof(int32_t) * ncols);
                memcpy(op + i * ncols, rows_tp + es[i].slot * ncols, sizeof(double) * ncols);
            }
        }
        if (want_stats) {
            result = Py_BuildValue("(NNNN{s:L,s:L,s:L,s:L})", bd, bs, bt, bp, "candidates",
                                   (long long)q.n_cand, "scored", (long long)q.n_scored, "skips",
                                   (long long)q.n_skips, "seeded", (long long)q.n_seeded);
        }
        else {
            result = Py_BuildValue("(NNNN)", bd, bs, bt, bp);
        }
    }
done:
    if (tv) {
        for (int i = 0; i < n; i++) {
            if (tv[i].haveT) {
                PyBuffer_Release(&tv[i].T);
            }
            if (tv[i].haveU) {
                PyBuffer_Release(&tv[i].U);
            }
            if (tv[i].haveO) {
                PyBuffer_Release(&tv[i].ov);
            }
        }
    }
    if (have_dli) {
        PyBuffer_Release(&dli);
    }
    if (have_allow) {
        PyBuffer_Release(&allow);
    }
    if (have_deny) {
        PyBuffer_Release(&deny);
    }
    for (int i = 0; i < 4; i++) {
        if (have_pv[i]) {
            PyBuffer_Release(&pv[i]);
        }
    }
    free(tv);
    free(cs);
    free(seedcs);
    free(ord);
    free(cols);
    free(present);
    free(prefix);
    free(vals);
    free(tpv);
    free(tfv);
    free(qb);
    free(tb);
    free(seen_col);
    free(bub);
    free(h.s);
    free(h.d);
    free(h.slot);
    free(rows_tf);
    free(rows_tp);
    free(es);
    Py_DECREF(seq);
    return result;
}

/* ------------------------------------------------------------------------------------------ */
/* count(lists, n_docs, allow, deny): documents in the union of the lists (and allowed)        */
/* ------------------------------------------------------------------------------------------ */

static PyObject *
topk_count(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"lists", "n_docs", "allow", "deny", NULL};
    PyObject *lists, *allow_obj = Py_None, *deny_obj = Py_None;
    Py_ssize_t ndocs;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "On|OO", kwlist, &lists, &ndocs, &allow_obj,
                                     &deny_obj)) {
        return NULL;
    }
    PyObject *seq = PySequence_Fast(lists, "lists must be a sequence");
    if (!seq) {
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Py_buffer allow, deny;
    int have_allow = 0, have_deny = 0;
    uint64_t *bits = NULL;
    Cursor *cs = NULL;
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *it = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyObject_TypeCheck(it, &PostingListType)) {
            PyErr_SetString(PyExc_TypeError, "lists must hold PostingList objects");
            goto done;
        }
        if (((PostingList *)it)->n_docs != ndocs) {
            PyErr_SetString(PyExc_ValueError, "PostingList was built for another n_docs");
            goto done;
        }
    }
    if (allow_obj != Py_None) {
        if (get_buffer(allow_obj, &allow, 'b', "allow") < 0) {
            goto done;
        }
        have_allow = 1;
        if (buf_len(&allow) < ndocs) {
            PyErr_SetString(PyExc_ValueError, "allow is too short");
            goto done;
        }
    }
    if (deny_obj != Py_None) {
        if (get_buffer(deny_obj, &deny, 'b', "deny") < 0) {
            goto done;
        }
        have_deny = 1;
        if (buf_len(&deny) < ndocs) {
            PyErr_SetString(PyExc_ValueError, "deny is too short");
            goto done;
        }
    }
    long long count = 0;
    const uint8_t *al = have_allow ? (const uint8_t *)allow.buf : NULL;
    const uint8_t *de = have_deny ? (const uint8_t *)deny.buf : NULL;
    Py_ssize_t total = 0, largest = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t m = ((PostingList *)PySequence_Fast_GET_ITEM(seq, i))->n;
        total += m;
        if (m > largest) {
            largest = m;
        }
    }
    if (n == 0) {
        count = 0;
    }
    else if ((total - largest) * 12 < total) {
        /* One list dominates: count it, then the other lists' documents that no larger list
         * holds (probing the larger lists with skips): far less work than touching them all. */
        cs = malloc(sizeof(Cursor) * n);
        if (!cs) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PostingList *pl = (PostingList *)PySequence_Fast_GET_ITEM(seq, i);
            Cursor *c = &cs[i];
            memset(c, 0, sizeof(Cursor));
            c->docs = pl->docs;
            c->n = pl->n;
            c->blk_last = pl->blk_last;
            c->nblk = pl->nblk;
            c->shift = pl->shift;
            cur_set(c, 0);
        }
        /* by descending length */
        for (Py_ssize_t a = 1; a < n; a++) {
            Cursor x = cs[a];
            Py_ssize_t b2 = a - 1;
            while (b2 >= 0 && cs[b2].n < x.n) {
                cs[b2 + 1] = cs[b2];
                b2--;
            }
            cs[b2 + 1] = x;
        }
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const int32_t *docs = cs[i].docs;
            for (Py_ssize_t j = 0; j < i; j++) { /* probes of each pass ascend from the start */
                cur_set(&cs[j], 0);
                cs[j].blk = 0;
            }
            for (Py_ssize_t p = 0; p < cs[i].n; p++) {
                int32_t d = docs[p];
                if ((al && !al[d]) || (de && de[d])) {
                    continue;
                }
                int seen = 0;
                for (Py_ssize_t j = 0; j < i && !seen; j++) {
                    next_geq(&cs[j], d);
                    seen = cs[j].cur == d;
                }
                count += !seen;
            }
        }
        Py_END_ALLOW_THREADS
    }
    else {
        Py_ssize_t words = (ndocs + 63) / 64;
        bits = calloc(words ? words : 1, sizeof(uint64_t));
        if (!bits) {
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            PostingList *pl = (PostingList *)PySequence_Fast_GET_ITEM(seq, i);
            const int32_t *docs = pl->docs;
            for (Py_ssize_t p = 0; p < pl->n; p++) {
                int32_t d = docs[p];
                uint64_t bit = (uint64_t)1 << (d & 63);
                uint64_t w = bits[d >> 6];
                if (!(w & bit)) {
                    bits[d >> 6] = w | bit;
                    if ((!al || al[d]) && (!de || !de[d])) {
                        count++;
                    }
                }
            }
        }
        Py_END_ALLOW_THREADS
    }
    result = PyLong_FromLongLong(count);
done:
    if (have_allow) {
        PyBuffer_Release(&allow);
    }
    if (have_deny) {
        PyBuffer_Release(&deny);
    }
    free(bits);
    free(cs);
    Py_DECREF(seq);
    return result;
}

/* ------------------------------------------------------------------------------------------ */

static PyMethodDef topk_methods[] = {
    {"search", (PyCFunction)(void (*)(void))topk_search, METH_VARARGS | METH_KEYWORDS,
     "search(terms, dl_index, k, ncols, allow=None, deny=None, base=0, prev=None, stats=False, "
     "seed=4.0)\n-> (docnos, scores, tfs, parts[, stats]) as bytes (int64, float64, int32 and "
     "float64 rows of ncols)\n\n"
     "terms: sequence, in query order, of (PostingList, qw, table, bound table, overflow values "
     "or None, column). prev: a previous segment's result (docnos, scores, tfs, parts)."},
    {"count", (PyCFunction)(void (*)(void))topk_count, METH_VARARGS | METH_KEYWORDS,
     "count(lists, n_docs, allow=None, deny=None) -> documents in the union of the lists."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef topk_module = {
    PyModuleDef_HEAD_INIT, "_topk",
    "Exact top-k retrieval kernel for bm25desk (see bm25desk/engine/scoring/topk.py).", -1,
    topk_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__topk(void)
{
    if (PyType_Ready(&PostingListType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&topk_module);
    if (!m) {
        return NULL;
    }
    Py_INCREF(&PostingListType);
    if (PyModule_AddObject(m, "PostingList", (PyObject *)&PostingListType) < 0) {
        Py_DECREF(&PostingListType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "MAX_CAP", MAX_CAP) < 0 ||
        PyModule_AddIntConstant(m, "ABI", 2) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
