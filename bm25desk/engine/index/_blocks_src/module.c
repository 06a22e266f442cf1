/*
 * _blocks: encode and decode bm25desk's block-compressed postings (see blocks.h for the format).
 *
 *   encode(ptr, docs, tfs, doclen, cap, shift) -> (stream, blk_last, blk_off, bptr, ovf)
 *   decode(stream, blk_off, blk_last, bptr, ptr, n_docs, cap, shift, doclen=None) -> (docs, tfs)
 *
 * The numpy equivalents (bm25desk/engine/index/blocks.py) produce the same bytes; this module is
 * their fast path. Every argument is checked; damaged input raises ValueError naming the block.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "blocks.h"

#include "view.h"

int
view_take(PyObject *obj, View *view, Py_ssize_t itemsize, const char *what)
{
    if (PyObject_GetBuffer(obj, &view->v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, &view->v, PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous buffer", what);
            return -1;
        }
    }
    view->have = 1;
    if (view->v.itemsize != itemsize || view->v.len % itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes", what, itemsize);
        return -1;
    }
    return 0;
}

void
view_drop(View *views, int n)
{
    for (int i = 0; i < n; i++) {
        if (views[i].have) {
            PyBuffer_Release(&views[i].v);
            views[i].have = 0;
        }
    }
}

static int
check_layout(Py_ssize_t cap, Py_ssize_t shift)
{
    if (cap < 1 || cap > BLK_MAX_CAP || shift < 2 || shift > BLK_MAX_SHIFT) {
        PyErr_Format(PyExc_ValueError, "cap must be in 1..%d and shift in 2..%d", BLK_MAX_CAP,
                     BLK_MAX_SHIFT);
        return -1;
    }
    return 0;
}

/* A growable byte buffer. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} Bytes;

static int
reserve(Bytes *b, size_t more)
{
    if (b->len + more <= b->cap) {
        return 0;
    }
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) {
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

enum { E_OK, E_ORDER, E_TF, E_MEMORY, E_PTR };

typedef struct {
    const int64_t *ptr;
    const int32_t *docs, *tfs, *lens;
    Py_ssize_t m, nnz, nlens;
    int cap, shift;
    Bytes stream, last, off, bptr, ovf;
} Encoder;

static int
push_i64(Bytes *b, int64_t v)
{
    if (reserve(b, 8) < 0) {
        return -1;
    }
    memcpy(b->p + b->len, &v, 8);
    b->len += 8;
    return 0;
}

static int
push_i32(Bytes *b, int32_t v)
{
    if (reserve(b, 4) < 0) {
        return -1;
    }
    memcpy(b->p + b->len, &v, 4);
    b->len += 4;
    return 0;
}

/* Encode every term's list (runs without the GIL). */
static int
run_encode(Encoder *e)
{
    BlockScratch *s = malloc(sizeof(BlockScratch));
    if (!s) {
        return E_MEMORY;
    }
    Py_ssize_t B = (Py_ssize_t)1 << e->shift, nblk = 0;
    int err = E_OK;
    if (push_i64(&e->off, 0) < 0 || push_i64(&e->bptr, 0) < 0) {
        err = E_MEMORY;
    }
    for (Py_ssize_t t = 0; t < e->m && err == E_OK; t++) {
        int64_t a = e->ptr[t], z = e->ptr[t + 1];
        if (a < 0 || z < a || z > e->nnz) {
            err = E_PTR;
            break;
        }
        int32_t prev = -1;
        for (int64_t i = a; i < z; i++) {
            int32_t d = e->docs[i];
            if (d <= prev || d >= e->nlens) {
                err = E_ORDER;
                break;
            }
            prev = d;
            if (e->tfs[i] < 1) {
                err = E_TF;
                break;
            }
            if (e->tfs[i] > e->cap && push_i64(&e->ovf, i) < 0) {
                err = E_MEMORY;
                break;
            }
        }
        prev = -1;
        for (int64_t i = a; i < z && err == E_OK; i += B) {
            Py_ssize_t n = (Py_ssize_t)(z - i < B ? z - i : B);
            int nprof, wd, wt;
            int32_t plen[BLK_MAX];
            for (Py_ssize_t k = 0; k < n; k++) {
                plen[k] = e->lens[e->docs[i + k]];
            }
            size_t size = blk_plan(e->docs + i, e->tfs + i, n, prev, plen, e->cap, s, &nprof,
                                   &wd, &wt);
            if (reserve(&e->stream, size) < 0) {
                err = E_MEMORY;
                break;
            }
            memset(e->stream.p + e->stream.len, 0, size);
            blk_write(e->stream.p + e->stream.len, n, e->cap, s, nprof, wd, wt);
            e->stream.len += size;
            prev = e->docs[i + n - 1];
            if (push_i32(&e->last, prev) < 0 || push_i64(&e->off, (int64_t)e->stream.len) < 0) {
                err = E_MEMORY;
            }
            nblk++;
        }
        if (err == E_OK && push_i64(&e->bptr, nblk) < 0) {
            err = E_MEMORY;
        }
    }
    free(s);
    return err;
}

