/* Copies and memsets: host<->device and device<->device, linear and 2-D
 * pitched, synchronous and stream-ordered; linear and pitched allocations
 * (3-D copies: copy3d.c; between devices: peer.c).
 *
 * Synchronous calls run in the context of the device that owns the device
 * memory, so they are ordered after that device's legacy-stream work;
 * stream-ordered ones run in the stream's context (a NULL stream: as the
 * synchronous ones). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"

uk_status uk__pointer_enter(uint64_t dptr, int *pushed) {
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  int ordinal = -1;
  *pushed = 0;
  if (uk__cu.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)dptr) ==
          CUDA_SUCCESS &&
      ordinal >= 0)
    return uk__device_enter(ordinal, pushed);
  CUcontext cur = NULL;
  if (uk__cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur) return UK_OK;
  return uk__device_enter(0, pushed);
}

static uk_status enter(int async, void *stream, uint64_t dptr, int *pushed) {
  int device;
  if (async && stream) return uk__launch_enter(NULL, stream, &device, pushed);
  return uk__pointer_enter(dptr, pushed);
}

/* The driver's "synchronous" memsets and device-to-device copies return
 * before the device has finished them (CUDA's API synchronization rules);
 * ukern's synchronous forms wait, so that work on any other stream,
 * non-blocking ones included, sees their result. */
static CUresult host_wait(void) { return uk__cu.cuStreamSynchronize(NULL); }

typedef enum dir { HTOD, DTOH, DTOD } dir;

static uk_status copy(const char *api, dir d, uint64_t dst, uint64_t src, size_t bytes, int async,
                      void *stream) {
  uk__error_clear();
  if (!bytes) return UK_OK;
  if (!dst || !src) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !dst ? "dst" : "src");
  int pushed = 0;
  uk_status st = enter(async, stream, d == DTOH ? src : dst, &pushed);
  if (st != UK_OK) return st;
  CUstream s = (CUstream)stream;
  const void *hsrc = (const void *)(uintptr_t)src;
  void *hdst = (void *)(uintptr_t)dst;
  CUresult r;
  switch (d) {
  case HTOD:
    r = async ? uk__cu.cuMemcpyHtoDAsync(dst, hsrc, bytes, s) : uk__cu.cuMemcpyHtoD(dst, hsrc, bytes);
    break;
  case DTOH:
    r = async ? uk__cu.cuMemcpyDtoHAsync(hdst, src, bytes, s) : uk__cu.cuMemcpyDtoH(hdst, src, bytes);
    break;
  default:
    r = async ? uk__cu.cuMemcpyDtoDAsync(dst, src, bytes, s) : uk__cu.cuMemcpyDtoD(dst, src, bytes);
    break;
  }
  if (r == CUDA_SUCCESS && !async && d == DTOD) r = host_wait();
  uk__device_leave(pushed);
  if (r != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "%s (%zu bytes)", api, bytes);
    return uk__cu_error(r, what);
  }
  return UK_OK;
}

uk_status uk_memcpy_htod(uint64_t dst, const void *src, size_t bytes) {
  return copy("uk_memcpy_htod", HTOD, dst, (uint64_t)(uintptr_t)src, bytes, 0, NULL);
}

uk_status uk_memcpy_dtoh(void *dst, uint64_t src, size_t bytes) {
  return copy("uk_memcpy_dtoh", DTOH, (uint64_t)(uintptr_t)dst, src, bytes, 0, NULL);
}

uk_status uk_memcpy_dtod(uint64_t dst, uint64_t src, size_t bytes) {
  return copy("uk_memcpy_dtod", DTOD, dst, src, bytes, 0, NULL);
}

uk_status uk_memcpy_htod_async(uint64_t dst, const void *src, size_t bytes, void *stream) {
  return copy("uk_memcpy_htod_async", HTOD, dst, (uint64_t)(uintptr_t)src, bytes, 1, stream);
}

uk_status uk_memcpy_dtoh_async(void *dst, uint64_t src, size_t bytes, void *stream) {
  return copy("uk_memcpy_dtoh_async", DTOH, (uint64_t)(uintptr_t)dst, src, bytes, 1, stream);
}

