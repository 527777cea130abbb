/* Texture and surface objects over linear memory, pitched 2-D memory and
 * CUDA arrays (1-, 2- and 3-D, created and filled by ukern), so that a C
 * user can make what ElementwiseKernel's texture arguments take without
 * the driver API. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "runtime/device.h"
#include "runtime/texture.h"

struct uk_cuda_array {
  CUarray array;
  int device;
  uk_dtype dtype;
  int channels, ndim;
  size_t extent[3]; /* width, height, depth; 1 past ndim */
};

void uk__cuda_array_handle(const uk_cuda_array *a, CUarray *array, int *device) {
  *array = a->array;
  *device = a->device;
}

/* The array format of a dtype; 0 when textures cannot hold it. */
static CUarray_format format_of(uk_dtype t) {
  switch (t) {
  case UK_UINT8: return CU_AD_FORMAT_UNSIGNED_INT8;
  case UK_INT8: return CU_AD_FORMAT_SIGNED_INT8;
  case UK_UINT16: return CU_AD_FORMAT_UNSIGNED_INT16;
  case UK_INT16: return CU_AD_FORMAT_SIGNED_INT16;
  case UK_UINT32: return CU_AD_FORMAT_UNSIGNED_INT32;
  case UK_INT32: return CU_AD_FORMAT_SIGNED_INT32;
  case UK_FLOAT16: return CU_AD_FORMAT_HALF;
  case UK_FLOAT32: return CU_AD_FORMAT_FLOAT;
  default: return (CUarray_format)0;
  }
}

static uk_status check_format(const char *api, uk_dtype t, int channels, CUarray_format *f) {
  if (!(*f = format_of(t)))
    return uk__errorf(UK_ERR_TYPE, "%s: textures and CUDA arrays hold int8/16/32, uint8/16/32, float16 or float32, "
                      "not %s", api, uk_dtype_name(t) ? uk_dtype_name(t) : "an invalid dtype");
  if (channels != 1 && channels != 2 && channels != 4)
    return uk__errorf(UK_ERR_INVALID, "%s: channels is %d (1, 2 or 4)", api, channels);
  return UK_OK;
}

static size_t element_bytes(const uk_cuda_array *a) { return uk_dtype_size(a->dtype) * (size_t)a->channels; }

uk_status uk_cuda_array_create(int device, uk_dtype dtype, int channels, int ndim, const size_t *extent,
                               unsigned flags, uk_cuda_array **out) {
  uk__error_clear();
  static const char api[] = "uk_cuda_array_create";
  if (!extent || !out) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !extent ? "extent" : "out");
  CUarray_format f;
  uk_status st = check_format(api, dtype, channels, &f);
  if (st != UK_OK) return st;
  if (ndim < 1 || ndim > 3) return uk__errorf(UK_ERR_INVALID, "%s: ndim is %d (1, 2 or 3)", api, ndim);
  if (flags & ~(unsigned)UK_CUDA_ARRAY_SURFACE)
    return uk__errorf(UK_ERR_INVALID, "%s: unknown flags 0x%x (known: UK_CUDA_ARRAY_SURFACE)", api,
                      flags & ~(unsigned)UK_CUDA_ARRAY_SURFACE);
  for (int d = 0; d < ndim; d++)
    if (!extent[d]) return uk__errorf(UK_ERR_INVALID, "%s: extent[%d] is 0", api, d);
  uk_cuda_array *a = calloc(1, sizeof *a);
  if (!a) return uk__errorf(UK_ERR_NOMEM, "%s: out of memory", api);
  a->device = device, a->dtype = dtype, a->channels = channels, a->ndim = ndim;
  for (int d = 0; d < 3; d++) a->extent[d] = d < ndim ? extent[d] : 1;
  CUDA_ARRAY3D_DESCRIPTOR desc;
  memset(&desc, 0, sizeof desc);
  desc.Width = extent[0];
  desc.Height = ndim > 1 ? extent[1] : 0;
  desc.Depth = ndim > 2 ? extent[2] : 0;
  desc.Format = f;
  desc.NumChannels = (unsigned)channels;
  desc.Flags = flags & UK_CUDA_ARRAY_SURFACE ? CUDA_ARRAY3D_SURFACE_LDST : 0;
  int pushed = 0;
  if ((st = uk__device_enter(device, &pushed)) == UK_OK) {
    if ((st = uk__cu_need(cuArray3DCreate)) == UK_OK)
      st = uk__cu_check(uk__cu.cuArray3DCreate(&a->array, &desc), "cuArray3DCreate");
    uk__device_leave(pushed);
  }
  if (st != UK_OK) {
    free(a);
    return st;
  }
  *out = a;
  return UK_OK;
}

void uk_cuda_array_destroy(uk_cuda_array *a) {
  if (!a) return;
  if (a->array && uk__cu_need(cuArrayDestroy) == UK_OK) uk__cu.cuArrayDestroy(a->array);
  free(a);
}

