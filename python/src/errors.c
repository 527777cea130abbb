/*
 * errors.c — the extension's exception classes and how a failed ukern call
 * becomes a Python exception: the status's class (or, with CuPy imported,
 * a subclass of CuPy's class of that name), the library's message in
 * Python's words (errtext.c), .status, and .log for compile errors.
 */
#include "pyukern.h"

#include <stdarg.h>

PyObject *pyk_CompileException;
PyObject *pyk_JitifyException;
PyObject *pyk_CUDADriverError;

int pyk_errors_init(PyObject *m) {
  pyk_CompileException = PyErr_NewExceptionWithDoc(
      "ukern.CompileException",
      "NVRTC rejected the generated or given CUDA source. The message ends with the NVRTC log and the\n"
      "line-numbered source; .log holds those alone.",
      NULL, NULL);
  pyk_JitifyException = pyk_CompileException ? PyErr_NewExceptionWithDoc(
      "ukern.JitifyException",
      "A CompileException of a module made with jitify=True (CuPy raises JitifyException there).",
      pyk_CompileException, NULL) : NULL;
  pyk_CUDADriverError = PyErr_NewExceptionWithDoc(
      "ukern.CUDADriverError", "A CUDA driver call failed, no driver or device is present, or a name was not found.",
      PyExc_RuntimeError, NULL);
  if (!pyk_CompileException || !pyk_JitifyException || !pyk_CUDADriverError) return -1;
  Py_INCREF(pyk_CompileException);
  Py_INCREF(pyk_JitifyException);
  Py_INCREF(pyk_CUDADriverError);
  if (PyModule_AddObject(m, "CompileException", pyk_CompileException) < 0 ||
      PyModule_AddObject(m, "JitifyException", pyk_JitifyException) < 0 ||
      PyModule_AddObject(m, "CUDADriverError", pyk_CUDADriverError) < 0)
    return -1;
  return 0;
}

/* ukern._errors.compat_type: with CuPy imported, the class to raise for one
 * of ukern's (a subclass of it and of CuPy's class of that name). */
static PyObject *error_type_hook;

int pyk_set_error_type_hook(PyObject *hook) {
  if (!PyCallable_Check(hook)) {
    PyErr_SetString(PyExc_TypeError, "_set_error_type_hook takes a callable");
    return -1;
  }
  PyObject *old = error_type_hook;
  Py_INCREF(hook);
  error_type_hook = hook;
  Py_XDECREF(old);
  return 0;
}

PyObject *pyk_error_type(PyObject *base) {
  PyObject *t = NULL;
  if (error_type_hook &&
      (base == pyk_CompileException || base == pyk_JitifyException || base == pyk_CUDADriverError)) {
    PyObject *err_type, *err_value, *err_tb; /* an exception being replaced stays as it is */
    PyErr_Fetch(&err_type, &err_value, &err_tb);
    t = PyObject_CallFunctionObjArgs(error_type_hook, base, NULL);
    if (!t || !PyType_Check(t) || !PyObject_IsSubclass(t, base)) Py_CLEAR(t); /* keep ukern's class */
    PyErr_Restore(err_type, err_value, err_tb);
  }
  if (!t) {
    t = base;
    Py_INCREF(t);
  }
  return t;
}

PyObject *pyk_err_format(PyObject *base, const char *format, ...) {
  PyObject *type = pyk_error_type(base);
  va_list ap;
  va_start(ap, format);
  PyErr_FormatV(type, format, ap);
  va_end(ap);
  Py_DECREF(type);
  return NULL;
}

PyObject *pyk_raise(uk_status st) { return pyk_raise_as(st, NULL); }

PyObject *pyk_raise_as(uk_status st, PyObject *as) {
  const char *msg = uk_last_error();
  if (!msg || !*msg) msg = uk_status_message(st);
  PyObject *type;
  switch (st) {
  case UK_ERR_NOMEM: type = PyExc_MemoryError; break;
  case UK_ERR_SYNTAX:
  case UK_ERR_SHAPE:
  case UK_ERR_INVALID: type = PyExc_ValueError; break;
  case UK_ERR_TYPE: type = PyExc_TypeError; break;
  case UK_ERR_COMPILE: type = pyk_CompileException; break;
  case UK_ERR_CUDA:
  case UK_ERR_NO_DEVICE:
  case UK_ERR_NOT_FOUND: type = pyk_CUDADriverError; break;
  case UK_ERR_IO: type = PyExc_OSError; break;
  default: type = PyExc_RuntimeError; break;
  }
  if (as) type = as;
  type = pyk_error_type(type);
  PyObject *exc = NULL;
  PyObject *log = NULL;
  /* in Python's words: ukern.configure(arch=...), the exception's .log (errtext.c) */
  PyObject *words = pyk_python_message(msg);
  if (!words) {
    Py_DECREF(type);
    return NULL;
  }
  if (st == UK_ERR_COMPILE) {
    /* str(e) shows the log too, as CuPy's CompileException does. */
    log = PyUnicode_FromString(uk_last_error_log());
    PyObject *text = log ? PyUnicode_FromFormat("%U\n%U", words, log) : NULL;
    exc = text ? PyObject_CallFunctionObjArgs(type, text, NULL) : NULL;
    Py_XDECREF(text);
  } else {
    exc = PyObject_CallFunctionObjArgs(type, words, NULL);
  }
  Py_DECREF(words);
  if (!exc) {
    Py_XDECREF(log);
    Py_DECREF(type);
    return NULL;
  }
  if (log) {
    if (PyObject_SetAttrString(exc, "log", log) < 0) PyErr_Clear();
    Py_DECREF(log);
  }
  PyObject *name = PyUnicode_FromString(uk_status_name(st));
  if (name) {
    if (PyObject_SetAttrString(exc, "status", name) < 0) PyErr_Clear();
    Py_DECREF(name);
  }
  PyErr_SetObject(type, exc);
  Py_DECREF(exc);
  Py_DECREF(type);
  return NULL;
}
