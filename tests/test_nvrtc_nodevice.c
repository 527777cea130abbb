/* Runtime calls on a machine without a driver or GPU: clean
 * UK_ERR_NO_DEVICE with the reason, never a crash. Also the array and
 * argument helpers, which need no device. On a machine with a GPU the
 * device checks turn into sanity checks of what the driver reports. */
#include "testutil.h"

static void test_devices(void) {
  int n = -1;
  uk_status s = uk_device_count(&n);
  if (s == UK_OK) {
    CHECK(n > 0);
    uk_device_info info;
    CHECK_OK(uk_device_info_get(0, &info));
    CHECK(info.arch >= 50 && info.multiprocessors > 0 && info.total_memory > 0 && info.name[0]);
    CHECK_STATUS(uk_device_info_get(n, &info), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "does not exist");
    int v = 0;
    CHECK_OK(uk_driver_version(&v));
    CHECK(v >= 12000);
    return;
  }
  CHECK_STATUS(s, UK_ERR_NO_DEVICE);
  CHECK(n == -1);
  CHECK(strlen(uk_last_error()) > 10);
  printf("no device, as expected here: %s\n", uk_last_error());
  /* Every device-facing call answers the same way, repeatedly. */
  uk_device_info info;
  int v = 0;
  CHECK_STATUS(uk_device_info_get(0, &info), UK_ERR_NO_DEVICE);
  CHECK_STATUS(uk_driver_version(&v), UK_ERR_NO_DEVICE);
  CHECK_STATUS(uk_device_set_current(0), UK_ERR_NO_DEVICE);
  CHECK_STATUS(uk_device_synchronize(), UK_ERR_NO_DEVICE);
  CHECK(strlen(uk_last_error()) > 10);
  CHECK_STATUS(uk_device_count(&n), UK_ERR_NO_DEVICE);
  unsigned char host[16] = {1};
  CHECK_STATUS(uk_memcpy_htod(0x1000, host, sizeof host), UK_ERR_NO_DEVICE);
  CHECK_STATUS(uk_memcpy_dtoh(host, 0x1000, sizeof host), UK_ERR_NO_DEVICE);
  /* Zero bytes is a no-op that needs nothing. */
  CHECK_OK(uk_memcpy_htod(0x1000, host, 0));

  uk_context *ctx = NULL;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_array a;
  int64_t shape[2] = {3, 4};
  CHECK_STATUS(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &a), UK_ERR_NO_DEVICE);
  /* A zero-size array allocates nothing, so needs no device. */
  int64_t empty[2] = {3, 0};
  memset(&a, 0x55, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, empty, 0, NULL, &a));
  CHECK(a.data == 0 && a.ndim == 2 && a.shape[1] == 0);
  uk_array_free(ctx, &a, NULL);
  uk_context_destroy(ctx);
  uk_context_destroy(NULL);
}

static void test_arrays(void) {
  uk_array a;
  int64_t shape[3] = {2, 3, 5};
  memset(&a, 0x55, sizeof a);
  CHECK_OK(uk_array_init(&a, 0x1234, UK_FLOAT64, 3, shape));
  CHECK(a.data == 0x1234 && a.dtype == UK_FLOAT64 && a.ndim == 3 && a.device == 0);
  CHECK(a.shape[0] == 2 && a.shape[1] == 3 && a.shape[2] == 5);
  CHECK(a.strides[0] == 120 && a.strides[1] == 40 && a.strides[2] == 8);
  CHECK(a.shape[3] == 0 && a.strides[3] == 0);
  CHECK(uk_array_size(&a) == 30);

  CHECK_OK(uk_array_init(&a, 0, UK_INT8, 0, NULL));
  CHECK(a.ndim == 0 && uk_array_size(&a) == 1);

  int64_t bad[1] = {-1};
  CHECK_STATUS(uk_array_init(&a, 0, UK_INT8, 1, bad), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "shape[0] is negative");
  CHECK_STATUS(uk_array_init(&a, 0, UK_INT8, UK_MAX_NDIM + 1, shape), UK_ERR_INVALID);
  CHECK_STATUS(uk_array_init(&a, 0, UK_DTYPE_COUNT_, 1, shape), UK_ERR_INVALID);
  int64_t huge[2] = {INT64_MAX / 2, 16};
  CHECK_STATUS(uk_array_init(&a, 0, UK_INT8, 2, huge), UK_ERR_INVALID);
}

static void test_args(void) {
  uk_array x;
  memset(&x, 0, sizeof x);
  uk_arg a = uk_arg_array(&x);
  CHECK(a.kind == UK_ARG_ARRAY && a.v.array == &x);
  a = uk_arg_int(-300);
  CHECK(a.kind == UK_ARG_INT && a.v.i == -300);
  a = uk_arg_float(2.5);
  CHECK(a.kind == UK_ARG_FLOAT && a.v.f == 2.5);
  a = uk_arg_complex(1.5, -2.25);
  CHECK(a.kind == UK_ARG_COMPLEX && a.v.c[0] == 1.5 && a.v.c[1] == -2.25);
  a = uk_arg_bool(7);
  CHECK(a.kind == UK_ARG_BOOL && a.v.b == 1);
  float f = -3.75f;
  a = uk_arg_typed(UK_FLOAT32, &f);
  float back;
  memcpy(&back, a.v.bytes, sizeof back);
  CHECK(a.kind == UK_ARG_TYPED && a.dtype == UK_FLOAT32 && back == f);
  CHECK(a.v.bytes[4] == 0);
  double c[2] = {0.5, -8.0};
  a = uk_arg_typed(UK_COMPLEX128, c);
  CHECK(memcmp(a.v.bytes, c, 16) == 0);
}

int main(void) {
  test_devices();
  test_arrays();
  test_args();
  return ut_finish("test_nvrtc_nodevice");
}
