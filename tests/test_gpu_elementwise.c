/* ElementwiseKernel on a real GPU: CuPy's user-guide examples in C, every
 * dtype against a host reference, half/bfloat16 rounding, strides of every
 * kind, 0-d, zero-size, size=, overlap, the 64-bit path, and the errors of
 * SEMANTICS.md with their exact messages, texture objects. Outputs are
 * poisoned first. */
#include <math.h>

#include "codegen/scalar.h"
#include "runtime/cudadrv.h"
#include "testutil.h"

static uk_context *ctx;

static uk_array dev(uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, t, ndim, shape, 0, NULL, &a));
  return a;
}
static uk_array dev1(uk_dtype t, int64_t n) { return dev(t, 1, &n); }

static void up(uint64_t ptr, const void *host, size_t bytes) { CHECK_OK(uk_memcpy_htod(ptr, host, bytes)); }
static void *down(uint64_t ptr, size_t bytes) {
  void *h = malloc(bytes ? bytes : 1);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, ptr, bytes));
  return h;
}
static void poison(uint64_t ptr, size_t bytes) {
  unsigned char *h = malloc(bytes);
  memset(h, 0xA5, bytes);
  up(ptr, h, bytes);
  free(h);
}
static float *rand_f32(int64_t n, double lo, double hi) {
  float *h = malloc((size_t)n * 4);
  for (int64_t k = 0; k < n; k++) h[k] = (float)ut_uniform(lo, hi);
  return h;
}
static uk_array up_f32(const float *h, int64_t n) {
  uk_array a = dev1(UK_FLOAT32, n);
  up(a.data, h, (size_t)n * 4);
  return a;
}

static uk_elementwise *make(const char *in, const char *out, const char *op, const char *name) {
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = in, .out_params = out, .operation = op, .name = name}, &k));
  return k;
}

/* ------------------------------------------------------------------------ */