static PyObject *
as_bytes(Bytes *b)
{
    return PyBytes_FromStringAndSize((const char *)(b->p ? b->p : (uint8_t *)""), (Py_ssize_t)b->len);
}

static PyObject *
blocks_encode(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *ptr_o, *docs_o, *tfs_o, *lens_o;
    Py_ssize_t cap, shift;
    if (!PyArg_ParseTuple(args, "OOOOnn", &ptr_o, &docs_o, &tfs_o, &lens_o, &cap, &shift) ||
        check_layout(cap, shift) < 0) {
        return NULL;
    }
    View v[4];
    memset(v, 0, sizeof(v));
    PyObject *result = NULL;
    Encoder e;
    memset(&e, 0, sizeof(e));
    if (view_take(ptr_o, &v[0], 8, "ptr") < 0 || view_take(docs_o, &v[1], 4, "docs") < 0 ||
        view_take(tfs_o, &v[2], 4, "tfs") < 0 || view_take(lens_o, &v[3], 4, "doclen") < 0) {
        goto done;
    }
    e.ptr = v[0].v.buf;
    e.m = v[0].v.len / 8 - 1;
    e.docs = v[1].v.buf;
    e.tfs = v[2].v.buf;
    e.nnz = v[1].v.len / 4;
    e.lens = v[3].v.buf;
    e.nlens = v[3].v.len / 4;
    e.cap = (int)cap;
    e.shift = (int)shift;
    if (e.m < 0 || v[2].v.len != v[1].v.len || e.ptr[0] != 0 || e.ptr[e.m] != e.nnz) {
        PyErr_SetString(PyExc_ValueError, "encode: ptr, docs and tfs do not agree");
        goto done;
    }
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = run_encode(&e);
    Py_END_ALLOW_THREADS
    switch (err) {
    case E_OK:
        result = Py_BuildValue("(NNNNN)", as_bytes(&e.stream), as_bytes(&e.last), as_bytes(&e.off),
                               as_bytes(&e.bptr), as_bytes(&e.ovf));
        break;
    case E_ORDER:
        PyErr_SetString(PyExc_ValueError,
                        "encode: docnos must ascend strictly within a term and be below n_docs");
        break;
    case E_TF:
        PyErr_SetString(PyExc_ValueError, "encode: term frequencies must be positive");
        break;
    case E_PTR:
        PyErr_SetString(PyExc_ValueError, "encode: ptr must not decrease");
        break;
    default:
        PyErr_NoMemory();
    }
done:
    free(e.stream.p);
    free(e.last.p);
    free(e.off.p);
    free(e.bptr.p);
    free(e.ovf.p);
    view_drop(v, 4);
    return result;
}

static const char *
blk_message(enum blk_error err)
{
    switch (err) {
    case BLK_BAD_SIZE:
        return "its size does not match its header";
    case BLK_BAD_WIDTH:
        return "a bit width or frontier length is out of range";
    case BLK_BAD_DOCS:
        return "its docnos are out of order or out of range";
    case BLK_BAD_TF:
        return "a term frequency is out of range";
    case BLK_BAD_FRONTIER:
        return "its bound metadata is out of range";
    default:
        return "it differs from the block its postings encode to";
    }
}

