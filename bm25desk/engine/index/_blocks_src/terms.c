/*
 * _blocks, the lexicon's side: find a term's record in a sorted blob (one term, or a query's new
 * terms in one call), through the lexicon's hash (terms.hash.npy) or its terms index, build that
 * hash, and ask the kernel to read a term's blocks ahead (MADV_WILLNEED).
 *
 * Every offset read is checked against the data: a damaged lexicon raises ValueError, never
 * reads past its map. Every slot read from a hash is bounds-checked and its record's bytes
 * compared with the key: a damaged hash can make a term be missed, never give a wrong id.
 */
#include "view.h"

#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

/* A blob's record offsets: uint32 (format 4, while the blob is under 4 GB) or int64. */
typedef struct {
    const void *p;
    int w;
    Py_ssize_t n; /* records (offsets - 1) */
} Offsets;

/* A residency map of a blocks.bin map (resident()'s bytes), or none (map NULL). */
typedef struct {
    const unsigned char *map;
    Py_ssize_t n; /* pages */
} Resident;

static inline int64_t
off_at(const Offsets *o, Py_ssize_t i)
{
    return o->w == 4 ? (int64_t)((const uint32_t *)o->p)[i] : ((const int64_t *)o->p)[i];
}

/* Take an offsets buffer of 4- or 8-byte items (a uint32 array raises no exception on the way:
 * a term look-up takes this path, and formatting an error to clear it cost a microsecond). */
static int
take_offsets(PyObject *obj, View *view, Offsets *o)
{
    if (PyObject_GetBuffer(obj, &view->v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyErr_Clear();
        if (PyObject_GetBuffer(obj, &view->v, PyBUF_C_CONTIGUOUS) < 0) {
            PyErr_SetString(PyExc_TypeError, "offsets: expected a C-contiguous buffer");
            return -1;
        }
    }
    view->have = 1;
    if ((view->v.itemsize != 8 && view->v.itemsize != 4) || view->v.len % view->v.itemsize) {
        PyErr_SetString(PyExc_TypeError, "offsets: expected items of 8 bytes");
        return -1;
    }
    o->p = view->v.buf;
    o->w = (int)view->v.itemsize;
    o->n = view->v.len / o->w - 1;
    return 0;
}

/* Compare record i of a blob with key (memcmp order, then length). */
static int
cmp_record(const uint8_t *data, const Offsets *off, Py_ssize_t i, const uint8_t *key,
           Py_ssize_t klen)
{
    int64_t a = off_at(off, i);
    Py_ssize_t len = (Py_ssize_t)(off_at(off, i + 1) - a);
    int c = memcmp(data + a, key, (size_t)(len < klen ? len : klen));
    return c ? c : (len > klen) - (len < klen);
}

/* The records' offsets must ascend within the data (a damaged blob must not be read past). */
static int
check_offsets(const Offsets *off, Py_ssize_t size)
{
    if (off_at(off, 0) < 0 || off_at(off, off->n) > size) {
        return -1;
    }
    return 0;
}

/* Take a blob's data (v[0]) and its records' offsets (v[1]), the offsets checked to fit the data:
 * 0, or -1 with an exception ("<who>: offsets do not fit the data" when they do not). */
static int
take_records(PyObject *data_o, PyObject *off_o, View *v, Offsets *off, const char *who)
{
    if (view_take(data_o, &v[0], 1, "data") < 0 || take_offsets(off_o, &v[1], off) < 0) {
        return -1;
    }
    if (off->n < 0 || check_offsets(off, v[0].v.len) < 0) {
        PyErr_Format(PyExc_ValueError, "%s: offsets do not fit the data", who);
        return -1;
    }
    return 0;
}

/* Binary search of key among records [lo, hi): *at = its index, or -1. -1 (ValueError) when an
 * offset read is negative, out of order or past the data (a negative start read before the map:
 * a crash on a damaged lexicon, seen once in CI). */
static int
search_records(const uint8_t *data, Py_ssize_t size, const Offsets *off, Py_ssize_t lo,
               Py_ssize_t hi, const void *key, Py_ssize_t klen, Py_ssize_t *at)
{
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        int64_t a = off_at(off, mid), z = off_at(off, mid + 1);
        if (a < 0 || z < a || z > size) {
            PyErr_SetString(PyExc_ValueError, "find: offsets out of order");
            return -1;
        }
        int c = cmp_record(data, off, mid, key, klen);
        if (c < 0) {
            lo = mid + 1;
        }
        else if (c > 0) {
            hi = mid;
        }
        else {
            *at = mid;
            return 0;
        }
    }
    *at = -1;
    return 0;
}

