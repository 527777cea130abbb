/* The fusion row kernel's sizing on a real GPU (issue 25 item 3;
 * codegen/fuse_row_plan.c uk__row_size picks the variant): softmax,
 * centering, a layer norm and row sums (a per-element and a per-row
 * output) at row widths 1 .. 65537 (a thread a row, sub-warps, warps,
 * blocks; rows in registers by scalars and 16-byte vectors, in shared
 * memory, and too wide: re-read) and 1, 7 and 1000 rows (129 for the
 * widest: three row axes), against host references in double from the
 * same float32 values; x / max(x) bit for bit against the host's float32
 * division (the row's reciprocal, _uk_rdiv); whole narrow rows through a warp's
 * shared slot (staged) and not. Then strided views: rows with a pitch, a start
 * off the vector grid, a reversed last axis, float64, and a given
 * output with a pitch whose gaps must keep their poison (a vector store
 * past a row would show); and a few very long rows (the split plan).
 * Outputs are poisoned before each run. */
#include <math.h>

#include "testutil.h"

static uk_context *ctx;
static int want_staged = -1; /* >= 0: run_case checks the variant moves rows through a warp's slot (_UK_RX) */

enum { P_SOFTMAX, P_CENTER, P_NORM, P_SUMS, NPROGS };

static const char *const progs[NPROGS] = {
    "e = exp(x - max(x, axis=-1, keepdims=True)); z = e / sum(e, axis=-1, keepdims=True)",
    "z = x - mean(x, axis=-1, keepdims=True)",
    "d = x - mean(x, axis=-1, keepdims=True); z = d / sqrt(mean(d * d, axis=-1, keepdims=True) + 1e-5)",
    "z = x / sum(abs(x), axis=-1, keepdims=True); t = sum(x * x, axis=-1)"};
static const char *const names[NPROGS] = {"softmax", "center", "layernorm", "row sums"};

/* Host reference of program p over rows x n: z per element, t per row;
 * amp: per row, what the layer norm multiplies x - mean(x) by (a float32
 * mean's rounding grows by it), 1 for the others. */
static void reference(int p, const double *x, int64_t rows, int64_t n, double *z, double *t, double *amp) {
  for (int64_t r = 0; r < rows; r++) {
    const double *a = x + r * n;
    double *o = z + r * n, mx = -INFINITY, m = 0, se = 0, v = 0, sa = 0, sq = 0;
    for (int64_t c = 0; c < n; c++) mx = fmax(mx, a[c]), m += a[c], sa += fabs(a[c]), sq += a[c] * a[c];
    m /= (double)n;
    for (int64_t c = 0; c < n; c++) se += exp(a[c] - mx), v += (a[c] - m) * (a[c] - m);
    v /= (double)n;
    for (int64_t c = 0; c < n; c++)
      o[c] = p == P_SOFTMAX ? exp(a[c] - mx) / se
             : p == P_CENTER ? a[c] - m
             : p == P_NORM   ? (a[c] - m) / sqrt(v + 1e-5)
                             : a[c] / sa;
    t[r] = sq;
    amp[r] = p == P_NORM ? fmax(1, 1 / sqrt(v + 1e-5)) : 1;
  }
}

/* A rows x n float32/float64 view in a device buffer: row r at element
 * start + r * pitch (rows over nd - 1 axes), its last axis reversed with
 * rev; every byte of the buffer outside the view holds 0xA5. */
typedef struct view {
  uk_array a, buf;
  int64_t bytes;
} view;

