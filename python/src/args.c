/*
 * args.c — the arguments of one kernel call: arrays from any producer
 * (__cuda_array_interface__ or __dlpack__; host __array_interface__ only to
 * describe shapes for source/precompile), Python scalars (untyped) and NumPy
 * scalars (typed), the launch stream, and outputs handed back as the first
 * array's type.
 *
 * Stream rule: stream= wins; else the first array's producer stream (CAI v3
 * "stream", else the library's current stream for CuPy and PyTorch); else
 * the legacy default stream. DLPack producers are asked to order their work
 * before that stream (the consumer stream of the protocol).
 */
#include "pyukern.h"
#include "ukern/dlpack.h"

#include <limits.h>
#include <string.h>

/* Interned names looked up on every call. */
static PyObject *str_cai, *str_ai, *str_dlpack, *str_dlpack_device, *str_shape, *str_data, *str_strides, *str_mask,
    *str_typestr, *str_stream;

int pyk_args_init(void) {
  struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&str_cai, "__cuda_array_interface__"}, {&str_ai, "__array_interface__"},
               {&str_dlpack, "__dlpack__"},            {&str_dlpack_device, "__dlpack_device__"},
               {&str_shape, "shape"},                  {&str_data, "data"},
               {&str_strides, "strides"},              {&str_mask, "mask"},
               {&str_typestr, "typestr"},              {&str_stream, "stream"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text))) return -1;
  return pyk_fast_init();
}

/* ---- producers, by type ------------------------------------------------- */

typedef struct {
  PyTypeObject *type;
  pyk_kind kind;
  PyObject *from_dlpack; /* the producer's from_dlpack, or NULL: answer with ukern.Array */
  PyObject *current_stream; /* CuPy/torch: callable giving the current stream object */
} producer;

#define NPRODUCERS 16
static producer producers[NPRODUCERS];
static int nproducers;

static PyObject *import_attr(const char *mod, const char *attr) {
  PyObject *m = PyImport_ImportModule(mod);
  if (!m) {
    PyErr_Clear();
    return NULL;
  }
  PyObject *a = PyObject_GetAttrString(m, attr);
  Py_DECREF(m);
  if (!a) PyErr_Clear();
  return a;
}

/* Root package of a type's __module__ ("cupy._core.core" -> "cupy"). */
static int type_root(PyTypeObject *tp, char *buf, size_t cap) {
  buf[0] = 0;
  PyObject *m = PyObject_GetAttrString((PyObject *)tp, "__module__");
  if (!m) {
    PyErr_Clear();
    return 0;
  }
  PyObject *b = PyUnicode_Check(m) ? PyUnicode_AsUTF8String(m) : NULL;
  Py_DECREF(m);
  if (!b) {
    PyErr_Clear();
    return 0;
  }
  const char *s = PyBytes_AsString(b);
  size_t i = 0;
  for (; s && s[i] && s[i] != '.' && i + 1 < cap; i++) buf[i] = s[i];
  buf[i] = 0;
  Py_DECREF(b);
  return 1;
}

static producer *producer_of(PyTypeObject *tp) {
  for (int i = 0; i < nproducers; i++)
    if (producers[i].type == tp) return &producers[i];
  static producer scratch;
  producer *p = nproducers < NPRODUCERS ? &producers[nproducers] : &scratch;
  memset(p, 0, sizeof *p);
  char root[64];
  type_root(tp, root, sizeof root);
  if (tp == pyk_ArrayType) {
    p->kind = PYK_UKERN;
  } else if (!strcmp(root, "cupy") || !strcmp(root, "cupy_backends")) {
    p->kind = PYK_CUPY;
    p->from_dlpack = import_attr("cupy", "from_dlpack");
    p->current_stream = import_attr("cupy.cuda", "get_current_stream");
  } else if (!strcmp(root, "torch")) {
    p->kind = PYK_TORCH;
    p->from_dlpack = import_attr("torch", "from_dlpack");
    p->current_stream = import_attr("torch.cuda", "current_stream");
  } else if (!strcmp(root, "jaxlib") || !strcmp(root, "jax")) {
    p->from_dlpack = import_attr("jax.numpy", "from_dlpack");
  } else if (root[0]) {
    /* Another library answers in kind when it has from_dlpack; only one
     * already imported is asked (importing a module can run anything). */
    PyObject *mods = PySys_GetObject("modules"); /* borrowed */
    PyObject *mod = mods ? PyDict_GetItemString(mods, root) : NULL;
    if (mod && !(p->from_dlpack = PyObject_GetAttrString(mod, "from_dlpack"))) PyErr_Clear();
  }
  Py_INCREF(tp); /* the table outlives any one array */
  p->type = tp;
  if (p != &scratch) nproducers++;
  return p;
}

