/* Entering a device's primary context for a stretch of driver calls, without
 * disturbing the calling thread's own current context: the primary context
 * is pushed only when it is not current already, and popped on leave. */
#ifndef UK_RUNTIME_DEVICE_H
#define UK_RUNTIME_DEVICE_H

#include "runtime/context.h"

/* Device ordinals ukern handles (per-device tables are this long). */
#define UK__MAX_DEVICES 64

/* Makes `device`'s primary context current. *pushed says whether it was
 * pushed (pass it to uk__device_leave). Loads the driver if needed. */
uk_status uk__device_enter(int device, int *pushed);
void uk__device_leave(int pushed);

/* Makes current the primary context of the device owning device memory
 * `dptr` (else keeps the current context, else device 0's). */
uk_status uk__pointer_enter(uint64_t dptr, int *pushed);

/* The device a launch on `stream` runs on, with its primary context made
 * current like uk__device_enter: the stream's device; for a NULL stream the
 * current context's device, else ctx's default device, whose primary
 * context is then made current (not pushed). Legal while `stream` captures. */
uk_status uk__launch_enter(uk_context *ctx, void *stream, int *device, int *pushed);

/* `device`'s compute capability (an ordinal; the driver loaded), read once
 * per process (uk_device_info_get's read counts) and kept. UK_OK;
 * UK_ERR_INVALID for an ordinal out of range, or the driver's error.
 * Thread-safe. */
uk_status uk__device_cc(int device, int *major, int *minor);

#endif
