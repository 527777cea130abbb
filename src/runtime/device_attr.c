/* Device queries beyond uk_device_info: any driver device attribute by
 * name, free/total memory, PCI bus ids (peer access: peer.c). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "runtime/device.h"

/* Every CUdevice_attribute of the cuda.h ukern is built with, by its enum
 * name without the CU_DEVICE_ATTRIBUTE_ prefix. */
#define UK__DEVICE_ATTRS(A) \
    A(MAX_THREADS_PER_BLOCK) A(MAX_BLOCK_DIM_X) A(MAX_BLOCK_DIM_Y) A(MAX_BLOCK_DIM_Z) \
    A(MAX_GRID_DIM_X) A(MAX_GRID_DIM_Y) A(MAX_GRID_DIM_Z) A(MAX_SHARED_MEMORY_PER_BLOCK) \
    A(SHARED_MEMORY_PER_BLOCK) A(TOTAL_CONSTANT_MEMORY) A(WARP_SIZE) A(MAX_PITCH) \
    A(MAX_REGISTERS_PER_BLOCK) A(REGISTERS_PER_BLOCK) A(CLOCK_RATE) A(TEXTURE_ALIGNMENT) \
    A(GPU_OVERLAP) A(MULTIPROCESSOR_COUNT) A(KERNEL_EXEC_TIMEOUT) A(INTEGRATED) \
    A(CAN_MAP_HOST_MEMORY) A(COMPUTE_MODE) A(MAXIMUM_TEXTURE1D_WIDTH) A(MAXIMUM_TEXTURE2D_WIDTH) \
    A(MAXIMUM_TEXTURE2D_HEIGHT) A(MAXIMUM_TEXTURE3D_WIDTH) A(MAXIMUM_TEXTURE3D_HEIGHT) \
    A(MAXIMUM_TEXTURE3D_DEPTH) A(MAXIMUM_TEXTURE2D_LAYERED_WIDTH) \
    A(MAXIMUM_TEXTURE2D_LAYERED_HEIGHT) A(MAXIMUM_TEXTURE2D_LAYERED_LAYERS) \
    A(MAXIMUM_TEXTURE2D_ARRAY_WIDTH) A(MAXIMUM_TEXTURE2D_ARRAY_HEIGHT) \
    A(MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES) A(SURFACE_ALIGNMENT) A(CONCURRENT_KERNELS) A(ECC_ENABLED) \
    A(PCI_BUS_ID) A(PCI_DEVICE_ID) A(TCC_DRIVER) A(MEMORY_CLOCK_RATE) A(GLOBAL_MEMORY_BUS_WIDTH) \
    A(L2_CACHE_SIZE) A(MAX_THREADS_PER_MULTIPROCESSOR) A(ASYNC_ENGINE_COUNT) A(UNIFIED_ADDRESSING) \
    A(MAXIMUM_TEXTURE1D_LAYERED_WIDTH) A(MAXIMUM_TEXTURE1D_LAYERED_LAYERS) A(CAN_TEX2D_GATHER) \
    A(MAXIMUM_TEXTURE2D_GATHER_WIDTH) A(MAXIMUM_TEXTURE2D_GATHER_HEIGHT) \
    A(MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE) A(MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE) \
    A(MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE) A(PCI_DOMAIN_ID) A(TEXTURE_PITCH_ALIGNMENT) \
    A(MAXIMUM_TEXTURECUBEMAP_WIDTH) A(MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH) \
    A(MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) A(MAXIMUM_SURFACE1D_WIDTH) A(MAXIMUM_SURFACE2D_WIDTH) \
    A(MAXIMUM_SURFACE2D_HEIGHT) A(MAXIMUM_SURFACE3D_WIDTH) A(MAXIMUM_SURFACE3D_HEIGHT) \
    A(MAXIMUM_SURFACE3D_DEPTH) A(MAXIMUM_SURFACE1D_LAYERED_WIDTH) \
    A(MAXIMUM_SURFACE1D_LAYERED_LAYERS) A(MAXIMUM_SURFACE2D_LAYERED_WIDTH) \
    A(MAXIMUM_SURFACE2D_LAYERED_HEIGHT) A(MAXIMUM_SURFACE2D_LAYERED_LAYERS) \
    A(MAXIMUM_SURFACECUBEMAP_WIDTH) A(MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH) \
    A(MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS) A(MAXIMUM_TEXTURE1D_LINEAR_WIDTH) \
    A(MAXIMUM_TEXTURE2D_LINEAR_WIDTH) A(MAXIMUM_TEXTURE2D_LINEAR_HEIGHT) \
    A(MAXIMUM_TEXTURE2D_LINEAR_PITCH) A(MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH) \
    A(MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT) A(COMPUTE_CAPABILITY_MAJOR) A(COMPUTE_CAPABILITY_MINOR) \
    A(MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH) A(STREAM_PRIORITIES_SUPPORTED) A(GLOBAL_L1_CACHE_SUPPORTED) \
    A(LOCAL_L1_CACHE_SUPPORTED) A(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) \
    A(MAX_REGISTERS_PER_MULTIPROCESSOR) A(MANAGED_MEMORY) A(MULTI_GPU_BOARD) \
    A(MULTI_GPU_BOARD_GROUP_ID) A(HOST_NATIVE_ATOMIC_SUPPORTED) \
    A(SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO) A(PAGEABLE_MEMORY_ACCESS) A(CONCURRENT_MANAGED_ACCESS) \
    A(COMPUTE_PREEMPTION_SUPPORTED) A(CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) \
    A(CAN_USE_STREAM_MEM_OPS_V1) A(CAN_USE_64_BIT_STREAM_MEM_OPS_V1) \
    A(CAN_USE_STREAM_WAIT_VALUE_NOR_V1) A(COOPERATIVE_LAUNCH) A(COOPERATIVE_MULTI_DEVICE_LAUNCH) \
    A(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) A(CAN_FLUSH_REMOTE_WRITES) A(HOST_REGISTER_SUPPORTED) \
    A(PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES) A(DIRECT_MANAGED_MEM_ACCESS_FROM_HOST) \
    A(VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED) A(VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    A(HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) A(HANDLE_TYPE_WIN32_HANDLE_SUPPORTED) \
    A(HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED) A(MAX_BLOCKS_PER_MULTIPROCESSOR) \
    A(GENERIC_COMPRESSION_SUPPORTED) A(MAX_PERSISTING_L2_CACHE_SIZE) \
    A(MAX_ACCESS_POLICY_WINDOW_SIZE) A(GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) \
    A(RESERVED_SHARED_MEMORY_PER_BLOCK) A(SPARSE_CUDA_ARRAY_SUPPORTED) \
    A(READ_ONLY_HOST_REGISTER_SUPPORTED) A(TIMELINE_SEMAPHORE_INTEROP_SUPPORTED) \
    A(MEMORY_POOLS_SUPPORTED) A(GPU_DIRECT_RDMA_SUPPORTED) A(GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS) \
    A(GPU_DIRECT_RDMA_WRITES_ORDERING) A(MEMPOOL_SUPPORTED_HANDLE_TYPES) A(CLUSTER_LAUNCH) \
    A(DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED) A(CAN_USE_64_BIT_STREAM_MEM_OPS) \
    A(CAN_USE_STREAM_WAIT_VALUE_NOR) A(DMA_BUF_SUPPORTED) A(IPC_EVENT_SUPPORTED) \
    A(MEM_SYNC_DOMAIN_COUNT) A(TENSOR_MAP_ACCESS_SUPPORTED) A(HANDLE_TYPE_FABRIC_SUPPORTED) \
    A(UNIFIED_FUNCTION_POINTERS) A(NUMA_CONFIG) A(NUMA_ID) A(MULTICAST_SUPPORTED) A(MPS_ENABLED) \
    A(HOST_NUMA_ID) A(D3D12_CIG_SUPPORTED) A(MEM_DECOMPRESS_ALGORITHM_MASK) \
    A(MEM_DECOMPRESS_MAXIMUM_LENGTH) A(VULKAN_CIG_SUPPORTED) A(GPU_PCI_DEVICE_ID) \
    A(GPU_PCI_SUBSYSTEM_ID) A(HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    A(HOST_NUMA_MEMORY_POOLS_SUPPORTED) A(HOST_NUMA_MULTINODE_IPC_SUPPORTED) \
    A(HOST_MEMORY_POOLS_SUPPORTED) A(HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    A(HOST_ALLOC_DMA_BUF_SUPPORTED) A(ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED)

typedef struct attr_name {
  const char *name;
  CUdevice_attribute value;
} attr_name;

static const attr_name attr_names[] = {
#define A(n) {#n, CU_DEVICE_ATTRIBUTE_##n},
    UK__DEVICE_ATTRS(A)
#undef A
};

/* Case-insensitive equality of `name` (with or without the prefix) and a
 * table name. */
static int same_name(const char *name, const char *table) {
  static const char prefix[] = "CU_DEVICE_ATTRIBUTE_";
  if (strncasecmp(name, prefix, sizeof prefix - 1) == 0) name += sizeof prefix - 1;
  return strcasecmp(name, table) == 0;
}

/* The table entry sharing the longest prefix with `name`, for the hint. */
static const char *closest(const char *name) {
  size_t best = 0;
  const char *r = attr_names[0].name;
  for (size_t k = 0; k < sizeof attr_names / sizeof attr_names[0]; k++) {
    size_t n = 0;
    while (name[n] && attr_names[k].name[n] && tolower((unsigned char)name[n]) == tolower((unsigned char)attr_names[k].name[n]))
      n++;
    if (n > best) best = n, r = attr_names[k].name;
  }
  return r;
}

uk_status uk_device_attribute(int ordinal, const char *attribute, int *value) {
  uk__error_clear();
  if (!attribute || !value)
    return uk__errorf(UK_ERR_INVALID, "uk_device_attribute: %s is NULL", !attribute ? "attribute" : "value");
  const attr_name *a = NULL;
  for (size_t k = 0; k < sizeof attr_names / sizeof attr_names[0] && !a; k++)
    if (same_name(attribute, attr_names[k].name)) a = &attr_names[k];
  if (!a) {
    char hint[96];
    snprintf(hint, sizeof hint, "%s", closest(attribute));
    for (char *p = hint; *p; p++) *p = (char)tolower((unsigned char)*p);
    return uk__errorf(UK_ERR_INVALID,
                      "unknown device attribute '%s' (names are CUdevice_attribute's without "
                      "CU_DEVICE_ATTRIBUTE_, any case: did you mean '%s'?)",
                      attribute, hint);
  }
  CUcontext c;
  uk_status st = uk__device_context(ordinal, &c); /* checks the ordinal */
  if (st != UK_OK) return st;
  int v = 0;
  char what[160];
  snprintf(what, sizeof what, "cuDeviceGetAttribute(%s, device %d)", attribute, ordinal);
  if ((st = uk__cu_check(uk__cu.cuDeviceGetAttribute(&v, a->value, (CUdevice)ordinal), what)) != UK_OK) return st;
  *value = v;
  return UK_OK;
}

uk_status uk_mem_get_info(int device, size_t *free_bytes, size_t *total_bytes) {
  uk__error_clear();
  if (!free_bytes || !total_bytes) return uk__errorf(UK_ERR_INVALID, "uk_mem_get_info: NULL argument");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuMemGetInfo)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemGetInfo(free_bytes, total_bytes), "cuMemGetInfo");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_device_by_pci_bus_id(const char *bus_id, int *device) {
  uk__error_clear();
  if (!bus_id || !device)
    return uk__errorf(UK_ERR_INVALID, "uk_device_by_pci_bus_id: %s is NULL", !bus_id ? "bus_id" : "device");
  uk_status st = uk__cu_load();
  if (st != UK_OK || (st = uk__cu_need(cuDeviceGetByPCIBusId)) != UK_OK) return st;
  CUdevice d = 0;
  CUresult r = uk__cu.cuDeviceGetByPCIBusId(&d, bus_id);
  if (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_DEVICE)
    return uk__errorf(UK_ERR_NOT_FOUND,
                      "uk_device_by_pci_bus_id: no device has PCI bus id '%s' (the form is "
                      "domain:bus:device.function in hex, e.g. 0000:3b:00.0; uk_device_pci_bus_id lists them)",
                      bus_id);
  if (r != CUDA_SUCCESS) return uk__cu_error(r, "cuDeviceGetByPCIBusId");
  *device = (int)d; /* CUdevice handles are the ordinals */
  return UK_OK;
}

uk_status uk_device_pci_bus_id(int device, char *bus_id, size_t size) {
  uk__error_clear();
  if (!bus_id) return uk__errorf(UK_ERR_INVALID, "uk_device_pci_bus_id: bus_id is NULL");
  if (size < 13)
    return uk__errorf(UK_ERR_INVALID, "uk_device_pci_bus_id: a buffer of %zu bytes is too short (13 at least)", size);
  CUcontext c;
  uk_status st = uk__device_context(device, &c); /* checks the ordinal */
  if (st != UK_OK || (st = uk__cu_need(cuDeviceGetPCIBusId)) != UK_OK) return st;
  return uk__cu_check(uk__cu.cuDeviceGetPCIBusId(bus_id, size > 64 ? 64 : (int)size, (CUdevice)device),
                      "cuDeviceGetPCIBusId");
}