static view make_view(uk_dtype t, int nd, const int64_t *shape, int64_t pitch, int64_t start, int rev,
                      const double *vals) {
  view w;
  memset(&w, 0, sizeof w);
  int64_t rows = 1, n = shape[nd - 1], es = (int64_t)uk_dtype_size(t);
  for (int d = 0; d < nd - 1; d++) rows *= shape[d];
  w.bytes = (rows * pitch + start) * es + 64;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &w.bytes, 0, NULL, &w.buf));
  uk_array_init(&w.a, w.buf.data + (uint64_t)(start * es), t, nd, shape);
  w.a.strides[nd - 1] = es;
  if (nd >= 2) w.a.strides[nd - 2] = pitch * es;
  if (nd == 3) w.a.strides[0] = shape[1] * pitch * es;
  if (rev && n > 0) {
    w.a.data += (uint64_t)((n - 1) * es);
    w.a.strides[nd - 1] = -es;
  }
  unsigned char *h = malloc((size_t)w.bytes);
  memset(h, 0xA5, (size_t)w.bytes);
  for (int64_t r = 0; vals && r < rows; r++)
    for (int64_t c = 0; c < n; c++) {
      unsigned char *q = h + (start + r * pitch + (rev ? n - 1 - c : c)) * es;
      double v = vals[r * n + c];
      if (t == UK_FLOAT32) {
        float f = (float)v;
        memcpy(q, &f, 4);
      } else {
        memcpy(q, &v, 8);
      }
    }
  CHECK_OK(uk_memcpy_htod(w.buf.data, h, (size_t)w.bytes));
  free(h);
  return w;
}

/* The view's values (logical order); *gaps: bytes outside it that lost
 * their poison. */
static double *read_view(const view *w, int64_t pitch, int64_t start, int rev, int64_t *gaps) {
  const uk_array *a = &w->a;
  int64_t rows = 1, n = a->shape[a->ndim - 1], es = (int64_t)uk_dtype_size(a->dtype);
  for (int d = 0; d < a->ndim - 1; d++) rows *= a->shape[d];
  unsigned char *h = malloc((size_t)w->bytes), *mine = calloc((size_t)w->bytes, 1);
  double *v = malloc(sizeof(double) * (size_t)(rows * n + 1));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, w->buf.data, (size_t)w->bytes));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < n; c++) {
      int64_t at = (start + r * pitch + (rev ? n - 1 - c : c)) * es;
      float f;
      if (es == 4) memcpy(&f, h + at, 4), v[r * n + c] = f;
      else memcpy(&v[r * n + c], h + at, 8);
      memset(mine + at, 1, (size_t)es);
    }
  *gaps = 0;
  for (int64_t b = 0; b < w->bytes; b++) *gaps += !mine[b] && h[b] != 0xA5;
  free(h);
  free(mine);
  return v;
}

static double *random_rows(int64_t total, uk_dtype t) {
  double *v = malloc(sizeof(double) * (size_t)(total + 1));
  for (int64_t k = 0; k < total; k++) {
    v[k] = ut_uniform(-4, 4);
    if (t == UK_FLOAT32) v[k] = (float)v[k];
  }
  return v;
}

/* |got - want| <= rtol |want| + atol amp[row], element by element (rows of
 * n; amp NULL: 1) */
static void check_rel(const char *what, const double *got, const double *want, int64_t total, int64_t n, double rtol,
                      double atol, const double *amp) {
  int bad = 0;
  for (int64_t k = 0; k < total; k++)
    if (!(fabs(got[k] - want[k]) <= rtol * fabs(want[k]) + atol * (amp ? amp[k / n] : 1)))
      if (bad++ < 5) fprintf(stderr, "%s: [%lld] got %.9g, want %.9g\n", what, (long long)k, got[k], want[k]);
  ut_checks++;
  if (bad) ut_failures++;
}

/* How a case lays out x and z (pitch - n: the gap after each row). */
typedef struct layout {
  uk_dtype t;
  int64_t xgap, xstart, zgap, zstart; /* zgap < 0: z allocated by the call */
  int rev;
} layout;

/* Program p over rows x n laid out as l; the plan must be the row kernel
 * (kernels 1) with rows in registers when regs, or kernels (the split
 * plan). */
