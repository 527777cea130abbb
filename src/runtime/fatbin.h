/* Fat binaries: several images of one program (cubins for sm_80, sm_90,
 * sm_90a, PTX for compute_90) in one container that the driver loads,
 * picking the image for the GPU it runs on (cuModuleLoadData). Written
 * here (no nvFatbin in the toolkit we target); the layout is the one nvcc's
 * fatbinary tool writes: a 16-byte header, then per image a 64-byte (PTX:
 * 80-byte) entry header and the image padded to 8 bytes. */
#ifndef UK_RUNTIME_FATBIN_H
#define UK_RUNTIME_FATBIN_H

#include <stddef.h>

#include "runtime/arch.h"

typedef struct uk__fatbin_image {
  uk__arch arch;     /* sm_XY[a] for a cubin, compute_XY for PTX */
  const void *data;  /* cubin (ELF) or PTX text */
  size_t size;       /* PTX: text length, no NUL needed */
} uk__fatbin_image;

/* *out: malloc'd fatbin holding the images in order. UK_ERR_INVALID for an
 * image that is not ELF (cubin) or for a family ('f') variant. */
uk_status uk__fatbin_build(const uk__fatbin_image *images, int n, void **out, size_t *size);

/* Lists a fatbin's images (arch and kind; data points into `fatbin`).
 * Returns the count (at most max), or -1 when it is not a well-formed fatbin. */
int uk__fatbin_list(const void *fatbin, size_t size, uk__fatbin_image *images, int max);

#endif
