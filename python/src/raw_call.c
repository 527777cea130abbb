/*
 * raw_call.c — the arguments of a RawKernel call (raw.c launches them).
 *
 * Without a declared signature they are packed as CuPy packs them: CUDA
 * arrays of any library -> their device pointer, None -> NULL, objects with
 * .ptr (cupy.cuda.MemoryPointer, TextureObject, SurfaceObject) -> that
 * 64-bit value, int -> int64, float -> float64, complex -> complex128,
 * bool -> bool, NumPy scalars and size-1 NumPy arrays -> their own bytes.
 * When the kernel's parameters are known from its cubin, the count must
 * match, and a Python float given for a 4-byte parameter is passed as
 * float32 (CuPy passes the low half of a double there).
 *
 * With a signature (RawKernel(..., signature=...), checked by
 * uk_function_set_signature) every argument is converted to its declared
 * type: Python scalars range-checked, NumPy scalars of exactly that dtype,
 * pointers from arrays, .ptr objects, ints (addresses) or None.
 *
 * ukern.In / Out / InOut wrap host NumPy arrays: device memory is
 * allocated, filled before the launch (In, InOut) on the launch stream,
 * copied back after it (Out, InOut), then freed; the call waits for the
 * stream before it returns.
 */
#include "pyukern.h"

#include <math.h>
#include <string.h>

static PyTypeObject *host_type; /* ukern._raw._HostArg, registered at import */

int pyk_raw_set_host_type(PyObject *tp) {
  if (!PyType_Check(tp)) {
    PyErr_SetString(PyExc_TypeError, "_set_host_arg_type takes a type");
    return -1;
  }
  Py_INCREF(tp);
  Py_XDECREF((PyObject *)host_type);
  host_type = (PyTypeObject *)tp;
  return 0;
}

void pyk_raw_args_init(pyk_raw_args *a) {
  a->n = 0;
  a->nhost = 0;
}

/* ---- host copies --------------------------------------------------------- */

static int add_host(pyk_raw_args *a, PyObject *o, unsigned char *slot) {
  PyObject *arr = PyObject_GetAttrString(o, "array");
  PyObject *dir = arr ? PyObject_GetAttrString(o, "_direction") : NULL;
  long d = dir ? PyLong_AsLong(dir) : -1;
  Py_XDECREF(dir);
  if (!arr || d < 1 || d > 3) {
    Py_XDECREF(arr);
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "malformed ukern.In/Out/InOut argument");
    return -1;
  }
  if (a->nhost == PYK_RAW_MAX_HOST) {
    PyErr_Format(PyExc_ValueError, "at most %d ukern.In/Out/InOut arguments in one call", PYK_RAW_MAX_HOST);
    return -1;
  }
  pyk_raw_host *h = &a->host[a->nhost];
  /* The wrapper checked contiguity, dtype and writability when made. */
  PyObject *ai = PyObject_GetAttrString(arr, "__array_interface__");
  PyObject *data = ai && PyDict_Check(ai) ? PyDict_GetItemString(ai, "data") : NULL; /* borrowed */
  PyObject *nbytes = PyObject_GetAttrString(arr, "nbytes");
  unsigned long long ptr = data && PyTuple_Check(data) && PyTuple_Size(data) == 2
                               ? PyLong_AsUnsignedLongLong(PyTuple_GetItem(data, 0)) : (unsigned long long)-1;
  long long len = nbytes ? PyLong_AsLongLong(nbytes) : -1;
  int ro = data && PyTuple_Check(data) && PyTuple_Size(data) == 2 ? PyObject_IsTrue(PyTuple_GetItem(data, 1)) : 1;
  Py_XDECREF(ai);
  Py_XDECREF(nbytes);
  if (PyErr_Occurred() || len < 0 || ptr == (unsigned long long)-1 || ((d & 2) && ro)) {
    Py_DECREF(arr);
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, (d & 2) && ro ? "ukern.Out/InOut: the array is read-only"
                                                      : "ukern.In/Out/InOut: the array has no data pointer");
    return -1;
  }
  h->array = arr;
  h->buf = (void *)(uintptr_t)ptr;
  h->len = (size_t)len;
  h->dir = (int)d;
  h->slot = slot;
  memset(&h->dev, 0, sizeof h->dev);
  a->nhost++;
  return 0;
}

