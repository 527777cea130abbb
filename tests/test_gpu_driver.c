/* The driver layer of issue 28 on a GPU, each call checked by its effect:
 * context limits (a device malloc that fits only the raised heap), cache
 * configuration, the profiler, managed memory (host writes, a kernel on a
 * DLPack-imported managed tensor, attach, prefetch, advice), pointer
 * attributes of every kind of memory, 2-D memsets with untouched
 * neighbours, 3-D copies host -> device -> CUDA array -> host with offsets,
 * PCI bus ids both ways and peer copies on one device. */
#include <dlpack/dlpack.h>

#include "testutil.h"
#include "ukern/dlpack.h"

static uk_context *ctx;
static void *stream;

static const char malloc_src[] =
    "extern \"C\" __global__ void big_malloc(unsigned long long n, int* ok) {\n"
    "  char* p = (char*)malloc(n);\n"
    "  *ok = p != 0;\n"
    "  if (p) { p[0] = 1; p[n - 1] = 2; *ok = p[0] + p[n - 1]; free(p); }\n"
    "}\n";

static void limits(void) {
  size_t heap = 0, stack = 0, fifo = 0, v = 0;
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_MALLOC_HEAP_SIZE, &heap));
  CHECK(heap > 0 && heap < (40u << 20)); /* the default (8 MiB) cannot hold 40 MiB */
  CHECK_OK(uk_device_set_limit(0, UK_LIMIT_MALLOC_HEAP_SIZE, 96u << 20));
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_MALLOC_HEAP_SIZE, &v));
  CHECK(v >= (96u << 20));
  uk_kernel *kern = NULL;
  CHECK_OK(uk_kernel_from_source(ctx, malloc_src, "big_malloc", NULL, &kern));
  uk_function *f = uk_kernel_function(kern);
  if (f) {
    CHECK_OK(uk_function_set_signature(f, "unsigned long long n, int* ok"));
    uint64_t dok = 0;
    CHECK_OK(uk_mem_alloc(0, sizeof(int), &dok));
    CHECK_OK(uk_memset_d32(dok, 77, 1));
    unsigned long long n = 40ull << 20;
    void *args[] = {&n, &dok};
    uk_grid_launch g;
    memset(&g, 0, sizeof g);
    CHECK_OK(uk_function_launch(f, &g, args));
    int ok = 0;
    CHECK_OK(uk_device_synchronize());
    CHECK_OK(uk_memcpy_dtoh(&ok, dok, sizeof ok));
    CHECK(ok == 3); /* allocated, written at both ends */
    uk_mem_free(dok);
    uk_kernel_destroy(kern);
  }
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_STACK_SIZE, &stack));
  CHECK_OK(uk_device_set_limit(0, UK_LIMIT_STACK_SIZE, stack + 4096));
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_STACK_SIZE, &v));
  CHECK(v >= stack + 4096);
  CHECK_OK(uk_device_set_limit(0, UK_LIMIT_STACK_SIZE, stack));
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_PRINTF_FIFO_SIZE, &fifo));
  CHECK_OK(uk_device_set_limit(0, UK_LIMIT_PRINTF_FIFO_SIZE, 3u << 20));
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_PRINTF_FIFO_SIZE, &v));
  CHECK(v >= (3u << 20));
  CHECK_OK(uk_device_get_limit(0, UK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT, &v));
  CHECK(v > 0);
  /* Device-side synchronisation is gone from the CUDA 12+ device runtime:
   * the driver may refuse this limit, and must say which. */
  uk_status st = uk_device_get_limit(0, UK_LIMIT_DEV_RUNTIME_SYNC_DEPTH, &v);
  CHECK(st == UK_OK || st == UK_ERR_CUDA);
  if (st != UK_OK) CHECK_CONTAINS(uk_last_error(), "UK_LIMIT_DEV_RUNTIME_SYNC_DEPTH");
  printf("limits: heap %zu, stack %zu, printf fifo %zu; dev runtime sync depth: %s\n", heap, stack, fifo,
         st == UK_OK ? "readable" : uk_last_error());
}

