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
static PyObject *str_cai, *str_ai, *str_dlpack, *str_dlpack_device, *str_data;

int pyk_args_init(void) {
  struct {
    PyObject **slot;
    const char *text;
  } names[] = {{&str_cai, "__cuda_array_interface__"}, {&str_ai, "__array_interface__"},
               {&str_dlpack, "__dlpack__"},            {&str_dlpack_device, "__dlpack_device__"},
               {&str_data, "data"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!(*names[i].slot = PyUnicode_InternFromString(names[i].text))) return -1;
  if (pyk_interface_init() < 0) return -1;
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

/* ---- the call and its launch stream ------------------------------------ */

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

int pyk_call_finish_stream(pyk_call *c) {
  if (!c->have_stream && c->first && producer_stream(c, c->first) < 0) return -1;
  if (c->allow_host) return 0;
  for (int i = 0; i < c->nproduced; i++)
    if (pyk_stream_order(c->produced_on[i], c->stream, c->narr ? c->arr[0].device : 0) < 0) return -1;
  return 0;
}

/* ---- devices and DLPack ------------------------------------------------ */

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
    int rc = pyk_interface_array(cai, a, &s, &c->readonly[a - c->arr]);
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
      int rc = pyk_interface_array(cai, a, &s, &c->readonly[a - c->arr]);
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
