/*
 * call.c — what ElementwiseKernel and ReductionKernel calls share: keyword
 * parsing, binding inputs and outputs to descriptors, and handing outputs
 * back (CuPy's conventions: outputs may follow the inputs positionally or
 * come as out=).
 */
#include "pyukern.h"

#include <string.h>

int pyk_kwargs(PyObject *kw, const char *fn, const char *const *names, PyObject **vals) {
  for (int i = 0; names[i]; i++) vals[i] = NULL;
  if (!kw) return 0;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(kw, &pos, &k, &v)) {
    int found = 0;
    for (int i = 0; names[i] && !found; i++)
      if (PyUnicode_CompareWithASCIIString(k, names[i]) == 0) vals[i] = v, found = 1;
    if (!found) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fn, k);
      return -1;
    }
  }
  return 0;
}

int pyk_frame_bind(pyk_frame *f, const char *kname, int nin, int nout, PyObject *args, PyObject *out,
                   PyObject *stream) {
  Py_ssize_t n = PyTuple_Size(args);
  f->nin = nin;
  f->nout = nout;
  f->given = 0;
  if (nin + nout > PYK_MAX_ARGS) {
    PyErr_Format(PyExc_ValueError, "%s: more than %d parameters", kname, PYK_MAX_ARGS);
    return -1;
  }
  if (n != nin && n != nin + nout) {
    PyErr_Format(PyExc_TypeError, "Wrong number of arguments for %s: expected %d (inputs) or %d (with outputs), got %zd",
                 kname, nin, nin + nout, n);
    return -1;
  }
  if (out == Py_None) out = NULL;
  if (n == nin + nout && nout > 0 && out) {
    /* CuPy's class and words (ValueError) */
    PyErr_Format(PyExc_ValueError, "cannot specify 'out' as both a positional and keyword argument (%s)", kname);
    return -1;
  }
  if (pyk_call_set_stream(&f->c, stream) < 0) return -1;
  for (int i = 0; i < nin; i++)
    if (pyk_call_arg(&f->c, PyTuple_GetItem(args, i), i) < 0) return -1;
  PyObject *outs = NULL;
  if (n == nin + nout && nout > 0) {
    outs = args;
  } else if (out) {
    if (PyTuple_Check(out)) {
      if (PyTuple_Size(out) != nout) {
        PyErr_Format(PyExc_ValueError, "%s: out= has %zd arrays, the kernel has %d outputs", kname,
                     PyTuple_Size(out), nout);
        return -1;
      }
      outs = out;
    } else if (nout != 1) {
      PyErr_Format(PyExc_ValueError, "%s has %d outputs: pass out= as a tuple of arrays", kname, nout);
      return -1;
    }
  }
  if (outs || out) {
    f->given = 1;
    for (int j = 0; j < nout; j++) {
      PyObject *o = outs ? PyTuple_GetItem(outs, outs == args ? nin + j : j) : out;
      uk_array *a;
      if (pyk_call_array(&f->c, o, &a) < 0) return -1;
      if (f->c.readonly[a - f->c.arr]) {
        char where[32];
        snprintf(where, sizeof where, outs == args ? "argument %d" : "out=", nin + j);
        PyErr_Format(PyExc_ValueError, "%s: output %d (%s) is read-only (its __cuda_array_interface__ data is "
                     "(pointer, True)): pass a writable array", kname, j, where);
        return -1;
      }
      f->out[j] = *a;
      f->out_obj[j] = o;
    }
  } else {
    memset(f->out, 0, sizeof(uk_array) * (size_t)nout);
  }
  return pyk_call_finish_stream(&f->c);
}

void pyk_frame_release(pyk_frame *f, PyObject *ctx, int from) {
  for (int j = from; j < f->nout; j++)
    if (f->out[j].data) uk_array_free(pyk_context_ptr(ctx), &f->out[j], f->c.stream);
}

