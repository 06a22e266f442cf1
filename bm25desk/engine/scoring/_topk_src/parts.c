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
#include "exhaustive.h"

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

/* Code width: 2 bytes when the table has fewer than 64 K places (the largest code, tf * rows + j
 * for tf <= cap and j < rows, below 0xFFFF), else 4. */
static int
code_width(const Table *tb)
{
    return (Py_ssize_t)(tb->cap + 1) * tb->rows < (Py_ssize_t)0xFFFF &&
                   !__atomic_load_n(&parts_force_wide, __ATOMIC_RELAXED)
               ? 2
               : 4;
}

/* A new Parts of list pl (held by holder: the PostingList itself, or the Segment whose views own
 * borrows) under table tobj: empty, its arrays allocated by the fill. */
static Parts *
parts_alloc(PyTypeObject *type, PyObject *holder, PyObject *tobj)
{
    Parts *self = (Parts *)type->tp_alloc(type, 0);
    if (!self) {
        return NULL;
    }
    const Table *tb = (const Table *)tobj;
    self->cw = code_width(tb);
    self->ovf = NULL;
    Py_INCREF(holder);
    Py_INCREF(tobj);
    self->pl = holder;
    self->table = tobj;
    self->Tc = tb->Tc;
    self->rows = tb->rows;
    self->fillable = 1;
    self->ref = 1; /* (a new entry is not the first to go) */
    self->tpmin = INFINITY;
    self->state = PARTS_EMPTY;
    self->tid = -1;
    self->umax = UINT64_MAX;
    return self;
}

/* Take the list's sizes; its overflow values from ovobj (None: copied when a fill begins, from
 * the search's). Returns -1 with an exception. */
static int
parts_take_list(Parts *self, const PostingList *pl, PyObject *ovobj)
{
    self->list = pl;
    self->n = pl->n;
    self->ovf_pos = pl->ovf_pos;
    self->novf = pl->novf;
    self->ovf = pl->novf ? malloc(sizeof(double) * (size_t)pl->novf) : NULL;
    if (pl->novf && !self->ovf) {
        PyErr_NoMemory();
        return -1;
    }
    if (ovobj != Py_None) {
        PyObject *r = parts_set_overflow(self, ovobj);
        if (!r) {
            return -1;
        }
        Py_DECREF(r);
    }
    return 0;
}

static PyObject *
parts_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"postings", "table", "overflow", "fill", NULL};
    PyObject *plo, *tobj, *ovobj = Py_None;
    int fill = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!|Op", kwlist, &PostingListType, &plo,
                                     &TableType, &tobj, &ovobj, &fill)) {
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
    Parts *self = parts_alloc(type, plo, tobj);
    if (!self) {
        return NULL;
    }
    self->fillable = fill;
    if (parts_take_list(self, pl, ovobj) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

Parts *
parts_stored(PyObject *sobj, Py_ssize_t tid, PyObject *tobj, int fill)
{
    const SegView *sv = (const SegView *)sobj;
    const Table *tb = (const Table *)tobj;
    if (!sv->ready || sv->nviews != 9) {
        PyErr_SetString(PyExc_ValueError, "parts: the segment has no stored blocks");
        return NULL;
    }
    if (!tb->ready || tb->cap != sv->cap) {
        PyErr_SetString(PyExc_ValueError, "table does not fit the posting list (cap)");
        return NULL;
    }
    Parts *self = parts_alloc(&PartsType, sobj, tobj);
    if (!self) {
        return NULL;
    }
    self->fillable = fill;
    self->tid = tid;
    if (stored_list(&self->own, sv->v, tid, &sv->dli, sv->dli_w, sv->cap, sv->shift, NULL) < 0 ||
        parts_take_list(self, &self->own, Py_None) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return self;
}

PyObject *
topk_parts(PyObject *Py_UNUSED(module), PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"segment", "tid", "table", "fill", NULL};
    PyObject *sobj, *tobj;
    Py_ssize_t tid;
    int fill = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!nO!|p", kwlist, &SegViewType, &sobj, &tid,
                                     &TableType, &tobj, &fill)) {
        return NULL;
    }
    return (PyObject *)parts_stored(sobj, tid, tobj, fill);
}

/* Note a new entry in added: its map, word and bytes, three items of a flat list (no tuple a
 * term: see postings_cache.py's account for what they cost). Returns -1 with an exception. */
static int
fresh_note(PyObject *added, PyObject *map, PyObject *word, Py_ssize_t bytes)
{
    PyObject *size = PyLong_FromSsize_t(bytes);
    int bad = !size || PyList_Append(added, map) < 0 || PyList_Append(added, word) < 0 ||
              PyList_Append(added, size) < 0;
    Py_XDECREF(size);
    return bad ? -1 : 0;
}