typedef struct {
    const uint8_t *stream;
    Py_ssize_t slen; /* readable bytes (padding included) */
    const int64_t *off, *bptr, *ptr;
    const int32_t *last, *lens;
    Py_ssize_t nblk, m, nlens;
    int32_t ndocs;
    int cap, shift;
    int32_t *docs, *tfs;
    Py_ssize_t bad_block;
    const char *why;
} Decoder;

#define E_STRUCT 100
#define E_REENCODE 101

static int
run_decode(Decoder *d)
{
    BlockScratch *s = malloc(sizeof(BlockScratch));
    uint32_t scratch[BLK_MAX];
    if (!s) {
        return E_MEMORY;
    }
    Py_ssize_t B = (Py_ssize_t)1 << d->shift, out = 0;
    int err = E_OK;
    for (Py_ssize_t t = 0; t < d->m && err == E_OK; t++) {
        int64_t n = d->ptr[t + 1] - d->ptr[t];
        int64_t b0 = d->bptr[t], b1 = d->bptr[t + 1];
        if (n < 0 || b0 < 0 || b1 > d->nblk || b1 - b0 != (n + B - 1) / B) {
            d->bad_block = b0;
            d->why = "the term's block count does not match its postings";
            err = E_STRUCT;
            break;
        }
        int32_t prev = -1;
        for (int64_t b = b0; b < b1; b++) {
            Py_ssize_t cnt = (Py_ssize_t)((b == b1 - 1) ? n - (b - b0) * B : B);
            int64_t lo = d->off[b], hi = d->off[b + 1];
            BlockView v;
            enum blk_error be = BLK_BAD_SIZE;
            if (lo >= 0 && hi >= lo && hi + BLK_PAD <= d->slen) {
                be = blk_view(d->stream + lo, (size_t)(hi - lo), cnt, d->cap, &v);
            }
            if (be == BLK_OK) {
                be = blk_docs(&v, cnt, prev, d->last[b], d->ndocs, scratch, d->docs + out);
            }
            if (be == BLK_OK) {
                be = blk_tfs(&v, cnt, scratch, d->tfs + out);
            }
            for (int e = 0; be == BLK_OK && e < v.nprof; e++) {
                int tf;
                int32_t doc;
                be = blk_entry(&v, e, d->cap, prev, d->last[b], &tf, &doc);
            }
            if (be != BLK_OK) {
                d->bad_block = b;
                d->why = blk_message(be);
                err = E_STRUCT;
                break;
            }
            if (d->lens) { /* the full check: the block is exactly what its postings encode to */
                int nprof, wd, wt;
                int32_t plen[BLK_MAX];
                for (Py_ssize_t k = 0; k < cnt; k++) {
                    plen[k] = d->lens[d->docs[out + k]];
                }
                size_t size = blk_plan(d->docs + out, d->tfs + out, cnt, prev, plen, d->cap, s,
                                       &nprof, &wd, &wt);
                uint8_t buf[BLK_HEADER + BLK_MAX_CAP * BLK_ENTRY + 2 * 4 * BLK_MAX + BLK_PAD];
                if (size != (size_t)(hi - lo)) {
                    err = E_REENCODE;
                }
                else {
                    memset(buf, 0, size);
                    blk_write(buf, cnt, d->cap, s, nprof, wd, wt);
                    if (memcmp(buf, d->stream + lo, size) != 0) {
                        err = E_REENCODE;
                    }
                }
                if (err != E_OK) {
                    d->bad_block = b;
                    d->why = blk_message(BLK_OK);
                    break;
                }
            }
            prev = d->last[b];
            out += cnt;
        }
    }
    free(s);
    return err;
}