uk_status uk_memcpy_dtod_async(uint64_t dst, uint64_t src, size_t bytes, void *stream) {
  return copy("uk_memcpy_dtod_async", DTOD, dst, src, bytes, 1, stream);
}

/* ------------------------------------------------------------------------ */
/* Memset                                                                    */
/* ------------------------------------------------------------------------ */

static uk_status fill(const char *api, unsigned width, uint64_t dst, uint32_t value, size_t count, int async,
                      void *stream) {
  uk__error_clear();
  if (!count) return UK_OK;
  if (!dst) return uk__errorf(UK_ERR_INVALID, "%s: dst is NULL", api);
  if (dst % width)
    return uk__errorf(UK_ERR_INVALID, "%s: dst 0x%llx is not %u-byte aligned", api, (unsigned long long)dst, width);
  int pushed = 0;
  uk_status st = enter(async, stream, dst, &pushed);
  if (st != UK_OK) return st;
  CUstream s = (CUstream)stream;
  CUresult r = CUDA_SUCCESS;
  if (width == 1) {
    r = async ? uk__cu.cuMemsetD8Async(dst, (unsigned char)value, count, s)
              : uk__cu.cuMemsetD8(dst, (unsigned char)value, count);
  } else if (width == 2) {
    if ((st = async ? uk__cu_need(cuMemsetD16Async) : uk__cu_need(cuMemsetD16)) == UK_OK)
      r = async ? uk__cu.cuMemsetD16Async(dst, (unsigned short)value, count, s)
                : uk__cu.cuMemsetD16(dst, (unsigned short)value, count);
  } else if (async) {
    r = uk__cu.cuMemsetD32Async(dst, value, count, s);
  } else if ((st = uk__cu_need(cuMemsetD32)) == UK_OK) {
    r = uk__cu.cuMemsetD32(dst, value, count);
  }
  if (st == UK_OK && r == CUDA_SUCCESS && !async) r = host_wait();
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  if (r != CUDA_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "%s (%zu elements)", api, count);
    return uk__cu_error(r, what);
  }
  return UK_OK;
}

uk_status uk_memset_d8(uint64_t dst, uint8_t value, size_t count) {
  return fill("uk_memset_d8", 1, dst, value, count, 0, NULL);
}
uk_status uk_memset_d16(uint64_t dst, uint16_t value, size_t count) {
  return fill("uk_memset_d16", 2, dst, value, count, 0, NULL);
}
uk_status uk_memset_d32(uint64_t dst, uint32_t value, size_t count) {
  return fill("uk_memset_d32", 4, dst, value, count, 0, NULL);
}
uk_status uk_memset_d8_async(uint64_t dst, uint8_t value, size_t count, void *stream) {
  return fill("uk_memset_d8_async", 1, dst, value, count, 1, stream);
}
uk_status uk_memset_d16_async(uint64_t dst, uint16_t value, size_t count, void *stream) {
  return fill("uk_memset_d16_async", 2, dst, value, count, 1, stream);
}
uk_status uk_memset_d32_async(uint64_t dst, uint32_t value, size_t count, void *stream) {
  return fill("uk_memset_d32_async", 4, dst, value, count, 1, stream);
}

