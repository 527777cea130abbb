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
  int ndev = 0;
  uk_device_info info;
  if (uk_device_count(&ndev) != UK_OK || ndev != 1 || uk_device_info_get(0, &info) != UK_OK ||
      !strstr(info.name, "stand-in")) {
    printf("SKIP: the stand-in driver was not loaded (%s)\n", uk_last_error());
    return 77;
  }
  uk__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor = counting;
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
  CHECK_STATUS(uk__occupancy_device(-1, &d), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "device -1 is out of range");

  uk_reduction_destroy(sum);
  uk_reduction_destroy(arg);
  uk_context_destroy(ctx);
  return ut_finish("test_occupancy_load");
}
