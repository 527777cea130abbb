/*
 * fusion.c — ukern._Fusion, the compiled side of ukern.fuse: a fusion
 * program (uk_fusion_create) called like an ElementwiseKernel. The Python
 * tracer (ukern/_fuse.py) writes the program text.
 *
 * Built only when the library has the fusion API (UKPY_HAVE_FUSION, set by
 * python/CMakeLists.txt from ukern.h).
 */
#include "pyukern.h"

#ifdef UKPY_HAVE_FUSION

#include <string.h>
#include <structmember.h>

typedef struct {
  PyObject_HEAD
  uk_fusion *f;
  PyObject *ctx;
  int nin, nout;
  PyObject *program, *name;
  char cname[128];
  pyk_outcache *oc; /* outputs by input signature (outcache.c) */
} FusObject;

static PyObject *fus_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"inputs", "outputs", "program", "name", "preamble", "options", NULL};
  PyObject *in_o, *out_o, *prog_o, *name_o = NULL, *opts = NULL;
  const char *pre = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "UUU|UzO:_Fusion", kwlist, &in_o, &out_o, &prog_o, &name_o, &pre,
                                   &opts))
    return NULL;
  const char *in = pyk_utf8_or_null(in_o), *out = pyk_utf8_or_null(out_o), *prog = pyk_utf8_or_null(prog_o);
  const char *name = name_o ? pyk_utf8_or_null(name_o) : "fusion";
  if (!in || !out || !prog || !name) return NULL;
  uk_fusion_options fo;
  memset(&fo, 0, sizeof fo);
  fo.preamble = pre;
  PyObject *keep = NULL;
  const char **list = NULL;
  int nopts = 0;
  if (opts && opts != Py_None && pyk_str_list(opts, &list, &nopts, &keep) < 0) return NULL;
  fo.options = list;
  fo.num_options = nopts;
  PyObject *ctx = pyk_context_get();
  uk_fusion *f = NULL;
  uk_status st = UK_OK;
  if (ctx) {
    Py_BEGIN_ALLOW_THREADS
    st = uk_fusion_create(pyk_context_ptr(ctx), in, out, prog, name, &fo, &f);
    Py_END_ALLOW_THREADS
  }
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
  self->nin = pyk_count_params(in);
  self->nout = pyk_count_params(out);
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
  default: return uk_fusion_kernel_count(k, in, nin, out, nout, count);
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
     (void *)"_Fusion(inputs, outputs, program, name='fusion', preamble=None, options=())\n\n"
             "A ukern fusion program (NumPy-subset text, see uk_fusion_create), called as\n"
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
