/*
 * fast.c — per-call fast paths for the arguments seen most: a cupy.ndarray
 * read through its attributes, NumPy scalars of a known type converted
 * through the number protocol, and allocated outputs handed to CuPy as a
 * cupy.ndarray over ukern's memory.
 *
 * Why: CuPy builds __cuda_array_interface__ afresh on every access, with
 * dtype.descr computed in Python (microseconds an array); cupy.from_dlpack
 * switches devices twice and wraps a capsule; a NumPy scalar's dtype.str and
 * tobytes() make objects. The attributes hold the same facts.
 *
 * Every path declines (returns 0 / NULL with no exception set) on anything
 * unusual — a subclass, an unknown dtype, a failing attribute — and the
 * protocol path in args.c then gives the full semantics and the errors.
 */
#include "pyukern.h"

#include <string.h>

static PyObject *s_data, *s_ptr, *s_device_id, *s_shape, *s_strides, *s_dtype, *s_str, *s_requires_grad,
    *s_get_device, *s_data_ptr, *s_stride, *s_c_contiguous;

int pyk_fast_init(void) {
  struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&s_data, "data"},        {&s_ptr, "ptr"},         {&s_device_id, "device_id"},
               {&s_shape, "shape"},      {&s_strides, "strides"}, {&s_dtype, "dtype"},
               {&s_str, "str"},          {&s_requires_grad, "requires_grad"},
               {&s_get_device, "get_device"}, {&s_data_ptr, "data_ptr"}, {&s_stride, "stride"},
               {&s_c_contiguous, "_c_contiguous"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text))) return -1;
  return 0;
}

/* ---- the libraries' objects, looked up once ------------------------------ */

/* Objects of one library by dotted path ("cuda.get_current_stream"); read
 * again when sys.modules[name] is another module (tests stand in fakes).
 * Only asked for arrays whose type lives in the library: it is imported. */
#define LIB_OBJS 6
typedef struct lib {
  const char *name;
  const char *paths[LIB_OBJS]; /* paths[0]: the array type (required) */
  PyObject *module;            /* the module the objects were read from (held) */
  int ready;
  PyObject *obj[LIB_OBJS]; /* NULL where missing */
} lib;

static lib cupy = {"cupy",
                   {"ndarray", "cuda.get_current_stream", "cuda.UnownedMemory", "cuda.MemoryPointer", "cuda.alloc",
                    "cuda.runtime.getDevice"}};
static lib torch = {"torch", {"Tensor", "_C._cuda_getCurrentRawStream", "empty"}};
enum { CUPY_STREAM = 1, CUPY_UNOWNED = 2, CUPY_MEMPTR = 3, CUPY_ALLOC = 4, CUPY_GET_DEVICE = 5 };
enum { TORCH_RAW_STREAM = 1, TORCH_EMPTY = 2 };

static PyObject *lookup(PyObject *m, const char *path) {
  char part[64];
  PyObject *o = m;
  Py_INCREF(o);
  while (o && *path) {
    size_t n = strcspn(path, ".");
    if (n >= sizeof part) n = sizeof part - 1;
    memcpy(part, path, n);
    part[n] = 0;
    path += n + (path[n] == '.');
    PyObject *next = PyObject_GetAttrString(o, part);
    Py_DECREF(o);
    o = next;
  }
  if (!o) PyErr_Clear();
  return o;
}

static int lib_ready(lib *l, PyTypeObject *tp) {
  PyObject *mods = PySys_GetObject("modules"); /* borrowed */
  PyObject *m = mods ? PyDict_GetItemString(mods, l->name) : NULL;
  if (!m) return 0;
  if (m != l->module) {
    Py_INCREF(m);
    Py_XDECREF(l->module);
    l->module = m;
    for (int i = 0; i < LIB_OBJS; i++) {
      Py_CLEAR(l->obj[i]);
      if (l->paths[i]) l->obj[i] = lookup(m, l->paths[i]);
    }
    l->ready = l->obj[0] && PyType_Check(l->obj[0]);
  }
  return l->ready && tp == (PyTypeObject *)l->obj[0];
}

