/* Streams and events over the driver ukern already loads.
 *
 * Both stay plain driver handles (void * = CUstream / CUevent), so that
 * streams and events made by the user, by the CUDA runtime and by ukern mix
 * freely. Creation runs in the device's primary context; calls on an
 * existing handle go straight to the driver, which finds the handle's own
 * context. */
#include <stdio.h>

#include "base/error.h"
#include "runtime/device.h"

#define STREAM_FLAGS UK_STREAM_NON_BLOCKING
#define EVENT_FLAGS (UK_EVENT_DISABLE_TIMING | UK_EVENT_BLOCKING_SYNC | UK_EVENT_INTERPROCESS)

uk_status uk_stream_create(int device, unsigned flags, int priority, void **stream) {
  uk__error_clear();
  if (!stream) return uk__errorf(UK_ERR_INVALID, "uk_stream_create: stream is NULL");
  if (flags & ~(unsigned)STREAM_FLAGS)
    return uk__errorf(UK_ERR_INVALID, "uk_stream_create: unknown flags 0x%x (known: UK_STREAM_NON_BLOCKING)",
                      flags & ~(unsigned)STREAM_FLAGS);
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUstream s = NULL;
  if ((st = uk__cu_need(cuStreamCreateWithPriority)) == UK_OK) {
    unsigned cu = flags & UK_STREAM_NON_BLOCKING ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
    st = uk__cu_check(uk__cu.cuStreamCreateWithPriority(&s, cu, priority), "cuStreamCreateWithPriority");
  }
  uk__device_leave(pushed);
  if (st == UK_OK) *stream = s;
  return st;
}

uk_status uk_stream_priority_range(int device, int *least, int *greatest) {
  uk__error_clear();
  if (!least || !greatest) return uk__errorf(UK_ERR_INVALID, "uk_stream_priority_range: NULL argument");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuCtxGetStreamPriorityRange)) == UK_OK)
    st = uk__cu_check(uk__cu.cuCtxGetStreamPriorityRange(least, greatest), "cuCtxGetStreamPriorityRange");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_stream_destroy(void *stream) {
  uk__error_clear();
  if (!stream) return UK_OK;
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuStreamDestroy((CUstream)stream), "cuStreamDestroy");
}

/* A NULL stream is the legacy stream of the current context (entered the
 * way a launch would, so a thread with no context gets device 0's). */
static uk_status stream_enter(void *stream, int *pushed) {
  int device;
  *pushed = 0;
  return stream ? uk__cu_load() : uk__launch_enter(NULL, NULL, &device, pushed);
}

uk_status uk_stream_synchronize(void *stream) {
  uk__error_clear();
  int pushed;
  uk_status st = stream_enter(stream, &pushed);
  if (st != UK_OK) return st;
  st = uk__cu_check(uk__cu.cuStreamSynchronize((CUstream)stream), "cuStreamSynchronize");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_stream_query(void *stream, int *done) {
  uk__error_clear();
  if (!done) return uk__errorf(UK_ERR_INVALID, "uk_stream_query: done is NULL");
  int pushed;
  uk_status st = stream_enter(stream, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuStreamQuery)) == UK_OK) {
    CUresult r = uk__cu.cuStreamQuery((CUstream)stream);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) *done = r == CUDA_SUCCESS;
    else st = uk__cu_error(r, "cuStreamQuery");
  }
  uk__device_leave(pushed);
  return st;
}

