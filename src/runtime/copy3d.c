/* 3-D copies between linear device memory, host memory and CUDA arrays
 * (cuMemcpy3D), synchronous or stream-ordered. */
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/texture.h"

/* Fills one side of the driver's descriptor; *device: the array's device,
 * else -1. */
static uk_status side(const char *api, const char *which, const uk_copy_3d_side *s, size_t width, size_t height,
                      CUmemorytype *type, const void **host, CUdeviceptr *dev, CUarray *array, size_t *x, size_t *y,
                      size_t *z, size_t *pitch, size_t *rows, int *device) {
  *device = -1;
  switch (s->kind) {
  case UK_COPY_ARRAY:
    if (!s->array) return uk__errorf(UK_ERR_INVALID, "%s: %s.array is NULL", api, which);
    *type = CU_MEMORYTYPE_ARRAY;
    uk__cuda_array_handle(s->array, array, device);
    break;
  case UK_COPY_DEVICE:
  case UK_COPY_HOST:
    if (!s->ptr) return uk__errorf(UK_ERR_INVALID, "%s: %s.ptr is NULL", api, which);
    if (s->pitch < s->x + width || s->pitch < width)
      return uk__errorf(UK_ERR_INVALID, "%s: %s.pitch %zu is less than x + width_bytes (%zu + %zu)", api, which,
                        s->pitch, s->x, width);
    if (s->height < s->y + height || s->height < height)
      return uk__errorf(UK_ERR_INVALID, "%s: %s.height %zu is less than y + height (%zu + %zu)", api, which,
                        s->height, s->y, height);
    *type = s->kind == UK_COPY_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    if (s->kind == UK_COPY_HOST) *host = (const void *)(uintptr_t)s->ptr;
    else *dev = (CUdeviceptr)s->ptr;
    *pitch = s->pitch;
    *rows = s->height;
    break;
  default:
    return uk__errorf(UK_ERR_INVALID, "%s: %s.kind %d is not UK_COPY_DEVICE, UK_COPY_HOST or UK_COPY_ARRAY", api,
                      which, (int)s->kind);
  }
  *x = s->x, *y = s->y, *z = s->z;
  return UK_OK;
}

static uk_status copy_3d(const char *api, const uk_copy_3d *c, int async, void *stream) {
  uk__error_clear();
  if (!c) return uk__errorf(UK_ERR_INVALID, "%s: c is NULL", api);
  if (!c->width_bytes || !c->height || !c->depth) return UK_OK;
  CUDA_MEMCPY3D m;
  memset(&m, 0, sizeof m);
  const void *unused_host = NULL;
  int sdev, ddev;
  uk_status st;
  if ((st = side(api, "src", &c->src, c->width_bytes, c->height, &m.srcMemoryType, &m.srcHost, &m.srcDevice,
                 &m.srcArray, &m.srcXInBytes, &m.srcY, &m.srcZ, &m.srcPitch, &m.srcHeight, &sdev)) != UK_OK)
    return st;
  if ((st = side(api, "dst", &c->dst, c->width_bytes, c->height, &m.dstMemoryType, &unused_host, &m.dstDevice,
                 &m.dstArray, &m.dstXInBytes, &m.dstY, &m.dstZ, &m.dstPitch, &m.dstHeight, &ddev)) != UK_OK)
    return st;
  if (c->dst.kind == UK_COPY_HOST) m.dstHost = (void *)(uintptr_t)c->dst.ptr;
  m.WidthInBytes = c->width_bytes;
  m.Height = c->height;
  m.Depth = c->depth;
  /* The context: the stream's; else an array's device; else the device
   * owning the device memory (as the linear copies do). */
  int pushed = 0, d;
  if (async && stream) st = uk__launch_enter(NULL, stream, &d, &pushed);
  else if (sdev >= 0 || ddev >= 0) st = uk__device_enter(ddev >= 0 ? ddev : sdev, &pushed);
  else st = uk__pointer_enter(c->dst.kind == UK_COPY_DEVICE ? c->dst.ptr : c->src.ptr, &pushed);
  if (st != UK_OK) return st;
  CUresult r = CUDA_SUCCESS;
  if ((st = async ? uk__cu_need(cuMemcpy3DAsync) : uk__cu_need(cuMemcpy3D)) == UK_OK)
    r = async ? uk__cu.cuMemcpy3DAsync(&m, (CUstream)stream) : uk__cu.cuMemcpy3D(&m);
  uk__device_leave(pushed);
  if (st != UK_OK) return st;
  return r == CUDA_SUCCESS ? UK_OK
                           : uk__cu_errorf(r, "%s (%zu x %zu x %zu bytes)", api, c->width_bytes, c->height, c->depth);
}

uk_status uk_memcpy_3d(const uk_copy_3d *c) { return copy_3d("uk_memcpy_3d", c, 0, NULL); }

uk_status uk_memcpy_3d_async(const uk_copy_3d *c, void *stream) { return copy_3d("uk_memcpy_3d_async", c, 1, stream); }
