/* Dropping unreferenced global variables from PTX.
 *
 * NVRTC cannot know which __device__ variables the host will ask for by
 * name, so it keeps every one it instantiated: a program that includes CUB
 * carries ~640 constexpr static members of libcu++ and CUB templates as
 * initialised .global variables. ptxas gives each a relocated slot in
 * constant bank 4, and cuModuleLoadData processes them on every load
 * (~2.4 ms on an H200). Generated kernels know the few variables their host
 * code reads, so the rest can go before the cubin is built. */
#ifndef UK_RUNTIME_PTX_STRIP_H
#define UK_RUNTIME_PTX_STRIP_H

#include <stddef.h>

#include "base/strbuf.h"
#include "ukern/ukern.h"

/* Appends `ptx` (len bytes) to `out` without the module-scope .global
 * variable definitions that nothing else in the text names, except those
 * whose names start with `keep_prefix` (may be NULL: none kept by name).
 * References from code, from other variables' initialisers and from
 * declarations all count, so what stays is always self-consistent; a
 * variable named only by a dropped one stays (one pass). *dropped gets the
 * count (may be NULL). UK_ERR_NOMEM when out of memory; text it does not
 * understand is copied unchanged. */
uk_status uk__ptx_drop_unused_globals(const char *ptx, size_t len, const char *keep_prefix, uk_strbuf *out,
                                      int *dropped);

#endif
