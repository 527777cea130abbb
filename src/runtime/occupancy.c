/* Resident blocks per multiprocessor from the cubin and the device's
 * limits (occupancy.h).
 *
 * The facts used (CUDA's occupancy calculator, cuda_occupancy.h, for
 * compute capability 7.0-9.x; checked against the driver on a GPU by
 * tests/test_gpu_occupancy.c):
 * - a block takes ceil(threads / warp size) warps; an SM holds
 *   max_threads_per_sm / warp size warps and max_blocks_per_sm blocks;
 * - registers are given to warps 256 at a time (regs x 32 rounded up to
 *   256), from 4 sub-partitions of regs_per_sm / 4 each: an SM holds
 *   4 x floor(regs_per_sm / 4 / per-warp) warps. A block fits only if
 *   regs_per_block holds its warps' registers, its warp count rounded up
 *   to a multiple of 4 (the hardware's check), and at most 255 per thread;
 * - shared memory: the kernel's static bytes plus the driver's reserve per
 *   block (reserved_smem_per_block, 1 KiB since sm_80), rounded up to 128
 *   bytes (256 before sm_80); one block may use smem_per_block plus the
 *   reserve (sm_80+); with the default carveout an SM offers smem_per_sm. */
#include "runtime/occupancy.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>

#include "base/error.h"
#include "runtime/cubin_params.h"
#include "runtime/cudadrv.h"
#include "runtime/device.h"

static int round_up(int v, int unit) { return (v + unit - 1) / unit * unit; }
static int min2(int a, int b) { return a < b ? a : b; }

int uk__occupancy_blocks(const uk_occ_device *d, const uk_occ_kernel *k, int block) {
  if (d->cc_major < 7 || d->cc_major > 9) return -1;
  if (d->warp_size <= 0 || d->max_threads_per_block <= 0 || d->max_threads_per_sm <= 0 ||
      d->max_blocks_per_sm <= 0 || d->regs_per_sm <= 0 || d->regs_per_block <= 0 || d->smem_per_sm <= 0 ||
      d->smem_per_block <= 0 || d->reserved_smem_per_block < 0 || k->regs < 0 || k->shared_bytes < 0 ||
      k->max_threads <= 0)
    return -1;
  if (block <= 0 || block > d->max_threads_per_block || block > k->max_threads) return 0;
  const int warps = (block + d->warp_size - 1) / d->warp_size;
  int n = min2(d->max_threads_per_sm / d->warp_size / warps, d->max_blocks_per_sm);

  /* Registers. */
  if (k->regs > 255) return 0;
  const int per_warp = round_up(k->regs * d->warp_size, 256);
  if (per_warp > 0) {
    if (d->regs_per_block < per_warp * round_up(warps, 4) || d->regs_per_block < per_warp * warps) return 0;
    n = min2(n, d->regs_per_sm / 4 / per_warp * 4 / warps);
  }

  /* Shared memory. */
  const int reserve = d->reserved_smem_per_block, unit = d->cc_major >= 8 ? 128 : 256;
  if (k->shared_bytes > INT_MAX - reserve - unit) return 0;
  const int per_block = round_up(k->shared_bytes + reserve, unit);
  if (per_block > d->smem_per_block + (d->cc_major >= 8 ? reserve : 0)) return 0;
  if (per_block > 0) n = min2(n, d->smem_per_sm / per_block);
  return n;
}

static pthread_mutex_t device_lock = PTHREAD_MUTEX_INITIALIZER;
static uk_occ_device devices[UK__MAX_DEVICES];
static _Atomic int device_ready[UK__MAX_DEVICES];

/* The limits of each compute capability whose rules are held here (CUDA's
 * "technical specifications per compute capability"; the attributes of the
 * same names on every device of that capability): a device's first
 * reduction then asks the driver nothing more than the capability it knew
 * already (device.c), not 11 attributes (issue 24: a process's first
 * call). tests/test_gpu_occupancy.c compares the row with the driver's
 * attributes on a GPU. */
typedef struct cc_limits {
  int major, minor, max_threads_per_sm, max_blocks_per_sm, smem_per_sm, reserved_smem_per_block;
} cc_limits;
static const cc_limits known[] = {
    {7, 0, 2048, 32, 98304, 0},    {7, 2, 2048, 32, 98304, 0},    {7, 5, 1024, 16, 65536, 0},
    {8, 0, 2048, 32, 167936, 1024}, {8, 6, 1536, 16, 102400, 1024}, {8, 7, 1536, 16, 167936, 1024},
    {8, 9, 1536, 24, 102400, 1024}, {9, 0, 2048, 32, 233472, 1024}};

