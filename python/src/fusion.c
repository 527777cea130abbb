/*
 * fusion.c — ukern._Fusion, the compiled side of ukern.fuse: a fusion
 * program called like an ElementwiseKernel. Made from program text
 * (uk_fusion_create) or, as the tracer (ukern/_fuse_trace.py) does, from a
 * list of nodes handed to the fusion builder (uk_fusion_builder_*), so no
 * program text is printed and parsed again.
 *
 * Built only when the library has the fusion API (UKPY_HAVE_FUSION, set by
 * python/CMakeLists.txt from ukern.h).
 */
#include "pyukern.h"

#ifdef UKPY_HAVE_FUSION

#include <string.h>
#include <structmember.h>

#define UKPY_FUSE_MAX_ARGS 3 /* the most operands of a fusion function (where, clip) */

typedef struct {
  PyObject_HEAD
  uk_fusion *f;
  PyObject *ctx;
  int nin, nout;
  PyObject *program, *name;
  char cname[128];
  pyk_outcache *oc; /* outputs by input signature (outcache.c) */
} FusObject;

/* A builder call's id; a refused node raises now, naming the operation (an
 * unknown function is NotImplementedError, as the tracer raises for routines). */
static int built(int id) {
  if (id < 0 && !PyErr_Occurred())
    PyErr_Format(strstr(uk_last_error(), "unknown") ? PyExc_NotImplementedError : PyExc_ValueError, "ukern.fuse: %s",
                 uk_last_error());
  return id;
}

/* One node of the tracer's list into the builder; its builder id, or -1
 * with a Python error set. */