static void run_case(int p, int64_t rows, int64_t n, const layout *l, int kernels, int regs) {
  int nd = rows % 3 == 0 && rows > 3 ? 3 : 2;
  int64_t shape[3] = {3, rows / 3, n}, total = rows * n, gaps = 0;
  if (nd == 2) shape[0] = rows, shape[1] = n;
  double *vx = random_rows(total, l->t), *want = malloc(sizeof(double) * (size_t)(total + 1)),
         *wt = malloc(sizeof(double) * (size_t)(rows + 1)), *amp = malloc(sizeof(double) * (size_t)(rows + 1));
  reference(p, vx, rows, n, want, wt, amp);
  view x = make_view(l->t, nd, shape, n + l->xgap, l->xstart, l->rev, vx), z, tv;
  memset(&z, 0, sizeof z);
  memset(&tv, 0, sizeof tv);
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = p == P_SUMS ? "z, t" : "z", .program = progs[p], .name = "rows"},
      &f));
  uk_arg in[1] = {uk_arg_array(&x.a)};
  uk_array out[2];
  memset(out, 0, sizeof out);
  int nout = p == P_SUMS ? 2 : 1, kc = -1;
  if (l->zgap >= 0) {
    z = make_view(l->t, nd, shape, n + l->zgap, l->zstart, 0, NULL);
    out[0] = z.a;
    if (p == P_SUMS) { /* t given too (given outputs are all or none), poisoned */
      tv = make_view(l->t, nd - 1, shape, shape[nd - 2], 0, 0, NULL);
      out[1] = tv.a;
    }
  }
  char label[128];
  snprintf(label, sizeof label, "%s %s %lldx%lld gap %lld start %lld%s z gap %lld", names[p],
           uk_dtype_name(l->t), (long long)rows, (long long)n, (long long)l->xgap, (long long)l->xstart,
           l->rev ? " reversed" : "", (long long)l->zgap);
  CHECK_OK(uk_fusion_kernel_count(f, in, 1, out, nout, NULL, &kc));
  if (kc != kernels) fprintf(stderr, "%s: %d kernels, want %d\n", label, kc, kernels);
  CHECK(kc == kernels);
  if (kernels == 1) { /* the variant: rows in registers or not */
    char *src = NULL;
    CHECK_OK(uk_fusion_source(f, in, 1, out, nout, NULL, &src));
    int in_regs = src && strstr(src, "\n// row plan: rows in registers") != NULL;
    if (in_regs != regs) fprintf(stderr, "%s: rows in registers %d, want %d\n", label, in_regs, regs);
    CHECK(in_regs == regs);
    if (want_staged >= 0) {
      int staged = src && strstr(src, "\n#define _UK_RX 1\n") != NULL;
      if (staged != want_staged) fprintf(stderr, "%s: staged %d, want %d\n", label, staged, want_staged);
      CHECK(staged == want_staged);
    }
    uk_free(src);
  }
  CHECK_OK(uk_fusion_call(f, in, 1, out, nout, NULL));
  double *got;
  if (l->zgap >= 0) {
    got = read_view(&z, n + l->zgap, l->zstart, 0, &gaps);
    if (gaps) fprintf(stderr, "%s: %lld bytes written outside z\n", label, (long long)gaps);
    CHECK(gaps == 0);
  } else {
    view a = {out[0], out[0], total * (int64_t)uk_dtype_size(l->t)};
    CHECK(out[0].ndim == nd && out[0].dtype == l->t);
    got = read_view(&a, n, 0, 0, &gaps);
    uk_array_free(ctx, &out[0], NULL);
  }
  int f64 = l->t == UK_FLOAT64;
  /* float32: a row's sums round at ~1e-7 of their terms; centering cancels
   * (the layer norm then scales that by amp) */
  check_rel(label, got, want, total, n, f64 ? 1e-12 : 2e-5, f64 ? 1e-12 : (p == P_SOFTMAX ? 1e-30 : 4e-6), amp);
  free(got);
  if (p == P_SUMS) {
    CHECK(out[1].ndim == nd - 1 && out[1].dtype == l->t);
    int64_t last = out[1].shape[nd - 2];
    view a = l->zgap >= 0 ? tv : (view){out[1], out[1], rows * (int64_t)uk_dtype_size(l->t)};
    double *gt = read_view(&a, last, 0, 0, &gaps);
    CHECK(gaps == 0);
    check_rel("row sums t", gt, wt, rows, last, f64 ? 1e-12 : 2e-5, 0, NULL);
    free(gt);
    if (l->zgap >= 0) uk_array_free(ctx, &tv.buf, NULL);
    else uk_array_free(ctx, &out[1], NULL);
  }
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x.buf, NULL);
  if (l->zgap >= 0) uk_array_free(ctx, &z.buf, NULL);
  free(vx);
  free(want);
  free(wt);
  free(amp);
}

