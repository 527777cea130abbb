/*
 * errtext.c — the library's messages in Python's words. The C library points
 * a C caller at C names ("set uk_options.arch", "see uk_last_error_log()");
 * a Python user reaches the same things as ukern.configure(arch=...) and the
 * exception's .log attribute (set by pyk_raise for compile errors).
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

PyObject *pyk_python_text(PyObject *text) {
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
  PyObject *out = pyk_python_text(text);
  Py_DECREF(text);
  return out;
}
