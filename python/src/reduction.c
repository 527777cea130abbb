/*
 * reduction.c — ukern.ReductionKernel, CuPy's class over
 * uk_reduction_create / uk_reduction_call.
 */
#include "pyukern.h"

#include <string.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  uk_reduction *k;
  PyObject *ctx;
  int nin, nout, nargs;
  char reduce_dims;
  pyk_outcache *oc; /* outputs by input signature and axes (outcache.c) */
  PyObject *name, *in_params, *out_params, *map_expr, *reduce_expr, *post_map_expr, *identity, *reduce_type,
      *preamble, *options;
  char cname[128];
} RedObject;

static const char red_doc[] =
    "ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,\n"
    "                name='reduce_kernel', reduce_type=None, reduce_dims=True, preamble='',\n"
    "                options=(), block_reduce='ukern')\n\n"
    "CuPy's ReductionKernel on ukern. block_reduce='cub' makes the block-wide combine\n"
    "cub::BlockReduce (the default 'ukern': ukern's own warp shuffles; same results, a\n"
    "separately cached kernel, ~1 s more NVRTC time in a process's first one). Called as k(*args, out=None, axis=None,\n"
    "keepdims=False, stream=None): axis is None (all), an int or a tuple (negative allowed;\n"
    "() reduces nothing); outputs are given (out= or after the inputs) or allocated and\n"
    "returned as the first array's type. Returns the output, or a tuple when there are several.\n\n"
    "Differences from CuPy, on purpose: definition errors are raised here with position and\n"
    "caret; identity=None with an empty reduction is a ValueError (CuPy returns T());\n"
    "duplicate axes are a ValueError; every output written by post_map_expr is returned;\n"
    "reduce_dims is accepted and ignored (dimensions are always merged where contiguous).";

static PyObject *opt_str(PyObject *o) { return o ? (Py_INCREF(o), o) : (Py_INCREF(Py_None), Py_None); }