/* Whole-array copy between `a` and packed host or device memory. */
static uk_status array_copy(const char *api, uk_cuda_array *a, int to_array, int host, uint64_t mem) {
  uk__error_clear();
  if (!a || !mem) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !a ? "a" : "the memory");
  CUDA_MEMCPY3D m;
  memset(&m, 0, sizeof m);
  size_t row = a->extent[0] * element_bytes(a);
  CUmemorytype mt = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
  if (to_array) {
    m.srcMemoryType = mt;
    if (host) m.srcHost = (const void *)(uintptr_t)mem;
    else m.srcDevice = (CUdeviceptr)mem;
    m.srcPitch = row;
    m.srcHeight = a->extent[1];
    m.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    m.dstArray = a->array;
  } else {
    m.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    m.srcArray = a->array;
    m.dstMemoryType = mt;
    if (host) m.dstHost = (void *)(uintptr_t)mem;
    else m.dstDevice = (CUdeviceptr)mem;
    m.dstPitch = row;
    m.dstHeight = a->extent[1];
  }
  m.WidthInBytes = row;
  m.Height = a->extent[1];
  m.Depth = a->extent[2];
  int pushed = 0;
  uk_status st = uk__device_enter(a->device, &pushed);
  if (st != UK_OK) return st;
  if ((st = uk__cu_need(cuMemcpy3D)) == UK_OK) st = uk__cu_check(uk__cu.cuMemcpy3D(&m), "cuMemcpy3D");
  uk__device_leave(pushed);
  return st;
}

uk_status uk_cuda_array_from_host(uk_cuda_array *a, const void *host) {
  return array_copy("uk_cuda_array_from_host", a, 1, 1, (uint64_t)(uintptr_t)host);
}
uk_status uk_cuda_array_to_host(uk_cuda_array *a, void *host) {
  return array_copy("uk_cuda_array_to_host", a, 0, 1, (uint64_t)(uintptr_t)host);
}
uk_status uk_cuda_array_from_device(uk_cuda_array *a, uint64_t src) {
  return array_copy("uk_cuda_array_from_device", a, 1, 0, src);
}
uk_status uk_cuda_array_to_device(uk_cuda_array *a, uint64_t dst) {
  return array_copy("uk_cuda_array_to_device", a, 0, 0, dst);
}

/* ------------------------------------------------------------------------ */
/* Texture and surface objects                                               */
/* ------------------------------------------------------------------------ */

static uk_status texture_desc(const char *api, const uk_texture_desc *d, int integer, CUDA_TEXTURE_DESC *td) {
  static const uk_texture_desc defaults; /* clamp, point, element type, unnormalised */
  static const CUaddress_mode modes[] = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_WRAP,
                                         CU_TR_ADDRESS_MODE_MIRROR, CU_TR_ADDRESS_MODE_BORDER};
  memset(td, 0, sizeof *td);
  if (!d) d = &defaults;
  for (int k = 0; k < 3; k++) {
    if ((unsigned)d->address[k] > UK_ADDRESS_BORDER)
      return uk__errorf(UK_ERR_INVALID, "%s: address[%d] is %d (a uk_address_mode)", api, k, (int)d->address[k]);
    td->addressMode[k] = modes[d->address[k]];
  }
  if ((unsigned)d->filter > UK_FILTER_LINEAR)
    return uk__errorf(UK_ERR_INVALID, "%s: filter is %d (a uk_filter_mode)", api, (int)d->filter);
  if ((unsigned)d->read > UK_READ_NORMALIZED_FLOAT)
    return uk__errorf(UK_ERR_INVALID, "%s: read is %d (a uk_read_mode)", api, (int)d->read);
  if (d->filter == UK_FILTER_LINEAR && integer && d->read == UK_READ_ELEMENT_TYPE)
    return uk__errorf(UK_ERR_INVALID, "%s: linear filtering of integer texels needs UK_READ_NORMALIZED_FLOAT", api);
  td->filterMode = d->filter == UK_FILTER_LINEAR ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
  /* The driver promotes integers to normalised floats unless told not to. */
  if (integer && d->read == UK_READ_ELEMENT_TYPE) td->flags |= CU_TRSF_READ_AS_INTEGER;
  if (d->normalized_coords) td->flags |= CU_TRSF_NORMALIZED_COORDINATES;
  memcpy(td->borderColor, d->border_color, sizeof td->borderColor);
  return UK_OK;
}

static int integer_format(CUarray_format f) { return f != CU_AD_FORMAT_FLOAT && f != CU_AD_FORMAT_HALF; }

