/* A reduction program's load asks the driver nothing about occupancy
 * (issue 24: cuOccupancyMaxActiveBlocksPerMultiprocessor cost a process's
 * first reduction ~0.2 ms): against the stand-in driver (bench/tools/
 * fake_driver.c: an sm_90 device, found through LD_LIBRARY_PATH), with the
 * driver table's occupancy entry replaced by a counter, a float32 sum and
 * a struct argmax (rows and columns: three programs, NVRTC-compiled for
 * sm_90) each get the blocks per SM their cubins give (occupancy.h, the
 * stand-in's limits) and the counter stays 0. A PTX image, whose registers
 * nothing states before the driver's JIT, is the driver's to answer. */
#include "runtime/cudadrv.h"
#include "runtime/kernel_pipeline.h"
#include "runtime/occupancy.h"
#include "testutil.h"

static int asked;
static CUresult counting(int *n, CUfunction f, int block, size_t shared) {
  (void)f, (void)block, (void)shared;
  asked++;
  *n = 1;
  return CUDA_SUCCESS;
}

/* Device attributes read, by attribute (forwarded to the stand-in's). */
static CUresult (*real_attr)(int *, CUdevice_attribute, CUdevice);
static int attr_reads[256], attr_other;
/* Device 1 (not the stand-in's): an architecture the table does not
 * know, compute capability 10.0, with its own limits. */
static const int other_limits[9] = {32, 1024, 1536, 24, 65536, 65536, 102400, 49152, 1024};
static CUresult counting_attr(int *v, CUdevice_attribute a, CUdevice d) {
  if ((int)a >= 0 && (int)a < 256) attr_reads[a]++;
  else attr_other++;
  if (d != 1) return real_attr(v, a, d);
  static const CUdevice_attribute order[9] = {
      CU_DEVICE_ATTRIBUTE_WARP_SIZE,                   CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK};
  if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) return *v = 10, CUDA_SUCCESS;
  if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) return *v = 0, CUDA_SUCCESS;
  for (int j = 0; j < 9; j++)
    if (a == order[j]) return *v = other_limits[j], CUDA_SUCCESS;
  return CUDA_ERROR_INVALID_VALUE;
}

static uk_context *ctx;

/* Calls k on a (rows, cols) float32 array along `axis` (-1: all); every
 * loaded program's occupancy must be in 1..8 (256 threads a block). */
static void call(uk_reduction *k, int64_t rows, int64_t cols, int axis) {
  if (!k) return;
  int64_t shape[2] = {rows, cols};
  uk_array x, y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x));
  uk_arg in = uk_arg_array(&x);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = &axis;
  l.num_axes = axis < 0 ? 0 : 1;
  CHECK_OK(uk_reduction_call(k, &in, 1, &y, 1, &l));
  int n = 0;
  for (uk__spec *e = atomic_load(&((uk__kernel *)k)->specs); e; e = e->next, n++)
    CHECK(e->occupancy >= 1 && e->occupancy <= 8);
  CHECK(n >= 1);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &x, NULL);
}

