/*
 * raw.c — ukern.RawModule and ukern.RawKernel: user CUDA source compiled by
 * NVRTC or nvcc (backend=, through ukern's caches) or a .cubin/.ptx/.fatbin
 * file, kernels launched as CuPy does: k(grid, block, args, shared_mem=0,
 * stream=None). raw_call.c packs the arguments.
 *
 * Compilation is lazy, as in CuPy: the first get_function/get_global/call
 * (or compile()) builds the module; compile errors raise CompileException
 * (with CuPy's attributes: source, name, options, backend), a missing
 * kernel or file CUDADriverError naming CUDA_ERROR_NOT_FOUND /
 * CUDA_ERROR_FILE_NOT_FOUND as CuPy's does.
 */
#include "pyukern.h"

#include <string.h>
#include <structmember.h>
#include <unistd.h>

typedef struct {
  PyObject_HEAD
  uk_module *m;
  PyObject *ctx;
  PyObject *code, *path, *options, *name_expressions; /* str/None, tuples */
  PyObject *source;  /* what is compiled: code, translated for translate_cucomplex */
  PyObject *backend; /* 'nvrtc' or 'nvcc' */
  PyObject *jitify;  /* None or bool, as given */
  char cooperative, translate;
} ModObject;

typedef struct {
  PyObject_HEAD
  PyObject *mod; /* ModObject */
  PyObject *name;
  PyObject *signature; /* str or None */
  uk_function *f;
  pyk_raw_sig sig;     /* set with f */
  char cooperative;
} KerObject;

static PyTypeObject *ModType, *KerType;

/* ---- RawModule ----------------------------------------------------------- */

static ModObject *mod_make(PyObject *code, PyObject *path, PyObject *options, PyObject *names, int coop,
                           PyObject *backend, int translate, PyObject *jitify) {
  ModObject *self = (ModObject *)((allocfunc)PyType_GetSlot(ModType, Py_tp_alloc))(ModType, 0);
  if (!self) return NULL;
  self->cooperative = (char)coop;
  self->translate = (char)translate;
  self->ctx = pyk_context_get();
  self->code = code ? (Py_INCREF(code), code) : (Py_INCREF(Py_None), Py_None);
  self->path = path ? (Py_INCREF(path), path) : (Py_INCREF(Py_None), Py_None);
  /* A file module: CuPy reports backend 'nvcc' and no options. */
  self->options = options && !path ? PySequence_Tuple(options) : PyTuple_New(0);
  self->name_expressions = names && names != Py_None ? PySequence_Tuple(names) : PyTuple_New(0);
  self->backend = path ? PyUnicode_FromString("nvcc") : (Py_INCREF(backend), backend);
  self->jitify = jitify ? jitify : Py_None;
  Py_INCREF(self->jitify);
  self->source = code && translate ? pyk_raw_translate_cucomplex(code) : code ? (Py_INCREF(code), code) : NULL;
  if (!self->ctx || !self->options || !self->name_expressions || !self->backend || (code && !self->source)) {
    Py_DECREF(self);
    return NULL;
  }
  return self;
}

static PyObject *mod_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"code",  "path",       "options", "backend", "translate_cucomplex", "enable_cooperative_groups",
                           "name_expressions", "jitify", NULL};
  PyObject *code = Py_None, *path = Py_None, *opts = NULL, *names = Py_None, *backend = NULL, *jitify = Py_None;
  int translate = 0, coop = 0;
  (void)tp;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOUp$pOO:RawModule", kwlist, &code, &path, &opts, &backend,
                                   &translate, &coop, &names, &jitify))
    return NULL;
  if ((code == Py_None) == (path == Py_None)) {
    PyErr_SetString(PyExc_TypeError, "Exactly one of `code` and `path` keyword arguments must be given.");
    return NULL;
  }
  if (code != Py_None && !PyUnicode_Check(code)) {
    PyErr_SetString(PyExc_TypeError, "code must be a str");
    return NULL;
  }
  PyObject *be = backend ? (Py_INCREF(backend), backend) : PyUnicode_FromString("nvrtc");
  if (!be) return NULL;
  ModObject *m = NULL;
  if (pyk_raw_check_options(code, path, names, be, jitify) < 0) goto out;
  if (path != Py_None && !(path = PyOS_FSPath(path))) goto out;
  m = mod_make(code == Py_None ? NULL : code, path == Py_None ? NULL : path, opts, names, coop, be, translate, jitify);
  if (path != Py_None) Py_DECREF(path);
