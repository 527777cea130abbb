/* ukern's default device allocator (uk_options.allocator left empty).
 *
 * A stream-ordered pool of ukern's own per device. The driver's first
 * stream-ordered allocation in a process costs 7-12 ms (measured on H200,
 * CUDA 13: any pool, any size; a plain cuMemAlloc costs 0.1 ms), so the
 * first allocation on a device starts a background thread that, 5 ms later
 * (at once when a capture needs the pool), makes the pool and its first
 * allocation (off the first call's module load and launch, which it would
 * slow), and until it is done allocations that are
 * not being captured are served by cuMemAlloc ("bridged"). A bridged block
 * freed while the pool warms is freed by that thread once an event recorded
 * on the stream has passed; one freed later waits for the stream, then
 * cuMemFree. Only the first few blocks of a process are bridged. */
#ifndef UK_RUNTIME_POOL_H
#define UK_RUNTIME_POOL_H

#include <stdint.h>
#include <stddef.h>

#include "ukern/ukern.h"

/* Allocates `bytes` on the current context's device, ordered on `stream`. */
uk_status uk__pool_alloc(size_t bytes, void *stream, uint64_t *dptr);
/* Frees a block from uk__pool_alloc, ordered on `stream` (the current
 * context is the block's device's). */
void uk__pool_free(uint64_t dptr, void *stream);

/* For tests: 1 once `device`'s pool has made its first allocation (the
 * warm-up is over), 0 while it warms or before any allocation. */
int uk__pool_warm(int device);
/* For tests: whether `dptr` is a bridged block (not yet freed). */
int uk__pool_is_bridged(uint64_t dptr);

#endif