static void user_guide(void) {
  const int64_t n = 1000003;
  uk_elementwise *sq = make("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");
  float *hx = rand_f32(n, -10, 10), *hy = rand_f32(n, -10, 10);
  uk_array x = up_f32(hx, n), y = up_f32(hy, n), z;
  memset(&z, 0, sizeof z);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  /* arrays, allocated output */
  CHECK_OK(uk_elementwise_call(sq, in, 2, &z, 1, NULL));
  CHECK(z.data != 0 && z.dtype == UK_FLOAT32 && z.ndim == 1 && z.shape[0] == n && z.strides[0] == 4);
  float *hz = down(z.data, (size_t)n * 4);
  int bad = 0;
  for (int64_t k = 0; k < n; k++) bad += hz[k] != (hx[k] - hy[k]) * (hx[k] - hy[k]);
  CHECK(bad == 0);
  free(hz);
  /* a scalar */
  in[1] = uk_arg_float(0.5);
  poison(z.data, (size_t)n * 4);
  CHECK_OK(uk_elementwise_call(sq, in, 2, &z, 1, NULL));
  hz = down(z.data, (size_t)n * 4);
  bad = 0;
  for (int64_t k = 0; k < n; k++) bad += hz[k] != (hx[k] - 0.5f) * (hx[k] - 0.5f);
  CHECK(bad == 0);
  free(hz);
  uk_array_free(ctx, &z, NULL);

  /* broadcasting (2, 5) with (5,), explicit output */
  int64_t s25[] = {2, 5};
  uk_array a = dev(UK_FLOAT32, 2, s25), b = dev1(UK_FLOAT32, 5), c = dev(UK_FLOAT32, 2, s25);
  float ha[10], hb[5], hc[10];
  for (int k = 0; k < 10; k++) ha[k] = (float)ut_uniform(-5, 5);
  for (int k = 0; k < 5; k++) hb[k] = (float)ut_uniform(-5, 5);
  up(a.data, ha, 40);
  up(b.data, hb, 20);
  poison(c.data, 40);
  in[0] = uk_arg_array(&a);
  in[1] = uk_arg_array(&b);
  CHECK_OK(uk_elementwise_call(sq, in, 2, &c, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(hc, c.data, 40));
  for (int k = 0; k < 10; k++) CHECK(hc[k] == (ha[k] - hb[k % 5]) * (ha[k] - hb[k % 5]));

  /* type-generic: the same kernel on float64 and int32 */
  double hd[7] = {1.5, -2.25, 3, 4, -5.5, 6.125, 7}, hd2[7] = {0.5, 0.25, -1, 2, 3, -4, 5}, rd[7];
  uk_array d1 = dev1(UK_FLOAT64, 7), d2 = dev1(UK_FLOAT64, 7), d3 = dev1(UK_FLOAT64, 7);
  up(d1.data, hd, 56);
  up(d2.data, hd2, 56);
  poison(d3.data, 56);
  in[0] = uk_arg_array(&d1);
  in[1] = uk_arg_array(&d2);
  CHECK_OK(uk_elementwise_call(sq, in, 2, &d3, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(rd, d3.data, 56));
  for (int k = 0; k < 7; k++) CHECK(rd[k] == (hd[k] - hd2[k]) * (hd[k] - hd2[k]));
  int32_t hi1[5] = {1, -2, 300, 4000, -5}, hi2[5] = {7, 8, -9, 10, 11}, ri[5];
  uk_array i1 = dev1(UK_INT32, 5), i2 = dev1(UK_INT32, 5), i3;
  memset(&i3, 0, sizeof i3);
  up(i1.data, hi1, 20);
  up(i2.data, hi2, 20);
  in[0] = uk_arg_array(&i1);
  in[1] = uk_arg_array(&i2);
  CHECK_OK(uk_elementwise_call(sq, in, 2, &i3, 1, NULL));
  CHECK(i3.dtype == UK_INT32);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(ri, i3.data, 20));
  for (int k = 0; k < 5; k++) CHECK(ri[k] == (hi1[k] - hi2[k]) * (hi1[k] - hi2[k]));
  uk_array_free(ctx, &i3, NULL);

  /* two placeholders with a given output: T = float32, U = int32 */
  uk_elementwise *two = make("T x, T y", "U z", "z = (x - y) * (x - y)", "squared_diff_generic");
  uk_array zi = dev(UK_INT32, 2, s25);
  int32_t hzi[10];
  poison(zi.data, 40);
  in[0] = uk_arg_array(&a);
  in[1] = uk_arg_array(&b);
  CHECK_OK(uk_elementwise_call(two, in, 2, &zi, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(hzi, zi.data, 40));
  for (int k = 0; k < 10; k++) CHECK(hzi[k] == (int32_t)((ha[k] - hb[k % 5]) * (ha[k] - hb[k % 5])));
  uk_elementwise_destroy(two);

  /* add_reverse: a raw argument and _ind.size() */
  uk_elementwise *rev = make("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse");
  memset(&z, 0, sizeof z);
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_array(&y);
  CHECK_OK(uk_elementwise_call(rev, in, 2, &z, 1, NULL));
  hz = down(z.data, (size_t)n * 4);
  bad = 0;
  for (int64_t k = 0; k < n; k++) bad += hz[k] != hx[k] + hy[n - 1 - k];
  CHECK(bad == 0);
  free(hz);
  uk_array_free(ctx, &z, NULL);
  uk_elementwise_destroy(rev);

  uk_array *all[] = {&x, &y, &a, &b, &c, &d1, &d2, &d3, &i1, &i2, &zi};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) uk_array_free(ctx, all[k], NULL);
  uk_elementwise_destroy(sq);
  free(hx);
  free(hy);
}

/* ------------------------------------------------------------------------ */
/* Every dtype: p = x * y, q = x + y, exact against the host (complex:     */
/* within rounding, as the device may fuse a multiply-add).                */

static void rand_fill(uk_dtype t, unsigned char *buf, int64_t n) {
  for (int64_t k = 0; k < n; k++) {
    uint64_t r = ut_rand();
    int64_t s = (int64_t)(r % 2 ? 1 : -1);
    switch (t) {
    case UK_BOOL: buf[k] = (unsigned char)((r >> 8) & 1); break;
    case UK_INT8: ((int8_t *)buf)[k] = (int8_t)(s * (int64_t)(1 + (r >> 8) % 100)); break;
    case UK_INT16: ((int16_t *)buf)[k] = (int16_t)(s * (int64_t)(1 + (r >> 8) % 1000)); break;
    case UK_INT32: ((int32_t *)buf)[k] = (int32_t)(s * (int64_t)(1 + (r >> 8) % 40000)); break;
    case UK_INT64: ((int64_t *)buf)[k] = s * (int64_t)(1 + (r >> 8) % 1000000000); break;
    case UK_UINT8: ((uint8_t *)buf)[k] = (uint8_t)(1 + (r >> 8) % 255); break;
    case UK_UINT16: ((uint16_t *)buf)[k] = (uint16_t)(1 + (r >> 8) % 30000); break;
    case UK_UINT32: ((uint32_t *)buf)[k] = (uint32_t)((r >> 8) | 1); break;
    case UK_UINT64: ((uint64_t *)buf)[k] = r | 1; break;
    case UK_FLOAT16: ((uint16_t *)buf)[k] = uk__f64_to_f16_bits(ut_uniform(-8, 8)); break;
    case UK_BFLOAT16: ((uint16_t *)buf)[k] = uk__f64_to_bf16_bits(ut_uniform(-8, 8)); break;
    case UK_FLOAT32: ((float *)buf)[k] = (float)ut_uniform(-10, 10); break;
    case UK_FLOAT64: ((double *)buf)[k] = ut_uniform(-10, 10); break;
    case UK_COMPLEX64:
      ((float *)buf)[2 * k] = (float)ut_uniform(-10, 10);
      ((float *)buf)[2 * k + 1] = (float)ut_uniform(-10, 10);
      break;
    default:
      ((double *)buf)[2 * k] = ut_uniform(-10, 10);
      ((double *)buf)[2 * k + 1] = ut_uniform(-10, 10);
      break;
    }
  }
}

#define INT_REF(T, W)                                                                                       \
  do {                                                                                                      \
    W a = (W)((const T *)x)[k], b = (W)((const T *)y)[k];                                                   \
    ((T *)p)[k] = (T)(a * b);                                                                               \
    ((T *)q)[k] = (T)(a + b);                                                                               \
  } while (0)

/* Writes the expected p[k], q[k]. */
static void ref(uk_dtype t, const void *x, const void *y, void *p, void *q, int64_t k) {
  switch (t) {
  case UK_BOOL: {
    unsigned char a = ((const unsigned char *)x)[k], b = ((const unsigned char *)y)[k];
    ((unsigned char *)p)[k] = a && b;
    ((unsigned char *)q)[k] = a || b;
    break;
  }
  case UK_INT8: INT_REF(int8_t, int64_t); break;
  case UK_INT16: INT_REF(int16_t, int64_t); break;
  case UK_INT32: INT_REF(int32_t, int64_t); break;
  case UK_INT64: INT_REF(int64_t, int64_t); break;
  case UK_UINT8: INT_REF(uint8_t, uint64_t); break;
  case UK_UINT16: INT_REF(uint16_t, uint64_t); break;
  case UK_UINT32: INT_REF(uint32_t, uint64_t); break;
  case UK_UINT64: INT_REF(uint64_t, uint64_t); break;
  case UK_FLOAT16: {
    double a = uk__f16_bits_to_f64(((const uint16_t *)x)[k]), b = uk__f16_bits_to_f64(((const uint16_t *)y)[k]);
    ((uint16_t *)p)[k] = uk__f64_to_f16_bits(a * b); /* exact in double, rounded once */
    ((uint16_t *)q)[k] = uk__f64_to_f16_bits(a + b);
    break;
  }
  case UK_BFLOAT16: {
    double a = uk__bf16_bits_to_f64(((const uint16_t *)x)[k]), b = uk__bf16_bits_to_f64(((const uint16_t *)y)[k]);
    ((uint16_t *)p)[k] = uk__f64_to_bf16_bits(a * b);
    ((uint16_t *)q)[k] = uk__f64_to_bf16_bits(a + b);
    break;
  }
  case UK_FLOAT32: {
    double a = ((const float *)x)[k], b = ((const float *)y)[k];
    ((float *)p)[k] = (float)(a * b);
    ((float *)q)[k] = (float)(a + b);
    break;
  }
  case UK_FLOAT64: {
    double a = ((const double *)x)[k], b = ((const double *)y)[k];
    ((double *)p)[k] = a * b;
    ((double *)q)[k] = a + b;
    break;
  }
  case UK_COMPLEX64: {
    const float *a = (const float *)x + 2 * k, *b = (const float *)y + 2 * k;
    ((float *)p)[2 * k] = (float)((double)a[0] * b[0] - (double)a[1] * b[1]);
    ((float *)p)[2 * k + 1] = (float)((double)a[0] * b[1] + (double)a[1] * b[0]);
    ((float *)q)[2 * k] = a[0] + b[0];
    ((float *)q)[2 * k + 1] = a[1] + b[1];
    break;
  }
  default: {
    const double *a = (const double *)x + 2 * k, *b = (const double *)y + 2 * k;
    ((double *)p)[2 * k] = a[0] * b[0] - a[1] * b[1];
    ((double *)p)[2 * k + 1] = a[0] * b[1] + a[1] * b[0];
    ((double *)q)[2 * k] = a[0] + b[0];
    ((double *)q)[2 * k + 1] = a[1] + b[1];
    break;
  }
  }
}

static int64_t compare(uk_dtype t, const unsigned char *got, const unsigned char *want, int64_t n) {
  int64_t bad = 0;
  size_t it = uk_dtype_size(t);
  for (int64_t k = 0; k < n; k++) {
    if (t == UK_COMPLEX64 || t == UK_COMPLEX128) {
      for (int c = 0; c < 2; c++) {
        double g = t == UK_COMPLEX64 ? ((const float *)got)[2 * k + c] : ((const double *)got)[2 * k + c];
        double w = t == UK_COMPLEX64 ? ((const float *)want)[2 * k + c] : ((const double *)want)[2 * k + c];
        double tol = (t == UK_COMPLEX64 ? 1e-5 : 1e-13) * (fabs(w) + 100);
        bad += !(fabs(g - w) <= tol);
      }
    } else {
      bad += memcmp(got + (size_t)k * it, want + (size_t)k * it, it) != 0;
    }
  }
  return bad;
}

static void every_dtype(void) {
  const int64_t n = 1000003;
  uk_elementwise *k = make("T x, T y", "T p, T q", "p = x * y; q = x + y", "mul_add");
  for (int ti = 0; ti < UK_DTYPE_COUNT_; ti++) {
    uk_dtype t = (uk_dtype)ti;
    size_t bytes = (size_t)n * uk_dtype_size(t);
    unsigned char *hx = malloc(bytes), *hy = malloc(bytes), *wp = malloc(bytes), *wq = malloc(bytes);
    rand_fill(t, hx, n);
    rand_fill(t, hy, n);
    for (int64_t j = 0; j < n; j++) ref(t, hx, hy, wp, wq, j);
    uk_array x = dev1(t, n), y = dev1(t, n), out[2] = {dev1(t, n), dev1(t, n)};
    up(x.data, hx, bytes);
    up(y.data, hy, bytes);
    poison(out[0].data, bytes);
    poison(out[1].data, bytes);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
    CHECK_OK(uk_elementwise_call(k, in, 2, out, 2, NULL));
    unsigned char *gp = down(out[0].data, bytes), *gq = down(out[1].data, bytes);
    int64_t bp = compare(t, gp, wp, n), bq = compare(t, gq, wq, n);
    CHECK(bp == 0 && bq == 0);
    if (bp || bq) fprintf(stderr, "  %s: %lld wrong products, %lld wrong sums\n", uk_dtype_name(t), (long long)bp, (long long)bq);
    /* the strided path on every other element: a (n/2, 1)-like view */
    int64_t h = n / 2;
    uk_array xs = x, ys = y, os[2] = {out[0], out[1]};
    xs.shape[0] = ys.shape[0] = os[0].shape[0] = os[1].shape[0] = h;
    xs.strides[0] = ys.strides[0] = os[0].strides[0] = os[1].strides[0] = 2 * (int64_t)uk_dtype_size(t);
    poison(out[0].data, bytes);
    in[0] = uk_arg_array(&xs);
    in[1] = uk_arg_array(&ys);
    CHECK_OK(uk_elementwise_call(k, in, 2, os, 2, NULL));
    free(gp);
    gp = down(out[0].data, bytes);
    int64_t bs = 0;
    size_t it = uk_dtype_size(t);
    for (int64_t j = 0; j < n; j++) {
      if (j % 2 == 0 && j / 2 < h) bs += compare(t, gp + j * it, wp + j * it, 1) != 0;
      else bs += gp[j * it] != 0xA5; /* untouched */
    }
    CHECK(bs == 0);
    if (bs) fprintf(stderr, "  %s strided: %lld wrong\n", uk_dtype_name(t), (long long)bs);
    free(gp);
    free(gq);
    free(hx);
    free(hy);
    free(wp);
    free(wq);
    uk_array_free(ctx, &x, NULL);
    uk_array_free(ctx, &y, NULL);
    uk_array_free(ctx, &out[0], NULL);
    uk_array_free(ctx, &out[1], NULL);
  }
  uk_elementwise_destroy(k);
}

/* ------------------------------------------------------------------------ */
/* Transposed operands and outputs: the tiled 2-d variant (odd sizes, so     */
/* edge tiles are partial), checked element by element against the host.    */

/* A (R, C) view of a fresh device buffer: C-ordered, or the transpose of a
 * C-ordered (C, R) buffer. `base` gets the buffer. */
static uk_array view2(uk_dtype t, int64_t R, int64_t C, int transposed, uk_array *base) {
  int64_t it = (int64_t)uk_dtype_size(t), sh[2] = {transposed ? C : R, transposed ? R : C};
  *base = dev(t, 2, sh);
  uk_array v = *base;
  v.shape[0] = R, v.shape[1] = C;
  v.strides[0] = transposed ? it : C * it;
  v.strides[1] = transposed ? R * it : it;
  return v;
}

/* Offset in elements of logical (r, c) in such a view. */
static int64_t at2(int64_t R, int64_t C, int transposed, int64_t r, int64_t c) {
  return transposed ? c * R + r : r * C + c;
}

static void tiled_case(uk_elementwise *k, uk_dtype t, const int *tr, const char *what) {
  const int64_t R = 1001, C = 777, n = R * C;
  size_t it = uk_dtype_size(t), bytes = (size_t)n * it;
  uk_array base[5], v[5];
  unsigned char *hx = malloc(bytes), *hy = malloc(bytes), *wp = malloc(bytes), *wq = malloc(bytes);
  unsigned char *lx = malloc(bytes), *ly = malloc(bytes); /* logical C order */
  for (int j = 0; j < 4; j++) v[j] = view2(t, R, C, tr[j], &base[j]);
  v[4] = view2(UK_INT64, R, C, tr[4], &base[4]);
  rand_fill(t, hx, n);
  rand_fill(t, hy, n);
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < C; c++) {
      memcpy(lx + (size_t)(r * C + c) * it, hx + (size_t)at2(R, C, tr[0], r, c) * it, it);
      memcpy(ly + (size_t)(r * C + c) * it, hy + (size_t)at2(R, C, tr[1], r, c) * it, it);
    }
  for (int64_t j = 0; j < n; j++) ref(t, lx, ly, wp, wq, j);
  up(base[0].data, hx, bytes);
  up(base[1].data, hy, bytes);
  poison(base[2].data, bytes);
  poison(base[3].data, bytes);
  poison(base[4].data, (size_t)n * 8);
  uk_arg in[2] = {uk_arg_array(&v[0]), uk_arg_array(&v[1])};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, 2, v + 2, 3, NULL, &src));
  if (src) CHECK_CONTAINS(src, "tiled 32x32");
  uk_free(src);
  CHECK_OK(uk_elementwise_call(k, in, 2, v + 2, 3, NULL));
  unsigned char *gp = down(base[2].data, bytes), *gq = down(base[3].data, bytes);
  int64_t *gi = down(base[4].data, (size_t)n * 8);
  int64_t bad = 0;
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < C; c++) {
      int64_t j = r * C + c;
      bad += compare(t, gp + (size_t)at2(R, C, tr[2], r, c) * it, wp + (size_t)j * it, 1) != 0;
      bad += compare(t, gq + (size_t)at2(R, C, tr[3], r, c) * it, wq + (size_t)j * it, 1) != 0;
      bad += gi[at2(R, C, tr[4], r, c)] != j + n * 1000000;
    }
  CHECK(bad == 0);
  if (bad) fprintf(stderr, "  tiled %s %s: %lld wrong\n", uk_dtype_name(t), what, (long long)bad);
  free(gp);
  free(gq);
  free(gi);
  free(hx);
  free(hy);
  free(lx);
  free(ly);
  free(wp);
  free(wq);
  for (int j = 0; j < 5; j++) uk_array_free(ctx, &base[j], NULL);
}

