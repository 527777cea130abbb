/* Resident blocks per multiprocessor of a kernel, without asking the
 * driver: from what its cubin states (registers, static shared memory,
 * launch bounds: cubin_params.h) and the device's limits (its compute
 * capability's, from a table; once per device). A reduction's planner
 * sizes its waves with it (red_plan.h, uk_red_plan_in.per_sm); the
 * driver's own query,
 * cuOccupancyMaxActiveBlocksPerMultiprocessor, cost a process's first
 * reduction ~0.2 ms (docs/PERF.md, issue 24).
 *
 * The rules are those of CUDA's occupancy calculator (cuda_occupancy.h)
 * for compute capability 7.0 to 9.x, no dynamic shared memory, the default
 * shared-memory carveout (no cache preference) and no partitioned global
 * caching; named barriers are not counted (ukern's kernels use
 * __syncthreads only). For other architectures the answer is "unknown" and
 * the caller asks the driver. tests/test_occupancy.c holds the table,
 * tests/test_gpu_occupancy.c compares with the driver on a GPU. */
#ifndef UK_RUNTIME_OCCUPANCY_H
#define UK_RUNTIME_OCCUPANCY_H

#include <stddef.h>

#include "ukern/ukern.h"

/* A device's limits (CU_DEVICE_ATTRIBUTE_* of the same names). */
typedef struct uk_occ_device {
  int cc_major, cc_minor;
  int warp_size;
  int max_threads_per_block;
  int max_threads_per_sm, max_blocks_per_sm;
  int regs_per_sm, regs_per_block;
  int smem_per_sm, smem_per_block, reserved_smem_per_block; /* bytes */
} uk_occ_device;

/* What a kernel's cubin says. */
typedef struct uk_occ_kernel {
  int regs;         /* per thread */
  int shared_bytes; /* static shared memory per block, the system's reserve excluded */
  int max_threads;  /* per block: launch bounds, limited by the registers */
} uk_occ_kernel;

/* Blocks of `block` threads that fit one multiprocessor at once: > 0; 0
 * when one block does not fit (too many threads, registers or bytes);
 * -1 when the rules for this compute capability are not known here, or a
 * limit is missing (<= 0). Pure. */
int uk__occupancy_blocks(const uk_occ_device *d, const uk_occ_kernel *k, int block);

/* The limits of a compute capability held in occupancy.c's table (1; the
 * attributes every such device reports), else 0. Pure. */
int uk__occupancy_known_limits(int major, int minor, uk_occ_device *out);

/* The limits of `device` (an ordinal): its compute capability
 * (uk__device_cc), the rest from uk__occupancy_known_limits (no state), or
 * for another capability from the driver (9 attributes, once per process
 * and device, kept). UK_OK; UK_ERR_INVALID for an ordinal out of range, or
 * the driver's error. Thread-safe. */
uk_status uk__occupancy_device(int device, uk_occ_device *out);

/* uk__occupancy_blocks for kernel `symbol` of a cubin image on `device`:
 * -1 when it cannot say (not an ELF cubin, no such kernel, a malformed
 * image, unknown rules, the device's limits unreadable); the error state
 * is left clear. Thread-safe. */
int uk__occupancy_of_cubin(int device, const void *image, size_t bytes, const char *symbol, int block);

/* The same for a compute capability held in the table (uk__occupancy_known_limits), with no device
 * and no driver: an offline compile's (uk_options.arch). -1 when it cannot say. Pure. */
int uk__occupancy_of_cubin_cc(int cc_major, int cc_minor, const void *image, size_t bytes, const char *symbol,
                              int block);

#endif
