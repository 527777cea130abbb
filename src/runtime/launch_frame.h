/* The launch stage every generated-kernel kind shares: the launch device
 * (made current, and checked against the arrays'), outputs that ukern
 * allocates, the operands' pointers with copies of inputs that partly
 * overlap an output, the launch, and the cleanup that frees what the call
 * took on failure and hands the allocated outputs to the caller on
 * success. Nothing here allocates host memory or builds text: it is the
 * hot path of every call. */
#ifndef UK_RUNTIME_LAUNCH_FRAME_H
#define UK_RUNTIME_LAUNCH_FRAME_H

#include "runtime/kernel_args.h"

typedef struct uk__frame {
  uk_context *ctx;
  const char *name;  /* the kernel's, for messages */
  void *stream;
  int device, pushed;
  int nalloc, ntemps;
  uint64_t ptr[UK_MAX_PARAMS];   /* per parameter: what the kernel gets */
  uint64_t temps[UK_MAX_PARAMS]; /* overlap copies, freed on leave */
} uk__frame;

/* Makes the launch's device current (the stream's, else the current or the
 * context's default device) and checks that the call's arrays, on `device`
 * (-1: no array), are on it. Always pair with uk__frame_leave, also on
 * failure. */
uk_status uk__frame_enter(uk__frame *f, const uk__kernel *kd, int device, void *stream);

/* Allocates each output the caller left to ukern (`elements` items each;
 * none when zero) on the launch device. */
uk_status uk__frame_outputs(uk__frame *f, uk__call *c, int nout, int64_t elements);

/* ptr[] from the call's arrays; with given outputs, inputs that partly
 * overlap one are copied first and ptr[] points at the copies. */
uk_status uk__frame_operands(uk__frame *f, const uk__kernel *kd, const uk__call *c);

/* cuLaunchKernel with the argument buffer (grid gx x gy, `block` threads,
 * `shared` bytes of dynamic shared memory a block). */
uk_status uk__frame_launch(const uk__frame *f, CUfunction fn, int64_t gx, int64_t gy, int block, unsigned shared,
                           void *buf, size_t bytes);

/* Frees the overlap copies; on failure (st) the outputs it allocated, on
 * success copies allocated outputs' descriptors to out[]. Returns st. c may
 * be NULL for a frame that allocated no output (nout 0). */
uk_status uk__frame_leave(uk__frame *f, uk__call *c, uk_status st, uk_array *out, int nout);

#endif
