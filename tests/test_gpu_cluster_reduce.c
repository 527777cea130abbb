/* The row kernel's cluster reduction alone on a Hopper GPU
 * (templates/ukern/fusion_row_cluster.cuh: block partials pushed by
 * st.async into every block of the cluster, mbarrier waits, two slots a
 * level): cluster_reduce_kernel.h's two levels over 203 rows on 2 or 3
 * clusters (each runs 67-102 rows, so every slot's mbarrier goes through
 * both phase parities many times), clusters of 2, 4 and 8 blocks of 64
 * and 256 threads, against host arithmetic: the sum, the rank-ordered
 * fold (every block the same value) and the max; outputs poisoned first. */
#include "cluster_reduce_kernel.h"
#include "testutil.h"

enum { ROWS = 203 };

static void run(uk_function *f, uint64_t dout, int c, int block, int clusters) {
  size_t n = (size_t)ROWS * (size_t)c * 3;
  int *out = malloc(n * sizeof *out);
  for (size_t i = 0; i < n; i++) out[i] = -123456789; /* poison */
  CHECK_OK(uk_memcpy_htod(dout, out, n * sizeof *out));
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = (unsigned)(clusters * c), g.block[0] = (unsigned)block, g.cluster[0] = (unsigned)c;
  int rows = ROWS;
  void *args[] = {&rows, &dout};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(out, dout, n * sizeof *out));
  int bad = 0;
  long long b = block;
  for (int row = 0; row < ROWS; row++) {
    /* sum over ranks r and threads t of row * 7 + r * 1000 + t */
    long long a = (long long)c * b * row * 7 + b * 1000LL * c * (c - 1) / 2 + (long long)c * b * (b - 1) / 2;
    int s = 1;
    for (int r = 1; r < c; r++) s = s * 3 + r + 1;
    for (int r = 0; r < c; r++) {
      const int *o = out + 3 * ((size_t)row * (size_t)c + (size_t)r);
      if ((o[0] != (int)a || o[1] != s || o[2] != row + c - 1) && bad++ < 5)
        fprintf(stderr, "C %d, %d threads, row %d rank %d: %d %d %d, want %lld %d %d\n", c, block, row, r, o[0], o[1],
                o[2], a, s, row + c - 1);
    }
  }
  CHECK(bad == 0);
  free(out);
}

int main(void) {
  ut_require_cluster_launch("test_gpu_cluster_reduce");
  uk_context *ctx;
  uk_module *m;
  uk_function *f = ut_kernel_from_source(cluster_reduce_src, "cluster_reduce", CLUSTER_REDUCE_SIGNATURE, &ctx, &m);
  if (!f) return ut_finish("test_gpu_cluster_reduce");
  uint64_t dout = 0;
  CHECK_OK(uk_mem_alloc(0, (size_t)ROWS * 8 * 3 * sizeof(int), &dout));
  const int cs[] = {2, 4, 8}, blocks[] = {64, 256};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 2; j++) run(f, dout, cs[i], blocks[j], 2 + (i + j) % 2);
  CHECK_OK(uk_mem_free(dout));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_cluster_reduce");
}
