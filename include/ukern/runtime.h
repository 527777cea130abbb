/*
 * runtime.h — ukern's driver layer: thin calls over the CUDA driver for
 * devices, streams, events, copies and memsets (linear, 2-D, 3-D, peer),
 * pinned, managed and pitched memory, IPC, pointer attributes, context
 * limits and cache configuration, the profiler, textures and CUDA arrays.
 *
 * Included by ukern.h (users include that); it may also be included on its
 * own, which includes ukern.h first. The conventions of ukern.h hold for
 * every function here: a uk_status return, error detail in uk_last_error(),
 * out-parameters written only on success, no printing. Each call goes
 * through the driver ukern loads with dlopen at first use: without a driver
 * or device it returns UK_ERR_NO_DEVICE, and a driver too old for a call
 * returns UK_ERR_CUDA naming the missing entry point. Argument checks come
 * first and need no driver.
 */
#ifndef UKERN_RUNTIME_H
#define UKERN_RUNTIME_H

#include "ukern/ukern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Streams and synchronisation helpers                                       */
/* ------------------------------------------------------------------------ */

/* Makes `device`'s primary context current on the calling thread. */
UK_API uk_status uk_device_set_current(int device);
/* Waits for all work on the current device. */
UK_API uk_status uk_device_synchronize(void);
/* Copies between host and device (synchronous). */
UK_API uk_status uk_memcpy_htod(uint64_t dst, const void *src, size_t bytes);
UK_API uk_status uk_memcpy_dtoh(void *dst, uint64_t src, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Streams and events                                                        */
/* ------------------------------------------------------------------------ */

/* Streams and events are the driver's own handles (void * = CUstream /
 * CUevent), so ukern's, the CUDA runtime's (cudaStream_t, cudaEvent_t) and
 * the user's mix freely: any of them may be passed where a stream or an
 * event is taken. A NULL stream is the legacy default stream of the current
 * context (device 0's primary context when the thread has none). All of
 * these are thread-safe as the driver calls they wrap; destroying a handle
 * while another thread uses it is the caller's race. Without a driver or
 * device they return UK_ERR_NO_DEVICE; a driver lacking an entry point
 * returns UK_ERR_CUDA naming it.
 * Stream flags: UK_STREAM_NON_BLOCKING, no implicit synchronisation with
 * the legacy default stream. */
typedef enum uk_stream_flag { UK_STREAM_NON_BLOCKING = 1 } uk_stream_flag;

/* Creates a stream on `device` (in its primary context). flags: 0 or
 * UK_STREAM_NON_BLOCKING; priority: lower is higher priority, clamped by
 * the driver to uk_stream_priority_range (0 is the default). The stream is
 * the caller's: uk_stream_destroy. UK_ERR_INVALID for NULL or unknown flags
 * or a device that does not exist. */
UK_API uk_status uk_stream_create(int device, unsigned flags, int priority, void **stream);
/* The priorities streams of `device` may have: *least (usually 0) to
 * *greatest (a negative number). */
UK_API uk_status uk_stream_priority_range(int device, int *least, int *greatest);
/* Destroys a stream (work already queued still completes). NULL: no-op, UK_OK. */
UK_API uk_status uk_stream_destroy(void *stream);
/* Waits for all work queued on `stream`. */
UK_API uk_status uk_stream_synchronize(void *stream);
/* *done = 1 when all work queued on `stream` has completed, else 0. */
UK_API uk_status uk_stream_query(void *stream, int *done);
/* Makes later work on `stream` wait for the last uk_event_record of
 * `event` (on the device, no host wait). Legal during stream capture. */
UK_API uk_status uk_stream_wait_event(void *stream, void *event);

/* Event flags (bits): UK_EVENT_DISABLE_TIMING (cheaper; uk_event_elapsed
 * refuses it), UK_EVENT_BLOCKING_SYNC (uk_event_synchronize sleeps instead
 * of spinning), UK_EVENT_INTERPROCESS (shareable with another process
 * through uk_ipc_event_get_handle; needs UK_EVENT_DISABLE_TIMING too). */
typedef enum uk_event_flag {
  UK_EVENT_DISABLE_TIMING = 1,
  UK_EVENT_BLOCKING_SYNC = 2,
  UK_EVENT_INTERPROCESS = 4
} uk_event_flag;
/* Creates an event on `device`; flags: 0 or UK_EVENT_* bits. The event is
 * the caller's: uk_event_destroy. */
UK_API uk_status uk_event_create(int device, unsigned flags, void **event);
/* Destroys an event. NULL: no-op, UK_OK. */
UK_API uk_status uk_event_destroy(void *event);
/* Records `event` on `stream` (same device). Legal during stream capture. */
UK_API uk_status uk_event_record(void *event, void *stream);
/* Waits until the work before the event's last record has completed. */
UK_API uk_status uk_event_synchronize(void *event);
/* *done = 1 when the event's last record has completed, else 0. */
UK_API uk_status uk_event_query(void *event, int *done);
/* Milliseconds between two completed records (about 0.5 us resolution).
 * UK_ERR_CUDA saying CUDA_ERROR_NOT_READY while `end` has not completed;
 * also UK_ERR_CUDA for an event made with UK_EVENT_DISABLE_TIMING. */
UK_API uk_status uk_event_elapsed(void *start, void *end, float *ms);

/* The non-blocking form of uk_function_launch_timed (PyCUDA's
 * prepared_timed_call): records `start`, launches, records `end`, all on
 * g->stream, and returns at once. Read the time later with
 * uk_event_elapsed(start, end, &ms) once `end` has completed
 * (uk_event_synchronize / uk_event_query). The events are the caller's
 * (uk_event_create, timing enabled, on the launch's device) and may be
 * reused for the next launch. Thread-safety as uk_function_launch. */
UK_API uk_status uk_function_launch_timed_async(uk_function *f, const uk_grid_launch *g,
                                                void *const *args, void *start, void *end);

/* ------------------------------------------------------------------------ */
/* Memory: copies, memsets, pinned host memory                               */
/* ------------------------------------------------------------------------ */

/* Synchronous copies run in the context of the device owning the device
 * memory; the _async forms are ordered on `stream` (its device's context; a
 * NULL stream: the legacy stream) and return at once (copies from or to
 * pageable host memory may still wait: pin it with uk_host_alloc or
 * uk_host_register for truly asynchronous copies). bytes / count 0 is a
 * no-op; a NULL pointer otherwise is UK_ERR_INVALID; without a device
 * UK_ERR_NO_DEVICE. Thread-safe; the _async forms are legal during stream
 * capture. Device to device, synchronous: */
UK_API uk_status uk_memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes);
/* Stream-ordered host to device copy. */
UK_API uk_status uk_memcpy_htod_async(uint64_t dst, const void *src, size_t bytes, void *stream);
/* Stream-ordered device to host copy. */
UK_API uk_status uk_memcpy_dtoh_async(void *dst, uint64_t src, size_t bytes, void *stream);
/* Stream-ordered device to device copy. */
UK_API uk_status uk_memcpy_dtod_async(uint64_t dst, uint64_t src, size_t bytes, void *stream);