PyObject *pyk_frame_outputs(pyk_frame *f, PyObject *ctx) {
  PyObject *t = PyTuple_New(f->nout);
  if (!t) {
    if (!f->given) pyk_frame_release(f, ctx, 0);
    return NULL;
  }
  for (int j = 0; j < f->nout; j++) {
    PyObject *o;
    if (f->given) {
      o = f->out_obj[j];
      Py_INCREF(o);
    } else if (!(o = pyk_call_wrap_output(&f->c, ctx, &f->out[j]))) {
      /* out[j] went to an Array (freed with it) if that was made; later ones did not */
      pyk_frame_release(f, ctx, j + 1);
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SetItem(t, j, o);
  }
  return t;
}

int pyk_frame_prealloc(pyk_frame *f, const pyk_outcache *oc, const int64_t *extra, int nextra, PyObject **made,
                       int *record) {
  *record = !f->given && (f->c.kind == PYK_CUPY || f->c.kind == PYK_TORCH);
  uk_array known[PYK_OUTCACHE_OUTS];
  if (*record && pyk_outcache_find(oc, f->c.arg, f->nin, extra, nextra, f->nout, known) &&
      pyk_fast_prealloc(&f->c, known, f->nout, f->out, made)) {
    *record = 0;
    return f->nout;
  }
  return 0;
}

PyObject *pyk_frame_result(pyk_frame *f, PyObject *ctx, pyk_outcache **oc, const int64_t *extra, int nextra,
                           PyObject **made, int *nmade, int record) {
  if (*nmade) {
    PyObject *t = PyTuple_New(f->nout);
    if (t)
      for (; *nmade > 0; (*nmade)--) PyTuple_SetItem(t, *nmade - 1, made[*nmade - 1]);
    return t;
  }
  if (record) pyk_outcache_store(oc, f->c.arg, f->nin, extra, nextra, f->out, f->nout);
  return pyk_frame_outputs(f, ctx);
}

PyObject *pyk_launch_do(void *k, pyk_run_fn fn, PyObject *ctx, const char *kname, int nin, int nout,
                        PyObject *args, PyObject *kw, pyk_mode mode, pyk_outcache **oc) {
  static const char *const names[] = {"out", "size", "block_size", "stream", NULL};
  PyObject *v[4];
  if (pyk_kwargs(kw, kname, names, v) < 0) return NULL;
  pyk_frame f;
  PyObject *made[PYK_MAX_ARGS]; /* outputs allocated here in the producer's pool (new refs) */
  int nmade = 0;
  int run = mode == PYK_RUN || mode == PYK_BIND;
  pyk_call_init(&f.c, !run);
  PyObject *result = NULL;
  uk_launch l = {.size = -1};
  if (v[1] && v[1] != Py_None) {
    l.size = PyLong_AsLongLong(v[1]);
    if (l.size == -1 && PyErr_Occurred()) goto out;
    if (l.size < 0) {
      PyErr_SetString(PyExc_ValueError, "size must be >= 0");
      goto out;
    }
  }
  if (v[2] && v[2] != Py_None) {
    long b = PyLong_AsLong(v[2]);
    if (b == -1 && PyErr_Occurred()) goto out;
    if (b < 1 || b > 1024) {
      PyErr_Format(PyExc_ValueError, "block_size %ld is out of range (1..1024)", b);
      goto out;
    }
    l.block_size = (int)b;
  }
  if (pyk_frame_bind(&f, kname, nin, nout, args, v[0], run ? v[3] : NULL) < 0) goto out;
  if (mode == PYK_BIND) {
    result = Py_None;
    Py_INCREF(result);
    goto out;
  }
  l.stream = f.c.stream;
  /* CuPy or PyTorch inputs whose outputs are known from an earlier call:
   * allocate them in the library's pool and pass them as given outputs. */
  int record = 0;
  if (mode == PYK_RUN && oc) nmade = pyk_frame_prealloc(&f, *oc, &l.size, 1, made, &record);
  uk_status st;
  char *src = NULL;
  int count = 0;
  Py_BEGIN_ALLOW_THREADS
  st = fn(k, mode, f.c.arg, nin, f.out, nout, &l, &src, &count);
  Py_END_ALLOW_THREADS
  if (st != UK_OK) {
    pyk_raise_kernel(st, ctx);
    goto out;
  }
  if (mode == PYK_SOURCE) {
    result = PyUnicode_FromString(src);
    uk_free(src);
  } else if (mode == PYK_COUNT) {
    result = PyLong_FromLong(count);
  } else if (mode == PYK_PRECOMPILE) {
    result = Py_None;
    Py_INCREF(result);
  } else {
    result = pyk_frame_result(&f, ctx, oc, &l.size, 1, made, &nmade, record);
  }
out:
  while (nmade > 0) Py_DECREF(made[--nmade]);
  pyk_call_clear(&f.c);
  return result;
}
