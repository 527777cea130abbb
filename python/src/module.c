/*
 * module.c — the _ukern module: the shared context, status -> exception
 * mapping, small helpers and module initialisation.
 *
 * Kernels bind to the context that is current when they are made; a context
 * lives while any kernel, module or array made from it lives (each holds a
 * reference to its _Context object).
 */
#include "pyukern.h"

#include <string.h>

PyObject *pyk_CompileException;
PyObject *pyk_CUDADriverError;

/* ---- context ----------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
  uk_context *ctx;
} CtxObject;

static PyTypeObject *CtxType;
static PyObject *current_ctx; /* the context new kernels bind to; NULL until first use */

static void ctx_dealloc(PyObject *self) {
  PyTypeObject *tp = Py_TYPE(self);
  uk_context_destroy(((CtxObject *)self)->ctx);
  PyObject_Free(self);
  Py_DECREF(tp);
}

static PyType_Slot ctx_slots[] = {
    {Py_tp_dealloc, (void *)ctx_dealloc},
    {Py_tp_doc, (void *)"A ukern context (caches, allocator, target arch); internal."},
    {0, NULL}};
static PyType_Spec ctx_spec = {"ukern._Context", sizeof(CtxObject), 0, Py_TPFLAGS_DEFAULT, ctx_slots};

static PyObject *ctx_make(const uk_options *o) {
  uk_context *c = NULL;
  uk_status st;
  Py_BEGIN_ALLOW_THREADS
  st = uk_context_create(o, &c);
  Py_END_ALLOW_THREADS
  if (st != UK_OK) return pyk_raise(st);
  CtxObject *self = PyObject_New(CtxObject, CtxType);
  if (!self) {
    uk_context_destroy(c);
    return NULL;
  }
  self->ctx = c;
  return (PyObject *)self;
}

PyObject *pyk_context_get(void) {
  if (!current_ctx && !(current_ctx = ctx_make(NULL))) return NULL;
  Py_INCREF(current_ctx);
  return current_ctx;
}

uk_context *pyk_context_ptr(PyObject *ctx) { return ((CtxObject *)ctx)->ctx; }

static PyObject *py_configure(PyObject *mod, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"arch", "cache_dir", "disable_disk_cache", "device", "options", NULL};
  int arch = 0, disable = 0, device = 0;
  const char *cache_dir = NULL;
  PyObject *opts = NULL;
  (void)mod;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$izpiO:configure", kwlist, &arch, &cache_dir, &disable, &device,
                                   &opts))
    return NULL;
  if (arch < 0) {
    PyErr_SetString(PyExc_ValueError, "configure: arch must be >= 0 (e.g. 90 for sm_90; 0: the device's)");
    return NULL;
  }
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = arch;
  o.cache_dir = cache_dir;
  o.disable_disk_cache = disable;
  o.device = device;
  const char **list = NULL;
  int n = 0;
  PyObject *keep = NULL;
  if (opts && opts != Py_None && pyk_str_list(opts, &list, &n, &keep) < 0) return NULL;
  o.nvrtc_options = list;
  o.num_nvrtc_options = n;
  PyObject *c = ctx_make(&o);
  PyMem_Free(list);
  Py_XDECREF(keep);
  if (!c) return NULL;
  PyObject *old = current_ctx;
  current_ctx = c;
  Py_XDECREF(old);
  Py_RETURN_NONE;
}

static PyObject *py_cache_stats(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  PyObject *c = pyk_context_get();
  if (!c) return NULL;
  uk_cache_stats s;
  uk_status st = uk_context_cache_stats(pyk_context_ptr(c), &s);
  const char *dir = uk_context_cache_dir(pyk_context_ptr(c));
  Py_DECREF(c);
  if (st != UK_OK) return pyk_raise(st);
  return Py_BuildValue("{sKsKsKsKsKsKsKsKss}", "memory_hits", (unsigned long long)s.memory_hits, "memory_misses",
                       (unsigned long long)s.memory_misses, "disk_hits", (unsigned long long)s.disk_hits,
                       "disk_misses", (unsigned long long)s.disk_misses, "compiles",
                       (unsigned long long)s.compiles, "store_failures", (unsigned long long)s.store_failures,
                       "corrupt_entries", (unsigned long long)s.corrupt_entries, "evictions",
                       (unsigned long long)s.evictions, "cache_dir", dir);
}