/* CuPy's current stream for this call (read once a call). -1 with no
 * exception when it cannot be read. */
static int cupy_stream(pyk_call *c, void **out) {
  if (!c->have_cupy_stream) {
    PyObject *s = cupy.obj[CUPY_STREAM] ? PyObject_CallObject(cupy.obj[CUPY_STREAM], NULL) : NULL;
    PyObject *p = s ? PyObject_GetAttr(s, s_ptr) : NULL;
    unsigned long long v = p ? PyLong_AsUnsignedLongLong(p) : (unsigned long long)-1;
    Py_XDECREF(s);
    Py_XDECREF(p);
    if (v == (unsigned long long)-1 && (!p || PyErr_Occurred())) {
      PyErr_Clear();
      return -1;
    }
    c->cupy_stream = pyk_stream_from_int(v);
    c->have_cupy_stream = 1;
  }
  *out = c->cupy_stream;
  return 0;
}

/* ---- dtype objects -> uk_dtype (by identity: numpy's and torch's are singletons) */

#define NDTYPES 32
static struct {
  PyObject *key; /* held, so the address is never reused */
  uk_dtype t;
} dtypes[NDTYPES];
static int ndtypes;

/* numpy.dtype: by its .str ("<f4"); torch.dtype: by its name ("torch.float32"). */
static int dtype_of(PyObject *dt, uk_dtype *t, int by_name) {
  for (int i = 0; i < ndtypes; i++)
    if (dtypes[i].key == dt) {
      *t = dtypes[i].t;
      return 1;
    }
  int rc = -1;
  if (by_name) {
    PyObject *s = PyObject_Str(dt);
    const char *u = s ? pyk_utf8_or_null(s) : NULL;
    if (u && !strncmp(u, "torch.", 6) && uk_dtype_from_name(u + 6, t) == UK_OK) rc = 0;
    Py_XDECREF(s);
  } else {
    PyObject *s = PyObject_GetAttr(dt, s_str);
    rc = s ? pyk_typestr_dtype(s, t) : -1;
    Py_XDECREF(s);
  }
  if (rc < 0) {
    PyErr_Clear();
    return 0;
  }
  if (ndtypes < NDTYPES) {
    Py_INCREF(dt);
    dtypes[ndtypes].key = dt;
    dtypes[ndtypes++].t = *t;
  }
  return 1;
}

static int read_ints(PyObject *t, int64_t *v, int n) {
  for (int i = 0; i < n; i++) {
    long long x = PyLong_AsLongLong(PyTuple_GetItem(t, i));
    if (x == -1 && PyErr_Occurred()) return -1;
    v[i] = x;
  }
  return 0;
}

/* Fills *a as the array's CUDA array interface would: a C-contiguous array
 * (dimensions of extent 1 ignored, as CuPy's and PyTorch's flags do; every
 * zero-size array) gets the strides uk_array_init makes, as CAI's
 * `strides: None` gives; others their own. Strides come in bytes, or for a
 * PyTorch `tensor` in elements (and no elements: address 0, as its CAI
 * says). 1 done, 0 declined (an exception may be set). */
static int describe(uk_array *a, PyObject *ptr, PyObject *dev, uk_dtype t, PyObject *shape, PyObject *strides,
                    int tensor) {
  /* strides NULL: the producer's own flag said C-contiguous */
  if (!PyTuple_Check(shape) || (strides && (!PyTuple_Check(strides) || PyTuple_Size(shape) != PyTuple_Size(strides))) ||
      PyTuple_Size(shape) > UK_MAX_NDIM)
    return 0;
  int ndim = (int)PyTuple_Size(shape);
  int64_t sh[UK_MAX_NDIM], st[UK_MAX_NDIM];
  unsigned long long p = PyLong_AsUnsignedLongLong(ptr);
  long d = PyErr_Occurred() ? -1 : PyLong_AsLong(dev);
  if (d < 0 || read_ints(shape, sh, ndim) < 0 || (strides && read_ints(strides, st, ndim) < 0) ||
      uk_array_init(a, p, t, ndim, sh) != UK_OK)
    return 0;
  int64_t item = (int64_t)uk_dtype_size(t);
  int contiguous = 1;
  for (int i = 0; strides && i < ndim; i++) {
    if (tensor) st[i] *= item;
    if (sh[i] != 1 && st[i] != a->strides[i]) contiguous = 0;
  }
  if (!contiguous && uk_array_size(a) > 0) memcpy(a->strides, st, sizeof st[0] * (size_t)ndim);
  if (tensor && uk_array_size(a) == 0) a->data = 0;
  a->device = (int)d;
  return 1;
}

