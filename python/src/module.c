/*
 * module.c — the _ukern module: its functions (configure, cache_stats,
 * device_count, synchronize and the internal hooks) and its initialisation,
 * which makes the context type and the exception classes and calls each
 * type's init. The top of python/src: nothing here is used by another file.
 */
#include "pyukern.h"

#include <string.h>

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
  int rc = pyk_context_replace(&o);
  PyMem_Free(list);
  Py_XDECREF(keep);
  if (rc < 0) return NULL;
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
static PyObject *py_set_error_type_hook(PyObject *m, PyObject *hook) {
  (void)m;
  if (pyk_set_error_type_hook(hook) < 0) return NULL;
  Py_RETURN_NONE;
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
    {"_set_error_type_hook", py_set_error_type_hook, METH_O,
     "_set_error_type_hook(f): f(cls) gives the class to raise for ukern's CompileException, JitifyException\n"
     "and CUDADriverError (ukern._errors: CuPy's classes too when CuPy is imported). Internal."},
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
  if (pyk_context_init() < 0 || pyk_errors_init(m) < 0) goto fail;
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