static int build_node(uk_fusion_builder *b, PyObject *node, const int *ids, int n) {
  if (!PyTuple_Check(node) || PyTuple_Size(node) < 2 || !PyUnicode_Check(PyTuple_GetItem(node, 0))) {
    PyErr_SetString(PyExc_TypeError, "_Fusion.built: a node is a tuple (kind, ...)");
    return -1;
  }
  const char *kind = pyk_utf8_or_null(PyTuple_GetItem(node, 0));
  Py_ssize_t len = PyTuple_Size(node);
  PyObject *a1 = PyTuple_GetItem(node, 1);
  int arg[UKPY_FUSE_MAX_ARGS];
  /* node indices refer to earlier nodes of the list */
#define UKPY_REF_(o, dst)                                                          \
  do {                                                                            \
    long r_ = PyLong_AsLong(o);                                                   \
    if (r_ == -1 && PyErr_Occurred()) return -1;                                  \
    if (r_ < 0 || r_ >= n) {                                                      \
      PyErr_Format(PyExc_ValueError, "_Fusion.built: node %ld is not earlier", r_); \
      return -1;                                                                  \
    }                                                                             \
    (dst) = ids[r_];                                                              \
  } while (0)
  if (!strcmp(kind, "const")) {
    if (PyBool_Check(a1)) return built(uk_fusion_const_bool(b, a1 == Py_True));
    if (PyLong_Check(a1)) {
      int overflow = 0;
      long long v = PyLong_AsLongLongAndOverflow(a1, &overflow);
      if (overflow) {
        PyErr_SetString(PyExc_OverflowError, "ukern.fuse: a Python int constant does not fit in int64");
        return -1;
      }
      return built(uk_fusion_const_int(b, v));
    }
    if (PyFloat_Check(a1)) return built(uk_fusion_const_float(b, PyFloat_AsDouble(a1)));
    if (PyComplex_Check(a1))
      return built(uk_fusion_const_complex(b, PyComplex_RealAsDouble(a1), PyComplex_ImagAsDouble(a1)));
    PyErr_SetString(PyExc_TypeError, "_Fusion.built: a constant is a bool, int, float or complex");
    return -1;
  }
  if (!strcmp(kind, "op")) {
    const char *fn = PyUnicode_Check(a1) ? pyk_utf8_or_null(a1) : NULL;
    if (!fn || len - 2 > UKPY_FUSE_MAX_ARGS) {
      PyErr_SetString(PyExc_TypeError, "_Fusion.built: ('op', name, args...)");
      return -1;
    }
    for (Py_ssize_t k = 2; k < len; k++) UKPY_REF_(PyTuple_GetItem(node, k), arg[k - 2]);
    return built(uk_fusion_op(b, fn, arg, (int)(len - 2)));
  }
  if (!strcmp(kind, "cast") && len == 3) {
    const char *dn = PyUnicode_Check(PyTuple_GetItem(node, 2)) ? pyk_utf8_or_null(PyTuple_GetItem(node, 2)) : NULL;
    uk_dtype t;
    if (!dn || uk_dtype_from_name(dn, &t) != UK_OK) {
      PyErr_Format(PyExc_TypeError, "ukern.fuse: unknown dtype %R", PyTuple_GetItem(node, 2));
      return -1;
    }
    UKPY_REF_(a1, arg[0]);
    return built(uk_fusion_cast(b, arg[0], t));
  }
  if (!strcmp(kind, "red") && len == 6) {
    /* ('red', name, arg, axes tuple or None, keepdims, ddof) */
    const char *fn = PyUnicode_Check(a1) ? pyk_utf8_or_null(a1) : NULL;
    PyObject *axes = PyTuple_GetItem(node, 3);
    int ax[UK_MAX_NDIM], nax = -1;
    if (!fn) return -1;
    UKPY_REF_(PyTuple_GetItem(node, 2), arg[0]);
    if (axes != Py_None) {
      if (!PyTuple_Check(axes) || PyTuple_Size(axes) > UK_MAX_NDIM) {
        PyErr_SetString(PyExc_ValueError, "ukern.fuse: axis is an int, a tuple of ints or None");
        return -1;
      }
      nax = (int)PyTuple_Size(axes);
      for (int k = 0; k < nax; k++) {
        long v = PyLong_AsLong(PyTuple_GetItem(axes, k));
        if (v == -1 && PyErr_Occurred()) return -1;
        ax[k] = (int)v;
      }
    }
    int keep = PyObject_IsTrue(PyTuple_GetItem(node, 4));
    long ddof = PyLong_AsLong(PyTuple_GetItem(node, 5));
    if (keep < 0 || (ddof == -1 && PyErr_Occurred())) return -1;
    return built(uk_fusion_reduce(b, fn, arg[0], ax, nax, keep, (int)ddof));
  }
#undef UKPY_REF_
  PyErr_Format(PyExc_ValueError, "_Fusion.built: unknown node %R", node);
  return -1;
}

/* The program of a node list: inputs a0.., then the nodes, outputs out0..
 * naming the nodes in `outs`. */
static uk_status build_program(int nin, PyObject *nodes, PyObject *outs, uk_fusion_builder **out) {
  char names[16 * PYK_MAX_ARGS];
  size_t used = 0;
  names[0] = 0;
  for (int k = 0; k < nin && used + 16 < sizeof names; k++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%sa%d", k ? ", " : "", k);
  uk_fusion_builder *b = NULL;
  uk_status st = uk_fusion_builder_create(names, &b);
  if (st) return st;
  Py_ssize_t n = PyList_Size(nodes);
  int *ids = PyMem_Malloc((size_t)(nin + n + 1) * sizeof *ids);
  if (!ids) {
    uk_fusion_builder_destroy(b);
    PyErr_NoMemory();
    return UK_ERR_NOMEM;
  }
  for (int k = 0; k < nin; k++) ids[k] = k;
  for (Py_ssize_t k = 0; k < n; k++) {
    ids[nin + k] = build_node(b, PyList_GetItem(nodes, k), ids, (int)(nin + k));
    if (PyErr_Occurred()) goto fail;
  }
  for (Py_ssize_t k = 0; k < PyTuple_Size(outs); k++) {
    long r = PyLong_AsLong(PyTuple_GetItem(outs, k));
    if ((r == -1 && PyErr_Occurred()) || r < 0 || r >= nin + n) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "_Fusion.built: an output is not a node");
      goto fail;
    }
    char oname[32];
    snprintf(oname, sizeof oname, "out%d", (int)k);
    uk_fusion_output(b, oname, ids[r]);
  }
  PyMem_Free(ids);
  *out = b;
  return UK_OK;
