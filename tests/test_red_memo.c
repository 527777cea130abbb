/* A reduction call's plan from the per-thread memo (reduction.c's choose)
 * is the plan a fresh choice makes: against the stand-in driver
 * (bench/tools/fake_driver.c, found through LD_LIBRARY_PATH), with
 * cuLaunchKernel replaced by a recorder, each of 9 float32 sums (1-D sizes
 * split and not, rows, short rows, columns: more shapes than the memo
 * keeps) is launched once from a new thread (its memo empty: the cost model
 * chooses), then 120 times from one thread in a mixed order with repeats
 * (hits on the entry last used, on the others, and evictions). Every launch
 * must match its shape's fresh one: grid, block and argument buffer byte
 * for byte (the buffer holds nout, nred, the split and the scratch). */
#include <pthread.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

typedef struct launch_rec {
  unsigned gx, gy, bx;
  size_t bytes;
  unsigned char buf[1024];
} launch_rec;

static launch_rec last;
static int launches;

static CUresult record(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, CUstream s, void **params, void **extra) {
  (void)f, (void)gz, (void)by, (void)bz, (void)shared, (void)s, (void)params;
  memset(&last, 0, sizeof last);
  last.gx = gx;
  last.gy = gy;
  last.bx = bx;
  const void *buf = NULL;
  for (int j = 0; extra && extra[j] != CU_LAUNCH_PARAM_END; j += 2) {
    if (extra[j] == CU_LAUNCH_PARAM_BUFFER_POINTER) buf = extra[j + 1];
    if (extra[j] == CU_LAUNCH_PARAM_BUFFER_SIZE) last.bytes = *(const size_t *)extra[j + 1];
  }
  if (!buf || last.bytes > sizeof last.buf) return CUDA_ERROR_INVALID_VALUE;
  memcpy(last.buf, buf, last.bytes);
  launches++;
  return CUDA_SUCCESS;
}

enum { NSHAPES = 9 };
static const struct {
  int64_t rows, cols;
  int axis; /* -1: all */
} shapes[NSHAPES] = {{1, 5000, -1},  {1, 20011, -1}, {1, 65536, -1}, {1, 1 << 18, -1}, {1, 3 << 20, -1},
                     {3001, 40, 1},  {64, 5003, 1},  {1001, 3000, 0}, {1, 1000, -1}};

static uk_reduction *sum;
static uk_array x[NSHAPES], y[NSHAPES];

static uk_status call(int i) {
  uk_arg in = uk_arg_array(&x[i]);
  uk_launch l;
  memset(&l, 0, sizeof l);
  int axis = shapes[i].axis;
  l.axes = &axis;
  l.num_axes = axis < 0 ? 0 : 1;
  return uk_reduction_call(sum, &in, 1, &y[i], 1, &l);
}

/* A thread of its own: its memo is empty, so the call's plan is the model's. */
static int fresh_shape;
static uk_status fresh_status;
static void *fresh(void *arg) {
  (void)arg;
  fresh_status = call(fresh_shape);
  return NULL;
}

int main(void) {
  ut_require_stand_in();
  uk__cu.cuLaunchKernel = record;
  uk_context *ctx;
  CHECK_OK(uk_context_create(NULL, &ctx));
  const uk_reduction_spec s = {.in_params = "T x", .out_params = "T y", .map_expr = "x", .reduce_expr = "a + b",
                               .post_map_expr = "y = a", .identity = "0", .name = "memo_sum"};
  CHECK_OK(uk_reduction_create(ctx, &s, &sum));
  for (int i = 0; i < NSHAPES; i++) {
    int64_t shape[2] = {shapes[i].rows, shapes[i].cols};
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x[i]));
    memset(&y[i], 0, sizeof y[i]);
    CHECK_OK(call(i)); /* allocates y[i] (given from now on) and grows the stream's split scratch */
  }
  /* Every shape's plan as a fresh choice makes it. */
  launch_rec want[NSHAPES];
  int splits = 0;
  for (int i = 0; i < NSHAPES; i++) {
    pthread_t t;
    fresh_shape = i;
    int before = launches;
    CHECK(pthread_create(&t, NULL, fresh, NULL) == 0 && pthread_join(t, NULL) == 0);
    CHECK_OK(fresh_status);
    CHECK(launches == before + 1);
    want[i] = last;
    splits += last.gy > 1;
  }
  CHECK(splits >= 2); /* the scratch pointers are in the buffers compared */
  /* Two shapes' plans differ (the comparison below can tell them apart). */
  CHECK(want[2].bytes != want[5].bytes || memcmp(want[2].buf, want[5].buf, want[2].bytes) != 0);
  /* One thread, mixed order: hits, misses, evictions (the memo keeps fewer than NSHAPES). */
  uint32_t r = 12345;
  int prev = 0, mismatches = 0;
  for (int k = 0; k < 120; k++) {
    r = r * 1103515245u + 12345u;
    int i = (r >> 16) % 3 == 0 ? prev : (int)((r >> 8) % NSHAPES); /* a third repeat the last shape */
    prev = i;
    int before = launches;
    CHECK_OK(call(i));
    CHECK(launches == before + 1);
    if (last.gx != want[i].gx || last.gy != want[i].gy || last.bx != want[i].bx || last.bytes != want[i].bytes ||
        memcmp(last.buf, want[i].buf, last.bytes) != 0) {
      if (mismatches++ < 5) fprintf(stderr, "call %d (shape %d): not the fresh plan\n", k, i);
    }
  }
  CHECK(mismatches == 0);
  for (int i = 0; i < NSHAPES; i++) {
    uk_array_free(ctx, &x[i], NULL);
    uk_array_free(ctx, &y[i], NULL);
  }
  uk_reduction_destroy(sum);
  uk_context_destroy(ctx);
  return ut_finish("test_red_memo");
}