static PyObject *py_set_output_route(PyObject *mod, PyObject *name) {
  (void)mod;
  const char *n = PyUnicode_Check(name) ? pyk_utf8_or_null(name) : NULL;
  if (!n || pyk_fast_set_output_route(n) < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "output route must be 'direct' or 'dlpack'");
    return NULL;
  }
  Py_RETURN_NONE;
}

/* How a call reads one argument (host arrays allowed, as source() reads
 * them): (kind, dtype name, value bytes) for a scalar, (kind, dtype name,
 * data, shape, strides, device) for an array. Tests compare the fast paths
 * (fast.c) with the protocol paths through it. */
static PyObject *py_arg(PyObject *mod, PyObject *o) {
  (void)mod;
  pyk_call c;
  pyk_call_init(&c, 1);
  PyObject *r = NULL;
  if (pyk_call_arg(&c, o, 0) == 0) {
    const uk_arg *g = &c.arg[0];
    if (g->kind == UK_ARG_ARRAY) {
      const uk_array *a = g->v.array;
      PyObject *sh = PyTuple_New(a->ndim), *st = PyTuple_New(a->ndim);
      for (int d = 0; sh && st && d < a->ndim; d++) {
        PyTuple_SetItem(sh, d, PyLong_FromLongLong(a->shape[d]));
        PyTuple_SetItem(st, d, PyLong_FromLongLong(a->strides[d]));
      }
      if (sh && st && !PyErr_Occurred())
        r = Py_BuildValue("(isKOOi)", (int)g->kind, uk_dtype_name(a->dtype), (unsigned long long)a->data, sh, st,
                          a->device);
      Py_XDECREF(sh);
      Py_XDECREF(st);
    } else {
      int typed = g->kind == UK_ARG_TYPED;
      r = Py_BuildValue("(isy#)", (int)g->kind, typed ? uk_dtype_name(g->dtype) : "", (const char *)g->v.bytes,
                        (Py_ssize_t)(typed ? uk_dtype_size(g->dtype) : sizeof g->v));
    }
  }
  pyk_call_clear(&c);
  return r;
}

static PyObject *py_set_host_arg_type(PyObject *mod, PyObject *tp) {
  (void)mod;
  if (pyk_raw_set_host_type(tp) < 0) return NULL;
  Py_RETURN_NONE;
}

static PyObject *py_device_count(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  int n = 0;
  uk_status st = uk_device_count(&n);
  if (st == UK_ERR_NO_DEVICE) return PyLong_FromLong(0);
  if (st != UK_OK) return pyk_raise(st);
  return PyLong_FromLong(n);
}

static PyObject *py_synchronize(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  uk_status st;
  Py_BEGIN_ALLOW_THREADS
  st = uk_device_synchronize();
  Py_END_ALLOW_THREADS
  if (st != UK_OK) return pyk_raise(st);
  Py_RETURN_NONE;
}

/* ---- errors ------------------------------------------------------------ */