static void cache_and_profiler(void) {
  uk_cache_config c = (uk_cache_config)9, was;
  CHECK_OK(uk_device_get_cache_config(0, &was));
  CHECK_OK(uk_device_set_cache_config(0, UK_CACHE_PREFER_SHARED));
  CHECK_OK(uk_device_get_cache_config(0, &c));
  CHECK(c == UK_CACHE_PREFER_SHARED);
  CHECK_OK(uk_device_set_cache_config(0, UK_CACHE_PREFER_L1));
  CHECK_OK(uk_device_get_cache_config(0, &c));
  CHECK(c == UK_CACHE_PREFER_L1);
  CHECK_OK(uk_device_set_cache_config(0, was));
  uk_kernel *kern = NULL;
  CHECK_OK(
      uk_kernel_from_source(ctx, "extern \"C\" __global__ void nop(int* p) { if (p) *p = 5; }", "nop", NULL, &kern));
  uk_function *f = uk_kernel_function(kern);
  if (f) {
    CHECK_OK(uk_function_set_cache_config(f, UK_CACHE_PREFER_EQUAL));
    uint64_t d = 0;
    CHECK_OK(uk_mem_alloc(0, 4, &d));
    void *args[] = {&d};
    uk_grid_launch g;
    memset(&g, 0, sizeof g);
    CHECK_OK(uk_function_launch(f, &g, args));
    int v = 0;
    CHECK_OK(uk_device_synchronize());
    CHECK_OK(uk_memcpy_dtoh(&v, d, 4));
    CHECK(v == 5);
    uk_mem_free(d);
    uk_kernel_destroy(kern);
  }
  CHECK_OK(uk_profiler_start());
  CHECK_OK(uk_profiler_stop());
}

/* z = 2 * x + 1 through an elementwise kernel on an imported tensor. */
static void affine_on(uk_elementwise *k, void *data, int64_t n, int device_type, void *s) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = (DLDeviceType)device_type;
  t.device.device_id = 0;
  t.ndim = 1;
  t.dtype.code = kDLFloat, t.dtype.bits = 32, t.dtype.lanes = 1;
  t.shape = &n;
  uk_array a;
  CHECK_OK(uk_array_from_dlpack(&t, &a));
  uk_arg in = uk_arg_array(&a);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = s;
  CHECK_OK(uk_elementwise_call(k, &in, 1, &a, 1, &l)); /* in place */
}

