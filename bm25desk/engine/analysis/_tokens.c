/* Token → term id for bulk indexing, in one pass over a document's text.
 *
 * TokenTable(lookup, mode, limit).ids(text) returns the native int32 ids of the text's tokens
 * in order, as bytes: mode 0 splits like the regex \w+ (a token is a maximal run of characters c
 * with Py_UNICODE_ISALNUM(c) or c == '_', exactly sre's Unicode word class), mode 1 like
 * str.split() (runs of characters that are not Py_UNICODE_ISSPACE). A token seen before is found
 * in an open-addressing table keyed by its code points, so no str object is made for it; a new
 * token is made into a str and passed to ``lookup`` (the analyser: -1 for a dropped token, else
 * the id of its term), and remembered while the table holds fewer than ``limit`` tokens.
 *
 * Without this module (no compiler at install time) bm25desk does the same with re.findall and
 * a dict; tests check both give the same ids.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "dense_index.h"

#define INLINE 16

typedef struct {
    uint64_t hash;             /* 0 = empty (hashes are forced non-zero) */
    int64_t off;               /* key start in the arena, or -1: the key is in ``small`` */
    int32_t len;               /* key length in code points */
    int32_t id;
    uint8_t small[INLINE];     /* keys of up to INLINE code points below 256: no arena look-up */
} Entry;

typedef struct {
    PyObject_HEAD
    PyObject *lookup;
    int mode;
    Py_ssize_t limit;
    Py_ssize_t n, cap;   /* entries, index slots (a power of two, at least twice n) */
    uint32_t *index;     /* 0 = empty, else entry number + 1 */
    Entry *entries;      /* dense, in insertion order: one cache line holds an entry */
    Py_ssize_t entries_cap;
    Py_UCS4 *arena;
    int64_t arena_len, arena_cap;
} TokenTable;

static int is_token_char(int mode, Py_UCS4 c) {
    if (mode == 0) {
        if (c < 128)
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '_';
        return Py_UNICODE_ISALNUM(c) || c == '_';
    }
    return !Py_UNICODE_ISSPACE(c);
}

/* Index the entries in a new index of ``cap`` slots (the table grows: only the index is rebuilt,
 * 4 bytes a slot; the entries stay where they are). A slotted table of entries at load <= 0.5
 * held 80 to 160 bytes a token; this holds 48 to 56. */
static int index_build(TokenTable *t, Py_ssize_t cap) {
    uint32_t *index = dense_index_build(t->entries, sizeof(Entry), t->n, cap);
    if (!index)
        return -1;
    PyMem_Free(t->index);
    t->index = index;
    t->cap = cap;
    return 0;
}

static void table_free(TokenTable *t) {
    PyMem_Free(t->index);
    PyMem_Free(t->entries);
    t->index = NULL;
    t->entries = NULL;
    t->n = t->cap = t->entries_cap = 0;
}

/* Index entry t->n (just filled in, with hash h) and count it. */
static void table_place(TokenTable *t, uint64_t h) {
    t->n++;
    dense_index_place(t->index, t->cap, h, (uint32_t)t->n);
}

