/*
 * bundle.c — kernel bundles from Python: open one in the current context
 * (ukern.load_bundle), describe the context's bundles, make one from a
 * cache directory. The package (ukern/__init__.py) remembers the loaded
 * paths so that configure() carries them into its new context.
 */
#include "pyukern.h"

static PyObject *py_load_bundle(PyObject *mod, PyObject *arg) {
  (void)mod;
  PyObject *bytes = NULL;
  if (!PyUnicode_FSConverter(arg, &bytes)) return NULL;
  PyObject *c = pyk_context_get();
  if (!c) {
    Py_DECREF(bytes);
    return NULL;
  }
  uk_status st;
  const char *path = PyBytes_AsString(bytes);
  Py_BEGIN_ALLOW_THREADS
  st = uk_context_load_bundle(pyk_context_ptr(c), path);
  Py_END_ALLOW_THREADS
  Py_DECREF(c);
  Py_DECREF(bytes);
  if (st != UK_OK) return pyk_raise(st);
  Py_RETURN_NONE;
}

static PyObject *py_bundles(PyObject *mod, PyObject *unused) {
  (void)mod, (void)unused;
  PyObject *c = pyk_context_get();
  if (!c) return NULL;
  char *text = NULL;
  uk_status st = uk_context_bundles(pyk_context_ptr(c), &text);
  Py_DECREF(c);
  if (st != UK_OK) return pyk_raise(st);
  PyObject *s = PyUnicode_DecodeFSDefault(text);
  uk_free(text);
  return s;
}

static PyObject *py_create_bundle(PyObject *mod, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"path", "cache_dir", "archs", NULL};
  PyObject *path = NULL, *dir = NULL, *archs = NULL;
  (void)mod;
  if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|O&O:create_bundle", kwlist, PyUnicode_FSConverter, &path,
                                   PyUnicode_FSConverter, &dir, &archs))
    return NULL;
  const char **list = NULL;
  int n = 0;
  PyObject *keep = NULL, *out = NULL;
  if (archs && archs != Py_None && pyk_str_list(archs, &list, &n, &keep) < 0) goto done;
  char *report = NULL;
  uk_status st;
  const char *p = PyBytes_AsString(path), *d = dir ? PyBytes_AsString(dir) : NULL;
  Py_BEGIN_ALLOW_THREADS
  st = uk_bundle_create_from_cache(d, list, n, p, &report);
  Py_END_ALLOW_THREADS
  if (st != UK_OK) {
    pyk_raise(st);
    goto done;
  }
  out = PyUnicode_DecodeFSDefault(report);
  uk_free(report);
done:
  PyMem_Free(list);
  Py_XDECREF(keep);
  Py_XDECREF(path);
  Py_XDECREF(dir);
  return out;
}

static PyMethodDef bundle_methods[] = {
    {"_load_bundle", py_load_bundle, METH_O,
     "_load_bundle(path): opens a kernel bundle in the current context (use ukern.load_bundle)."},
    {"bundles", py_bundles, METH_NOARGS,
     "bundles() -> str: one line per bundle of the current context (kernels, archs, hits, skipped and why)."},
    {"create_bundle", (PyCFunction)(void (*)(void))py_create_bundle, METH_VARARGS | METH_KEYWORDS,
     "create_bundle(path, cache_dir=None, archs=()) -> str\n\n"
     "Writes a kernel bundle at path from the compiled kernels of a cache directory (default: the\n"
     "user's), for archs such as ('80', '90') (all found when empty). Fill the directory first, e.g.\n"
     "ukern.configure(arch=90, cache_dir=d) and k.precompile(...). Returns what it wrote, a line per kernel."},
    {NULL, NULL, 0, NULL}};

int pyk_bundle_init(PyObject *m) { return PyModule_AddFunctions(m, bundle_methods); }