/* Sets `count` 8-, 16- or 32-bit values from dst (which must be aligned to
 * the value's size: UK_ERR_INVALID otherwise). Synchronous. */
UK_API uk_status uk_memset_d8(uint64_t dst, uint8_t value, size_t count);
UK_API uk_status uk_memset_d16(uint64_t dst, uint16_t value, size_t count);
UK_API uk_status uk_memset_d32(uint64_t dst, uint32_t value, size_t count);
/* The same, ordered on `stream`. */
UK_API uk_status uk_memset_d8_async(uint64_t dst, uint8_t value, size_t count, void *stream);
UK_API uk_status uk_memset_d16_async(uint64_t dst, uint16_t value, size_t count, void *stream);
UK_API uk_status uk_memset_d32_async(uint64_t dst, uint32_t value, size_t count, void *stream);

/* A 2-D copy of `height` rows of `width_bytes` bytes: row r of the source
 * starts at src + r * src_pitch, of the destination at dst + r * dst_pitch.
 * Each side is device memory, or host memory when *_host is non-zero (the
 * address cast to uint64_t); not both host. */
typedef struct uk_copy_2d {
  uint64_t src;
  int src_host;
  size_t src_pitch;
  uint64_t dst;
  int dst_host;
  size_t dst_pitch;
  size_t width_bytes;
  size_t height;
} uk_copy_2d;
/* Copies as described (synchronous). UK_ERR_INVALID when a pitch is less
 * than width_bytes; width or height 0 is a no-op. */
