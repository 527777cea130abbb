/*
 * streams.c — CUDA streams as the array protocols give them: a protocol's
 * stream integer or a library's stream object as a CUstream, one stream
 * ordered after another by an event, and the streams a call's arrays were
 * produced on (CAI v3), which the launch waits for.
 */
#include "pyukern.h"

/* A protocol stream integer as a CUstream: 0 and 1 are the legacy default
 * stream (NULL in the driver API), 2 the per-thread default stream. */
void *pyk_stream_from_int(unsigned long long v) { return v == 1 ? NULL : (void *)(uintptr_t)v; }

int pyk_stream_from_object(PyObject *o, void **out) {
  PyObject *v = NULL;
  static const char *const attrs[] = {"ptr",          /* cupy.cuda.Stream */
                                      "cuda_stream",  /* torch.cuda.Stream */
                                      NULL};
  if (PyLong_Check(o)) {
    v = o;
    Py_INCREF(v);
  }
  for (int i = 0; !v && attrs[i]; i++)
    if (!(v = PyObject_GetAttrString(o, attrs[i]))) PyErr_Clear();
  if (!v && (v = PyObject_CallMethod(o, "__cuda_stream__", NULL))) { /* CUDA stream protocol: (version, handle) */
    PyObject *h = PyTuple_Check(v) && PyTuple_Size(v) == 2 ? PyTuple_GetItem(v, 1) : NULL;
    Py_XINCREF(h);
    Py_DECREF(v);
    v = h;
  }
  if (!v) {
    PyErr_Clear();
    if (!(v = PyNumber_Long(o))) { /* numba.cuda streams convert with int() */
      PyErr_Clear();
      PyErr_SetString(PyExc_TypeError, "stream must be None, an int (CUstream), a CuPy, PyTorch or Numba stream, "
                                       "or an object with __cuda_stream__");
      return -1;
    }
  }
  unsigned long long s = PyLong_AsUnsignedLongLong(v);
  Py_DECREF(v);
  if (s == (unsigned long long)-1 && PyErr_Occurred()) return -1;
  *out = pyk_stream_from_int(s);
  return 0;
}

void pyk_call_produced_on(pyk_call *c, void *s) {
  if (!c->have_stream) c->stream = s, c->have_stream = 1;
  for (int i = 0; i < c->nproduced; i++)
    if (c->produced_on[i] == s) return;
  if (c->nproduced < 8) c->produced_on[c->nproduced++] = s;
}

/* Whether `s` is capturing; the legacy default stream never is, and is not
 * asked (the driver's answer there can invalidate another stream's capture). */
static uk_status stream_capturing(void *s, int *on) {
  *on = 0;
  return !s || s == (void *)1 ? UK_OK : uk_stream_capturing(s, on);
}

int pyk_stream_order(void *producer, void *consumer, int device) {
  if (producer == consumer) return 0;
  /* An event recorded outside a capture cannot order work inside it (the
   * driver invalidates the capture), nor the reverse: when one stream is
   * capturing and the other is not, the caller orders them, as with CuPy. */
  int pc = 0, cc = 0;
  uk_status cs = stream_capturing(producer, &pc);
  if (cs == UK_OK) cs = stream_capturing(consumer, &cc);
  if (cs != UK_OK) {
    pyk_raise(cs);
    return -1;
  }
  if (pc != cc) return 0;
  void *ev = NULL;
  uk_status st = uk_event_create(device, UK_EVENT_DISABLE_TIMING, &ev);
  if (st == UK_OK) st = uk_event_record(ev, producer);
  if (st == UK_OK) st = uk_stream_wait_event(consumer, ev);
  if (ev) uk_event_destroy(ev); /* the wait holds what it needs */
  if (st != UK_OK) {
    pyk_raise(st);
    return -1;
  }
  return 0;
}