int main(void) {
  ut_require_stand_in();
  uk__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor = counting;
  real_attr = uk__cu.cuDeviceGetAttribute;
  uk__cu.cuDeviceGetAttribute = counting_attr;
  CHECK_OK(uk_context_create(NULL, &ctx));
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = "x";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.identity = "0";
  s.name = "occ_load_sum";
  uk_reduction *sum = NULL, *arg = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &sum));
  call(sum, 1, 1000, -1);
  /* The first call's attribute reads: the capability and the SM count only. */
  int others = attr_other;
  for (int a = 0; a < 256; a++)
    if (attr_reads[a] && a != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR &&
        a != CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR && a != CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) {
      fprintf(stderr, "first call read device attribute %d (%d times)\n", a, attr_reads[a]);
      others++;
    }
  CHECK(others == 0);
  /* Once each (the compile's arch; occupancy.c reuses it), as 080bbb4 did. */
  CHECK(attr_reads[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR] == 1);
  CHECK(attr_reads[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR] == 1);
  CHECK(attr_reads[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] <= 2);
  s.out_params = "int64 y";
  s.map_expr = "mk(x, _J)";
  s.reduce_expr = "pick(a, b)";
  s.post_map_expr = "y = a.i";
  s.identity = NULL;
  s.reduce_type = "amax";
  s.preamble = "struct amax { float v; long long i; };\n"
               "__device__ amax mk(float v, long long i) { amax r; r.v = v; r.i = i; return r; }\n"
               "__device__ amax pick(const amax &a, const amax &b) {\n"
               "  return (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b;\n}\n";
  s.name = "occ_load_argmax";
  CHECK_OK(uk_reduction_create(ctx, &s, &arg));
  call(arg, 300, 1024, 1);
  call(arg, 1024, 300, 0);
  CHECK(asked == 0);

  /* No cubin to read: -1 (the caller's turn to ask), no error left. */
  static const char ptx[] = "//\n.version 8.0\n.target sm_90\n.address_size 64\n";
  CHECK(uk__occupancy_of_cubin(0, ptx, sizeof ptx, "k", 256) == -1);
  CHECK_STREQ(uk_last_error(), "");
  uk_occ_device d;
  CHECK_OK(uk__occupancy_device(0, &d));
  CHECK(d.cc_major == 9 && d.regs_per_sm == 65536 && d.reserved_smem_per_block == 1024);
  /* The table's sm_90 row is what the stand-in (an H200's attributes) reports. */
  static const CUdevice_attribute lim[] = {
      CU_DEVICE_ATTRIBUTE_WARP_SIZE,                   CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK};
  int want[9];
  for (int j = 0; j < 9; j++) CHECK(real_attr(&want[j], lim[j], 0) == CUDA_SUCCESS);
  CHECK(d.warp_size == want[0] && d.max_threads_per_block == want[1] && d.max_threads_per_sm == want[2] &&
        d.max_blocks_per_sm == want[3] && d.regs_per_sm == want[4] && d.regs_per_block == want[5] &&
        d.smem_per_sm == want[6] && d.smem_per_block == want[7] && d.reserved_smem_per_block == want[8]);
  uk_occ_device t;
  CHECK(uk__occupancy_known_limits(9, 0, &t) == 1 && memcmp(&t, &d, sizeof t) == 0);
  CHECK(uk__occupancy_known_limits(8, 6, &t) == 1 && t.max_threads_per_sm == 1536 && t.max_blocks_per_sm == 16);
  CHECK(uk__occupancy_known_limits(10, 0, &t) == 0 && uk__occupancy_known_limits(6, 1, &t) == 0);
  /* A known architecture's limits: no attribute read, however often asked. */
  memset(attr_reads, 0, sizeof attr_reads);
  for (int k = 0; k < 3; k++) CHECK_OK(uk__occupancy_device(0, &d));
  int reads = 0;
  for (int j = 0; j < 256; j++) reads += attr_reads[j];
  CHECK(reads == 0);
  CHECK(uk__occupancy_known_limits(9, 0, &t) == 1 && memcmp(&t, &d, sizeof t) == 0);
  /* Another architecture: its capability and 9 attributes on the first
   * call, nothing on the next (kept per device). */
  uk_occ_device o;
  CHECK_OK(uk__occupancy_device(1, &o));
  reads = 0;
  for (int j = 0; j < 256; j++) reads += attr_reads[j];
  CHECK(reads == 11);
  CHECK(o.cc_major == 10 && o.cc_minor == 0 && o.warp_size == 32 && o.max_threads_per_block == 1024 &&
        o.max_threads_per_sm == 1536 && o.max_blocks_per_sm == 24 && o.regs_per_sm == 65536 &&
        o.regs_per_block == 65536 && o.smem_per_sm == 102400 && o.smem_per_block == 49152 &&
        o.reserved_smem_per_block == 1024);
  uk_occ_device o2;
  CHECK_OK(uk__occupancy_device(1, &o2));
  reads = 0;
  for (int j = 0; j < 256; j++) reads += attr_reads[j];
  CHECK(reads == 11 && memcmp(&o, &o2, sizeof o) == 0);
  CHECK_STATUS(uk__occupancy_device(-1, &d), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "device -1 is out of range");

  uk_reduction_destroy(sum);
  uk_reduction_destroy(arg);
  uk_context_destroy(ctx);
  return ut_finish("test_occupancy_load");
}
