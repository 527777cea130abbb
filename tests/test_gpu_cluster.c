/* Cluster launch on a Hopper GPU: uk_grid_launch.cluster runs the blocks of
 * a cluster together; the kernel reads its cluster rank and the next
 * block's shared memory (distributed shared memory). Checked against the
 * host reference of cluster_kernel.h for clusters of 2, 4 and 8 blocks and
 * without a cluster (the plain launch path: a cluster of one), on a stream
 * and under a CUDA graph capture. */
#include "cluster_kernel.h"
#include "graph_api.h"
#include "testutil.h"

enum { B = 128, GRID = 24 };

static int expected(const int *x, int b, int t, int c) {
  int rank = b % c, peer = b - rank + (rank + 1) % c;
  return 2 * x[peer * B + t] + rank;
}

/* Runs the kernel with a 1-D cluster of c blocks (0: none) and checks it. */
static void run(uk_function *f, const int *x, uint64_t dx, uint64_t dout, uint64_t dranks, unsigned c,
                void *stream) {
  int *out = malloc(GRID * B * sizeof *out);
  unsigned ranks[GRID];
  for (int i = 0; i < GRID * B; i++) out[i] = -123456; /* poison */
  memset(ranks, 0xee, sizeof ranks);
  CHECK_OK(uk_memcpy_htod(dout, out, GRID * B * sizeof *out));
  CHECK_OK(uk_memcpy_htod(dranks, ranks, sizeof ranks));
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = GRID, g.block[0] = B, g.stream = stream;
  g.cluster[0] = c;
  void *args[] = {&dx, &dout, &dranks};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK_OK(uk_memcpy_dtoh(out, dout, GRID * B * sizeof *out));
  CHECK_OK(uk_memcpy_dtoh(ranks, dranks, sizeof ranks));
  int cc = c ? (int)c : 1, bad = 0;
  for (int b = 0; b < GRID; b++) {
    bad += ranks[b] != (unsigned)(b % cc);
    for (int t = 0; t < B; t++) bad += out[b * B + t] != expected(x, b, t, cc);
  }
  if (bad) fprintf(stderr, "cluster %u: %d wrong values\n", c, bad);
  CHECK(bad == 0);
  free(out);
}

int main(void) {
  ut_require_cluster_launch("test_gpu_cluster");
  ut_seed(28);
  uk_context *ctx;
  uk_module *m;
  uk_function *f = ut_kernel_from_source(cluster_kernel_src, "cluster_ranks", CLUSTER_KERNEL_SIGNATURE, &ctx, &m);
  if (!f) return ut_finish("test_gpu_cluster");
  int *x = malloc(GRID * B * sizeof *x);
  for (int i = 0; i < GRID * B; i++) x[i] = (int)(ut_rand() % 2000001) - 1000000;
  uint64_t dx = 0, dout = 0, dranks = 0;
  CHECK_OK(uk_mem_alloc(0, GRID * B * sizeof(int), &dx));
  CHECK_OK(uk_mem_alloc(0, GRID * B * sizeof(int), &dout));
  CHECK_OK(uk_mem_alloc(0, GRID * sizeof(unsigned), &dranks));
  CHECK_OK(uk_memcpy_htod(dx, x, GRID * B * sizeof *x));
  void *s = NULL;
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s));
  run(f, x, dx, dout, dranks, 0, s); /* no cluster: the plain cuLaunchKernel path */
  run(f, x, dx, dout, dranks, 2, s);
  run(f, x, dx, dout, dranks, 4, NULL);
  run(f, x, dx, dout, dranks, 8, s);

  /* A cluster launch captured into a graph (cuLaunchKernelEx is capturable). */
  int capturing = -1;
  ut_graph_api ga;
  memset(&ga, 0, sizeof ga);
  CHECK_OK(ut_graph_api_load(&ga));
  CUgraph graph = NULL;
  CUgraphExec exec = NULL;
  int *out = malloc(GRID * B * sizeof *out);
  for (int i = 0; i < GRID * B; i++) out[i] = -1;
  CHECK_OK(uk_memcpy_htod(dout, out, GRID * B * sizeof *out));
  CHECK(ga.begin_capture((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  uk_grid_launch g;
  memset(&g, 0, sizeof g);
  g.grid[0] = GRID, g.block[0] = B, g.stream = s, g.cluster[0] = 4;
  void *args[] = {&dx, &dout, &dranks};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_stream_capturing(s, &capturing));
  CHECK(capturing == 1);
  CHECK(ga.end_capture((CUstream)s, &graph) == CUDA_SUCCESS);
  CHECK(graph && ga.instantiate(&exec, graph, 0) == CUDA_SUCCESS);
  CHECK(exec && ga.launch(exec, (CUstream)s) == CUDA_SUCCESS);
  CHECK_OK(uk_stream_synchronize(s));
  CHECK_OK(uk_memcpy_dtoh(out, dout, GRID * B * sizeof *out));
  int bad = 0;
  for (int b = 0; b < GRID; b++)
    for (int t = 0; t < B; t++) bad += out[b * B + t] != expected(x, b, t, 4);
  CHECK(bad == 0);
  if (exec) ga.exec_destroy(exec);
  if (graph) ga.destroy(graph);

  /* The driver refuses a cluster larger than the hardware allows (16 blocks
   * needs the non-portable opt-in): a CUDA error naming the cluster. */
  g.grid[0] = 32, g.cluster[0] = 32;
  uk_status st = uk_function_launch(f, &g, args);
  CHECK(st == UK_ERR_CUDA);
  CHECK_CONTAINS(uk_last_error(), "cluster 32x1x1");
  uk_stream_synchronize(s);

  free(out);
  free(x);
  CHECK_OK(uk_stream_destroy(s));
  CHECK_OK(uk_mem_free(dx));
  CHECK_OK(uk_mem_free(dout));
  CHECK_OK(uk_mem_free(dranks));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_cluster");
}
