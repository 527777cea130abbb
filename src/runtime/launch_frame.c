/* The launch stage every generated-kernel kind shares (launch_frame.h). */
#include "runtime/launch_frame.h"

#include "base/error.h"
#include "codegen/dtype.h"
#include "runtime/device.h"
#include "runtime/kernel_common.h"

uk_status uk__frame_enter(uk__frame *f, const uk__kernel *kd, int device, void *stream) {
  f->ctx = kd->ctx;
  f->name = kd->name;
  f->stream = stream;
  f->device = f->pushed = f->nalloc = f->ntemps = 0;
  uk_status st = uk__launch_enter(kd->ctx, stream, &f->device, &f->pushed);
  if (st == UK_OK && device >= 0 && device != f->device)
    st = uk__errorf(UK_ERR_INVALID, "%s: the arrays are on device %d but the launch runs on device %d", kd->name,
                    device, f->device);
  return st;
}

uk_status uk__frame_outputs(uk__frame *f, uk__call *c, int nout, int64_t elements) {
  if (c->b.outputs_given) return UK_OK;
  for (int j = 0; j < nout; j++, f->nalloc++) {
    uk_array *o = &c->outs[j];
    o->device = f->device;
    size_t bytes = (size_t)elements * uk__dtype_size(o->dtype);
    /* A zero-element output keeps data == 0: there is nothing to point at. */
    if (bytes) {
      uk_status st = uk__context_alloc(f->ctx, bytes, f->stream, &o->data);
      if (st != UK_OK) return st;
    }
  }
  return UK_OK;
}

uk_status uk__frame_operands(uk__frame *f, const uk__kernel *kd, const uk__call *c) {
  int nin = kd->in.count, np = nin + kd->out.count;
  for (int p = 0; p < np; p++) f->ptr[p] = c->arr[p] ? c->arr[p]->data : 0;
  if (!c->b.outputs_given) return UK_OK;
  return uk__copy_overlapping_inputs(f->ctx, c->arr, nin, c->outv, kd->out.count, f->stream, f->ptr, f->temps,
                                     &f->ntemps);
}

uk_status uk__frame_launch(const uk__frame *f, CUfunction fn, int64_t gx, int64_t gy, int block, unsigned shared,
                           void *buf, size_t bytes) {
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes, CU_LAUNCH_PARAM_END};
  return uk__cu_check(uk__cu.cuLaunchKernel(fn, (unsigned)gx, (unsigned)gy, 1, (unsigned)block, 1, 1, shared,
                                            (CUstream)f->stream, NULL, extra),
                      "cuLaunchKernel");
}

uk_status uk__frame_leave(uk__frame *f, uk__call *c, uk_status st, uk_array *out, int nout) {
  for (int j = 0; j < f->ntemps; j++) uk__context_free(f->ctx, f->temps[j], f->stream);
  if (st != UK_OK) {
    for (int j = 0; j < f->nalloc; j++)
      if (c->outs[j].data) uk__context_free(f->ctx, c->outs[j].data, f->stream);
  } else if (c && !c->b.outputs_given) {
    for (int j = 0; j < nout; j++) out[j] = c->outs[j];
  }
  uk__device_leave(f->pushed);
  return st;
}