UK_API uk_status uk_memcpy_2d(const uk_copy_2d *c);
/* The same, ordered on `stream`. */
UK_API uk_status uk_memcpy_2d_async(const uk_copy_2d *c, void *stream);
/* Allocates `height` rows of `width_bytes` on `device`, each row starting
 * at a multiple of *pitch bytes chosen by the driver for coalescing and 2-D
 * textures; element_bytes (4, 8 or 16) is the access size. Free with
 * uk_mem_free. */
UK_API uk_status uk_mem_alloc_pitch(int device, size_t width_bytes, size_t height, unsigned element_bytes,
                                    uint64_t *dptr, size_t *pitch);
/* Allocates `bytes` (> 0) of linear device memory on `device` with
 * cuMemAlloc (PyCUDA mem_alloc): not stream-ordered, not from a pool, so
 * it can be shared with other processes (uk_ipc_mem_get_handle). The
 * caller frees it with uk_mem_free. Thread-safe. */
UK_API uk_status uk_mem_alloc(int device, size_t bytes, uint64_t *dptr);
/* Frees memory from uk_mem_alloc, uk_mem_alloc_pitch or uk_managed_alloc
 * (synchronous, cuMemFree). 0: no-op. */
UK_API uk_status uk_mem_free(uint64_t dptr);

/* 2-D memsets: `height` rows of `width` 8-, 16- or 32-bit values, row r
 * starting at dst + r * pitch (bytes). dst and pitch must be multiples of
 * the value's size and pitch at least width values (UK_ERR_INVALID
 * otherwise); width or height 0 is a no-op. Synchronous, or ordered on
 * `stream` (legal during stream capture). Thread-safe. */
UK_API uk_status uk_memset_2d_d8(uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t height);
UK_API uk_status uk_memset_2d_d16(uint64_t dst, size_t pitch, uint16_t value, size_t width, size_t height);
UK_API uk_status uk_memset_2d_d32(uint64_t dst, size_t pitch, uint32_t value, size_t width, size_t height);
UK_API uk_status uk_memset_2d_d8_async(uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t height,
                                       void *stream);
UK_API uk_status uk_memset_2d_d16_async(uint64_t dst, size_t pitch, uint16_t value, size_t width, size_t height,
                                        void *stream);
UK_API uk_status uk_memset_2d_d32_async(uint64_t dst, size_t pitch, uint32_t value, size_t width, size_t height,
                                        void *stream);

/* ------------------------------------------------------------------------ */
/* Managed (unified) memory                                                  */
/* ------------------------------------------------------------------------ */

/* Attach flags (one of them): UK_MANAGED_GLOBAL (any stream on any device
 * may access it), UK_MANAGED_HOST (the host only, until attached to a
 * stream), UK_MANAGED_SINGLE (uk_stream_attach_memory only: the one stream
 * it is attached to). */
typedef enum uk_managed_flag { UK_MANAGED_GLOBAL = 1, UK_MANAGED_HOST = 2, UK_MANAGED_SINGLE = 4 } uk_managed_flag;
/* The host as a target of uk_managed_prefetch_async and uk_managed_advise. */
#define UK_DEVICE_CPU (-1)
/* Allocates `bytes` (> 0) of managed memory (cuMemAllocManaged, in
 * `device`'s primary context), addressable at the same address from the
 * host and every device; flags UK_MANAGED_GLOBAL or UK_MANAGED_HOST. The
 * caller frees it with uk_mem_free. Thread-safe. */
