/* The cluster kernel compiles with NVRTC for sm_90 (cooperative_groups.h
 * found through the toolkit include path ukern passes), and cluster
 * dimensions are checked before any device work: a cluster that does not
 * tile the grid is UK_ERR_INVALID naming both; without a GPU a valid
 * cluster launch is UK_ERR_NO_DEVICE. */
#include "cluster_kernel.h"
#include "testutil.h"

int main(void) {
  int n = 0;
  int have_gpu = uk_device_count(&n) == UK_OK && n > 0;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, cluster_kernel_src, NULL, &m));
  uk_function *f = NULL;
  if (m) CHECK_OK(uk_module_function(m, "cluster_ranks", &f));
  if (!f) {
    uk_module_destroy(m);
    uk_context_destroy(ctx);
    return ut_finish("test_nvrtc_cluster");
  }
  CHECK_OK(uk_function_set_signature(f, CLUSTER_KERNEL_SIGNATURE));
  uint64_t x = 0x10000, out = 0x20000, ranks = 0x30000;
  void *args[] = {&x, &out, &ranks};
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = 10, g.block[0] = 128;
  g.cluster[0] = 4;
  CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "launching 'cluster_ranks': grid 10x1x1 is not a multiple of cluster 4x1x1 (each "
                               "grid dimension must divide by the cluster's)");
  g.grid[0] = 8, g.grid[1] = 3, g.cluster[0] = 0, g.cluster[1] = 2;
  CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "grid 8x3x1 is not a multiple of cluster 1x2x1");
  float ms = 0;
  CHECK_STATUS(uk_function_launch_timed(f, &g, args, &ms), have_gpu ? UK_ERR_INVALID : UK_ERR_NO_DEVICE);
  if (!have_gpu) {
    g.grid[1] = 4;
    CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_NO_DEVICE);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_cluster");
}