static void tiled(void) {
  uk_elementwise *k = make("T x, T y", "T p, T q, int64 idx",
                           "p = x * y; q = x + y; idx = i + _ind.size() * 1000000", "mul_add_tiled");
  /* transposed? x, y, p, q, idx */
  static const int cases[4][5] = {{0, 1, 0, 0, 0}, {0, 1, 1, 1, 0}, {1, 1, 0, 0, 0}, {1, 0, 1, 0, 1}};
  static const char *names[4] = {"y transposed", "y, p, q transposed", "x, y transposed", "x, p, idx transposed"};
  const uk_dtype types[] = {UK_FLOAT32, UK_FLOAT64, UK_COMPLEX128, UK_INT8, UK_FLOAT16, UK_COMPLEX64};
  for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++)
    for (int c = 0; c < 4; c++) tiled_case(k, types[ti], cases[c], names[c]);
  uk_elementwise_destroy(k);

  /* an output that is read (z += x * w) and staged through shared memory */
  const int64_t R = 333, C = 1025, n = R * C;
  uk_elementwise *acc = make("T x, T w", "T z", "z += x * w", "acc_tiled");
  uk_array bx, bw, bz, x = view2(UK_FLOAT64, R, C, 0, &bx), w = view2(UK_FLOAT64, R, C, 0, &bw);
  uk_array z = view2(UK_FLOAT64, R, C, 1, &bz);
  double *hx = malloc((size_t)n * 8), *hw = malloc((size_t)n * 8), *hz = malloc((size_t)n * 8);
  for (int64_t j = 0; j < n; j++) hx[j] = ut_uniform(-4, 4), hw[j] = ut_uniform(-4, 4), hz[j] = ut_uniform(-4, 4);
  up(bx.data, hx, (size_t)n * 8);
  up(bw.data, hw, (size_t)n * 8);
  up(bz.data, hz, (size_t)n * 8);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&w)};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(acc, in, 2, &z, 1, NULL, &src));
  if (src) CHECK_CONTAINS(src, "_uk_t_z(_uk_ty + 8 * _uk_q, _uk_tx) = ukern::at(_uk_p_z");
  uk_free(src);
  CHECK_OK(uk_elementwise_call(acc, in, 2, &z, 1, NULL));
  double *gz = down(bz.data, (size_t)n * 8);
  int64_t bad = 0;
  for (int64_t r = 0; r < R; r++)
    for (int64_t c = 0; c < C; c++)
      bad += !(fabs(gz[c * R + r] - (hz[c * R + r] + hx[r * C + c] * hw[r * C + c])) <= 1e-13); /* fma or not */
  CHECK(bad == 0);
  free(hx);
  free(hw);
  free(hz);
  free(gz);
  uk_array_free(ctx, &bx, NULL);
  uk_array_free(ctx, &bw, NULL);
  uk_array_free(ctx, &bz, NULL);
  uk_elementwise_destroy(acc);
}

