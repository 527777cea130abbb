/* The argument stage every generated-kernel kind shares (kernel_args.h). */
#include "runtime/kernel_args.h"

#include <stdio.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "codegen/scalar.h"
#include "codegen/shape.h"
#include "runtime/kernel_common.h"

uk_status uk__call_bind(const uk__kernel *kd, const uk_arg *in, int nin, const uk_array *out, int nout, uk__call *c) {
  const char *name = kd->name;
  uk_status st = uk__bind(name, &kd->in, &kd->out, in, nin, out, nout, &c->b);
  if (st != UK_OK) return st;
  int given = c->b.outputs_given, first = -1;
  c->device = -1;
  for (int p = 0; p < nin + nout; p++) {
    const uk_array *a = p < nin ? (c->b.is_array[p] ? in[p].v.array : NULL) : (given ? &out[p - nin] : NULL);
    c->arr[p] = a;
    if (!a) continue;
    const uk_param *prm = uk__kernel_param(kd, p);
    if ((st = uk__shape_check(prm->name, a->ndim, a->shape, a->strides, (int64_t)uk__dtype_size(a->dtype), NULL)) !=
        UK_OK) {
      char msg[512]; /* "'x' has shape ..." becomes "k: input 'x' has shape ..." */
      snprintf(msg, sizeof msg, "%s", uk_last_error());
      return uk__errorf(st, "%s: %s %s", name, uk__kernel_role(kd, p), msg);
    }
    if (first < 0) {
      first = p;
      c->device = a->device;
    } else if (a->device != c->device) {
      return uk__errorf(UK_ERR_INVALID, "%s: %s '%s' is on device %d but %s '%s' is on device %d", name,
                        uk__kernel_role(kd, first), uk__kernel_param(kd, first)->name, c->device,
                        uk__kernel_role(kd, p), prm->name, a->device);
    }
  }
  return UK_OK;
}

uk_status uk__call_broadcast(const uk__kernel *kd, int nviews, const uk_operand_view *views, uk_loop *loop) {
  uk_status st = uk__shape_broadcast(nviews, views, loop);
  if (st != UK_OK) uk__error_prefix("%s", kd->name);
  return st;
}

uk_status uk__call_outputs(const uk__kernel *kd, uk__call *c, const uk_array *out, int ndim, const int64_t *shape,
                           const char *what, int skip_raw) {
  int nin = kd->in.count;
  c->outv = c->b.outputs_given ? out : c->outs;
  for (int j = 0; j < kd->out.count; j++) {
    const uk_param *prm = &kd->out.items[j];
    if (!c->b.outputs_given) {
      uk_array *o = &c->outs[j];
      uk_dtype t = c->b.dtype[nin + j];
      memset(o, 0, sizeof *o);
      o->dtype = t;
      o->ndim = ndim;
      int64_t stride = (int64_t)uk__dtype_size(t);
      int empty = 0;
      for (int d = 0; d < ndim; d++) empty |= shape[d] == 0;
      for (int d = ndim - 1; d >= 0; d--) {
        o->shape[d] = shape[d];
        o->strides[d] = stride;
        /* The output's item size may exceed the inputs': its bytes are checked
         * here (an empty output addresses nothing, whatever its strides). */
        if (__builtin_mul_overflow(stride, shape[d] > 0 ? shape[d] : 1, &stride) && !empty) {
          char a[200];
          return uk__errorf(UK_ERR_SHAPE, "%s: output '%s' of shape %s and dtype %s would exceed 2^63 bytes",
                            kd->name, prm->name, uk__shape_str(ndim, shape, a, sizeof a), uk_dtype_name(t));
        }
      }
      c->arr[nin + j] = o;
      continue;
    }
    const uk_array *g = &out[j];
    if (skip_raw && prm->is_raw) continue;
    int same = g->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = g->shape[d] == shape[d];
    if (!same) {
      char a[200], b[200];
      return uk__errorf(UK_ERR_SHAPE, "%s: output '%s' has shape %s but the %s shape is %s", kd->name, prm->name,
                        uk__shape_str(g->ndim, g->shape, a, sizeof a), what, uk__shape_str(ndim, shape, b, sizeof b));
    }
  }
  return UK_OK;
}

uk_status uk__call_key_params(const uk__kernel *kd, uk__call *c, const uk_arg *in, uint64_t raw_view_mask,
                              const char *field, uk_key_params *kp) {
  int nin = kd->in.count, np = nin + kd->out.count;
  for (int p = 0; p < np; p++) {
    const uk_param *prm = uk__kernel_param(kd, p);
    kp->dtype[p] = (uint8_t)c->b.dtype[p];
    if (p < nin && c->b.is_texture[p]) { /* passed by value like a scalar */
      kp->scalar_mask |= 1ull << p;
      kp->texture_mask |= 1ull << p;
      memcpy(c->scalar[p], &in[p].v.texture, sizeof in[p].v.texture);
      continue;
    }
    if (!c->arr[p]) {
      kp->scalar_mask |= 1ull << p;
      if ((raw_view_mask >> p) & 1)
        return uk__errorf(UK_ERR_INVALID, "%s: %s uses '_raw_%s' but input '%s' is a scalar, not an array", kd->name,
                          field, prm->name, prm->name);
      uk_status st = uk__scalar_convert(&in[p], c->b.dtype[p], prm->name, c->scalar[p]);
      if (st != UK_OK) return st;
      continue;
    }
    if (prm->is_raw || ((raw_view_mask >> p) & 1)) {
      kp->raw_ndim[p] = (uint8_t)c->arr[p]->ndim;
      if (uk__array_c_contiguous(c->arr[p])) kp->raw_contig_mask |= 1ull << p;
    }
  }
  return UK_OK;
}