int pyk_raw_copy_in(pyk_raw_args *a, PyObject *ctx, void *stream, int device) {
  for (int k = 0; k < a->nhost; k++) {
    pyk_raw_host *h = &a->host[k];
    int64_t n = (int64_t)h->len;
    uint64_t ptr = 0;
    if (n > 0) {
      uk_status st = uk_array_alloc(pyk_context_ptr(ctx), UK_UINT8, 1, &n, device, stream, &h->dev);
      if (st == UK_OK && (h->dir & 1)) st = uk_memcpy_htod_async(h->dev.data, h->buf, (size_t)n, stream);
      if (st != UK_OK) {
        pyk_raise(st);
        return -1;
      }
      ptr = h->dev.data;
    }
    memcpy(h->slot, &ptr, 8);
  }
  return 0;
}

uk_status pyk_raw_copy_out(pyk_raw_args *a, void *stream) {
  uk_status st = UK_OK;
  for (int k = 0; k < a->nhost && st == UK_OK; k++) {
    pyk_raw_host *h = &a->host[k];
    if ((h->dir & 2) && h->dev.data)
      st = uk_memcpy_dtoh_async(h->buf, h->dev.data, h->len, stream);
  }
  if (a->nhost > 0 && st == UK_OK) st = uk_stream_synchronize(stream);
  return st;
}

void pyk_raw_args_clear(pyk_raw_args *a, PyObject *ctx, void *stream) {
  for (int k = 0; k < a->nhost; k++) {
    pyk_raw_host *h = &a->host[k];
    if (h->dev.data) uk_array_free(pyk_context_ptr(ctx), &h->dev, stream);
    Py_DECREF(h->array);
  }
  a->nhost = 0;
}

/* The type's name for messages (new ref; never NULL unless out of memory). */
static PyObject *type_name(PyObject *o) {
  PyObject *n = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
  if (!n) {
    PyErr_Clear();
    n = PyUnicode_FromString("?");
  }
  return n;
}

/* ---- values -------------------------------------------------------------- */