/* A type already seen as an array producer (skips the NumPy-scalar check). */
static int known_array_type(PyTypeObject *tp) {
  for (int i = 0; i < nproducers; i++)
    if (producers[i].type == tp) return 1;
  return 0;
}

/* ---- streams ------------------------------------------------------------ */

/* A protocol stream integer as a CUstream: 0 and 1 are the legacy default
 * stream (NULL in the driver API), 2 the per-thread default stream. */
void *pyk_stream_from_int(unsigned long long v) { return v == 1 ? NULL : (void *)(uintptr_t)v; }

int pyk_stream_from_object(PyObject *o, void **out) {
  PyObject *v = NULL;
  static const char *const attrs[] = {"ptr",          /* cupy.cuda.Stream */
                                      "cuda_stream",  /* torch.cuda.Stream */
                                      NULL};
  if (PyLong_Check(o)) {
    v = o;
    Py_INCREF(v);
  }
  for (int i = 0; !v && attrs[i]; i++)
    if (!(v = PyObject_GetAttrString(o, attrs[i]))) PyErr_Clear();
  if (!v && (v = PyObject_CallMethod(o, "__cuda_stream__", NULL))) { /* CUDA stream protocol: (version, handle) */
    PyObject *h = PyTuple_Check(v) && PyTuple_Size(v) == 2 ? PyTuple_GetItem(v, 1) : NULL;
    Py_XINCREF(h);
    Py_DECREF(v);
    v = h;
  }
  if (!v) {
    PyErr_Clear();
    if (!(v = PyNumber_Long(o))) { /* numba.cuda streams convert with int() */
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "stream must be None, an int (CUstream), a CuPy, PyTorch or Numba stream, "
                                       "or an object with __cuda_stream__");
      return -1;
    }
  }
  unsigned long long s = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  if (s == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *out = pyk_stream_from_int(s);
  return 0;
}

void pyk_call_init(pyk_call *c, int allow_host) {
  c->narr = 0;
  c->nkeep = 0;
  c->kind = PYK_OTHER;
  c->first = NULL;
  c->stream = NULL;
  c->have_stream = 0;
  c->nproduced = 0;
  c->allow_host = allow_host;
  c->have_cupy_stream = 0;
}

void pyk_call_produced_on(pyk_call *c, void *s) {
  if (!c->have_stream) c->stream = s, c->have_stream = 1;
  for (int i = 0; i < c->nproduced; i++)
    if (c->produced_on[i] == s) return;
  if (c->nproduced < 8) c->produced_on[c->nproduced++] = s;
}

void pyk_call_clear(pyk_call *c) {
  for (int i = 0; i < c->nkeep; i++) Py_DECREF(c->keep[i]);
  c->nkeep = 0;
}

int pyk_call_set_stream(pyk_call *c, PyObject *stream) {
  if (!stream || stream == Py_None) return 0;
  if (pyk_stream_from_object(stream, &c->stream) < 0) return -1;
  c->have_stream = 1;
  return 0;
}

static int producer_stream(pyk_call *c, PyObject *arr) {
  producer *p = producer_of(Py_TYPE(arr));
  if (!p->current_stream) return 0;
  PyObject *s = PyObject_CallObject(p->current_stream, NULL);
  if (!s) return -1;
  int rc = pyk_stream_from_object(s, &c->stream);
  Py_DECREF(s);
  if (rc == 0) c->have_stream = 1;
  return rc;
}

/* Whether `s` is capturing; the legacy default stream never is, and is not
 * asked (the driver's answer there can invalidate another stream's capture). */
static uk_status stream_capturing(void *s, int *on) {
  *on = 0;
  return !s || s == (void *)1 ? UK_OK : uk_stream_capturing(s, on);
}

int pyk_stream_order(void *producer, void *consumer, int device) {
  if (producer == consumer) return 0;
  /* An event recorded outside a capture cannot order work inside it (the
   * driver invalidates the capture), nor the reverse: when one stream is
   * capturing and the other is not, the caller orders them, as with CuPy. */
  int pc = 0, cc = 0;
  uk_status cs = stream_capturing(producer, &pc);
  if (cs == UK_OK) cs = stream_capturing(consumer, &cc);
  if (cs != UK_OK) {
    pyk_raise(cs);
    return -1;
  }
  if (pc != cc) return 0;
  void *ev = NULL;
  uk_status st = uk_event_create(device, UK_EVENT_DISABLE_TIMING, &ev);
  if (st == UK_OK) st = uk_event_record(ev, producer);
  if (st == UK_OK) st = uk_stream_wait_event(consumer, ev);
  if (ev) uk_event_destroy(ev); /* the wait holds what it needs */
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  return 0;
}

