/* One output over a thread-block cluster (codegen/red_plan.h
 * uk__red_wide_cluster) as a call launches it, against the stand-in driver
 * (bench/tools/fake_driver.c, an sm_90 device found through
 * LD_LIBRARY_PATH) told that the device takes cluster launches, with both
 * launch entries replaced by recorders: float32 sums of 16385-131072
 * elements (and float64, float16 into float, a max without identity)
 * compile with NVRTC for sm_90 and launch once through cuLaunchKernelEx, a
 * grid of one cluster of 8 blocks of 256-1024 threads, their program
 * saying so; 16384 elements (one block), 131073 (a split) and two outputs
 * launch as before. A refused cluster launch falls back inside the call: the
 * same call launches the program without the cluster and succeeds, and
 * later calls take none (uk__cluster_failed) until the test forgets the
 * refusal (uk__cluster_force). A test's forced cluster size (uk__cluster_force)
 * leaves a reduction's cluster as planned. */
#include "runtime/cudadrv.h"
#include "runtime/cluster_launch.h"
#include "testutil.h"

static CUresult (*real_attr)(int *, CUdevice_attribute, CUdevice);
static CUresult with_clusters(int *v, CUdevice_attribute a, CUdevice d) {
  if (a == CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) return *v = 1, CUDA_SUCCESS;
  return real_attr(v, a, d);
}

static int plain, ex, refuse;
static unsigned grid_x, grid_y, block_x, cluster_x;

static CUresult record(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream s, void **params, void **extra) {
  (void)f, (void)gz, (void)by, (void)bz, (void)shared, (void)s, (void)params, (void)extra;
  plain++;
  grid_x = gx, grid_y = gy, block_x = bx, cluster_x = 0;
  return CUDA_SUCCESS;
}

static CUresult record_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  (void)f, (void)params, (void)extra;
  ex++;
  if (refuse) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  grid_x = c->gridDimX, grid_y = c->gridDimY, block_x = c->blockDimX, cluster_x = 0;
  for (unsigned j = 0; j < c->numAttrs; j++)
    if (c->attrs[j].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) cluster_x = c->attrs[j].value.clusterDim.x;
  return CUDA_SUCCESS;
}

static uk_context *ctx;

/* A whole-array reduction of n elements (rows x n / rows) of dtype d:
 * *source says whether its program runs over a cluster; the call's status. */
static uk_status call(uk_reduction *k, uk_dtype d, int64_t rows, int64_t n, int all, int *over_cluster) {
  int64_t shape[2] = {rows, n / rows};
  uk_array x, y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, d, 2, shape, 0, NULL, &x));
  uk_arg in = uk_arg_array(&x);
  int axis = 1;
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = &axis;
  l.num_axes = all ? 0 : 1;
  char *src = NULL;
  CHECK_OK(uk_reduction_source(k, &in, 1, &y, 1, &l, &src));
  *over_cluster = src && strstr(src, "over a thread-block cluster") && strstr(src, "#define _UK_RED_CLUSTER 1");
  free(src);
  uk_status st = uk_reduction_call(k, &in, 1, &y, 1, &l);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &x, NULL);
  return st;
}