int uk__occupancy_known_limits(int major, int minor, uk_occ_device *out) {
  for (size_t j = 0; j < sizeof known / sizeof known[0]; j++)
    if (known[j].major == major && known[j].minor == minor) {
      const cc_limits *c = &known[j];
      *out = (uk_occ_device){major, minor, 32, 1024, c->max_threads_per_sm, c->max_blocks_per_sm, 65536, 65536,
                             c->smem_per_sm, 49152, c->reserved_smem_per_block};
      return 1;
    }
  return 0;
}

static uk_status read_attrs(int device, const CUdevice_attribute *attrs, int n, int *v) {
  for (int j = 0; j < n; j++) {
    uk_status st =
        uk__cu_check(uk__cu.cuDeviceGetAttribute(&v[j], attrs[j], (CUdevice)device), "cuDeviceGetAttribute");
    if (st != UK_OK) return st;
  }
  return UK_OK;
}

uk_status uk__occupancy_device(int device, uk_occ_device *out) {
  if (device < 0 || device >= UK__MAX_DEVICES)
    return uk__errorf(UK_ERR_INVALID, "device %d is out of range (0..%d)", device, UK__MAX_DEVICES - 1);
  int major, minor;
  uk_status st = uk__device_cc(device, &major, &minor);
  if (st != UK_OK) return st;
  /* A known architecture's limits come from the table alone: no driver
   * query and no state, so a process's first reduction touches no page of
   * the table below (its faults were ~13 us of that call, stand-in driver) */
  if (uk__occupancy_known_limits(major, minor, out)) return UK_OK;
  if (atomic_load_explicit(&device_ready[device], memory_order_acquire)) {
    *out = devices[device];
    return UK_OK;
  }
  static const CUdevice_attribute attrs[] = {
      CU_DEVICE_ATTRIBUTE_WARP_SIZE,                   CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK};
  enum { N = sizeof attrs / sizeof attrs[0] };
  int v[N];
  if ((st = read_attrs(device, attrs, N, v)) != UK_OK) return st;
  uk_occ_device d = {major, minor, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
  pthread_mutex_lock(&device_lock);
  if (!atomic_load_explicit(&device_ready[device], memory_order_relaxed)) {
    devices[device] = d;
    atomic_store_explicit(&device_ready[device], 1, memory_order_release);
  }
  pthread_mutex_unlock(&device_lock);
  *out = d;
  return UK_OK;
}

/* uk__occupancy_blocks of kernel `symbol` of a cubin on device d (device < 0: the limits of compute
 * capability cc_major.cc_minor from the table). */
static int of_cubin(int device, int cc_major, int cc_minor, const void *image, size_t bytes, const char *symbol,
                    int block) {
  if (!image || !uk__cubin_is_elf(image, bytes)) return -1;
  uk_occ_kernel k;
  uk_occ_device d;
  static const uk_function_attr want[] = {UK_ATTR_NUM_REGS, UK_ATTR_SHARED_SIZE_BYTES, UK_ATTR_MAX_THREADS_PER_BLOCK};
  int v[3];
  if (uk__cubin_attributes(image, bytes, symbol, want, 3, v) != UK_OK ||
      (device >= 0 ? uk__occupancy_device(device, &d) != UK_OK : !uk__occupancy_known_limits(cc_major, cc_minor, &d))) {
    uk__error_clear(); /* "cannot say" is no error: the caller asks the driver */
    return -1;
  }
  k.regs = v[0];
  k.shared_bytes = v[1];
  k.max_threads = v[2];
  return uk__occupancy_blocks(&d, &k, block);
}

int uk__occupancy_of_cubin(int device, const void *image, size_t bytes, const char *symbol, int block) {
  return device < 0 ? -1 : of_cubin(device, 0, 0, image, bytes, symbol, block);
}

int uk__occupancy_of_cubin_cc(int cc_major, int cc_minor, const void *image, size_t bytes, const char *symbol,
                              int block) {
  return of_cubin(-1, cc_major, cc_minor, image, bytes, symbol, block);
}
