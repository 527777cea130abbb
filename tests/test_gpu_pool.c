/* The default allocator's warm-up (runtime/pool.h). The first allocations in
 * a process are bridged (cuMemAlloc) while a background thread makes the
 * driver's first, slow, stream-ordered allocation; freeing a bridged block
 * on a stream waits for the stream's work; once warm, blocks come from
 * ukern's pool. A second process (this program run with "capture") makes
 * its very first allocation inside a stream capture: that one must be a
 * graph allocation, and the capture must end cleanly. */
#include <math.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cudadrv.h"
#include "runtime/pool.h"
#include "testutil.h"

extern char **environ;

#define N 4000037 /* odd, and long enough that a kernel is still running at the free */

static uk_context *ctx;
static uk_elementwise *affine; /* y = x * 2 + 1 */

static void fill_random(float *h, int64_t n) {
  for (int64_t i = 0; i < n; i++) h[i] = (float)ut_uniform(-4, 4);
}

static int check_affine(const float *x, const float *y, int64_t n, int times) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) {
    double want = x[i];
    for (int t = 0; t < times; t++) want = want * 2 + 1;
    if (fabs(y[i] - want) > 1e-5 * (1 + fabs(want))) bad++;
  }
  return bad;
}

static int wait_warm(int device) {
  struct timespec nap = {0, 1000000};
  for (int k = 0; k < 10000 && !uk__pool_warm(device); k++) nanosleep(&nap, NULL);
  return uk__pool_warm(device);
}

static void *pool_of(uint64_t p) {
  CUmemoryPool pool = NULL;
  if (uk__cu.cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)p) != CUDA_SUCCESS)
    return NULL;
  return pool;
}

static void bridged_then_pooled(void) {
  const int64_t n = N;
  float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy);
  CHECK(hx && hy);
  if (!hx || !hy) return;
  fill_random(hx, n);
  void *s;
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s));

  /* The first allocation starts the warm-up, which takes milliseconds. */
  uk_array x, y, z, w;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x));
  CHECK(!uk__pool_warm(0));
  CHECK(uk__pool_is_bridged(x.data));
  CHECK(pool_of(x.data) == NULL);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &y));
  if (!uk__pool_warm(0)) CHECK(uk__pool_is_bridged(y.data));
  CHECK_OK(uk_memcpy_htod(x.data, hx, n * sizeof *hx));
  CHECK_OK(uk_memset_d32(y.data, 0x7fc00001u, (size_t)n)); /* poison: NaN */

  /* Free x on s right behind the kernel that reads it; a block allocated
   * and poisoned next may reuse x's memory. */
  uk_arg in = uk_arg_array(&x);
  uk_launch l = {.stream = s};
  CHECK_OK(uk_elementwise_call(affine, &in, 1, &y, 1, &l));
  uint64_t xdata = x.data;
  uk_array_free(ctx, &x, s);
  CHECK(x.data == 0 && !uk__pool_is_bridged(xdata));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, s, &z));
  CHECK_OK(uk_memset_d32(z.data, 0, (size_t)n));
  memset(hy, 0xff, n * sizeof *hy);
  CHECK_OK(uk_array_to_host(ctx, &y, hy, n * sizeof *hy, s));
  CHECK_OK(uk_stream_synchronize(s));
  CHECK(check_affine(hx, hy, n, 1) == 0);

  /* Warm: the next block is the pool's, a bridged one still frees. */
  CHECK(wait_warm(0));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, s, &w));
  CHECK(!uk__pool_is_bridged(w.data));
  CHECK(pool_of(w.data) != NULL);
  uint64_t ydata = y.data;
  uk_array_free(ctx, &y, s);
  CHECK(!uk__pool_is_bridged(ydata));

  /* The pool's block computes like any other. */
  uk_array x2;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, s, &x2));
  CHECK_OK(uk_memcpy_htod(x2.data, hx, n * sizeof *hx));
  uk_arg in2 = uk_arg_array(&x2);
  CHECK_OK(uk_memset_d32(w.data, 0x7fc00001u, (size_t)n));
  CHECK_OK(uk_elementwise_call(affine, &in2, 1, &w, 1, &l));
  memset(hy, 0xff, n * sizeof *hy);
  CHECK_OK(uk_array_to_host(ctx, &w, hy, n * sizeof *hy, s));
  CHECK_OK(uk_stream_synchronize(s));
  CHECK(check_affine(hx, hy, n, 1) == 0);
  uk_array_free(ctx, &x2, s);
  uk_array_free(ctx, &w, s);
  uk_array_free(ctx, &z, s);
  CHECK_OK(uk_stream_synchronize(s));
  CHECK_OK(uk_stream_destroy(s));
  free(hx);
  free(hy);
}