/* Insert a key known to be absent. */
static int table_insert(TokenTable *t, uint64_t h, int kind, const void *data, Py_ssize_t start,
                        Py_ssize_t n, int32_t value) {
    if ((t->n + 1) * 2 > t->cap && index_build(t, t->cap * 2) < 0)
        return -1;
    if (t->n == t->entries_cap) {
        Py_ssize_t cap = t->entries_cap ? t->entries_cap * 2 : 1 << 12;
        Entry *grown = PyMem_Realloc(t->entries, (size_t)cap * sizeof(Entry));
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        t->entries = grown;
        t->entries_cap = cap;
    }
    Entry *e = &t->entries[t->n];
    int small = n <= INLINE;
    for (Py_ssize_t k = 0; small && k < n; k++)
        small = PyUnicode_READ(kind, data, start + k) < 256;
    if (small) {
        for (Py_ssize_t k = 0; k < n; k++)
            e->small[k] = (uint8_t)PyUnicode_READ(kind, data, start + k);
        e->off = -1;
        e->hash = h;
        e->id = value;
        e->len = (int32_t)n;
        table_place(t, h);
        return 0;
    }
    if (t->arena_len + n > t->arena_cap) {
        int64_t cap = t->arena_cap ? t->arena_cap : 1 << 16;
        while (t->arena_len + n > cap)
            cap *= 2;
        Py_UCS4 *a = PyMem_Realloc(t->arena, (size_t)cap * sizeof(Py_UCS4));
        if (!a) {
            PyErr_NoMemory();
            return -1;
        }
        t->arena = a;
        t->arena_cap = cap;
    }
    for (Py_ssize_t k = 0; k < n; k++)
        t->arena[t->arena_len + k] = PyUnicode_READ(kind, data, start + k);
    e->hash = h;
    e->id = value;
    e->off = t->arena_len;
    e->len = (int32_t)n;
    t->arena_len += n;
    table_place(t, h);
    return 0;
}

static int TokenTable_init(TokenTable *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"lookup", "mode", "limit", NULL};
    PyObject *lookup;
    int mode = 0;
    Py_ssize_t limit = 4000000;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|in", kwlist, &lookup, &mode, &limit))
        return -1;
    if (!PyCallable_Check(lookup)) {
        PyErr_SetString(PyExc_TypeError, "lookup must be callable");
        return -1;
    }
    if (mode != 0 && mode != 1) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0 (word) or 1 (whitespace)");
        return -1;
    }
    Py_XINCREF(lookup);
    Py_XSETREF(self->lookup, lookup);
    self->mode = mode;
    self->limit = limit < (Py_ssize_t)UINT32_MAX - 1 ? limit : (Py_ssize_t)UINT32_MAX - 1;
    table_free(self);
    PyMem_Free(self->arena);
    self->arena = NULL;
    self->arena_len = self->arena_cap = 0;
    self->n = 0;
    return index_build(self, 1 << 16);
}

static void TokenTable_dealloc(TokenTable *self) {
    Py_XDECREF(self->lookup);
    table_free(self);
    PyMem_Free(self->arena);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The id of text[start:start+n] with hash h (looked up, or asked of ``lookup`` and stored). */
static int token_id(TokenTable *t, PyObject *text, int kind, const void *data, Py_ssize_t start,
                    Py_ssize_t n, uint64_t h, int32_t *out) {
    Py_ssize_t mask = t->cap - 1;
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)mask);
    uint32_t k;
    while ((k = t->index[j]) != 0) {
        const Entry *e = &t->entries[k - 1];
        if (e->hash == h && e->len == n) {
            Py_ssize_t k = 0;
            if (e->off < 0) {
                while (k < n && e->small[k] == PyUnicode_READ(kind, data, start + k))
                    k++;
            } else {
                const Py_UCS4 *key = t->arena + e->off;
                while (k < n && key[k] == PyUnicode_READ(kind, data, start + k))
                    k++;
            }
            if (k == n) {
                *out = e->id;
                return 0;
            }
        }
        j = (j + 1) & mask;
    }
    PyObject *token = PyUnicode_Substring(text, start, start + n);
    if (!token)
        return -1;
    PyObject *res = PyObject_CallOneArg(t->lookup, token);
    Py_DECREF(token);
    if (!res)
        return -1;
    long v = PyLong_AsLong(res);
    Py_DECREF(res);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < -1 || v > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "lookup returned an id out of range");
        return -1;
    }
    *out = (int32_t)v;
    if (t->n < t->limit && table_insert(t, h, kind, data, start, n, (int32_t)v) < 0)
        return -1;
    return 0;
}

