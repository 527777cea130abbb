/* Which global variables of a PTX module nothing refers to.
 *
 * NVRTC cannot know which __device__ variables the host will ask for by
 * name, so it keeps every one it instantiated: a program that includes CUB
 * carries ~640 constexpr static members of libcu++ and CUB templates as
 * .global variables, and cuModuleLoadData spends ~2.4 ms on them at every
 * load (H200). Generated kernels know the few variables their host code
 * reads; cubin_lean.h hides the rest from the loader. */
#ifndef UK_RUNTIME_PTX_GLOBALS_H
#define UK_RUNTIME_PTX_GLOBALS_H

#include <stddef.h>

#include "ukern/ukern.h"

/* A sorted set of names: one malloc'd block (free(set) releases all). */
typedef struct uk__name_set {
  int count;
  const char *names[]; /* ascending strcmp order; the text follows the array */
} uk__name_set;

/* The module-scope .global variables of `ptx` (len bytes) that nothing else
 * in the text names, except those starting with `keep_prefix` (NULL: none
 * kept by name). References from code, other variables' initialisers and
 * declarations all count; a variable named only by an unused one counts as
 * used (one pass). A name defined twice is never unused. Text it does not
 * understand (a definition sharing its line, inside a function) counts as
 * used. *out gets the set (possibly empty; free() it); UK_ERR_NOMEM when out
 * of memory. */
uk_status uk__ptx_unused_globals(const char *ptx, size_t len, const char *keep_prefix, uk__name_set **out);

/* Whether `name` is in the set. */
int uk__name_set_has(const uk__name_set *set, const char *name);

#endif