/* ---- cupy.ndarray in ---------------------------------------------------- */

int pyk_fast_cupy_array(pyk_call *c, PyObject *o, uk_array *a) {
  if (!lib_ready(&cupy, Py_TYPE(o))) return 0;
  PyObject *mem = PyObject_GetAttr(o, s_data);
  PyObject *ptr = mem ? PyObject_GetAttr(mem, s_ptr) : NULL;
  PyObject *dev = ptr ? PyObject_GetAttr(mem, s_device_id) : NULL;
  PyObject *shape = dev ? PyObject_GetAttr(o, s_shape) : NULL;
  /* CuPy's own flag (what its CAI reads): no strides tuple to build when set */
  PyObject *cc = shape ? PyObject_GetAttr(o, s_c_contiguous) : NULL;
  if (shape && !cc) PyErr_Clear();
  PyObject *strides = shape && cc != Py_True ? PyObject_GetAttr(o, s_strides) : NULL;
  PyObject *dt = shape && (cc == Py_True || strides) ? PyObject_GetAttr(o, s_dtype) : NULL;
  uk_dtype t;
  int rc = dt && dtype_of(dt, &t, 0) ? describe(a, ptr, dev, t, shape, strides, 0) : 0;
  Py_XDECREF(cc);
  Py_XDECREF(mem);
  Py_XDECREF(ptr);
  Py_XDECREF(dev);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(dt);
  /* CAI v3 as CuPy writes it: the array was produced on CuPy's current stream. */
  void *s;
  if (rc == 1 && cupy_stream(c, &s) < 0) rc = 0;
  if (rc == 1) pyk_call_produced_on(c, s);
  else PyErr_Clear();
  return rc;
}

/* ---- torch.Tensor in ------------------------------------------------------ */

/* PyTorch's current stream on `device` (as a CUstream); -1 when unknown. */
static int torch_stream(int device, void **out) {
  PyObject *s = torch.obj[TORCH_RAW_STREAM] ? PyObject_CallFunction(torch.obj[TORCH_RAW_STREAM], "i", device) : NULL;
  unsigned long long v = s ? PyLong_AsUnsignedLongLong(s) : (unsigned long long)-1;
  Py_XDECREF(s);
  if (v == (unsigned long long)-1 && (!s || PyErr_Occurred())) {
    PyErr_Clear();
    return -1;
  }
  *out = pyk_stream_from_int(v);
  return 0;
}

int pyk_fast_torch_array(pyk_call *c, PyObject *o, uk_array *a) {
  if (!lib_ready(&torch, Py_TYPE(o))) return 0;
  /* Tensors that require grad: the protocols refuse them (with the message). */
  PyObject *grad = PyObject_GetAttr(o, s_requires_grad);
  PyObject *dev = grad == Py_False ? PyObject_CallMethodObjArgs(o, s_get_device, NULL) : NULL;
  PyObject *ptr = dev ? PyObject_CallMethodObjArgs(o, s_data_ptr, NULL) : NULL;
  PyObject *shape = ptr ? PyObject_GetAttr(o, s_shape) : NULL;
  PyObject *strides = shape ? PyObject_CallMethodObjArgs(o, s_stride, NULL) : NULL;
  PyObject *dt = strides ? PyObject_GetAttr(o, s_dtype) : NULL;
  uk_dtype t;
  int rc = dt && dtype_of(dt, &t, 1) ? describe(a, ptr, dev, t, shape, strides, 1) : 0;
  Py_XDECREF(grad);
  Py_XDECREF(dev);
  Py_XDECREF(ptr);
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(dt);
  /* PyTorch's CAI names no stream: the first tensor's device's current
   * stream is the launch stream unless one was chosen (as DLPack's
   * consumer stream would be). */
  void *s;
  if (rc == 1 && !c->have_stream && torch.obj[TORCH_RAW_STREAM]) {
    if (torch_stream(a->device, &s) < 0) rc = 0;
    else c->stream = s, c->have_stream = 1;
  }
  if (rc != 1) PyErr_Clear();
  return rc;
}