PyObject *
parts_fresh(PyObject *sobj, PyObject *memo, PyObject *word, PyObject *tobj, PyObject *map,
            const Fresh *f)
{
    const SegView *sv = (const SegView *)sobj;
    if (sv->nviews != 9 || !PyDict_Check(memo)) {
        return NULL;
    }
    PyObject *tido = PyDict_GetItemWithError(memo, word);
    if (!tido || !PyLong_Check(tido)) {
        return NULL;
    }
    Py_ssize_t tid = PyLong_AsSsize_t(tido);
    if (tid == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Parts *pa = tid >= 0 ? parts_stored(sobj, tid, tobj, 1) : NULL;
    if (tid >= 0 && !pa) {
        return NULL;
    }
    if (pa && (pa->n >= f->short_n || pa->novf)) {
        Py_DECREF(pa);
        return NULL;
    }
    PyObject *entry = pa && pa->n ? (PyObject *)pa : Py_None;
    Py_ssize_t bytes = f->entry_bytes + (entry == Py_None ? 0 : pa->n * (4 + (Py_ssize_t)pa->cw));
    int bad = PyDict_SetItem(map, word, entry) < 0 || fresh_note(f->added, map, word, bytes) < 0;
    Py_INCREF(entry);
    Py_XDECREF(pa);
    if (bad) {
        Py_DECREF(entry);
        return NULL;
    }
    return entry;
}

PyObject *
topk_fresh(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *sobj, *memo, *tobj, *map, *words;
    Fresh f = {NULL, NULL, 0, 0};
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!nnO!", &SegViewType, &sobj, &PyDict_Type, &memo,
                          &TableType, &tobj, &PyDict_Type, &map, &PyList_Type, &words,
                          &f.short_n, &f.entry_bytes, &PyList_Type, &f.added)) {
        return NULL;
    }
    if (!((Table *)tobj)->ready) {
        PyErr_SetString(PyExc_ValueError, "a Table must be initialised");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(words);
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *word = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "fresh: words must be str");
            Py_CLEAR(out);
            break;
        }
        PyObject *entry = PyDict_GetItemWithError(map, word); /* (made meanwhile: kept) */
        entry = entry ? Py_NewRef(entry)
                      : PyErr_Occurred() ? NULL : parts_fresh(sobj, memo, word, tobj, map, &f);
        if (!entry && PyErr_Occurred()) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, entry ? entry : Py_NewRef(Py_NotImplemented));
    }
    return out;
}

static void
parts_dealloc(Parts *self)
{
    free(self->docs); /* (and the codes: one allocation) */
    free(self->ovf);
    if (self->list == &self->own) {
        stored_list_free(&self->own);
    }
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

static PyObject *
parts_n(Parts *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->n);
}

static PyObject *
parts_novf(Parts *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->novf);
}

static PyObject *
parts_ovf_lo(Parts *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->list->ovf_lo);
}

static PyObject *
parts_fillable(Parts *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->fillable);
}

/* set_overflow(values): the tf parts of its postings with tf > cap (float64, one each, finite and
 * >= 0), once, before any search reads it. */
PyObject *
parts_set_overflow(Parts *self, PyObject *obj)
{
    Py_buffer v;
    if (self->have_ovf || __atomic_load_n(&self->state, __ATOMIC_ACQUIRE) != PARTS_EMPTY) {
        PyErr_SetString(PyExc_ValueError, "parts: the overflow values are set already");
        return NULL;
    }
    if (get_buffer(obj, &v, 'd', "overflow values") < 0) {
        return NULL;
    }
    const double *x = (const double *)v.buf;
    int ok = buf_len(&v) == self->novf;
    for (Py_ssize_t i = 0; ok && i < self->novf; i++) {
        ok = isfinite(x[i]) && x[i] >= 0.0;
    }
    if (ok && self->novf) {
        memcpy(self->ovf, x, sizeof(double) * (size_t)self->novf);
    }
    PyBuffer_Release(&v);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        "overflow values: one finite tf part >= 0 per posting with tf > cap");
        return NULL;
    }
    self->have_ovf = 1;
    Py_RETURN_NONE;
}

/* take_ref() -> whether a search read it since the last call (the cache's second chance). */
static PyObject *
parts_take_ref(Parts *self, PyObject *Py_UNUSED(ignored))
{
    int was = self->ref;
    self->ref = 0;
    return PyBool_FromLong(was);
}