/* half * double is double, rounded once into the half output. */
static void half_rounding(void) {
  const int64_t n = 100003;
  uk_elementwise *k = make("T x, float64 s", "T z", "z = x * s", "scale");
  for (int bf = 0; bf < 2; bf++) {
    uk_dtype t = bf ? UK_BFLOAT16 : UK_FLOAT16;
    uint16_t *hx = malloc((size_t)n * 2), *hz;
    rand_fill(t, (unsigned char *)hx, n);
    uk_array x = dev1(t, n), z;
    memset(&z, 0, sizeof z);
    up(x.data, hx, (size_t)n * 2);
    const double s = 1.0 / 3.0;
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_float(s)};
    CHECK_OK(uk_elementwise_call(k, in, 2, &z, 1, NULL));
    hz = down(z.data, (size_t)n * 2);
    int64_t bad = 0;
    for (int64_t j = 0; j < n; j++) {
      double v = (bf ? uk__bf16_bits_to_f64(hx[j]) : uk__f16_bits_to_f64(hx[j])) * s;
      bad += hz[j] != (bf ? uk__f64_to_bf16_bits(v) : uk__f64_to_f16_bits(v));
    }
    CHECK(bad == 0);
    free(hx);
    free(hz);
    uk_array_free(ctx, &x, NULL);
    uk_array_free(ctx, &z, NULL);
  }
  uk_elementwise_destroy(k);
}