/* IEEE binary16 / bfloat16 bits of v, rounded to nearest even. */
static uint16_t to_f16(double v) {
  float f = (float)v;
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds past 65504 */
  if (ax < 0x38800000u) { /* subnormal half: scale so the rounding is the FPU's */
    float s = fabsf(f) * 16777216.0f; /* 2^24: one half ulp becomes 1 */
    return (uint16_t)(sign | (uint32_t)nearbyintf(s));
  }
  uint32_t mant = ax + 0xfffu + ((ax >> 13) & 1u);
  return (uint16_t)(sign | ((mant - 0x38000000u) >> 13));
}
static uint16_t to_bf16(double v) {
  float f = (float)v;
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static int int_fits(long long v, uk_dtype t) {
  switch (t) {
  case UK_INT8: return v >= -128 && v <= 127;
  case UK_INT16: return v >= -32768 && v <= 32767;
  case UK_INT32: return v >= -2147483647LL - 1 && v <= 2147483647LL;
  case UK_UINT8: return v >= 0 && v <= 255;
  case UK_UINT16: return v >= 0 && v <= 65535;
  case UK_UINT32: return v >= 0 && v <= 4294967295LL;
  case UK_UINT64: return v >= 0;
  default: return 1;
  }
}

/* Writes a Python number as dtype t into slot. */
static int put_number(PyObject *o, uk_dtype t, unsigned char *slot, int i, const char *decl) {
  int is_float = t == UK_FLOAT16 || t == UK_BFLOAT16 || t == UK_FLOAT32 || t == UK_FLOAT64;
  int is_cx = t == UK_COMPLEX64 || t == UK_COMPLEX128;
  if (PyComplex_Check(o) && !is_cx) goto wrong;
  if (PyFloat_Check(o) && !is_float && !is_cx) goto wrong;
  if (t == UK_BOOL) {
    int b = PyObject_IsTrue(o);
    if (b < 0) return -1;
    slot[0] = (unsigned char)b;
    return 0;
  }
  if (is_float || is_cx) {
    double re = PyComplex_Check(o) ? PyComplex_RealAsDouble(o) : PyFloat_AsDouble(o);
    double im = PyComplex_Check(o) ? PyComplex_ImagAsDouble(o) : 0.0;
    if (PyErr_Occurred()) return -1;
    if (t == UK_FLOAT64) memcpy(slot, &re, 8);
    else if (t == UK_FLOAT32) {
      float f = (float)re;
      memcpy(slot, &f, 4);
    } else if (t == UK_FLOAT16 || t == UK_BFLOAT16) {
      uint16_t h = t == UK_FLOAT16 ? to_f16(re) : to_bf16(re);
      memcpy(slot, &h, 2);
    } else if (t == UK_COMPLEX128) {
      memcpy(slot, &re, 8);
      memcpy(slot + 8, &im, 8);
    } else {
      float p[2] = {(float)re, (float)im};
      memcpy(slot, p, 8);
    }
    return 0;
  }
  /* integers: exact, range-checked */
  unsigned long long u = 0;
  long long v = 0;
  if (t == UK_UINT64) {
    u = PyLong_AsUnsignedLongLong(o);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) goto range;
    memcpy(slot, &u, 8);
    return 0;
  }
  v = PyLong_AsLongLong(o);
  if ((v == -1 && PyErr_Occurred()) || !int_fits(v, t)) goto range;
  switch (uk_dtype_size(t)) {
  case 1: slot[0] = (unsigned char)v; break;
  case 2: { int16_t x = (int16_t)v; memcpy(slot, &x, 2); break; }
  case 4: { int32_t x = (int32_t)v; memcpy(slot, &x, 4); break; }
  default: memcpy(slot, &v, 8); break;
  }
  return 0;
range:
  PyErr_Clear();
  PyErr_Format(PyExc_OverflowError, "argument %d (%s): %R does not fit %s", i + 1, decl, o, uk_dtype_name(t));
  return -1;
wrong:
  {
    PyObject *tn = type_name(o);
    PyErr_Format(PyExc_TypeError, "argument %d (%s): a %S cannot be passed as %s", i + 1, decl, tn, uk_dtype_name(t));
    Py_XDECREF(tn);
  }
  return -1;
}

/* A .ptr value (MemoryPointer, TextureObject, SurfaceObject, ...): 1 done,
 * 0 not such an object, -1 error. */
static int put_ptr_attr(PyObject *o, unsigned char *slot) {
  PyObject *p = PyObject_GetAttrString(o, "ptr");
  if (!p) {
    PyErr_Clear();
    return 0;
  }
  unsigned long long v = PyLong_Check(p) ? PyLong_AsUnsignedLongLong(p) : (unsigned long long)-1;
  int bad = !PyLong_Check(p) || (v == (unsigned long long)-1 && PyErr_Occurred());
  Py_DECREF(p);
  if (bad) {
    PyErr_Clear();
    return 0;
  }
  memcpy(slot, &v, 8);
  return 1;
}

/* numpy.ndarray (subclasses included) when NumPy is imported; else 0. */
static int is_numpy_array(PyObject *o) {
  static PyObject *nd;
  if (!nd) {
    PyObject *mods = PySys_GetObject("modules"); /* borrowed */
    PyObject *np = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
    if (!np) return 0;
    if (!(nd = PyObject_GetAttrString(np, "ndarray"))) {
      PyErr_Clear();
      return 0;
    }
  }
  int r = PyObject_IsInstance(o, nd);
  if (r < 0) PyErr_Clear();
  return r > 0;
}


/* A NumPy array as a kernel argument: its bytes by value when it has one
 * element (as CuPy), else CuPy's TypeError. */
