/* What a cubin says about its kernels, read without a GPU: whether a
 * symbol is a kernel, and each kernel's parameter layout from its
 * .nv.info.<kernel> section.
 *
 * The image is untrusted (a user's file or bytes): every offset, size and
 * string is bounds-checked, and a malformed image is UK_ERR_INVALID, never
 * an out-of-bounds read. The image need not be aligned. 64-bit
 * little-endian ELF only (every cubin since CUDA 9). */
#ifndef UK_RUNTIME_CUBIN_PARAMS_H
#define UK_RUNTIME_CUBIN_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "ukern/ukern.h"

/* 1 if the bytes start like an ELF image (a cubin), else 0. */
int uk__cubin_is_elf(const void *image, size_t bytes);

/* UK_OK if `symbol` is a kernel (a defined function marked as an entry
 * point) of the cubin; UK_ERR_NOT_FOUND (no message: the caller says
 * what it looked for) if not; UK_ERR_INVALID for a malformed image. */
uk_status uk__cubin_find_kernel(const void *image, size_t bytes, const char *symbol);

/* The bytes of __device__ variable `symbol` (a defined object symbol's
 * size) into *size: UK_OK; UK_ERR_NOT_FOUND (no message) if the cubin
 * defines no such object; UK_ERR_INVALID for a malformed image. */
uk_status uk__cubin_object_size(const void *image, size_t bytes, const char *symbol, uint64_t *size);

/* Appends the cubin's kernel names to sb, ", "-separated ("none" when it
 * has none or is malformed), for messages. */
struct uk_strbuf;
void uk__cubin_list_kernels(const void *image, size_t bytes, struct uk_strbuf *sb);

/* The parameters of kernel `symbol` in ordinal order: *count of them in
 * *params (malloc'd, the caller frees; NULL when there are none). From the
 * EIATTR_KPARAM_INFO (and _V2) records of .nv.info.<symbol>: each gives a
 * parameter's ordinal, offset and size; the ordinals must be exactly
 * 0..count-1 and no parameter may end past the parameter size the section
 * declares (EIATTR_CBANK_PARAM_SIZE / EIATTR_PARAM_CBANK) when it declares
 * one. UK_ERR_NOT_FOUND: no such section; UK_ERR_INVALID: malformed. */
uk_status uk__cubin_params(const void *image, size_t bytes, const char *symbol, int *count,
                           uk_param_info **params);

/* An attribute of kernel `symbol` as the cubin states it (no device):
 * UK_ATTR_NUM_REGS (EIATTR_REGCOUNT of .nv.info, or bits 24..31 of the
 * kernel's .text section's sh_info), UK_ATTR_LOCAL_SIZE_BYTES
 * (EIATTR_FRAME_SIZE), UK_ATTR_SHARED_SIZE_BYTES (the size of
 * .nv.shared.<kernel>), UK_ATTR_CONST_SIZE_BYTES (the size of the user
 * constant bank, .nv.constant3), UK_ATTR_BINARY_VERSION (the ELF header's
 * sm arch, e_flags bits 8..15) and UK_ATTR_MAX_THREADS_PER_BLOCK
 * (EIATTR_MAX_THREADS from __launch_bounds__, else 1024, limited by the
 * registers: 64K per block, allocated 256 per warp). UK_ERR_NOT_FOUND (no
 * message) for the others; UK_ERR_INVALID for a malformed image. */
uk_status uk__cubin_attribute(const void *image, size_t bytes, const char *symbol, uk_function_attr a, int *value);

/* uk__cubin_attribute for n attributes a[0..n-1] into values[0..n-1], the
 * image parsed and the kernel found once; the first error stops it. */
uk_status uk__cubin_attributes(const void *image, size_t bytes, const char *symbol, const uk_function_attr *a, int n,
                               int *values);

#endif
