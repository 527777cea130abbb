/* Streams and events on a GPU: a stream waiting on another's event sees
 * the result of a ~50 ms kernel on the other (it would read poison
 * otherwise), query before and after completion, priorities,
 * elapsed times of a spin kernel of known length, the non-blocking timed
 * launch against the blocking one, and uk_stream_capturing around a
 * capture. */
#include <math.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

static const char *src =
    "extern \"C\" __global__ void spin(long long cycles, double *out, double v) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "  if (threadIdx.x == 0 && blockIdx.x == 0) *out = v;\n"
    "}\n"
    "extern \"C\" __global__ void copy(const double *from, double *to) { *to = *from; }\n";

static double read1(uint64_t p) {
  double v = 0;
  CHECK_OK(uk_memcpy_dtoh(&v, p, 8));
  return v;
}

static void write1(uint64_t p, double v) { CHECK_OK(uk_memcpy_htod(p, &v, 8)); }

int main(void) {
  ut_require_gpu();
  uk_context *ctx;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  uk_module *m = NULL;
  uk_function *spin = NULL, *copy = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, NULL, &m));
  if (!m) return ut_finish("test_gpu_stream");
  CHECK_OK(uk_module_function(m, "spin", &spin));
  CHECK_OK(uk_module_function(m, "copy", &copy));
  CHECK_OK(uk_function_set_signature(spin, "long long cycles, double *out, double v"));
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));

  int least = 1, greatest = 1;
  CHECK_OK(uk_stream_priority_range(0, &least, &greatest));
  CHECK(least >= greatest);
  void *a = NULL, *b = NULL, *ev = NULL, *t0 = NULL, *t1 = NULL;
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, greatest, &a));
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &b));
  CHECK_OK(uk_event_create(0, UK_EVENT_DISABLE_TIMING, &ev));
  CHECK_OK(uk_event_create(0, 0, &t0));
  CHECK_OK(uk_event_create(0, UK_EVENT_BLOCKING_SYNC, &t1));
  uk_array d;
  int64_t two = 2;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &two, 0, NULL, &d));
  CHECK_OK(uk_device_synchronize());
  write1(d.data, NAN);
  write1(d.data + 8, NAN);
  CHECK_OK(uk_device_synchronize()); /* the uploads are done before other streams read */

  /* About 50 ms of spinning at any clock rate up to 2 GHz and down to 1 GHz. */
  long long cycles = 100000000LL;
  uint64_t out0 = d.data, out1 = d.data + 8;
  double v = 3.25;
  void *sargs[] = {&cycles, &out0, &v};
  uk_grid_launch ga = {{1, 1, 1}, {32, 1, 1}, 0, a, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(spin, &ga, sargs));
  CHECK_OK(uk_event_record(ev, a));
  int done = 7;
  CHECK_OK(uk_stream_query(a, &done));
  CHECK(done == 0); /* still spinning */
  CHECK_OK(uk_event_query(ev, &done));
  CHECK(done == 0);
  /* b copies the spin's result only after the event: ordered on the device. */
  CHECK_OK(uk_stream_wait_event(b, ev));
  void *cargs[] = {&out0, &out1};
  uk_grid_launch gb = {{1, 1, 1}, {1, 1, 1}, 0, b, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(copy, &gb, cargs));
  CHECK_OK(uk_stream_synchronize(b));
  CHECK(read1(out1) == 3.25);
  CHECK_OK(uk_stream_query(a, &done));
  CHECK(done == 1);
  CHECK_OK(uk_event_query(ev, &done));
  CHECK(done == 1);
  /* Timing is off for ev. */
  float ms = -1;
  CHECK_STATUS(uk_event_elapsed(ev, ev, &ms), UK_ERR_CUDA);

  /* Non-blocking timed launch: returns before the kernel ends. */
  v = 4.5;
  CHECK_OK(uk_function_launch_timed_async(spin, &ga, sargs, t0, t1));
  CHECK_OK(uk_event_query(t1, &done));
  CHECK(done == 0);
  CHECK_STATUS(uk_event_elapsed(t0, t1, &ms), UK_ERR_CUDA);
  CHECK_CONTAINS(uk_last_error(), "NOT_READY");
  CHECK_OK(uk_event_synchronize(t1));
  CHECK_OK(uk_event_elapsed(t0, t1, &ms));
  CHECK(read1(out0) == 4.5);
  /* 1e8 cycles: between 10 ms (10 GHz) and 1 s (100 MHz). */
  CHECK(ms > 10 && ms < 1000);
  float blocking = -1;
  v = 5.5;
  CHECK_OK(uk_function_launch_timed(spin, &ga, sargs, &blocking));
  CHECK(read1(out0) == 5.5);
  CHECK(blocking > 0.5f * ms && blocking < 2.0f * ms);
  printf("spin of %lld cycles: %.3f ms async, %.3f ms blocking (%s)\n", cycles, ms, blocking, info.name);

  /* The legacy stream works too (the current context's). */
  CHECK_OK(uk_event_record(t0, NULL));
  CHECK_OK(uk_stream_synchronize(NULL));
  CHECK_OK(uk_event_query(t0, &done));
  CHECK(done == 1);

  /* uk_stream_capturing follows a capture. */
  __typeof__(&cuStreamBeginCapture) begin = NULL;
  __typeof__(&cuStreamEndCapture) end = NULL;
  __typeof__(&cuGraphDestroy) gdestroy = NULL;
  CHECK_OK(uk__cu_resolve((void **)&begin, "cuStreamBeginCapture"));
  CHECK_OK(uk__cu_resolve((void **)&end, "cuStreamEndCapture"));
  CHECK_OK(uk__cu_resolve((void **)&gdestroy, "cuGraphDestroy"));
  int cap = 7;
  CHECK_OK(uk_stream_capturing(b, &cap));
  CHECK(cap == 0);
  if (begin && end && gdestroy) {
    CHECK(begin((CUstream)b, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_SUCCESS);
    CHECK_OK(uk_stream_capturing(b, &cap));
    CHECK(cap == 1);
    CHECK_OK(uk_event_record(ev, b)); /* legal in capture */
    CHECK_OK(uk_stream_wait_event(b, ev));
    CUgraph g = NULL;
    CHECK(end((CUstream)b, &g) == CUDA_SUCCESS);
    if (g) gdestroy(g);
    CHECK_OK(uk_stream_capturing(b, &cap));
    CHECK(cap == 0);
  }

  uk_array_free(ctx, &d, NULL);
  CHECK_OK(uk_event_destroy(ev));
  CHECK_OK(uk_event_destroy(t0));
  CHECK_OK(uk_event_destroy(t1));
  CHECK_OK(uk_stream_destroy(a));
  CHECK_OK(uk_stream_destroy(b));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_stream");
}