out:
  Py_DECREF(be);
  return (PyObject *)m;
}

static void mod_dealloc(PyObject *o) {
  ModObject *self = (ModObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  uk_module_destroy(self->m);
  Py_XDECREF(self->ctx);
  Py_XDECREF(self->code);
  Py_XDECREF(self->path);
  Py_XDECREF(self->options);
  Py_XDECREF(self->name_expressions);
  Py_XDECREF(self->source);
  Py_XDECREF(self->backend);
  Py_XDECREF(self->jitify);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

/* Raises st as CuPy would: CompileException with CuPy's attributes, a
 * missing file as CUDA_ERROR_FILE_NOT_FOUND. */
static void mod_raise(ModObject *self, uk_status st) {
  if (st == UK_ERR_IO && self->path != Py_None) {
    PyObject *b = PyUnicode_EncodeFSDefault(self->path);
    if (b && access(PyBytes_AsString(b), F_OK) != 0) {
      Py_DECREF(b);
      PyErr_Format(pyk_CUDADriverError, "CUDA_ERROR_FILE_NOT_FOUND: file not found: %S (%s)", self->path,
                   uk_last_error());
      pyk_cupy_error(0);
      return;
    }
    Py_XDECREF(b);
  }
  pyk_raise(st);
  if (st != UK_ERR_COMPILE) return;
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (value) {
    PyObject *name = PyUnicode_FromString("RawModule");
    if (PyObject_SetAttrString(value, "source", self->source ? self->source : Py_None) < 0 ||
        PyObject_SetAttrString(value, "name", name ? name : Py_None) < 0 ||
        PyObject_SetAttrString(value, "options", self->options) < 0 ||
        PyObject_SetAttrString(value, "backend", self->backend) < 0)
      PyErr_Clear();
    Py_XDECREF(name);
  }
  PyErr_Restore(type, value, tb);
  if (self->jitify == Py_True) pyk_cupy_error(1); /* CuPy raises JitifyException for jitify=True modules */
}

/* Builds the module once; 0 or -1. Compiles without the GIL. */
static int mod_ensure(ModObject *self) {
  if (self->m) return 0;
  const char **opts = NULL, **names = NULL;
  int nopts = 0, nnames = 0, rc = -1;
  PyObject *keep1 = NULL, *keep2 = NULL, *code_ref = self->source ? self->source : Py_None;
  uk_module *m = NULL;
  uk_status st;
  Py_INCREF(code_ref); /* alive while the GIL is released */
  if (pyk_str_list(self->options, &opts, &nopts, &keep1) < 0 ||
      pyk_str_list(self->name_expressions, &names, &nnames, &keep2) < 0)
    goto out;
  uk_context *ctx = pyk_context_ptr(self->ctx);
  if (self->source) {
    const char *code = pyk_utf8_or_null(self->source);
    if (!code) goto out;
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.options = opts;
    mo.num_options = nopts;
    mo.name_expressions = names;
    mo.num_name_expressions = nnames;
    mo.name = "RawModule";
    mo.backend = pyk_raw_backend_id(self->backend);
    Py_BEGIN_ALLOW_THREADS
    st = uk_module_from_source(ctx, code, &mo, &m);
    Py_END_ALLOW_THREADS
  } else {
    PyObject *b = PyUnicode_EncodeFSDefault(self->path);
    if (!b) goto out;
    const char *p = PyBytes_AsString(b);
    Py_BEGIN_ALLOW_THREADS
    st = uk_module_from_file(ctx, p, &m);
    Py_END_ALLOW_THREADS
    Py_DECREF(b);
  }
  if (st != UK_OK) {
    mod_raise(self, st);
    goto out;
  }
  if (self->m) uk_module_destroy(m); /* another thread finished first */
  else self->m = m;
  rc = 0;
out:
  PyMem_Free(opts);
  PyMem_Free(names);
  Py_XDECREF(keep1);
  Py_XDECREF(keep2);
  Py_DECREF(code_ref);
  return rc;
}

static PyObject *mod_compile(PyObject *o, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"log_stream", NULL};
  PyObject *log = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:compile", kwlist, &log)) return NULL;
  ModObject *self = (ModObject *)o;
  if (mod_ensure(self) < 0) return NULL;
  if (log != Py_None) {
    PyObject *r = PyObject_CallMethod(log, "write", "s", uk_module_log(self->m));
    if (!r) return NULL;
    Py_DECREF(r);
  }
  Py_RETURN_NONE;
}

static PyObject *ker_make(PyObject *mod, PyObject *name, int coop);
static int ker_ensure(KerObject *self);

static PyObject *mod_get_function(PyObject *o, PyObject *name) {
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "name must be a str");
    return NULL;
  }
  KerObject *k = (KerObject *)ker_make(o, name, ((ModObject *)o)->cooperative);
  if (k && ker_ensure(k) < 0) Py_CLEAR(k); /* a wrong name fails here, as in CuPy */
  return (PyObject *)k;
}