int main(void) {
  ut_require_stand_in();
  real_attr = uk__cu.cuDeviceGetAttribute;
  uk__cu.cuDeviceGetAttribute = with_clusters;
  uk__cu.cuLaunchKernel = record;
  uk__cu.cuLaunchKernelEx = record_ex;
  CHECK_OK(uk_context_create(NULL, &ctx));
  uk_reduction_spec s = {.in_params = "T x", .out_params = "T y", .map_expr = "x", .reduce_expr = "a + b",
                         .post_map_expr = "y = a", .identity = "0", .name = "cl_sum"};
  uk_reduction *sum = NULL, *hsum = NULL, *mx = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &sum));
  s.reduce_type = "float", s.name = "cl_hsum";
  CHECK_OK(uk_reduction_create(ctx, &s, &hsum));
  s.reduce_type = NULL, s.reduce_expr = "max(a, b)", s.identity = NULL, s.name = "cl_max";
  CHECK_OK(uk_reduction_create(ctx, &s, &mx));
  static const struct {
    int k; /* 0 sum, 1 hsum, 2 max */
    uk_dtype d;
    int64_t rows, n;
    int all, cluster, block; /* the cluster's blocks and their threads; 0: a plain launch */
  } cases[] = {{0, UK_FLOAT32, 1, 16385, 1, 8, 256},  {0, UK_FLOAT32, 1, 65536, 1, 8, 512},
               {0, UK_FLOAT32, 256, 65536, 1, 8, 512}, {0, UK_FLOAT32, 1, 65540, 1, 8, 1024},
               {0, UK_FLOAT32, 1, 131072, 1, 8, 1024}, {2, UK_FLOAT32, 1, 100000, 1, 8, 1024},
               {0, UK_FLOAT64, 1, 20000, 1, 8, 256},   {1, UK_FLOAT16, 1, 131072, 1, 8, 1024},
               {0, UK_FLOAT32, 1, 16384, 1, 0, 0},     {0, UK_FLOAT32, 1, 131076, 1, 0, 0},
               {0, UK_FLOAT32, 2, 65536, 0, 0, 0}};
  uk_reduction *ks[3] = {sum, hsum, mx};
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int p0 = plain, e0 = ex, over = -1;
    CHECK_OK(call(ks[cases[j].k], cases[j].d, cases[j].rows, cases[j].n, cases[j].all, &over));
    int c = cases[j].cluster;
    CHECK(over == (c > 0));
    if (c) {
      CHECK(ex == e0 + 1 && plain == p0 && cluster_x == (unsigned)c && grid_x == (unsigned)c && grid_y == 1 &&
            block_x == (unsigned)cases[j].block);
    } else {
      CHECK(ex == e0 && plain == p0 + 1);
    }
    if (cluster_x != (unsigned)c)
      fprintf(stderr, "case %zu: cluster %u (grid %u x %u of %u), want %d\n", j, cluster_x, grid_x, grid_y, block_x, c);
  }
  /* refused: the call falls back to the program without the cluster, and the next ones take none */
  refuse = 1;
  int p0 = plain, e0 = ex, over = -1;
  CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
  CHECK(over == 1 && ex == e0 + 1 && plain == p0 + 1 && grid_y > 1 && block_x == 256);
  refuse = 0;
  CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
  CHECK(over == 0 && ex == e0 + 1 && plain == p0 + 2);
  uk__cluster_force(0); /* the refusal forgotten: clusters again */
  CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
  CHECK(over == 1 && ex == e0 + 2 && plain == p0 + 2 && cluster_x == 8 && block_x == 512);
  /* a test's forced size rescales the row kernel's clusters only: a reduction's one cluster has its
     pieces planned for its blocks and a slot each in rank 0 (8), so it launches as planned; a refusal
     under the force is charged at the size launched (8: portable, so no clusters after it) */
  for (int fc = 2; fc <= 16; fc *= 8) {
    uk__cluster_force(fc);
    CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
    CHECK(over == 1 && ex == e0 + 3 && plain == p0 + 2 && cluster_x == 8 && grid_x == 8 && block_x == 512);
    e0++;
  }
  refuse = 1;
  CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
  CHECK(over == 1 && ex == e0 + 3 && plain == p0 + 3);
  refuse = 0;
  CHECK_OK(call(sum, UK_FLOAT32, 1, 65536, 1, &over));
  CHECK(over == 0 && ex == e0 + 3 && plain == p0 + 4);
  uk__cluster_force(0);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(hsum);
  uk_reduction_destroy(mx);
  uk_context_destroy(ctx);
  return ut_finish("test_red_cluster");
}