uk_status uk_stream_wait_event(void *stream, void *event) {
  uk__error_clear();
  if (!event) return uk__errorf(UK_ERR_INVALID, "uk_stream_wait_event: event is NULL");
  int pushed;
  uk_status st = stream_enter(stream, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuStreamWaitEvent)) == UK_OK)
    st = uk__cu_check(uk__cu.cuStreamWaitEvent((CUstream)stream, (CUevent)event, 0), "cuStreamWaitEvent");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_event_create(int device, unsigned flags, void **event) {
  uk__error_clear();
  if (!event) return uk__errorf(UK_ERR_INVALID, "uk_event_create: event is NULL");
  if (flags & ~(unsigned)EVENT_FLAGS)
    return uk__errorf(UK_ERR_INVALID,
                      "uk_event_create: unknown flags 0x%x (known: UK_EVENT_DISABLE_TIMING, UK_EVENT_BLOCKING_SYNC, "
                      "UK_EVENT_INTERPROCESS)",
                      flags & ~(unsigned)EVENT_FLAGS);
  if ((flags & UK_EVENT_INTERPROCESS) && !(flags & UK_EVENT_DISABLE_TIMING))
    return uk__errorf(UK_ERR_INVALID, "uk_event_create: UK_EVENT_INTERPROCESS needs UK_EVENT_DISABLE_TIMING too "
                                      "(the driver shares events without timing only)");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  unsigned cu = (flags & UK_EVENT_DISABLE_TIMING ? CU_EVENT_DISABLE_TIMING : 0) |
                (flags & UK_EVENT_BLOCKING_SYNC ? CU_EVENT_BLOCKING_SYNC : 0) |
                (flags & UK_EVENT_INTERPROCESS ? CU_EVENT_INTERPROCESS : 0);
  CUevent e = NULL;
  st = uk__cu_check(uk__cu.cuEventCreate(&e, cu), "cuEventCreate");
  uk__device_leave(pushed);
  if (st == UK_OK) *event = e;
  return st;
}

uk_status uk_event_destroy(void *event) {
  uk__error_clear();
  if (!event) return UK_OK;
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuEventDestroy((CUevent)event), "cuEventDestroy");
}

uk_status uk_event_record(void *event, void *stream) {
  uk__error_clear();
  if (!event) return uk__errorf(UK_ERR_INVALID, "uk_event_record: event is NULL");
  int pushed;
  uk_status st = stream_enter(stream, &pushed);
  if (st != UK_OK) return st;
  st = uk__cu_check(uk__cu.cuEventRecord((CUevent)event, (CUstream)stream), "cuEventRecord");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_event_synchronize(void *event) {
  uk__error_clear();
  if (!event) return uk__errorf(UK_ERR_INVALID, "uk_event_synchronize: event is NULL");
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuEventSynchronize((CUevent)event), "cuEventSynchronize");
}

uk_status uk_event_query(void *event, int *done) {
  uk__error_clear();
  if (!event || !done) return uk__errorf(UK_ERR_INVALID, "uk_event_query: %s is NULL", !event ? "event" : "done");
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuEventQuery)) != UK_OK) return st;
  CUresult r = uk__cu.cuEventQuery((CUevent)event);
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY) return uk__cu_error(r, "cuEventQuery");
  *done = r == CUDA_SUCCESS;
  return UK_OK;
}

uk_status uk_event_elapsed(void *start, void *end, float *ms) {
  uk__error_clear();
  if (!start || !end || !ms)
    return uk__errorf(UK_ERR_INVALID, "uk_event_elapsed: %s is NULL", !start ? "start" : !end ? "end" : "ms");
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  float t = 0;
  CUresult r = uk__cu.cuEventElapsedTime(&t, (CUevent)start, (CUevent)end);
  if (r == CUDA_ERROR_NOT_READY)
    return uk__errorf(UK_ERR_CUDA, "uk_event_elapsed: an event has not completed yet (CUDA_ERROR_NOT_READY: "
                                   "wait with uk_event_synchronize(end) or poll uk_event_query)");
  if (r != CUDA_SUCCESS) return uk__cu_error(r, "cuEventElapsedTime");
  *ms = t;
  return UK_OK;
}

uk_status uk_stream_capturing(void *stream, int *capturing) {
  uk__error_clear();
  if (!capturing) return uk__errorf(UK_ERR_INVALID, "uk_stream_capturing: capturing is NULL");
  *capturing = 0;
  if (!stream) return UK_OK;
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  CUstreamCaptureStatus s = CU_STREAM_CAPTURE_STATUS_NONE;
  if ((st = uk__cu_check(uk__cu.cuStreamIsCapturing((CUstream)stream, &s), "cuStreamIsCapturing")) != UK_OK)
    return st;
  *capturing = s != CU_STREAM_CAPTURE_STATUS_NONE;
  return UK_OK;
}