/* A kernel of the module, compiled when first needed (unpickling). */
static PyObject *mod_lazy_function(PyObject *o, PyObject *name) {
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "name must be a str");
    return NULL;
  }
  return ker_make(o, name, ((ModObject *)o)->cooperative);
}

static PyObject *mod_get_global(PyObject *o, PyObject *name) {
  ModObject *self = (ModObject *)o;
  const char *n = PyUnicode_Check(name) ? pyk_utf8_or_null(name) : NULL;
  if (!n) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "name must be a str");
    return NULL;
  }
  if (mod_ensure(self) < 0) return NULL;
  uint64_t ptr = 0;
  size_t bytes = 0;
  uk_status st = uk_module_global(self->m, n, &ptr, &bytes);
  if (st != UK_OK) return pyk_raise(st);
  uk_array a;
  int64_t shape[1] = {(int64_t)bytes};
  uk_array_init(&a, ptr, UK_UINT8, 1, shape);
  return pyk_array_new_view(o, &a);
}

static PyObject *mod_lowered_name(PyObject *o, PyObject *name) {
  ModObject *self = (ModObject *)o;
  const char *n = PyUnicode_Check(name) ? pyk_utf8_or_null(name) : NULL, *low = NULL;
  if (!n) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "name must be a str");
    return NULL;
  }
  if (mod_ensure(self) < 0) return NULL;
  uk_status st = uk_module_lowered_name(self->m, n, &low);
  if (st != UK_OK) return pyk_raise(st);
  return PyUnicode_FromString(low);
}