/* Every width and row count, float32, contiguous (vectors where the width
 * allows). A row fits registers up to 8192 elements (16 a thread, 512
 * threads), of float4s up to 16384 (32 a thread): whole rows (T x K x V =
 * n: 32, 128, 2048, 8192, 16384) and rows with bounds tests (the rest). */
static void widths(void) {
  static const int64_t ns[] = {1, 3, 31, 32, 33, 127, 128, 1000, 2048, 4096, 8192, 8193, 12289, 16384, 16385, 65537};
  layout l = {UK_FLOAT32, 0, 0, -1, 0, 0};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (int r = 0; r < 3; r++) {
      int64_t rows = r == 0 ? 1 : r == 1 ? 7 : ns[k] > 8192 ? 129 : 1000;
      int regs = ns[k] <= 8192 || (ns[k] <= 16384 && ns[k] % 4 == 0);
      for (int p = 0; p < NPROGS; p++) run_case(p, rows, ns[k], &l, 1, regs);
    }
}

/* Whole narrow rows of contiguous vectors (T < 8 threads a row, T x K >=
 * 8: rows of 32 and 64 float32) move through a warp's shared slot; rows
 * of 16 (T x K = 4) do not; row counts that leave a warp part full (7,
 * 999 = 3 x 333: three axes, 4099) and a row stride off the row (pitch
 * n + 4: vectors still line up, not staged). */
static void staged_rows(void) {
  static const int64_t ns[] = {16, 32, 64}, rs[] = {1, 7, 999, 4099};
  layout l = {UK_FLOAT32, 0, 0, -1, 0, 0}, pitched = {UK_FLOAT32, 4, 0, -1, 0, 0};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    for (size_t r = 0; r < sizeof rs / sizeof rs[0]; r++)
      for (int p = 0; p < NPROGS; p++) {
        want_staged = ns[k] >= 32;
        run_case(p, rs[r], ns[k], &l, 1, 1);
        want_staged = rs[r] == 1 && ns[k] >= 32; /* one row is contiguous whatever its pitch */
        run_case(p, rs[r], ns[k], &pitched, 1, 1);
      }
  want_staged = -1;
}

/* A float32 value of magnitude 2^e (e in -149 .. 127), random mantissa
 * and sign. */
static float any_float(int e) {
  float m = (float)ut_uniform(1, 2);
  float v = ldexpf(m, e);
  if (e < -126) v = ldexpf(1, e) * (float)(ut_rand() % 4 + 1); /* subnormal */
  return ut_rand() % 2 ? -v : v;
}

/* x / max(x) in float32 by the row's reciprocal (_uk_rdiv) must be the
 * division's own result, bit for bit (max is exact: the host's is the
 * device's): rows of values over the whole exponent range, zeros,
 * subnormals, infinities; maxima in range, huge, tiny and subnormal (the
 * division itself), 0 and infinite; whole rows and rows with bounds tests,
 * vectors and scalars. */