PyObject *
blocks_find(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o;
    Py_buffer key;
    Py_ssize_t first = 0, last = -1;
    if (!PyArg_ParseTuple(args, "OOy*|nn", &data_o, &off_o, &key, &first, &last)) {
        return NULL;
    }
    View v[2];
    memset(v, 0, sizeof(v));
    Offsets off;
    PyObject *result = NULL;
    if (take_records(data_o, off_o, v, &off, "find") < 0) {
        goto done;
    }
    const uint8_t *data = v[0].v.buf;
    Py_ssize_t n = off.n, lo = first, hi = last < 0 ? (n > 0 ? n : 0) : last;
    if (lo < 0 || lo > hi || hi > n) {
        PyErr_SetString(PyExc_ValueError, "find: the range is not within the records");
        goto done;
    }
    Py_ssize_t at;
    if (search_records(data, v[0].v.len, &off, lo, hi, key.buf, key.len, &at) == 0) {
        result = PyLong_FromSsize_t(at);
    }
done:
    PyBuffer_Release(&key);
    view_drop(v, 2);
    return result;
}

PyObject *
blocks_strictly_sorted(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o;
    if (!PyArg_ParseTuple(args, "OO", &data_o, &off_o)) {
        return NULL;
    }
    View v[2];
    memset(v, 0, sizeof(v));
    Offsets off;
    PyObject *result = NULL;
    if (view_take(data_o, &v[0], 1, "data") < 0 || take_offsets(off_o, &v[1], &off) < 0) {
        goto done;
    }
    const uint8_t *data = v[0].v.buf;
    Py_ssize_t n = off.n;
    int ok = n >= 0 && check_offsets(&off, v[0].v.len) == 0;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        int64_t a = off_at(&off, i), z = off_at(&off, i + 1);
        ok = z >= a && z <= v[0].v.len;
        if (ok && i > 0) {
            ok = cmp_record(data, &off, i - 1, data + a, (Py_ssize_t)(z - a)) < 0;
        }
    }
    result = PyBool_FromLong(ok);
done:
    view_drop(v, 2);
    return result;
}

/* Bytes per MADV_WILLNEED call: Linux reads at most its read-ahead window per call and drops the
 * rest (arrays.py's _WILLNEED_STEP). */
#define WILLNEED_STEP ((Py_ssize_t)128 << 10)

/* MADV_WILLNEED over the blocks of terms [first, end) of a mapped blocks.bin; the bytes asked
 * for. A hint: term ids or offsets out of range ask for nothing (decoding checks and reports). */
/* Ranges of at most this many pages that a residency map shows in memory are not asked for: the
 * system call would find every page there and read nothing (~1.5 µs a rare term). Longer ones
 * are always asked: were they dropped since the map was taken, faulting them back a page at a
 * time (blocks.bin is mapped without read-around) would cost far more than the call. */
#define RESIDENT_SKIP_PAGES 16

/* Whether every page of [lo, hi) (addresses in the map at base) is marked in memory in the
 * residency map (mincore's: a byte per page, bit 0 set when in memory) of n pages. */
static int
all_resident(const Resident *r, uintptr_t base, uintptr_t lo, uintptr_t hi, uintptr_t page)
{
    if (r == NULL || r->map == NULL) {
        return 0;
    }
    uintptr_t p0 = (lo - base) / page, p1 = (hi - base + page - 1) / page;
    if (p1 - p0 > RESIDENT_SKIP_PAGES || p1 > (uintptr_t)r->n) {
        return 0;
    }
    for (uintptr_t i = p0; i < p1; i++) {
        if (!(r->map[i] & 1)) {
            return 0;
        }
    }
    return 1;
}

