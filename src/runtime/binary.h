/* A compiled program: the cubin (or PTX) image plus the map from name
 * expressions to lowered names. Immutable once built, refcounted, shared by
 * the memory cache and every module made from it. */
#ifndef UK_RUNTIME_BINARY_H
#define UK_RUNTIME_BINARY_H

#include <stdatomic.h>
#include <stddef.h>

#include "ukern/ukern.h"

typedef struct uk__binary {
  atomic_int refs;
  void *image;        /* cubin bytes (PTX: NUL-terminated text) */
  size_t image_size;
  int is_ptx;
  int arch;           /* sm_XY as XY */
  int num_names;
  char **names;       /* name expressions as given */
  char **lowered;     /* their lowered names */
  char *log;          /* NVRTC log, "" when empty; never NULL */
} uk__binary;

/* A new binary with refs = 1 holding copies of the arguments. */
uk_status uk__binary_create(const void *image, size_t size, int is_ptx, int arch, int num_names,
                            const char *const *names, const char *const *lowered, const char *log,
                            uk__binary **out);
void uk__binary_retain(uk__binary *b);
void uk__binary_release(uk__binary *b); /* NULL is a no-op */

/* Serialised form for the disk cache (format private to binary.c):
 * uk__binary_encode gives a malloc'd buffer; decode validates every length
 * and returns UK_ERR_IO for malformed input (never reads out of bounds). */
uk_status uk__binary_encode(const uk__binary *b, void **out, size_t *out_size);
uk_status uk__binary_decode(const void *data, size_t size, uk__binary **out);

/* Lowered name for a name expression; NULL when absent. */
const char *uk__binary_lowered(const uk__binary *b, const char *name_expression);

#endif