static void managed(void) {
  enum { N = 100003 };
  int cma = 0;
  CHECK_OK(uk_device_attribute(0, "concurrent_managed_access", &cma));
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "float32 x",
                                                        .out_params = "float32 z",
                                                        .operation = "z = x * 2.0f + 1.0f",
                                                        .name = "affine_managed"},
                                 &k));
  uint64_t m = 0;
  CHECK_OK(uk_managed_alloc(0, N * sizeof(float), UK_MANAGED_GLOBAL, &m));
  float *h = (float *)(uintptr_t)m, *ref = malloc(N * sizeof *ref);
  if (!m || !k) return;
  for (int i = 0; i < N; i++) h[i] = ref[i] = (float)ut_uniform(-50, 50); /* the host writes it directly */
  if (cma) {
    CHECK_OK(uk_managed_advise(m, N * sizeof(float), UK_ADVISE_SET_PREFERRED_LOCATION, 0));
    CHECK_OK(uk_managed_advise(m, N * sizeof(float), UK_ADVISE_SET_ACCESSED_BY, UK_DEVICE_CPU));
    CHECK_OK(uk_managed_prefetch_async(m, N * sizeof(float), 0, stream));
  }
  affine_on(k, h, N, kDLCUDAManaged, stream);
  if (cma) CHECK_OK(uk_managed_prefetch_async(m, N * sizeof(float), UK_DEVICE_CPU, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += h[i] != ref[i] * 2.0f + 1.0f;
  CHECK(bad == 0);
  uk_pointer_info pi;
  CHECK_OK(uk_pointer_info_get(m + 40, &pi));
  CHECK(pi.type == UK_MEMORY_MANAGED && pi.device == 0 && pi.range_start == m && pi.range_bytes >= N * sizeof(float));
  CHECK_OK(uk_managed_advise(m, N * sizeof(float), UK_ADVISE_SET_READ_MOSTLY, 0));
  CHECK_OK(uk_managed_advise(m, N * sizeof(float), UK_ADVISE_UNSET_READ_MOSTLY, 0));
  CHECK_OK(uk_mem_free(m));

  /* Host-attached memory, then attached to one stream for the kernel. */
  uint64_t hm = 0;
  CHECK_OK(uk_managed_alloc(0, N * sizeof(float), UK_MANAGED_HOST, &hm));
  if (!hm) return;
  h = (float *)(uintptr_t)hm;
  for (int i = 0; i < N; i++) h[i] = ref[i] = (float)ut_uniform(-9, 9);
  CHECK_OK(uk_stream_attach_memory(stream, hm, 0, UK_MANAGED_SINGLE));
  CHECK_OK(uk_stream_synchronize(stream));
  affine_on(k, h, N, kDLCUDAManaged, stream);
  CHECK_OK(uk_stream_synchronize(stream));
  bad = 0;
  for (int i = 0; i < N; i++) bad += h[i] != ref[i] * 2.0f + 1.0f;
  CHECK(bad == 0);
  CHECK_OK(uk_stream_attach_memory(stream, hm, 0, UK_MANAGED_GLOBAL));
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK_OK(uk_mem_free(hm));
  free(ref);
  uk_elementwise_destroy(k);
}

static void pointers(void) {
  uk_pointer_info pi;
  uint64_t d = 0;
  CHECK_OK(uk_mem_alloc(0, 4096, &d));
  CHECK_OK(uk_pointer_info_get(d + 100, &pi));
  CHECK(pi.type == UK_MEMORY_DEVICE && pi.device == 0 && pi.context != NULL);
  CHECK(pi.range_start == d && pi.range_bytes >= 4096 && pi.device_pointer == d + 100);
  CHECK_OK(uk_mem_free(d));
  uk_array a;
  int64_t n = 1000;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, stream, &a)); /* ukern's pool */
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK_OK(uk_pointer_info_get(a.data, &pi));
  CHECK(pi.type == UK_MEMORY_DEVICE && pi.device == 0);
  uk_array_free(ctx, &a, stream);
  void *pin = NULL;
  CHECK_OK(uk_host_alloc(256, UK_HOST_MAPPED, &pin));
  CHECK_OK(uk_pointer_info_get((uint64_t)(uintptr_t)pin, &pi));
  CHECK(pi.type == UK_MEMORY_HOST && pi.device_pointer != 0);
  uint64_t dp = 0;
  CHECK_OK(uk_host_device_pointer(pin, &dp));
  CHECK(pi.device_pointer == dp);
  CHECK_OK(uk_host_free(pin));
  double local[4];
  memset(&pi, 0x11, sizeof pi);
  CHECK_OK(uk_pointer_info_get((uint64_t)(uintptr_t)local, &pi));
  CHECK(pi.type == UK_MEMORY_UNREGISTERED && pi.device == -1 && pi.context == NULL && pi.range_bytes == 0);
}

/* Each width, sync and async: the rectangle gets the value, the rest of
 * the pitched allocation keeps its poison. */