/* ---- outputs as cupy.ndarray ---------------------------------------------- */

/* _set_output_route: "pool" (default: CuPy's pool when the outputs are
 * known ahead, else "direct"), "direct" (a cupy.ndarray over ukern's
 * memory), "dlpack" (cupy.from_dlpack of a ukern.Array). */
enum { ROUTE_DLPACK, ROUTE_DIRECT, ROUTE_POOL };
static int output_route = ROUTE_POOL;

int pyk_fast_set_output_route(const char *name) {
  static const char *const names[] = {"dlpack", "direct", "pool"};
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, names[i])) {
      output_route = i;
      return 0;
    }
  return -1;
}

/* numpy.dtype of a uk_dtype, made once (NULL: NumPy has none, e.g. bfloat16). */
static PyObject *numpy_dtype(uk_dtype t) {
  static PyObject *made[UK_DTYPE_COUNT_];
  static char failed[UK_DTYPE_COUNT_];
  if ((unsigned)t >= UK_DTYPE_COUNT_ || failed[t]) return NULL;
  if (!made[t]) {
    PyObject *np = PyImport_ImportModule("numpy");
    made[t] = np ? PyObject_CallMethod(np, "dtype", "s", uk_dtype_name(t)) : NULL;
    Py_XDECREF(np);
    if (!made[t]) {
      PyErr_Clear();
      failed[t] = 1;
    }
  }
  return made[t];
}

static PyObject *shape_tuple(const uk_array *a) {
  PyObject *shape = PyTuple_New(a->ndim);
  for (int d = 0; shape && d < a->ndim; d++) {
    PyObject *v = PyLong_FromLongLong(a->shape[d]);
    if (!v) Py_CLEAR(shape);
    else PyTuple_SetItem(shape, d, v);
  }
  return shape;
}

PyObject *pyk_fast_cupy_output(pyk_call *c, PyObject *owner, const uk_array *a) {
  if (output_route < ROUTE_DIRECT || !lib_ready(&cupy, Py_TYPE(c->first)) || !cupy.obj[CUPY_UNOWNED] ||
      !cupy.obj[CUPY_MEMPTR])
    return NULL;
  PyObject *dt = numpy_dtype(a->dtype);
  void *cur;
  if (!dt || cupy_stream(c, &cur) < 0) return NULL;
  /* What __dlpack__(stream=current) would do: CuPy's current stream waits
   * for the launch stream. */
  if (pyk_stream_order(c->stream, cur, a->device) < 0) return NULL;
  Py_ssize_t nbytes = (Py_ssize_t)(uk_array_size(a) * (int64_t)uk_dtype_size(a->dtype));
  PyObject *um = PyObject_CallFunction(cupy.obj[CUPY_UNOWNED], "KnOi", (unsigned long long)a->data, nbytes, owner,
                                       a->device);
  PyObject *mp = um ? PyObject_CallFunction(cupy.obj[CUPY_MEMPTR], "Oi", um, 0) : NULL;
  PyObject *shape = mp ? shape_tuple(a) : NULL;
  PyObject *r = shape ? PyObject_CallFunctionObjArgs(cupy.obj[0], shape, dt, mp, NULL) : NULL;
  Py_XDECREF(um);
  Py_XDECREF(mp);
  Py_XDECREF(shape);
  if (!r) PyErr_Clear(); /* declined: DLPack answers */
  return r;
}

/* ---- RawModule.get_global as CuPy's MemoryPointer ------------------------- */

