/* What the generated-kernel runtimes (elementwise.c, reduction.c) share:
 * array-view predicates, the SM count of a device, which uk_launch members a
 * kind takes, and copying inputs that partly overlap an output before a
 * kernel reads them. */
#ifndef UK_RUNTIME_KERNEL_COMMON_H
#define UK_RUNTIME_KERNEL_COMMON_H

#include <stdint.h>

#include "runtime/context.h"

/* strdup of an optional string (NULL stays NULL); sets *failed on no memory. */
char *uk__strdup_opt(const char *s, int *failed);

/* 1 if the array is C-contiguous (size-1 axes ignored). */
int uk__array_c_contiguous(const uk_array *a);
/* The byte range [lo, hi) the array's elements occupy; 0 when it is empty. */
int uk__array_span(const uk_array *a, uint64_t *lo, uint64_t *hi);
/* 1 if both describe the same elements in the same order (same data, dtype,
 * shape, strides). */
int uk__array_same_view(const uk_array *a, const uk_array *b);

/* The uk_launch members a kind takes (uk__launch_check). */
enum { UK__TAKES_SIZE = 1, UK__TAKES_BLOCK = 2, UK__TAKES_AXES = 4 };

/* UK_ERR_INVALID, naming the member and `kernel` (the kind in words:
 * "elementwise kernel 'f'"), when launch sets a member outside `takes`:
 * one struct serves every kind, and a setting a kind cannot honour is an
 * error rather than ignored. NULL launch is fine. Inline: on every call
 * only the test runs (a few loads); the message is built out of line. */
uk_status uk__launch_reject(const char *kernel, const uk_launch *launch, unsigned takes);
static inline uk_status uk__launch_check(const char *kernel, const uk_launch *l, unsigned takes) {
  if (!l) return UK_OK;
  int bad = (!(takes & UK__TAKES_AXES) && (l->axes || l->num_axes | l->keepdims | l->reduce_none)) ||
            (!(takes & UK__TAKES_SIZE) && l->size > 0) || (!(takes & UK__TAKES_BLOCK) && l->block_size);
  return bad ? uk__launch_reject(kernel, l, takes) : UK_OK;
}

/* Multiprocessors of a device (cached; UK_SM_OFFLINE if the driver can't
 * say, or without a driver: source and precompile calls on a machine
 * without a GPU size their plans for an H100/H200's count). */
#define UK_SM_OFFLINE 132
int uk__device_sm_count(int device);

/* Inputs in[0..nin) (NULL entries are scalars) that partly overlap one of
 * the given outputs are copied first, so results equal NumPy's whatever
 * order threads write in: the input's span, from a 16-byte boundary so the
 * copy keeps the pointer's alignment, into a stream-ordered temporary
 * (appended to temps; the caller frees them after the launch). ptr[p] is
 * set to the copy's address. Identical views run as is. */
uk_status uk__copy_overlapping_inputs(uk_context *ctx, const uk_array *const *in, int nin, const uk_array *outs,
                                      int nout, void *stream, uint64_t *ptr, uint64_t *temps, int *ntemps);

#endif
