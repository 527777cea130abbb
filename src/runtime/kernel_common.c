/* Helpers the generated-kernel runtimes share (kernel_common.h): views, spans, launch checks, overlap copies, SM counts. */
#include "runtime/kernel_common.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "codegen/dtype.h"
#include "runtime/device.h"

char *uk__strdup_opt(const char *s, int *failed) {
  if (!s) return NULL;
  char *d = strdup(s);
  if (!d) *failed = 1;
  return d;
}

int uk__array_c_contiguous(const uk_array *a) {
  int64_t want = (int64_t)uk__dtype_size(a->dtype);
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (a->shape[d] == 1) continue;
    if (a->strides[d] != want) return 0;
    want *= a->shape[d];
  }
  return 1;
}

int uk__array_span(const uk_array *a, uint64_t *lo, uint64_t *hi) {
  int64_t neg = 0, pos = 0;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] == 0) return 0;
    int64_t ext = a->strides[d] * (a->shape[d] - 1);
    if (ext < 0) neg += ext;
    else pos += ext;
  }
  *lo = a->data + (uint64_t)neg;
  *hi = a->data + (uint64_t)pos + uk__dtype_size(a->dtype);
  return 1;
}

int uk__array_same_view(const uk_array *a, const uk_array *b) {
  if (a->data != b->data || a->dtype != b->dtype || a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return 0;
  return 1;
}

uk_status uk__launch_reject(const char *kernel, const uk_launch *l, unsigned takes) {
  if (!(takes & UK__TAKES_AXES) && (l->axes || l->num_axes || l->keepdims || l->reduce_none))
    return uk__errorf(UK_ERR_INVALID,
                      "%s: uk_launch.%s is set, but axes, num_axes, keepdims and reduce_none are for reductions "
                      "(hint: zero them%s)",
                      kernel,
                      l->axes       ? "axes"
                      : l->num_axes ? "num_axes"
                      : l->keepdims ? "keepdims"
                                    : "reduce_none",
                      takes & UK__TAKES_BLOCK && !(takes & UK__TAKES_SIZE) ? "; a fusion program names its axes "
                                                                             "in its text: sum(x, axis=1)"
                                                                           : "");
  if (!(takes & UK__TAKES_SIZE) && l->size > 0)
    return uk__errorf(UK_ERR_INVALID,
                      "%s: uk_launch.size is %lld, but size is for elementwise kernels whose arrays are all raw "
                      "(hint: leave it 0 or -1)",
                      kernel, (long long)l->size);
  if (!(takes & UK__TAKES_BLOCK) && l->block_size)
    return uk__errorf(UK_ERR_INVALID,
                      "%s: uk_launch.block_size is %d, but reductions choose their own block size (hint: leave "
                      "it 0)",
                      kernel, l->block_size);
  return UK_OK; /* not reached: uk__launch_check calls this only for a member outside takes */
}

static _Atomic int sm_count[UK__MAX_DEVICES];

int uk__device_sm_count(int device) {
  int in_range = device >= 0 && device < UK__MAX_DEVICES;
  int n = in_range ? atomic_load_explicit(&sm_count[device], memory_order_relaxed) : 0;
  if (n > 0) return n;
  if (!uk__cu_usable()) return UK_SM_OFFLINE; /* offline: no device to ask */
  if (uk__cu.cuDeviceGetAttribute(&n, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, (CUdevice)device) != CUDA_SUCCESS ||
      n <= 0)
    n = UK_SM_OFFLINE;
  if (in_range) atomic_store_explicit(&sm_count[device], n, memory_order_relaxed);
  return n;
}

uk_status uk__copy_overlapping_inputs(uk_context *ctx, const uk_array *const *in, int nin, const uk_array *outs,
                                      int nout, void *stream, uint64_t *ptr, uint64_t *temps, int *ntemps) {
  uint64_t olo[UK_MAX_PARAMETERS], ohi[UK_MAX_PARAMETERS]; /* each output's span, once; empty: lo == hi */
  for (int j = 0; j < nout; j++)
    if (!uk__array_span(&outs[j], &olo[j], &ohi[j])) olo[j] = ohi[j] = 0;
  for (int p = 0; p < nin; p++) {
    const uk_array *a = in[p];
    uint64_t alo, ahi;
    if (!a || !uk__array_span(a, &alo, &ahi)) continue;
    int overlap = 0;
    for (int j = 0; j < nout && !overlap; j++)
      overlap = alo < ohi[j] && olo[j] < ahi && !uk__array_same_view(a, &outs[j]);
    if (!overlap) continue;
    uint64_t from = alo & ~(uint64_t)15, tmp = 0;
    size_t bytes = (size_t)(ahi - from);
    uk_status st = uk__context_alloc(ctx, bytes, stream, &tmp);
    if (st != UK_OK) return st;
    temps[(*ntemps)++] = tmp;
    if ((st = uk__cu_check(uk__cu.cuMemcpyDtoDAsync(tmp, from, bytes, (CUstream)stream),
                           "cuMemcpyDtoDAsync (copying an input that overlaps an output)")) != UK_OK)
      return st;
    ptr[p] = tmp + (a->data - from);
  }
  return UK_OK;
}
