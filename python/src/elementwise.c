/*
 * elementwise.c — ukern.ElementwiseKernel, CuPy's class over
 * uk_elementwise_create / uk_elementwise_call.
 */
#include "pyukern.h"

#include <string.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  uk_elementwise *k;
  PyObject *ctx;
  int nin, nout, nargs;
  char no_return, return_tuple, reduce_dims;
  PyObject *name, *in_params, *out_params, *operation, *preamble, *options;
  char cname[128]; /* the name for messages */
  pyk_outcache *oc; /* outputs by input signature (outcache.c) */
} EwObject;

static const char ew_doc[] =
    "ElementwiseKernel(in_params, out_params, operation, name='kernel', reduce_dims=True,\n"
    "                  preamble='', no_return=False, return_tuple=False, loop_prep='',\n"
    "                  after_loop='', options=())\n\n"
    "CuPy's ElementwiseKernel on ukern. Called as k(*args, out=None, size=None, block_size=None,\n"
    "stream=None): inputs are CUDA arrays of any library (__cuda_array_interface__ or __dlpack__),\n"
    "scalars or texture objects (cupy.cuda.texture.TextureObject, by .ptr); outputs follow the inputs positionally, come as out=, or are allocated and\n"
    "returned as the first array's type (cupy.ndarray, torch.Tensor, ...; else ukern.Array).\n"
    "For CuPy inputs, calls after the first with the same dtypes and shapes allocate outputs in\n"
    "CuPy's memory pool (on its current stream); the first call's come from ukern's pool.\n"
    "Python scalars take the parameter's type (range-checked); NumPy scalars are typed and\n"
    "converted like a C cast. Work runs on stream=, else the first array's producer stream\n"
    "(CuPy's or PyTorch's current stream). Returns the output, a tuple when there are several\n"
    "or return_tuple=True, None when no_return=True.\n\n"
    "Differences from CuPy, on purpose: definition errors (ValueError/TypeError) are raised here,\n"
    "with the position and a caret, not at the first call; an output that partly overlaps an\n"
    "input gives NumPy's result (the input is copied first); arrays must match their parameter's\n"
    "dtype exactly (no implicit casts); an unbound placeholder is a TypeError naming it;\n"
    "in_params/out_params are the definition strings (CuPy: tuples of ParameterInfo).";