static PyObject *TokenTable_ids(TokenTable *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "text must be str");
        return NULL;
    }
    if (PyUnicode_READY(text) < 0)
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text);
    Py_ssize_t cap = 64, n_out = 0;
    int32_t *buf = PyMem_Malloc((size_t)cap * sizeof(int32_t));
    if (!buf)
        return PyErr_NoMemory();
    int mode = self->mode;
    Py_ssize_t i = 0;
    while (i < size) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (!is_token_char(mode, c)) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        uint64_t h = 1469598103934665603ULL; /* FNV-1a over the code points */
        while (i < size) {
            c = PyUnicode_READ(kind, data, i);
            if (!is_token_char(mode, c))
                break;
            h = (h ^ (uint64_t)c) * 1099511628211ULL;
            i++;
        }
        h = h ? h : 1;
        if (n_out == cap) {
            cap *= 2;
            int32_t *b = PyMem_Realloc(buf, (size_t)cap * sizeof(int32_t));
            if (!b) {
                PyMem_Free(buf);
                return PyErr_NoMemory();
            }
            buf = b;
        }
        if (token_id(self, text, kind, data, start, i - start, h, &buf[n_out]) < 0) {
            PyMem_Free(buf);
            return NULL;
        }
        n_out++;
    }
    PyObject *out = PyBytes_FromStringAndSize((const char *)buf, n_out * (Py_ssize_t)sizeof(int32_t));
    PyMem_Free(buf);
    return out;
}

static PyObject *TokenTable_len(TokenTable *self, PyObject *Py_UNUSED(ignored)) {
    return PyLong_FromSsize_t(self->n);
}

