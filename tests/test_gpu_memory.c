/* Memory calls on a GPU, each checked by reading the bytes back: async and
 * device-to-device copies (pinned and registered host memory), memsets of
 * 8/16/32 bits with untouched neighbours, 2-D pitched copies both ways with
 * poisoned padding, free/total memory, mapped pinned memory, contiguous
 * copies of strided, reversed, broadcast, 0-d and empty views (to device
 * and host) against a host gather, device attributes by name and peer
 * access. */
#include "testutil.h"

static uk_context *ctx;
static void *stream;

static void copies(void) {
  enum { N = 4099 };
  unsigned char *pin = NULL, *back = NULL;
  CHECK_OK(uk_host_alloc(N, UK_HOST_PORTABLE, (void **)&pin));
  CHECK_OK(uk_host_alloc(N, 0, (void **)&back));
  if (!pin || !back) return;
  for (int i = 0; i < N; i++) pin[i] = (unsigned char)ut_rand();
  uk_array a, b;
  int64_t n = N;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &n, 0, NULL, &a));
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &n, 0, NULL, &b));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_htod_async(a.data, pin, N, stream));
  CHECK_OK(uk_memcpy_dtod_async(b.data + 1, a.data, N - 1, stream));
  memset(back, 0xAB, N);
  CHECK_OK(uk_memcpy_dtoh_async(back, b.data, N, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK(memcmp(back + 1, pin, N - 1) == 0);
  /* Synchronous device to device. */
  CHECK_OK(uk_memcpy_dtod(b.data, a.data + 7, N - 7));
  memset(back, 0, N);
  CHECK_OK(uk_memcpy_dtoh(back, b.data, N));
  CHECK(memcmp(back, pin + 7, N - 7) == 0);

  /* Registered (not allocated) host memory. */
  unsigned char *reg = malloc(N + 4096);
  unsigned char *r = reg + (4096 - ((uintptr_t)reg & 4095)) % 4096;
  CHECK_OK(uk_host_register(r, N, 0));
  memset(r, 0x5C, N);
  CHECK_OK(uk_memcpy_dtoh_async(r, a.data, N, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  CHECK(memcmp(r, pin, N) == 0);
  CHECK_OK(uk_host_unregister(r));
  free(reg);

  /* Mapped pinned memory: the device copies out of host memory directly. */
  unsigned char *mapped = NULL;
  uint64_t dmapped = 0;
  CHECK_OK(uk_host_alloc(N, UK_HOST_MAPPED, (void **)&mapped));
  if (mapped) {
    for (int i = 0; i < N; i++) mapped[i] = (unsigned char)(i * 7 + 1);
    CHECK_OK(uk_host_device_pointer(mapped, &dmapped));
    CHECK(dmapped != 0);
    CHECK_OK(uk_memcpy_dtod(a.data, dmapped, N));
    CHECK_OK(uk_memcpy_dtoh(back, a.data, N));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += back[i] != (unsigned char)(i * 7 + 1);
    CHECK(bad == 0);
    CHECK_OK(uk_host_free(mapped));
  }
  uk_array_free(ctx, &a, NULL);
  uk_array_free(ctx, &b, NULL);
  CHECK_OK(uk_host_free(pin));
  CHECK_OK(uk_host_free(back));
}

static void memsets(void) {
  enum { BYTES = 1 << 12 };
  uk_array a;
  int64_t n = BYTES;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &n, 0, NULL, &a));
  unsigned char h[BYTES], want[BYTES];
  for (int async = 0; async < 2; async++) {
    CHECK_OK(uk_memset_d8(a.data, 0xEE, BYTES)); /* poison */
    CHECK_OK(uk_device_synchronize()); /* memsets do not wait: done before the stream's */
    memset(want, 0xEE, BYTES);
    /* d8 at an odd offset, d16 and d32 at aligned ones, odd counts. */
    if (async) {
      CHECK_OK(uk_memset_d8_async(a.data + 3, 0x11, 101, stream));
      CHECK_OK(uk_memset_d16_async(a.data + 200, 0xA1B2, 77, stream));
      CHECK_OK(uk_memset_d32_async(a.data + 400, 0xC3D4E5F6u, 333, stream));
      CHECK_OK(uk_stream_synchronize(stream));
    } else {
      CHECK_OK(uk_memset_d8(a.data + 3, 0x11, 101));
      CHECK_OK(uk_memset_d16(a.data + 200, 0xA1B2, 77));
      CHECK_OK(uk_memset_d32(a.data + 400, 0xC3D4E5F6u, 333));
    }
    memset(want + 3, 0x11, 101);
    for (int i = 0; i < 77; i++) {
      uint16_t v = 0xA1B2;
      memcpy(want + 200 + 2 * i, &v, 2);
    }
    for (int i = 0; i < 333; i++) {
      uint32_t v = 0xC3D4E5F6u;
      memcpy(want + 400 + 4 * i, &v, 4);
    }
    CHECK_OK(uk_memcpy_dtoh(h, a.data, BYTES));
    CHECK(memcmp(h, want, BYTES) == 0);
  }
  uk_array_free(ctx, &a, NULL);
}

static void pitched(void) {
  const size_t W = 333 * 4, H = 37; /* 333 floats a row */
  uint64_t d = 0;
  size_t pitch = 0;
  CHECK_OK(uk_mem_alloc_pitch(0, W, H, 4, &d, &pitch));
  CHECK(pitch >= W && pitch % 4 == 0);
  if (!d) return;
  float *src = malloc(W * H), *dst = malloc((W + 64) * H);
  for (size_t i = 0; i < W * H / 4; i++) src[i] = (float)ut_uniform(-100, 100);
  CHECK_OK(uk_memset_d8(d, 0xFF, pitch * H));
  uk_copy_2d up = {(uint64_t)(uintptr_t)src, 1, W, d, 0, pitch, W, H};
  CHECK_OK(uk_memcpy_2d(&up));
  /* The padding of each device row is untouched. */
  unsigned char *raw = malloc(pitch * H);
  CHECK_OK(uk_memcpy_dtoh(raw, d, pitch * H));
  int bad = 0;
  for (size_t r = 0; r < H; r++) {
    bad += memcmp(raw + r * pitch, (unsigned char *)src + r * W, W) != 0;
    for (size_t c = W; c < pitch; c++) bad += raw[r * pitch + c] != 0xFF;
  }
  CHECK(bad == 0);
  /* Back into a host layout with 64 bytes of poisoned padding a row. */
  memset(dst, 0x7A, (W + 64) * H);
  uk_copy_2d down = {d, 0, pitch, (uint64_t)(uintptr_t)dst, 1, W + 64, W, H};
  CHECK_OK(uk_memcpy_2d_async(&down, stream));
  CHECK_OK(uk_stream_synchronize(stream));
  bad = 0;
  for (size_t r = 0; r < H; r++) {
    unsigned char *row = (unsigned char *)dst + r * (W + 64);
    bad += memcmp(row, (unsigned char *)src + r * W, W) != 0;
    for (size_t c = W; c < W + 64; c++) bad += row[c] != 0x7A;
  }
  CHECK(bad == 0);
  free(raw), free(src), free(dst);
  CHECK_OK(uk_mem_free(d));
}

/* Host gather of a view over a host image of [base, base + span). */
static void gather(const uk_array *v, const unsigned char *img, uint64_t base, unsigned char *out) {
  int64_t n = uk_array_size(v), it = (int64_t)uk_dtype_size(v->dtype);
  for (int64_t k = 0; k < n; k++) {
    int64_t off = 0, rest = k;
    for (int d = v->ndim - 1; d >= 0; d--) {
      off += (rest % v->shape[d]) * v->strides[d];
      rest /= v->shape[d];
    }
    memcpy(out + k * it, img + (v->data - base) + off, (size_t)it);
  }
}

static void contiguous(void) {
  enum { R = 23, C = 31 };
  int64_t shape[2] = {R, C};
  uk_array base;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 2, shape, 0, NULL, &base));
  double img[R * C];
  for (int i = 0; i < R * C; i++) img[i] = ut_uniform(-1e3, 1e3);
  CHECK_OK(uk_memcpy_htod(base.data, img, sizeof img));
  CHECK_OK(uk_device_synchronize()); /* the upload is done before the stream reads it */
  /* Views: every other column; rows reversed; a broadcast row (stride 0);
   * transposed; 0-d; empty. */
  uk_array views[6];
  for (int k = 0; k < 6; k++) views[k] = base;
  views[0].shape[1] = (C + 1) / 2, views[0].strides[1] = 16;
  views[1].data = base.data + (uint64_t)(R - 1) * C * 8, views[1].strides[0] = -C * 8;
  views[2].strides[0] = 0;
  views[3].shape[0] = C, views[3].shape[1] = R, views[3].strides[0] = 8, views[3].strides[1] = C * 8;
  views[4].ndim = 0, views[4].data = base.data + 8 * 17;
  views[5].shape[0] = 0;
  for (int k = 0; k < 6; k++) {
    const uk_array *v = &views[k];
    int64_t n = uk_array_size(v);
    unsigned char *want = malloc((size_t)n * 8 + 8), *got = malloc((size_t)n * 8 + 8);
    gather(v, (const unsigned char *)img, base.data, want);
    /* Allocated destination. */
    uk_array out;
    memset(&out, 0, sizeof out);
    CHECK_OK(uk_array_copy_contiguous(ctx, v, &out, stream));
    CHECK(out.ndim == v->ndim && uk_array_size(&out) == n);
    CHECK_OK(uk_stream_synchronize(stream));
    if (n) {
      memset(got, 0, (size_t)n * 8);
      CHECK_OK(uk_memcpy_dtoh(got, out.data, (size_t)n * 8));
      CHECK(memcmp(got, want, (size_t)n * 8) == 0);
    }
    /* Given destination (poisoned), then the host copy. */
    if (n) {
      CHECK_OK(uk_memset_d8(out.data, 0xFF, (size_t)n * 8));
      CHECK_OK(uk_device_synchronize());
      CHECK_OK(uk_array_copy_contiguous(ctx, v, &out, stream));
      CHECK_OK(uk_stream_synchronize(stream));
      memset(got, 0, (size_t)n * 8);
      CHECK_OK(uk_memcpy_dtoh(got, out.data, (size_t)n * 8));
      CHECK(memcmp(got, want, (size_t)n * 8) == 0);
    }
    memset(got, 0xEE, (size_t)n * 8 + 8);
    CHECK_OK(uk_array_to_host(ctx, v, got, (size_t)n * 8 + 8, stream));
    CHECK(memcmp(got, want, (size_t)n * 8) == 0);
    CHECK(got[n * 8] == 0xEE); /* nothing past the array */
    uk_array_free(ctx, &out, NULL);
    free(want), free(got);
  }
  uk_array_free(ctx, &base, NULL);
}