static void complex_math(void) {
  const int64_t n = 4097;
  uk_elementwise *k = make("T x, T c", "T z", "z = x * x + c", "cplx");
  double *hx = malloc((size_t)n * 16), *hz;
  rand_fill(UK_COMPLEX128, (unsigned char *)hx, n);
  uk_array x = dev1(UK_COMPLEX128, n), z = dev1(UK_COMPLEX128, n);
  up(x.data, hx, (size_t)n * 16);
  poison(z.data, (size_t)n * 16);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_complex(1.5, -2)};
  CHECK_OK(uk_elementwise_call(k, in, 2, &z, 1, NULL));
  hz = down(z.data, (size_t)n * 16);
  int64_t bad = 0;
  for (int64_t j = 0; j < n; j++) {
    double a = hx[2 * j], b = hx[2 * j + 1];
    double re = a * a - b * b + 1.5, im = 2 * a * b - 2;
    bad += !(fabs(hz[2 * j] - re) <= 1e-12 * (fabs(re) + 100) && fabs(hz[2 * j + 1] - im) <= 1e-12 * (fabs(im) + 100));
  }
  CHECK(bad == 0);
  free(hx);
  free(hz);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_elementwise_destroy(k);
}

/* Transposed, negative and zero strides in; a non-contiguous output. */
static void strides(void) {
  uk_elementwise *k = make("T x, T y, T w", "T z", "z = x * 2 + y - w", "strided");
  float ha[48], hb[48], hw[6], hc[96];
  for (int j = 0; j < 48; j++) ha[j] = (float)ut_uniform(-4, 4), hb[j] = (float)ut_uniform(-4, 4);
  for (int j = 0; j < 6; j++) hw[j] = (float)ut_uniform(-4, 4);
  int64_t s68[] = {6, 8}, s86[] = {8, 6}, s812[] = {8, 12};
  uk_array A = dev(UK_FLOAT32, 2, s68), B = dev(UK_FLOAT32, 2, s86), W = dev1(UK_FLOAT32, 6), C = dev(UK_FLOAT32, 2, s812);
  up(A.data, ha, sizeof ha);
  up(B.data, hb, sizeof hb);
  up(W.data, hw, sizeof hw);
  poison(C.data, sizeof hc);
  uk_array x = A, y = B, w = W, z = C; /* loop shape (8, 6) */
  x.shape[0] = 8, x.shape[1] = 6, x.strides[0] = 4, x.strides[1] = 32;              /* A.T */
  y.data = B.data + 7 * 24, y.strides[0] = -24;                                         /* B[::-1] */
  w.ndim = 2, w.shape[0] = 8, w.shape[1] = 6, w.strides[0] = 0, w.strides[1] = 4;     /* broadcast row */
  z.shape[1] = 6, z.strides[1] = 8;                                                     /* C[:, ::2] */
  uk_arg in[3] = {uk_arg_array(&x), uk_arg_array(&y), uk_arg_array(&w)};
  CHECK_OK(uk_elementwise_call(k, in, 3, &z, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(hc, C.data, sizeof hc));
  int bad = 0;
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 12; c++) {
      uint32_t bits;
      memcpy(&bits, &hc[r * 12 + c], 4);
      if (c % 2) bad += bits != 0xA5A5A5A5u;
      else bad += hc[r * 12 + c] != ha[(c / 2) * 8 + r] * 2 + hb[(7 - r) * 6 + c / 2] - hw[c / 2];
    }
  CHECK(bad == 0);
  uk_array *all[] = {&A, &B, &W, &C};
  for (int j = 0; j < 4; j++) uk_array_free(ctx, all[j], NULL);
  uk_elementwise_destroy(k);
}