int pyk_fast_cupy_device(void) {
  lib_ready(&cupy, NULL); /* reads the objects of the cupy in sys.modules, if any */
  if (!cupy.ready || !cupy.obj[CUPY_UNOWNED] || !cupy.obj[CUPY_MEMPTR] || !cupy.obj[CUPY_GET_DEVICE]) return -1;
  PyObject *d = PyObject_CallObject(cupy.obj[CUPY_GET_DEVICE], NULL);
  long v = d ? PyLong_AsLong(d) : -1;
  Py_XDECREF(d);
  if (v < 0 || v > 0x7fffffffL) {
    if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "cupy.cuda.runtime.getDevice() gave %ld", v);
    return -2;
  }
  return (int)v;
}

PyObject *pyk_fast_cupy_memptr(PyObject *owner, unsigned long long ptr, size_t bytes, int device) {
  PyObject *um = PyObject_CallFunction(cupy.obj[CUPY_UNOWNED], "KnOi", ptr, (Py_ssize_t)bytes, owner, device);
  PyObject *mp = um ? PyObject_CallFunction(cupy.obj[CUPY_MEMPTR], "Oi", um, 0) : NULL;
  Py_XDECREF(um);
  return mp;
}

/* One output in CuPy's pool: a cupy.ndarray (new ref) over cupy.cuda.alloc
 * memory of d's dtype and shape on d's device, *out its descriptor. */
static PyObject *cupy_alloc_output(const uk_array *d, uk_array *out) {
  PyObject *dt = numpy_dtype(d->dtype);
  int64_t n = uk_array_size(d);
  if (!dt || n <= 0) return NULL; /* zero-size: no address to give */
  PyObject *mp = PyObject_CallFunction(cupy.obj[CUPY_ALLOC], "n", (Py_ssize_t)(n * (int64_t)uk_dtype_size(d->dtype)));
  PyObject *ptr = mp ? PyObject_GetAttr(mp, s_ptr) : NULL;
  PyObject *dev = ptr ? PyObject_GetAttr(mp, s_device_id) : NULL;
  unsigned long long p = dev ? PyLong_AsUnsignedLongLong(ptr) : 0;
  long dv = p && !PyErr_Occurred() ? PyLong_AsLong(dev) : -1;
  PyObject *shape = dv == d->device ? shape_tuple(d) : NULL;
  PyObject *r = shape ? PyObject_CallFunctionObjArgs(cupy.obj[0], shape, dt, mp, NULL) : NULL;
  Py_XDECREF(mp);
  Py_XDECREF(ptr);
  Py_XDECREF(dev);
  Py_XDECREF(shape);
  if (r && uk_array_init(out, p, d->dtype, d->ndim, d->shape) == UK_OK) {
    out->device = d->device;
    return r;
  }
  Py_XDECREF(r);
  return NULL;
}

/* torch.dtype of a uk_dtype (torch.<name>), looked up once a module. */
static PyObject *torch_dtype(uk_dtype t) {
  static PyObject *module, *made[UK_DTYPE_COUNT_];
  if ((unsigned)t >= UK_DTYPE_COUNT_) return NULL;
  if (module != torch.module) {
    for (int i = 0; i < UK_DTYPE_COUNT_; i++) Py_CLEAR(made[i]);
    module = torch.module; /* compared only: torch.module holds it */
  }
  if (!made[t] && !(made[t] = PyObject_GetAttrString(torch.module, uk_dtype_name(t)))) PyErr_Clear();
  return made[t];
}

/* One output in PyTorch's caching allocator: torch.empty on d's device. */
static PyObject *torch_alloc_output(const uk_array *d, uk_array *out) {
  PyObject *dt = torch_dtype(d->dtype);
  if (!dt || uk_array_size(d) <= 0) return NULL;
  PyObject *shape = shape_tuple(d), *args = shape ? PyTuple_Pack(1, shape) : NULL;
  PyObject *kw = args ? Py_BuildValue("{sOsi}", "dtype", dt, "device", d->device) : NULL;
  PyObject *r = kw ? PyObject_Call(torch.obj[TORCH_EMPTY], args, kw) : NULL;
  PyObject *ptr = r ? PyObject_CallMethodObjArgs(r, s_data_ptr, NULL) : NULL;
  unsigned long long p = ptr ? PyLong_AsUnsignedLongLong(ptr) : 0;
  Py_XDECREF(shape);
  Py_XDECREF(args);
  Py_XDECREF(kw);
  Py_XDECREF(ptr);
  if (r && p && !PyErr_Occurred() && uk_array_init(out, p, d->dtype, d->ndim, d->shape) == UK_OK) {
    out->device = d->device;
    return r;
  }
  Py_XDECREF(r);
  return NULL;
}