fail:
  PyMem_Free(ids);
  uk_fusion_builder_destroy(b);
  return UK_ERR_INVALID;
}

static PyObject *fus_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"inputs", "outputs", "program", "name", "preamble", "options", "nodes", NULL};
  PyObject *in_o, *out_o, *prog_o, *name_o = NULL, *opts = NULL, *nodes = NULL;
  const char *pre = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "OOU|UzOO!:_Fusion", kwlist, &in_o, &out_o, &prog_o, &name_o, &pre,
                                   &opts, &PyList_Type, &nodes))
    return NULL;
  /* text: inputs and outputs are name lists; nodes: the input count and a tuple of output nodes */
  const char *in = nodes ? "" : pyk_utf8_or_null(in_o), *out = nodes ? "" : pyk_utf8_or_null(out_o);
  const char *prog = pyk_utf8_or_null(prog_o);
  const char *name = name_o ? pyk_utf8_or_null(name_o) : "fusion";
  if (!in || !out || !prog || !name) return NULL;
  int nin_built = 0;
  uk_fusion_builder *b = NULL;
  if (nodes) {
    long v = PyLong_AsLong(in_o);
    if ((v == -1 && PyErr_Occurred()) || !PyTuple_Check(out_o) || v < 1 || v > PYK_MAX_ARGS ||
        PyTuple_Size(out_o) < 1 || PyTuple_Size(out_o) + v > PYK_MAX_ARGS) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "_Fusion(nin, (output nodes,), ..., nodes=[...]): counts out of range");
      return NULL;
    }
    nin_built = (int)v;
    uk_status bs = build_program(nin_built, nodes, out_o, &b);
    if (bs) return PyErr_Occurred() ? NULL : pyk_raise(bs);
  }
  uk_fusion_spec fo;
  memset(&fo, 0, sizeof fo);
  fo.preamble = pre;
  PyObject *keep = NULL;
  const char **list = NULL;
  int nopts = 0;
  if (opts && opts != Py_None && pyk_str_list(opts, &list, &nopts, &keep) < 0) return NULL;
  fo.options = list;
  fo.num_options = nopts;
  fo.name = name;
  if (b) {
    fo.builder = b;
  } else {
    fo.inputs = in;
    fo.outputs = out;
    fo.program = prog;
  }
  PyObject *ctx = pyk_context_get();
  uk_fusion *f = NULL;
  uk_status st = UK_OK;
  if (ctx) {
    Py_BEGIN_ALLOW_THREADS
    st = uk_fusion_create(pyk_context_ptr(ctx), &fo, &f);
    Py_END_ALLOW_THREADS
  }
  uk_fusion_builder_destroy(b);
  PyMem_Free(list);
  Py_XDECREF(keep);
  if (!ctx || st != UK_OK) {
    Py_XDECREF(ctx);
    return ctx ? pyk_raise(st) : NULL;
  }
  FusObject *self = (FusObject *)((allocfunc)PyType_GetSlot(tp, Py_tp_alloc))(tp, 0);
  if (!self) {
    uk_fusion_destroy(f);
    Py_DECREF(ctx);
    return NULL;
  }
  self->f = f;
  self->ctx = ctx;
  self->nin = nodes ? nin_built : pyk_count_params(in);
  self->nout = nodes ? (int)PyTuple_Size(out_o) : pyk_count_params(out);
  snprintf(self->cname, sizeof self->cname, "%s", name);
  Py_INCREF(prog_o);
  self->program = prog_o;
  self->name = PyUnicode_FromString(name);
  if (!self->name) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void fus_dealloc(PyObject *o) {
  FusObject *self = (FusObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  uk_fusion_destroy(self->f);
  pyk_outcache_free(self->oc);
  Py_XDECREF(self->ctx);
  Py_XDECREF(self->program);
  Py_XDECREF(self->name);
  ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
  Py_DECREF(tp);
}

static uk_status fus_run(void *k, pyk_mode mode, const uk_arg *in, int nin, uk_array *out, int nout,
                         const uk_launch *l, char **src, int *count) {
  switch (mode) {
  case PYK_RUN: return uk_fusion_call(k, in, nin, out, nout, l);
  case PYK_SOURCE: return uk_fusion_source(k, in, nin, out, nout, l, src);
  case PYK_PRECOMPILE: return uk_fusion_precompile(k, in, nin, out, nout, l);
  default: return uk_fusion_kernel_count(k, in, nin, out, nout, l, count);
  }
}

static PyObject *fus_do(PyObject *o, PyObject *args, PyObject *kw, pyk_mode mode) {
  FusObject *self = (FusObject *)o;
  return pyk_launch_do(self->f, fus_run, self->ctx, self->cname, self->nin, self->nout, args, kw, mode, &self->oc);
}
static PyObject *fus_call(PyObject *o, PyObject *args, PyObject *kw) { return fus_do(o, args, kw, PYK_RUN); }
static PyObject *fus_source(PyObject *o, PyObject *args, PyObject *kw) { return fus_do(o, args, kw, PYK_SOURCE); }
static PyObject *fus_precompile(PyObject *o, PyObject *args, PyObject *kw) {
  return fus_do(o, args, kw, PYK_PRECOMPILE);
}
static PyObject *fus_count(PyObject *o, PyObject *args, PyObject *kw) { return fus_do(o, args, kw, PYK_COUNT); }
static PyObject *fus_bind(PyObject *o, PyObject *args, PyObject *kw) { return fus_do(o, args, kw, PYK_BIND); }

static PyMethodDef fus_methods[] = {
    {"_bind", (PyCFunction)(void (*)(void))fus_bind, METH_VARARGS | METH_KEYWORDS,
     "_bind(*args, stream=None): reads the arguments as a call does, launching nothing. Internal."},
    {"source", (PyCFunction)(void (*)(void))fus_source, METH_VARARGS | METH_KEYWORDS,
     "source(*args) -> CUDA source of every kernel a call runs."},
    {"precompile", (PyCFunction)(void (*)(void))fus_precompile, METH_VARARGS | METH_KEYWORDS,
     "precompile(*args): compiles what a call would run."},
    {"kernel_count", (PyCFunction)(void (*)(void))fus_count, METH_VARARGS | METH_KEYWORDS,
     "kernel_count(*args) -> how many kernels a call runs."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef fus_members[] = {
    {"program", T_OBJECT_EX, offsetof(FusObject, program), READONLY, "The program text."},
    {"name", T_OBJECT_EX, offsetof(FusObject, name), READONLY, "Kernel name."},
    {"nin", T_INT, offsetof(FusObject, nin), READONLY, "Number of inputs."},
    {"nout", T_INT, offsetof(FusObject, nout), READONLY, "Number of outputs."},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot fus_slots[] = {
    {Py_tp_new, (void *)fus_new},
    {Py_tp_dealloc, (void *)fus_dealloc},
    {Py_tp_call, (void *)fus_call},
    {Py_tp_methods, fus_methods},
    {Py_tp_members, fus_members},
    {Py_tp_doc,
     (void *)"_Fusion(inputs, outputs, program, name='fusion', preamble=None, options=(), nodes=None)\n\n"
             "A ukern fusion program (NumPy-subset text, see uk_fusion_create; or, with nodes=,\n"
             "inputs the input count, outputs a tuple of node indices and program a display\n"
             "text only: the nodes go to the fusion builder), called as\n"
             "f(*args, out=None, block_size=None, stream=None) -> tuple of outputs. ukern.fuse builds these."},
    {0, NULL}};
static PyType_Spec fus_spec = {"ukern._Fusion", sizeof(FusObject), 0, Py_TPFLAGS_DEFAULT, fus_slots};

int pyk_fusion_init(PyObject *m) { return pyk_add_type(m, &fus_spec) ? 0 : -1; }

#else

int pyk_fusion_init(PyObject *m) {
  (void)m;
  return 0;
}

#endif
