/* Parts: one term's postings in one segment decoded and weighted once, for the exhaustive path.
 *
 * The exhaustive traversal adds qw * T[dl_index[d]][tf] (or the overflow value) for every
 * posting; everything but qw depends on the (PostingList, Table) pair only, so terms that recur
 * across queries (an evaluation run's "of", "the", "in") need not be decoded and looked up again.
 * A Parts is made (by Python, with the GIL) for one PostingList and one Table, empty; the first
 * exhaustive search that meets it empty fills it while it decodes (without the GIL), and later
 * ones read its docnos and tf parts instead of the blocks: the very numbers the decoding gives,
 * so `acc[d] += qw * tp` stays bit for bit the same. A tf part is kept as its place in the
 * table (a 16-bit code when the table has fewer than 64 K places, as for passages: 6 bytes a
 * posting where a docno and a float64 took 12, so that a long query reads half the memory),
 * and read back as the very double the decoding looked up. Postings with a tf above the cap
 * carry an escape code; their values are copied from the term's overflow values when the
 * fill begins (parts_take) and found by position.
 *
 * Threads: the state goes EMPTY -> FILLING -> READY by atomic compare-and-swap; only the thread
 * that won the swap writes the arrays, a search that finds it FILLING decodes as if there were no
 * Parts, and READY is published with release order after the arrays are complete. A fill that
 * meets a broken block goes back to EMPTY (the search raises; nothing half-written is read). The
 * arrays are the object's own (Python cannot write to them): what was checked while decoding
 * stays true. Python's cache (topk.py) keeps them LRU-bounded in bytes and drops them with the
 * index. */
#include "topk.h"

/* Parts made with 32-bit codes whatever their table's size (parts_wide(): tests). */
static int parts_force_wide = 0;

PyObject *
topk_parts_wide(PyObject *Py_UNUSED(module), PyObject *args)
{
    int wide = -1;
    if (!PyArg_ParseTuple(args, "|p", &wide)) {
        return NULL;
    }
    int old = __atomic_load_n(&parts_force_wide, __ATOMIC_RELAXED);
    if (wide != -1) {
        __atomic_store_n(&parts_force_wide, wide, __ATOMIC_RELAXED);
    }
    return PyBool_FromLong(old);
}

static PyObject *
parts_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"postings", "table", NULL};
    PyObject *plo, *tobj;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!", kwlist, &PostingListType, &plo,
                                     &TableType, &tobj)) {
        return NULL;
    }
    PostingList *pl = as_posting_list(plo);
    if (!pl) {
        return NULL;
    }
    if (!((Table *)tobj)->ready) {
        PyErr_SetString(PyExc_ValueError, "a Table must be initialised");
        return NULL;
    }
    Parts *self = (Parts *)type->tp_alloc(type, 0);
    if (!self) {
        return NULL;
    }
    const Table *tb = (const Table *)tobj;
    Py_ssize_t n = pl->n ? pl->n : 1;
    /* the largest code, tf * rows + j for tf <= cap and j < rows, below 0xFFFF */
    self->cw = (Py_ssize_t)(tb->cap + 1) * tb->rows < (Py_ssize_t)0xFFFF &&
                       !__atomic_load_n(&parts_force_wide, __ATOMIC_RELAXED)
                   ? 2
                   : 4;
    self->docs = malloc(sizeof(int32_t) * (size_t)n);
    self->codes = malloc((size_t)self->cw * (size_t)n);
    self->ovf = malloc(sizeof(double) * (size_t)(pl->novf ? pl->novf : 1));
    if (!self->docs || !self->codes || !self->ovf) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    Py_INCREF(plo);
    Py_INCREF(tobj);
    self->pl = plo;
    self->table = tobj;
    self->n = pl->n;
    self->Tc = tb->Tc;
    self->rows = tb->rows;
    self->ovf_pos = pl->ovf_pos;
    self->novf = pl->novf;
    self->state = PARTS_EMPTY;
    return (PyObject *)self;
}

static void
parts_dealloc(Parts *self)
{
    free(self->docs);
    free(self->codes);
    free(self->ovf);
    Py_XDECREF(self->pl);
    Py_XDECREF(self->table);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
parts_nbytes(Parts *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->n * (Py_ssize_t)(sizeof(int32_t) + (size_t)self->cw) +
                              self->novf * (Py_ssize_t)sizeof(double));
}

static PyObject *
parts_filled(Parts *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(__atomic_load_n(&self->state, __ATOMIC_ACQUIRE) == PARTS_READY);
}

