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

/* The launch flavour of uk__launch_device: finds the device of `stream` (see
 * uk__launch_device) and makes its primary context current the same way. */
uk_status uk__launch_enter(uk_context *ctx, void *stream, int *device, int *pushed);

#endif