int pyk_call_finish_stream(pyk_call *c) {
  if (!c->have_stream && c->first && producer_stream(c, c->first) < 0) return -1;
  if (c->allow_host) return 0;
  for (int i = 0; i < c->nproduced; i++)
    if (pyk_stream_order(c->produced_on[i], c->stream, c->narr ? c->arr[0].device : 0) < 0) return -1;
  return 0;
}

/* ---- array interfaces --------------------------------------------------- */

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

/* Fills *a from a __cuda_array_interface__ / __array_interface__ dict.
 * *stream_out gets the CAI v3 stream (or stays untouched); returns 1 when
 * one was given. *readonly: the data tuple's second element is true. */
static int from_interface(PyObject *d, uk_array *a, void **stream_out, unsigned char *readonly) {
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

/* (type, id) of o's __dlpack_device__; type 0 when it has none. */
static int dlpack_device(PyObject *o, int *type, int *id) {
  *type = 0;
  *id = 0;
  PyObject *r = PyObject_CallMethodObjArgs(o, str_dlpack_device, NULL);
  if (!r) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
    PyErr_Clear();
    return 0;
  }
  long t = -1, d = -1;
  if (PyTuple_Check(r) && PyTuple_Size(r) == 2) {
    t = PyLong_AsLong(PyTuple_GetItem(r, 0));
    d = PyLong_AsLong(PyTuple_GetItem(r, 1));
  }
  Py_DECREF(r);
  if (t < 0 || d < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "__dlpack_device__ did not return (type, id)");
    return -1;
  }
  *type = (int)t;
  *id = (int)d;
  return 0;
}

/* Device id of a CAI array. __dlpack_device__ costs CuPy a
 * cudaPointerGetAttributes per argument per call; CuPy's data.device_id and
 * torch's get_device() are the same id, read from the object. */
static int cai_device(PyObject *o, int *id) {
  pyk_kind k = producer_of(Py_TYPE(o))->kind;
  PyObject *v = NULL;
  if (k == PYK_CUPY) {
    PyObject *mem = PyObject_GetAttr(o, str_data);
    v = mem ? PyObject_GetAttrString(mem, "device_id") : NULL;
    Py_XDECREF(mem);
  } else if (k == PYK_TORCH) {
    v = PyObject_CallMethod(o, "get_device", NULL);
  }
  long d = v && PyLong_Check(v) ? PyLong_AsLong(v) : -1;
  Py_XDECREF(v);
  if (d >= 0 && d <= INT_MAX) {
    *id = (int)d;
    return 0;
  }
  PyErr_Clear();
  int type = 0;
  return dlpack_device(o, &type, id);
}

static int from_dlpack_obj(pyk_call *c, PyObject *o, uk_array *a) {
  if (c->nkeep >= PYK_MAX_ARGS) {
    PyErr_SetString(PyExc_ValueError, "too many DLPack arguments");
    return -1;
  }
  if (!c->have_stream && producer_stream(c, o) < 0) return -1;
  c->have_stream = 1;
  uintptr_t s = (uintptr_t)c->stream;
  PyObject *kw = Py_BuildValue("{sK}", "stream", (unsigned long long)(s ? s : 1));
  PyObject *fn = kw ? PyObject_GetAttr(o, str_dlpack) : NULL;
  PyObject *empty = fn ? PyTuple_New(0) : NULL;
  PyObject *cap = empty ? PyObject_Call(fn, empty, kw) : NULL;
  Py_XDECREF(kw);
  Py_XDECREF(fn);
  Py_XDECREF(empty);
  if (!cap) return -1;
  c->keep[c->nkeep++] = cap; /* unconsumed: its destructor gives the tensor back */
  DLManagedTensor *t = PyCapsule_GetPointer(cap, "dltensor");
  if (!t) return -1;
  /* CuPy (<= 14) divides a negative byte stride by an unsigned item size:
   * -16 / 8 arrives as 2^61 - 2 elements. A stride that large cannot be
   * addressed anyway; when it multiplies back (mod 2^64) to a negative byte
   * stride that divides exactly, that is what the producer meant. */
  DLTensor dt = t->dl_tensor;
  int64_t fixed[UK_MAX_NDIM];
  uk_dtype dty;
  if (dt.strides && dt.ndim > 0 && dt.ndim <= UK_MAX_NDIM && uk_dtype_from_dlpack(dt.dtype, &dty) == UK_OK) {
    uint64_t item = uk_dtype_size(dty);
    for (int d = 0; d < dt.ndim; d++) {
      uint64_t u = (uint64_t)dt.strides[d], bytes = u * item;
      fixed[d] = dt.strides[d];
      if (dt.strides[d] > INT64_MAX / (int64_t)item && bytes > (uint64_t)INT64_MAX && bytes / item == u &&
          bytes % item == 0)
        fixed[d] = -(int64_t)((0 - bytes) / item);
    }
    dt.strides = fixed;
  }
  uk_status st = uk_array_from_dlpack(&dt, a);
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  return 0;
}