static void shapes(void) {
  uk_elementwise *k = make("T x", "T z", "z = x + 1", "inc");
  /* 0-d */
  uk_array x0 = dev(UK_INT64, 0, NULL), z0;
  int64_t v = 41, r = 0;
  up(x0.data, &v, 8);
  memset(&z0, 0, sizeof z0);
  uk_arg in[1] = {uk_arg_array(&x0)};
  CHECK_OK(uk_elementwise_call(k, in, 1, &z0, 1, NULL));
  CHECK(z0.ndim == 0 && z0.data != 0);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(&r, z0.data, 8));
  CHECK(r == 42);
  uk_array_free(ctx, &z0, NULL);
  /* zero-size: allocated output described with data 0; given output untouched */
  uk_array xe = x0, ze;
  xe.ndim = 1, xe.shape[0] = 0, xe.strides[0] = 8;
  memset(&ze, 0, sizeof ze);
  in[0] = uk_arg_array(&xe);
  CHECK_OK(uk_elementwise_call(k, in, 1, &ze, 1, NULL));
  CHECK(ze.ndim == 1 && ze.shape[0] == 0 && ze.data == 0 && ze.dtype == UK_INT64);
  uk_array zg = dev1(UK_INT64, 1);
  poison(zg.data, 8);
  zg.shape[0] = 0;
  CHECK_OK(uk_elementwise_call(k, in, 1, &zg, 1, NULL));
  uint64_t pz = 0;
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(&pz, zg.data, 8));
  CHECK(pz == 0xA5A5A5A5A5A5A5A5ull);
  uk_array_free(ctx, &zg, NULL);
  uk_array_free(ctx, &x0, NULL);
  uk_elementwise_destroy(k);

  /* size= with raw arguments only */
  uk_elementwise *rk = make("raw T x", "T z", "z = x[i % x.size()] * 2", "tile");
  int32_t hx[3] = {5, -7, 9}, hz[10];
  uk_array xr = dev1(UK_INT32, 3), zr;
  up(xr.data, hx, 12);
  memset(&zr, 0, sizeof zr);
  in[0] = uk_arg_array(&xr);
  uk_launch l = {.size = 10};
  CHECK_OK(uk_elementwise_call(rk, in, 1, &zr, 1, &l));
  CHECK(zr.ndim == 1 && zr.shape[0] == 10);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(hz, zr.data, 40));
  for (int j = 0; j < 10; j++) CHECK(hz[j] == hx[j % 3] * 2);
  uk_array_free(ctx, &zr, NULL);
  uk_array_free(ctx, &xr, NULL);
  uk_elementwise_destroy(rk);
}

