/* What other runtime files need of a CUDA array (texture.c owns it). */
#ifndef UK_RUNTIME_TEXTURE_H
#define UK_RUNTIME_TEXTURE_H

#include "runtime/cudadrv.h"

/* The driver's handle of `a` and the device it lives on. */
void uk__cuda_array_handle(const uk_cuda_array *a, CUarray *array, int *device);

#endif
