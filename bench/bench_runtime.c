/* Host cost per call of the runtime wrappers of issue 10 (streams, events,
 * stream-ordered copies and memsets, the non-blocking timed launch)
 * against the raw driver call they wrap, measured in the same run on the
 * same stream. Target: each within 0.3 us of the raw call. */
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"
#include "runtime/cudadrv.h"

enum { BATCH = 200, BATCHES = 40 };

static const char source[] =
    "extern \"C\" __global__ void tiny(const float* x, float* y, long long n, float a) {\n"
    "  if (n < 0) y[0] = x[0] * a;\n"
    "}\n";

static CUstream stream;
static CUevent ev, ev2;
static CUfunction raw_fn;
static uk_function *fn;
static uint64_t dbuf;
static void *pinned;
static void *args[4];
static uk_grid_launch grid;

static void fail(const char *what) {
  fprintf(stderr, "%s failed: %s\n", what, uk_last_error());
  exit(1);
}

#define RAW(expr) \
  if ((expr) != CUDA_SUCCESS) fail(#expr)
#define UK(expr) \
  if ((expr) != UK_OK) fail(#expr)

/* Each op issues one call (of its kind) per invocation. */
static void raw_record(void) { RAW(uk__cu.cuEventRecord(ev, stream)); }
static void uk_record(void) { UK(uk_event_record(ev, stream)); }
static void raw_query(void) { uk__cu.cuEventQuery(ev); }
static void uk_query(void) {
  int d;
  UK(uk_event_query(ev, &d));
}
static void raw_htod(void) { RAW(uk__cu.cuMemcpyHtoDAsync(dbuf, pinned, 8, stream)); }
static void uk_htod(void) { UK(uk_memcpy_htod_async(dbuf, pinned, 8, stream)); }
static void raw_dtod(void) { RAW(uk__cu.cuMemcpyDtoDAsync(dbuf + 64, dbuf, 8, stream)); }
static void uk_dtod(void) { UK(uk_memcpy_dtod_async(dbuf + 64, dbuf, 8, stream)); }
static void raw_memset(void) { RAW(uk__cu.cuMemsetD32Async(dbuf, 7, 2, stream)); }
static void uk_memset(void) { UK(uk_memset_d32_async(dbuf, 7, 2, stream)); }
static void raw_timed(void) {
  RAW(uk__cu.cuEventRecord(ev, stream));
  RAW(uk__cu.cuLaunchKernel(raw_fn, 1, 1, 1, 32, 1, 1, 0, stream, args, NULL));
  RAW(uk__cu.cuEventRecord(ev2, stream));
}
static void uk_timed(void) { UK(uk_function_launch_timed_async(fn, &grid, args, ev, ev2)); }
static void raw_event_pair(void) {
  CUevent e;
  RAW(uk__cu.cuEventCreate(&e, CU_EVENT_DEFAULT));
  RAW(uk__cu.cuEventDestroy(e));
}
static void uk_event_pair(void) {
  void *e;
  UK(uk_event_create(0, 0, &e));
  UK(uk_event_destroy(e));
}

/* Median host microseconds per call of `op`. */
static double time_op(void (*op)(void)) {
  double v[BATCHES];
  for (int b = -3; b < BATCHES; b++) {
    double t0 = bu_now_us();
    for (int k = 0; k < BATCH; k++) op();
    double t1 = bu_now_us();
    uk__cu.cuStreamSynchronize(stream);
    if (b >= 0) v[b] = (t1 - t0) / BATCH;
  }
  return bu_median(v, BATCHES);
}

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : NULL;
  int ndev = 0;
  if (uk_device_count(&ndev) != UK_OK) {
    printf("SKIP: %s\n", uk_last_error());
    return 77;
  }
  uk_context *ctx;
  bu_check(uk_context_create(NULL, &ctx), "context");
  bu_check(uk_device_set_current(0), "set device");
  /* The raw side calls the driver table directly: resolve the lazy entry
   * points it uses (ukern resolves them in its own first call). */
  bu_check(uk__cu_need(cuEventQuery), "cuEventQuery");
  uk_module *m;
  bu_check(uk_module_from_source(ctx, source, NULL, &m), "compile");
  bu_check(uk_module_function(m, "tiny", &fn), "function");
  const void *image;
  size_t image_bytes;
  CUmodule raw_mod;
  bu_check(uk_module_image(m, &image, &image_bytes), "image");
  RAW(uk__cu.cuModuleLoadData(&raw_mod, image));
  RAW(uk__cu.cuModuleGetFunction(&raw_fn, raw_mod, "tiny"));
  void *s;
  bu_check(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s), "stream");
  stream = (CUstream)s;
  void *e1, *e2;
  bu_check(uk_event_create(0, 0, &e1), "event");
  bu_check(uk_event_create(0, 0, &e2), "event");
  ev = (CUevent)e1, ev2 = (CUevent)e2;
  uk_array buf;
  int64_t n = 64;
  bu_check(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &buf), "alloc");
  dbuf = buf.data;
  bu_check(uk_host_alloc(64, 0, &pinned), "pinned");
  static uint64_t x, y;
  static long long nn = 1;
  static float a = 2;
  x = y = dbuf;
  args[0] = &x, args[1] = &y, args[2] = &nn, args[3] = &a;
  grid = (uk_grid_launch){{1, 1, 1}, {32, 1, 1}, 0, s, 0, {0, 0, 0}};
  bu_check(uk_device_synchronize(), "sync");

  struct {
    const char *name, *raw_name;
    void (*uk)(void), (*raw)(void);
  } rows[] = {
      {"uk_event_record (host us/call)", "cuEventRecord", uk_record, raw_record},
      {"uk_event_query", "cuEventQuery", uk_query, raw_query},
      {"uk_memcpy_htod_async, 8 B pinned", "cuMemcpyHtoDAsync", uk_htod, raw_htod},
      {"uk_memcpy_dtod_async, 8 B", "cuMemcpyDtoDAsync", uk_dtod, raw_dtod},
      {"uk_memset_d32_async, 2 values", "cuMemsetD32Async", uk_memset, raw_memset},
      {"uk_function_launch_timed_async", "2 x cuEventRecord + cuLaunchKernel", uk_timed, raw_timed},
      {"uk_event_create + uk_event_destroy", "cuEventCreate + cuEventDestroy", uk_event_pair, raw_event_pair},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    /* Interleaved, so that clock drift and other load hit both sides. */
    double raw = time_op(rows[r].raw), uk = time_op(rows[r].uk);
    double raw2 = time_op(rows[r].raw), uk2 = time_op(rows[r].uk);
    raw = raw < raw2 ? raw : raw2, uk = uk < uk2 ? uk : uk2;
    bu_row(rows[r].name, uk, raw, "us", rows[r].raw_name, "<= raw + 0.3 us", uk <= raw + 0.3);
    printf("%-40s ukern %.3f us, raw %.3f us (+%.3f)\n", rows[r].name, uk, raw, uk - raw);
  }
  bu_finish("Host cost per call of the runtime wrappers vs the raw driver (median of 40 batches of 200)", json);
  bu_check(uk_host_free(pinned), "free pinned");
  uk_array_free(ctx, &buf, NULL);
  uk_event_destroy(e1);
  uk_event_destroy(e2);
  uk_stream_destroy(s);
  uk__cu.cuModuleUnload(raw_mod);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return 0;
}
