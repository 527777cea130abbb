/*
 * raw.c — ukern.RawModule and ukern.RawKernel: user CUDA source compiled by
 * NVRTC (through ukern's caches) or a .cubin/.ptx/.fatbin file, kernels
 * launched as CuPy does: k(grid, block, args, shared_mem=0, stream=None).
 *
 * Compilation is lazy, as in CuPy: the first get_function/get_global/call
 * (or compile()) builds the module; compile errors raise CompileException.
 */
#include "pyukern.h"

#include <string.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  uk_module *m;
  PyObject *ctx;
  PyObject *code, *path, *options, *name_expressions; /* str/None, tuples */
  char cooperative;
} ModObject;

typedef struct {
  PyObject_HEAD
  PyObject *mod; /* ModObject */
  PyObject *name;
  uk_function *f;
  char cooperative;
} KerObject;

static PyTypeObject *ModType, *KerType;

/* ---- RawModule ----------------------------------------------------------- */

static int check_backend(const char *backend, int translate, int jitify) {
  if (backend && strcmp(backend, "nvrtc") != 0) {
    PyErr_Format(PyExc_ValueError, "backend %s is not supported: ukern compiles with NVRTC (backend='nvrtc')",
                 backend);
    return -1;
  }
  if (translate || jitify) {
    PyErr_SetString(PyExc_NotImplementedError, translate ? "translate_cucomplex is not supported: use "
                                                           "#include <ukern/complex.cuh> (ukern::complex)"
                                                         : "jitify is not supported");
    return -1;
  }
  return 0;
}

static ModObject *mod_make(PyObject *code, PyObject *path, PyObject *options, PyObject *names, int coop) {
  ModObject *self = (ModObject *)((allocfunc)PyType_GetSlot(ModType, Py_tp_alloc))(ModType, 0);
  if (!self) return NULL;
  self->cooperative = (char)coop;
  self->ctx = pyk_context_get();
  self->code = code ? (Py_INCREF(code), code) : (Py_INCREF(Py_None), Py_None);
  self->path = path ? (Py_INCREF(path), path) : (Py_INCREF(Py_None), Py_None);
  self->options = options ? PySequence_Tuple(options) : PyTuple_New(0);
  self->name_expressions = names && names != Py_None ? PySequence_Tuple(names) : PyTuple_New(0);
  if (!self->ctx || !self->options || !self->name_expressions) {
    Py_DECREF(self);
    return NULL;
  }
  return self;
}

static PyObject *mod_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"code",  "path",       "options", "backend", "translate_cucomplex", "enable_cooperative_groups",
                           "name_expressions", "jitify", NULL};
  PyObject *code = Py_None, *path = Py_None, *opts = NULL, *names = Py_None;
  const char *backend = "nvrtc";
  int translate = 0, coop = 0, jitify = 0;
  (void)tp;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOOsp$pOp:RawModule", kwlist, &code, &path, &opts, &backend,
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
  if (check_backend(backend, translate, jitify) < 0) return NULL;
  if (path != Py_None && !(path = PyOS_FSPath(path))) return NULL;
  ModObject *m = mod_make(code == Py_None ? NULL : code, path == Py_None ? NULL : path, opts, names, coop);
  if (path != Py_None) Py_DECREF(path);
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
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