static long
advise_terms(const Py_buffer *data, const Offsets *off, const Offsets *bptr, Py_ssize_t first,
             Py_ssize_t end, const Resident *resident)
{
    long asked = 0;
    if (0 <= first && first < end && end <= bptr->n) {
        int64_t b0 = off_at(bptr, first), b1 = off_at(bptr, end);
        if (0 <= b0 && b0 < b1 && b1 <= off->n) {
            int64_t a = off_at(off, b0), z = off_at(off, b1);
            if (0 <= a && a < z && z <= (int64_t)data->len) {
#if defined(__unix__) || defined(__APPLE__)
                uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
                uintptr_t lo = (uintptr_t)data->buf + (uintptr_t)a;
                uintptr_t hi = (uintptr_t)data->buf + (uintptr_t)z;
                lo -= lo % page;
                if (all_resident(resident, (uintptr_t)data->buf, lo, hi, page)) {
                    return 0;
                }
                for (uintptr_t p = lo; p < hi; p += (uintptr_t)WILLNEED_STEP) {
                    size_t n = hi - p < (uintptr_t)WILLNEED_STEP ? hi - p : (size_t)WILLNEED_STEP;
                    (void)madvise((void *)p, n, MADV_WILLNEED); /* best effort */
                }
                asked = (long)(hi - lo);
#endif
            }
        }
    }
    return asked;
}

/* The three buffers read-ahead advice reads (blocks, the terms' offsets and block pointers) into
 * v[0..3), zeroed first so that view_drop(v, 3) is right on every path. The blocks are taken as a
 * read-only simple buffer: a map exports its address (nothing is copied). */
static int
take_advice_views(PyObject *data_o, PyObject *off_o, PyObject *bptr_o, View v[3], Offsets *off,
                  Offsets *bptr)
{
    memset(v, 0, 3 * sizeof(View));
    if (PyObject_GetBuffer(data_o, &v[0].v, PyBUF_SIMPLE) < 0) {
        return -1;
    }
    v[0].have = 1;
    if (take_offsets(off_o, &v[1], off) < 0 || take_offsets(bptr_o, &v[2], bptr) < 0) {
        return -1;
    }
    return 0;
}

/* The residency map given (bytes, or None: none) as a Resident. */
static int
take_resident(PyObject *o, Resident *r)
{
    r->map = NULL;
    r->n = 0;
    if (o == NULL || o == Py_None) {
        return 0;
    }
    if (!PyBytes_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "prefetch: resident must be bytes or None");
        return -1;
    }
    r->map = (const unsigned char *)PyBytes_AS_STRING(o);
    r->n = PyBytes_GET_SIZE(o);
    return 0;
}

