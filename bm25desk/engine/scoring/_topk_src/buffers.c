/* Reading and checking the kernel's arguments: typed buffers, counts, sizes (see topk.h). */
#include "topk.h"

static const char *
kind_name(char kind)
{
    switch (kind) {
    case 'i':
        return "int32";
    case 'q':
        return "int64";
    case 'd':
        return "float64";
    case 'x':
        return "uint32 or int64";
    default:
        return "bool/uint8";
    }
}

static int
format_matches(const Py_buffer *view, char kind)
{
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    if (f[0] == 0 || f[1] != 0) {
        return 0;
    }
    switch (kind) {
    case 'i':
        return view->itemsize == 4 && (*f == 'i' || (*f == 'l' && sizeof(long) == 4));
    case 'q':
        return view->itemsize == 8 && (*f == 'q' || (*f == 'l' && sizeof(long) == 8));
    case 'd':
        return view->itemsize == 8 && *f == 'd';
    case 'x': /* a segment's offsets or counts: uint32 (format 4, where they fit) or int64 */
        return (view->itemsize == 4 && (*f == 'I' || (*f == 'L' && sizeof(long) == 4))) ||
               (view->itemsize == 8 && (*f == 'q' || (*f == 'l' && sizeof(long) == 8)));
    default:
        return view->itemsize == 1 && (*f == '?' || *f == 'B' || *f == 'b');
    }
}

int
get_buffer(PyObject *obj, Py_buffer *view, char kind, const char *what)
{
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a %s array, not %.80s", what,
                     kind_name(kind), Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        /* numpy says "ndarray is not C-contiguous" (a ValueError): name the argument. */
        if (PyErr_ExceptionMatches(PyExc_BufferError) ||
            PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: expected a C-contiguous %s array", what,
                         kind_name(kind));
        }
        return -1;
    }
    if (!format_matches(view, kind)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a C-contiguous %s buffer (got format %s)",
                     what, kind_name(kind), view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

int
get_optional_buffer(PyObject *obj, Py_buffer *view, int *have, char kind, const char *what)
{
    *have = 0;
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (get_buffer(obj, view, kind, what) < 0) {
        return -1;
    }
    *have = 1;
    return 0;
}

int
get_count(PyObject *obj, const char *what, Py_ssize_t lo, Py_ssize_t hi, int clamp,
          Py_ssize_t *out)
{
    if (PyBool_Check(obj) || !PyIndex_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an integer, not %.80s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t v = PyNumber_AsSsize_t(obj, NULL); /* clamped to the Py_ssize_t range */
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (clamp && v == PY_SSIZE_T_MAX) {
        *out = hi; /* a count beyond any size: "all of them" */
        return 0;
    }
    if (v < lo || v > hi || v == PY_SSIZE_T_MAX || v == PY_SSIZE_T_MIN) {
        if (hi == PY_SSIZE_T_MAX) {
            PyErr_Format(PyExc_ValueError, "%s must be at least %zd", what, lo);
        }
        else {
            PyErr_Format(PyExc_ValueError, "%s must be in %zd..%zd", what, lo, hi);
        }
        return -1;
    }
    *out = v;
    return 0;
}

int
product_fits(Py_ssize_t n, Py_ssize_t m, Py_ssize_t size)
{
    if (n < 0 || m < 0 || size <= 0) {
        return 0;
    }
    if (n == 0 || m == 0) {
        return 1;
    }
    return n <= PY_SSIZE_T_MAX / m / size;
}

int
get_dli_buffer(PyObject *obj, Py_buffer *view, int *width)
{
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "dl_index: expected a uint8, uint16 or int32 array, not %.80s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        if (PyErr_ExceptionMatches(PyExc_BufferError) ||
            PyErr_ExceptionMatches(PyExc_ValueError)) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "dl_index: expected a C-contiguous array");
        }
        return -1;
    }
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') {
        f++;
    }
    int ok = f[0] && !f[1] &&
             ((view->itemsize == 1 && *f == 'B') || (view->itemsize == 2 && *f == 'H') ||
              (view->itemsize == 4 && (*f == 'i' || (*f == 'l' && sizeof(long) == 4))));
    if (!ok) {
        PyErr_Format(PyExc_TypeError,
                     "dl_index: expected a C-contiguous uint8, uint16 or int32 buffer (got format %s)",
                     view->format ? view->format : "B");
        PyBuffer_Release(view);
        return -1;
    }
    *width = (int)view->itemsize;
    return 0;
}
