/*
 * interface.c — the array interface protocols' dicts
 * (__cuda_array_interface__, __array_interface__): a typestr as a dtype, and
 * a dict as a uk_array with the stream (CAI v3) and read-only flag it gives.
 */
#include "pyukern.h"

/* Interned keys of the dicts, looked up on every call. */
static PyObject *str_shape, *str_data, *str_strides, *str_mask, *str_typestr, *str_stream;

int pyk_interface_init(void) {
  struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&str_shape, "shape"},     {&str_data, "data"},       {&str_strides, "strides"},
               {&str_mask, "mask"},       {&str_typestr, "typestr"}, {&str_stream, "stream"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text))) return -1;
  return 0;
}

/* "<f4", "|b1", "<c16" -> dtype. */
int pyk_typestr_dtype(PyObject *ts, uk_dtype *out) {
  if (!ts || !PyUnicode_Check(ts)) goto bad;
  Py_ssize_t n = PyUnicode_GetLength(ts);
  if (n < 3 || n > 4) goto bad;
  Py_UCS4 order = PyUnicode_ReadChar(ts, 0), k = PyUnicode_ReadChar(ts, 1);
  int size = 0;
  for (Py_ssize_t i = 2; i < n; i++) {
    Py_UCS4 d = PyUnicode_ReadChar(ts, i);
    if (d < '0' || d > '9') goto bad;
    size = size * 10 + (int)(d - '0');
  }
  if (order == '>' && size > 1) {
    PyErr_SetString(PyExc_TypeError, "big-endian arrays are not supported");
    return -1;
  }
  static const struct {
    char k;
    int size;
    uk_dtype t;
  } map[] = {{'b', 1, UK_BOOL},    {'i', 1, UK_INT8},    {'i', 2, UK_INT16},   {'i', 4, UK_INT32},
             {'i', 8, UK_INT64},   {'u', 1, UK_UINT8},   {'u', 2, UK_UINT16},  {'u', 4, UK_UINT32},
             {'u', 8, UK_UINT64},  {'f', 2, UK_FLOAT16}, {'f', 4, UK_FLOAT32}, {'f', 8, UK_FLOAT64},
             {'c', 8, UK_COMPLEX64}, {'c', 16, UK_COMPLEX128}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if ((Py_UCS4)map[i].k == k && map[i].size == size) {
      *out = map[i].t;
      return 0;
    }
bad:
  PyErr_Format(PyExc_TypeError, "unsupported array typestr %R", ts ? ts : Py_None);
  return -1;
}

static int int_tuple(PyObject *t, const char *what, int64_t *vals, int *n) {
  if (!PyTuple_Check(t)) {
    PyErr_Format(PyExc_TypeError, "array interface: %s must be a tuple", what);
    return -1;
  }
  Py_ssize_t len = PyTuple_Size(t);
  if (len > UK_MAX_NDIM) {
    PyErr_Format(PyExc_ValueError, "arrays have at most %d dimensions, got %zd", UK_MAX_NDIM, len);
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    long long v = PyLong_AsLongLong(PyTuple_GetItem(t, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    vals[i] = v;
  }
  *n = (int)len;
  return 0;
}

int pyk_interface_array(PyObject *d, uk_array *a, void **stream_out, unsigned char *readonly) {
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "array interface is not a dict");
    return -1;
  }
  PyObject *shape = PyDict_GetItem(d, str_shape), *data = PyDict_GetItem(d, str_data);
  PyObject *strides = PyDict_GetItem(d, str_strides), *mask = PyDict_GetItem(d, str_mask);
  if (!shape || !data) {
    PyErr_SetString(PyExc_TypeError, "array interface without shape or data");
    return -1;
  }
  if (mask && mask != Py_None) {
    PyErr_SetString(PyExc_TypeError, "masked arrays are not supported");
    return -1;
  }
  int ndim = 0;
  int64_t sh[UK_MAX_NDIM];
  if (int_tuple(shape, "shape", sh, &ndim) < 0 || pyk_typestr_dtype(PyDict_GetItem(d, str_typestr), &a->dtype) < 0)
    return -1;
  if (!PyTuple_Check(data) || PyTuple_Size(data) < 1) {
    PyErr_SetString(PyExc_TypeError, "array interface: data must be (pointer, read_only)");
    return -1;
  }
  unsigned long long ptr = PyLong_AsUnsignedLongLong(PyTuple_GetItem(data, 0));
  if (ptr == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  int ro = PyTuple_Size(data) > 1 ? PyObject_IsTrue(PyTuple_GetItem(data, 1)) : 0;
  if (ro < 0) return -1;
  *readonly = (unsigned char)ro;
  if (uk_array_init(a, ptr, a->dtype, ndim, sh) != UK_OK) {
    pyk_raise(UK_ERR_INVALID);
    return -1;
  }
  if (strides && strides != Py_None) {
    int ns = 0;
    if (int_tuple(strides, "strides", a->strides, &ns) < 0) return -1;
    if (ns != ndim) {
      PyErr_SetString(PyExc_ValueError, "array interface: strides and shape differ in length");
      return -1;
    }
  }
  PyObject *st = PyDict_GetItem(d, str_stream);
  if (st && st != Py_None) {
    unsigned long long s = PyLong_AsUnsignedLongLong(st);
    if (s == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    *stream_out = pyk_stream_from_int(s);
    return 1;
  }
  return 0;
}