int pyk_fast_prealloc(pyk_call *c, const uk_array *desc, int nout, uk_array *out, PyObject **objs) {
  void *cur;
  PyObject *(*alloc)(const uk_array *, uk_array *) = NULL;
  if (output_route < ROUTE_POOL || !c->first || nout < 1) return 0;
  /* The pools serve the library's current stream: it must be the launch stream. */
  if (lib_ready(&cupy, Py_TYPE(c->first)) && cupy.obj[CUPY_ALLOC] && cupy_stream(c, &cur) == 0 && cur == c->stream)
    alloc = cupy_alloc_output;
  else if (lib_ready(&torch, Py_TYPE(c->first)) && torch.obj[TORCH_EMPTY] && torch_stream(desc[0].device, &cur) == 0 &&
           cur == c->stream)
    alloc = torch_alloc_output;
  if (!alloc) return 0;
  int j = 0;
  while (j < nout && (objs[j] = alloc(&desc[j], &out[j]))) j++;
  if (j == nout) return 1;
  PyErr_Clear();
  while (j-- > 0) Py_DECREF(objs[j]);
  return 0;
}

/* ---- NumPy scalars of a known type ---------------------------------------- */

#define NSCALARS 24
static struct {
  PyTypeObject *type; /* held */
  uk_dtype t;
} scalars[NSCALARS];
static int nscalars;

static int by_number(uk_dtype t) {
  return t == UK_BOOL || (t >= UK_INT8 && t <= UK_UINT64) || t == UK_FLOAT16 || t == UK_FLOAT32 || t == UK_FLOAT64;
}

void pyk_fast_scalar_learn(PyTypeObject *tp, uk_dtype t) {
  if (nscalars >= NSCALARS || !by_number(t)) return;
  for (int i = 0; i < nscalars; i++)
    if (scalars[i].type == tp) return;
  Py_INCREF(tp);
  scalars[nscalars].type = tp;
  scalars[nscalars++].t = t;
}

int pyk_fast_scalar(PyObject *o, uk_arg *out) {
  int i = 0;
  while (i < nscalars && scalars[i].type != Py_TYPE(o)) i++;
  if (i == nscalars) return 0;
  uk_dtype t = scalars[i].t;
  unsigned char buf[8];
  if (t == UK_BOOL) {
    int b = PyObject_IsTrue(o);
    if (b < 0) return -1;
    buf[0] = (unsigned char)b;
  } else if (t >= UK_INT8 && t <= UK_UINT64) {
    /* The scalar holds a value of its type: the low bytes are that value. */
    PyObject *v = PyNumber_Index(o);
    if (!v) return -1;
    unsigned long long u = t >= UK_UINT8 ? PyLong_AsUnsignedLongLong(v) : (unsigned long long)PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (PyErr_Occurred()) return -1;
    uint8_t u8 = (uint8_t)u;
    uint16_t u16 = (uint16_t)u;
    uint32_t u32 = (uint32_t)u;
    size_t n = uk_dtype_size(t);
    memcpy(buf, n == 1 ? (void *)&u8 : n == 2 ? (void *)&u16 : n == 4 ? (void *)&u32 : (void *)&u, n);
  } else {
    double d = PyFloat_AsDouble(o); /* exact for float16/32/64 */
    if (d == -1.0 && PyErr_Occurred()) return -1;
    float f = (float)d;
    if (t == UK_FLOAT64) memcpy(buf, &d, 8);
    else if (t == UK_FLOAT32) memcpy(buf, &f, 4);
    else if (uk_dtype_encode(t, d, buf) != UK_OK) return 0;
  }
  *out = uk_arg_typed(t, buf);
  return 1;
}