static int put_numpy_value(PyObject *o, unsigned char *slot, int i) {
  PyObject *size = PyObject_GetAttrString(o, "size");
  long long items = size ? PyLong_AsLongLong(size) : -1;
  Py_XDECREF(size);
  if (PyErr_Occurred()) return -1;
  PyObject *b = items == 1 ? PyObject_CallMethod(o, "tobytes", NULL) : NULL;
  char *bytes = NULL;
  Py_ssize_t len = 0;
  if (items == 1 && (!b || PyBytes_AsStringAndSize(b, &bytes, &len) < 0)) {
    Py_XDECREF(b);
    return -1;
  }
  int rc = 0;
  if (items != 1) {
    PyObject *shape = PyObject_GetAttrString(o, "shape");
    PyErr_Format(PyExc_TypeError,
                 "argument %d: a numpy.ndarray of shape %R cannot be a kernel argument: only size-one NumPy "
                 "arrays are passed by value; pass a device array (e.g. cupy.asarray(a)) for a pointer, or "
                 "ukern.In/Out/InOut(a) to have ukern copy it",
                 i + 1, shape ? shape : Py_None);
    Py_XDECREF(shape);
    rc = -1;
  } else if (len > 16) {
    PyErr_Format(PyExc_TypeError, "argument %d: a %zd-byte value is too large (at most 16 bytes)", i + 1, len);
    rc = -1;
  } else {
    memcpy(slot, bytes, (size_t)len);
  }
  Py_XDECREF(b);
  return rc;
}

/* CuPy's rules (no signature); `psize` is the parameter's size from the
 * cubin, 0 when unknown. */
static int pack_cupy(pyk_call *c, pyk_raw_args *a, PyObject *o, unsigned char *slot, size_t psize, int i) {
  if (o == Py_None) return 0;
  if (PyFloat_CheckExact(o) && psize == 4) { /* a float parameter: float32, not half a double */
    float f = (float)PyFloat_AsDouble(o);
    memcpy(slot, &f, 4);
    return 0;
  }
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) {
    if (pyk_call_arg(c, o, 0) < 0) return -1;
    uk_arg *g = &c->arg[0];
    int64_t v = g->kind == UK_ARG_BOOL ? 0 : g->v.i;
    if (g->kind == UK_ARG_BOOL) slot[0] = (unsigned char)(g->v.b != 0);
    else if (g->kind == UK_ARG_INT) memcpy(slot, &v, 8);
    else if (g->kind == UK_ARG_FLOAT) memcpy(slot, &g->v.f, 8);
    else memcpy(slot, g->v.c, 16);
    return 0;
  }
  /* Arrays first: the common case pays for no other check. */
  if (pyk_call_arg(c, o, 0) == 0) {
    uk_arg *g = &c->arg[0];
    if (g->kind == UK_ARG_TYPED) memcpy(slot, g->v.bytes, uk_dtype_size(g->dtype));
    else if (g->kind == UK_ARG_TEXTURE) memcpy(slot, &g->v.texture, 8);
    else memcpy(slot, &g->v.array->data, 8);
    return 0;
  }
  /* Not a CUDA array or scalar: a host wrapper, a NumPy array (by value),
   * or an object with .ptr (its pointer or handle). */
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  int r = 0;
  if (host_type && PyObject_TypeCheck(o, host_type)) r = add_host(a, o, slot) < 0 ? -1 : 1;
  else if (is_numpy_array(o)) r = put_numpy_value(o, slot, i) < 0 ? -1 : 1;
  else r = put_ptr_attr(o, slot);
  if (r != 0) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return r < 0 ? -1 : 0;
  }
  PyErr_Restore(type, value, tb);
  return -1;
}