static void queries(void) {
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  size_t fr = 0, tot = 0;
  CHECK_OK(uk_mem_get_info(0, &fr, &tot));
  CHECK(tot == info.total_memory && fr > 0 && fr <= tot);
  int v = 0, major = 0, minor = 0;
  CHECK_OK(uk_device_attribute(0, "warp_size", &v));
  CHECK(v == 32);
  CHECK_OK(uk_device_attribute(0, "MULTIPROCESSOR_COUNT", &v));
  CHECK(v == info.multiprocessors);
  CHECK_OK(uk_device_attribute(0, "compute_capability_major", &major));
  CHECK_OK(uk_device_attribute(0, "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", &minor));
  CHECK(major * 10 + minor == info.arch);
  int n = 0, can = -1;
  CHECK_OK(uk_device_count(&n));
  CHECK_OK(uk_device_can_access_peer(0, 0, &can));
  CHECK(can == 1);
  if (n > 1) {
    CHECK_OK(uk_device_can_access_peer(0, 1, &can));
    if (can) {
      CHECK_OK(uk_device_enable_peer_access(0, 1));
      CHECK_OK(uk_device_enable_peer_access(0, 1)); /* twice is fine */
    }
  }
  CHECK_STATUS(uk_device_can_access_peer(0, n, &can), UK_ERR_INVALID);
}

int main(void) {
  ut_require_gpu();
  ut_seed(33);
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  CHECK_OK(uk_stream_create(0, UK_STREAM_NON_BLOCKING, 0, &stream));
  copies();
  memsets();
  pitched();
  contiguous();
  queries();
  CHECK_OK(uk_stream_destroy(stream));
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_memory");
}