/* 2-D: `height` rows of `width` values, `pitch` bytes apart. */
static uk_status fill_2d(const char *api, unsigned w, uint64_t dst, size_t pitch, uint32_t value, size_t width,
                         size_t height, int async, void *stream) {
  uk__error_clear();
  if (!width || !height) return UK_OK;
  if (!dst) return uk__errorf(UK_ERR_INVALID, "%s: dst is NULL", api);
  if (dst % w || pitch % w)
    return uk__errorf(UK_ERR_INVALID, "%s: %s %llu is not a multiple of the %u-byte value", api,
                      dst % w ? "dst" : "pitch", (unsigned long long)(dst % w ? dst : pitch), w);
  if (pitch / w < width)
    return uk__errorf(UK_ERR_INVALID, "%s: rows of %zu values (%u bytes each) do not fit a pitch of %zu bytes", api,
                      width, w, pitch);
  int pushed = 0;
  uk_status st = enter(async, stream, dst, &pushed);
  if (st != UK_OK) return st;
  CUstream s = (CUstream)stream;
  CUresult r = CUDA_SUCCESS;
  if (w == 1) {
    if ((st = async ? uk__cu_need(cuMemsetD2D8Async) : uk__cu_need(cuMemsetD2D8)) == UK_OK)
      r = async ? uk__cu.cuMemsetD2D8Async(dst, pitch, (unsigned char)value, width, height, s)
                : uk__cu.cuMemsetD2D8(dst, pitch, (unsigned char)value, width, height);
  } else if (w == 2) {
    if ((st = async ? uk__cu_need(cuMemsetD2D16Async) : uk__cu_need(cuMemsetD2D16)) == UK_OK)
      r = async ? uk__cu.cuMemsetD2D16Async(dst, pitch, (unsigned short)value, width, height, s)
                : uk__cu.cuMemsetD2D16(dst, pitch, (unsigned short)value, width, height);
  } else if ((st = async ? uk__cu_need(cuMemsetD2D32Async) : uk__cu_need(cuMemsetD2D32)) == UK_OK) {
    r = async ? uk__cu.cuMemsetD2D32Async(dst, pitch, value, width, height, s)
              : uk__cu.cuMemsetD2D32(dst, pitch, value, width, height);
  }
  if (st == UK_OK && r == CUDA_SUCCESS && !async) r = host_wait();
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  return r == CUDA_SUCCESS ? UK_OK
                           : uk__cu_errorf(r, "%s (%zu rows of %zu values, pitch %zu)", api, height, width, pitch);
}

uk_status uk_memset_2d_d8(uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t height) {
  return fill_2d("uk_memset_2d_d8", 1, dst, pitch, value, width, height, 0, NULL);
}
uk_status uk_memset_2d_d16(uint64_t dst, size_t pitch, uint16_t value, size_t width, size_t height) {
  return fill_2d("uk_memset_2d_d16", 2, dst, pitch, value, width, height, 0, NULL);
}
uk_status uk_memset_2d_d32(uint64_t dst, size_t pitch, uint32_t value, size_t width, size_t height) {
  return fill_2d("uk_memset_2d_d32", 4, dst, pitch, value, width, height, 0, NULL);
}
uk_status uk_memset_2d_d8_async(uint64_t dst, size_t pitch, uint8_t value, size_t width, size_t height,
                                void *stream) {
  return fill_2d("uk_memset_2d_d8_async", 1, dst, pitch, value, width, height, 1, stream);
}
uk_status uk_memset_2d_d16_async(uint64_t dst, size_t pitch, uint16_t value, size_t width, size_t height,
                                 void *stream) {
  return fill_2d("uk_memset_2d_d16_async", 2, dst, pitch, value, width, height, 1, stream);
}
uk_status uk_memset_2d_d32_async(uint64_t dst, size_t pitch, uint32_t value, size_t width, size_t height,
                                 void *stream) {
  return fill_2d("uk_memset_2d_d32_async", 4, dst, pitch, value, width, height, 1, stream);
}

/* ------------------------------------------------------------------------ */
/* 2-D pitched copies and allocations                                        */
/* ------------------------------------------------------------------------ */