UK_API uk_status uk_managed_alloc(int device, size_t bytes, unsigned flags, uint64_t *dptr);
/* Attaches managed memory [dptr, dptr + bytes) to `stream` (not NULL)
 * with one flag (bytes 0: the whole allocation, as the driver requires
 * unless the device has concurrent managed access), ordered on the stream.
 * UK_ERR_INVALID: a NULL stream or dptr, not one known flag. */
UK_API uk_status uk_stream_attach_memory(void *stream, uint64_t dptr, size_t bytes, unsigned flags);
/* Migrates managed memory [dptr, dptr + bytes) to `device`
 * (UK_DEVICE_CPU: host memory) ordered on `stream` (the device needs
 * concurrent managed access: the attribute concurrent_managed_access).
 * bytes 0 is a no-op. */
UK_API uk_status uk_managed_prefetch_async(uint64_t dptr, size_t bytes, int device, void *stream);
/* Usage hints for managed memory (cuMemAdvise). */
typedef enum uk_mem_advice {
  UK_ADVISE_SET_READ_MOSTLY = 1,
  UK_ADVISE_UNSET_READ_MOSTLY,
  UK_ADVISE_SET_PREFERRED_LOCATION,
  UK_ADVISE_UNSET_PREFERRED_LOCATION,
  UK_ADVISE_SET_ACCESSED_BY,
  UK_ADVISE_UNSET_ACCESSED_BY
} uk_mem_advice;
/* Gives `advice` for [dptr, dptr + bytes) about `device` (UK_DEVICE_CPU:
 * the host; ignored by the read-mostly advices). bytes 0 is a no-op.
 * UK_ERR_INVALID: an unknown advice, a NULL dptr. */
UK_API uk_status uk_managed_advise(uint64_t dptr, size_t bytes, uk_mem_advice advice, int device);

/* ------------------------------------------------------------------------ */
/* Pointer attributes                                                        */
/* ------------------------------------------------------------------------ */

/* What memory an address is in. */
typedef enum uk_memory_type {
  UK_MEMORY_UNREGISTERED = 0, /* host memory CUDA does not know */
  UK_MEMORY_HOST,             /* pinned or registered host memory */
  UK_MEMORY_DEVICE,           /* device memory */
  UK_MEMORY_MANAGED           /* managed memory (uk_managed_alloc) */
} uk_memory_type;
typedef struct uk_pointer_info {
  uk_memory_type type;
  int device;              /* the ordinal it was allocated or registered on; -1: none */
  void *context;           /* its CUcontext (NULL: none) */
  uint64_t device_pointer; /* the address kernels use for it (mapped host memory: its device address; 0: none) */
  uint64_t range_start;    /* the allocation holding it: first byte ... */
  size_t range_bytes;      /* ... and size (0 for unregistered memory) */
} uk_pointer_info;
/* Describes the memory at address `ptr` (a device address or a host
 * address cast to uint64_t), in one driver query. Memory CUDA does not know
 * is not an error: type UK_MEMORY_UNREGISTERED, device -1, the rest 0.
 * UK_ERR_INVALID: NULL out. Thread-safe. */
UK_API uk_status uk_pointer_info_get(uint64_t ptr, uk_pointer_info *out);

/* Free and total memory of `device`, in bytes. */
UK_API uk_status uk_mem_get_info(int device, size_t *free_bytes, size_t *total_bytes);

/* Pinned host memory flags (bits): UK_HOST_PORTABLE (pinned for every
 * context), UK_HOST_MAPPED (also addressable from the device:
 * uk_host_device_pointer), UK_HOST_WRITE_COMBINED (uk_host_alloc only:
 * fast host writes and device reads, slow host reads). */
typedef enum uk_host_flag {
  UK_HOST_PORTABLE = 1,
  UK_HOST_MAPPED = 2,
  UK_HOST_WRITE_COMBINED = 4
} uk_host_flag;
/* Allocates `bytes` of page-locked host memory (in the current context, or
 * device 0's when the thread has none). The caller frees it with
 * uk_host_free. Thread-safe. */