/* y = x with x = a[:-1], y = a[1:] equals a true copy; in place runs as is. */
static void overlap(void) {
  const int64_t n = 100001;
  uk_elementwise *k = make("T x", "T y", "y = x", "copy");
  float *ha = rand_f32(n, -3, 3), *hr;
  uk_array a = up_f32(ha, n), x = a, y = a;
  x.shape[0] = y.shape[0] = n - 1;
  y.data = a.data + 4;
  uk_arg in[1] = {uk_arg_array(&x)};
  CHECK_OK(uk_elementwise_call(k, in, 1, &y, 1, NULL));
  hr = down(a.data, (size_t)n * 4);
  int64_t bad = hr[0] != ha[0];
  for (int64_t j = 1; j < n; j++) bad += hr[j] != ha[j - 1];
  CHECK(bad == 0);
  free(hr);
  /* the other direction: x = a[1:], y = a[:-1] */
  up(a.data, ha, (size_t)n * 4);
  x.data = a.data + 4;
  y.data = a.data;
  CHECK_OK(uk_elementwise_call(k, in, 1, &y, 1, NULL));
  hr = down(a.data, (size_t)n * 4);
  bad = hr[n - 1] != ha[n - 1];
  for (int64_t j = 0; j < n - 1; j++) bad += hr[j] != ha[j + 1];
  CHECK(bad == 0);
  free(hr);
  /* in place: identical views */
  uk_elementwise *dbl = make("T x", "T y", "y = x * 2", "twice");
  up(a.data, ha, (size_t)n * 4);
  in[0] = uk_arg_array(&a);
  CHECK_OK(uk_elementwise_call(dbl, in, 1, &a, 1, NULL));
  hr = down(a.data, (size_t)n * 4);
  bad = 0;
  for (int64_t j = 0; j < n; j++) bad += hr[j] != ha[j] * 2;
  CHECK(bad == 0);
  free(hr);
  free(ha);
  uk_array_free(ctx, &a, NULL);
  uk_elementwise_destroy(k);
  uk_elementwise_destroy(dbl);
}

/* More than 2^31 int8 elements: contiguous 64-bit, then rows (64-bit, by strides). */
static void huge(void) {
  const int64_t n = (1ll << 31) + 4099;
  uk_array a = dev1(UK_INT8, n);
  if (!a.data) return;
  uk_elementwise *fill = make("T x", "T z", "z = (T)(i % 127)", "fill");
  uk_arg in[1] = {uk_arg_array(&a)};
  CHECK_OK(uk_elementwise_call(fill, in, 1, &a, 1, NULL));
  /* (n/2... ) as a transposed 2-d view: shape (m, 2), strides (1, m), in place */
  uk_elementwise *inc = make("", "T z", "z = z + 1", "inc_huge");
  const int64_t m = n / 2;
  uk_array v = a;
  v.ndim = 2, v.shape[0] = m, v.shape[1] = 2, v.strides[0] = 1, v.strides[1] = m;
  uk_launch l = {.size = -1};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(inc, NULL, 0, &v, 1, &l, &src));
  CHECK_CONTAINS(src, "rows, 64-bit index, ndim 2");
  uk_free(src);
  CHECK_OK(uk_elementwise_call(inc, NULL, 0, &v, 1, &l));
  signed char *h = down(a.data, (size_t)n);
  int64_t bad = 0;
  for (int64_t j = 0; j < n; j++) bad += h[j] != (signed char)(j % 127 + (j < 2 * m ? 1 : 0));
  CHECK(bad == 0);
  free(h);
  uk_array_free(ctx, &a, NULL);
  uk_elementwise_destroy(fill);
  uk_elementwise_destroy(inc);
}

