/* Host cost per call of the runtime wrappers of issues 10 and 28 (streams,
 * events, stream-ordered copies and memsets, the non-blocking timed launch;
 * 2-D memsets, 3-D copies, peer copies, managed memory, pointer attributes,
 * limits, cache configuration, cluster launch) against the raw driver call
 * they wrap, measured in the same run on the same stream. Target: each
 * within 0.3 us of the raw call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "runtime/context.h"

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
/* Issue 28. The 2-D memset writes 2 rows of 2 values at pitch 64. */
static uint64_t managed_buf;
static CUcontext prim0;
static CUDA_MEMCPY3D m3d;
static uk_copy_3d c3d;
static uk_grid_launch cluster_grid;
static CUfunction raw_cluster_fn;
static void raw_memset2d(void) { RAW(uk__cu.cuMemsetD2D32Async(dbuf, 64, 7, 2, 2, stream)); }
static void uk_memset2d(void) { UK(uk_memset_2d_d32_async(dbuf, 64, 7, 2, 2, stream)); }
static void raw_copy3d(void) { RAW(uk__cu.cuMemcpy3DAsync(&m3d, stream)); }
static void uk_copy3d(void) { UK(uk_memcpy_3d_async(&c3d, stream)); }
static void raw_peer(void) { RAW(uk__cu.cuMemcpyPeerAsync(dbuf + 64, prim0, dbuf, prim0, 8, stream)); }
static void uk_peer(void) { UK(uk_memcpy_peer_async(dbuf + 64, 0, dbuf, 0, 8, stream)); }
static void raw_pointer(void) {
  CUpointer_attribute a[] = {CU_POINTER_ATTRIBUTE_CONTEXT,        CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                             CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                             CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                             CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  CUcontext c;
  unsigned t, m;
  CUdeviceptr p, st;
  int o;
  size_t sz;
  void *d[] = {&c, &t, &p, &m, &o, &st, &sz};
  RAW(uk__cu.cuPointerGetAttributes(7, a, d, dbuf));
}
static void uk_pointer(void) {
  uk_pointer_info i;
  UK(uk_pointer_info_get(dbuf, &i));
}
static void raw_limit(void) {
  size_t v;
  RAW(uk__cu.cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
}
static void uk_limit_get(void) {
  size_t v;
  UK(uk_device_get_limit(0, UK_LIMIT_STACK_SIZE, &v));
}
static void raw_cache(void) {
  CUfunc_cache c;
  RAW(uk__cu.cuCtxGetCacheConfig(&c));
}
static void uk_cache(void) {
  uk_cache_config c;
  UK(uk_device_get_cache_config(0, &c));
}
static void raw_prefetch(void) {
  CUmemLocation l = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  RAW(uk__cu.cuMemPrefetchAsync(managed_buf, 4096, l, 0, stream));
}
static void uk_prefetch(void) { UK(uk_managed_prefetch_async(managed_buf, 4096, 0, stream)); }
static void raw_advise(void) {
  CUmemLocation l = {CU_MEM_LOCATION_TYPE_DEVICE, 0};
  RAW(uk__cu.cuMemAdvise(managed_buf, 4096, CU_MEM_ADVISE_SET_ACCESSED_BY, l));
}
static void uk_advise(void) { UK(uk_managed_advise(managed_buf, 4096, UK_ADVISE_SET_ACCESSED_BY, 0)); }
static void raw_attach(void) { RAW(uk__cu.cuStreamAttachMemAsync(stream, managed_buf, 0, CU_MEM_ATTACH_GLOBAL)); }
static void uk_attach(void) { UK(uk_stream_attach_memory(stream, managed_buf, 0, UK_MANAGED_GLOBAL)); }
static void raw_cluster(void) {
  CUlaunchAttribute attr;
  memset(&attr, 0, sizeof attr);
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.gridDimX = 2, cfg.gridDimY = 1, cfg.gridDimZ = 1;
  cfg.blockDimX = 32, cfg.blockDimY = 1, cfg.blockDimZ = 1;
  cfg.hStream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  RAW(uk__cu.cuLaunchKernelEx(&cfg, raw_fn, args, NULL));
}
static void uk_cluster(void) { UK(uk_function_launch(fn, &cluster_grid, args)); }

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
  bu_check(uk__cu_need(cuMemsetD2D32Async), "cuMemsetD2D32Async");
  bu_check(uk__cu_need(cuMemcpy3DAsync), "cuMemcpy3DAsync");
  bu_check(uk__cu_need(cuMemcpyPeerAsync), "cuMemcpyPeerAsync");
  bu_check(uk__cu_need(cuPointerGetAttributes), "cuPointerGetAttributes");
  bu_check(uk__cu_need(cuCtxGetLimit), "cuCtxGetLimit");
  bu_check(uk__cu_need(cuCtxGetCacheConfig), "cuCtxGetCacheConfig");
  bu_check(uk__cu_need(cuMemPrefetchAsync), "cuMemPrefetchAsync");
  bu_check(uk__cu_need(cuMemAdvise), "cuMemAdvise");
  bu_check(uk__cu_need(cuStreamAttachMemAsync), "cuStreamAttachMemAsync");
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
  cluster_grid = (uk_grid_launch){{2, 1, 1}, {32, 1, 1}, 0, s, 0, {2, 1, 1}};
  bu_check(uk__device_context(0, &prim0), "primary context");
  bu_check(uk_managed_alloc(0, 1 << 16, UK_MANAGED_GLOBAL, &managed_buf), "managed");
  int cma = 0, clusters = 0;
  bu_check(uk_device_attribute(0, "concurrent_managed_access", &cma), "attribute");
  bu_check(uk_device_attribute(0, "cluster_launch", &clusters), "attribute");
  /* A 3-D copy of 2 x 2 x 2 bytes within dbuf (pitch 16, 2 rows a slice). */
  memset(&c3d, 0, sizeof c3d);
  c3d.width_bytes = 2, c3d.height = 2, c3d.depth = 2;
  c3d.src.kind = c3d.dst.kind = UK_COPY_DEVICE;
  c3d.src.ptr = dbuf, c3d.dst.ptr = dbuf + 128;
  c3d.src.pitch = c3d.dst.pitch = 16, c3d.src.height = c3d.dst.height = 2;
  memset(&m3d, 0, sizeof m3d);
  m3d.srcMemoryType = m3d.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m3d.srcDevice = dbuf, m3d.dstDevice = dbuf + 128;
  m3d.srcPitch = m3d.dstPitch = 16, m3d.srcHeight = m3d.dstHeight = 2;
  m3d.WidthInBytes = 2, m3d.Height = 2, m3d.Depth = 2;
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
      {"uk_memset_2d_d32_async, 2 x 2 values", "cuMemsetD2D32Async", uk_memset2d, raw_memset2d},
      {"uk_memcpy_3d_async, 2 x 2 x 2 bytes", "cuMemcpy3DAsync", uk_copy3d, raw_copy3d},
      {"uk_memcpy_peer_async, 8 B, one device", "cuMemcpyPeerAsync", uk_peer, raw_peer},
      {"uk_pointer_info_get", "cuPointerGetAttributes (7)", uk_pointer, raw_pointer},
      {"uk_device_get_limit", "cuCtxGetLimit", uk_limit_get, raw_limit},
      {"uk_device_get_cache_config", "cuCtxGetCacheConfig", uk_cache, raw_cache},
      {"uk_managed_advise, 4 KiB", "cuMemAdvise", uk_advise, raw_advise},
      {"uk_stream_attach_memory", "cuStreamAttachMemAsync", uk_attach, raw_attach},
      {"uk_managed_prefetch_async, 4 KiB", "cuMemPrefetchAsync", uk_prefetch, raw_prefetch},
      {"uk_function_launch, cluster 2", "cuLaunchKernelEx (cluster 2)", uk_cluster, raw_cluster},
  };
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
    /* Prefetch needs concurrent managed access; clusters need sm_90. */
    if ((rows[r].uk == uk_prefetch && !cma) || (rows[r].uk == uk_cluster && !clusters)) {
      printf("%-40s skipped: the device lacks it\n", rows[r].name);
      continue;
    }
    /* Interleaved, so that clock drift and other load hit both sides. */
    double raw = time_op(rows[r].raw), uk = time_op(rows[r].uk);
    double raw2 = time_op(rows[r].raw), uk2 = time_op(rows[r].uk);
    raw = raw < raw2 ? raw : raw2, uk = uk < uk2 ? uk : uk2;
    bu_row(rows[r].name, uk, raw, "us", rows[r].raw_name, "<= raw + 0.3 us", uk <= raw + 0.3);
    printf("%-40s ukern %.3f us, raw %.3f us (+%.3f)\n", rows[r].name, uk, raw, uk - raw);
  }
  bu_finish("Host cost per call of the runtime wrappers vs the raw driver (median of 40 batches of 200)", json);
  bu_check(uk_host_free(pinned), "free pinned");
  bu_check(uk_mem_free(managed_buf), "free managed");
  uk_array_free(ctx, &buf, NULL);
  uk_event_destroy(e1);
  uk_event_destroy(e2);
  uk_stream_destroy(s);
  uk__cu.cuModuleUnload(raw_mod);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return 0;
}
