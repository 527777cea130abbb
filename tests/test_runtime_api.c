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
  CHECK_STATUS(uk_event_create(0, 16, &e), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown flags 0x10");
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

static void memory(void) {
  uint64_t d = 0;
  size_t pitch = 0, fr, tot;
  void *p = NULL;
  char host[64];
  CHECK_STATUS(uk_memcpy_dtod(0, 64, 8), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_memcpy_dtod: dst is NULL");
  CHECK_STATUS(uk_memcpy_dtod(0, 0, 0), UK_OK); /* nothing to copy */
  CHECK_STATUS(uk_memcpy_htod_async(64, NULL, 8, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "src is NULL");
  CHECK_STATUS(uk_memcpy_dtoh_async(NULL, 64, 8, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_memcpy_dtod_async(64, 0, 8, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_memset_d16(0x1001, 7, 4), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "not 2-byte aligned");
  CHECK_STATUS(uk_memset_d32_async(0x1002, 7, 4, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "not 4-byte aligned");
  CHECK_STATUS(uk_memset_d8(0, 7, 4), UK_ERR_INVALID);
  CHECK_STATUS(uk_memset_d16_async(0x1001, 7, 0, NULL), UK_OK); /* count 0 */
  CHECK_STATUS(uk_memcpy_2d(NULL), UK_ERR_INVALID);
  uk_copy_2d c = {64, 0, 16, 128, 0, 64, 32, 4};
  CHECK_STATUS(uk_memcpy_2d(&c), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "rows of 32 bytes do not fit a src pitch of 16 bytes");
  c.src_pitch = 32, c.src_host = 1, c.dst_host = 1;
  CHECK_STATUS(uk_memcpy_2d_async(&c, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "both sides are host memory");
  c.height = 0;
  CHECK_STATUS(uk_memcpy_2d(&c), UK_OK);
  CHECK_STATUS(uk_mem_alloc_pitch(0, 100, 10, 3, &d, &pitch), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "element_bytes is 3");
  CHECK_STATUS(uk_mem_alloc_pitch(0, 100, 10, 4, NULL, &pitch), UK_ERR_INVALID);
  CHECK_STATUS(uk_mem_alloc_pitch(0, 0, 10, 4, &d, &pitch), UK_ERR_INVALID);
  CHECK_STATUS(uk_mem_free(0), UK_OK);
  CHECK_STATUS(uk_mem_get_info(0, NULL, &tot), UK_ERR_INVALID);
  CHECK_STATUS(uk_host_alloc(64, 0x100, &p), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown flags 0x100");
  CHECK_STATUS(uk_host_alloc(0, 0, &p), UK_ERR_INVALID);
  CHECK_STATUS(uk_host_alloc(64, 0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_host_free(NULL), UK_OK);
  CHECK_STATUS(uk_host_register(NULL, 64, 0), UK_ERR_INVALID);
  CHECK_STATUS(uk_host_register(host, sizeof host, UK_HOST_WRITE_COMBINED), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "known: UK_HOST_PORTABLE, UK_HOST_MAPPED");
  CHECK_STATUS(uk_host_unregister(NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_host_device_pointer(host, NULL), UK_ERR_INVALID);

  int v = -1;
  CHECK_STATUS(uk_device_attribute(0, NULL, &v), UK_ERR_INVALID);
  CHECK_STATUS(uk_device_attribute(0, "max_threads_per_blok", &v), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "did you mean 'max_threads_per_block'");
  CHECK(v == -1);
  CHECK_DEVICE(uk_device_attribute(0, "CU_DEVICE_ATTRIBUTE_WARP_SIZE", &v));
  if (have_gpu) CHECK(v == 32);
  CHECK_DEVICE(uk_device_attribute(0, "Max_Threads_Per_Block", &v));
  CHECK_STATUS(uk_device_can_access_peer(0, 0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_device_enable_peer_access(0, 0), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "its own peer");
  int can = -1;
  CHECK_DEVICE(uk_device_can_access_peer(0, 0, &can));
  if (have_gpu) CHECK(can == 1);
  CHECK_DEVICE(uk_mem_get_info(0, &fr, &tot));
  if (have_gpu) CHECK(fr > 0 && fr <= tot);
  p = NULL;
  CHECK_DEVICE(uk_host_alloc(64, UK_HOST_PORTABLE, &p));
  if (have_gpu) CHECK_OK(uk_host_free(p));
  if (!have_gpu) CHECK_STATUS(uk_memcpy_dtod(64, 128, 8), UK_ERR_NO_DEVICE);

  /* Views: checked before any device work (the context needs no GPU). */
  uk_context *ctx = NULL;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  int64_t shape[2] = {3, 5}, other[2] = {5, 3};
  uk_array src, dst;
  CHECK_OK(uk_array_init(&src, 0x10000, UK_FLOAT32, 2, shape));
  CHECK_OK(uk_array_init(&dst, 0x20000, UK_FLOAT32, 2, other));
  CHECK_STATUS(uk_array_copy_contiguous(NULL, &src, &dst, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_array_copy_contiguous(ctx, &src, NULL, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_array_copy_contiguous(ctx, &src, &dst, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "dst must have src's dtype and shape");
  CHECK_OK(uk_array_init(&dst, 0x20000, UK_FLOAT32, 2, shape));
  dst.strides[0] = 4, dst.strides[1] = 12; /* F order */
  CHECK_STATUS(uk_array_copy_contiguous(ctx, &src, &dst, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "dst is not C-contiguous");
  src.shape[1] = -1;
  CHECK_STATUS(uk_array_copy_contiguous(ctx, &src, &dst, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "src.shape[1] is negative");
  src.shape[1] = 5;
  CHECK_STATUS(uk_array_to_host(ctx, &src, host, 32, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "the array has 60 bytes but host holds 32");
  CHECK_STATUS(uk_array_to_host(ctx, &src, NULL, sizeof host, NULL), UK_ERR_INVALID);
  src.shape[0] = 0; /* nothing to copy: no device needed */
  CHECK_STATUS(uk_array_to_host(ctx, &src, host, 0, NULL), UK_OK);
  uk_context_destroy(ctx);
}

static void textures(void) {
  size_t ext[3] = {8, 4, 2};
  uk_cuda_array *a = (uk_cuda_array *)1;
  uint64_t t = 7;
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT64, 1, 2, ext, 0, &a), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "not float64");
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 3, 2, ext, 0, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "channels is 3");
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 1, 4, ext, 0, &a), UK_ERR_INVALID);
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, ext, 8, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "known: UK_CUDA_ARRAY_SURFACE");
  size_t zero[2] = {8, 0};
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, zero, 0, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "extent[1] is 0");
  CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, NULL, 0, &a), UK_ERR_INVALID);
  CHECK(a == (uk_cuda_array *)1);
  uk_cuda_array_destroy(NULL);
  CHECK_STATUS(uk_cuda_array_from_host(NULL, ext), UK_ERR_INVALID);
  CHECK_STATUS(uk_cuda_array_to_device(NULL, 64), UK_ERR_INVALID);
  CHECK_STATUS(uk_texture_from_linear(0, UK_FLOAT32, 1, 16, NULL, &t), UK_ERR_INVALID);
  CHECK_STATUS(uk_texture_from_linear(256, UK_COMPLEX64, 1, 16, NULL, &t), UK_ERR_TYPE);
  CHECK_STATUS(uk_texture_from_linear(256, UK_FLOAT32, 1, 0, NULL, &t), UK_ERR_INVALID);
  uk_texture_desc d;
  memset(&d, 0, sizeof d);
  d.filter = UK_FILTER_LINEAR;
  CHECK_STATUS(uk_texture_from_linear(256, UK_INT16, 1, 16, &d, &t), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "needs UK_READ_NORMALIZED_FLOAT");
  d.address[2] = (uk_address_mode)9;
  CHECK_STATUS(uk_texture_from_linear(256, UK_FLOAT32, 1, 16, &d, &t), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "address[2] is 9");
  CHECK_STATUS(uk_texture_from_pitch2d(256, UK_FLOAT32, 1, 16, 4, 32, NULL, &t), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "pitch of 32 bytes is less than a row (64 bytes)");
  CHECK_STATUS(uk_texture_from_array(NULL, NULL, &t), UK_ERR_INVALID);
  CHECK_STATUS(uk_texture_destroy(0), UK_OK);
  CHECK_STATUS(uk_surface_from_array(NULL, &t), UK_ERR_INVALID);
  CHECK_STATUS(uk_surface_destroy(0), UK_OK);
  CHECK(t == 7);
  if (!have_gpu) CHECK_STATUS(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, ext, 0, &a), UK_ERR_NO_DEVICE);
}

static void kernels(void) {
  uk_kernel *f = (uk_kernel *)1;
  CHECK_STATUS(uk_kernel_from_source(NULL, "x", "k", NULL, &f), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "ctx is NULL");
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_STATUS(uk_kernel_from_source(ctx, NULL, "k", NULL, &f), UK_ERR_INVALID);
  CHECK_STATUS(uk_kernel_from_source(ctx, "x", NULL, NULL, &f), UK_ERR_INVALID);
  CHECK_STATUS(uk_kernel_from_source(ctx, "x", "k", NULL, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "out is NULL");
  CHECK(f == (uk_kernel *)1);
  CHECK(uk_function_name(NULL) == NULL);
  CHECK(uk_function_module(NULL) == NULL);
  CHECK(uk_kernel_function(NULL) == NULL);
  uk_kernel_destroy(NULL);
  uk_context_destroy(ctx);
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
  memory();
  textures();
  kernels();
  lazy_entry_points();
  return ut_finish("test_runtime_api");
}