static PyMethodDef mod_methods[] = {
    {"compile", (PyCFunction)(void (*)(void))mod_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(log_stream=None): builds the module now (NVRTC, through ukern's caches); writes the\n"
     "NVRTC log to log_stream. Without a GPU this works after ukern.configure(arch=...)."},
    {"get_function", mod_get_function, METH_O,
     "get_function(name) -> RawKernel: a kernel by name or by one of name_expressions.\n"
     "CuPy returns a cupy.cuda.Function; the RawKernel here is called the same way."},
    {"get_global", mod_get_global, METH_O,
     "get_global(name) -> ukern.Array: a __device__/__constant__ variable's memory as uint8 of its size\n"
     "(CuPy returns a MemoryPointer: use .ptr, or cupy.asarray(g).view(dtype))."},
    {"get_lowered_name", mod_lowered_name, METH_O, "get_lowered_name(name_expression) -> the mangled name. ukern only."},
    {"_lazy_function", mod_lazy_function, METH_O,
     "_lazy_function(name) -> RawKernel compiled and looked up at its first use (for unpickling). Internal."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef mod_members[] = {
    {"code", T_OBJECT_EX, offsetof(ModObject, code), READONLY, "CUDA source or None."},
    {"path", T_OBJECT_EX, offsetof(ModObject, path), READONLY, "Module file or None."},
    {"options", T_OBJECT_EX, offsetof(ModObject, options), READONLY, "NVRTC options."},
    {"name_expressions", T_OBJECT_EX, offsetof(ModObject, name_expressions), READONLY, "Name expressions."},
    {"enable_cooperative_groups", T_BOOL, offsetof(ModObject, cooperative), READONLY, "Cooperative launches."},
    {"translate_cucomplex", T_BOOL, offsetof(ModObject, translate), READONLY, "cuComplex.h mapped to complex<T>."},
    {"backend", T_OBJECT_EX, offsetof(ModObject, backend), READONLY, "'nvrtc' or 'nvcc' ('nvcc' for a file)."},
    {"jitify", T_OBJECT_EX, offsetof(ModObject, jitify), READONLY, "jitify= as given (None by default)."},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot mod_slots[] = {
    {Py_tp_new, (void *)mod_new},
    {Py_tp_dealloc, (void *)mod_dealloc},
    {Py_tp_methods, mod_methods},
    {Py_tp_members, mod_members},
    {Py_tp_doc,
     (void *)"RawModule(*, code=None, path=None, options=(), backend='nvrtc', translate_cucomplex=False,\n"
             "          enable_cooperative_groups=False, name_expressions=None, jitify=None)\n\n"
             "CuPy's RawModule on ukern: CUDA source compiled for the device's exact arch (or\n"
             "ukern.configure(arch=...)) by NVRTC or, with backend='nvcc', by the toolkit's nvcc, cached in\n"
             "memory and on disk; or a .cubin/.ptx/.fatbin file. CuPy's device headers (<cupy/complex.cuh>,\n"
             "<cupy/math_constants.h>, ...) are built in. translate_cucomplex=True maps cuComplex.h onto\n"
             "complex<T> as CuPy does; jitify= is accepted with CuPy's DeprecationWarning and not needed\n"
             "(ukern's standard header map does Jitify's job). Compile errors raise CompileException."},
    {0, NULL}};
static PyType_Spec mod_spec = {"ukern.RawModule", sizeof(ModObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                               mod_slots};

/* ---- RawKernel ----------------------------------------------------------- */

static PyObject *ker_make(PyObject *mod, PyObject *name, int coop) {
  KerObject *self = (KerObject *)((allocfunc)PyType_GetSlot(KerType, Py_tp_alloc))(KerType, 0);
  if (!self) return NULL;
  Py_INCREF(mod);
  Py_INCREF(name);
  Py_INCREF(Py_None);
  self->mod = mod;
  self->name = name;
  self->signature = Py_None;
  self->cooperative = (char)coop;
  return (PyObject *)self;
}

static PyObject *ker_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"code", "name", "options", "backend", "translate_cucomplex", "enable_cooperative_groups",
                           "jitify", "signature", NULL};
  PyObject *code, *name, *opts = NULL, *backend = NULL, *jitify = Py_None, *sig = Py_None;
  int translate = 0, coop = 0;
  (void)tp;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UU|OU$ppOO:RawKernel", kwlist, &code, &name, &opts, &backend,
                                   &translate, &coop, &jitify, &sig))
    return NULL;
  if (sig != Py_None && !PyUnicode_Check(sig)) {
    PyErr_SetString(PyExc_TypeError, "signature must be a str such as 'const float* x, float* y, int n'");
    return NULL;
  }
  PyObject *be = backend ? (Py_INCREF(backend), backend) : PyUnicode_FromString("nvrtc");
  if (!be) return NULL;
  PyObject *k = NULL, *mod = NULL;
  if (pyk_raw_check_options(code, Py_None, Py_None, be, jitify) < 0) goto out;
  if (!(mod = (PyObject *)mod_make(code, NULL, opts, NULL, coop, be, translate, jitify))) goto out;
  if ((k = ker_make(mod, name, coop))) {
    Py_INCREF(sig);
    Py_DECREF(((KerObject *)k)->signature);
    ((KerObject *)k)->signature = sig;
  }
out:
  Py_XDECREF(mod);
  Py_DECREF(be);
  return k;
}

static void ker_dealloc(PyObject *o) {
  KerObject *self = (KerObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  Py_XDECREF(self->mod);
  Py_XDECREF(self->name);
  Py_XDECREF(self->signature);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

/* What calls check their arguments against: the declared signature (set
 * on f and compared with the cubin's parameters where the module has a
 * cubin), else the cubin's parameters, else nothing. 0 or -1. */
static int ker_learn_params(KerObject *self, uk_function *f, const char *name) {
  pyk_raw_sig *s = &self->sig;
  int np = -1;
  const uk_param_info *params = NULL;
  if (uk_function_params(f, &np, &params) != UK_OK) np = -1, params = NULL;
  s->name = name;
  s->count = np;
  s->params = np >= 0 ? params : NULL;
  s->dtypes = NULL;
  if (self->signature == Py_None) return 0;
  const char *text = pyk_utf8_or_null(self->signature);
  if (!text) return -1;
  uk_status st = uk_function_set_signature(f, text);
  int count = 0;
  const int *dtypes = NULL;
  if (st == UK_OK) st = uk_function_signature(f, &count, &dtypes);
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  if (np >= 0 && np != count) {
    PyErr_Format(PyExc_TypeError, "signature '%s' declares %d parameter%s but kernel '%s' has %d (read from its cubin)",
                 text, count, count == 1 ? "" : "s", name, np);
    return -1;
  }
  for (int k = 0; np >= 0 && k < count; k++) {
    size_t want = dtypes[k] < 0 ? 8 : uk_dtype_size((uk_dtype)dtypes[k]);
    if (params[k].size != want) {
      PyErr_Format(PyExc_TypeError,
                   "signature '%s': parameter %d is declared as %zu bytes (%s) but kernel '%s' takes %zu bytes there "
                   "(read from its cubin)",
                   text, k + 1, want, dtypes[k] < 0 ? "a pointer" : uk_dtype_name((uk_dtype)dtypes[k]), name,
                   params[k].size);
      return -1;
    }
  }
  s->count = count;
  s->dtypes = dtypes;
  return 0;
}

static int ker_ensure(KerObject *self) {
  if (self->f) return 0;
  ModObject *m = (ModObject *)self->mod;
  if (mod_ensure(m) < 0) return -1;
  const char *n = pyk_utf8_or_null(self->name);
  if (!n) return -1;
  uk_function *f = NULL;
  uk_status st;
  Py_BEGIN_ALLOW_THREADS
  st = uk_module_function(m->m, n, &f);
  Py_END_ALLOW_THREADS
  if (st == UK_ERR_NOT_FOUND) { /* CuPy's cuModuleGetFunction error names the driver's code */
    PyErr_Format(pyk_CUDADriverError, "CUDA_ERROR_NOT_FOUND: named symbol not found: %s", uk_last_error());
    pyk_cupy_error(0);
    return -1;
  }
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  if (self->f) return 0; /* another thread finished while the GIL was released */
  if (ker_learn_params(self, f, n) < 0) return -1;
  self->f = f;
  return 0;
}

static int dims(PyObject *o, const char *what, unsigned v[3]) {
  v[0] = v[1] = v[2] = 1;
  if (PyLong_Check(o)) {
    unsigned long x = PyLong_AsUnsignedLong(o);
    if (x == (unsigned long)-1 && PyErr_Occurred()) return -1;
    v[0] = (unsigned)x;
    return 0;
  }
  PyObject *t = PySequence_Tuple(o);
  if (!t || PyTuple_Size(t) < 1 || PyTuple_Size(t) > 3) {
    Py_XDECREF(t);
    PyErr_Format(PyExc_ValueError, "%s must be an int or a tuple of 1 to 3 ints", what);
    return -1;
  }
  for (Py_ssize_t i = 0; i < PyTuple_Size(t); i++) {
    unsigned long x = PyLong_AsUnsignedLong(PyTuple_GetItem(t, i));
    if (x == (unsigned long)-1 && PyErr_Occurred()) {
      Py_DECREF(t);
      return -1;
    }
    v[i] = (unsigned)x;
  }
  Py_DECREF(t);
  return 0;
}

/* A call, or with launch == 0 everything a call does but the launch (_bind). */
static PyObject *ker_do(PyObject *o, PyObject *args, PyObject *kw, int launch) {
  static char *kwlist[] = {"grid", "block", "args", "shared_mem", "stream", "enable_cooperative_groups", NULL};
  KerObject *self = (KerObject *)o;
  PyObject *grid, *block, *kargs, *stream = Py_None;
  unsigned long long shared = 0;
  int coop = self->cooperative;
  if (!kw && PyTuple_Size(args) == 3) {
    grid = PyTuple_GetItem(args, 0), block = PyTuple_GetItem(args, 1), kargs = PyTuple_GetItem(args, 2);
  } else if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|KOp:RawKernel.__call__", kwlist, &grid, &block, &kargs,
                                          &shared, &stream, &coop)) {
    return NULL;
  }
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  if (dims(grid, "grid", g.grid) < 0 || dims(block, "block", g.block) < 0) return NULL;
  if (shared > 0xffffffffull) {
    PyErr_SetString(PyExc_ValueError, "shared_mem is too large");
    return NULL;
  }
  g.shared_bytes = (unsigned)shared;
  g.cooperative = coop;
  if (ker_ensure(self) < 0) return NULL;
  PyObject *t = PySequence_Tuple(kargs);
  if (!t) return NULL;
  PyObject *result = NULL, *ctx = ((ModObject *)self->mod)->ctx;
  pyk_call c;
  pyk_call_init(&c, 0);
  pyk_raw_args pa, *p = &pa;
  pyk_raw_args_init(p);
  if (pyk_call_set_stream(&c, stream) < 0 || pyk_raw_pack(&c, &self->sig, t, p) < 0 ||
      pyk_call_finish_stream(&c) < 0)
    goto out;
  g.stream = c.stream;
  uk_status st = UK_OK;
  if (launch) {
    /* Host copies live on the first array argument's device, else device 0. */
    if (p->nhost && pyk_raw_copy_in(p, ctx, c.stream, c.narr ? c.arr[0].device : 0) < 0) goto out;
    Py_BEGIN_ALLOW_THREADS
    st = uk_function_launch(self->f, &g, (void *const *)p->ptr);
    if (st == UK_OK && p->nhost) st = pyk_raw_copy_out(p, c.stream);
    Py_END_ALLOW_THREADS
  }
  if (st != UK_OK) {
    pyk_raise(st);
    goto out;
  }
  result = Py_None;
  Py_INCREF(result);
out:
  pyk_raw_args_clear(p, ctx, c.stream);
  pyk_call_clear(&c);
  Py_DECREF(t);
  return result;
}

static PyObject *ker_call(PyObject *o, PyObject *args, PyObject *kw) { return ker_do(o, args, kw, 1); }
static PyObject *ker_bind(PyObject *o, PyObject *args, PyObject *kw) { return ker_do(o, args, kw, 0); }

/* Compiles and looks the kernel up (checking its signature): no GPU needed
 * for a source module after ukern.configure(arch=...). */
static PyObject *ker_compile(PyObject *o, PyObject *args, PyObject *kw) {
  PyObject *r = mod_compile(((KerObject *)o)->mod, args, kw);
  if (r && ker_ensure((KerObject *)o) < 0) Py_CLEAR(r);
  return r;
}

/* Without a device, what the cubin states (uk_function_image_attribute). */
static PyObject *ker_get_attr(PyObject *o, void *closure) {
  KerObject *self = (KerObject *)o;
  if (ker_ensure(self) < 0) return NULL;
  int v = 0;
  uk_function_attr a = (uk_function_attr)(intptr_t)closure;
  uk_status st = uk_function_attribute(self->f, a, &v);
  if (st == UK_ERR_NO_DEVICE) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", uk_last_error());
    if (uk_function_image_attribute(self->f, a, &v) == UK_OK) return PyLong_FromLong(v);
    PyErr_Format(pyk_CUDADriverError, "%s (and the cubin does not state %s)", msg, uk_function_attr_name(a));
    pyk_cupy_error(0);
    return NULL;
  }
  if (st != UK_OK) return pyk_raise(st);
  return PyLong_FromLong(v);
}