UK_API uk_status uk_host_alloc(size_t bytes, unsigned flags, void **p);
/* Frees memory from uk_host_alloc. NULL: no-op. */
UK_API uk_status uk_host_free(void *p);
/* Page-locks existing host memory [p, p + bytes) (flags: UK_HOST_PORTABLE,
 * UK_HOST_MAPPED); the caller keeps owning it and must uk_host_unregister
 * it before freeing it. */
UK_API uk_status uk_host_register(void *p, size_t bytes, unsigned flags);
/* Undoes uk_host_register (p: the same address). */
UK_API uk_status uk_host_unregister(void *p);
/* The device address of mapped pinned memory (UK_HOST_MAPPED). */
UK_API uk_status uk_host_device_pointer(void *p, uint64_t *dptr);

/* Copies the view `src` (device memory; any dtype and strides, also zero
 * and negative) into C-contiguous device memory, ordered on `stream`:
 * into *dst when dst->data != 0 (src's dtype and shape, C-contiguous:
 * UK_ERR_INVALID otherwise), else into memory allocated with the context's
 * allocator (*dst filled in; free with uk_array_free). A contiguous src is
 * one device copy; others are gathered by an elementwise kernel that the
 * context compiles at first use and keeps. Thread-safe. */
UK_API uk_status uk_array_copy_contiguous(uk_context *ctx, const uk_array *src, uk_array *dst, void *stream);
/* Copies the view `src` into host memory in C order (uk_array_size(src) *
 * itemsize bytes; `bytes` is what `host` holds: UK_ERR_INVALID when less),
 * through a temporary contiguous copy for a strided view; ordered on
 * `stream` and waits for it. */
UK_API uk_status uk_array_to_host(uk_context *ctx, const uk_array *src, void *host, size_t bytes, void *stream);

/* ------------------------------------------------------------------------ */
/* Device attributes and peer access                                         */
/* ------------------------------------------------------------------------ */

/* Any driver device attribute by name: CUdevice_attribute's enum name with
 * or without the CU_DEVICE_ATTRIBUTE_ prefix, any case
 * ("max_shared_memory_per_block_optin", "CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE").
 * UK_ERR_INVALID for an unknown name (checked before the driver is loaded;
 * the message suggests the closest name) or device. Thread-safe. */
UK_API uk_status uk_device_attribute(int ordinal, const char *attribute, int *value);
/* *can = 1 when `device` can access memory of `peer` directly (1 for
 * device == peer). */
UK_API uk_status uk_device_can_access_peer(int device, int peer, int *can);
/* Lets kernels and copies on `device` access memory of `peer` (for the
 * primary contexts, one direction; enabling it twice is fine).
 * UK_ERR_INVALID for device == peer. */
UK_API uk_status uk_device_enable_peer_access(int device, int peer);
/* Undoes uk_device_enable_peer_access (UK_ERR_CUDA saying
 * CUDA_ERROR_PEER_ACCESS_NOT_ENABLED when it was not enabled).
 * UK_ERR_INVALID for device == peer. */
UK_API uk_status uk_device_disable_peer_access(int device, int peer);
/* Copies `bytes` from `src` on device src_device to `dst` on device
 * dst_device (peer access need not be enabled: the driver stages the copy
 * through the host when it is not). Synchronous, or ordered on `stream`
 * (a stream of either device; NULL: the legacy stream). bytes 0 is a no-op;
 * UK_ERR_INVALID: a NULL address, a device that does not exist. */
UK_API uk_status uk_memcpy_peer(uint64_t dst, int dst_device, uint64_t src, int src_device, size_t bytes);
UK_API uk_status uk_memcpy_peer_async(uint64_t dst, int dst_device, uint64_t src, int src_device, size_t bytes,
                                      void *stream);

/* The device whose PCI bus id is `bus_id` ("domain:bus:device.function"
 * in hex, as nvidia-smi and uk_device_pci_bus_id write it, e.g.
 * "0000:3b:00.0"). UK_ERR_NOT_FOUND when no device has it. */
UK_API uk_status uk_device_by_pci_bus_id(const char *bus_id, int *device);
/* Writes `device`'s PCI bus id, NUL-terminated, into bus_id (`size`
 * bytes, at least 13). UK_ERR_INVALID for a NULL or short buffer. */
