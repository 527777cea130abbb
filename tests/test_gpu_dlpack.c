/* DLPack on a GPU: an output ukern allocated goes out as a DLManagedTensor;
 * its deleter frees the memory through the context's (counting) allocator,
 * and the tensor reads back the kernel's results. */
#include <cuda.h>
#include <math.h>

#include "runtime/cudadrv.h"
#include "testutil.h"
#include "ukern/dlpack.h"

typedef struct counting {
  int allocs, frees;
  uint64_t last_alloc, last_free;
} counting;

static int count_alloc(void *user, size_t bytes, void *stream, uint64_t *dptr) {
  (void)stream;
  counting *c = user;
  CUdeviceptr p = 0;
  if (uk__cu.cuMemAlloc(&p, bytes) != CUDA_SUCCESS) return 1;
  c->allocs++;
  c->last_alloc = *dptr = (uint64_t)p;
  return 0;
}

static void count_free(void *user, uint64_t dptr, void *stream) {
  (void)stream;
  counting *c = user;
  c->frees++;
  c->last_free = dptr;
  uk__cu.cuMemFree((CUdeviceptr)dptr);
}

int main(void) {
  ut_require_gpu();
  counting cnt = {0, 0, 0, 0};
  uk_options o;
  memset(&o, 0, sizeof o);
  o.allocator.alloc = count_alloc;
  o.allocator.free = count_free;
  o.allocator.user = &cnt;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  CHECK_OK(uk_device_set_current(0));
  enum { N = 3000 };
  float hx[N], hz[N];
  for (int i = 0; i < N; i++) hx[i] = (float)ut_uniform(-4, 4);
  int64_t n = N;
  uk_array x;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x));
  CHECK(cnt.allocs == 1);
  CHECK_OK(uk_memcpy_htod(x.data, hx, sizeof hx));
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "T x", .out_params = "T z", .operation = "z = x * x + 1", .name = "sq1"},
      &k));
  uk_arg in = uk_arg_array(&x);
  uk_array z = {0};
  CHECK_OK(uk_elementwise_call(k, &in, 1, &z, 1, NULL));
  CHECK(cnt.allocs == 2 && z.data == cnt.last_alloc);
  uint64_t zdata = z.data;

  DLManagedTensor *mt = NULL;
  CHECK_OK(uk_array_to_dlpack(ctx, &z, &mt));
  CHECK(z.data == 0); /* the tensor owns it now */
  CHECK(mt && (uint64_t)(uintptr_t)mt->dl_tensor.data == zdata);
  CHECK(mt->dl_tensor.device.device_type == kDLCUDA && mt->dl_tensor.ndim == 1);
  CHECK(mt->dl_tensor.shape[0] == N && mt->dl_tensor.strides[0] == 1);
  CHECK(mt->dl_tensor.dtype.code == kDLFloat && mt->dl_tensor.dtype.bits == 32);

  /* back through from_dlpack: the same memory, the kernel's results */
  uk_array view;
  CHECK_OK(uk_array_from_dlpack(&mt->dl_tensor, &view));
  CHECK(view.data == zdata && view.strides[0] == 4);
  for (int i = 0; i < N; i++) hz[i] = -1.0f;
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(hz, view.data, sizeof hz));
  int bad = 0;
  /* the device may fuse x * x + 1 into one FMA */
  for (int i = 0; i < N; i++) bad += fabsf(hz[i] - fmaf(hx[i], hx[i], 1.0f)) > 1e-6f * (hx[i] * hx[i] + 1.0f);
  CHECK(bad == 0);

  CHECK(cnt.frees == 0);
  mt->deleter(mt);
  CHECK(cnt.frees == 1 && cnt.last_free == zdata);
  uk_array_free(ctx, &x, NULL);
  CHECK(cnt.frees == 2);
  uk_elementwise_destroy(k);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_dlpack");
}
