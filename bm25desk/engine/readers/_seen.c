/* A compact "first seen" table of document ids: the duplicate-id check of a build.
 *
 * FirstSeen().setdefault(key, value) behaves like dict.setdefault on a dict of ids (str or
 * bytes) to integers, returning the value stored with ``key`` (``value`` if the key is new), but
 * holds each id as its raw bytes in one arena and its entry in a dense array of 32 bytes, found
 * through an open-addressing index of 32-bit entry numbers: about 45 bytes an id besides the id's
 * own bytes, where a dict held a str, an int and a dict entry (~120 bytes a 7-character id). A
 * str key is stored in its canonical representation (PEP 393: the narrowest kind that holds its
 * code points, so equal strs have equal bytes) with its kind; bytes keys are kind 0, so b"a" and
 * "a" are different keys, as in a dict.
 *
 * FirstSeen(assign=True) is also a build's vocabulary (``TermIds``): ``t[term]`` is the term's id,
 * a new term getting the next one, and ``t.key(i)`` gives the term of id ``i`` back (~50 bytes a
 * term instead of ~140 in a dict of str to int), and ``t.sorted_utf8(ids)`` a segment's lexicon: those
 * terms' UTF-8 in sorted order, with no str object made per term.
 *
 * Without this module (no compiler at install time) bm25desk uses dicts; tests check both.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "dense_index.h"

typedef struct {
    uint64_t hash;
    int64_t value;
    int64_t off; /* key bytes start in the arena */
    int32_t len; /* key length in bytes */
    int32_t kind; /* 0 bytes, else the str's kind (1, 2 or 4 bytes a code point) */
} Entry;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n, entries_cap;
    Py_ssize_t index_cap; /* a power of two, at least twice n */
    uint32_t *index;      /* 0 = empty, else entry number + 1 */
    Entry *entries;
    char *arena;
    int64_t arena_len, arena_cap;
    int assign; /* t[key] of a new key stores len(t) (a vocabulary: term -> next id) */
} FirstSeen;

static void seen_clear(FirstSeen *t) {
    PyMem_Free(t->index);
    PyMem_Free(t->entries);
    PyMem_Free(t->arena);
    t->index = NULL;
    t->entries = NULL;
    t->arena = NULL;
    t->n = t->entries_cap = t->index_cap = 0;
    t->arena_len = t->arena_cap = 0;
}

static int index_build(FirstSeen *t, Py_ssize_t cap) {
    uint32_t *index = dense_index_build(t->entries, sizeof(Entry), t->n, cap);
    if (!index)
        return -1;
    PyMem_Free(t->index);
    t->index = index;
    t->index_cap = cap;
    return 0;
}

static int FirstSeen_init(FirstSeen *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"assign", NULL};
    int assign = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p", kwlist, &assign))
        return -1;
    seen_clear(self);
    self->assign = assign;
    return index_build(self, 1 << 10);
}

static void FirstSeen_dealloc(FirstSeen *self) {
    seen_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Append an entry (the key is known to be absent); grow the arrays as needed. */
static int seen_append(FirstSeen *t, uint64_t h, const char *data, Py_ssize_t len, int kind,
                       int64_t value) {
    if (t->n >= (Py_ssize_t)UINT32_MAX - 1 || len > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many or too long document ids");
        return -1;
    }
    if (t->n == t->entries_cap) {
        Py_ssize_t cap = t->entries_cap ? t->entries_cap * 2 : 1024;
        Entry *e = PyMem_Realloc(t->entries, (size_t)cap * sizeof(Entry));
        if (!e) {
            PyErr_NoMemory();
            return -1;
        }
        t->entries = e;
        t->entries_cap = cap;
    }
    if (t->arena_len + len > t->arena_cap) {
        int64_t cap = t->arena_cap ? t->arena_cap : 1 << 14;
        while (t->arena_len + len > cap)
            cap *= 2;
        char *a = PyMem_Realloc(t->arena, (size_t)cap);
        if (!a) {
            PyErr_NoMemory();
            return -1;
        }
        t->arena = a;
        t->arena_cap = cap;
    }
    memcpy(t->arena + t->arena_len, data, (size_t)len);
    Entry *e = &t->entries[t->n];
    e->hash = h;
    e->value = value;
    e->off = t->arena_len;
    e->len = (int32_t)len;
    e->kind = kind;
    t->arena_len += len;
    t->n++;
    if (t->n * 2 > t->index_cap)
        return index_build(t, t->index_cap * 2);
    dense_index_place(t->index, t->index_cap, h, (uint32_t)t->n);
    return 0;
}

/* The key's bytes, kind and hash; -1 with an exception for a key that is not str or bytes. */
static int key_parts(FirstSeen *t, PyObject *key, const char **data, Py_ssize_t *len, int *kind,
                     uint64_t *h) {
    if (!t->index) {
        PyErr_SetString(PyExc_RuntimeError, "FirstSeen was not initialised");
        return -1;
    }
    if (PyUnicode_Check(key)) {
        if (PyUnicode_READY(key) < 0)
            return -1;
        *kind = PyUnicode_KIND(key);
        *data = (const char *)PyUnicode_DATA(key);
        *len = PyUnicode_GET_LENGTH(key) * *kind;
    } else if (PyBytes_Check(key)) {
        *kind = 0;
        *data = PyBytes_AS_STRING(key);
        *len = PyBytes_GET_SIZE(key);
    } else {
        PyErr_SetString(PyExc_TypeError, "keys must be str or bytes");
        return -1;
    }
    Py_hash_t ph = PyObject_Hash(key); /* cached in the str: no second pass over the id */
    if (ph == -1 && PyErr_Occurred())
        return -1;
    *h = (uint64_t)ph;
    return 0;
}

/* The entry of a key, or NULL when it is absent. */
static const Entry *seen_find(FirstSeen *t, const char *data, Py_ssize_t len, int kind,
                              uint64_t h) {
    Py_ssize_t mask = t->index_cap - 1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)mask);
    uint32_t k;
    while ((k = t->index[j]) != 0) {
        const Entry *e = &t->entries[k - 1];
        if (e->hash == h && e->len == len && e->kind == kind &&
            memcmp(t->arena + e->off, data, (size_t)len) == 0)
            return e;
        j = (j + 1) & mask;
    }
    return NULL;
}