static void memsets_2d(void) {
  enum { W = 37, H = 6, ROWS = 9 };
  for (int w = 1; w <= 4; w *= 2)
    for (int async = 0; async < 2; async++) {
      uint64_t base = 0;
      size_t pitch = 0;
      CHECK_OK(uk_mem_alloc_pitch(0, 64 * 4, ROWS, 4, &base, &pitch));
      if (!base) return;
      CHECK_OK(uk_memset_d8(base, 0xAB, pitch * ROWS));
      uint64_t dst = base + pitch * 2 + 8; /* row 2, byte 8 */
      uint32_t value = w == 1 ? 0x5Cu : w == 2 ? 0xBEEFu : 0xC0FFEE11u;
      uk_status st;
      if (w == 1)
        st = async ? uk_memset_2d_d8_async(dst, pitch, (uint8_t)value, W, H, stream)
                   : uk_memset_2d_d8(dst, pitch, (uint8_t)value, W, H);
      else if (w == 2)
        st = async ? uk_memset_2d_d16_async(dst, pitch, (uint16_t)value, W, H, stream)
                   : uk_memset_2d_d16(dst, pitch, (uint16_t)value, W, H);
      else
        st = async ? uk_memset_2d_d32_async(dst, pitch, value, W, H, stream) : uk_memset_2d_d32(dst, pitch, value, W, H);
      CHECK_OK(st);
      CHECK_OK(uk_stream_synchronize(stream));
      unsigned char *back = malloc(pitch * ROWS);
      CHECK_OK(uk_memcpy_dtoh(back, base, pitch * ROWS));
      int bad = 0;
      for (size_t r = 0; r < ROWS; r++)
        for (size_t b = 0; b < pitch; b++) {
          int inside = r >= 2 && r < 2 + H && b >= 8 && b < 8 + (size_t)W * (size_t)w;
          unsigned char want = inside ? (unsigned char)(value >> (8 * ((b - 8) % (size_t)w))) : 0xAB;
          bad += back[r * pitch + b] != want;
        }
      if (bad) fprintf(stderr, "memset 2-D of %d-byte values (%s): %d wrong bytes\n", w, async ? "async" : "sync", bad);
      CHECK(bad == 0);
      free(back);
      CHECK_OK(uk_mem_free(base));
    }
}

/* Host box -> pitched device memory (at an offset) -> a 3-D CUDA array ->
 * host; then a sub-box of the device copy back to host, asynchronously. */