/* ---- one argument ------------------------------------------------------- */

static int not_cuda(PyObject *o, int devtype) {
  if (devtype == 0)
    PyErr_Format(PyExc_TypeError,
                 "unsupported argument type %R: expected a CUDA array (__cuda_array_interface__ or __dlpack__) "
                 "or a scalar",
                 (PyObject *)Py_TYPE(o));
  else
    PyErr_Format(PyExc_TypeError,
                 "argument of type %R is not in CUDA device memory (DLPack device type %d): pass a CUDA array",
                 (PyObject *)Py_TYPE(o), devtype);
  return -1;
}

static int array_from(pyk_call *c, PyObject *o, uk_array *a) {
  c->readonly[a - c->arr] = 0; /* ukern.Array, CuPy, PyTorch and DLPack (< 1.0) memory is writable */
  if (Py_TYPE(o) == pyk_ArrayType) {
    *a = *pyk_array_desc(o);
    if (!c->first) c->first = o, c->kind = PYK_UKERN;
    return 0;
  }
  int devtype = 0, devid = 0;
  producer *p = producer_of(Py_TYPE(o));
  PyObject *cai = NULL;
  if ((p->kind == PYK_CUPY && pyk_fast_cupy_array(c, o, a)) ||
      (p->kind == PYK_TORCH && pyk_fast_torch_array(c, o, a))) {
    /* described from its attributes, as its CAI would describe it */
  } else if ((cai = PyObject_GetAttr(o, str_cai))) {
    void *s = NULL;
    int rc = from_interface(cai, a, &s, &c->readonly[a - c->arr]);
    Py_DECREF(cai);
    if (rc < 0 || cai_device(o, &devid) < 0) return -1;
    if (rc == 1) pyk_call_produced_on(c, s);
    a->device = devid;
  } else {
    /* No CAI, or one the producer cannot give (PyTorch: bfloat16): DLPack. */
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) {
      PyObject *et, *ev, *tb; /* HasAttr would swallow the producer's error */
      PyErr_Fetch(&et, &ev, &tb);
      if (!PyObject_HasAttr(o, str_dlpack)) {
        PyErr_Restore(et, ev, tb);
        return -1;
      }
      Py_XDECREF(et);
      Py_XDECREF(ev);
      Py_XDECREF(tb);
    }
    PyErr_Clear();
    if (c->allow_host && (cai = PyObject_GetAttr(o, str_ai))) {
      void *s = NULL;
      int rc = from_interface(cai, a, &s, &c->readonly[a - c->arr]);
      Py_DECREF(cai);
      if (rc < 0) return -1;
      a->device = 0;
      if (!c->first) c->first = o, c->kind = PYK_HOST;
      return 0;
    }
    PyErr_Clear();
    if (dlpack_device(o, &devtype, &devid) < 0) return -1;
    if ((devtype != 0 && devtype != 2) || !PyObject_HasAttr(o, str_dlpack)) return not_cuda(o, devtype);
    if (from_dlpack_obj(c, o, a) < 0) return -1;
  }
  if (!c->first) {
    c->first = o;
    c->kind = p->kind;
  }
  return 0;
}

int pyk_call_array(pyk_call *c, PyObject *o, uk_array **out) {
  if (c->narr >= PYK_MAX_ARGS) {
    PyErr_SetString(PyExc_ValueError, "too many array arguments");
    return -1;
  }
  uk_array *a = &c->arr[c->narr];
  if (array_from(c, o, a) < 0) return -1;
  c->narr++;
  *out = a;
  return 0;
}

static PyObject *numpy_generic(void) {
  static PyObject *generic;
  if (generic) return generic;
  PyObject *mods = PySys_GetObject("modules"); /* borrowed */
  PyObject *np = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
  if (np) generic = PyObject_GetAttrString(np, "generic");
  if (!generic) PyErr_Clear();
  return generic;
}