/* Builds the module once; 0 or -1. Compiles without the GIL. */
static int mod_ensure(ModObject *self) {
  if (self->m) return 0;
  const char **opts = NULL, **names = NULL;
  int nopts = 0, nnames = 0, rc = -1;
  PyObject *keep1 = NULL, *keep2 = NULL, *code_ref = self->code;
  uk_module *m = NULL;
  uk_status st;
  Py_INCREF(code_ref); /* alive while the GIL is released */
  if (pyk_str_list(self->options, &opts, &nopts, &keep1) < 0 ||
      pyk_str_list(self->name_expressions, &names, &nnames, &keep2) < 0)
    goto out;
  uk_context *ctx = pyk_context_ptr(self->ctx);
  if (self->code != Py_None) {
    const char *code = pyk_utf8_or_null(self->code);
    if (!code) goto out;
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.options = opts;
    mo.num_options = nopts;
    mo.name_expressions = names;
    mo.num_name_expressions = nnames;
    mo.name = "RawModule";
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
    pyk_raise(st);
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
    {NULL, NULL, 0, NULL}};

static PyMemberDef mod_members[] = {
    {"code", T_OBJECT_EX, offsetof(ModObject, code), READONLY, "CUDA source or None."},
    {"path", T_OBJECT_EX, offsetof(ModObject, path), READONLY, "Module file or None."},
    {"options", T_OBJECT_EX, offsetof(ModObject, options), READONLY, "NVRTC options."},
    {"name_expressions", T_OBJECT_EX, offsetof(ModObject, name_expressions), READONLY, "Name expressions."},
    {"enable_cooperative_groups", T_BOOL, offsetof(ModObject, cooperative), READONLY, "Cooperative launches."},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot mod_slots[] = {
    {Py_tp_new, (void *)mod_new},
    {Py_tp_dealloc, (void *)mod_dealloc},
    {Py_tp_methods, mod_methods},
    {Py_tp_members, mod_members},
    {Py_tp_doc,
     (void *)"RawModule(code=None, path=None, options=(), backend='nvrtc', translate_cucomplex=False, *,\n"
             "          enable_cooperative_groups=False, name_expressions=None, jitify=False)\n\n"
             "CuPy's RawModule on ukern: CUDA source compiled by NVRTC for the device's exact arch (or\n"
             "ukern.configure(arch=...)), cached in memory and on disk; or a .cubin/.ptx/.fatbin file.\n"
             "Only backend='nvrtc'; translate_cucomplex and jitify raise NotImplementedError (use\n"
             "#include <ukern/complex.cuh>). Compile errors raise CompileException with the log."},
    {0, NULL}};
static PyType_Spec mod_spec = {"ukern.RawModule", sizeof(ModObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                               mod_slots};

/* ---- RawKernel ----------------------------------------------------------- */

static PyObject *ker_make(PyObject *mod, PyObject *name, int coop) {
  KerObject *self = (KerObject *)((allocfunc)PyType_GetSlot(KerType, Py_tp_alloc))(KerType, 0);
  if (!self) return NULL;
  Py_INCREF(mod);
  Py_INCREF(name);
  self->mod = mod;
  self->name = name;
  self->cooperative = (char)coop;
  return (PyObject *)self;
}

static PyObject *ker_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"code", "name", "options", "backend", "translate_cucomplex", "enable_cooperative_groups",
                           "jitify", NULL};
  PyObject *code, *name, *opts = NULL;
  const char *backend = "nvrtc";
  int translate = 0, coop = 0, jitify = 0;
  (void)tp;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UU|Osp$pp:RawKernel", kwlist, &code, &name, &opts, &backend, &translate,
                                   &coop, &jitify))
    return NULL;
  if (check_backend(backend, translate, jitify) < 0) return NULL;
  PyObject *mod = (PyObject *)mod_make(code, NULL, opts, NULL, coop);
  if (!mod) return NULL;
  PyObject *k = ker_make(mod, name, coop);
  Py_DECREF(mod);
  return k;
}

static void ker_dealloc(PyObject *o) {
  KerObject *self = (KerObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  Py_XDECREF(self->mod);
  Py_XDECREF(self->name);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
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
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
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

/* Kernel arguments packed as CuPy does: arrays -> device pointer, None ->
 * NULL, int -> int64, float -> float64, complex -> complex128, bool -> bool,
 * NumPy scalars -> their own type. */
typedef struct {
  _Alignas(16) unsigned char slot[PYK_MAX_ARGS][16];
  void *ptr[PYK_MAX_ARGS];
} packed;

static int pack_arg(pyk_call *c, PyObject *o, unsigned char *slot) {
  memset(slot, 0, 16);
  if (o == Py_None) return 0;
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) {
    if (pyk_call_arg(c, o, 0) < 0) return -1;
    uk_arg *g = &c->arg[0];
    int64_t i = g->kind == UK_ARG_BOOL ? 0 : g->v.i;
    if (g->kind == UK_ARG_BOOL) slot[0] = (unsigned char)(g->v.b != 0);
    else if (g->kind == UK_ARG_INT) memcpy(slot, &i, 8);
    else if (g->kind == UK_ARG_FLOAT) memcpy(slot, &g->v.f, 8);
    else memcpy(slot, g->v.c, 16);
    return 0;
  }
  if (pyk_call_arg(c, o, 0) < 0) return -1;
  uk_arg *g = &c->arg[0];
  if (g->kind == UK_ARG_TYPED) memcpy(slot, g->v.bytes, uk_dtype_size(g->dtype));
  else memcpy(slot, &g->v.array->data, 8);
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
  Py_ssize_t n = PyTuple_Size(t);
  PyObject *result = NULL;
  pyk_call c;
  pyk_call_init(&c, 0);
  packed p;
  if (n > PYK_MAX_ARGS) {
    PyErr_Format(PyExc_ValueError, "more than %d kernel arguments", PYK_MAX_ARGS);
    goto out;
  }
  if (pyk_call_set_stream(&c, stream) < 0) goto out;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (pack_arg(&c, PyTuple_GetItem(t, i), p.slot[i]) < 0) goto out;
    p.ptr[i] = p.slot[i];
  }
  if (pyk_call_finish_stream(&c) < 0) goto out;
  g.stream = c.stream;
  uk_status st = UK_OK;
  if (launch) {
    Py_BEGIN_ALLOW_THREADS
    st = uk_function_launch(self->f, &g, (void *const *)p.ptr);
    Py_END_ALLOW_THREADS
  }
  if (st != UK_OK) {
    pyk_raise(st);
    goto out;
  }
  result = Py_None;
  Py_INCREF(result);
out:
  pyk_call_clear(&c);
  Py_DECREF(t);
  return result;
}