static void copies_3d(void) {
  enum { W = 19, H = 7, D = 5 };
  int *src = malloc(W * H * D * sizeof *src), *back = malloc(W * H * D * sizeof *back);
  for (int i = 0; i < W * H * D; i++) src[i] = (int)(ut_rand() % 1000000) + 1;
  size_t dpitch = 256, dheight = H + 3;
  uint64_t dev = 0;
  CHECK_OK(uk_mem_alloc(0, dpitch * dheight * (D + 1), &dev));
  CHECK_OK(uk_memset_d8(dev, 0, dpitch * dheight * (D + 1)));
  uk_copy_3d c;
  memset(&c, 0, sizeof c);
  c.width_bytes = W * 4, c.height = H, c.depth = D;
  c.src.kind = UK_COPY_HOST, c.src.ptr = (uint64_t)(uintptr_t)src, c.src.pitch = W * 4, c.src.height = H;
  c.dst.kind = UK_COPY_DEVICE, c.dst.ptr = dev, c.dst.pitch = dpitch, c.dst.height = dheight;
  c.dst.x = 32, c.dst.y = 2, c.dst.z = 1;
  CHECK_OK(uk_memcpy_3d(&c));
  size_t ext[3] = {W, H, D};
  uk_cuda_array *arr = NULL;
  CHECK_OK(uk_cuda_array_create(0, UK_INT32, 1, 3, ext, 0, &arr));
  if (!arr) return;
  uk_copy_3d d2a;
  memset(&d2a, 0, sizeof d2a);
  d2a.width_bytes = W * 4, d2a.height = H, d2a.depth = D;
  d2a.src = c.dst;
  d2a.dst.kind = UK_COPY_ARRAY, d2a.dst.array = arr;
  CHECK_OK(uk_memcpy_3d(&d2a));
  memset(back, 0, W * H * D * sizeof *back);
  CHECK_OK(uk_cuda_array_to_host(arr, back));
  CHECK(memcmp(back, src, W * H * D * sizeof *src) == 0);
  /* Array -> host through uk_memcpy_3d, into a wider host layout. */
  int *wide = calloc((size_t)(W + 3) * H * D, sizeof *wide);
  uk_copy_3d a2h;
  memset(&a2h, 0, sizeof a2h);
  a2h.width_bytes = W * 4, a2h.height = H, a2h.depth = D;
  a2h.src.kind = UK_COPY_ARRAY, a2h.src.array = arr;
  a2h.dst.kind = UK_COPY_HOST, a2h.dst.ptr = (uint64_t)(uintptr_t)wide, a2h.dst.pitch = (W + 3) * 4, a2h.dst.height = H;
  CHECK_OK(uk_memcpy_3d(&a2h));
  int bad = 0;
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W + 3; x++)
        bad += wide[(z * H + y) * (W + 3) + x] != (x < W ? src[(z * H + y) * W + x] : 0);
  CHECK(bad == 0);
  /* A sub-box (x 3..10, y 1..5, z 2..4) of the device copy, async to host. */
  int sub[3][4][8];
  memset(sub, 0, sizeof sub);
  uk_copy_3d d2h;
  memset(&d2h, 0, sizeof d2h);
  d2h.width_bytes = 8 * 4, d2h.height = 4, d2h.depth = 3;
  d2h.src = c.dst;
  d2h.src.x = c.dst.x + 3 * 4, d2h.src.y = c.dst.y + 1, d2h.src.z = c.dst.z + 2;
  d2h.dst.kind = UK_COPY_HOST, d2h.dst.ptr = (uint64_t)(uintptr_t)sub, d2h.dst.pitch = 8 * 4, d2h.dst.height = 4;
  CHECK_OK(uk_memcpy_3d_async(&d2h, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  bad = 0;
  for (int z = 0; z < 3; z++)
    for (int y = 0; y < 4; y++)
      for (int x = 0; x < 8; x++) bad += sub[z][y][x] != src[((z + 2) * H + (y + 1)) * W + (x + 3)];
  CHECK(bad == 0);
  uk_cuda_array_destroy(arr);
  CHECK_OK(uk_mem_free(dev));
  free(wide);
  free(src);
  free(back);
}

static void pci_and_peer(void) {
  int n = 0;
  CHECK_OK(uk_device_count(&n));
  for (int d = 0; d < n; d++) {
    char id[32];
    int back = -1;
    CHECK_OK(uk_device_pci_bus_id(d, id, sizeof id));
    CHECK_OK(uk_device_by_pci_bus_id(id, &back));
    CHECK(back == d);
    printf("device %d: PCI bus id %s\n", d, id);
  }
  enum { N = 1 << 16 };
  uint64_t a = 0, b = 0;
  CHECK_OK(uk_mem_alloc(0, N, &a));
  CHECK_OK(uk_mem_alloc(0, N, &b));
  unsigned char *h = malloc(N), *r = malloc(N);
  for (int i = 0; i < N; i++) h[i] = (unsigned char)(ut_rand() | 1);
  CHECK_OK(uk_memcpy_htod(a, h, N));
  CHECK_OK(uk_memset_d8(b, 0, N));
  CHECK_OK(uk_memcpy_peer(b, 0, a, 0, N / 2));
  CHECK_OK(uk_memcpy_peer_async(b + N / 2, 0, a + N / 2, 0, N / 2, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK_OK(uk_memcpy_dtoh(r, b, N));
  CHECK(memcmp(r, h, N) == 0);
  uk_mem_free(a);
  uk_mem_free(b);
  free(h);
  free(r);
}

int main(void) {
  ut_require_gpu();
  ut_seed(2828);
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &stream));
  limits(); /* first: the heap must be sized before a kernel uses malloc */
  cache_and_profiler();
  managed();
  pointers();
  memsets_2d();
  copies_3d();
  pci_and_peer();
  CHECK_OK(uk_stream_destroy(stream));
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_driver");
}