static PyObject *red_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"in_params", "out_params", "map_expr", "reduce_expr", "post_map_expr", "identity", "name",
                           "reduce_type", "reduce_dims", "preamble", "options", "block_reduce", NULL};
  PyObject *in_o, *out_o, *map_o, *red_o, *post_o, *id_o, *name_o = NULL, *rt_o = Py_None, *pre_o = NULL,
                                                          *opts = NULL, *br_o = NULL;
  int reduce_dims = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UUUUUO|UOpUOU:ReductionKernel", kwlist, &in_o, &out_o, &map_o, &red_o,
                                   &post_o, &id_o, &name_o, &rt_o, &reduce_dims, &pre_o, &opts, &br_o))
    return NULL;
  int block_reduce = UK_BLOCK_REDUCE_UKERN;
  if (br_o && PyUnicode_CompareWithASCIIString(br_o, "ukern") != 0) {
    if (PyUnicode_CompareWithASCIIString(br_o, "cub") != 0) {
      PyErr_Format(PyExc_ValueError, "block_reduce must be 'ukern' (the default) or 'cub', not %R", br_o);
      return NULL;
    }
    block_reduce = UK_BLOCK_REDUCE_CUB;
  }
  PyObject *id_s = NULL;
  if (id_o != Py_None && !(id_s = PyObject_Str(id_o))) return NULL; /* CuPy accepts numbers too */
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = pyk_utf8_or_null(in_o);
  s.out_params = pyk_utf8_or_null(out_o);
  s.map_expr = pyk_utf8_or_null(map_o);
  s.reduce_expr = pyk_utf8_or_null(red_o);
  s.post_map_expr = pyk_utf8_or_null(post_o);
  s.identity = id_s ? pyk_utf8_or_null(id_s) : NULL;
  s.name = name_o ? pyk_utf8_or_null(name_o) : "reduce_kernel";
  s.block_reduce = block_reduce;
  if (rt_o != Py_None) {
    if (!PyUnicode_Check(rt_o)) {
      Py_XDECREF(id_s);
      PyErr_SetString(PyExc_TypeError, "reduce_type must be a str (a C type) or None");
      return NULL;
    }
    s.reduce_type = pyk_utf8_or_null(rt_o);
  }
  s.preamble = pre_o ? pyk_utf8_or_null(pre_o) : NULL;
  if (PyErr_Occurred()) {
    Py_XDECREF(id_s);
    return NULL;
  }
  const char **list = NULL;
  int nopts = 0;
  PyObject *keep = NULL;
  if (opts && opts != Py_None && pyk_str_list(opts, &list, &nopts, &keep) < 0) {
    Py_XDECREF(id_s);
    return NULL;
  }
  s.options = list;
  s.num_options = nopts;
  PyObject *ctx = pyk_context_get();
  uk_reduction *k = NULL;
  uk_status st = UK_OK;
  if (ctx) {
    Py_BEGIN_ALLOW_THREADS
    st = uk_reduction_create(pyk_context_ptr(ctx), &s, &k);
    Py_END_ALLOW_THREADS
  }
  PyMem_Free(list);
  Py_XDECREF(keep);
  if (!ctx || st != UK_OK) {
    Py_XDECREF(id_s);
    Py_XDECREF(ctx);
    return ctx ? pyk_raise_kernel(st, NULL) : NULL;
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  RedObject *self = (RedObject *)alloc(tp, 0);
  if (!self) {
    Py_XDECREF(id_s);
    uk_reduction_destroy(k);
    Py_DECREF(ctx);
    return NULL;
  }
  self->k = k;
  self->ctx = ctx;
  self->nin = pyk_count_params(s.in_params);
  self->nout = pyk_count_params(s.out_params);
  self->nargs = self->nin + self->nout;
  self->reduce_dims = (char)reduce_dims;
  snprintf(self->cname, sizeof self->cname, "%s", s.name);
  self->name = name_o ? opt_str(name_o) : PyUnicode_FromString("reduce_kernel");
  self->in_params = opt_str(in_o);
  self->out_params = opt_str(out_o);
  self->map_expr = opt_str(map_o);
  self->reduce_expr = opt_str(red_o);
  self->post_map_expr = opt_str(post_o);
  self->identity = id_s ? id_s : opt_str(NULL);
  self->reduce_type = opt_str(rt_o);
  self->preamble = pre_o ? opt_str(pre_o) : PyUnicode_FromString("");
  self->options = opts ? PySequence_Tuple(opts) : PyTuple_New(0);
  if (!self->name || !self->preamble || !self->options) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void red_dealloc(PyObject *o) {
  RedObject *self = (RedObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  uk_reduction_destroy(self->k);
  pyk_outcache_free(self->oc);
  PyObject **objs[] = {&self->ctx,         &self->name,          &self->in_params, &self->out_params,
                       &self->map_expr,    &self->reduce_expr,   &self->post_map_expr, &self->identity,
                       &self->reduce_type, &self->preamble,      &self->options};
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) Py_XDECREF(*objs[i]);
  freefunc fr = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  fr(o);
  Py_DECREF(tp);
}

/* An axis out of range is NumPy's AxisError (a ValueError and an IndexError)
 * as in CuPy; anything else as pyk_raise makes it. */
static void raise_axis_or(uk_status st, PyObject *kernel_ctx) {
  const char *msg = uk_last_error();
  PyObject *mods = PySys_GetObject("modules"); /* borrowed */
  PyObject *np = mods ? PyDict_GetItemString(mods, "numpy") : NULL;
  PyObject *exc = NULL;
  if (st == UK_ERR_SHAPE && msg && strstr(msg, " is out of bounds for an input of ndim ") && np) {
    PyObject *ns = PyObject_GetAttrString(np, "exceptions");
    exc = ns ? PyObject_GetAttrString(ns, "AxisError") : NULL;
    Py_XDECREF(ns);
    if (!exc) {
      PyErr_Clear();
      exc = PyObject_GetAttrString(np, "AxisError"); /* NumPy < 1.25 */
    }
    PyErr_Clear();
  }
  if (!exc) {
    pyk_raise_kernel(st, kernel_ctx);
    return;
  }
  PyErr_SetString(exc, msg);
  Py_DECREF(exc);
}

/* axis: None (all), int, or a sequence of ints; () reduces nothing. */
static int parse_axis(PyObject *axis, int *axes, uk_launch *l) {
  if (!axis || axis == Py_None) return 0;
  if (PyLong_Check(axis)) {
    long a = PyLong_AsLong(axis);
    if (a == -1 && PyErr_Occurred()) return -1;
    axes[0] = (int)a;
    l->axes = axes;
    l->num_axes = 1;
    return 0;
  }
  PyObject *t = PySequence_Tuple(axis);
  if (!t) {
    PyErr_SetString(PyExc_TypeError, "axis must be None, an int or a tuple of ints");
    return -1;
  }
  Py_ssize_t n = PyTuple_Size(t);
  if (n > UK_MAX_NDIM) {
    Py_DECREF(t);
    PyErr_Format(PyExc_ValueError, "axis: more than %d axes", UK_MAX_NDIM);
    return -1;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    long a = PyLong_AsLong(PyTuple_GetItem(t, i));
    if (a == -1 && PyErr_Occurred()) {
      Py_DECREF(t);
      return -1;
    }
    axes[i] = (int)a;
  }
  Py_DECREF(t);
  l->axes = axes;
  l->num_axes = (int)n;
  l->reduce_none = n == 0;
  return 0;
}

typedef enum { RED_RUN, RED_SOURCE, RED_PRECOMPILE } red_mode;

/* What of a call besides its inputs shapes the outputs: keepdims, the axes
 * as given (-1 for None), reduce-nothing. Into sig; returns the count. */
static int axes_signature(const uk_launch *l, int64_t *sig) {
  int n = 0;
  sig[n++] = l->keepdims;
  sig[n++] = l->axes ? l->num_axes : -1;
  sig[n++] = l->reduce_none;
  for (int i = 0; l->axes && i < l->num_axes; i++) sig[n++] = l->axes[i];
  return n;
}

static PyObject *red_do(RedObject *self, PyObject *args, PyObject *kw, red_mode mode) {
  static const char *const names[] = {"out", "axis", "keepdims", "stream", NULL};
  PyObject *v[4];
  if (pyk_kwargs(kw, self->cname, names, v) < 0) return NULL;
  pyk_frame f;
  pyk_call_init(&f.c, mode != RED_RUN);
  PyObject *result = NULL, *made[PYK_MAX_ARGS];
  int axes[UK_MAX_NDIM], nmade = 0;
  uk_launch l;
  memset(&l, 0, sizeof l);
  if (parse_axis(v[1], axes, &l) < 0) goto out;
  if (v[2] && (l.keepdims = PyObject_IsTrue(v[2])) < 0) goto out;
  if (pyk_frame_bind(&f, self->cname, self->nin, self->nout, args, v[0], mode == RED_RUN ? v[3] : NULL) < 0) goto out;
  l.stream = f.c.stream;
  /* As ElementwiseKernel: outputs known from an earlier call with these
   * inputs and axes come from the library's pool, passed as given. */
  int64_t sig[UK_MAX_NDIM + 3];
  int nsig = axes_signature(&l, sig), record = 0;
  if (mode == RED_RUN) nmade = pyk_frame_prealloc(&f, self->oc, sig, nsig, made, &record);
  uk_status st;
  char *src = NULL;
  Py_BEGIN_ALLOW_THREADS
  if (mode == RED_RUN)
    st = uk_reduction_call(self->k, f.c.arg, self->nin, f.out, self->nout, &l);
  else if (mode == RED_SOURCE)
    st = uk_reduction_source(self->k, f.c.arg, self->nin, f.out, self->nout, &l, &src);
  else
    st = uk_reduction_precompile(self->k, f.c.arg, self->nin, f.out, self->nout, &l);
  Py_END_ALLOW_THREADS
  if (st != UK_OK) {
    raise_axis_or(st, self->ctx);
    goto out;
  }
  if (mode == RED_SOURCE) {
    result = PyUnicode_FromString(src);
    uk_free(src);
  } else if (mode == RED_PRECOMPILE) {
    result = Py_None;
    Py_INCREF(result);
  } else if ((result = pyk_frame_result(&f, self->ctx, &self->oc, sig, nsig, made, &nmade, record)) &&
             self->nout == 1) {
    PyObject *one = PyTuple_GetItem(result, 0);
    Py_INCREF(one);
    Py_DECREF(result);
    result = one;
  }
out:
  while (nmade > 0) Py_DECREF(made[--nmade]);
  pyk_call_clear(&f.c);
  return result;
}

static PyObject *red_call(PyObject *self, PyObject *args, PyObject *kw) {
  return red_do((RedObject *)self, args, kw, RED_RUN);
}
static PyObject *red_source(PyObject *self, PyObject *args, PyObject *kw) {
  return red_do((RedObject *)self, args, kw, RED_SOURCE);
}
static PyObject *red_precompile(PyObject *self, PyObject *args, PyObject *kw) {
  return red_do((RedObject *)self, args, kw, RED_PRECOMPILE);
}

static PyMethodDef red_methods[] = {
    {"source", (PyCFunction)(void (*)(void))red_source, METH_VARARGS | METH_KEYWORDS,
     "source(*args, out=None, axis=None, keepdims=False) -> str\n\n"
     "The CUDA source a call with these arguments compiles (nothing runs); host arrays (NumPy)\n"
     "describe shapes. ukern only."},
    {"precompile", (PyCFunction)(void (*)(void))red_precompile, METH_VARARGS | METH_KEYWORDS,
     "precompile(*args, out=None, axis=None, keepdims=False)\n\n"
     "Compiles what such a call would run into the caches (no GPU needed with\n"
     "ukern.configure(arch=...)). ukern only."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef red_members[] = {
    {"name", T_OBJECT_EX, offsetof(RedObject, name), READONLY, "Kernel name."},
    {"in_params", T_OBJECT_EX, offsetof(RedObject, in_params), READONLY, "Input parameter string."},
    {"out_params", T_OBJECT_EX, offsetof(RedObject, out_params), READONLY, "Output parameter string."},
    {"map_expr", T_OBJECT_EX, offsetof(RedObject, map_expr), READONLY, "Map expression."},
    {"reduce_expr", T_OBJECT_EX, offsetof(RedObject, reduce_expr), READONLY, "Reduce expression."},
    {"post_map_expr", T_OBJECT_EX, offsetof(RedObject, post_map_expr), READONLY, "Post-map expression."},
    {"identity", T_OBJECT_EX, offsetof(RedObject, identity), READONLY, "Identity (str) or None."},
    {"reduce_type", T_OBJECT_EX, offsetof(RedObject, reduce_type), READONLY, "Reduce type or None."},
    {"preamble", T_OBJECT_EX, offsetof(RedObject, preamble), READONLY, "Preamble code."},
    {"options", T_OBJECT_EX, offsetof(RedObject, options), READONLY, "NVRTC options."},
    {"nin", T_INT, offsetof(RedObject, nin), READONLY, "Number of inputs."},
    {"nout", T_INT, offsetof(RedObject, nout), READONLY, "Number of outputs."},
    {"nargs", T_INT, offsetof(RedObject, nargs), READONLY, "nin + nout."},
    {"reduce_dims", T_BOOL, offsetof(RedObject, reduce_dims), READONLY, "Accepted for CuPy; always merged."},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot red_slots[] = {{Py_tp_new, (void *)red_new},
                                  {Py_tp_dealloc, (void *)red_dealloc},
                                  {Py_tp_call, (void *)red_call},
                                  {Py_tp_methods, red_methods},
                                  {Py_tp_members, red_members},
                                  {Py_tp_doc, (void *)red_doc},
                                  {0, NULL}};
static PyType_Spec red_spec = {"ukern.ReductionKernel", sizeof(RedObject), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, red_slots};

int pyk_reduction_init(PyObject *m) { return pyk_add_type(m, &red_spec) ? 0 : -1; }
