/* Two threads, one reduction, one stream (reduction.c's scratch): a split
 * call's launch is queued before another thread's growth of the stream's
 * scratch frees the buffers that call was given. Stand-in driver
 * (bench/tools/fake_driver.c), the context's allocator recording frees,
 * cuLaunchKernel replaced: thread A's split launch waits inside the driver
 * until thread B, calling a shape that needs more scratch on the same
 * stream, has freed something, or 1 s has passed. Every free of B's call
 * must come after A's launch (it did not: B freed A's partials while A's
 * launch was still to be queued, and a stream-ordered free before a launch
 * is a use after free on a GPU). */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int launch_a = -1;      /* 1 once A's split launch is queued */
static int frees_b, early_b;   /* frees from B's call; of them, before A's launch */
static atomic_int freed_by_b;  /* B has freed (A stops waiting) */
static pthread_t thread_a;
static atomic_int racing;      /* A's next split launch starts B */

static int is_a(void) { return pthread_equal(pthread_self(), thread_a); }

static int rec_alloc(void *user, size_t bytes, void *stream, uint64_t *dptr) {
  (void)user, (void)stream;
  void *m = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  *dptr = (uint64_t)(uintptr_t)m;
  return m ? 0 : 1;
}

static void rec_free(void *user, uint64_t dptr, void *stream) {
  (void)user, (void)stream;
  if (!is_a()) { /* B runs only during the race */
    pthread_mutex_lock(&log_lock);
    frees_b++;
    early_b += launch_a < 0;
    pthread_mutex_unlock(&log_lock);
    atomic_store(&freed_by_b, 1);
  }
  free((void *)(uintptr_t)dptr);
}

/* Sums over axis 0 that split (the stand-in's H200): A 2 x 32 blocks, 64 KiB of partials (the least
 * kept); B 32 x 32 blocks, 128 KiB. */
enum { A_ROWS = 4096, A_COLS = 64, B_ROWS = 16384, B_COLS = 1024 };

static uk_reduction *sum;
static uk_array xa, ya, xb, yb;
static uk_status status_b = UK_OK;

static const int axis0 = 0;
static const uk_launch over_axis0 = {.axes = &axis0, .num_axes = 1};

static uk_status call(uk_array *x, uk_array *y) {
  uk_arg in = uk_arg_array(x);
  return uk_reduction_call(sum, &in, 1, y, 1, &over_axis0);
}

static void *run_b(void *arg) {
  (void)arg;
  status_b = call(&xb, &yb);
  return NULL;
}

static pthread_t b;
static int splits_a;

static CUresult rec_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, CUstream s, void **params, void **extra) {
  (void)f, (void)gx, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)params, (void)extra;
  if (!is_a() || gy < 2 || !atomic_exchange(&racing, 0)) return CUDA_SUCCESS;
  splits_a++;
  if (pthread_create(&b, NULL, run_b, NULL) != 0) return CUDA_ERROR_UNKNOWN;
  for (int ms = 0; ms < 1000 && !atomic_load(&freed_by_b); ms++) nanosleep(&(struct timespec){0, 1000000}, NULL);
  pthread_mutex_lock(&log_lock);
  launch_a = 1;
  pthread_mutex_unlock(&log_lock);
  return CUDA_SUCCESS;
}

int main(void) {
  ut_require_stand_in();
  uk__cu.cuLaunchKernel = rec_launch;
  thread_a = pthread_self();
  uk_context *ctx;
  sum = ut_sum_with_allocator((uk_allocator){rec_alloc, rec_free, NULL}, "scratch_sum", &ctx);
  if (!sum) {
    uk_context_destroy(ctx);
    return ut_finish("test_red_scratch");
  }
  /* A: columns split into pieces (small scratch); B: more columns, more pieces (more scratch) */
  int64_t sa[2] = {A_ROWS, A_COLS}, sb[2] = {B_ROWS, B_COLS};
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, sa, 0, NULL, &xa));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, sb, 0, NULL, &xb));
  memset(&ya, 0, sizeof ya);
  memset(&yb, 0, sizeof yb);
  CHECK_OK(call(&xa, &ya)); /* the stream's scratch, sized for A; ya allocated (given from now on) */
  uk_arg in_b = uk_arg_array(&xb);
  CHECK_OK(uk_reduction_precompile(sum, &in_b, 1, &yb, 1, &over_axis0)); /* B's program: no compile in the race */
  int64_t ob[1] = {B_COLS};
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, ob, 0, NULL, &yb));
  atomic_store(&racing, 1);
  CHECK_OK(call(&xa, &ya));
  CHECK(splits_a == 1); /* A's call was a split launch: it took the stream's scratch */
  if (splits_a == 1) CHECK(pthread_join(b, NULL) == 0);
  CHECK_OK(status_b);
  CHECK(frees_b >= 1); /* B's call grew the scratch (else the race was not run: pick larger B shapes) */
  CHECK(early_b == 0); /* ... and freed nothing before A's launch */
  if (frees_b < 1 || early_b) fprintf(stderr, "frees by B: %d, before A's launch: %d\n", frees_b, early_b);
  uk_array_free(ctx, &xa, NULL);
  uk_array_free(ctx, &ya, NULL);
  uk_array_free(ctx, &xb, NULL);
  uk_array_free(ctx, &yb, NULL);
  uk_reduction_destroy(sum);
  uk_context_destroy(ctx);
  return ut_finish("test_red_scratch");
}
