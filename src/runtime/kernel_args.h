/* The argument stage every generated-kernel kind shares, before any device
 * work: binding the arguments to the parameters, the arrays and their
 * device, the outputs (given ones checked against the result shape,
 * allocated ones described C-contiguous), and the per-parameter part of the
 * key with the converted scalars. Each function names the kernel and the
 * parameter in its errors. */
#ifndef UK_RUNTIME_KERNEL_ARGS_H
#define UK_RUNTIME_KERNEL_ARGS_H

#include <string.h>

#include "codegen/shape.h"
#include "runtime/kernel_pipeline.h"

/* A call's arguments as the launch needs them. */
typedef struct uk__call {
  uk_binding b;
  const uk_array *arr[UK_MAX_PARAMS];      /* per parameter; NULL for scalars; outputs point at outs */
  uk_array outs[UK_MAX_PARAMS];            /* allocated outputs, described (given ones are not copied) */
  const uk_array *outv;                    /* the outputs: the caller's when given, else outs */
  unsigned char scalar[UK_MAX_PARAMS][16]; /* converted scalars and texture objects */
  int device;                              /* the arrays' device; -1 when no array is given */
  int empty;                               /* the call has no element to compute: nothing to compile */
  const void *key;                         /* the kind's key in the prep that holds this */
} uk__call;

/* Binds (codegen/bind.h), checks each descriptor's extents (UK_ERR_SHAPE
 * naming the argument), and collects the arrays and their common device
 * (UK_ERR_INVALID naming two parameters on different devices). */
uk_status uk__call_bind(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout, uk__call *c);

/* Broadcasts the loop operands (codegen/shape.h), errors prefixed with the kernel's name. */
uk_status uk__call_broadcast(const uk__kernel *kd, int nviews, const uk_operand_view *views, uk_loop *loop);

/* The outputs of a call whose result has shape (ndim, shape): given ones
 * must have it (raw ones are skipped when skip_raw; `what` names the shape:
 * "loop", "result"); otherwise each is described C-contiguous, data 0. */
uk_status uk__call_outputs(const uk__kernel *kd, uk__call *c, const uk_array *out, int ndim, const int64_t *shape,
                           const char *what, int skip_raw);

/* Fills kp (dtypes, scalar/texture masks, raw views' ndim and contiguity)
 * and converts the scalars. raw_view_mask: the parameters whose _raw_ view
 * the text `field` uses (a scalar there is UK_ERR_INVALID). */
uk_status uk__call_key_params(const uk__kernel *kd, uk__call *c, const uk_arg *in, uint64_t raw_view_mask,
                              const char *field, uk_key_params *kp);

/* Packs a slot every kind shares (pointer, scalar, raw shape and stride)
 * into buf: 1 when it was one. Inline: it runs per slot per launch. */
static inline int uk__call_pack(const uk_slot *s, const uk__call *c, const uint64_t *ptr, unsigned char *buf) {
  switch (s->kind) {
  case UK_SLOT_PTR: memcpy(buf + s->offset, &ptr[s->param], 8); return 1;
  case UK_SLOT_SCALAR: memcpy(buf + s->offset, c->scalar[s->param], s->size); return 1;
  case UK_SLOT_RAW_SHAPE: memcpy(buf + s->offset, &c->arr[s->param]->shape[s->dim], 8); return 1;
  case UK_SLOT_RAW_STRIDE: memcpy(buf + s->offset, &c->arr[s->param]->strides[s->dim], 8); return 1;
  default: return 0;
  }
}

#endif