PyObject *
blocks_resident(PyObject *Py_UNUSED(module), PyObject *data_o)
{
#if defined(__linux__) || defined(__APPLE__)
    Py_buffer v;
    if (PyObject_GetBuffer(data_o, &v, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    PyObject *out = NULL;
    if (v.len > 0 && (uintptr_t)v.buf % page == 0) {
        Py_ssize_t n = (Py_ssize_t)(((uintptr_t)v.len + page - 1) / page);
        out = PyBytes_FromStringAndSize(NULL, n);
        if (out != NULL) {
            int rc;
            Py_BEGIN_ALLOW_THREADS /* ~0.4 ms for 94 MB */
            rc = mincore(v.buf, (size_t)v.len, (void *)PyBytes_AS_STRING(out));
            Py_END_ALLOW_THREADS
            if (rc != 0) {
                Py_CLEAR(out); /* the system cannot tell: no map (every range is asked for) */
            }
        }
        else {
            PyErr_Clear();
        }
    }
    PyBuffer_Release(&v);
    if (out != NULL) {
        return out;
    }
#else
    (void)data_o;
#endif
    Py_RETURN_NONE;
}

#if defined(__linux__) && !defined(MADV_POPULATE_READ)
#define MADV_POPULATE_READ 22 /* Linux 5.14: fault pages in for reading, as reads would */
#endif

/* Pages asked for per residency map (mincore's vector: a byte a page) in map_in. */
#define MAP_IN_CHUNK ((Py_ssize_t)1 << 14)

/* Map in the pages of a read-only map that are in memory (the page cache holds them), at most
 * limit bytes of them, runs in order: MADV_POPULATE_READ puts them in the process's page tables
 * in one call per run (~0.2 µs a page), where a query touching one first would take a page fault
 * (a few µs in a VM). Pages not in memory are left alone: nothing is read from the device. The
 * bytes mapped in, or -1 where the system cannot (not Linux, or a kernel before 5.14). */
PyObject *
blocks_map_in(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o;
    Py_ssize_t limit;
    if (!PyArg_ParseTuple(args, "On", &data_o, &limit)) {
        return NULL;
    }
#if defined(__linux__)
    Py_buffer v;
    if (PyObject_GetBuffer(data_o, &v, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    long long done = 0;
    int unsupported = 0;
    if (v.len > 0 && (uintptr_t)v.buf % page == 0 && limit > 0) {
        unsigned char vec[MAP_IN_CHUNK];
        Py_ssize_t pages = (Py_ssize_t)(((uintptr_t)v.len + page - 1) / page);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p0 = 0; p0 < pages && done < limit && !unsupported; p0 += MAP_IN_CHUNK) {
            Py_ssize_t n = pages - p0 < MAP_IN_CHUNK ? pages - p0 : MAP_IN_CHUNK;
            char *base = (char *)v.buf + (uintptr_t)p0 * page;
            size_t len = (size_t)n * page;
            if ((char *)v.buf + v.len < base + len) {
                len = (size_t)((char *)v.buf + v.len - base);
            }
            if (mincore(base, len, vec) != 0) {
                break; /* the system cannot tell: nothing more */
            }
            for (Py_ssize_t i = 0; i < n && done < limit;) {
                if (!(vec[i] & 1)) {
                    i++;
                    continue;
                }
                Py_ssize_t j = i;
                long long room = (limit - done) / (long long)page; /* whole pages left */
                while (j < n && (vec[j] & 1) && j - i < room) {
                    j++;
                }
                if (j == i) {
                    break; /* the limit */
                }
                size_t run = (size_t)(j - i) * page;
                char *at = base + (uintptr_t)i * page;
                if ((char *)v.buf + v.len < at + run) {
                    run = (size_t)((char *)v.buf + v.len - at);
                }
                if (madvise(at, run, MADV_POPULATE_READ) == 0) {
                    done += (long long)run;
                }
                else if (errno == EINVAL) {
                    unsupported = 1; /* (a kernel without it) */
                    break;
                } /* (else a page gone meanwhile: the run is left to the queries' faults) */
                i = j;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&v);
    return PyLong_FromLongLong(unsupported && done == 0 ? -1 : done);
#else
    (void)data_o;
    (void)limit;
    return PyLong_FromLong(-1);
#endif
}

PyObject *
blocks_prefetch(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o, *bptr_o, *res_o = NULL;
    Py_ssize_t first, end;
    if (!PyArg_ParseTuple(args, "OOOnn|O", &data_o, &off_o, &bptr_o, &first, &end, &res_o)) {
        return NULL;
    }
    View v[3];
    Offsets off, bptr;
    Resident res;
    PyObject *result = NULL;
    if (take_resident(res_o, &res) < 0) {
        return NULL;
    }
    if (take_advice_views(data_o, off_o, bptr_o, v, &off, &bptr) < 0) {
        goto done;
    }
    long asked = advise_terms(&v[0].v, &off, &bptr, first, end, &res);
    result = PyLong_FromLong(asked);
done:
    view_drop(v, 3);
    return result;
}

/* The UTF-8 bytes of a term as str.encode("utf-8", "replace") gives them: the string's own
 * UTF-8 (no copy) unless it holds lone surrogates, then a new bytes object in *owned. */
static const char *
term_utf8(PyObject *term, Py_ssize_t *len, PyObject **owned)
{
    *owned = NULL;
    const char *s = PyUnicode_AsUTF8AndSize(term, len);
    if (s != NULL) {
        return s;
    }
    PyErr_Clear();
    *owned = PyUnicode_AsEncodedString(term, "utf-8", "replace");
    if (*owned == NULL) {
        return NULL;
    }
    *len = PyBytes_GET_SIZE(*owned);
    return PyBytes_AS_STRING(*owned);
}

/* The last entry of the sorted terms index (bytes) that is <= key, or -1 (bisect_right - 1);
 * -2 (TypeError) when an entry probed is not bytes. */
static Py_ssize_t
last_at_most(PyObject *index, const char *key, Py_ssize_t klen)
{
    Py_ssize_t lo = 0, hi = PyList_GET_SIZE(index);
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        PyObject *probe = PyList_GET_ITEM(index, mid);
        if (!PyBytes_Check(probe)) {
            PyErr_SetString(PyExc_TypeError, "find_many: the terms index must hold bytes");
            return -2;
        }
        Py_ssize_t plen = PyBytes_GET_SIZE(probe);
        int c = memcmp(PyBytes_AS_STRING(probe), key, (size_t)(plen < klen ? plen : klen));
        c = c ? c : (plen > klen) - (plen < klen);
        if (c <= 0) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo - 1;
}

PyObject *
blocks_find_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o, *index, *terms;
    Py_ssize_t stride;
    if (!PyArg_ParseTuple(args, "OOO!nO!", &data_o, &off_o, &PyList_Type, &index, &stride,
                          &PyList_Type, &terms)) {
        return NULL;
    }
    if (stride < 1) {
        PyErr_SetString(PyExc_ValueError, "find_many: stride must be at least 1");
        return NULL;
    }
    View v[2];
    memset(v, 0, sizeof(v));
    Offsets off;
    PyObject *result = NULL, *out = NULL;
    if (take_records(data_o, off_o, v, &off, "find") < 0) {
        goto done;
    }
    const uint8_t *data = v[0].v.buf;
    Py_ssize_t n = off.n, nt = PyList_GET_SIZE(terms);
    out = PyList_New(nt);
    if (out == NULL) {
        goto done;
    }
    for (Py_ssize_t t = 0; t < nt; t++) {
        PyObject *term = PyList_GET_ITEM(terms, t), *owned;
        if (!PyUnicode_Check(term)) {
            PyErr_SetString(PyExc_TypeError, "find_many: terms must be str");
            goto done;
        }
        Py_ssize_t klen, at = -1;
        const char *key = term_utf8(term, &klen, &owned);
        if (key == NULL) {
            goto done;
        }
        Py_ssize_t s = last_at_most(index, key, klen);
        int rc = s < -1 ? -1 : 0;
        if (s >= 0) { /* only that stride's records are searched (Lexicon._search) */
            Py_ssize_t lo = s * stride, hi = lo + stride < n ? lo + stride : n;
            rc = lo <= hi ? search_records(data, v[0].v.len, &off, lo, hi, key, klen, &at) : 0;
        }
        Py_XDECREF(owned);
        PyObject *id = rc < 0 ? NULL : PyLong_FromSsize_t(at);
        if (id == NULL) {
            goto done;
        }
        PyList_SET_ITEM(out, t, id);
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    view_drop(v, 2);
    return result;
}

PyObject *
blocks_prefetch_many(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o, *bptr_o, *ids, *res_o = NULL;
    if (!PyArg_ParseTuple(args, "OOOO!|O", &data_o, &off_o, &bptr_o, &PyList_Type, &ids,
                          &res_o)) {
        return NULL;
    }
    View v[3];
    Offsets off, bptr;
    Resident res;
    PyObject *result = NULL;
    if (take_resident(res_o, &res) < 0) {
        return NULL;
    }
    if (take_advice_views(data_o, off_o, bptr_o, v, &off, &bptr) < 0) {
        goto done;
    }
    long asked = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(ids); i++) {
        Py_ssize_t id = PyLong_AsSsize_t(PyList_GET_ITEM(ids, i));
        if (id == -1 && PyErr_Occurred()) {
            goto done;
        }
        asked += advise_terms(&v[0].v, &off, &bptr, id, id + 1, &res);
    }
    result = PyLong_FromLong(asked);
done:
    view_drop(v, 3);
    return result;
}

/* -- the lexicon's hash (terms.hash.npy; bm25desk/engine/index/termhash.py describes it) ------- */

#define TH_FNV_OFFSET 0xcbf29ce484222325ULL
#define TH_FNV_PRIME 0x100000001b3ULL
/* Lexicons of this many terms or more get no hash (ids + 1 and the slots' starts fit in 32 bits;
 * termhash.MAX_TERMS). */
#define TH_MAX_TERMS ((Py_ssize_t)1 << 30)

/* FNV-1a over the bytes, then MurmurHash3's 64-bit finaliser (every bit of the result depends on
 * every byte: the home slot takes the high half, the check bits the low). */
static inline uint64_t
th_hash(const uint8_t *s, Py_ssize_t n)
{
    uint64_t h = TH_FNV_OFFSET;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= TH_FNV_PRIME;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* The shape of the hash of n terms: m home slots (n + n / 2 + 1: load 2/3), each slot holding
 * id + 1 in its low idbits bits (bit_length(n)) and check bits of the hash above them. */
typedef struct {
    uint64_t m;
    int idbits;
    uint32_t idmask;
    uint32_t fpmask;
} HashShape;

static void
th_shape(Py_ssize_t n, HashShape *s)
{
    int bits = 0;
    while (bits < 32 && ((uint64_t)n >> bits)) {
        bits++;
    }
    s->m = (uint64_t)n + (uint64_t)n / 2 + 1;
    s->idbits = bits;
    s->idmask = (uint32_t)((1ULL << bits) - 1);
    s->fpmask = (uint32_t)((1ULL << (32 - bits)) - 1);
}

/* A term's home slot: the high half of its hash scaled to [0, m) (Lemire's multiply-shift). */
static inline uint64_t
th_home(uint64_t h, uint64_t m)
{
    return ((h >> 32) * m) >> 32;
}

/* Take a hash table (4-byte items) for a lexicon of n terms: ValueError when its size cannot be
 * the size of the hash of n terms (m to m + n slots). */
static int
take_table(PyObject *obj, View *view, Py_ssize_t n, HashShape *s, const uint32_t **t,
           Py_ssize_t *len)
{
    if (view_take(obj, view, 4, "table") < 0) {
        return -1;
    }
    th_shape(n, s);
    *len = view->v.len / 4;
    if (n >= TH_MAX_TERMS || (uint64_t)*len < s->m || (uint64_t)*len > s->m + (uint64_t)n) {
        PyErr_SetString(PyExc_ValueError, "find: the hash does not fit the lexicon");
        return -1;
    }
    *t = view->v.buf;
    return 0;
}

/* The id of key through the hash (-1: absent), or -2 with ValueError when the record a slot names
 * has offsets out of order. Slots are read from the key's home slot on, up to the first empty
 * one (or the table's end); a slot is a candidate when its check bits are the key's, and its id
 * the answer only when in range and its record's bytes are the key's. */
static Py_ssize_t
hash_search(const uint8_t *data, Py_ssize_t size, const Offsets *off, const uint32_t *t,
            Py_ssize_t len, const HashShape *s, const char *key, Py_ssize_t klen)
{
    uint64_t h = th_hash((const uint8_t *)key, klen);
    uint32_t fp = (uint32_t)h & s->fpmask;
    for (Py_ssize_t i = (Py_ssize_t)th_home(h, s->m); i < len; i++) {
        uint32_t v = t[i];
        if (v == 0) {
            return -1;
        }
        if ((v >> s->idbits) != fp) {
            continue;
        }
        Py_ssize_t id = (Py_ssize_t)(v & s->idmask) - 1;
        if (id < 0 || id >= off->n) {
            continue; /* a damaged slot: no record */
        }
        int64_t a = off_at(off, id), z = off_at(off, id + 1);
        if (a < 0 || z < a || z > size) {
            PyErr_SetString(PyExc_ValueError, "find: offsets out of order");
            return -2;
        }
        if (z - a == klen && memcmp(data + a, key, (size_t)klen) == 0) {
            return id;
        }
    }
    return -1;
}

PyObject *
blocks_hash_find(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o, *table_o, *terms;
    if (!PyArg_ParseTuple(args, "OOOO", &data_o, &off_o, &table_o, &terms)) {
        return NULL;
    }
    int many = PyList_Check(terms);
    if (!many && !PyUnicode_Check(terms)) {
        PyErr_SetString(PyExc_TypeError, "hash_find: expected a str or a list of str");
        return NULL;
    }
    View v[3];
    memset(v, 0, sizeof(v));
    Offsets off;
    HashShape s;
    const uint32_t *t;
    Py_ssize_t len;
    PyObject *result = NULL, *out = NULL;
    if (take_records(data_o, off_o, v, &off, "find") < 0) {
        goto done;
    }
    if (take_table(table_o, &v[2], off.n, &s, &t, &len) < 0) {
        goto done;
    }
    Py_ssize_t nt = many ? PyList_GET_SIZE(terms) : 1;
    if (many && (out = PyList_New(nt)) == NULL) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < nt; k++) {
        PyObject *term = many ? PyList_GET_ITEM(terms, k) : terms, *owned;
        if (!PyUnicode_Check(term)) {
            PyErr_SetString(PyExc_TypeError, "hash_find: terms must be str");
            goto done;
        }
        Py_ssize_t klen;
        const char *key = term_utf8(term, &klen, &owned);
        if (key == NULL) {
            goto done;
        }
        Py_ssize_t at = hash_search(v[0].v.buf, v[0].v.len, &off, t, len, &s, key, klen);
        Py_XDECREF(owned);
        PyObject *id = at < -1 ? NULL : PyLong_FromSsize_t(at);
        if (id == NULL) {
            goto done;
        }
        if (!many) {
            result = id;
            goto done;
        }
        PyList_SET_ITEM(out, k, id);
    }
    result = out;
    out = NULL;
done:
    Py_XDECREF(out);
    view_drop(v, 3);
    return result;
}

PyObject *
blocks_terms_hash(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o;
    if (!PyArg_ParseTuple(args, "OO", &data_o, &off_o)) {
        return NULL;
    }
    View v[2];
    memset(v, 0, sizeof(v));
    Offsets off;
    PyObject *result = NULL;
    uint32_t *next = NULL;
    if (take_records(data_o, off_o, v, &off, "terms_hash") < 0) {
        goto done;
    }
    const uint8_t *data = v[0].v.buf;
    Py_ssize_t n = off.n, size = v[0].v.len;
    if (n >= TH_MAX_TERMS) {
        PyErr_SetString(PyExc_OverflowError, "terms_hash: too many terms for a hash");
        goto done;
    }
    HashShape s;
    th_shape(n, &s);
    /* Slots are given out in order of home slot, ties in id order: a home's terms take the slots
     * from max(home, the previous home's last + 1) on (termhash.py: numpy's stable sort and
     * running maximum place them the same). next[b]: home b's terms counted, then its next. */
    next = PyMem_Calloc((size_t)s.m, sizeof(uint32_t));
    if (next == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int bad = 0;
    uint64_t end = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t id = 0; id < n; id++) {
        int64_t a = off_at(&off, id), z = off_at(&off, id + 1);
        if (a < 0 || z < a || z > size) {
            bad = 1;
            break;
        }
        next[th_home(th_hash(data + a, (Py_ssize_t)(z - a)), s.m)]++;
    }
    for (uint64_t b = 0; !bad && b < s.m; b++) {
        uint32_t c = next[b];
        if (c) {
            uint64_t start = b > end ? b : end;
            next[b] = (uint32_t)start;
            end = start + c;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "terms_hash: offsets out of order");
        goto done;
    }
    uint64_t len = end > s.m ? end : s.m;
    result = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(len * sizeof(uint32_t)));
    if (result == NULL) {
        goto done;
    }
    uint32_t *t = (uint32_t *)PyBytes_AS_STRING(result);
    Py_BEGIN_ALLOW_THREADS
    memset(t, 0, (size_t)len * sizeof(uint32_t));
    for (Py_ssize_t id = 0; id < n; id++) {
        int64_t a = off_at(&off, id), z = off_at(&off, id + 1);
        uint64_t h = th_hash(data + a, (Py_ssize_t)(z - a));
        uint32_t fp = (uint32_t)h & s.fpmask;
        t[next[th_home(h, s.m)]++] = (uint32_t)(((uint64_t)fp << s.idbits) | (uint64_t)(id + 1));
    }
    Py_END_ALLOW_THREADS
done:
    PyMem_Free(next);
    view_drop(v, 2);
    return result;
}

PyObject *
blocks_term_hash(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer key;
    if (!PyArg_ParseTuple(args, "y*", &key)) {
        return NULL;
    }
    uint64_t h = th_hash(key.buf, key.len);
    PyBuffer_Release(&key);
    return PyLong_FromUnsignedLongLong(h);
}

/* The id of a term looked up for the first time: the lexicon's memo (term -> id or -1), else the
 * hash, the answer kept in the memo. -1: absent; -2 with an exception. */
static Py_ssize_t
memo_find(PyObject *term, PyObject *memo, const View *v, const Offsets *off, const uint32_t *t,
          Py_ssize_t len, const HashShape *s)
{
    PyObject *raw = PyDict_GetItemWithError(memo, term); /* borrowed */
    if (raw) {
        Py_ssize_t tid = PyLong_AsSsize_t(raw);
        return tid == -1 && PyErr_Occurred() ? -2 : tid;
    }
    Py_ssize_t klen;
    PyObject *owned;
    const char *key = PyErr_Occurred() ? NULL : term_utf8(term, &klen, &owned);
    if (key == NULL) {
        return -2;
    }
    Py_ssize_t tid = hash_search(v[0].v.buf, v[0].v.len, off, t, len, s, key, klen);
    Py_XDECREF(owned);
    PyObject *id = tid < -1 ? NULL : PyLong_FromSsize_t(tid);
    int bad = !id || PyDict_SetItem(memo, term, id) < 0;
    Py_XDECREF(id);
    return bad ? -2 : tid;
}

PyObject *
blocks_hash_dfs(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *data_o, *off_o, *table_o, *ptr_o, *terms, *memo, *cache;
    if (!PyArg_ParseTuple(args, "OOOOO!O!O!", &data_o, &off_o, &table_o, &ptr_o, &PyList_Type,
                          &terms, &PyDict_Type, &memo, &PyDict_Type, &cache)) {
        return NULL;
    }
    View v[4];
    memset(v, 0, sizeof(v));
    Offsets off, ptr;
    HashShape s;
    const uint32_t *t;
    Py_ssize_t len, nt = PyList_GET_SIZE(terms);
    PyObject *result = NULL, *dfs = PyList_New(nt), *ids = PyList_New(0);
    if (!dfs || !ids || take_records(data_o, off_o, v, &off, "find") < 0 ||
        take_table(table_o, &v[2], off.n, &s, &t, &len) < 0 ||
        take_offsets(ptr_o, &v[3], &ptr) < 0) {
        goto done;
    }
    for (Py_ssize_t k = 0; k < nt; k++) {
        PyObject *term = PyList_GET_ITEM(terms, k);
        if (!PyUnicode_Check(term)) {
            PyErr_SetString(PyExc_TypeError, "hash_dfs: terms must be str");
            goto done;
        }
        PyObject *known = PyDict_GetItemWithError(cache, term); /* borrowed */
        if (!known && PyErr_Occurred()) {
            goto done;
        }
        Py_ssize_t tid = known ? PyLong_AsSsize_t(known) : memo_find(term, memo, v, &off, t, len, &s);
        if (tid < -1 || (tid == -1 && PyErr_Occurred())) {
            goto done;
        }
        if (tid >= ptr.n) {
            PyErr_SetString(PyExc_ValueError, "find: ptr does not fit the lexicon");
            goto done;
        }
        int64_t df = tid >= 0 ? off_at(&ptr, tid + 1) - off_at(&ptr, tid) : 0;
        if (!known) { /* kept: the id when the term is in some document, else -1 */
            tid = df > 0 ? tid : -1;
            PyObject *id = PyLong_FromSsize_t(tid);
            int bad = !id || PyDict_SetItem(cache, term, id) < 0 ||
                      (tid >= 0 && PyList_Append(ids, id) < 0);
            Py_XDECREF(id);
            if (bad) {
                goto done;
            }
        }
        PyObject *d = PyLong_FromLongLong(df);
        if (!d) {
            goto done;
        }
        PyList_SET_ITEM(dfs, k, d);
    }
    result = PyTuple_Pack(2, dfs, ids);
done:
    Py_XDECREF(dfs);
    Py_XDECREF(ids);
    view_drop(v, 4);
    return result;
}
