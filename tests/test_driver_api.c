/* Argument checking of the driver-layer calls of issue 28 (managed memory,
 * IPC, pointer attributes, limits, cache configuration, profiler, peer
 * copies, 2-D memsets, 3-D copies, PCI bus ids), with or without a GPU:
 * bad arguments are UK_ERR_INVALID with a message before any driver call,
 * out-parameters stay untouched, and without a driver the device work is
 * UK_ERR_NO_DEVICE. */
#include "testutil.h"

static int have_gpu;

#define CHECK_DEVICE(expr) CHECK_STATUS(expr, have_gpu ? UK_OK : UK_ERR_NO_DEVICE)
/* Without a GPU a call that reached the driver says there is none. */
#define CHECK_NO_DEVICE(expr) \
  if (!have_gpu) CHECK_STATUS(expr, UK_ERR_NO_DEVICE)

static void managed(void) {
  uint64_t d = 7;
  CHECK_STATUS(uk_managed_alloc(0, 64, UK_MANAGED_GLOBAL, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_alloc: dptr is NULL");
  CHECK_STATUS(uk_managed_alloc(0, 0, UK_MANAGED_GLOBAL, &d), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "bytes is 0");
  CHECK_STATUS(uk_managed_alloc(0, 64, UK_MANAGED_SINGLE, &d), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_alloc: flags 0x4 (one of UK_MANAGED_GLOBAL, UK_MANAGED_HOST)");
  CHECK_STATUS(uk_managed_alloc(0, 64, UK_MANAGED_GLOBAL | UK_MANAGED_HOST, &d), UK_ERR_INVALID);
  CHECK(d == 7);
  CHECK_NO_DEVICE(uk_managed_alloc(0, 64, UK_MANAGED_GLOBAL, &d));
  CHECK(have_gpu || d == 7);

  CHECK_STATUS(uk_stream_attach_memory(NULL, 256, 0, UK_MANAGED_SINGLE), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_stream_attach_memory: stream is NULL (attach to a stream of your own)");
  CHECK_STATUS(uk_stream_attach_memory((void *)1, 0, 0, UK_MANAGED_SINGLE), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_stream_attach_memory: dptr is NULL");
  CHECK_STATUS(uk_stream_attach_memory((void *)1, 256, 0, 3), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "flags 0x3 (one of UK_MANAGED_GLOBAL, UK_MANAGED_HOST, UK_MANAGED_SINGLE)");

  CHECK_STATUS(uk_managed_prefetch_async(256, 0, 0, NULL), UK_OK); /* nothing to move */
  CHECK_STATUS(uk_managed_prefetch_async(0, 64, 0, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_prefetch_async: dptr is NULL");
  CHECK_STATUS(uk_managed_prefetch_async(256, 64, -5, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_prefetch_async: device -5 is neither an ordinal nor UK_DEVICE_CPU");
  if (have_gpu) {
    CHECK_STATUS(uk_managed_prefetch_async(256, 64, 1 << 20, NULL), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "does not exist");
  }
  CHECK_NO_DEVICE(uk_managed_prefetch_async(256, 64, UK_DEVICE_CPU, NULL));

  CHECK_STATUS(uk_managed_advise(256, 64, (uk_mem_advice)0, 0), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_advise: unknown advice 0 (UK_ADVISE_*)");
  CHECK_STATUS(uk_managed_advise(256, 64, (uk_mem_advice)7, 0), UK_ERR_INVALID);
  CHECK_STATUS(uk_managed_advise(256, 0, UK_ADVISE_SET_READ_MOSTLY, 0), UK_OK);
  CHECK_STATUS(uk_managed_advise(0, 64, UK_ADVISE_SET_READ_MOSTLY, 0), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_managed_advise: dptr is NULL");
  CHECK_NO_DEVICE(uk_managed_advise(256, 64, UK_ADVISE_SET_ACCESSED_BY, 0));

  CHECK_STATUS(uk_mem_alloc(0, 64, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_mem_alloc(0, 0, &d), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_mem_alloc: bytes is 0 (allocate at least one byte)");
  CHECK(d == 7);
  CHECK_NO_DEVICE(uk_mem_alloc(0, 64, &d));
}

static void pointers_and_ipc(void) {
  CHECK_STATUS(uk_pointer_info_get(256, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_pointer_info_get: out is NULL");
  uk_pointer_info info;
  memset(&info, 0x5a, sizeof info);
  char host[16];
  CHECK_DEVICE(uk_pointer_info_get((uint64_t)(uintptr_t)host, &info));
  if (have_gpu) CHECK(info.type == UK_MEMORY_UNREGISTERED && info.device == -1 && info.range_bytes == 0);
  else CHECK(info.device == 0x5a5a5a5a); /* untouched */

  uk_ipc_mem_handle mh;
  uk_ipc_event_handle eh;
  memset(&mh, 0, sizeof mh);
  memset(&eh, 0, sizeof eh);
  uint64_t d = 7;
  void *e = (void *)7;
  CHECK(sizeof mh == 64 && sizeof eh == 64);
  CHECK_STATUS(uk_ipc_mem_get_handle(0, &mh), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_ipc_mem_get_handle: dptr is NULL");
  CHECK_STATUS(uk_ipc_mem_get_handle(256, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_ipc_mem_open(0, NULL, 0, &d), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_ipc_mem_open: handle is NULL");
  CHECK_STATUS(uk_ipc_mem_open(0, &mh, 0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_ipc_mem_open(0, &mh, 2, &d), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_ipc_mem_open: unknown flags 0x2 (known: UK_IPC_LAZY_ENABLE_PEER_ACCESS)");
  CHECK_STATUS(uk_ipc_mem_close(0), UK_OK);
  CHECK_STATUS(uk_ipc_event_get_handle(NULL, &eh), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_ipc_event_get_handle: event is NULL");
  CHECK_STATUS(uk_ipc_event_get_handle((void *)1, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_ipc_event_open(0, NULL, &e), UK_ERR_INVALID);
  CHECK_STATUS(uk_ipc_event_open(0, &eh, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_ipc_event_open: event is NULL");
  CHECK(d == 7 && e == (void *)7);
  CHECK_NO_DEVICE(uk_ipc_mem_open(0, &mh, 0, &d));
  CHECK_NO_DEVICE(uk_ipc_event_open(0, &eh, &e));
  CHECK_NO_DEVICE(uk_ipc_mem_get_handle(256, &mh));
  CHECK(d == 7 && e == (void *)7);

  /* Interprocess events cannot time. */
  CHECK_STATUS(uk_event_create(0, UK_EVENT_INTERPROCESS, &e), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "UK_EVENT_INTERPROCESS needs UK_EVENT_DISABLE_TIMING too");
  CHECK_STATUS(uk_event_create(0, 8, &e), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown flags 0x8");
  CHECK(e == (void *)7);
  e = NULL;
  CHECK_DEVICE(uk_event_create(0, UK_EVENT_INTERPROCESS | UK_EVENT_DISABLE_TIMING, &e));
  if (have_gpu) {
    CHECK_OK(uk_ipc_event_get_handle(e, &eh));
    CHECK_OK(uk_event_destroy(e));
  }
}

static void limits_cache_profiler(void) {
  size_t v = 7;
  CHECK_STATUS(uk_device_get_limit(0, UK_LIMIT_STACK_SIZE, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_get_limit: value is NULL");
  CHECK_STATUS(uk_device_get_limit(0, (uk_limit)5, &v), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_get_limit: unknown limit 5 (UK_LIMIT_*)");
  CHECK_STATUS(uk_device_set_limit(0, (uk_limit)-1, 1), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_set_limit: unknown limit -1 (UK_LIMIT_*)");
  CHECK(v == 7);
  CHECK_DEVICE(uk_device_get_limit(0, UK_LIMIT_MALLOC_HEAP_SIZE, &v));
  if (have_gpu) {
    CHECK(v > 0);
    CHECK_STATUS(uk_device_get_limit(1 << 20, UK_LIMIT_STACK_SIZE, &v), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "does not exist");
  }

  uk_cache_config c = (uk_cache_config)9;
  CHECK_STATUS(uk_device_set_cache_config(0, (uk_cache_config)4), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_set_cache_config: unknown config 4 (UK_CACHE_PREFER_*)");
  CHECK_STATUS(uk_device_get_cache_config(0, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_function_set_cache_config(NULL, UK_CACHE_PREFER_L1), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_function_set_cache_config: f is NULL");
  CHECK_STATUS(uk_function_set_cache_config((uk_function *)1, (uk_cache_config)-2), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "unknown config -2");
  CHECK_DEVICE(uk_device_get_cache_config(0, &c));
  if (!have_gpu) CHECK(c == (uk_cache_config)9);

  CHECK_DEVICE(uk_profiler_start());
  CHECK_DEVICE(uk_profiler_stop());
}

static void peer_and_pci(void) {
  CHECK_STATUS(uk_device_disable_peer_access(1, 1), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_disable_peer_access: device 1 is its own peer");
  CHECK_STATUS(uk_device_enable_peer_access(2, 2), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_enable_peer_access: device 2 is its own peer already");
  CHECK_NO_DEVICE(uk_device_enable_peer_access(0, 1));
  CHECK_NO_DEVICE(uk_device_disable_peer_access(1, 0));
  CHECK_STATUS(uk_memcpy_peer(0, 0, 256, 1, 64), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_peer: dst is NULL");
  CHECK_STATUS(uk_memcpy_peer_async(256, 0, 0, 1, 64, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_peer_async: src is NULL");
  CHECK_STATUS(uk_memcpy_peer(0, 0, 0, 1, 0), UK_OK); /* nothing to copy */
  CHECK_NO_DEVICE(uk_memcpy_peer(256, 0, 512, 0, 64));
  if (have_gpu) {
    CHECK_STATUS(uk_memcpy_peer(256, 0, 512, 1 << 20, 64), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "does not exist");
  }

  char id[32] = "untouched";
  int dev = 7;
  CHECK_STATUS(uk_device_pci_bus_id(0, NULL, 32), UK_ERR_INVALID);
  CHECK_STATUS(uk_device_pci_bus_id(0, id, 12), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_pci_bus_id: a buffer of 12 bytes is too short (13 at least)");
  CHECK_STATUS(uk_device_by_pci_bus_id(NULL, &dev), UK_ERR_INVALID);
  CHECK_STATUS(uk_device_by_pci_bus_id("0000:00:00.0", NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_device_by_pci_bus_id: device is NULL");
  CHECK_DEVICE(uk_device_pci_bus_id(0, id, sizeof id));
  if (have_gpu) {
    CHECK(strlen(id) >= 12 && id[4] == ':');
    CHECK_OK(uk_device_by_pci_bus_id(id, &dev));
    CHECK(dev == 0);
    CHECK_STATUS(uk_device_by_pci_bus_id("not a bus id", &dev), UK_ERR_NOT_FOUND);
    CHECK_CONTAINS(uk_last_error(), "no device has PCI bus id 'not a bus id'");
  } else {
    CHECK_STREQ(id, "untouched");
    CHECK_STATUS(uk_device_by_pci_bus_id("0000:00:00.0", &dev), UK_ERR_NO_DEVICE);
    CHECK(dev == 7);
  }
}

static void memset_2d_and_copy_3d(void) {
  CHECK_STATUS(uk_memset_2d_d8(0, 64, 1, 8, 4), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memset_2d_d8: dst is NULL");
  CHECK_STATUS(uk_memset_2d_d16(0x1001, 64, 1, 8, 4), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memset_2d_d16: dst 4097 is not a multiple of the 2-byte value");
  CHECK_STATUS(uk_memset_2d_d32_async(0x1000, 66, 1, 8, 4, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memset_2d_d32_async: pitch 66 is not a multiple of the 4-byte value");
  CHECK_STATUS(uk_memset_2d_d32(0x1000, 28, 1, 8, 4), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memset_2d_d32: rows of 8 values (4 bytes each) do not fit a pitch of 28 bytes");
  CHECK_STATUS(uk_memset_2d_d16_async(0x1000, 8, 1, 8, 4, NULL), UK_ERR_INVALID);
  CHECK_STATUS(uk_memset_2d_d8_async(0, 0, 1, 0, 4, NULL), UK_OK); /* empty */
  CHECK_STATUS(uk_memset_2d_d32(0, 0, 1, 8, 0), UK_OK);
  CHECK_NO_DEVICE(uk_memset_2d_d8(0x1000, 64, 1, 8, 4));

  uk_copy_3d c;
  memset(&c, 0, sizeof c);
  CHECK_STATUS(uk_memcpy_3d(NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_3d: c is NULL");
  CHECK_STATUS(uk_memcpy_3d(&c), UK_OK); /* empty box */
  c.width_bytes = 16, c.height = 4, c.depth = 2;
  c.src.kind = UK_COPY_HOST, c.src.ptr = 0x1000, c.src.pitch = 16, c.src.height = 4;
  c.dst.kind = UK_COPY_DEVICE, c.dst.ptr = 0, c.dst.pitch = 32, c.dst.height = 8;
  CHECK_STATUS(uk_memcpy_3d(&c), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_3d: dst.ptr is NULL");
  c.dst.ptr = 0x2000;
  c.dst.x = 20;
  CHECK_STATUS(uk_memcpy_3d_async(&c, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_3d_async: dst.pitch 32 is less than x + width_bytes (20 + 16)");
  c.dst.x = 0, c.src.y = 1;
  CHECK_STATUS(uk_memcpy_3d(&c), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_3d: src.height 4 is less than y + height (1 + 4)");
  c.src.y = 0, c.src.kind = UK_COPY_ARRAY;
  CHECK_STATUS(uk_memcpy_3d(&c), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_memcpy_3d: src.array is NULL");
  c.src.kind = (uk_copy_kind)5;
  CHECK_STATUS(uk_memcpy_3d(&c), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "src.kind 5 is not UK_COPY_DEVICE, UK_COPY_HOST or UK_COPY_ARRAY");
  c.src.kind = UK_COPY_HOST;
  CHECK_NO_DEVICE(uk_memcpy_3d(&c));
}

int main(void) {
  int n = 0;
  have_gpu = uk_device_count(&n) == UK_OK && n > 0;
  managed();
  pointers_and_ipc();
  limits_cache_profiler();
  peer_and_pci();
  memset_2d_and_copy_3d();
  return ut_finish("test_driver_api");
}