static void errors(void) {
  uk_elementwise *sq = make("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff");
  uk_array x = dev1(UK_FLOAT32, 4), y = dev1(UK_FLOAT32, 4), z = dev1(UK_FLOAT32, 4);
  /* launch device differs from the arrays' */
  uk_array x1 = x, y1 = y, z1 = z;
  x1.device = y1.device = z1.device = 7;
  uk_arg in[2] = {uk_arg_array(&x1), uk_arg_array(&y1)};
  CHECK_STATUS(uk_elementwise_call(sq, in, 2, &z1, 1, NULL), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "squared_diff: the arrays are on device 7 but the launch runs on device 0");
  /* a compile error: UK_ERR_COMPILE with the log and numbered source */
  uk_elementwise *badk = make("T x", "T z", "z = x +* 2", "broken");
  in[0] = uk_arg_array(&x);
  CHECK_STATUS(uk_elementwise_call(badk, in, 1, &z, 1, NULL), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error(), "broken");
  CHECK_CONTAINS(uk_last_error_log(), "z = x +* 2;");
  uk_elementwise_destroy(badk);
  /* block size */
  uk_launch l = {.size = -1, .block_size = 2048};
  in[1] = uk_arg_array(&y);
  CHECK_STATUS(uk_elementwise_call(sq, in, 2, &z, 1, &l), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "squared_diff: block_size 2048 is out of range (1..1024, or 0 for the default)");
  /* a block size that works */
  l.block_size = 32;
  CHECK_OK(uk_elementwise_call(sq, in, 2, &z, 1, &l));
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_elementwise_destroy(sq);
}

/* A second call with the same specialisation compiles nothing. */
static void cache_hits(void) {
  uk_cache_stats s0, s1;
  uk_elementwise *k = make("T x", "T z", "z = x * 3", "triple");
  uk_array x = dev1(UK_FLOAT32, 1000), z = dev1(UK_FLOAT32, 1000);
  uk_arg in[1] = {uk_arg_array(&x)};
  CHECK_OK(uk_elementwise_call(k, in, 1, &z, 1, NULL));
  CHECK_OK(uk_context_cache_stats(ctx, &s0));
  for (int j = 0; j < 10; j++) CHECK_OK(uk_elementwise_call(k, in, 1, &z, 1, NULL));
  CHECK_OK(uk_context_cache_stats(ctx, &s1));
  CHECK(s1.compiles == s0.compiles && s1.memory_hits == s0.memory_hits && s1.memory_misses == s0.memory_misses);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_elementwise_destroy(k);
}

/* A texture object over a linear float buffer, read with tex1Dfetch. */
static void textures(void) {
  const int64_t n = 100003;
  float *hx = rand_f32(n, -2, 2), *hy = rand_f32(n, 0.5, 1.5);
  uk_array x = up_f32(hx, n), y = up_f32(hy, n), z = dev1(UK_FLOAT32, n);
  poison(z.data, (size_t)n * 4);
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_LINEAR;
  res.res.linear.devPtr = (CUdeviceptr)x.data;
  res.res.linear.format = CU_AD_FORMAT_FLOAT;
  res.res.linear.numChannels = 1;
  res.res.linear.sizeInBytes = (size_t)n * 4;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.filterMode = CU_TR_FILTER_MODE_POINT;
  CUtexObject tex = 0;
  CHECK_OK(uk_device_set_current(0));
  CHECK(uk__cu.cuTexObjectCreate(&tex, &res, &td, NULL) == CUDA_SUCCESS);
  uk_elementwise *k = make("U t, T y", "T z", "z = tex1Dfetch<float>(t, (int)i) * y + (T)1", "texture_read");
  uk_arg in[2] = {uk_arg_texture((uint64_t)tex), uk_arg_array(&y)};
  CHECK_OK(uk_elementwise_call(k, in, 2, &z, 1, NULL));
  float *hz = down(z.data, (size_t)n * 4);
  int64_t bad = 0;
  for (int64_t i = 0; hz && i < n; i++) {
    double want = (double)hx[i] * hy[i] + 1.0;
    bad += !(fabs(hz[i] - want) <= 1e-6 * (fabs(want) + 1));
  }
  CHECK(bad == 0);
  /* its placeholder may not type anything else */
  uk_elementwise *k2 = make("T t, T y", "T z", "z = tex1Dfetch<float>(t, (int)i) * y", "texture_bad");
  uk_array z2 = {0};
  CHECK_STATUS(uk_elementwise_call(k2, in, 2, &z2, 1, NULL), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "a texture binds no type");
  uk__cu.cuTexObjectDestroy(tex);
  uk_elementwise_destroy(k);
  uk_elementwise_destroy(k2);
  free(hx);
  free(hy);
  free(hz);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_elementwise");
  user_guide();
  every_dtype();
  half_rounding();
  complex_math();
  strides();
  tiled();
  shapes();
  overlap();
  errors();
  cache_hits();
  textures();
  huge();
  CHECK_OK(uk_device_synchronize());
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_elementwise");
}
