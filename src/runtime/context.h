/* The uk_context object and the runtime services every kernel type uses:
 * device/primary-context handling, the compile path through both caches,
 * and the allocator. */
#ifndef UK_RUNTIME_CONTEXT_H
#define UK_RUNTIME_CONTEXT_H

#include <stdatomic.h>

#include "runtime/arch.h"
#include "runtime/compile.h"
#include "runtime/cudadrv.h"
#include "runtime/dcache.h"
#include "runtime/mcache.h"

/* An object a layer above keeps in the context (made at its first use
 * there) with the function that destroys it: the last release calls it, so
 * the context needs none of that layer's code. */
typedef void (*uk__held_free)(void *obj);
typedef struct uk__held {
  _Atomic(void *) obj;
  _Atomic(uk__held_free) destroy;
} uk__held;

struct uk_context {
  atomic_int refs;        /* the caller's reference + one per live object made from it */
  uk_options opts;        /* copy; string members point at the owned copies below */
  char **nvrtc_options;   /* owned copies of opts.nvrtc_options */
  int num_nvrtc_options;
  uk__mcache *mcache;
  uk__dcache *dcache;     /* NULL when the disk cache is disabled */
  int arch_flags;         /* variant of opts.arch from opts.arch_name (arch.h) */
  atomic_ullong compiles, memory_hits, memory_misses;
  /* The "y = x" kernel of uk_array_copy_contiguous (contiguous.c); it
   * holds no reference to the context. */
  uk__held copy_kernel;
  /* A destroyed module's object, reused by the next module of the context
   * (module.c): a memory-cache hit then destroy is a common loop. */
  uk__held spare_module;
};

/* The held object, or NULL. */
static inline void *uk__held_get(uk__held *h) { return atomic_load_explicit(&h->obj, memory_order_acquire); }
/* Takes the held object (the slot is empty after), or NULL. */
static inline void *uk__held_take(uk__held *h) {
  return atomic_exchange_explicit(&h->obj, NULL, memory_order_acq_rel);
}
/* Holds obj when the slot is empty (1), else leaves it (0; *current: the
 * held one). */
static inline int uk__held_put(uk__held *h, void *obj, uk__held_free destroy, void **current) {
  void *none = NULL;
  atomic_store_explicit(&h->destroy, destroy, memory_order_relaxed);
  int put = atomic_compare_exchange_strong_explicit(&h->obj, &none, obj, memory_order_acq_rel, memory_order_acquire);
  if (current) *current = put ? obj : none;
  return put;
}

/* Objects made from a context keep it alive: uk_context_destroy drops the
 * caller's reference, and the context goes when the last object does. */
void uk__context_retain(uk_context *ctx);
void uk__context_release(uk_context *ctx);

/* Checks an options struct's arch / arch_name (`what`: "uk_options"):
 * UK_ERR_INVALID for a negative, unparsable or unsupported one; *out the
 * target ({0, 0} when neither is set). */
uk_status uk__context_check_arch(int arch, const char *arch_name, const char *what, uk__arch *out);

/* The arch to compile for: opts.arch if set, else `device`'s (loading the
 * driver). UK_ERR_NO_DEVICE with a hint to set uk_options.arch otherwise. */
uk_status uk__context_arch(uk_context *ctx, int device, int *arch);

/* Compiles through the memory cache, then the disk cache, then NVRTC
 * (single-flight per key). The context's NVRTC options are put before the
 * request's. An -arch option among them sets the target (and leaves the
 * list); a request for the context's arch gets its variant (uk_options.
 * arch_name). *out is a new reference. */
uk_status uk__context_compile(uk_context *ctx, const uk__compile_req *req, uk__binary **out);

/* A binary that `make` builds (not one NVRTC program: a link of several),
 * through the memory cache and then the disk cache under `key`, the
 * complete description of what make reads. *out is a new reference. */
uk_status uk__context_cached(uk_context *ctx, const char *key, size_t key_len,
                             uk_status (*make)(void *arg, uk__binary **out), void *arg, uk__binary **out);

/* The retained primary context of a device (process-wide, retained once
 * and kept for the life of the process). */
uk_status uk__device_context(int device, CUcontext *out);

/* Device memory through the context's allocator (default: cuMemAllocAsync). */
uk_status uk__context_alloc(uk_context *ctx, size_t bytes, void *stream, uint64_t *dptr);
void uk__context_free(uk_context *ctx, uint64_t dptr, void *stream);

#endif
