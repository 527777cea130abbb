/*
 * array.c — ukern.Array: a CUDA array that ukern allocated (an output whose
 * inputs' library has no from_dlpack) or a view of module memory
 * (RawModule.get_global). It exports __cuda_array_interface__ (v3) and
 * __dlpack__, so any array library can take it without a copy.
 */
#include "pyukern.h"
#include "ukern/dlpack.h"

#include <stdlib.h>
#include <string.h>

PyTypeObject *pyk_ArrayType;

typedef struct {
  PyObject_HEAD
  uk_array a;
  PyObject *ctx;  /* owner: the context whose allocator frees a.data */
  PyObject *base; /* view: keeps the memory alive */
  void *stream;   /* where the data was produced */
} ArrayObject;

static PyObject *array_alloc(void) {
  ArrayObject *self = PyObject_New(ArrayObject, pyk_ArrayType);
  if (!self) return NULL;
  self->ctx = self->base = NULL;
  self->stream = NULL;
  memset(&self->a, 0, sizeof self->a);
  return (PyObject *)self;
}

PyObject *pyk_array_new_owner(PyObject *ctx, const uk_array *a, void *stream) {
  ArrayObject *self = (ArrayObject *)array_alloc();
  if (!self) return NULL;
  self->a = *a;
  self->stream = stream;
  Py_INCREF(ctx);
  self->ctx = ctx;
  return (PyObject *)self;
}

PyObject *pyk_array_new_view(PyObject *base, const uk_array *a) {
  ArrayObject *self = (ArrayObject *)array_alloc();
  if (!self) return NULL;
  self->a = *a;
  Py_INCREF(base);
  self->base = base;
  return (PyObject *)self;
}

const uk_array *pyk_array_desc(PyObject *o) { return &((ArrayObject *)o)->a; }

static void array_dealloc(PyObject *o) {
  ArrayObject *self = (ArrayObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  if (self->ctx) {
    /* The legacy default stream orders the free after work on blocking
     * streams; consumers on non-blocking streams hold the array (DLPack). */
    if (self->a.data) uk_array_free(pyk_context_ptr(self->ctx), &self->a, NULL);
    Py_DECREF(self->ctx);
  }
  Py_XDECREF(self->base);
  PyObject_Free(o);
  Py_DECREF(tp);
}

static int c_contiguous(const uk_array *a) {
  int64_t s = (int64_t)uk_dtype_size(a->dtype);
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] != 1 && a->strides[d] != s) return 0;
    s *= a->shape[d];
  }
  return 1;
}

static PyObject *int_tuple(const int64_t *v, int n) {
  PyObject *t = PyTuple_New(n);
  for (int i = 0; t && i < n; i++) {
    PyObject *x = PyLong_FromLongLong(v[i]);
    if (!x) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, i, x);
  }
  return t;
}

static const char *typestr(uk_dtype t) {
  static const char *ts[UK_DTYPE_COUNT_] = {"|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
                                            "<f2", "<V2", "<f4", "<f8", "<c8", "<c16"};
  return (unsigned)t < UK_DTYPE_COUNT_ ? ts[t] : "|V0";
}

static PyObject *get_cai(PyObject *o, void *closure) {
  ArrayObject *self = (ArrayObject *)o;
  (void)closure;
  if (self->a.dtype == UK_BFLOAT16) {
    PyErr_SetString(PyExc_AttributeError, "bfloat16 arrays have no __cuda_array_interface__ typestr: use __dlpack__");
    return NULL;
  }
  PyObject *shape = int_tuple(self->a.shape, self->a.ndim);
  PyObject *strides = c_contiguous(&self->a) ? (Py_INCREF(Py_None), Py_None) : int_tuple(self->a.strides, self->a.ndim);
  uintptr_t s = (uintptr_t)self->stream;
  PyObject *r = NULL;
  if (shape && strides)
    r = Py_BuildValue("{sOsssOs(KO)sisK}", "shape", shape, "typestr", typestr(self->a.dtype), "strides", strides,
                      "data", (unsigned long long)self->a.data, Py_False, "version", 3, "stream",
                      (unsigned long long)(s ? s : 1));
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  return r;
}

/* ---- DLPack export ------------------------------------------------------ */

/* The managed tensor and its shape/strides in one malloc block; the deleter
 * may run on any thread, so it takes the GIL to drop the array. */
typedef struct {
  DLManagedTensor mt;
  int64_t shape[UK_MAX_NDIM], strides[UK_MAX_NDIM];
} export_block;

static void export_deleter(DLManagedTensor *mt) {
  PyGILState_STATE g = PyGILState_Ensure();
  Py_XDECREF((PyObject *)mt->manager_ctx);
  PyGILState_Release(g);
  free(mt);
}