UK_API uk_status uk_device_pci_bus_id(int device, char *bus_id, size_t size);

/* ------------------------------------------------------------------------ */
/* Context limits, cache configuration, profiler                             */
/* ------------------------------------------------------------------------ */

/* Limits of a device's primary context (the values are the driver's
 * CUlimit ones). Device-runtime limits concern kernels that launch kernels;
 * UK_LIMIT_DEV_RUNTIME_SYNC_DEPTH is refused by drivers whose device
 * runtime has no device-side synchronisation (CUDA 12+ on sm_90: UK_ERR_CUDA
 * with CUDA_ERROR_UNSUPPORTED_LIMIT). */
typedef enum uk_limit {
  UK_LIMIT_STACK_SIZE = 0,                  /* bytes of stack per GPU thread */
  UK_LIMIT_PRINTF_FIFO_SIZE,                /* bytes of the device printf FIFO */
  UK_LIMIT_MALLOC_HEAP_SIZE,                /* bytes of the device malloc heap */
  UK_LIMIT_DEV_RUNTIME_SYNC_DEPTH,          /* nesting depth of device-side synchronisation */
  UK_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT /* device-side launches that may be pending */
} uk_limit;
/* Reads a limit of `device`'s primary context. UK_ERR_INVALID: an unknown
 * limit, NULL value. Thread-safe. */
UK_API uk_status uk_device_get_limit(int device, uk_limit limit, size_t *value);
/* Sets it (the driver may round it up; read it back). Thread-safe; it
 * affects every user of the device's primary context. */
UK_API uk_status uk_device_set_limit(int device, uk_limit limit, size_t value);

/* Preferred split of on-chip memory between L1 and shared memory (a hint;
 * the driver's CUfunc_cache values). */
typedef enum uk_cache_config {
  UK_CACHE_PREFER_NONE = 0,
  UK_CACHE_PREFER_SHARED,
  UK_CACHE_PREFER_L1,
  UK_CACHE_PREFER_EQUAL
} uk_cache_config;
/* The cache preference of `device`'s primary context, for kernels that
 * set none of their own. UK_ERR_INVALID: an unknown value, NULL out. */
UK_API uk_status uk_device_set_cache_config(int device, uk_cache_config config);
UK_API uk_status uk_device_get_cache_config(int device, uk_cache_config *config);
/* The cache preference of one kernel, on every device it is or will be
 * used on (as uk_function_set_attribute). UK_ERR_INVALID: NULL f or an
 * unknown value. Thread-safe. */
UK_API uk_status uk_function_set_cache_config(uk_function *f, uk_cache_config config);

/* Starts and stops collection by an attached profiler (Nsight Systems
 * with --capture-range=cudaProfilerApi, ...), in the current context
 * (device 0's when the thread has none). Without a profiler they do
 * nothing and succeed. */
UK_API uk_status uk_profiler_start(void);
UK_API uk_status uk_profiler_stop(void);

/* ------------------------------------------------------------------------ */
/* Interprocess sharing (IPC)                                                */
/* ------------------------------------------------------------------------ */

/* Opaque handles that another process on the same host opens; plain bytes
 * (send them through a pipe, a file, shared memory). */
typedef struct uk_ipc_mem_handle { unsigned char bytes[64]; } uk_ipc_mem_handle;
typedef struct uk_ipc_event_handle { unsigned char bytes[64]; } uk_ipc_event_handle;
/* Flags of uk_ipc_mem_open: UK_IPC_LAZY_ENABLE_PEER_ACCESS lets the
 * memory of another device be opened, enabling peer access as needed. The
 * driver accepts no open without it, so ukern always passes it: 0 means the
 * same (PyCUDA's default). */
typedef enum uk_ipc_flag { UK_IPC_LAZY_ENABLE_PEER_ACCESS = 1 } uk_ipc_flag;
/* A handle for the allocation starting at `dptr`: the address that
 * uk_mem_alloc or uk_mem_alloc_pitch gave. Memory from a stream-ordered
 * pool, such as ukern's default allocator's, cannot be shared this way
 * (UK_ERR_CUDA saying so). The memory must outlive every process's use of
 * it. UK_ERR_INVALID: NULL dptr or handle. Thread-safe. */
