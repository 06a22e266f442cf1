/* count(lists, n_docs, allow, deny): documents in the union of the lists, allowed and not denied.
 *
 * When one list dominates, it is counted and the other lists' documents that no larger list
 * holds are added (probing the larger lists with skips); otherwise a bitmap of the union. */
#include "topk.h"

typedef struct {
    PyObject *lists; /* a tuple of PostingLists (ours: the caller's list may change) */
    Py_ssize_t n, ndocs;
    Py_buffer allow, deny;
    int have_allow, have_deny;
    Cursor *cs;
    int32_t *scratch;
    uint64_t *bits;
    int broken;
} Count;

/* The arguments: every list a ready PostingList built for n_docs documents. */
static int
read_count_arguments(Count *c, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"lists", "n_docs", "allow", "deny", NULL};
    PyObject *lists, *ndocs, *allow = Py_None, *deny = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|OO", kwlist, &lists, &ndocs, &allow,
                                     &deny)) {
        return -1;
    }
    if (get_count(ndocs, "n_docs", 0, INT32_MAX - 1, 0, &c->ndocs) < 0) {
        return -1;
    }
    c->lists = PySequence_Tuple(lists);
    if (!c->lists) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_SetString(PyExc_TypeError, "lists must be a sequence");
        }
        return -1;
    }
    c->n = PyTuple_GET_SIZE(c->lists);
    for (Py_ssize_t i = 0; i < c->n; i++) {
        PostingList *pl = as_posting_list(PyTuple_GET_ITEM(c->lists, i));
        if (!pl) {
            return -1;
        }
        if (pl->n_docs != c->ndocs) {
            PyErr_SetString(PyExc_ValueError, "PostingList was built for another n_docs");
            return -1;
        }
    }
    if (get_optional_buffer(allow, &c->allow, &c->have_allow, 'b', "allow") < 0 ||
        get_optional_buffer(deny, &c->deny, &c->have_deny, 'b', "deny") < 0) {
        return -1;
    }
    if ((c->have_allow && buf_len(&c->allow) < c->ndocs) ||
        (c->have_deny && buf_len(&c->deny) < c->ndocs)) {
        PyErr_SetString(PyExc_ValueError, "allow and deny must cover n_docs documents");
        return -1;
    }
    return 0;
}

static PostingList *
list_at(const Count *c, Py_ssize_t i)
{
    return (PostingList *)PyTuple_GET_ITEM(c->lists, i);
}

/* Count the dominant list, then each shorter list's documents that no longer list holds. */
static long long
count_by_probing(Count *c, const uint8_t *al, const uint8_t *de)
{
    long long count = 0;
    Cursor *cs = c->cs;
    Py_ssize_t n = c->n;
    for (Py_ssize_t i = 0; i < n && !c->broken; i++) {
        for (Py_ssize_t j = 0; j < i; j++) { /* probes of each pass ascend from the start */
            cur_rewind(&cs[j]);
        }
        for (cur_rewind(&cs[i]); cs[i].cur != END_DOC; advance(&cs[i])) {
            int32_t d = cs[i].cur;
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
    return count;
}

/* Count the union through a bitmap of n_docs bits. */
static long long
count_by_bitmap(Count *c, const uint8_t *al, const uint8_t *de)
{
    long long count = 0;
    uint64_t *bits = c->bits;
    for (Py_ssize_t i = 0; i < c->n && !c->broken; i++) {
        Cursor *cur = &c->cs[i];
        for (cur_rewind(cur); cur->cur != END_DOC; advance(cur)) {
            int32_t d = cur->cur;
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
    return count;
}

/* Cursors over the lists, by descending length (the order count_by_probing needs). */
static int
probing_cursors(Count *c)
{
    Py_ssize_t n1 = c->n ? c->n : 1;
    c->cs = malloc(sizeof(Cursor) * n1);
    c->scratch = malloc(sizeof(int32_t) * CURSOR_SCRATCH * n1);
    if (!c->cs || !c->scratch) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < c->n; i++) {
        cursor_init(&c->cs[i], list_at(c, i), &c->broken, c->scratch + CURSOR_SCRATCH * i);
    }
    for (Py_ssize_t a = 1; a < c->n; a++) {
        Cursor x = c->cs[a];
        Py_ssize_t b2 = a - 1;
        while (b2 >= 0 && c->cs[b2].n < x.n) {
            c->cs[b2 + 1] = c->cs[b2];
            b2--;
        }
        c->cs[b2 + 1] = x;
    }
    return 0;
}

PyObject *
topk_count(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    Count c;
    memset(&c, 0, sizeof(c));
    PyObject *result = NULL;
    if (read_count_arguments(&c, args, kwds) < 0) {
        goto done;
    }
    const uint8_t *al = c.have_allow ? (const uint8_t *)c.allow.buf : NULL;
    const uint8_t *de = c.have_deny ? (const uint8_t *)c.deny.buf : NULL;
    Py_ssize_t total = 0, largest = 0;
    for (Py_ssize_t i = 0; i < c.n; i++) {
        Py_ssize_t m = list_at(&c, i)->n;
        total += m;
        largest = m > largest ? m : largest;
    }
    long long count = 0;
    if (probing_cursors(&c) < 0) {
        goto done;
    }
    if (c.n == 0) {
        count = 0;
    }
    else if ((total - largest) * 12 < total) {
        Py_BEGIN_ALLOW_THREADS
        count = count_by_probing(&c, al, de);
        Py_END_ALLOW_THREADS
    }
    else {
        Py_ssize_t words = (c.ndocs + 63) / 64;
        c.bits = calloc(words ? words : 1, sizeof(uint64_t));
        if (!c.bits) {
            PyErr_NoMemory();
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        count = count_by_bitmap(&c, al, de);
        Py_END_ALLOW_THREADS
    }
    if (c.broken) {
        PyErr_SetString(PyExc_ValueError, CHANGED_POSTINGS);
        goto done;
    }
    result = PyLong_FromLongLong(count);
done:
    if (c.have_allow) {
        PyBuffer_Release(&c.allow);
    }
    if (c.have_deny) {
        PyBuffer_Release(&c.deny);
    }
    free(c.bits);
    free(c.cs);
    free(c.scratch);
    Py_XDECREF(c.lists);
    return result;
}