/* The process's first allocation, inside a capture in global mode. */
static void first_allocation_captured(void) {
  __typeof__(&cuStreamBeginCapture) begin = NULL;
  __typeof__(&cuStreamEndCapture) end = NULL;
  __typeof__(&cuGraphInstantiateWithFlags) inst = NULL;
  __typeof__(&cuGraphLaunch) launch = NULL;
  __typeof__(&cuGraphExecDestroy) exec_destroy = NULL;
  __typeof__(&cuGraphDestroy) graph_destroy = NULL;
  CHECK_OK(uk__cu_resolve((void **)&begin, "cuStreamBeginCapture"));
  CHECK_OK(uk__cu_resolve((void **)&end, "cuStreamEndCapture"));
  CHECK_OK(uk__cu_resolve((void **)&inst, "cuGraphInstantiateWithFlags"));
  CHECK_OK(uk__cu_resolve((void **)&launch, "cuGraphLaunch"));
  CHECK_OK(uk__cu_resolve((void **)&exec_destroy, "cuGraphExecDestroy"));
  CHECK_OK(uk__cu_resolve((void **)&graph_destroy, "cuGraphDestroy"));
  if (ut_failures) return;
  const int64_t n = 100003;
  float *hx = malloc(n * sizeof *hx), *hy = malloc(n * sizeof *hy);
  CHECK(hx && hy);
  if (!hx || !hy) return;
  fill_random(hx, n);
  uint64_t xd = 0, od = 0;
  size_t pitch = 0;
  CHECK_OK(uk_mem_alloc_pitch(0, n * sizeof(float), 1, 4, &xd, &pitch));
  CHECK_OK(uk_mem_alloc_pitch(0, n * sizeof(float), 1, 4, &od, &pitch));
  CHECK_OK(uk_memcpy_htod(xd, hx, n * sizeof *hx));
  uk_array x, out, t;
  CHECK_OK(uk_array_init(&x, xd, UK_FLOAT32, 1, &n));
  CHECK_OK(uk_array_init(&out, od, UK_FLOAT32, 1, &n));
  CHECK_OK(uk_memset_d32(od, 0x7fc00001u, (size_t)n));
  void *s;
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s));
  uk_launch l = {.stream = s};
  uk_arg in = uk_arg_array(&x);
  CHECK_OK(uk_elementwise_call(affine, &in, 1, &out, 1, &l)); /* compiled and loaded before the capture */
  CHECK_OK(uk_stream_synchronize(s));
  CHECK(!uk__pool_warm(0));

  CHECK(begin((CUstream)s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, s, &t));
  CHECK(!uk__pool_is_bridged(t.data));
  CHECK_OK(uk_elementwise_call(affine, &in, 1, &t, 1, &l));
  uk_arg tin = uk_arg_array(&t);
  CHECK_OK(uk_elementwise_call(affine, &tin, 1, &out, 1, &l));
  uk_array_free(ctx, &t, s);
  CUgraph g = NULL;
  CHECK(end((CUstream)s, &g) == CUDA_SUCCESS && g);
  CUgraphExec ge = NULL;
  if (g) CHECK(inst(&ge, g, 0) == CUDA_SUCCESS);
  if (ge) {
    CHECK_OK(uk_memset_d32(od, 0x7fc00001u, (size_t)n));
    CHECK(launch(ge, (CUstream)s) == CUDA_SUCCESS);
    CHECK_OK(uk_stream_synchronize(s));
    memset(hy, 0xff, n * sizeof *hy);
    CHECK_OK(uk_memcpy_dtoh(hy, od, n * sizeof *hy));
    CHECK(check_affine(hx, hy, n, 2) == 0);
    exec_destroy(ge);
  }
  if (g) graph_destroy(g);
  CHECK(wait_warm(0));
  CHECK_OK(uk_stream_destroy(s));
  CHECK_OK(uk_mem_free(xd));
  CHECK_OK(uk_mem_free(od));
  free(hx);
  free(hy);
}

static int run_child(const char *self) {
  char *argv[] = {(char *)self, "capture", NULL};
  pid_t pid;
  int st = 0;
  if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) return -1;
  if (waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(int argc, char **argv) {
  ut_require_gpu();
  ut_seed(1911);
  int child = argc > 1 && !strcmp(argv[1], "capture");
  CHECK_OK(uk_device_set_current(0));
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x", .out_params = "T y", .operation = "y = x * 2 + 1", .name = "pool_affine"},
      &affine));
  if (ut_failures) return ut_finish("test_gpu_pool");
  if (child) {
    first_allocation_captured();
  } else {
    bridged_then_pooled();
    CHECK(run_child(argv[0]) == 0);
  }
  uk_elementwise_destroy(affine);
  uk_context_destroy(ctx);
  return ut_finish(child ? "test_gpu_pool (capture child)" : "test_gpu_pool");
}