PyObject *pyk_raise(uk_status st) {
  const char *msg = uk_last_error();
  if (!msg || !*msg) msg = uk_status_message(st);
  PyObject *type;
  switch (st) {
  case UK_ERR_NOMEM: type = PyExc_MemoryError; break;
  case UK_ERR_SYNTAX:
  case UK_ERR_SHAPE:
  case UK_ERR_INVALID: type = PyExc_ValueError; break;
  case UK_ERR_TYPE: type = PyExc_TypeError; break;
  case UK_ERR_COMPILE: type = pyk_CompileException; break;
  case UK_ERR_CUDA:
  case UK_ERR_NO_DEVICE:
  case UK_ERR_NOT_FOUND: type = pyk_CUDADriverError; break;
  case UK_ERR_IO: type = PyExc_OSError; break;
  default: type = PyExc_RuntimeError; break;
  }
  PyObject *exc = NULL;
  PyObject *log = NULL;
  /* in Python's words: ukern.configure(arch=...), the exception's .log (errtext.c) */
  PyObject *words = pyk_python_message(msg);
  if (!words) return NULL;
  if (st == UK_ERR_COMPILE) {
    /* str(e) shows the log too, as CuPy's CompileException does. */
    log = PyUnicode_FromString(uk_last_error_log());
    PyObject *text = log ? PyUnicode_FromFormat("%U\n%U", words, log) : NULL;
    exc = text ? PyObject_CallFunctionObjArgs(type, text, NULL) : NULL;
    Py_XDECREF(text);
  } else {
    exc = PyObject_CallFunctionObjArgs(type, words, NULL);
  }
  Py_DECREF(words);
  if (!exc) {
    Py_XDECREF(log);
    return NULL;
  }
  if (log) {
    if (PyObject_SetAttrString(exc, "log", log) < 0) PyErr_Clear();
    Py_DECREF(log);
  }
  PyObject *name = PyUnicode_FromString(uk_status_name(st));
  if (name) {
    if (PyObject_SetAttrString(exc, "status", name) < 0) PyErr_Clear();
    Py_DECREF(name);
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  pyk_cupy_error(0);
  return NULL;
}

/* With CuPy imported, a CompileException or CUDADriverError being raised becomes an
 * instance of a subclass that is also CuPy's exception of that kind (ukern._raw._as_cupy),
 * so code written for CuPy catches it. Anything failing here keeps ukern's exception. */
void pyk_cupy_error(int jitify) {
  if (!PyErr_ExceptionMatches(pyk_CompileException) && !PyErr_ExceptionMatches(pyk_CUDADriverError)) return;
  PyObject *mods = PyImport_GetModuleDict();
  if (!mods || !PyDict_GetItemString(mods, "cupy")) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *raw = value ? PyImport_ImportModule("ukern._raw") : NULL;
  PyObject *r = raw ? PyObject_CallMethod(raw, "_as_cupy", "Oi", value, jitify) : NULL;
  if (!r) PyErr_Clear();
  Py_XDECREF(r);
  Py_XDECREF(raw);
  if (value && (PyObject *)Py_TYPE(value) != type) { /* raised as its (new) class */
    Py_XDECREF(type);
    type = (PyObject *)Py_TYPE(value);
    Py_INCREF(type);
  }
  PyErr_Restore(type, value, tb);
}

/* ---- helpers ----------------------------------------------------------- */

int pyk_count_params(const char *p) {
  int n = 0, any = 0;
  for (; *p; p++) {
    if (*p == ',') n++;
    else if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') any = 1;
  }
  return any ? n + 1 : 0;
}

int pyk_str_list(PyObject *seq, const char ***out, int *n, PyObject **keep) {
  *out = NULL;
  *n = 0;
  *keep = NULL;
  if (PyUnicode_Check(seq)) {
    PyErr_SetString(PyExc_TypeError, "options must be a tuple or list of str, not a str");
    return -1;
  }
  PyObject *fast = PySequence_Tuple(seq);
  if (!fast) return -1;
  Py_ssize_t len = PyTuple_Size(fast);
  /* The tuple (handed to the caller in *keep) keeps the strings alive even
   * if seq is a list that another thread changes while the GIL is released. */
  const char **list = PyMem_Calloc((size_t)(len ? len : 1), sizeof *list);
  if (!list) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *s = PyTuple_GetItem(fast, i);
    const char *u = s && PyUnicode_Check(s) ? pyk_utf8_or_null(s) : NULL;
    if (!u) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "options[%zd] must be a str", i);
      PyMem_Free(list);
      Py_DECREF(fast);
      return -1;
    }
    list[i] = u;
  }
  *keep = fast;
  *out = list;
  *n = (int)len;
  return 0;
}

