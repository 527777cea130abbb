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
  void *mapping;      /* non-NULL: image points into this private copy of a
                         disk-cache entry, released with the binary */
  size_t mapping_size;
  int mapping_heap;   /* the copy is malloc'd (freed), else an mmap (unmapped) */
} uk__binary;

/* A new binary with refs = 1 holding copies of the arguments. */
uk_status uk__binary_create(const void *image, size_t size, int is_ptx, int arch, int num_names,
                            const char *const *names, const char *const *lowered, const char *log,
                            uk__binary **out);
void uk__binary_retain(uk__binary *b);
void uk__binary_release(uk__binary *b); /* NULL is a no-op */

/* Where the image starts within an encoding (after a fixed-size header). */
#define UK__BINARY_IMAGE_OFFSET 28u

/* Serialised form for the disk cache (format private to binary.c):
 * uk__binary_encode gives a malloc'd buffer; decode validates every length
 * and returns UK_ERR_IO for malformed input (never reads out of bounds). */
uk_status uk__binary_encode(const uk__binary *b, void **out, size_t *out_size);
uk_status uk__binary_decode(const void *data, size_t size, uk__binary **out);
/* The same for data at `offset` in a buffer of mapping_size bytes: an
 * mmap, or with heap a malloc'd one. When the image there is 16-byte
 * aligned the binary uses it in place and owns the buffer (*took = 1: the
 * caller must not release it): no copy, and no page faults on fresh memory
 * (a disk hit of a CUB cubin spent half its time on those). Otherwise it
 * copies, *took = 0. */
uk_status uk__binary_decode_mapped(void *mapping, size_t mapping_size, int heap, size_t offset, size_t size,
                                   uk__binary **out, int *took);

/* Lowered name for a name expression; NULL when absent. */
const char *uk__binary_lowered(const uk__binary *b, const char *name_expression);

#endif
