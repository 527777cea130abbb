/* DLPack descriptors without a GPU: dtype mapping both ways, strides from
 * elements to bytes, byte_offset, NULL strides, and every refusal. */
#include "testutil.h"
#include "ukern/dlpack.h"

static DLTensor tensor(void *data, DLDataType dt, int ndim, int64_t *shape, int64_t *strides) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCUDA;
  t.device.device_id = 1;
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  t.strides = strides;
  return t;
}

static DLDataType dl(uint8_t code, uint8_t bits) {
  DLDataType d = {code, bits, 1};
  return d;
}

int main(void) {
  /* every dtype round-trips */
  for (int t = 0; t < UK_DTYPE_COUNT_; t++) {
    DLDataType d;
    uk_dtype back = UK_DTYPE_COUNT_;
    CHECK_OK(uk_dtype_to_dlpack((uk_dtype)t, &d));
    CHECK_OK(uk_dtype_from_dlpack(d, &back));
    CHECK(back == (uk_dtype)t);
    CHECK(d.lanes == 1);
    if (t != UK_BOOL) CHECK((size_t)d.bits == 8 * uk_dtype_size((uk_dtype)t));
  }
  uk_dtype got;
  CHECK_OK(uk_dtype_from_dlpack(dl(kDLBfloat, 16), &got));
  CHECK(got == UK_BFLOAT16);
  CHECK_OK(uk_dtype_from_dlpack(dl(kDLComplex, 64), &got));
  CHECK(got == UK_COMPLEX64);
  CHECK_OK(uk_dtype_from_dlpack(dl(kDLComplex, 128), &got));
  CHECK(got == UK_COMPLEX128);
  CHECK_OK(uk_dtype_from_dlpack(dl(kDLFloat, 16), &got));
  CHECK(got == UK_FLOAT16);
  CHECK_OK(uk_dtype_from_dlpack(dl(kDLUInt, 1), &got));
  CHECK(got == UK_BOOL);
  CHECK_STATUS(uk_dtype_from_dlpack(dl(kDLFloat, 8), &got), UK_ERR_TYPE);
  CHECK_STREQ(uk_last_error(), "DLPack dtype (code 2, bits 8, lanes 1) has no ukern dtype");
  DLDataType vec = {kDLFloat, 32, 4};
  CHECK_STATUS(uk_dtype_from_dlpack(vec, &got), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "lanes != 1");
  CHECK_STATUS(uk_dtype_to_dlpack(UK_DTYPE_COUNT_, &vec), UK_ERR_TYPE);

  /* strides in elements -> bytes, byte_offset added */
  int64_t shape[3] = {4, 5, 6}, strides[3] = {60, 1, -10};
  DLTensor t = tensor((void *)(uintptr_t)0x7f0000001000ull, dl(kDLFloat, 64), 3, shape, strides);
  t.byte_offset = 80;
  uk_array a;
  memset(&a, 0x5a, sizeof a);
  CHECK_OK(uk_array_from_dlpack(&t, &a));
  CHECK(a.data == 0x7f0000001000ull + 80);
  CHECK(a.dtype == UK_FLOAT64 && a.ndim == 3 && a.device == 1);
  CHECK(a.shape[0] == 4 && a.shape[1] == 5 && a.shape[2] == 6);
  CHECK(a.strides[0] == 480 && a.strides[1] == 8 && a.strides[2] == -80);

  /* NULL strides: C-contiguous in bytes; a 0-d tensor */
  t = tensor((void *)(uintptr_t)0x10000, dl(kDLBfloat, 16), 3, shape, NULL);
  CHECK_OK(uk_array_from_dlpack(&t, &a));
  CHECK(a.dtype == UK_BFLOAT16 && a.strides[0] == 60 && a.strides[1] == 12 && a.strides[2] == 2);
  t = tensor((void *)(uintptr_t)0x10000, dl(kDLComplex, 64), 0, NULL, NULL);
  CHECK_OK(uk_array_from_dlpack(&t, &a));
  CHECK(a.ndim == 0 && a.dtype == UK_COMPLEX64 && uk_array_size(&a) == 1);

  /* refusals: host and managed memory, too many dims, bad shape, no data */
  uk_array untouched;
  memset(&untouched, 0x33, sizeof untouched);
  a = untouched;
  t = tensor((void *)(uintptr_t)0x10000, dl(kDLFloat, 32), 3, shape, NULL);
  t.device.device_type = kDLCPU;
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_array_from_dlpack: the tensor is on DLPack device type 1, not kDLCUDA (2) or "
                               "kDLCUDAManaged (13): ukern kernels read device memory only");
  t.device.device_type = kDLCUDAHost;
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "device type 3,");
  CHECK(memcmp(&a, &untouched, sizeof a) == 0); /* out written only on success */
  /* managed memory is accepted like device memory, on its device_id */
  t.device.device_type = kDLCUDAManaged;
  t.device.device_id = 1;
  CHECK_OK(uk_array_from_dlpack(&t, &a));
  CHECK(a.data == 0x10000 && a.device == 1 && a.ndim == 3 && a.dtype == UK_FLOAT32);
  a = untouched;
  t.device.device_id = 0;
  t.device.device_type = kDLCUDA;
  t.ndim = UK_MAX_NDIM + 1;
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_array_from_dlpack: ndim 17 is outside 0..16");
  int64_t neg[2] = {3, -1};
  t = tensor((void *)(uintptr_t)0x10000, dl(kDLFloat, 32), 2, neg, NULL);
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "shape[1] is negative");
  t = tensor(NULL, dl(kDLFloat, 32), 3, shape, NULL);
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "data is NULL");
  int64_t empty[1] = {0};
  t = tensor(NULL, dl(kDLFloat, 32), 1, empty, NULL);
  CHECK_OK(uk_array_from_dlpack(&t, &a)); /* no elements: no data needed */
  t = tensor((void *)(uintptr_t)0x10000, dl(kDLInt, 4), 1, shape, NULL);
  CHECK_STATUS(uk_array_from_dlpack(&t, &a), UK_ERR_TYPE);
  CHECK_STATUS(uk_array_from_dlpack(NULL, &a), UK_ERR_INVALID);

  /* export refusals need no device */
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(NULL, &ctx));
  DLManagedTensor *mt = (DLManagedTensor *)0x1;
  uk_array b;
  int64_t s2[2] = {3, 4};
  CHECK_OK(uk_array_init(&b, 0x20000, UK_FLOAT32, 2, s2));
  b.strides[1] = 6; /* not a multiple of 4 bytes */
  CHECK_STATUS(uk_array_to_dlpack(ctx, &b, &mt), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_array_to_dlpack: strides[1] is 6 bytes, not a multiple of the item size 4");
  CHECK(mt == (DLManagedTensor *)0x1 && b.data == 0x20000);
  b.data = 0;
  b.strides[1] = 4;
  CHECK_STATUS(uk_array_to_dlpack(ctx, &b, &mt), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "no data");
  uk_context_destroy(ctx);
  return ut_finish("test_dlpack");
}