static PyObject *FirstSeen_setdefault(FirstSeen *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "setdefault(key, value) takes 2 arguments");
        return NULL;
    }
    const char *data;
    Py_ssize_t len;
    int kind;
    uint64_t h;
    if (key_parts(self, args[0], &data, &len, &kind, &h) < 0)
        return NULL;
    long long value = PyLong_AsLongLong(args[1]);
    if (value == -1 && PyErr_Occurred())
        return NULL;
    const Entry *e = seen_find(self, data, len, kind, h);
    if (e)
        return PyLong_FromLongLong(e->value);
    if (seen_append(self, h, data, len, kind, value) < 0)
        return NULL;
    Py_INCREF(args[1]);
    return args[1];
}

/* t[key]: its value; a new key gets len(t) when the table assigns, else KeyError. */
static PyObject *FirstSeen_subscript(FirstSeen *self, PyObject *key) {
    const char *data;
    Py_ssize_t len;
    int kind;
    uint64_t h;
    if (key_parts(self, key, &data, &len, &kind, &h) < 0)
        return NULL;
    const Entry *e = seen_find(self, data, len, kind, h);
    if (e)
        return PyLong_FromLongLong(e->value);
    if (!self->assign) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    Py_ssize_t value = self->n;
    if (seen_append(self, h, data, len, kind, value) < 0)
        return NULL;
    return PyLong_FromSsize_t(value);
}

/* The key of entry i (entries are in insertion order). */
static PyObject *FirstSeen_key(FirstSeen *self, PyObject *arg) {
    Py_ssize_t i = PyLong_AsSsize_t(arg);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0 || i >= self->n) {
        PyErr_SetString(PyExc_IndexError, "entry number out of range");
        return NULL;
    }
    const Entry *e = &self->entries[i];
    const char *data = self->arena + e->off;
    if (e->kind == 0)
        return PyBytes_FromStringAndSize(data, e->len);
    return PyUnicode_FromKindAndData(e->kind, data, e->len / e->kind);
}

/* The UTF-8 of a key, lone surrogates written as '?' (str.encode("utf-8", "replace")); bytes
 * keys as they are. Returns the length; writes it to ``out`` when ``out`` is not NULL. */