static PyMethodDef TokenTable_methods[] = {
    {"ids", (PyCFunction)TokenTable_ids, METH_O,
     "ids(text) -> bytes: native int32 ids of the tokens of text, in order (-1: dropped)."},
    {"size", (PyCFunction)TokenTable_len, METH_NOARGS, "Number of tokens remembered."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TokenTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.analysis._tokens.TokenTable",
    .tp_basicsize = sizeof(TokenTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "TokenTable(lookup, mode=0, limit=4000000): token → id table for bulk indexing.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)TokenTable_init,
    .tp_dealloc = (destructor)TokenTable_dealloc,
    .tp_methods = TokenTable_methods,
};

/* bag(text, mode, memo, fate=None): a query's words as a bag (query.parse_bag), in one pass over
 * the text. The tokens are split as TokenTable splits them (mode 0: \w+, 1: str.split()); each is
 * looked up in memo (surface -> token, a tuple whose item 1 is its term or None). A word not there
 * is analysed here when fate is given, (lowercase, min_length, stopwords or None, limit, make,
 * role) for an analyser without a stemmer (Analyzer._fate's steps: lowercased, "short" below
 * min_length, "stop" when its lowercase form is a stop word, else "ok" with the word as its term):
 * its token is make(surface, term, status, role), kept in memo while memo holds fewer than limit.
 * When every word has its token: (tokens, scored), the tuple of the tokens and the tuple of (term,
 * count) of the terms that are not None, in first-occurrence order. Else (a new word, no fate)
 * the list of the surface tokens (the caller makes the new ones' tokens). */

static PyObject *s_ok, *s_short, *s_stop, *s_lower;

/* The analysis of a new word (bag's fate), read once per call. */
typedef struct {
    int lowercase, direct;
    Py_ssize_t min_length, limit;
    PyObject *stop, *make, *role; /* borrowed from the fate tuple */
} Fate;

/* Whether make is a named tuple's class of four fields: a subtype of tuple with _fields of length
 * 4 (1), or not (0), or -1 with an exception. */
static int named_tuple4(PyObject *make) {
    if (!PyType_Check(make) || !PyType_IsSubtype((PyTypeObject *)make, &PyTuple_Type))
        return 0;
    PyObject *fields = PyObject_GetAttrString(make, "_fields");
    if (!fields) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = PyTuple_Check(fields) && PyTuple_GET_SIZE(fields) == 4;
    Py_DECREF(fields);
    return ok;
}

/* Fill f from fate (0), or raise TypeError (-1). */
static int read_fate(PyObject *fate, Fate *f) {
    if (!PyTuple_Check(fate) || PyTuple_GET_SIZE(fate) != 6 ||
        !PyLong_Check(PyTuple_GET_ITEM(fate, 1)) || !PyLong_Check(PyTuple_GET_ITEM(fate, 3)) ||
        (PyTuple_GET_ITEM(fate, 2) != Py_None && !PyAnySet_Check(PyTuple_GET_ITEM(fate, 2))) ||
        !PyCallable_Check(PyTuple_GET_ITEM(fate, 4))) {
        PyErr_SetString(PyExc_TypeError,
                        "bag: fate must be (lowercase, min_length, stopwords, limit, make, role)");
        return -1;
    }
    f->lowercase = PyObject_IsTrue(PyTuple_GET_ITEM(fate, 0));
    f->min_length = PyLong_AsSsize_t(PyTuple_GET_ITEM(fate, 1));
    f->stop = PyTuple_GET_ITEM(fate, 2);
    f->limit = PyLong_AsSsize_t(PyTuple_GET_ITEM(fate, 3));
    f->make = PyTuple_GET_ITEM(fate, 4);
    f->role = PyTuple_GET_ITEM(fate, 5);
    f->direct = named_tuple4(f->make);
    return f->lowercase < 0 || f->direct < 0 || PyErr_Occurred() ? -1 : 0;
}

/* make(surface, term, status, role): a named tuple's class of four fields (direct: see
 * named_tuple4) is filled here as its __new__ (tuple.__new__ over the fields) fills it, without
 * running that Python __new__ (~2.6 K instructions a new word); any other callable is called. */
static PyObject *make_token(PyObject *make, int direct, PyObject *surface, PyObject *term,
                            PyObject *status, PyObject *role) {
    if (!direct)
        return PyObject_CallFunctionObjArgs(make, surface, term, status, role, NULL);
    PyObject *tok = ((PyTypeObject *)make)->tp_alloc((PyTypeObject *)make, 4);
    if (!tok)
        return NULL;
    PyObject *items[4] = {surface, term, status, role};
    for (int i = 0; i < 4; i++)
        PyTuple_SET_ITEM(tok, i, Py_NewRef(items[i]));
    return tok;
}

/* The token of a surface not in memo, made as Analyzer._fate and query._new_tokens make it and
 * kept in memo (NULL with an exception set on error). */
static PyObject *new_token(PyObject *surface, PyObject *memo, const Fate *f) {
    PyObject *word = f->lowercase ? PyObject_CallMethodNoArgs(surface, s_lower) : Py_NewRef(surface);
    if (!word)
        return NULL;
    PyObject *term = word, *status = s_ok;
    if (PyUnicode_GET_LENGTH(word) < f->min_length) {
        term = Py_None;
        status = s_short;
    }
    else if (f->stop != Py_None) {
        PyObject *key = f->lowercase ? Py_NewRef(word) : PyObject_CallMethodNoArgs(word, s_lower);
        int in = key ? PySet_Contains(f->stop, key) : -1;
        Py_XDECREF(key);
        if (in < 0) {
            Py_DECREF(word);
            return NULL;
        }
        if (in) {
            term = Py_None;
            status = s_stop;
        }
    }
    PyObject *tok = make_token(f->make, f->direct, surface, term, status, f->role);
    Py_DECREF(word);
    if (tok && PyDict_GET_SIZE(memo) < f->limit && PyDict_SetItem(memo, surface, tok) < 0)
        Py_CLEAR(tok);
    return tok;
}

static PyObject *tokens_bag(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *text, *memo, *fate = Py_None;
    int mode;
    if (!PyArg_ParseTuple(args, "UiO!|O", &text, &mode, &PyDict_Type, &memo, &fate))
        return NULL;
    if (mode != 0 && mode != 1) {
        PyErr_SetString(PyExc_ValueError, "mode must be 0 (word) or 1 (whitespace)");
        return NULL;
    }
    Fate f = {0, 0, 0, 0, NULL, NULL, NULL};
    int analyse = fate != Py_None;
    if (analyse && read_fate(fate, &f) < 0)
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text), i = 0;
    PyObject *raw = PyList_New(0), *found = PyList_New(0), *counts = PyDict_New();
    PyObject *result = NULL;
    int all = 1;
    if (!raw || !found || !counts)
        goto done;
    while (i < size) {
        if (!is_token_char(mode, PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        while (i < size && is_token_char(mode, PyUnicode_READ(kind, data, i)))
            i++;
        PyObject *surface = PyUnicode_Substring(text, start, i);
        /* (the surfaces are kept only for the caller that may have to make tokens itself) */
        if (!surface || (!analyse && PyList_Append(raw, surface) < 0)) {
            Py_XDECREF(surface);
            goto done;
        }
        PyObject *tok = all ? PyDict_GetItemWithError(memo, surface) : NULL; /* borrowed */
        if (tok) {
            Py_INCREF(tok); /* (a reference of its own before any allocation) */
        }
        else if (!PyErr_Occurred() && analyse) {
            tok = new_token(surface, memo, &f);
        }
        Py_DECREF(surface);
        if (!tok) {
            if (PyErr_Occurred())
                goto done;
            all = 0; /* a new word: only the surfaces from here on */
            continue;
        }
        if (!PyTuple_Check(tok) || PyTuple_GET_SIZE(tok) < 2) {
            Py_DECREF(tok);
            PyErr_SetString(PyExc_TypeError, "bag: memo values must be tokens");
            goto done;
        }
        int appended = PyList_Append(found, tok);
        Py_DECREF(tok); /* (found holds it) */
        if (appended < 0)
            goto done;
        PyObject *term = PyTuple_GET_ITEM(tok, 1);
        if (term == Py_None)
            continue;
        PyObject *c = PyDict_GetItemWithError(counts, term);
        if (!c && PyErr_Occurred())
            goto done;
        long n = c ? PyLong_AsLong(c) + 1 : 1;
        PyObject *nc = PyLong_FromLong(n);
        if (!nc || PyDict_SetItem(counts, term, nc) < 0) {
            Py_XDECREF(nc);
            goto done;
        }
        Py_DECREF(nc);
    }
    if (!all) {
        result = Py_NewRef(raw);
        goto done;
    }
    PyObject *tokens = PyList_AsTuple(found);
    PyObject *scored = tokens ? PyTuple_New(PyDict_GET_SIZE(counts)) : NULL;
    if (!scored) {
        Py_XDECREF(tokens);
        goto done;
    }
    Py_ssize_t pos = 0, j = 0;
    PyObject *key, *value;
    while (PyDict_Next(counts, &pos, &key, &value)) {
        PyObject *pair = PyTuple_Pack(2, key, value);
        if (!pair) {
            Py_DECREF(tokens);
            Py_DECREF(scored);
            goto done;
        }
        PyTuple_SET_ITEM(scored, j++, pair);
    }
    result = PyTuple_Pack(2, tokens, scored);
    Py_DECREF(tokens);
    Py_DECREF(scored);
done:
    Py_XDECREF(raw);
    Py_XDECREF(found);
    Py_XDECREF(counts);
    return result;
}

static PyMethodDef module_methods[] = {
    {"bag", (PyCFunction)tokens_bag, METH_VARARGS,
     "bag(text, mode, memo, fate=None) -> (tokens, scored), or the list of surface tokens when "
     "one is not in memo and no fate is given: a query's bag of words in one pass (see the "
     "source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, .m_name = "_tokens", .m_doc = "Token → id tables for bulk indexing; a query's bag of words.", .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__tokens(void) {
    if (PyType_Ready(&TokenTableType) < 0)
        return NULL;
    s_ok = PyUnicode_InternFromString("ok");
    s_short = PyUnicode_InternFromString("short");
    s_stop = PyUnicode_InternFromString("stop");
    s_lower = PyUnicode_InternFromString("lower");
    if (!s_ok || !s_short || !s_stop || !s_lower)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&TokenTableType);
    if (PyModule_AddObject(m, "TokenTable", (PyObject *)&TokenTableType) < 0) {
        Py_DECREF(&TokenTableType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
