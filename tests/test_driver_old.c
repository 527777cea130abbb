/* Against a driver that lacks every entry point of issue 28 (the stand-in
 * libcuda.so.1 of bench/tools/fake_driver.c, found through LD_LIBRARY_PATH), each
 * new call fails cleanly: UK_ERR_CUDA naming the missing entry point,
 * out-parameters untouched, no crash; the calls it still has keep working. */
#include "testutil.h"

#define CHECK_LACKS(expr, fn)                    \
  do {                                           \
    CHECK_STATUS(expr, UK_ERR_CUDA);             \
    CHECK_CONTAINS(uk_last_error(), "lacks " fn); \
    CHECK_CONTAINS(uk_last_error(), "update the driver"); \
  } while (0)

int main(void) {
  int n = 0;
  if (uk_device_count(&n) != UK_OK || n != 1) {
    printf("SKIP: the stand-in driver was not loaded (%s)\n", uk_last_error());
    return 77;
  }
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  CHECK_CONTAINS(info.name, "stand-in");
  uint64_t d = 7, buf = 0;
  void *e = (void *)7, *s = NULL;
  CHECK_OK(uk_mem_alloc(0, 4096, &buf)); /* cuMemAlloc: a core entry point */
  CHECK_OK(uk_stream_create(0, 0, 0, &s));
  CHECK_LACKS(uk_managed_alloc(0, 64, UK_MANAGED_GLOBAL, &d), "cuMemAllocManaged");
  CHECK_LACKS(uk_stream_attach_memory(s, buf, 0, UK_MANAGED_GLOBAL), "cuStreamAttachMemAsync");
  CHECK_LACKS(uk_managed_prefetch_async(buf, 64, 0, s), "cuMemPrefetchAsync");
  CHECK_LACKS(uk_managed_advise(buf, 64, UK_ADVISE_SET_READ_MOSTLY, 0), "cuMemAdvise");
  uk_pointer_info pi;
  memset(&pi, 0x77, sizeof pi);
  CHECK_LACKS(uk_pointer_info_get(buf, &pi), "cuPointerGetAttributes");
  CHECK(pi.device == 0x77777777);
  uk_ipc_mem_handle mh;
  uk_ipc_event_handle eh;
  memset(&mh, 0, sizeof mh), memset(&eh, 0, sizeof eh);
  CHECK_LACKS(uk_ipc_mem_get_handle(buf, &mh), "cuIpcGetMemHandle");
  CHECK_LACKS(uk_ipc_mem_open(0, &mh, 0, &d), "cuIpcOpenMemHandle");
  CHECK_LACKS(uk_ipc_mem_close(buf), "cuIpcCloseMemHandle");
  CHECK_LACKS(uk_ipc_event_get_handle((void *)s, &eh), "cuIpcGetEventHandle");
  CHECK_LACKS(uk_ipc_event_open(0, &eh, &e), "cuIpcOpenEventHandle");
  size_t v = 7;
  uk_cache_config c = (uk_cache_config)7;
  CHECK_LACKS(uk_device_get_limit(0, UK_LIMIT_STACK_SIZE, &v), "cuCtxGetLimit");
  CHECK_LACKS(uk_device_set_limit(0, UK_LIMIT_STACK_SIZE, 4096), "cuCtxSetLimit");
  CHECK_LACKS(uk_device_set_cache_config(0, UK_CACHE_PREFER_L1), "cuCtxSetCacheConfig");
  CHECK_LACKS(uk_device_get_cache_config(0, &c), "cuCtxGetCacheConfig");
  CHECK_LACKS(uk_profiler_start(), "cuProfilerStart");
  CHECK_LACKS(uk_profiler_stop(), "cuProfilerStop");
  CHECK_LACKS(uk_memcpy_peer(buf + 64, 0, buf, 0, 64), "cuMemcpyPeer");
  CHECK_LACKS(uk_memcpy_peer_async(buf + 64, 0, buf, 0, 64, s), "cuMemcpyPeerAsync");
  CHECK_LACKS(uk_memset_2d_d8(buf, 64, 1, 8, 2), "cuMemsetD2D8");
  CHECK_LACKS(uk_memset_2d_d16_async(buf, 64, 1, 8, 2, s), "cuMemsetD2D16Async");
  CHECK_LACKS(uk_memset_2d_d32(buf, 64, 1, 8, 2), "cuMemsetD2D32");
  uk_copy_3d c3;
  memset(&c3, 0, sizeof c3);
  c3.width_bytes = 8, c3.height = 2, c3.depth = 2;
  c3.src.kind = c3.dst.kind = UK_COPY_DEVICE;
  c3.src.ptr = buf, c3.dst.ptr = buf + 1024, c3.src.pitch = c3.dst.pitch = 16, c3.src.height = c3.dst.height = 2;
  CHECK_LACKS(uk_memcpy_3d_async(&c3, s), "cuMemcpy3DAsync");
  char id[32] = "untouched";
  int dev = 7;
  CHECK_LACKS(uk_device_pci_bus_id(0, id, sizeof id), "cuDeviceGetPCIBusId");
  CHECK_LACKS(uk_device_by_pci_bus_id("0000:01:00.0", &dev), "cuDeviceGetByPCIBusId");
  CHECK(d == 7 && e == (void *)7 && v == 7 && c == (uk_cache_config)7 && dev == 7);
  CHECK_STREQ(id, "untouched");
  /* Still working: the calls this driver has. */
  CHECK_OK(uk_memset_d8(buf, 3, 64));
  CHECK_OK(uk_stream_destroy(s));
  CHECK_OK(uk_mem_free(buf));
  return ut_finish("test_driver_old");
}