static uk_status make_texture(const char *api, int device_or_neg, uint64_t dptr, const CUDA_RESOURCE_DESC *res,
                              const uk_texture_desc *desc, int integer, uint64_t *tex) {
  CUDA_TEXTURE_DESC td;
  uk_status st = texture_desc(api, desc, integer, &td);
  if (st != UK_OK) return st;
  int pushed = 0;
  st = device_or_neg >= 0 ? uk__device_enter(device_or_neg, &pushed) : uk__pointer_enter(dptr, &pushed);
  if (st != UK_OK) return st;
  CUtexObject t = 0;
  st = uk__cu_check(uk__cu.cuTexObjectCreate(&t, res, &td, NULL), "cuTexObjectCreate");
  uk__device_leave(pushed);
  if (st == UK_OK) *tex = (uint64_t)t;
  return st;
}

uk_status uk_texture_from_linear(uint64_t dptr, uk_dtype dtype, int channels, size_t width,
                                 const uk_texture_desc *desc, uint64_t *tex) {
  uk__error_clear();
  static const char api[] = "uk_texture_from_linear";
  if (!dptr || !tex) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !dptr ? "dptr" : "tex");
  CUarray_format f;
  uk_status st = check_format(api, dtype, channels, &f);
  if (st != UK_OK) return st;
  if (!width) return uk__errorf(UK_ERR_INVALID, "%s: width is 0", api);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = (CUdeviceptr)dptr;
  res.res.linear.format = f;
  res.res.linear.numChannels = (unsigned)channels;
  res.res.linear.sizeInBytes = width * uk_dtype_size(dtype) * (size_t)channels;
  return make_texture(api, -1, dptr, &res, desc, integer_format(f), tex);
}

uk_status uk_texture_from_pitch2d(uint64_t dptr, uk_dtype dtype, int channels, size_t width, size_t height,
                                  size_t pitch, const uk_texture_desc *desc, uint64_t *tex) {
  uk__error_clear();
  static const char api[] = "uk_texture_from_pitch2d";
  if (!dptr || !tex) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !dptr ? "dptr" : "tex");
  CUarray_format f;
  uk_status st = check_format(api, dtype, channels, &f);
  if (st != UK_OK) return st;
  if (!width || !height) return uk__errorf(UK_ERR_INVALID, "%s: an empty texture (%zu x %zu)", api, width, height);
  if (pitch < width * uk_dtype_size(dtype) * (size_t)channels)
    return uk__errorf(UK_ERR_INVALID, "%s: a pitch of %zu bytes is less than a row (%zu bytes)", api, pitch,
                      width * uk_dtype_size(dtype) * (size_t)channels);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_PITCH2D;
  res.res.pitch2D.devPtr = (CUdeviceptr)dptr;
  res.res.pitch2D.format = f;
  res.res.pitch2D.numChannels = (unsigned)channels;
  res.res.pitch2D.width = width;
  res.res.pitch2D.height = height;
  res.res.pitch2D.pitchInBytes = pitch;
  return make_texture(api, -1, dptr, &res, desc, integer_format(f), tex);
}

uk_status uk_texture_from_array(uk_cuda_array *a, const uk_texture_desc *desc, uint64_t *tex) {
  uk__error_clear();
  static const char api[] = "uk_texture_from_array";
  if (!a || !tex) return uk__errorf(UK_ERR_INVALID, "%s: %s is NULL", api, !a ? "a" : "tex");
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a->array;
  return make_texture(api, a->device, 0, &res, desc, integer_format(format_of(a->dtype)), tex);
}

uk_status uk_texture_destroy(uint64_t tex) {
  uk__error_clear();
  if (!tex) return UK_OK;
  uk_status st = uk__cu_load();
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuTexObjectDestroy((CUtexObject)tex), "cuTexObjectDestroy");
}

uk_status uk_surface_from_array(uk_cuda_array *a, uint64_t *surf) {
  uk__error_clear();
  if (!a || !surf) return uk__errorf(UK_ERR_INVALID, "uk_surface_from_array: %s is NULL", !a ? "a" : "surf");
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = a->array;
  int pushed = 0;
  uk_status st = uk__device_enter(a->device, &pushed);
  if (st != UK_OK) return st;
  CUsurfObject s = 0;
  if ((st = uk__cu_need(cuSurfObjectCreate)) == UK_OK)
    st = uk__cu_check(uk__cu.cuSurfObjectCreate(&s, &res),
                      "cuSurfObjectCreate (was the array made with UK_CUDA_ARRAY_SURFACE?)");
  uk__device_leave(pushed);
  if (st == UK_OK) *surf = (uint64_t)s;
  return st;
}

uk_status uk_surface_destroy(uint64_t surf) {
  uk__error_clear();
  if (!surf) return UK_OK;
  uk_status st = uk__cu_need(cuSurfObjectDestroy);
  if (st != UK_OK) return st;
  return uk__cu_check(uk__cu.cuSurfObjectDestroy((CUsurfObject)surf), "cuSurfObjectDestroy");
}