static int ker_set_attr(PyObject *o, PyObject *value, void *closure) {
  KerObject *self = (KerObject *)o;
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "kernel attributes cannot be deleted");
    return -1;
  }
  long v = PyLong_AsLong(value);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (ker_ensure(self) < 0) return -1;
  uk_status st = uk_function_set_attribute(self->f, (uk_function_attr)(intptr_t)closure, (int)v);
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  return 0;
}

/* {name: value} of every attribute (from the driver; image: those the
 * cubin states, with no device, others left out). */
static PyObject *attr_dict(KerObject *self, int image) {
  if (ker_ensure(self) < 0) return NULL;
  PyObject *d = PyDict_New();
  for (int a = 0; d && a < UK_ATTR_COUNT_; a++) {
    int v = 0;
    uk_status st = image ? uk_function_image_attribute(self->f, (uk_function_attr)a, &v)
                         : uk_function_attribute(self->f, (uk_function_attr)a, &v);
    if (st != UK_OK && image) continue;
    if (st != UK_OK) {
      Py_DECREF(d);
      return pyk_raise(st);
    }
    PyObject *x = PyLong_FromLong(v);
    if (!x || PyDict_SetItemString(d, uk_function_attr_name((uk_function_attr)a), x) < 0) {
      Py_XDECREF(x);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(x);
  }
  return d;
}

static PyObject *ker_attributes(PyObject *o, void *closure) {
  (void)closure;
  return attr_dict((KerObject *)o, 0);
}

static PyObject *ker_image_attributes(PyObject *o, PyObject *unused) {
  (void)unused;
  return attr_dict((KerObject *)o, 1);
}

static PyObject *ker_get_name(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((KerObject *)o)->name;
  Py_INCREF(n);
  return n;
}
static PyObject *ker_get_code(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((ModObject *)((KerObject *)o)->mod)->code;
  Py_INCREF(n);
  return n;
}
static PyObject *ker_get_options(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((ModObject *)((KerObject *)o)->mod)->options;
  Py_INCREF(n);
  return n;
}
/* A member of the kernel's module, by offset (closure). */
static PyObject *ker_get_mod_member(PyObject *o, void *c) {
  PyObject *n = *(PyObject **)((char *)((KerObject *)o)->mod + (intptr_t)c);
  Py_INCREF(n);
  return n;
}
static PyObject *ker_get_translate(PyObject *o, void *c) {
  (void)c;
  return PyBool_FromLong(((ModObject *)((KerObject *)o)->mod)->translate);
}
static PyObject *ker_get_coop(PyObject *o, void *c) {
  (void)c;
  return PyBool_FromLong(((KerObject *)o)->cooperative);
}
static PyObject *ker_get_module(PyObject *o, void *c) {
  (void)c;
  PyObject *m = ((KerObject *)o)->mod;
  Py_INCREF(m);
  return m;
}
static PyObject *ker_get_signature(PyObject *o, void *c) {
  (void)c;
  PyObject *n = ((KerObject *)o)->signature;
  Py_INCREF(n);
  return n;
}
/* The CUfunction on the context's default device (loads the module there). */
static PyObject *ker_get_handle(PyObject *o, void *c) {
  (void)c;
  KerObject *self = (KerObject *)o;
  if (ker_ensure(self) < 0) return NULL;
  void *h = NULL;
  uk_status st = uk_function_handle(self->f, -1, &h);
  if (st != UK_OK) return pyk_raise(st);
  return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)h);
}
static PyObject *ker_get_num_params(PyObject *o, void *c) {
  (void)c;
  KerObject *self = (KerObject *)o;
  if (ker_ensure(self) < 0) return NULL;
  if (self->sig.count < 0) Py_RETURN_NONE;
  return PyLong_FromLong(self->sig.count);
}