/* A NumPy scalar: typed, converted like a C cast. */
static int numpy_scalar(PyObject *o, uk_arg *out) {
  PyObject *dt = PyObject_GetAttrString(o, "dtype");
  PyObject *ts = dt ? PyObject_GetAttrString(dt, "str") : NULL;
  uk_dtype t;
  int rc = ts ? pyk_typestr_dtype(ts, &t) : -1;
  Py_XDECREF(dt);
  Py_XDECREF(ts);
  if (rc < 0) return -1;
  PyObject *b = PyObject_CallMethod(o, "tobytes", NULL);
  if (!b) return -1;
  char *p = NULL;
  Py_ssize_t n = 0;
  if (PyBytes_AsStringAndSize(b, &p, &n) < 0 || (size_t)n != uk_dtype_size(t)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "NumPy scalar of unexpected size");
    Py_DECREF(b);
    return -1;
  }
  *out = uk_arg_typed(t, p);
  Py_DECREF(b);
  return 0;
}

/* A CUDA texture object (cupy.cuda.texture.TextureObject: a class of that
 * name with the handle in .ptr), passed as CuPy passes it: a
 * cudaTextureObject_t by value. 1 done, 0 not one, -1 error. */
static int texture_object(PyObject *o, uk_arg *out) {
  /* By the class's name each time (this path is reached only by objects
   * that are neither arrays nor scalars): remembering one class would
   * refuse CuPy's after a look-alike was met first. */
  PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(o), "__name__");
  int is = name && PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "TextureObject") == 0;
  Py_XDECREF(name);
  PyErr_Clear();
  if (!is) return 0;
  PyObject *ptr = PyObject_GetAttrString(o, "ptr");
  if (!ptr) return -1;
  unsigned long long v = PyLong_AsUnsignedLongLong(ptr);
  Py_DECREF(ptr);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *out = uk_arg_texture(v);
  return 1;
}

int pyk_call_arg(pyk_call *c, PyObject *o, int i) {
  uk_arg *g = &c->arg[i];
  if (PyBool_Check(o)) {
    *g = uk_arg_bool(o == Py_True);
  } else if (PyLong_Check(o)) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    *g = uk_arg_int(v);
  } else if (PyFloat_Check(o)) {
    *g = uk_arg_float(PyFloat_AsDouble(o));
  } else if (PyComplex_Check(o)) {
    *g = uk_arg_complex(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o));
  } else {
    int fast = pyk_fast_scalar(o, g);
    if (fast) return fast < 0 ? -1 : 0;
    PyObject *gen = Py_TYPE(o) == pyk_ArrayType || known_array_type(Py_TYPE(o)) ? NULL : numpy_generic();
    if (gen) {
      int r = PyObject_IsInstance(o, gen);
      if (r < 0) return -1;
      if (r) {
        if (numpy_scalar(o, g) < 0) return -1;
        pyk_fast_scalar_learn(Py_TYPE(o), g->dtype); /* the next one of this type converts by number */
        return 0;
      }
    }
    int tex = Py_TYPE(o) == pyk_ArrayType || known_array_type(Py_TYPE(o)) ? 0 : texture_object(o, g);
    if (tex) return tex < 0 ? -1 : 0;
    uk_array *a;
    if (pyk_call_array(c, o, &a) < 0) return -1;
    *g = uk_arg_array(a);
  }
  return 0;
}

/* ---- outputs ------------------------------------------------------------ */

PyObject *pyk_call_wrap_output(pyk_call *c, PyObject *ctx, uk_array *a) {
  if (!a->data) {
    /* A zero-size output has no memory; consumers want a real address. */
    int64_t one = 1;
    uk_array tmp;
    uk_status st = uk_array_alloc(pyk_context_ptr(ctx), a->dtype, 1, &one, a->device, c->stream, &tmp);
    if (st != UK_OK) return pyk_raise(st);
    a->data = tmp.data;
  }
  PyObject *arr = pyk_array_new_owner(ctx, a, c->stream);
  if (!arr || !c->first || c->kind == PYK_UKERN || c->kind == PYK_HOST) return arr;
  producer *p = producer_of(Py_TYPE(c->first));
  /* CuPy: a cupy.ndarray over the memory, made directly (from_dlpack costs more). */
  PyObject *r = p->kind == PYK_CUPY ? pyk_fast_cupy_output(c, arr, a) : NULL;
  if (!r && !PyErr_Occurred()) {
    if (!p->from_dlpack) return arr;
    r = PyObject_CallFunctionObjArgs(p->from_dlpack, arr, NULL);
  }
  Py_DECREF(arr);
  return r;
}
