/* Table: a variant's tf-part table T and its bound table U, checked once (see topk.h).
 *
 * Pruning is exact only if U bounds T and is monotone (non-decreasing in tf, non-increasing down
 * the length rows), and negative weights are bounded by 0 only if T >= 0: a Table checks all of
 * it when it is made, and holds read-only buffers so that it stays true. search() also accepts
 * plain (T, U) arrays, checked on every call. */
#include "topk.h"

int
check_tables(const double *T, const double *U, Py_ssize_t rows, int cap)
{
    Py_ssize_t stride = (Py_ssize_t)cap + 1;
    for (Py_ssize_t j = 0; j < rows; j++) {
        const double *t = T + j * stride, *u = U + j * stride;
        for (int tf = 1; tf <= cap; tf++) {
            if (!isfinite(t[tf]) || t[tf] < 0.0) {
                PyErr_Format(PyExc_ValueError,
                             "table: tf parts must be finite and non-negative (row %zd, tf %d)",
                             j, tf);
                return -1;
            }
            if (!isfinite(u[tf]) || u[tf] < t[tf]) {
                PyErr_Format(PyExc_ValueError,
                             "bound table: must be finite and at least the table (row %zd, tf %d)",
                             j, tf);
                return -1;
            }
            if ((tf > 1 && u[tf] < u[tf - 1]) || (j > 0 && u[tf] > u[tf - stride])) {
                PyErr_Format(PyExc_ValueError,
                             "bound table: must not decrease with tf nor increase down the rows "
                             "(row %zd, tf %d)",
                             j, tf);
                return -1;
            }
        }
    }
    return 0;
}

double
table_min(const double *T, Py_ssize_t rows, int cap)
{
    Py_ssize_t stride = (Py_ssize_t)cap + 1;
    double m = INFINITY;
    for (Py_ssize_t j = 0; j < rows; j++) {
        for (int tf = 1; tf <= cap; tf++) {
            m = T[j * stride + tf] < m ? T[j * stride + tf] : m;
        }
    }
    return m;
}

/* A copy of rows of cap + 1 numbers by column: out[tf * rows + j] = a[j * (cap + 1) + tf], with
 * column 0 (tf 0: never a posting's) +0.0, so that a Parts' escape code (0) reads a +0.0. */
static double *
by_column(const double *a, Py_ssize_t rows, int cap)
{
    Py_ssize_t w = (Py_ssize_t)cap + 1;
    if (!product_fits(rows, w, sizeof(double))) {
        return NULL;
    }
    double *out = malloc(sizeof(double) * (size_t)(rows * w));
    if (!out) {
        return NULL;
    }
    for (Py_ssize_t j = 0; j < rows; j++) {
        for (Py_ssize_t tf = 0; tf < w; tf++) {
            out[tf * rows + j] = tf ? a[j * w + tf] : 0.0;
        }
    }
    return out;
}

static void
Table_dealloc(Table *self)
{
    if (self->Uc != self->Tc) {
        free(self->Uc);
    }
    free(self->Tc);
    if (self->have_t) {
        PyBuffer_Release(&self->t_view);
    }
    if (self->have_u) {
        PyBuffer_Release(&self->u_view);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
read_only(Py_buffer *view, const char *what)
{
    if (!view->readonly) {
        PyErr_Format(PyExc_ValueError,
                     "%s must be read-only (a checked table must not change): set "
                     "array.flags.writeable = False",
                     what);
        return -1;
    }
    return 0;
}

static int
Table_init(Table *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"values", "bounds", "cap", NULL};
    PyObject *t_obj, *u_obj = Py_None, *cap_obj = NULL;
    Py_ssize_t cap = 32;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO", kwlist, &t_obj, &u_obj, &cap_obj)) {
        return -1;
    }
    if (self->have_t) {
        PyErr_SetString(PyExc_RuntimeError, "Table is already initialised");
        return -1;
    }
    if (cap_obj && get_count(cap_obj, "cap", 1, MAX_CAP, 0, &cap) < 0) {
        return -1;
    }
    if (get_buffer(t_obj, &self->t_view, 'd', "values") < 0) {
        return -1;
    }
    self->have_t = 1;
    if (read_only(&self->t_view, "values") < 0) {
        return -1;
    }
    Py_ssize_t len = buf_len(&self->t_view);
    if (len == 0 || len % (cap + 1)) {
        PyErr_Format(PyExc_ValueError, "values: expected rows of cap + 1 = %zd numbers", cap + 1);
        return -1;
    }
    self->T = self->U = (const double *)self->t_view.buf;
    if (u_obj != Py_None && u_obj != t_obj) {
        if (get_buffer(u_obj, &self->u_view, 'd', "bounds") < 0) {
            return -1;
        }
        self->have_u = 1;
        if (read_only(&self->u_view, "bounds") < 0) {
            return -1;
        }
        if (buf_len(&self->u_view) != len) {
            PyErr_SetString(PyExc_ValueError, "bounds: not the size of values");
            return -1;
        }
        self->U = (const double *)self->u_view.buf;
    }
    self->rows = len / (cap + 1);
    self->cap = (int)cap;
    if (check_tables(self->T, self->U, self->rows, self->cap) < 0) {
        return -1;
    }
    self->Tc = by_column(self->T, self->rows, self->cap);
    self->Uc = self->U == self->T ? self->Tc : by_column(self->U, self->rows, self->cap);
    if (!self->Tc || !self->Uc) {
        PyErr_NoMemory();
        return -1;
    }
    self->tmin = table_min(self->T, self->rows, self->cap);
    self->ready = 1;
    return 0;
}

static PyObject *
Table_rows(Table *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->ready ? self->rows : 0);
}

static PyObject *
Table_cap(Table *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLong(self->cap);
}

static PyGetSetDef Table_getset[] = {
    {"rows", (getter)Table_rows, NULL, "rows (distinct document lengths)", NULL},
    {"cap", (getter)Table_cap, NULL, "tf cap (row width - 1)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bm25desk.engine.scoring._topk.Table",
    .tp_basicsize = sizeof(Table),
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Table(values, bounds=None, cap=32): a tf-part table (rows of cap + 1 float64, "
              "column 0 unused) and its bound table (None: the table itself), read-only "
              "buffers checked once: finite, >= 0, bounds >= values and monotone.",
    .tp_getset = Table_getset,
    .tp_init = (initproc)Table_init,
    .tp_new = PyType_GenericNew,
};