#define ATTR(name, id, set, doc) {name, ker_get_attr, set, doc, (void *)(intptr_t)(id)}
static PyGetSetDef ker_getset[] = {
    {"attributes", ker_attributes, NULL, "dict of every attribute below (compiles and loads the kernel).", NULL},
    {"name", ker_get_name, NULL, "Kernel name (or name expression).", NULL},
    {"code", ker_get_code, NULL, "CUDA source (None for a file module).", NULL},
    {"options", ker_get_options, NULL, "NVRTC options.", NULL},
    {"backend", ker_get_mod_member, NULL, "'nvrtc' or 'nvcc'.", (void *)offsetof(ModObject, backend)},
    {"jitify", ker_get_mod_member, NULL, "jitify= as given (None by default; accepted, not needed).",
     (void *)offsetof(ModObject, jitify)},
    {"file_path", ker_get_mod_member, NULL, "The module file of a kernel from RawModule(path=...), else None.",
     (void *)offsetof(ModObject, path)},
    {"translate_cucomplex", ker_get_translate, NULL, "Whether cuComplex.h is mapped to cupy/complex.cuh.", NULL},
    {"enable_cooperative_groups", ker_get_coop, NULL, "Cooperative launches.", NULL},
    {"signature", ker_get_signature, NULL, "The declared C parameter list, or None.", NULL},
    {"_module", ker_get_module, NULL, "The RawModule holding the kernel. Internal (pickling).", NULL},
    {"handle", ker_get_handle, NULL, "The CUfunction (int) on the context's default device; needs a GPU.", NULL},
    {"num_params", ker_get_num_params, NULL,
     "Parameters the kernel takes (from its signature or cubin; no GPU needed after configure(arch=)),\n"
     "None when unknown (a PTX module without a device). Compiles the kernel.", NULL},
    ATTR("max_threads_per_block", UK_ATTR_MAX_THREADS_PER_BLOCK, NULL, "Most threads a block may have."),
    ATTR("shared_size_bytes", UK_ATTR_SHARED_SIZE_BYTES, NULL, "Static shared memory in bytes."),
    ATTR("const_size_bytes", UK_ATTR_CONST_SIZE_BYTES, NULL, "Constant memory in bytes."),
    ATTR("local_size_bytes", UK_ATTR_LOCAL_SIZE_BYTES, NULL, "Local memory per thread in bytes."),
    ATTR("num_regs", UK_ATTR_NUM_REGS, NULL, "Registers per thread."),
    ATTR("ptx_version", UK_ATTR_PTX_VERSION, NULL, "PTX virtual arch (major*10+minor)."),
    ATTR("binary_version", UK_ATTR_BINARY_VERSION, NULL, "Binary arch (major*10+minor)."),
    ATTR("cache_mode_ca", UK_ATTR_CACHE_MODE_CA, NULL, "1 when compiled with -Xptxas --dlcm=ca."),
    ATTR("max_dynamic_shared_size_bytes", UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, ker_set_attr,
         "Most dynamic shared memory per block (settable)."),
    ATTR("preferred_shared_memory_carveout", UK_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, ker_set_attr,
         "Preferred shared memory carveout in percent (settable)."),
    {NULL, NULL, NULL, NULL, NULL}};