int
parts_fit(const Parts *p, const PostingList *pl)
{
    const PostingList *own = (const PostingList *)p->pl;
    return own == pl || (own->stream == pl->stream && own->blk_off == pl->blk_off &&
                         own->n == pl->n && own->nblk == pl->nblk && own->cap == pl->cap &&
                         own->shift == pl->shift && own->novf == pl->novf &&
                         own->dli_view.buf == pl->dli_view.buf && own->n_docs == pl->n_docs);
}

static PyObject *
parts_fits(Parts *self, PyObject *plo)
{
    PostingList *pl = as_posting_list(plo);
    if (!pl) {
        return NULL;
    }
    return PyBool_FromLong(parts_fit(self, pl));
}

static PyMethodDef parts_methods[] = {
    {"fits", (PyCFunction)parts_fits, METH_O,
     "fits(postings) -> whether postings are the list it was made for (the same stored blocks: a "
     "PostingList made again for the same term and segment fits)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef parts_getset[] = {
    {"nbytes", (getter)parts_nbytes, NULL, "bytes held (docnos, tf part codes, overflow parts)",
     NULL},
    {"filled", (getter)parts_filled, NULL, "whether a search has filled it", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PartsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.Parts",
    .tp_basicsize = sizeof(Parts),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Parts(postings, table): a PostingList's docnos and tf parts under one Table, "
              "filled by the first exhaustive search that uses it (pass it as a term's 7th item).",
    .tp_new = parts_new,
    .tp_dealloc = (destructor)parts_dealloc,
    .tp_getset = parts_getset,
    .tp_methods = parts_methods,
};

int
parts_claim(Parts *p)
{
    int expect = PARTS_EMPTY;
    return __atomic_compare_exchange_n(&p->state, &expect, PARTS_FILLING, 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
}

int
parts_ready(const Parts *p)
{
    return __atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == PARTS_READY;
}

/* The smallest tf part of p's postings (+inf: none), from its codes and overflow values. */
static double
parts_minimum(const Parts *p)
{
    double m = INFINITY;
    const double *Tc = p->Tc;
    if (p->cw == 2) {
        const uint16_t *cd = (const uint16_t *)p->codes;
        for (Py_ssize_t i = 0; i < p->n; i++) {
            double t = cd[i] != PARTS_ESC ? Tc[cd[i]] : INFINITY;
            m = t < m ? t : m;
        }
    }
    else {
        const uint32_t *cd = (const uint32_t *)p->codes;
        for (Py_ssize_t i = 0; i < p->n; i++) {
            double t = cd[i] != PARTS_ESC ? Tc[cd[i]] : INFINITY;
            m = t < m ? t : m;
        }
    }
    for (Py_ssize_t a = 0; a < p->novf; a++) {
        m = p->ovf[a] < m ? p->ovf[a] : m;
    }
    return m;
}

void
parts_publish(Parts *p, int ok)
{
    if (ok) {
        p->tpmin = parts_minimum(p);
    }
    __atomic_store_n(&p->state, ok ? PARTS_READY : PARTS_EMPTY, __ATOMIC_RELEASE);
}

int
parts_take(Parts *p, const Cursor *c)
{
    if (!parts_claim(p)) {
        return 0;
    }
    if (p->novf) {
        memcpy(p->ovf, c->ovf_val, sizeof(double) * (size_t)p->novf);
    }
    return 1;
}

Py_ssize_t
parts_first_overflow(const Parts *p, Py_ssize_t pos)
{
    Py_ssize_t i = 0, z = p->novf;
    while (i < z) {
        Py_ssize_t mid = i + (z - i) / 2;
        if (p->ovf_pos[mid] < pos) {
            i = mid + 1;
        }
        else {
            z = mid;
        }
    }
    return i;
}

void
parts_values(const Parts *p, Py_ssize_t p0, Py_ssize_t m, double *out)
{
    const double *Tc = p->Tc;
    if (p->cw == 2) {
        const uint16_t *cd = (const uint16_t *)p->codes + p0;
        for (Py_ssize_t i = 0; i < m; i++) {
            out[i] = Tc[cd[i]]; /* (the escape reads +0.0: its value is put below) */
        }
    }
    else {
        const uint32_t *cd = (const uint32_t *)p->codes + p0;
        for (Py_ssize_t i = 0; i < m; i++) {
            out[i] = Tc[cd[i]];
        }
    }
    for (Py_ssize_t a = p->novf ? parts_first_overflow(p, p0) : 0;
         a < p->novf && p->ovf_pos[a] < p0 + m; a++) {
        out[p->ovf_pos[a] - p0] = p->ovf[a]; /* (every one escaped: block_codes) */
    }
}
