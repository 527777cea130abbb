/*
 * strings.c — Python str and C strings: a str's UTF-8 (as long as the str
 * lives), a sequence of str as a C array, and the parameter count of a
 * kernel definition's parameter list.
 */
#include "pyukern.h"

int pyk_count_params(const char *p) {
  int n = 0, any = 0;
  for (; *p; p++) {
    if (*p == ',') n++;
    else if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') any = 1;
  }
  return any ? n + 1 : 0;
}

int pyk_str_list(PyObject *seq, const char ***out, int *n, PyObject **keep) {
  *out = NULL;
  *n = 0;
  *keep = NULL;
  if (PyUnicode_Check(seq)) {
    PyErr_SetString(PyExc_TypeError, "options must be a tuple or list of str, not a str");
    return -1;
  }
  PyObject *fast = PySequence_Tuple(seq);
  if (!fast) return -1;
  Py_ssize_t len = PyTuple_Size(fast);
  /* The tuple (handed to the caller in *keep) keeps the strings alive even
   * if seq is a list that another thread changes while the GIL is released. */
  const char **list = PyMem_Calloc((size_t)(len ? len : 1), sizeof *list);
  if (!list) {
    Py_DECREF(fast);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < len; i++) {
    PyObject *s = PyTuple_GetItem(fast, i);
    const char *u = s && PyUnicode_Check(s) ? pyk_utf8_or_null(s) : NULL;
    if (!u) {
      if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "options[%zd] must be a str", i);
      PyMem_Free(list);
      Py_DECREF(fast);
      return -1;
    }
    list[i] = u;
  }
  *keep = fast;
  *out = list;
  *n = (int)len;
  return 0;
}

/* UTF-8 of a str, cached on the str object by CPython ("s" conversion):
 * valid while the str lives. NULL with an exception (embedded NUL, not str). */
const char *pyk_utf8_or_null(PyObject *o) {
  const char *u = NULL;
  if (!PyArg_Parse(o, "s", &u)) return NULL;
  return u;
}