static void division_exact(void) {
  static const int64_t ns[] = {1, 32, 256, 999, 1000, 4096};
  static const int spread[] = {8, 60, 127, 149}; /* exponents within +-spread of a row's scale */
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    int64_t n = ns[k], rows = 48, total = rows * n, shape[2] = {rows, n};
    float *h = malloc(sizeof(float) * (size_t)total), *z = malloc(sizeof(float) * (size_t)total);
    for (int64_t r = 0; r < rows; r++) {
      int sc = (int)(r % 8) * 36 - 140, sp = spread[r % 4]; /* scales -140 .. 112 */
      for (int64_t c = 0; c < n; c++) {
        int e = sc + (int)(ut_rand() % (uint64_t)(2 * sp + 1)) - sp;
        e = e < -149 ? -149 : e > 127 ? 127 : e;
        float v = any_float(e);
        uint64_t u = ut_rand() % 64;
        if (u == 0) v = 0.0f; /* +0 only: -0 and +0 in one row give max an order-dependent sign */
        if (u == 1 && r % 16 == 5) v = INFINITY;
        if (r % 16 == 7) v = -fabsf(v); /* max <= 0; with a zero, max is +0 */
        h[r * n + c] = v;
      }
    }
    uk_array x, out;
    memset(&out, 0, sizeof out);
    CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x));
    CHECK_OK(uk_memcpy_htod(x.data, h, sizeof(float) * (size_t)total));
    uk_fusion *f = NULL;
    CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z",
                                                     .program = "z = x / max(x, axis=-1, keepdims=True)",
                                                     .name = "rdiv"}, &f));
    uk_arg in[1] = {uk_arg_array(&x)};
    char *src = NULL;
    CHECK_OK(uk_fusion_source(f, in, 1, &out, 1, NULL, &src));
    CHECK(src && strstr(src, "\n// row plan: rows in registers") && strstr(src, "_uk_rdiv("));
    uk_free(src);
    CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
    CHECK_OK(uk_device_synchronize());
    CHECK_OK(uk_memcpy_dtoh(z, out.data, sizeof(float) * (size_t)total));
    int bad = 0;
    for (int64_t r = 0; r < rows; r++) {
      float m = h[r * n];
      for (int64_t c = 1; c < n; c++) m = h[r * n + c] > m ? h[r * n + c] : m;
      for (int64_t c = 0; c < n; c++) {
        float want = h[r * n + c] / m, got = z[r * n + c];
        uint32_t a, b;
        memcpy(&a, &want, 4);
        memcpy(&b, &got, 4);
        if (a != b && !(isnan(want) && isnan(got)))
          if (bad++ < 5)
            fprintf(stderr, "x / max(x) %lldx%lld [%lld, %lld]: %a / %a = %a, got %a\n", (long long)rows,
                    (long long)n, (long long)r, (long long)c, h[r * n + c], m, want, got);
      }
    }
    ut_checks++;
    if (bad) ut_failures++;
    uk_fusion_destroy(f);
    uk_array_free(ctx, &x, NULL);
    uk_array_free(ctx, &out, NULL);
    free(h);
    free(z);
  }
}

/* Views: row pitch, starts off the vector grid, reversed rows, float64, a
 * given output with gaps between its rows. */
static void strided(void) {
  static const layout ls[] = {
      {UK_FLOAT32, 4, 0, -1, 0, 0},  /* pitch n + 4: vectors still line up */
      {UK_FLOAT32, 1, 0, -1, 0, 0},  /* pitch n + 1: scalar accesses */
      {UK_FLOAT32, 0, 1, -1, 0, 0},  /* x starts one element in */
      {UK_FLOAT32, 0, 0, -1, 0, 1},  /* x[..., ::-1] */
      {UK_FLOAT32, 0, 0, 4, 0, 0},   /* z with gaps of 4 */
      {UK_FLOAT32, 0, 0, 3, 1, 0},   /* z with gaps of 3, one element in */
      {UK_FLOAT64, 0, 0, 2, 0, 0},   /* float64, 2 a vector */
      {UK_FLOAT64, 3, 1, -1, 0, 1},  /* float64, every oddity */
  };
  static const int64_t ns[] = {32, 128, 1000, 12289};
  for (size_t j = 0; j < sizeof ls / sizeof ls[0]; j++)
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      /* float32: 16 a thread, 512 threads (12289: scalars, odd); float64
       * layer norm: 24 register bytes an element, 8 a thread: 4096 a row */
      int regs = ns[k] <= 4096;
      for (int p = 0; p < NPROGS; p++) run_case(p, 39, ns[k], &ls[j], 1, regs); /* 3 x 13 rows */
    }
  /* a few rows of 2.4 MB: the split plan (reductions over many blocks) */
  layout l = {UK_FLOAT32, 0, 0, -1, 0, 0};
  run_case(P_CENTER, 3, 300007, &l, 2, 0);
  run_case(P_SOFTMAX, 3, 300007, &l, 2, 0);
}

int main(void) {
  ut_require_gpu();
  ut_seed(25);
  CHECK_OK(uk_context_create(NULL, &ctx));
  widths();
  staged_rows();
  division_exact();
  strided();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_fusion_rows");
}