static Py_ssize_t key_utf8(const FirstSeen *t, const Entry *e, char *out) {
    const char *data = t->arena + e->off;
    if (e->kind == 0) {
        if (out)
            memcpy(out, data, (size_t)e->len);
        return e->len;
    }
    Py_ssize_t n = e->len / e->kind, size = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_UCS4 c = PyUnicode_READ(e->kind, data, k);
        int w = c < 0x80 ? 1 : c < 0x800 ? 2 : (c >= 0xD800 && c <= 0xDFFF) ? 1 : c < 0x10000 ? 3 : 4;
        if (out) {
            unsigned char *o = (unsigned char *)out + size;
            if (w == 1)
                o[0] = (c >= 0xD800 && c <= 0xDFFF) ? '?' : (unsigned char)c;
            else if (w == 2) {
                o[0] = (unsigned char)(0xC0 | (c >> 6));
                o[1] = (unsigned char)(0x80 | (c & 0x3F));
            } else if (w == 3) {
                o[0] = (unsigned char)(0xE0 | (c >> 12));
                o[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
                o[2] = (unsigned char)(0x80 | (c & 0x3F));
            } else {
                o[0] = (unsigned char)(0xF0 | (c >> 18));
                o[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
                o[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
                o[3] = (unsigned char)(0x80 | (c & 0x3F));
            }
        }
        size += w;
    }
    return size;
}

typedef struct {
    const char *data;
    int64_t len;
    int64_t id;
} SortKey;

static int sortkey_cmp(const void *a, const void *b) {
    const SortKey *x = a, *y = b;
    int64_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->data, y->data, (size_t)n);
    if (c)
        return c;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* sorted_utf8(ids) -> (data, lens, ids): the keys of entries ``ids`` (native int64) sorted by
 * their UTF-8 (lone surrogates as '?'; equal bytes by entry number), as their bytes back to back,
 * each one's length and the entry numbers in that order (both native int64, as bytes). A
 * segment's lexicon without a str object per term. */
static PyObject *FirstSeen_sorted_utf8(FirstSeen *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (view.len % (Py_ssize_t)sizeof(int64_t)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "ids must be native int64");
        return NULL;
    }
    Py_ssize_t n = view.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *ids = view.buf;
    PyObject *result = NULL, *data = NULL, *lens = NULL, *order = NULL;
    char *utf8 = NULL;
    SortKey *keys = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(SortKey));
    int64_t *offs = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!keys || !offs) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= self->n) {
            PyErr_SetString(PyExc_IndexError, "entry number out of range");
            goto done;
        }
        offs[i] = total;
        total += key_utf8(self, &self->entries[ids[i]], NULL);
    }
    utf8 = PyMem_Malloc((size_t)(total ? total : 1));
    if (!utf8) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        keys[i].data = utf8 + offs[i];
        keys[i].len = key_utf8(self, &self->entries[ids[i]], utf8 + offs[i]);
        keys[i].id = ids[i];
    }
    PyMem_Free(offs);
    offs = NULL;
    qsort(keys, (size_t)n, sizeof(SortKey), sortkey_cmp);
    data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    lens = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    order = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(int64_t));
    if (!data || !lens || !order)
        goto done;
    char *d = PyBytes_AS_STRING(data);
    int64_t *l = (int64_t *)PyBytes_AS_STRING(lens), *o = (int64_t *)PyBytes_AS_STRING(order);
    for (Py_ssize_t i = 0; i < n; i++) {
        memcpy(d, keys[i].data, (size_t)keys[i].len);
        d += keys[i].len;
        l[i] = keys[i].len;
        o[i] = keys[i].id;
    }
    result = PyTuple_Pack(3, data, lens, order);
done:
    Py_XDECREF(data);
    Py_XDECREF(lens);
    Py_XDECREF(order);
    PyMem_Free(utf8);
    PyMem_Free(offs);
    PyMem_Free(keys);
    PyBuffer_Release(&view);
    return result;
}

static Py_ssize_t FirstSeen_len(FirstSeen *self) { return self->n; }

static PyMethodDef FirstSeen_methods[] = {
    {"setdefault", (PyCFunction)(void (*)(void))FirstSeen_setdefault, METH_FASTCALL,
     "setdefault(key, value) -> int: the value first stored with key (value if key is new)."},
    {"key", (PyCFunction)FirstSeen_key, METH_O, "key(i) -> the i-th key stored (str or bytes)."},
    {"sorted_utf8", (PyCFunction)FirstSeen_sorted_utf8, METH_O,
     "sorted_utf8(ids) -> (data, lens, ids): the keys of int64 entry numbers sorted by UTF-8."},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods FirstSeen_as_mapping = {
    .mp_length = (lenfunc)FirstSeen_len,
    .mp_subscript = (binaryfunc)FirstSeen_subscript,
};

static PyTypeObject FirstSeenType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.readers._seen.FirstSeen",
    .tp_basicsize = sizeof(FirstSeen),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "FirstSeen(assign=False): str or bytes key -> the integer first stored with it.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FirstSeen_init,
    .tp_dealloc = (destructor)FirstSeen_dealloc,
    .tp_methods = FirstSeen_methods,
    .tp_as_mapping = &FirstSeen_as_mapping,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_seen", .m_doc = "A compact first-seen table of document ids.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__seen(void) {
    if (PyType_Ready(&FirstSeenType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&FirstSeenType);
    if (PyModule_AddObject(m, "FirstSeen", (PyObject *)&FirstSeenType) < 0) {
        Py_DECREF(&FirstSeenType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
