/*
 * type_objects.c — the extension's type objects: each made from its
 * PyType_Spec and added to the module under its short name.
 */
#include "pyukern.h"

#include <string.h>

PyTypeObject *pyk_add_type(PyObject *m, PyType_Spec *spec) {
  PyObject *t = PyType_FromSpec(spec);
  if (!t) return NULL;
  const char *dot = strrchr(spec->name, '.');
  Py_INCREF(t);
  if (PyModule_AddObject(m, dot ? dot + 1 : spec->name, t) < 0) {
    Py_DECREF(t);
    Py_DECREF(t);
    return NULL;
  }
  return (PyTypeObject *)t;
}
