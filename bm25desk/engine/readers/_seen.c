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
 * term instead of ~140 in a dict of str to int).
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

static Py_ssize_t FirstSeen_len(FirstSeen *self) { return self->n; }

static PyMethodDef FirstSeen_methods[] = {
    {"setdefault", (PyCFunction)(void (*)(void))FirstSeen_setdefault, METH_FASTCALL,
     "setdefault(key, value) -> int: the value first stored with key (value if key is new)."},
    {"key", (PyCFunction)FirstSeen_key, METH_O, "key(i) -> the i-th key stored (str or bytes)."},
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