static void capsule_destructor(PyObject *cap) {
  if (!PyCapsule_IsValid(cap, "dltensor")) return; /* consumed: the consumer calls the deleter */
  DLManagedTensor *mt = PyCapsule_GetPointer(cap, "dltensor");
  if (mt && mt->deleter) mt->deleter(mt);
}

static PyObject *py_dlpack(PyObject *o, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
  PyObject *stream = Py_None, *maxv = Py_None, *dev = Py_None, *copy = Py_None;
  ArrayObject *self = (ArrayObject *)o;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOO:__dlpack__", kwlist, &stream, &maxv, &dev, &copy)) return NULL;
  if (copy == Py_True) {
    PyErr_SetString(PyExc_BufferError, "ukern.Array.__dlpack__: copy=True is not supported");
    return NULL;
  }
  /* The consumer's stream must see the data: it waits for an event on the
   * producing stream. -1 means no ordering; None the legacy default stream. */
  long long sv = 1;
  if (stream != Py_None && (sv = PyLong_AsLongLong(stream)) == -1 && PyErr_Occurred()) return NULL;
  if (sv != -1 && pyk_stream_order(self->stream, sv == 1 ? NULL : (void *)(intptr_t)sv, self->a.device) < 0)
    return NULL;
  export_block *b = calloc(1, sizeof *b);
  if (!b) return PyErr_NoMemory();
  DLTensor *t = &b->mt.dl_tensor;
  uk_status st = uk_dtype_to_dlpack(self->a.dtype, &t->dtype);
  if (st != UK_OK) {
    free(b);
    return pyk_raise(st);
  }
  int64_t item = (int64_t)uk_dtype_size(self->a.dtype);
  for (int d = 0; d < self->a.ndim; d++) {
    if (self->a.strides[d] % item) {
      free(b);
      PyErr_SetString(PyExc_BufferError, "a stride is not a multiple of the item size");
      return NULL;
    }
    b->shape[d] = self->a.shape[d];
    b->strides[d] = self->a.strides[d] / item;
  }
  t->data = (void *)(uintptr_t)self->a.data;
  t->device.device_type = kDLCUDA;
  t->device.device_id = self->a.device;
  t->ndim = self->a.ndim;
  t->shape = b->shape;
  t->strides = b->strides;
  t->byte_offset = 0;
  Py_INCREF(o);
  b->mt.manager_ctx = o;
  b->mt.deleter = export_deleter;
  PyObject *cap = PyCapsule_New(&b->mt, "dltensor", capsule_destructor);
  if (!cap) export_deleter(&b->mt);
  return cap;
}

static PyObject *py_dlpack_device(PyObject *o, PyObject *unused) {
  (void)unused;
  return Py_BuildValue("(ii)", (int)kDLCUDA, ((ArrayObject *)o)->a.device);
}

/* ---- properties --------------------------------------------------------- */

static PyObject *get_shape(PyObject *o, void *c) {
  (void)c;
  return int_tuple(((ArrayObject *)o)->a.shape, ((ArrayObject *)o)->a.ndim);
}
static PyObject *get_strides(PyObject *o, void *c) {
  (void)c;
  return int_tuple(((ArrayObject *)o)->a.strides, ((ArrayObject *)o)->a.ndim);
}
static PyObject *get_ndim(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromLong(((ArrayObject *)o)->a.ndim);
}
static PyObject *get_size(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromLongLong(uk_array_size(&((ArrayObject *)o)->a));
}
static PyObject *get_nbytes(PyObject *o, void *c) {
  (void)c;
  const uk_array *a = &((ArrayObject *)o)->a;
  return PyLong_FromLongLong(uk_array_size(a) * (int64_t)uk_dtype_size(a->dtype));
}
static PyObject *get_ptr(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromUnsignedLongLong(((ArrayObject *)o)->a.data);
}
static PyObject *get_device(PyObject *o, void *c) {
  (void)c;
  return PyLong_FromLong(((ArrayObject *)o)->a.device);
}
/* A numpy.dtype when NumPy is importable, else the name. */
static PyObject *get_dtype(PyObject *o, void *c) {
  (void)c;
  const char *name = uk_dtype_name(((ArrayObject *)o)->a.dtype);
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) {
    PyErr_Clear();
    return PyUnicode_FromString(name);
  }
  PyObject *r = PyObject_CallMethod(np, "dtype", "s", name);
  Py_DECREF(np);
  return r;
}