/* UTF-8 of a str, cached on the str object by CPython ("s" conversion):
 * valid while the str lives. NULL with an exception (embedded NUL, not str). */
const char *pyk_utf8_or_null(PyObject *o) {
  const char *u = NULL;
  if (!PyArg_Parse(o, "s", &u)) return NULL;
  return u;
}

PyTypeObject *pyk_add_type(PyObject *m, PyType_Spec *spec) {
  PyObject *t = PyType_FromSpec(spec);
  if (!t) return NULL;
  const char *dot = strrchr(spec->name, '.');
  Py_INCREF(t);
  if (PyModule_AddObject(m, dot ? dot + 1 : spec->name, t) < 0) {
    Py_DECREF(t);
    Py_DECREF(t);
    return NULL;
  }
  return (PyTypeObject *)t;
}

/* ---- module ------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))py_configure, METH_VARARGS | METH_KEYWORDS,
     "configure(*, arch=0, cache_dir=None, disable_disk_cache=False, device=0, options=())\n\n"
     "Makes a new context for kernels created from now on. arch=90 compiles for sm_90 instead of the\n"
     "device's arch (needed to compile without a GPU). Existing kernels keep their context."},
    {"cache_stats", py_cache_stats, METH_NOARGS, "cache_stats() -> dict of the current context's cache counters."},
    {"device_count", py_device_count, METH_NOARGS, "device_count() -> number of CUDA devices (0 without a driver)."},
    {"synchronize", py_synchronize, METH_NOARGS, "synchronize(): waits for all work on the current device."},
    {"_set_host_arg_type", py_set_host_arg_type, METH_O,
     "_set_host_arg_type(cls): the base class of ukern.In/Out/InOut (RawKernel copies them). Internal."},
    {"_arg", py_arg, METH_O, "_arg(x) -> how a call reads argument x (a tuple). Internal (tests)."},
    {"_set_output_route", py_set_output_route, METH_O,
     "_set_output_route('direct' | 'dlpack'): how outputs ukern allocates become cupy.ndarray: directly over\n"
     "the memory (default) or through cupy.from_dlpack. Internal (for measuring host cost)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_ukern",
                                    "The ukern extension module; use the ukern package.", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__ukern(void);
PyMODINIT_FUNC PyInit__ukern(void) {
  PyObject *m = PyModule_Create(&moddef);
  if (!m) return NULL;
  if (!(CtxType = (PyTypeObject *)PyType_FromSpec(&ctx_spec))) goto fail;
  pyk_CompileException = PyErr_NewExceptionWithDoc(
      "ukern.CompileException",
      "NVRTC rejected the generated or given CUDA source. The message ends with the NVRTC log and the\n"
      "line-numbered source; .log holds those alone.",
      NULL, NULL);
  pyk_CUDADriverError = PyErr_NewExceptionWithDoc(
      "ukern.CUDADriverError", "A CUDA driver call failed, no driver or device is present, or a name was not found.",
      PyExc_RuntimeError, NULL);
  if (!pyk_CompileException || !pyk_CUDADriverError) goto fail;
  Py_INCREF(pyk_CompileException);
  Py_INCREF(pyk_CUDADriverError);
  if (PyModule_AddObject(m, "CompileException", pyk_CompileException) < 0 ||
      PyModule_AddObject(m, "CUDADriverError", pyk_CUDADriverError) < 0)
    goto fail;
  if (PyModule_AddStringConstant(m, "__version__", uk_version()) < 0) goto fail;
  if (pyk_args_init() < 0 || pyk_array_type_init(m) < 0 || pyk_elementwise_init(m) < 0 || pyk_reduction_init(m) < 0 ||
      pyk_raw_init(m) < 0 || pyk_bundle_init(m) < 0 ||
      pyk_fusion_init(m) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
