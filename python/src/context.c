/*
 * context.c — the context kernels bind to. Kernels bind to the context that
 * is current when they are made; a context lives while any kernel, module or
 * array made from it lives (each holds a reference to its _Context object).
 * A kernel that cannot pick an arch after a later ukern.configure() says so
 * in its error (pyk_raise_kernel).
 */
#include "pyukern.h"

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

int pyk_context_replace(const uk_options *o) {
  PyObject *c = ctx_make(o);
  if (!c) return -1;
  PyObject *old = current_ctx;
  current_ctx = c;
  Py_XDECREF(old);
  return 0;
}

int pyk_context_init(void) { return (CtxType = (PyTypeObject *)PyType_FromSpec(&ctx_spec)) ? 0 : -1; }

/* Whether ctx is the context kernels made now bind to: 1 yes, 0 no, -1 error. */
static int is_current(PyObject *ctx) {
  PyObject *cur = pyk_context_get();
  if (!cur) return -1;
  int same = cur == ctx;
  Py_DECREF(cur);
  return same;
}

PyObject *pyk_raise_kernel(uk_status st, PyObject *kernel_ctx) {
  int stale = 0;
  if (st == UK_ERR_NO_DEVICE && kernel_ctx) {
    stale = is_current(kernel_ctx) == 0;
    if (PyErr_Occurred()) PyErr_Clear(); /* the library's error matters here */
  }
  pyk_raise(st);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  PyObject *args = value ? PyObject_GetAttrString(value, "args") : NULL;
  PyObject *first = args && PyTuple_Check(args) && PyTuple_Size(args) == 1 ? PyTuple_GetItem(args, 0) : NULL;
  PyObject *text = first && PyUnicode_Check(first) ? pyk_python_text(first) : NULL;
  if (text && stale) {
    PyObject *more = PyUnicode_FromFormat(
        "%U\nThis kernel was created before the last ukern.configure() and keeps the context it was "
        "created in (each kernel binds to the context current at its creation): create it again after "
        "ukern.configure(arch=...).",
        text);
    Py_DECREF(text);
    text = more;
  }
  PyObject *new_args = text ? PyTuple_Pack(1, text) : NULL;
  if (!new_args || PyObject_SetAttrString(value, "args", new_args) < 0) PyErr_Clear(); /* keep the original */
  Py_XDECREF(new_args);
  Py_XDECREF(text);
  Py_XDECREF(args);
  PyErr_Restore(type, value, tb);
  return NULL;
}