static PyObject *
blocks_decode(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"stream", "blk_off", "blk_last", "bptr", "ptr",   "n_docs",
                             "cap",    "shift",   "doclen",   NULL};
    PyObject *stream_o, *off_o, *last_o, *bptr_o, *ptr_o, *lens_o = Py_None;
    Py_ssize_t ndocs, cap, shift;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOOOnnn|O", kwlist, &stream_o, &off_o, &last_o,
                                     &bptr_o, &ptr_o, &ndocs, &cap, &shift, &lens_o) ||
        check_layout(cap, shift) < 0) {
        return NULL;
    }
    if (ndocs < 0 || ndocs > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "n_docs out of range");
        return NULL;
    }
    View v[6];
    memset(v, 0, sizeof(v));
    PyObject *result = NULL, *docs_b = NULL, *tfs_b = NULL;
    Decoder d;
    memset(&d, 0, sizeof(d));
    if (view_take(stream_o, &v[0], 1, "stream") < 0 || view_take(off_o, &v[1], 8, "blk_off") < 0 ||
        view_take(last_o, &v[2], 4, "blk_last") < 0 || view_take(bptr_o, &v[3], 8, "bptr") < 0 ||
        view_take(ptr_o, &v[4], 8, "ptr") < 0 ||
        (lens_o != Py_None && view_take(lens_o, &v[5], 4, "doclen") < 0)) {
        goto done;
    }
    d.stream = v[0].v.buf;
    d.slen = v[0].v.len;
    d.off = v[1].v.buf;
    d.last = v[2].v.buf;
    d.nblk = v[2].v.len / 4;
    d.bptr = v[3].v.buf;
    d.ptr = v[4].v.buf;
    d.m = v[4].v.len / 8 - 1;
    d.ndocs = (int32_t)ndocs;
    d.cap = (int)cap;
    d.shift = (int)shift;
    if (v[5].have) {
        d.lens = v[5].v.buf;
        d.nlens = v[5].v.len / 4;
        if (d.nlens < ndocs) {
            PyErr_SetString(PyExc_ValueError, "doclen is shorter than n_docs");
            goto done;
        }
    }
    if (d.m < 0 || v[3].v.len != v[4].v.len || v[1].v.len / 8 != d.nblk + 1) {
        PyErr_SetString(PyExc_ValueError, "decode: the block arrays do not agree in size");
        goto done;
    }
    int64_t total = d.ptr[d.m] - d.ptr[0];
    if (total < 0 || total > PY_SSIZE_T_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "decode: ptr is out of order");
        goto done;
    }
    for (Py_ssize_t t = 0; t < d.m; t++) {
        if (d.ptr[t + 1] < d.ptr[t]) {
            PyErr_SetString(PyExc_ValueError, "decode: ptr is out of order");
            goto done;
        }
    }
    docs_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total * 4);
    tfs_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total * 4);
    if (!docs_b || !tfs_b) {
        goto done;
    }
    d.docs = (int32_t *)PyBytes_AS_STRING(docs_b);
    d.tfs = (int32_t *)PyBytes_AS_STRING(tfs_b);
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = run_decode(&d);
    Py_END_ALLOW_THREADS
    if (err == E_MEMORY) {
        PyErr_NoMemory();
    }
    else if (err != E_OK) {
        PyErr_Format(PyExc_ValueError, "block %zd: %s", d.bad_block, d.why);
    }
    else {
        result = PyTuple_Pack(2, docs_b, tfs_b);
    }
done:
    Py_XDECREF(docs_b);
    Py_XDECREF(tfs_b);
    view_drop(v, 6);
    return result;
}