/* get(): a NumPy copy on the host (waits for the device). */
static PyObject *py_get(PyObject *o, PyObject *unused) {
  (void)unused;
  ArrayObject *self = (ArrayObject *)o;
  if (!c_contiguous(&self->a)) {
    PyErr_SetString(PyExc_ValueError, "get() needs a C-contiguous array");
    return NULL;
  }
  PyObject *np = PyImport_ImportModule("numpy");
  if (!np) return NULL;
  PyObject *shape = int_tuple(self->a.shape, self->a.ndim);
  PyObject *r = shape ? PyObject_CallMethod(np, "empty", "Os", shape, uk_dtype_name(self->a.dtype)) : NULL;
  Py_DECREF(np);
  Py_XDECREF(shape);
  if (!r) return NULL;
  PyObject *ai = PyObject_GetAttrString(r, "__array_interface__");
  PyObject *data = ai ? PyDict_GetItemString(ai, "data") : NULL;
  unsigned long long host = data ? PyLong_AsUnsignedLongLong(PyTuple_GetItem(data, 0)) : 0;
  Py_XDECREF(ai);
  if (PyErr_Occurred()) {
    Py_DECREF(r);
    return NULL;
  }
  size_t bytes = (size_t)uk_array_size(&self->a) * uk_dtype_size(self->a.dtype);
  uk_status st = UK_OK;
  if (bytes) {
    Py_BEGIN_ALLOW_THREADS
    st = uk_device_synchronize();
    if (st == UK_OK) st = uk_memcpy_dtoh((void *)(uintptr_t)host, self->a.data, bytes);
    Py_END_ALLOW_THREADS
  }
  if (st != UK_OK) {
    Py_DECREF(r);
    return pyk_raise(st);
  }
  return r;
}

static PyObject *array_repr(PyObject *o) {
  ArrayObject *self = (ArrayObject *)o;
  PyObject *shape = int_tuple(self->a.shape, self->a.ndim);
  if (!shape) return NULL;
  PyObject *r = PyUnicode_FromFormat("ukern.Array(shape=%R, dtype=%s, device=%d)", shape,
                                     uk_dtype_name(self->a.dtype), self->a.device);
  Py_DECREF(shape);
  return r;
}

static PyGetSetDef array_getset[] = {
    {"__cuda_array_interface__", get_cai, NULL, "CUDA Array Interface, version 3 (with the producing stream).", NULL},
    {"shape", get_shape, NULL, "Shape (tuple of int).", NULL},
    {"strides", get_strides, NULL, "Strides in bytes.", NULL},
    {"ndim", get_ndim, NULL, "Number of dimensions.", NULL},
    {"size", get_size, NULL, "Number of elements.", NULL},
    {"nbytes", get_nbytes, NULL, "Bytes spanned by the elements.", NULL},
    {"dtype", get_dtype, NULL, "numpy.dtype (the dtype name when NumPy is missing).", NULL},
    {"ptr", get_ptr, NULL, "Device address of element (0, ..., 0).", NULL},
    {"device", get_device, NULL, "CUDA device ordinal.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))py_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a 'dltensor' capsule (legacy "
     "DLManagedTensor, no copy)."},
    {"__dlpack_device__", py_dlpack_device, METH_NOARGS, "(kDLCUDA, device ordinal)."},
    {"get", py_get, METH_NOARGS, "get() -> numpy.ndarray: a host copy (waits for the device)."},
    {NULL, NULL, 0, NULL}};

static PyObject *array_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  (void)tp, (void)args, (void)kw;
  PyErr_SetString(PyExc_TypeError, "ukern.Array cannot be created directly: kernels return it");
  return NULL;
}

static PyType_Slot array_slots[] = {
    {Py_tp_new, (void *)array_new},
    {Py_tp_dealloc, (void *)array_dealloc},
    {Py_tp_repr, (void *)array_repr},
    {Py_tp_getset, array_getset},
    {Py_tp_methods, array_methods},
    {Py_tp_doc, (void *)"A CUDA array made by ukern. Exports __cuda_array_interface__ and __dlpack__, so\n"
                       "cupy.asarray(a), torch.as_tensor(a, device='cuda') or numba.cuda.as_cuda_array(a)\n"
                       "take it without a copy. Outputs come back as the inputs' array type when its\n"
                       "library has from_dlpack (CuPy, PyTorch, JAX); this type answers the others."},
    {0, NULL}};
static PyType_Spec array_spec = {"ukern.Array", sizeof(ArrayObject), 0, Py_TPFLAGS_DEFAULT, array_slots};

int pyk_array_type_init(PyObject *m) { return (pyk_ArrayType = pyk_add_type(m, &array_spec)) ? 0 : -1; }
