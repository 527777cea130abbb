/*
 * errtext.c — the library's messages in Python's words. The C library points
 * a C caller at C names ("set uk_options.arch", "see uk_last_error_log()");
 * a Python user reaches the same things as ukern.configure(arch=...) and the
 * exception's .log attribute (set by pyk_raise for compile errors). And a
 * kernel keeps the context it was made in: when it cannot pick an arch after
 * a later ukern.configure(), the error says so and what to do.
 */
#include "pyukern.h"

#include <string.h>

/* C phrase -> Python phrase, longest first (the later ones are what is left). */
static const char *const words[][2] = {
    {"set uk_options.arch, e.g. 90, to compile without a GPU",
     "call ukern.configure(arch=90), or the arch to compile for, before creating the kernel, to compile "
     "without a GPU"},
    {"; see uk_last_error_log()", "; the log follows (the exception's .log)"},
    {" (see uk_last_error_log())", " (the exception's .log)"},
    {"uk_last_error_log()", "the exception's .log"},
    {"uk_options.arch_name", "ukern.configure(arch=...)"},
    {"uk_options.arch", "ukern.configure(arch=...)"},
};

static PyObject *translate(PyObject *text) {
  Py_INCREF(text);
  for (size_t j = 0; j < sizeof words / sizeof words[0] && text; j++) {
    PyObject *next = PyObject_CallMethod(text, "replace", "ss", words[j][0], words[j][1]);
    Py_DECREF(text);
    text = next;
  }
  return text;
}

PyObject *pyk_python_message(const char *c_message) {
  PyObject *text = PyUnicode_DecodeUTF8(c_message, (Py_ssize_t)strlen(c_message), "replace");
  if (!text) return NULL;
  PyObject *out = translate(text);
  Py_DECREF(text);
  return out;
}

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
  PyObject *text = first && PyUnicode_Check(first) ? translate(first) : NULL;
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