static PyObject *ker_call(PyObject *o, PyObject *args, PyObject *kw) { return ker_do(o, args, kw, 1); }
static PyObject *ker_bind(PyObject *o, PyObject *args, PyObject *kw) { return ker_do(o, args, kw, 0); }

static PyObject *ker_compile(PyObject *o, PyObject *args, PyObject *kw) {
  return mod_compile(((KerObject *)o)->mod, args, kw);
}

static PyObject *ker_get_attr(PyObject *o, void *closure) {
  KerObject *self = (KerObject *)o;
  if (ker_ensure(self) < 0) return NULL;
  int v = 0;
  uk_status st = uk_function_attribute(self->f, (uk_function_attr)(intptr_t)closure, &v);
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

static PyObject *ker_attributes(PyObject *o, void *closure) {
  (void)closure;
  KerObject *self = (KerObject *)o;
  if (ker_ensure(self) < 0) return NULL;
  PyObject *d = PyDict_New();
  for (int a = 0; d && a < UK_ATTR_COUNT_; a++) {
    int v = 0;
    uk_status st = uk_function_attribute(self->f, (uk_function_attr)a, &v);
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

#define ATTR(name, id, set, doc) {name, ker_get_attr, set, doc, (void *)(intptr_t)(id)}
static PyGetSetDef ker_getset[] = {
    {"attributes", ker_attributes, NULL, "dict of every attribute below (compiles and loads the kernel).", NULL},
    {"name", ker_get_name, NULL, "Kernel name (or name expression).", NULL},
    {"code", ker_get_code, NULL, "CUDA source (None for a file module).", NULL},
    {"options", ker_get_options, NULL, "NVRTC options.", NULL},
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
    {NULL, NULL, 0, NULL}};

static PyType_Slot ker_slots[] = {
    {Py_tp_new, (void *)ker_new},
    {Py_tp_dealloc, (void *)ker_dealloc},
    {Py_tp_call, (void *)ker_call},
    {Py_tp_getset, ker_getset},
    {Py_tp_methods, ker_methods},
    {Py_tp_doc,
     (void *)"RawKernel(code, name, options=(), backend='nvrtc', *, translate_cucomplex=False,\n"
             "          enable_cooperative_groups=False, jitify=False)\n\n"
             "CuPy's RawKernel on ukern. Called as k(grid, block, args, shared_mem=0, stream=None):\n"
             "grid and block are ints or tuples of up to 3 ints; args is a tuple packed as CuPy does\n"
             "(CUDA arrays of any library -> pointer, int -> int64, float -> float64, complex ->\n"
             "complex128, bool -> bool, NumPy scalars -> their type, None -> NULL). Work runs on\n"
             "stream=, else the first array's producer stream. Compiled lazily (first call or\n"
             "attribute read); attributes and the settable attributes are properties."},
    {0, NULL}};
static PyType_Spec ker_spec = {"ukern.RawKernel", sizeof(KerObject), 0, Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                               ker_slots};

int pyk_raw_init(PyObject *m) {
  if (!(ModType = pyk_add_type(m, &mod_spec)) || !(KerType = pyk_add_type(m, &ker_spec))) return -1;
  return 0;
}
