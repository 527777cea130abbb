/*
 * raw_options.c — CuPy's RawModule/RawKernel options as CuPy checks them:
 * backend names, jitify='s deprecation warnings and errors, name
 * expressions' conditions, translate_cucomplex's rewrite of the source, and
 * relocatable code only when asked for (as CuPy compiles).
 */
#include "pyukern.h"

#include <string.h>

/* CuPy's deprecation of jitify=, for any value given. */
static int warn_jitify(PyObject *jitify) {
  if (jitify == Py_None) return 0;
  int on = PyObject_IsTrue(jitify);
  if (on < 0) return -1;
  return PyErr_WarnEx(PyExc_DeprecationWarning,
                      on ? "jitify=True is deprecated and its support is staged for removal in CuPy v15.0; "
                           "ukern needs no Jitify: its standard header map gives NVRTC <type_traits> and the "
                           "other std headers, so the source compiles as it is"
                         : "The jitify argument is deprecated and staged for removal in CuPy v15.0. "
                           "Avoid passing `jitify=False` to silence this warning.",
                      1);
}

/* The backend by name: 'nvrtc' (0) or 'nvcc' (1); -1 with ValueError. */
int pyk_raw_backend_id(PyObject *b) {
  if (PyUnicode_Check(b) && PyUnicode_CompareWithASCIIString(b, "nvrtc") == 0) return UK_BACKEND_NVRTC;
  if (PyUnicode_Check(b) && PyUnicode_CompareWithASCIIString(b, "nvcc") == 0) return UK_BACKEND_NVCC;
  PyErr_Format(PyExc_ValueError, "Invalid backend %R: ukern compiles with 'nvrtc' (default) or 'nvcc'", b);
  return -1;
}

/* The source as CuPy compiles it with translate_cucomplex=True: every
 * `#include <cuComplex.h>` line becomes the bridge header, and CuPy's
 * headers come first. New ref. */
PyObject *pyk_raw_translate_cucomplex(PyObject *code) {
  const char *src = pyk_utf8_or_null(code);
  if (!src) return NULL;
  PyObject *parts = PyList_New(0), *out = NULL;
  if (!parts) return NULL;
  PyObject *head = PyUnicode_FromString("#include <cupy/complex.cuh>\n#include <cupy/carray.cuh>\n"
                                        "#include <cupy/math_constants.h>\n#include <cupy/cuComplex_bridge.h>\n");
  if (!head || PyList_Append(parts, head) < 0) goto out;
  for (const char *line = src; *line;) {
    const char *end = strchr(line, '\n');
    size_t n = end ? (size_t)(end - line + 1) : strlen(line);
    /* \s*#\s*include\s*<\s*cuComplex\.h\s*> at the start of the line */
    const char *p = line;
    static const char *const tokens[] = {"#", "include", "<", "cuComplex.h", ">"};
    int match = 1;
    for (size_t t = 0; t < 5 && match; t++) {
      while (p < line + n && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\f' || *p == '\v')) p++;
      size_t len = strlen(tokens[t]);
      match = (size_t)(line + n - p) >= len && memcmp(p, tokens[t], len) == 0;
      p += len;
    }
    PyObject *piece = match ? PyUnicode_FromString("#include <cupy/cuComplex_bridge.h>  // translate_cucomplex\n")
                            : PyUnicode_FromStringAndSize(line, (Py_ssize_t)n);
    if (!piece || PyList_Append(parts, piece) < 0) {
      Py_XDECREF(piece);
      goto out;
    }
    Py_DECREF(piece);
    line += n;
  }
  PyObject *empty = PyUnicode_FromString("");
  if (empty) out = PyUnicode_Join(empty, parts);
  Py_XDECREF(empty);
out:
  Py_XDECREF(head);
  Py_DECREF(parts);
  return out;
}

/* CuPy's checks of a module's arguments, in CuPy's order. */
int pyk_raw_check_options(PyObject *code, PyObject *path, PyObject *names, PyObject *backend, PyObject *jitify) {
  int be = pyk_raw_backend_id(backend);
  if (be < 0) return -1;
  if (names != Py_None) {
    if (code == Py_None) {
      PyErr_SetString(PyExc_ValueError, "need CUDA C++ code for the requested kernels");
      return -1;
    }
    if (be != UK_BACKEND_NVRTC) {
      PyErr_SetString(PyExc_ValueError, "only nvrtc supports retrieving the mangled names for the given name "
                                        "expressions");
      return -1;
    }
  }
  int jit = jitify == Py_None ? 0 : PyObject_IsTrue(jitify);
  if (jit < 0) return -1;
  if (jit && path != Py_None) {
    PyErr_SetString(PyExc_ValueError, "Jitify does not support precompiled objects");
    return -1;
  }
  if (jit && be != UK_BACKEND_NVRTC) {
    PyErr_SetString(PyExc_ValueError, "Jitify only supports NVRTC");
    return -1;
  }
  return warn_jitify(jitify);
}


const char pyk_raw_rdc_hint[] =
    "hint: a kernel that launches kernels needs relocatable device code: pass options=('-dc',) (or "
    "'-rdc=true'), as with CuPy";

int pyk_raw_wants_no_rdc(const char *code, const char *const *opts, int nopts) {
  if (!strstr(code, "<<<")) return 0; /* no device-side launch: nothing to decide */
  for (int k = 0; k < nopts; k++) {
    const char *o = opts[k];
    if (strstr(o, "-rdc") || strstr(o, "relocatable-device-code") || !strcmp(o, "-dc") || !strcmp(o, "--device-c") ||
        !strcmp(o, "-dlto") || !strcmp(o, "--dlink-time-opt"))
      return 0;
  }
  return 1;
}