#undef ATTR

static PyMethodDef ker_methods[] = {
    {"_bind", (PyCFunction)(void (*)(void))ker_bind, METH_VARARGS | METH_KEYWORDS,
     "_bind(grid, block, args, shared_mem=0, stream=None): packs the arguments and orders the streams as a\n"
     "call does, launching nothing (measures the Python side of a call). Internal."},
    {"compile", (PyCFunction)(void (*)(void))ker_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(log_stream=None): compiles the source now (no GPU needed after ukern.configure(arch=...))."},
    {"image_attributes", ker_image_attributes, METH_NOARGS,
     "image_attributes() -> dict of the attributes the kernel's cubin states (num_regs, shared/const/local\n"
     "sizes, binary_version, max_threads_per_block), read without a GPU. ukern only; the properties\n"
     "fall back to these values when there is no device."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot ker_slots[] = {
    {Py_tp_new, (void *)ker_new},
    {Py_tp_dealloc, (void *)ker_dealloc},
    {Py_tp_call, (void *)ker_call},
    {Py_tp_getset, ker_getset},
    {Py_tp_methods, ker_methods},
    {Py_tp_doc,
     (void *)"RawKernel(code, name, options=(), backend='nvrtc', *, translate_cucomplex=False,\n"
             "          enable_cooperative_groups=False, jitify=None, signature=None)\n\n"
             "CuPy's RawKernel on ukern. Called as k(grid, block, args, shared_mem=0, stream=None), or\n"
             "k[grid, block](*args) / k[grid, block, stream, shared_mem](*args): grid and block are ints or\n"
             "tuples of up to 3 ints; args packed as CuPy does (CUDA arrays of any library and objects with\n"
             ".ptr -> pointer, int -> int64, float -> float64 (float32 for a 4-byte parameter), complex ->\n"
             "complex128, bool -> bool, NumPy scalars -> their type, None -> NULL; ukern.In/Out/InOut(a)\n"
             "copy a host NumPy array in and out around the launch). The argument count is checked against\n"
             "the kernel's cubin. signature='const float* x, int n' declares the parameters: checked\n"
             "against the cubin, and each argument converted to its type (range-checked). Work runs on\n"
             "stream=, else the first array's producer stream. Compiled lazily (first call, compile() or\n"
             "attribute read); attributes and the settable attributes are properties."},
    {0, NULL}};
static PyType_Spec ker_spec = {"ukern.RawKernel", sizeof(KerObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                               ker_slots};

int pyk_raw_init(PyObject *m) {
  if (!(ModType = pyk_add_type(m, &mod_spec)) || !(KerType = pyk_add_type(m, &ker_spec))) return -1;
  return 0;
}