int
parts_fit(const Parts *p, const PostingList *pl)
{
    const PostingList *own = p->list;
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
    {"set_overflow", (PyCFunction)parts_set_overflow, METH_O,
     "set_overflow(values): the tf parts (float64) of its postings with tf > cap, once"},
    {"take_ref", (PyCFunction)parts_take_ref, METH_NOARGS,
     "take_ref() -> whether exhaustive_query() read it since the last call (and clear that)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef parts_getset[] = {
    {"nbytes", (getter)parts_nbytes, NULL, "bytes held (docnos, tf part codes, overflow parts)",
     NULL},
    {"filled", (getter)parts_filled, NULL, "whether a search has filled it", NULL},
    {"n", (getter)parts_n, NULL, "number of postings", NULL},
    {"n_overflow", (getter)parts_novf, NULL, "postings with tf > cap", NULL},
    {"overflow_from", (getter)parts_ovf_lo, NULL,
     "index of its first overflow posting in the segment's overflow arrays (stored lists)", NULL},
    {"fillable", (getter)parts_fillable, NULL, "whether a search may fill it (else: decoded)",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject PartsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.Parts",
    .tp_basicsize = sizeof(Parts),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Parts(postings, table, overflow=None, fill=True): a PostingList's docnos and tf "
              "parts under one Table, filled by the first exhaustive search that uses it (pass it "
              "as a term's 7th item; overflow: the tf parts of its postings with tf > cap, else "
              "taken from the search's; fill=False: never filled, decoded by each search). "
              "parts(segment, tid, table) makes one over a Segment's stored blocks.",
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
    if (ok) { /* a bound below its tf parts: the table's smallest entry, when positive */
        double m = ((const Table *)p->table)->tmin;
        for (Py_ssize_t a = 0; m > 0.0 && a < p->novf; a++) {
            m = p->ovf[a] < m ? p->ovf[a] : m;
        }
        p->tpmin = m > 0.0 ? m : parts_minimum(p);
    }
    __atomic_store_n(&p->state, ok ? PARTS_READY : PARTS_EMPTY, __ATOMIC_RELEASE);
}

int
parts_take(Parts *p, const Cursor *c)
{
    if (!p->fillable || !parts_claim(p)) {
        return 0;
    }
    if (!p->docs) { /* (allocated once: a fill that met damage leaves them for the next) */
        size_t n = (size_t)(p->n ? p->n : 1);
        int32_t *docs = malloc((sizeof(int32_t) + (size_t)p->cw) * n); /* the codes after them */
        if (!docs) {
            parts_publish(p, 0);
            return 0;
        }
        p->docs = docs;
        p->codes = docs + n;
    }
    if (p->novf && !p->have_ovf) {
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

/* The largest of U[j(d), tf] over the frontier entries (tf, docno d) at p (n entries of
 * BLK_ENTRY bytes, from the segment) or in tfs/docs (a list's own), and *ok = 0 when an entry
 * is out of range. */
static double
frontier_max(const Cursor *c, const uint8_t *p, const uint8_t *tfs, const int32_t *docs,
             Py_ssize_t n, int *ok)
{
    double m = 0.0;
    for (Py_ssize_t e = 0; e < n; e++) {
        int tf = p ? p[e * BLK_ENTRY] : tfs[e];
        int32_t d = p ? (int32_t)blk_load32(p + e * BLK_ENTRY + 1) : docs[e];
        if (tf < 1 || tf > c->cap || d < 0 || d >= c->ndocs) {
            *ok = 0;
            return 0.0;
        }
        int32_t j = dli_at(c->dli, c->dli_w, d);
        if (j < 0 || (Py_ssize_t)j >= c->rows) {
            *ok = 0;
            return 0.0;
        }
        double t = c->U[(Py_ssize_t)j * c->stride + tf * c->tstride];
        m = t > m ? t : m;
    }
    return m;
}

/* The term's frontier in segment sv (several blocks): stored beside its blocks, found by tid. */
static double
segment_frontier_max(const SegView *sv, Py_ssize_t tid, const Cursor *c, int *ok)
{
    int64_t a, z;
    if (stored_frontier_at(tid, &sv->v[6], &sv->v[7], &sv->v[8], &a, &z) < 0) {
        *ok = 0;
        return 0.0;
    }
    return frontier_max(c, (const uint8_t *)sv->v[8].buf + a, NULL, NULL, (z - a) / BLK_ENTRY, ok);
}

double
parts_umax(Parts *pa, const Cursor *c)
{
    uint64_t bits = __atomic_load_n(&pa->umax, __ATOMIC_RELAXED);
    double m;
    if (bits != UINT64_MAX) {
        memcpy(&m, &bits, sizeof(m));
        return m;
    }
    const PostingList *pl = pa->list;
    int ok = 1;
    if (pl->n_tprof >= 0) {
        m = frontier_max(c, NULL, pl->tprof_tf, pl->tprof_doc, pl->n_tprof, &ok);
    }
    else if (pl->nblk <= 1) { /* one block: its own frontier, as blk_max reads it */
        Cursor one = *c;
        int broken = 0;
        double nan = NAN;
        one.broken = &broken;
        one.bub = &nan;
        one.ovf_val = NULL; /* (folded in below) */
        m = pl->nblk ? blk_max(&one, 0) : 0.0;
        ok = !broken;
    }
    else if (pa->tid >= 0 && Py_IS_TYPE(pa->pl, &SegViewType)) {
        m = segment_frontier_max((const SegView *)pa->pl, pa->tid, c, &ok);
    }
    else {
        ok = 0;
    }
    if (!ok || (pa->novf && !pa->ovf)) {
        return NAN; /* (damage is the traversal's to find and report) */
    }
    for (Py_ssize_t i = 0; i < pa->novf; i++) {
        m = pa->ovf[i] > m ? pa->ovf[i] : m;
    }
    memcpy(&bits, &m, sizeof(bits));
    __atomic_store_n(&pa->umax, bits, __ATOMIC_RELAXED);
    return m;
}