static PyMethodDef blocks_methods[] = {
    {"find", (PyCFunction)blocks_find, METH_VARARGS,
     "find(data, offsets, key, lo=0, hi=-1) -> the index of record key among records [lo, hi) "
     "(hi -1: all) of a sorted blob, or -1 (offsets: uint32 or int64)."},
    {"strictly_sorted", (PyCFunction)blocks_strictly_sorted, METH_VARARGS,
     "strictly_sorted(data, offsets) -> whether the blob's records ascend strictly (bytes)."},
    {"encode", (PyCFunction)blocks_encode, METH_VARARGS,
     "encode(ptr, docs, tfs, doclen, cap, shift) -> (stream, blk_last, blk_off, bptr, ovf) as "
     "bytes (uint8, int32, int64, int64, int64): the blocks of every term of a CSR."},
    {"decode", (PyCFunction)(void (*)(void))blocks_decode, METH_VARARGS | METH_KEYWORDS,
     "decode(stream, blk_off, blk_last, bptr, ptr, n_docs, cap, shift, doclen=None) -> (docs, "
     "tfs) as bytes of int32: the postings of the terms of bptr/ptr, checked (and, given "
     "doclen, re-encoded and compared byte for byte)."},
    {"find_many", (PyCFunction)blocks_find_many, METH_VARARGS,
     "find_many(data, offsets, index, stride, terms) -> the id of each term (str, list) in a "
     "sorted blob, or -1: Lexicon._search's look-up (index: every stride-th record's bytes, "
     "a list) for a query's new terms in one call."},
    {"hash_find", (PyCFunction)blocks_hash_find, METH_VARARGS,
     "hash_find(data, offsets, table, terms) -> the id of a term (str), or of each term of a "
     "list, in a blob through its hash table (termhash.py), or -1; ValueError when the table's "
     "size does not fit the records or a record's offsets are out of order."},
    {"hash_dfs", (PyCFunction)blocks_hash_dfs, METH_VARARGS,
     "hash_dfs(data, offsets, table, ptr, terms, memo, cache) -> (dfs, ids): the document "
     "frequency (ptr[i + 1] - ptr[i], 0: none) of each term of a list, a term new to cache "
     "(term -> id, or -1 when in no document) looked up in memo (the lexicon's: term -> id or "
     "-1) or the hash and kept in both; ids: the new terms' ids with df > 0, in order."},
    {"terms_hash", (PyCFunction)blocks_terms_hash, METH_VARARGS,
     "terms_hash(data, offsets) -> the hash table of a blob's records (bytes of uint32: "
     "termhash.py's layout, the same bytes as its numpy build)."},
    {"term_hash", (PyCFunction)blocks_term_hash, METH_VARARGS,
     "term_hash(key) -> the 64-bit hash of bytes the lexicon's hash uses (FNV-1a, fmix64)."},
    {"prefetch_many", (PyCFunction)blocks_prefetch_many, METH_VARARGS,
     "prefetch_many(blocks, blk_off, bptr, ids, resident=None) -> bytes asked for: "
     "prefetch(blocks, blk_off, bptr, i, i + 1, resident) for each term id i of the list ids."},
    {"prefetch", (PyCFunction)blocks_prefetch, METH_VARARGS,
     "prefetch(blocks, blk_off, bptr, first, end, resident=None) -> bytes asked for: "
     "MADV_WILLNEED over the blocks of terms [first, end) of a mapped blocks.bin (a hint; out "
     "of range: nothing; blk_off and bptr uint32 or int64); nothing for a range of at most 16 "
     "pages that the residency map resident (resident(blocks)'s bytes) shows in memory."},
    {"map_in", (PyCFunction)blocks_map_in, METH_VARARGS,
     "map_in(map, limit) -> bytes mapped in: the map's pages that are in memory, at most limit "
     "bytes of them, put in the page tables (MADV_POPULATE_READ); -1 where the system cannot. "
     "Nothing is read from the device."},
    {"resident", (PyCFunction)blocks_resident, METH_O,
     "resident(map) -> bytes, a byte per page of the map, bit 0 set when the page is in memory "
     "(mincore); None where the system cannot tell."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef blocks_module = {
    PyModuleDef_HEAD_INIT, "_blocks",
    "Block-compressed postings of bm25desk segments (see bm25desk/engine/index/blocks.py).", -1,
    blocks_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__blocks(void)
{
    PyObject *m = PyModule_Create(&blocks_module);
    if (m && (PyModule_AddIntConstant(m, "PAD", BLK_PAD) < 0 ||
              PyModule_AddIntConstant(m, "MAX_SHIFT", BLK_MAX_SHIFT) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