UK_API uk_status uk_ipc_mem_get_handle(uint64_t dptr, uk_ipc_mem_handle *handle);
/* Maps memory of another process into this one, in `device`'s primary
 * context; *dptr is the start of the allocation. The opener releases it
 * with uk_ipc_mem_close (never uk_mem_free). A process cannot open its own
 * handles (UK_ERR_CUDA). UK_ERR_INVALID: NULL arguments or unknown flags. */
UK_API uk_status uk_ipc_mem_open(int device, const uk_ipc_mem_handle *handle, unsigned flags, uint64_t *dptr);
/* Unmaps memory from uk_ipc_mem_open. 0: no-op. */
UK_API uk_status uk_ipc_mem_close(uint64_t dptr);
/* A handle for an event made with UK_EVENT_INTERPROCESS |
 * UK_EVENT_DISABLE_TIMING. */
UK_API uk_status uk_ipc_event_get_handle(void *event, uk_ipc_event_handle *handle);
/* Opens another process's event in `device`'s primary context: record it,
 * wait on it, query it like an own event; destroy it with
 * uk_event_destroy. */
UK_API uk_status uk_ipc_event_open(int device, const uk_ipc_event_handle *handle, void **event);

/* ------------------------------------------------------------------------ */
/* Textures and surfaces                                                     */
/* ------------------------------------------------------------------------ */

/* A CUDA array: opaque texture memory of 1, 2 or 3 dimensions, laid out by
 * the driver for 2-D/3-D locality, made and filled by ukern. Texels are
 * int8/16/32, uint8/16/32, float16 or float32 with 1, 2 or 4 channels. */
typedef struct uk_cuda_array uk_cuda_array;
/* Flags of uk_cuda_array_create: UK_CUDA_ARRAY_SURFACE also allows surface
 * objects (uk_surface_from_array: kernels write it with surf*Dwrite). */
typedef enum uk_cuda_array_flag { UK_CUDA_ARRAY_SURFACE = 1 } uk_cuda_array_flag;
/* Creates an array on `device` of extent[0..ndim-1] texels (width, height,
 * depth; ndim 1..3, none 0). UK_ERR_TYPE for a dtype textures cannot hold;
 * UK_ERR_INVALID for bad channels, ndim, extent or flags. The caller owns it:
 * uk_cuda_array_destroy (after the textures and surfaces made from it). */
UK_API uk_status uk_cuda_array_create(int device, uk_dtype dtype, int channels, int ndim, const size_t *extent,
                                      unsigned flags, uk_cuda_array **out);
/* NULL is a no-op. */
UK_API void uk_cuda_array_destroy(uk_cuda_array *a);
/* Fills the whole array from packed texels in C order of (depth, height,
 * width, channel), host memory; synchronous. */
UK_API uk_status uk_cuda_array_from_host(uk_cuda_array *a, const void *host);
/* The whole array into packed host memory (same order); synchronous. */
UK_API uk_status uk_cuda_array_to_host(uk_cuda_array *a, void *host);
/* The same from and to packed device memory. */
UK_API uk_status uk_cuda_array_from_device(uk_cuda_array *a, uint64_t src);
UK_API uk_status uk_cuda_array_to_device(uk_cuda_array *a, uint64_t dst);

/* One side of a 3-D copy: linear device memory (address ptr), host memory
 * (ptr = the address cast to uint64_t) or a CUDA array. Linear memory is
 * read as slices of `height` rows, rows `pitch` bytes apart; the copied box
 * starts at byte x of row y of slice z (for an array: byte x of texel row
 * y, layer z; pitch and height unused). */