static uk_status copy_2d(const char *api, const uk_copy_2d *c, int async, void *stream) {
  uk__error_clear();
  if (!c) return uk__errorf(UK_ERR_INVALID, "%s: c is NULL", api);
  if (!c->width_bytes || !c->height) return UK_OK;
  if (!c->src || !c->dst) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !c->src ? "src" : "dst");
  if (c->src_pitch < c->width_bytes || c->dst_pitch < c->width_bytes)
    return uk__errorf(UK_ERR_INVALID, "%s: rows of %zu bytes do not fit a %s pitch of %zu bytes", api, c->width_bytes,
                      c->src_pitch < c->width_bytes ? "src" : "dst",
                      c->src_pitch < c->width_bytes ? c->src_pitch : c->dst_pitch);
  if (c->src_host && c->dst_host) return uk__errorf(UK_ERR_INVALID, "%s: both sides are host memory", api);
  CUDA_MEMCPY2D m;
  memset(&m, 0, sizeof m);
  m.srcMemoryType = c->src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  m.dstMemoryType = c->dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (c->src_host) m.srcHost = (const void *)(uintptr_t)c->src;
  else m.srcDevice = (CUdeviceptr)c->src;
  if (c->dst_host) m.dstHost = (void *)(uintptr_t)c->dst;
  else m.dstDevice = (CUdeviceptr)c->dst;
  m.srcPitch = c->src_pitch;
  m.dstPitch = c->dst_pitch;
  m.WidthInBytes = c->width_bytes;
  m.Height = c->height;
  int pushed = 0;
  uk_status st = enter(async, stream, c->dst_host ? c->src : c->dst, &pushed);
  if (st != UK_OK) return st;
  CUresult r = CUDA_SUCCESS;
  if ((st = async ? uk__cu_need(cuMemcpy2DAsync) : uk__cu_need(cuMemcpy2D)) == UK_OK)
    r = async ? uk__cu.cuMemcpy2DAsync(&m, (CUstream)stream) : uk__cu.cuMemcpy2D(&m);
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  if (r != CUDA_SUCCESS) {
    char what[128];
    snprintf(what, sizeof what, "%s (%zu rows of %zu bytes)", api, c->height, c->width_bytes);
    return uk__cu_error(r, what);
  }
  return UK_OK;
}

uk_status uk_memcpy_2d(const uk_copy_2d *c) { return copy_2d("uk_memcpy_2d", c, 0, NULL); }

uk_status uk_memcpy_2d_async(const uk_copy_2d *c, void *stream) {
  return copy_2d("uk_memcpy_2d_async", c, 1, stream);
}

uk_status uk_mem_alloc_pitch(int device, size_t width_bytes, size_t height, unsigned element_bytes,
                             uint64_t *dptr, size_t *pitch) {
  uk__error_clear();
  if (!dptr || !pitch) return uk__errorf(UK_ERR_INVALID, "uk_mem_alloc_pitch: %s is NULL", !dptr ? "dptr" : "pitch");
  if (element_bytes != 4 && element_bytes != 8 && element_bytes != 16)
    return uk__errorf(UK_ERR_INVALID, "uk_mem_alloc_pitch: element_bytes is %u (4, 8 or 16)", element_bytes);
  if (!width_bytes || !height)
    return uk__errorf(UK_ERR_INVALID, "uk_mem_alloc_pitch: an empty allocation (%zu x %zu)", width_bytes, height);
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUdeviceptr p = 0;
  size_t pt = 0;
  if ((st = uk__cu_need(cuMemAllocPitch)) == UK_OK)
    st = uk__cu_check(uk__cu.cuMemAllocPitch(&p, &pt, width_bytes, height, element_bytes), "cuMemAllocPitch");
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  *dptr = (uint64_t)p;
  *pitch = pt;
  return UK_OK;
}

uk_status uk_mem_alloc(int device, size_t bytes, uint64_t *dptr) {
  uk__error_clear();
  if (!dptr) return uk__errorf(UK_ERR_INVALID, "uk_mem_alloc: dptr is NULL");
  if (!bytes) return uk__errorf(UK_ERR_INVALID, "uk_mem_alloc: bytes is 0 (allocate at least one byte)");
  int pushed = 0;
  uk_status st = uk__device_enter(device, &pushed);
  if (st != UK_OK) return st;
  CUdeviceptr p = 0;
  CUresult r = uk__cu.cuMemAlloc(&p, bytes);
  if (r != CUDA_SUCCESS) st = uk__cu_errorf(r, "cuMemAlloc(%zu bytes, device %d)", bytes, device);
  uk__device_leave(pushed);
  if (st == UK_OK) *dptr = (uint64_t)p;
  return st;
}

uk_status uk_mem_free(uint64_t dptr) {
  uk__error_clear();
  if (!dptr) return UK_OK;
  int pushed = 0;
  uk_status st = uk__pointer_enter(dptr, &pushed);
  if (st != UK_OK) return st;
  st = uk__cu_check(uk__cu.cuMemFree((CUdeviceptr)dptr), "cuMemFree");
  uk__device_leave(pushed);
  return st;
}
