/* Argument checking of the runtime calls of issue 10 (streams, events,
 * memory, textures, raw kernels), with or without a GPU: NULL and
 * out-of-range arguments are UK_ERR_INVALID before any driver call, and
 * without a driver the device work is UK_ERR_NO_DEVICE. */
#include "runtime/cudadrv.h"
#include "testutil.h"

static int have_gpu;

/* Without a GPU the call must say so; with one it must succeed. */
#define CHECK_DEVICE(expr) CHECK_STATUS(expr, have_gpu ? UK_OK : UK_ERR_NO_DEVICE)

static void streams_and_events(void) {
  void *s = (void *)1, *e = (void *)1;
  int done = 7, c = 7, lo, hi;
  float ms;
  CHECK_STATUS(uk_stream_create(0, 0, 0, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "stream is NULL");
  CHECK_STATUS(uk_stream_create(0, 0x10, 0, &s), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown flags 0x10");
  CHECK(s == (void *)1); /* untouched on failure */
  CHECK_STATUS(uk_stream_priority_range(0, NULL, &hi), UK_ERR_INVALID);
  CHECK_STATUS(uk_stream_query(NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_stream_wait_event(NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_stream_destroy(NULL), UK_OK);
  CHECK_STATUS(uk_stream_capturing(NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_stream_capturing(NULL, &c), UK_OK);
  CHECK(c == 0);
  CHECK_STATUS(uk_event_create(0, 0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_create(0, 4, &e), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown flags 0x4");
  CHECK(e == (void *)1);
  CHECK_STATUS(uk_event_destroy(NULL), UK_OK);
  CHECK_STATUS(uk_event_record(NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_synchronize(NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_query(NULL, &done), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_query((void *)1, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_elapsed(NULL, (void *)1, &ms), UK_ERR_INVALID);
  CHECK_STATUS(uk_event_elapsed((void *)1, (void *)1, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "ms is NULL");
  CHECK_STATUS(uk_function_launch_timed_async(NULL, NULL, NULL, NULL, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "f is NULL");

  /* Device work: UK_ERR_NO_DEVICE without a driver. */
  s = NULL;
  CHECK_DEVICE(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &s));
  CHECK_DEVICE(uk_stream_priority_range(0, &lo, &hi));
  if (have_gpu) {
    CHECK(s != NULL);
    CHECK(lo >= hi);
    CHECK_OK(uk_stream_destroy(s));
    CHECK_STATUS(uk_stream_create(1 << 20, 0, 0, &s), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "does not exist");
  }
  e = NULL;
  CHECK_DEVICE(uk_event_create(0, UK_EVENT_DISABLE_TIMING, &e));
  if (have_gpu) CHECK_OK(uk_event_destroy(e));
}

static void lazy_entry_points(void) {
  /* A lazy entry point already set is used as is (tests and tools may
   * substitute one); an unknown one is an error naming it. */
  void *slot = (void *)&lazy_entry_points;
  CHECK_OK(uk__cu_resolve(&slot, "cuNoSuchEntryPoint"));
  slot = NULL;
  uk_status st = uk__cu_resolve(&slot, "cuNoSuchEntryPoint");
  CHECK(st == (have_gpu ? UK_ERR_CUDA : UK_ERR_NO_DEVICE));
  if (have_gpu) CHECK_CONTAINS(uk_last_error(), "lacks cuNoSuchEntryPoint");
  CHECK(slot == NULL);
}

int main(void) {
  int n = 0;
  have_gpu = uk_device_count(&n) == UK_OK && n > 0;
  streams_and_events();
  lazy_entry_points();
  return ut_finish("test_runtime_api");
}