typedef enum uk_copy_kind { UK_COPY_DEVICE = 0, UK_COPY_HOST, UK_COPY_ARRAY } uk_copy_kind;
typedef struct uk_copy_3d_side {
  uk_copy_kind kind;
  uint64_t ptr;           /* UK_COPY_DEVICE / UK_COPY_HOST */
  uk_cuda_array *array;   /* UK_COPY_ARRAY */
  size_t pitch, height;   /* linear memory: bytes per row, rows per slice */
  size_t x, y, z;         /* start of the box: x in bytes, y rows, z slices */
} uk_copy_3d_side;
/* A box of width_bytes x height x depth between two sides. */
typedef struct uk_copy_3d {
  uk_copy_3d_side src, dst;
  size_t width_bytes, height, depth;
} uk_copy_3d;
/* Copies as described (synchronous; the _async form ordered on `stream`).
 * Any pairing of device, host and array memory (host to host included).
 * An empty box is a no-op. UK_ERR_INVALID: NULL c, an unknown kind, a NULL
 * address or array, a linear side whose pitch is less than x + width_bytes
 * or whose height is less than y + height. Thread-safe. */
UK_API uk_status uk_memcpy_3d(const uk_copy_3d *c);
UK_API uk_status uk_memcpy_3d_async(const uk_copy_3d *c, void *stream);

/* How a texture answers coordinates outside it (per axis). Wrap and mirror
 * need normalised coordinates. */
typedef enum uk_address_mode {
  UK_ADDRESS_CLAMP = 0, UK_ADDRESS_WRAP, UK_ADDRESS_MIRROR, UK_ADDRESS_BORDER
} uk_address_mode;
/* Point: the nearest texel; linear: (bi/tri)linear interpolation of the
 * neighbours, with weights in 9-bit fixed point (8 fraction bits). */
typedef enum uk_filter_mode { UK_FILTER_POINT = 0, UK_FILTER_LINEAR } uk_filter_mode;
/* Element type: texels read as stored; normalised float: 8- and 16-bit
 * integer texels read as floats in [0, 1] (unsigned) or [-1, 1] (signed). */
typedef enum uk_read_mode { UK_READ_ELEMENT_TYPE = 0, UK_READ_NORMALIZED_FLOAT } uk_read_mode;
/* Sampling settings; all zero (or a NULL pointer) = clamp, point, element
 * type, unnormalised coordinates. Linear filtering of integer texels needs
 * UK_READ_NORMALIZED_FLOAT. */
typedef struct uk_texture_desc {
  uk_address_mode address[3]; /* x, y, z */
  uk_filter_mode filter;
  uk_read_mode read;
  int normalized_coords;      /* non-zero: coordinates in [0, 1) span the texture */
  float border_color[4];      /* for UK_ADDRESS_BORDER */
} uk_texture_desc;

/* A texture object over `width` texels of linear device memory (tex1Dfetch
 * only; dptr aligned as the device's texture_alignment attribute says).
 * *tex is passed to kernels with uk_arg_texture (ElementwiseKernel) or as a
 * cudaTextureObject_t parameter; the caller destroys it with
 * uk_texture_destroy before freeing the memory. Thread-safe. */
UK_API uk_status uk_texture_from_linear(uint64_t dptr, uk_dtype dtype, int channels, size_t width,
                                        const uk_texture_desc *desc, uint64_t *tex);
/* A 2-D texture over pitched device memory (rows `pitch` bytes apart, e.g.
 * from uk_mem_alloc_pitch). */
UK_API uk_status uk_texture_from_pitch2d(uint64_t dptr, uk_dtype dtype, int channels, size_t width, size_t height,
                                         size_t pitch, const uk_texture_desc *desc, uint64_t *tex);
/* A 1-, 2- or 3-D texture over a CUDA array. */
UK_API uk_status uk_texture_from_array(uk_cuda_array *a, const uk_texture_desc *desc, uint64_t *tex);
/* Destroys a texture object. 0: no-op. */
UK_API uk_status uk_texture_destroy(uint64_t tex);
/* A surface object over an array made with UK_CUDA_ARRAY_SURFACE (a
 * cudaSurfaceObject_t parameter of a kernel). */
UK_API uk_status uk_surface_from_array(uk_cuda_array *a, uint64_t *surf);
/* Destroys a surface object. 0: no-op. */
UK_API uk_status uk_surface_destroy(uint64_t surf);

#ifdef __cplusplus
}
#endif

#endif /* UKERN_RUNTIME_H */