/* The declared signature's rules for argument i of dtype `t` (-1: pointer). */
static int pack_declared(pyk_call *c, pyk_raw_args *a, PyObject *o, unsigned char *slot, int t, int i) {
  char decl[64];
  PyObject *tn;
  if (t < 0) {
    snprintf(decl, sizeof decl, "a pointer");
    if (o == Py_None) return 0;
    if (PyLong_Check(o) && !PyBool_Check(o)) {
      unsigned long long v = PyLong_AsUnsignedLongLong(o);
      if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
      memcpy(slot, &v, 8);
      return 0;
    }
    if (PyBool_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) goto scalar_for_pointer;
    if (host_type && PyObject_TypeCheck(o, host_type)) return add_host(a, o, slot);
    if (is_numpy_array(o)) {
      PyErr_Format(PyExc_TypeError,
                   "argument %d is a pointer: a host numpy.ndarray cannot be passed; use a device array or "
                   "ukern.In/Out/InOut(a)", i + 1);
      return -1;
    }
    if (pyk_call_arg(c, o, 0) == 0) {
      uk_arg *g = &c->arg[0];
      if (g->kind == UK_ARG_ARRAY) memcpy(slot, &g->v.array->data, 8);
      else if (g->kind == UK_ARG_TEXTURE) memcpy(slot, &g->v.texture, 8);
      else goto scalar_for_pointer;
      return 0;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int r = put_ptr_attr(o, slot);
    if (r == 0) {
      PyErr_Restore(type, value, tb);
      return -1;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return r < 0 ? -1 : 0;
  }
  snprintf(decl, sizeof decl, "declared %s", uk_dtype_name((uk_dtype)t));
  /* Python numbers convert; NumPy scalars (np.float64 subclasses float)
   * must have the declared dtype. */
  if (PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o) || PyComplex_CheckExact(o))
    return put_number(o, (uk_dtype)t, slot, i, decl);
  if (PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) { /* np.float64, np.complex128, subclasses */
    PyObject *dt = PyObject_GetAttrString(o, "dtype");
    PyObject *ts = dt ? PyObject_GetAttrString(dt, "str") : NULL;
    Py_XDECREF(dt);
    uk_dtype got = (uk_dtype)t;
    int rc = ts ? pyk_typestr_dtype(ts, &got) : 0;
    Py_XDECREF(ts);
    PyErr_Clear(); /* no dtype: a plain subclass of a Python number */
    if (rc == 0 && got != (uk_dtype)t) {
      PyErr_Format(PyExc_TypeError, "argument %d (%s): got a NumPy %s scalar; pass numpy.%s(value) or a Python number",
                   i + 1, decl, uk_dtype_name(got), uk_dtype_name((uk_dtype)t));
      return -1;
    }
    return put_number(o, (uk_dtype)t, slot, i, decl);
  }
  if (o == Py_None || (host_type && PyObject_TypeCheck(o, host_type))) goto pointer_for_scalar;
  if (pyk_call_arg(c, o, 0) < 0) return -1;
  uk_arg *g = &c->arg[0];
  if (g->kind == UK_ARG_TYPED) {
    if (g->dtype != (uk_dtype)t) {
      PyErr_Format(PyExc_TypeError, "argument %d (%s): got a NumPy %s scalar; pass numpy.%s(value) or a Python number",
                   i + 1, decl, uk_dtype_name(g->dtype), uk_dtype_name((uk_dtype)t));
      return -1;
    }
    memcpy(slot, g->v.bytes, uk_dtype_size(g->dtype));
    return 0;
  }
pointer_for_scalar:
  tn = type_name(o);
  PyErr_Format(PyExc_TypeError, "argument %d (%s): got %S, which is passed as a pointer", i + 1, decl, tn);
  Py_XDECREF(tn);
  return -1;
scalar_for_pointer:
  tn = type_name(o);
  PyErr_Format(PyExc_TypeError, "argument %d is declared a pointer: got a %S scalar", i + 1, tn);
  Py_XDECREF(tn);
  return -1;
}

int pyk_raw_pack(pyk_call *c, const pyk_raw_sig *sig, PyObject *t, pyk_raw_args *a) {
  Py_ssize_t n = PyTuple_Size(t);
  if (n > PYK_MAX_ARGS) {
    PyErr_Format(PyExc_ValueError, "more than %d kernel arguments", PYK_MAX_ARGS);
    return -1;
  }
  if (sig->count >= 0 && n != sig->count) {
    PyErr_Format(PyExc_TypeError, "kernel '%s' takes %d argument%s (%s), got %zd", sig->name, sig->count,
                 sig->count == 1 ? "" : "s", sig->dtypes ? "its signature" : "its cubin", n);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    unsigned char *slot = a->slot[i];
    memset(slot, 0, 16);
    PyObject *o = PyTuple_GetItem(t, i);
    int rc = sig->dtypes ? pack_declared(c, a, o, slot, sig->dtypes[i], (int)i)
                         : pack_cupy(c, a, o, slot, sig->params ? sig->params[i].size : 0, (int)i);
    if (rc < 0) return -1;
    a->ptr[i] = slot;
  }
  a->n = (int)n;
  return 0;
}
