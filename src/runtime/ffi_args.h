/* Kernel argument layouts from a parsed C parameter list, computed by libffi
 * (ffi_get_struct_offsets over a struct of the parameters: CUDA lays kernel
 * parameters out like the members of a C struct), packing into one buffer,
 * and the check against the kernel's real layout (cuFuncGetParamInfo). */
#ifndef UK_RUNTIME_FFI_ARGS_H
#define UK_RUNTIME_FFI_ARGS_H

#include <cuda.h>
#include <stddef.h>

#include "codegen/cparams.h"
#include "ukern/ukern.h"

typedef struct uk_arglayout {
  int count;
  size_t *offsets;   /* per parameter */
  size_t *sizes;     /* per parameter */
  size_t total;       /* struct size: end of the last parameter rounded up to the max alignment */
  size_t param_bytes; /* end of the last parameter: the kernel's parameter block size */
  char **names;      /* per parameter (copies), for messages */
  char **spellings;  /* per parameter (copies) */
} uk_arglayout;

/* Builds the layout of `params` with libffi (an empty list: count 0, total 0).
 * *out is written only on success. */
uk_status uk__arglayout_build(const uk_cparams *params, uk_arglayout *out);
void uk__arglayout_free(uk_arglayout *l); /* NULL-safe */

/* Copies *args[i] (sizes[i] bytes) to buffer + offsets[i] for every
 * parameter and zeroes the padding; buffer has `total` bytes. No allocation. */
void uk__arglayout_pack(const uk_arglayout *l, void *const *args, void *buffer);

/* A kernel's parameters as the driver reports them (cuFuncGetParamInfo,
 * asked until the index is out of range: the driver has no count). *out is
 * malloc'd (NULL when there are none); the caller frees it. The current
 * context must be the function's. Needs the driver table (uk__cu). */
uk_status uk__driver_params(CUfunction f, int *count, uk_param_info **out);

/* Compares the layout with the kernel's real parameters (from the cubin or
 * uk__driver_params): UK_ERR_INVALID on arity mismatch ("kernel 'k' takes 3
 * parameters but the signature declares 2") or on a size/offset mismatch
 * naming the parameter ("parameter 'n' (float) is 4 bytes but kernel 'k'
 * expects 8 bytes at offset 16"; same size elsewhere: "parameter 'n' (float)
 * is at offset 12 but kernel 'k' expects it at offset 16"; an unnamed one
 * reads "parameter 3 (float)"). Arity is reported before the first
 * mismatching parameter. `kernel` names the kernel in messages. */
uk_status uk__arglayout_check(const uk_arglayout *l, const uk_param_info *params, int count, const char *kernel);

#endif