static PyObject *ew_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"in_params", "out_params", "operation", "name", "reduce_dims", "preamble", "no_return",
                           "return_tuple", "loop_prep", "after_loop", "options", NULL};
  PyObject *in_o, *out_o, *op_o, *name_o = NULL, *pre_o = NULL, *opts = NULL;
  int reduce_dims = 1, no_return = 0, return_tuple = 0;
  const char *loop_prep = NULL, *after_loop = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UUU|UpUppzzO:ElementwiseKernel", kwlist, &in_o, &out_o, &op_o,
                                   &name_o, &reduce_dims, &pre_o, &no_return, &return_tuple, &loop_prep,
                                   &after_loop, &opts))
    return NULL;
  const char *in = pyk_utf8_or_null(in_o), *out = pyk_utf8_or_null(out_o), *op = pyk_utf8_or_null(op_o);
  const char *name = name_o ? pyk_utf8_or_null(name_o) : "kernel";
  const char *pre = pre_o ? pyk_utf8_or_null(pre_o) : NULL;
  if (!in || !out || !op || !name || (pre_o && !pre)) return NULL;
  uk_elementwise_options eo;
  memset(&eo, 0, sizeof eo);
  eo.preamble = pre;
  eo.loop_prep = loop_prep;
  eo.after_loop = after_loop;
  eo.no_reduce_dims = !reduce_dims;
  const char **list = NULL;
  int nopts = 0;
  PyObject *keep = NULL;
  if (opts && opts != Py_None && pyk_str_list(opts, &list, &nopts, &keep) < 0) return NULL;
  eo.options = list;
  eo.num_options = nopts;
  PyObject *ctx = pyk_context_get();
  if (!ctx) {
    PyMem_Free(list);
    Py_XDECREF(keep);
    return NULL;
  }
  uk_elementwise *k = NULL;
  uk_status st;
  Py_BEGIN_ALLOW_THREADS
  st = uk_elementwise_create(pyk_context_ptr(ctx), in, out, op, name, &eo, &k);
  Py_END_ALLOW_THREADS
  PyMem_Free(list);
  Py_XDECREF(keep);
  if (st != UK_OK) {
    Py_DECREF(ctx);
    return pyk_raise_kernel(st, NULL);
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
  EwObject *self = (EwObject *)alloc(tp, 0);
  if (!self) {
    uk_elementwise_destroy(k);
    Py_DECREF(ctx);
    return NULL;
  }
  self->k = k;
  self->ctx = ctx;
  self->nin = pyk_count_params(in);
  self->nout = pyk_count_params(out);
  self->nargs = self->nin + self->nout;
  self->no_return = (char)no_return;
  self->return_tuple = (char)return_tuple;
  self->reduce_dims = (char)reduce_dims;
  snprintf(self->cname, sizeof self->cname, "%s", name);
  self->name = name_o ? (Py_INCREF(name_o), name_o) : PyUnicode_FromString("kernel");
  Py_INCREF(in_o), Py_INCREF(out_o), Py_INCREF(op_o);
  self->in_params = in_o;
  self->out_params = out_o;
  self->operation = op_o;
  self->preamble = pre_o ? (Py_INCREF(pre_o), pre_o) : PyUnicode_FromString("");
  self->options = opts ? PySequence_Tuple(opts) : PyTuple_New(0);
  if (!self->name || !self->preamble || !self->options) {
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void ew_dealloc(PyObject *o) {
  EwObject *self = (EwObject *)o;
  PyTypeObject *tp = Py_TYPE(o);
  uk_elementwise_destroy(self->k);
  pyk_outcache_free(self->oc);
  Py_XDECREF(self->ctx);
  Py_XDECREF(self->name);
  Py_XDECREF(self->in_params);
  Py_XDECREF(self->out_params);
  Py_XDECREF(self->operation);
  Py_XDECREF(self->preamble);
  Py_XDECREF(self->options);
  freefunc fr = (freefunc)PyType_GetSlot(tp, Py_tp_free);
  fr(o);
  Py_DECREF(tp);
}

static uk_status ew_run(void *k, pyk_mode mode, const uk_arg *in, int nin, uk_array *out, int nout,
                        const uk_launch *l, char **src, int *count) {
  (void)count;
  if (mode == PYK_RUN) return uk_elementwise_call(k, in, nin, out, nout, l);
  if (mode == PYK_SOURCE) return uk_elementwise_source(k, in, nin, out, nout, l, src);
  return uk_elementwise_precompile(k, in, nin, out, nout, l);
}

static PyObject *ew_do(EwObject *self, PyObject *args, PyObject *kw, pyk_mode mode) {
  PyObject *outs =
      pyk_launch_do(self->k, ew_run, self->ctx, self->cname, self->nin, self->nout, args, kw, mode, &self->oc);
  if (!outs || mode != PYK_RUN) return outs;
  PyObject *result = outs;
  if (self->no_return) {
    result = Py_None;
    Py_INCREF(result);
    Py_DECREF(outs);
  } else if (self->nout == 1 && !self->return_tuple) {
    result = PyTuple_GetItem(outs, 0);
    Py_INCREF(result);
    Py_DECREF(outs);
  }
  return result;
}

static PyObject *ew_call(PyObject *self, PyObject *args, PyObject *kw) { return ew_do((EwObject *)self, args, kw, PYK_RUN); }

static PyObject *ew_source(PyObject *self, PyObject *args, PyObject *kw) {
  return ew_do((EwObject *)self, args, kw, PYK_SOURCE);
}

static PyObject *ew_precompile(PyObject *self, PyObject *args, PyObject *kw) {
  return ew_do((EwObject *)self, args, kw, PYK_PRECOMPILE);
}

static PyObject *ew_bind(PyObject *self, PyObject *args, PyObject *kw) {
  return ew_do((EwObject *)self, args, kw, PYK_BIND);
}

static PyMethodDef ew_methods[] = {
    {"_bind", (PyCFunction)(void (*)(void))ew_bind, METH_VARARGS | METH_KEYWORDS,
     "_bind(*args, out=None, size=None, block_size=None, stream=None) -> None\n\n"
     "Reads the arguments and streams as a call does, launching nothing (measures the Python side\n"
     "of a call; bench/tools/python_host_breakdown.py). Internal."},
    {"source", (PyCFunction)(void (*)(void))ew_source, METH_VARARGS | METH_KEYWORDS,
     "source(*args, out=None, size=None, block_size=None) -> str\n\n"
     "The exact CUDA source a call with these arguments compiles (nothing runs). Arrays may be\n"
     "host arrays (NumPy): only their dtype, shape and strides are read. ukern only."},
    {"precompile", (PyCFunction)(void (*)(void))ew_precompile, METH_VARARGS | METH_KEYWORDS,
     "precompile(*args, out=None, size=None, block_size=None)\n\n"
     "Compiles what such a call would run into the memory and disk caches, running nothing. With\n"
     "ukern.configure(arch=...) no GPU is needed (fill a deployment's cache ahead of time). ukern only."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef ew_members[] = {
    {"name", T_OBJECT_EX, offsetof(EwObject, name), READONLY, "Kernel name."},
    {"in_params", T_OBJECT_EX, offsetof(EwObject, in_params), READONLY, "Input parameter string."},
    {"out_params", T_OBJECT_EX, offsetof(EwObject, out_params), READONLY, "Output parameter string."},
    {"operation", T_OBJECT_EX, offsetof(EwObject, operation), READONLY, "Operation code."},
    {"preamble", T_OBJECT_EX, offsetof(EwObject, preamble), READONLY, "Preamble code."},
    {"options", T_OBJECT_EX, offsetof(EwObject, options), READONLY, "NVRTC options."},
    {"nin", T_INT, offsetof(EwObject, nin), READONLY, "Number of inputs."},
    {"nout", T_INT, offsetof(EwObject, nout), READONLY, "Number of outputs."},
    {"nargs", T_INT, offsetof(EwObject, nargs), READONLY, "nin + nout."},
    {"no_return", T_BOOL, offsetof(EwObject, no_return), READONLY, "Calls return None."},
    {"return_tuple", T_BOOL, offsetof(EwObject, return_tuple), READONLY, "Calls return a tuple."},
    {"reduce_dims", T_BOOL, offsetof(EwObject, reduce_dims), READONLY, "Contiguous dimensions are merged."},
    {NULL, 0, 0, 0, NULL}};

static PyType_Slot ew_slots[] = {{Py_tp_new, (void *)ew_new},
                                 {Py_tp_dealloc, (void *)ew_dealloc},
                                 {Py_tp_call, (void *)ew_call},
                                 {Py_tp_methods, ew_methods},
                                 {Py_tp_members, ew_members},
                                 {Py_tp_doc, (void *)ew_doc},
                                 {0, NULL}};
static PyType_Spec ew_spec = {"ukern.ElementwiseKernel", sizeof(EwObject), 0,
                              Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, ew_slots};

int pyk_elementwise_init(PyObject *m) { return pyk_add_type(m, &ew_spec) ? 0 : -1; }
