/* uk_fusion on a real GPU.
 *  - the NumPy table's programs (tests/data/fusion_table.txt "prog" rows):
 *    the same deterministic inputs as the generator, result dtypes and values
 *    as NumPy 2 computed them;
 *  - random data against host references in double precision: odd sizes,
 *    negative-stride and broadcast views, given outputs converted to their
 *    dtype, 0-d and empty arrays, one-pass mean/var/std, argmax ties and
 *    NaN, a full reduction, the row plan and the split plan (center,
 *    softmax, a layer norm; odd row lengths, in place, overlaps), float16
 *    rounding per operation, Python floor division and modulo on ints;
 *  - the C builder's fusion, precompile then a call that compiles nothing,
 *    a reduction into a given strided output.
 * Outputs are poisoned before each run. */
#include <math.h>

#include "codegen/scalar.h"
#include "testutil.h"

static uk_context *ctx;

static void put(uk_dtype t, unsigned char *p, double v) {
  union {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f; double d; uint16_t h; float c[2]; unsigned char b;
  } u;
  memset(&u, 0, sizeof u);
  switch (t) {
  case UK_BOOL: u.b = v != 0; break;
  case UK_INT8: u.i8 = (int8_t)v; break;
  case UK_INT16: u.i16 = (int16_t)v; break;
  case UK_INT32: u.i32 = (int32_t)v; break;
  case UK_INT64: u.i64 = (int64_t)v; break;
  case UK_UINT8: u.u8 = (uint8_t)v; break;
  case UK_UINT16: u.u16 = (uint16_t)v; break;
  case UK_UINT32: u.u32 = (uint32_t)v; break;
  case UK_UINT64: u.u64 = (uint64_t)v; break;
  case UK_FLOAT16: u.h = uk__f64_to_f16_bits(v); break;
  case UK_FLOAT32: u.f = (float)v; break;
  case UK_FLOAT64: u.d = v; break;
  case UK_COMPLEX64: u.c[0] = (float)v; break;
  default: break;
  }
  memcpy(p, &u, uk_dtype_size(t));
}

static double get(uk_dtype t, const unsigned char *p) {
  union {
    int8_t i8; int16_t i16; int32_t i32; int64_t i64; uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    float f; double d; uint16_t h; float c[2]; unsigned char b;
  } u;
  memcpy(&u, p, uk_dtype_size(t));
  switch (t) {
  case UK_BOOL: return u.b;
  case UK_INT8: return u.i8;
  case UK_INT16: return u.i16;
  case UK_INT32: return u.i32;
  case UK_INT64: return (double)u.i64;
  case UK_UINT8: return u.u8;
  case UK_UINT16: return u.u16;
  case UK_UINT32: return u.u32;
  case UK_UINT64: return (double)u.u64;
  case UK_FLOAT16: return uk__f16_bits_to_f64(u.h);
  case UK_FLOAT32: return u.f;
  case UK_FLOAT64: return u.d;
  case UK_COMPLEX64: return u.c[0];
  default: return NAN;
  }
}

static int64_t numel(const uk_array *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

/* byte offset of logical (C-order) element k */
static int64_t off(const uk_array *a, int64_t k) {
  int64_t o = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    o += (k % a->shape[d]) * a->strides[d];
    k /= a->shape[d];
  }
  return o;
}

/* A device array holding vals (logical order; NULL = poison 0xA5). With
 * reversed != 0 the last axis has a negative stride (a [..., ::-1] view). */
typedef struct dev {
  uk_array a, buf;
} dev;

static dev upload(uk_dtype t, int ndim, const int64_t *shape, const double *vals, int reversed) {
  dev r;
  memset(&r, 0, sizeof r);
  uk_array_init(&r.a, 0, t, ndim, shape);
  int64_t n = numel(&r.a), bytes = n * (int64_t)uk_dtype_size(t) + 64;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &bytes, 0, NULL, &r.buf));
  r.a.data = r.buf.data;
  if (reversed && ndim > 0 && shape[ndim - 1] > 0) {
    r.a.data += (uint64_t)((shape[ndim - 1] - 1) * r.a.strides[ndim - 1]);
    r.a.strides[ndim - 1] = -r.a.strides[ndim - 1];
  }
  unsigned char *h = malloc((size_t)bytes);
  memset(h, 0xA5, (size_t)bytes);
  for (int64_t k = 0; vals && k < n; k++) put(t, h + (r.a.data - r.buf.data) + off(&r.a, k), vals[k]);
  CHECK_OK(uk_memcpy_htod(r.buf.data, h, (size_t)bytes));
  free(h);
  return r;
}

static double *download(const uk_array *a, uint64_t base, size_t bytes) {
  int64_t n = numel(a);
  unsigned char *h = malloc(bytes ? bytes : 1);
  double *v = malloc(sizeof(double) * (n > 0 ? (size_t)n : 1));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, base, bytes));
  for (int64_t k = 0; k < n; k++) v[k] = get(a->dtype, h + (a->data - base) + off(a, k));
  free(h);
  return v;
}

/* an allocated (C-contiguous) output's values */
static double *fetch_out(uk_array *a) {
  int64_t n = numel(a);
  double *v = download(a, a->data, (size_t)(n * (int64_t)uk_dtype_size(a->dtype)));
  uk_array_free(ctx, a, NULL);
  return v;
}

static int close_to(double got, double want, double rtol) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs(got - want) <= rtol * fmax(1.0, fabs(want));
}

static double tol(uk_dtype t) {
  return t == UK_FLOAT16 ? 1e-2 : t == UK_BFLOAT16 ? 2e-2 : t == UK_FLOAT32 ? 1e-5 : t == UK_FLOAT64 ? 1e-12 : 0;
}

static void check_values(const char *what, const double *got, const double *want, int64_t n, double rtol) {
  int bad = 0;
  for (int64_t k = 0; k < n; k++)
    if (!close_to(got[k], want[k], rtol)) {
      if (bad++ < 5) fprintf(stderr, "%s: [%lld] got %.17g, want %.17g\n", what, (long long)k, got[k], want[k]);
    }
  ut_checks++;
  if (bad) ut_failures++;
}

static uk_fusion *make(const char *ins, const char *outs, const char *prog) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "g"}, &f));
  return f;
}

/* ------------------------------------------------------------------------ */
/* The NumPy table's programs                                                */

static double *sample(uk_dtype t, int64_t n, int seed) {
  double *v = malloc(sizeof(double) * (size_t)n);
  int u = t == UK_BOOL || uk_dtype_name(t)[0] == 'u';
  for (int64_t k = 0; k < n; k++) {
    double x = (double)(((k * 7 + seed * 3) % 11) - 4);
    v[k] = u ? fabs(x) + (t != UK_BOOL) : x;
  }
  return v;
}

static const struct {
  const char *name, *outs, *text;
} progs[] = {
    {"axpy", "z", "z = 2 * x + y"},
    {"divmod", "q, r", "q = x // (y + 7); r = x % (y - 9)"},
    {"truediv", "z", "z = x / (y + 11)"},
    {"where", "z", "z = where(x > y, x - y, y * 3)"},
    {"rowsum", "s", "s = sum(x * y, axis=1)"},
    {"colmax", "m", "m = max(x + y, axis=0)"},
    {"meanvar", "m, v", "m = mean(x, axis=-1); v = var(x, axis=-1)"},
    {"argmax", "i", "i = argmax(x - y, axis=1)"},
    {"center", "c", "c = x - mean(x, axis=1, keepdims=True)"},
    {"total", "t", "t = sum(x) + prod(y)"},
};

static void table_programs(void) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/fusion_table.txt", dir ? dir : "tests");
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL);
  if (!fp) return;
  static char line[1 << 16];
  int rows = 0;
  while (fgets(line, sizeof line, fp)) {
    char name[32], dt[32], rdt[32];
    int k, used = 0;
    if (sscanf(line, "prog %31s %31s %d %31s %n", name, dt, &k, rdt, &used) != 4) continue;
    int p = -1;
    for (int j = 0; j < (int)(sizeof progs / sizeof progs[0]); j++)
      if (!strcmp(progs[j].name, name)) p = j;
    CHECK(p >= 0);
    if (p < 0) continue;
    uk_dtype t, rt;
    CHECK_OK(uk_dtype_from_name(dt, &t));
    CHECK_OK(uk_dtype_from_name(rdt, &rt));
    int64_t sx[2] = {3, 5}, sy[1] = {5};
    double *vx = sample(t, 15, 1), *vy = sample(t, 5, 2);
    dev x = upload(t, 2, sx, vx, 0), y = upload(t, 1, sy, vy, 0);
    uk_fusion *f = make("x, y", progs[p].outs, progs[p].text);
    uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
    uk_array out[2];
    memset(out, 0, sizeof out);
    int nout = strchr(progs[p].outs, ',') ? 2 : 1;
    CHECK_OK(uk_fusion_call(f, in, 2, out, nout, NULL));
    CHECK(out[k].dtype == rt);
    double want[64];
    int n = 0;
    for (char *s = line + used; n < 64;) {
      char *e;
      double v = strtod(s, &e);
      if (e == s) break;
      want[n++] = v;
      s = e;
    }
    CHECK(numel(&out[k]) == n);
    if (out[k].data && numel(&out[k]) == n) {
      double *got = download(&out[k], out[k].data, (size_t)n * uk_dtype_size(rt));
      char what[96];
      snprintf(what, sizeof what, "table %s %s out%d", name, dt, k);
      check_values(what, got, want, n, tol(rt) * 4);
      free(got);
    }
    for (int j = 0; j < nout; j++) uk_array_free(ctx, &out[j], NULL);
    uk_fusion_destroy(f);
    uk_array_free(ctx, &x.buf, NULL);
    uk_array_free(ctx, &y.buf, NULL);
    free(vx);
    free(vy);
    rows++;
  }
  fclose(fp);
  CHECK(rows >= 70);
}

/* ------------------------------------------------------------------------ */
/* Random data against host references                                       */

static double *randv(int64_t n, double lo, double hi) {
  double *v = malloc(sizeof(double) * (n > 0 ? (size_t)n : 1));
  for (int64_t k = 0; k < n; k++) v[k] = ut_uniform(lo, hi);
  return v;
}

/* z = a * x + y: x reversed along its last axis, y broadcast, a weak float;
 * once allocated (float32) and once into a given float64 output. */
static void axpy_views(void) {
  int64_t sx[2] = {37, 1023}, sy[1] = {1023}, n = 37 * 1023;
  double *vx = randv(n, -2, 2), *vy = randv(1023, -2, 2), *want = malloc(sizeof(double) * (size_t)n);
  dev x = upload(UK_FLOAT32, 2, sx, vx, 1), y = upload(UK_FLOAT32, 1, sy, vy, 0);
  for (int64_t k = 0; k < n; k++) want[k] = (float)((float)(1.5f * (float)vx[k]) + (float)vy[k % 1023]);
  uk_fusion *f = make("a, x, y", "z", "z = a * x + y");
  uk_arg in[3] = {uk_arg_float(1.5), uk_arg_array(&x.a), uk_arg_array(&y.a)};
  uk_array out = {0};
  CHECK_OK(uk_fusion_call(f, in, 3, &out, 1, NULL));
  CHECK(out.dtype == UK_FLOAT32 && out.ndim == 2 && out.shape[0] == 37 && out.shape[1] == 1023);
  double *got = fetch_out(&out);
  check_values("axpy allocated", got, want, n, 1e-6);
  free(got);
  dev z = upload(UK_FLOAT64, 2, sx, NULL, 0);
  CHECK_OK(uk_fusion_call(f, in, 3, &z.a, 1, NULL));
  got = download(&z.a, z.buf.data, (size_t)n * 8);
  check_values("axpy given float64", got, want, n, 1e-6);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x.buf, NULL);
  uk_array_free(ctx, &y.buf, NULL);
  uk_array_free(ctx, &z.buf, NULL);
  free(vx);
  free(vy);
  free(want);
}

/* d = sqrt(sum((x - y)^2, axis=-1)), mean/var/std in one kernel, argmax */
static void reductions(void) {
  int64_t sx[2] = {13, 1001}, n = 13 * 1001;
  double *vx = randv(n, -3, 3), *vy = randv(n, -3, 3);
  vx[5 * 1001 + 17] = 10; /* argmax ties: the first index wins */
  vx[5 * 1001 + 900] = 10;
  vx[7 * 1001 + 300] = NAN; /* NaN is the max and its first index the argmax */
  vx[7 * 1001 + 400] = NAN;
  dev x = upload(UK_FLOAT32, 2, sx, vx, 0), y = upload(UK_FLOAT32, 2, sx, vy, 0);
  uk_fusion *f = make("x, y", "d, m, v, s, i", "t = x - y; d = sqrt(sum(t * t, axis=-1)); m = mean(y, axis=1); "
                                            "v = var(y, axis=1); s = std(y, axis=1, ddof=1); i = argmax(x, axis=1)");
  uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
  uk_array out[5];
  memset(out, 0, sizeof out);
  int kc = 0;
  CHECK_OK(uk_fusion_kernel_count(f, in, 2, out, 5, NULL, &kc));
  CHECK(kc == 1);
  CHECK_OK(uk_fusion_call(f, in, 2, out, 5, NULL));
  double wd[13], wm[13], wv[13], ws[13], wi[13];
  for (int r = 0; r < 13; r++) {
    double d = 0, m = 0, v = 0, best = -INFINITY;
    int bi = -1;
    for (int c = 0; c < 1001; c++) {
      double a = (float)vx[r * 1001 + c], b = (float)vy[r * 1001 + c];
      if (!isnan(a)) d += (a - b) * (a - b);
      else d = NAN;
      m += b;
      if (bi < 0 || (isnan(a) && !isnan(best)) || (!isnan(best) && a > best)) best = a, bi = c;
    }
    m /= 1001;
    for (int c = 0; c < 1001; c++) v += ((float)vy[r * 1001 + c] - m) * ((float)vy[r * 1001 + c] - m);
    wd[r] = sqrt(d);
    wm[r] = m;
    wv[r] = v / 1001;
    ws[r] = sqrt(v / 1000);
    wi[r] = bi;
  }
  CHECK(wi[5] == 17 && wi[7] == 300);
  double *got;
  CHECK(out[4].dtype == UK_INT64 && out[0].ndim == 1 && out[0].shape[0] == 13);
  got = fetch_out(&out[0]);
  check_values("dist", got, wd, 13, 1e-5);
  free(got);
  got = fetch_out(&out[1]);
  check_values("mean", got, wm, 13, 1e-5);
  free(got);
  got = fetch_out(&out[2]);
  check_values("var", got, wv, 13, 1e-4);
  free(got);
  got = fetch_out(&out[3]);
  check_values("std ddof=1", got, ws, 13, 1e-4);
  free(got);
  got = fetch_out(&out[4]);
  check_values("argmax", got, wi, 13, 0);
  free(got);
  uk_fusion_destroy(f);
  /* a full reduction of 2^20 + 3 products, keepdims, and axis=0 */
  int64_t big = (1 << 20) + 3;
  double *va = randv(big, -1, 1), *vb = randv(big, -1, 1), full = 0;
  for (int64_t k = 0; k < big; k++) full += (double)((float)va[k] * (float)vb[k]);
  dev a = upload(UK_FLOAT32, 1, &big, va, 0), b = upload(UK_FLOAT32, 1, &big, vb, 1);
  double rb[1];
  f = make("x, y", "s", "s = sum(x * y, keepdims=True)");
  uk_arg ab[2] = {uk_arg_array(&a.a), uk_arg_array(&b.a)};
  /* b is a reversed view: upload placed its logical values, the reference uses the same */
  uk_array s = {0};
  CHECK_OK(uk_fusion_call(f, ab, 2, &s, 1, NULL));
  CHECK(s.ndim == 1 && s.shape[0] == 1);
  got = fetch_out(&s);
  rb[0] = full;
  check_values("full sum", got, rb, 1, 1e-4);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &a.buf, NULL);
  uk_array_free(ctx, &b.buf, NULL);
  free(va);
  free(vb);
  uk_array_free(ctx, &x.buf, NULL);
  uk_array_free(ctx, &y.buf, NULL);
  free(vx);
  free(vy);
}

/* Centering and softmax over 19 rows of 257: the row plan (one kernel; the
 * split plan is checked in row_plans), against the host. */
static void split_plans(void) {
  int64_t sx[2] = {19, 257}, n = 19 * 257;
  double *vx = randv(n, -5, 5), *wc = malloc(sizeof(double) * (size_t)n), *wsm = malloc(sizeof(double) * (size_t)n);
  for (int r = 0; r < 19; r++) {
    double m = 0, mx = -INFINITY, se = 0;
    for (int c = 0; c < 257; c++) m += (float)vx[r * 257 + c], mx = fmax(mx, (float)vx[r * 257 + c]);
    m /= 257;
    for (int c = 0; c < 257; c++) se += exp((float)vx[r * 257 + c] - mx);
    for (int c = 0; c < 257; c++) {
      wc[r * 257 + c] = (float)vx[r * 257 + c] - m;
      wsm[r * 257 + c] = exp((float)vx[r * 257 + c] - mx) / se;
    }
  }
  dev x = upload(UK_FLOAT32, 2, sx, vx, 1);
  /* the reversed view: logical values are vx as given */
  uk_arg in[1] = {uk_arg_array(&x.a)};
  uk_fusion *f = make("x", "c", "c = x - mean(x, axis=1, keepdims=True)");
  uk_array out = {0};
  int kc = 0;
  CHECK_OK(uk_fusion_kernel_count(f, in, 1, &out, 1, NULL, &kc));
  CHECK(kc == 1);
  CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
  double *got = fetch_out(&out);
  check_values("center", got, wc, n, 1e-5);
  free(got);
  uk_fusion_destroy(f);
  f = make("x", "y", "m = max(x, axis=-1, keepdims=True)\ne = exp(x - m)\ny = e / sum(e, axis=-1, keepdims=True)");
  CHECK_OK(uk_fusion_kernel_count(f, in, 1, &out, 1, NULL, &kc));
  CHECK(kc == 1);
  CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
  got = fetch_out(&out);
  check_values("softmax", got, wsm, n, 1e-5);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x.buf, NULL);
  free(vx);
  free(wc);
  free(wsm);
}

/* ------------------------------------------------------------------------ */
/* The row plan (codegen/fuse_row.c)                                         */

/* v as dtype t would hold it */
static double as_dtype(uk_dtype t, double v) {
  unsigned char b[16];
  put(t, b, v);
  return get(t, b);
}

/* |got - want| <= rtol |want| + atol, element by element */
static void check_rel(const char *what, const double *got, const double *want, int64_t n, double rtol, double atol) {
  int bad = 0;
  for (int64_t k = 0; k < n; k++)
    if (!(fabs(got[k] - want[k]) <= rtol * fabs(want[k]) + atol)) {
      if (bad++ < 5) fprintf(stderr, "%s: [%lld] got %.17g, want %.17g\n", what, (long long)k, got[k], want[k]);
    }
  ut_checks++;
  if (bad) ut_failures++;
}

enum { R_SOFTMAX = 0, R_CENTER, R_NORM };

/* Host references per row of n (double, from the dtype's values): softmax,
 * centering, and the layer norm (x - m) / sqrt(var + eps) * y + y with its
 * per-row log-sum-exp of x (second output, one value per row). */
static void row_ref(int what, const double *x, const double *y, int64_t rows, int64_t n, double *z, double *lse) {
  for (int64_t r = 0; r < rows; r++) {
    const double *a = x + r * n;
    double *o = z + r * n;
    double m = 0, mx = -INFINITY, se = 0, v = 0;
    for (int64_t c = 0; c < n; c++) m += a[c], mx = fmax(mx, a[c]);
    m /= (double)n;
    for (int64_t c = 0; c < n; c++) se += exp(a[c] - mx), v += (a[c] - m) * (a[c] - m);
    v /= (double)n;
    for (int64_t c = 0; c < n; c++)
      o[c] = what == R_SOFTMAX ? exp(a[c] - mx) / se : what == R_CENTER ? a[c] - m : (a[c] - m) / sqrt(v + 1e-5) * y[c] + y[c];
    if (lse) lse[r] = log(se) + mx;
  }
}

static const char *const row_progs[] = {
    "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)",
    "z = x - mean(x, axis=-1, keepdims=True)",
    "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * y + y; "
    "l = log(sum(exp(x - max(x, axis=-1, keepdims=True)), axis=-1)) + max(x, axis=-1)"};

/* One program over rows x n of dtype t (x's last axis reversed when rev),
 * outputs allocated; the plan's kernel count must be kernels. */
static void row_case(int what, uk_dtype t, int64_t rows, int64_t n, int rev, int kernels) {
  int64_t sx[3] = {3, rows / 3, n}, sy[1] = {n}, total = rows * n;
  int nd = rows % 3 == 0 && rows > 0 ? 3 : 2; /* two row axes when rows allow */
  if (nd == 2) sx[0] = rows, sx[1] = n;
  double *vx = randv(total, -4, 4), *vy = randv(n, 0.5, 1.5);
  for (int64_t k = 0; k < total; k++) vx[k] = as_dtype(t, vx[k]);
  for (int64_t k = 0; k < n; k++) vy[k] = as_dtype(t, vy[k]);
  double *want = malloc(sizeof(double) * (size_t)(total ? total : 1)), *wl = malloc(sizeof(double) * (size_t)(rows + 1));
  row_ref(what, vx, vy, rows, n, want, wl);
  dev x = upload(t, nd, sx, vx, rev), y = upload(t, 1, sy, vy, 0);
  uk_fusion *f = make(what == R_NORM ? "x, y, eps" : "x", what == R_NORM ? "z, l" : "z", row_progs[what]);
  uk_arg in[3] = {uk_arg_array(&x.a), uk_arg_array(&y.a), uk_arg_float(1e-5)};
  int nin = what == R_NORM ? 3 : 1, nout = what == R_NORM ? 2 : 1, kc = -1;
  uk_array out[2];
  memset(out, 0, sizeof out);
  char label[96];
  snprintf(label, sizeof label, "row %d %s %lldx%lld%s", what, uk_dtype_name(t), (long long)rows, (long long)n,
           rev ? " reversed" : "");
  CHECK_OK(uk_fusion_kernel_count(f, in, nin, out, nout, NULL, &kc));
  if (kc != kernels) fprintf(stderr, "%s: %d kernels, want %d\n", label, kc, kernels);
  CHECK(kc == kernels);
  CHECK_OK(uk_fusion_call(f, in, nin, out, nout, NULL));
  CHECK(out[0].dtype == t && out[0].ndim == nd && numel(&out[0]) == total);
  double rtol = t == UK_FLOAT64 ? 1e-12 : t == UK_FLOAT32 ? 2e-5 : 1e-2;
  /* absolute: centering cancels (float16 rounds x - m to its ulp near 4) */
  double atol = t == UK_FLOAT64 ? 1e-12 : t == UK_FLOAT32 ? 2e-6 : 4e-3;
  if (total == 0) uk_array_free(ctx, &out[0], NULL);
  else {
    double *got = fetch_out(&out[0]);
    /* softmax: relative, but a float16 result below 2^-14 lands on the
     * subnormal grid (spacing 2^-24), so it may be off by that much */
    double soft_atol = t == UK_FLOAT16 ? 0x1p-24 : 1e-30;
    check_rel(label, got, want, total, rtol, what == R_SOFTMAX ? soft_atol : atol);
    free(got);
  }
  if (what == R_NORM) {
    CHECK(out[1].ndim == nd - 1 && numel(&out[1]) == rows);
    double *got = fetch_out(&out[1]);
    check_rel("row lse", got, wl, rows, rtol, atol);
    free(got);
  }
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x.buf, NULL);
  uk_array_free(ctx, &y.buf, NULL);
  free(vx);
  free(vy);
  free(want);
  free(wl);
}

/* Given outputs: in place (the input's own view: the row plan) and a
 * shifted overlap (the split plan, which copies the input first); a strided
 * float64 output (reversed rows) with a per-row output. */
static void row_given(void) {
  int64_t sx[2] = {41, 999}, total = 41 * 999, big = total + 999;
  double *vx = randv(big, -3, 3), *want = malloc(sizeof(double) * (size_t)big);
  for (int64_t k = 0; k < big; k++) vx[k] = (float)vx[k];
  uk_fusion *f = make("x", "z", row_progs[R_CENTER]);
  int64_t sb[2] = {42, 999};
  for (int shift = 0; shift < 2; shift++) {
    dev b = upload(UK_FLOAT32, 2, sb, vx, 0);
    uk_array x = b.a, z = b.a;
    x.shape[0] = z.shape[0] = 41;
    x.data += (uint64_t)(shift * 999 * 4); /* shift 1: x is rows 1..41, z rows 0..40 */
    row_ref(R_CENTER, vx + shift * 999, NULL, 41, 999, want, NULL);
    uk_arg in[1] = {uk_arg_array(&x)};
    int kc = -1;
    CHECK_OK(uk_fusion_kernel_count(f, in, 1, &z, 1, NULL, &kc));
    CHECK(kc == (shift ? 2 : 1));
    CHECK_OK(uk_fusion_call(f, in, 1, &z, 1, NULL));
    double *got = download(&z, b.buf.data, (size_t)(42 * 999 * 4 + 64));
    check_rel(shift ? "center over a shifted overlap" : "center in place", got, want, total, 2e-5, 2e-6);
    free(got);
    uk_array_free(ctx, &b.buf, NULL);
  }
  uk_fusion_destroy(f);
  /* float64 z with reversed rows, float32 l */
  double *vy = randv(999, 0.5, 1.5), *wl = malloc(sizeof(double) * 41);
  for (int k = 0; k < 999; k++) vy[k] = (float)vy[k];
  row_ref(R_NORM, vx, vy, 41, 999, want, wl);
  int64_t sy[1] = {999}, sl[1] = {41};
  dev x = upload(UK_FLOAT32, 2, sx, vx, 0), y = upload(UK_FLOAT32, 1, sy, vy, 0);
  dev z = upload(UK_FLOAT64, 2, sx, NULL, 0), l = upload(UK_FLOAT32, 1, sl, NULL, 1);
  z.a.data += (uint64_t)(40 * z.a.strides[0]);
  z.a.strides[0] = -z.a.strides[0];
  f = make("x, y, eps", "z, l", row_progs[R_NORM]);
  uk_arg in[3] = {uk_arg_array(&x.a), uk_arg_array(&y.a), uk_arg_float(1e-5)};
  uk_array outs[2] = {z.a, l.a};
  int kc = -1;
  CHECK_OK(uk_fusion_kernel_count(f, in, 3, outs, 2, NULL, &kc));
  CHECK(kc == 1);
  CHECK_OK(uk_fusion_call(f, in, 3, outs, 2, NULL));
  double *got = download(&z.a, z.buf.data, (size_t)(total * 8 + 64));
  check_rel("norm into reversed float64 rows", got, want, total, 2e-5, 2e-6);
  free(got);
  got = download(&l.a, l.buf.data, 41 * 4 + 64);
  check_rel("lse into a reversed float32 vector", got, wl, 41, 2e-5, 2e-6);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x.buf, NULL);
  uk_array_free(ctx, &y.buf, NULL);
  uk_array_free(ctx, &z.buf, NULL);
  uk_array_free(ctx, &l.buf, NULL);
  free(vx);
  free(vy);
  free(want);
  free(wl);
}

/* The row plan's last pass keeps c = float32(x - mean(x)) (4 bytes) in the
 * slots of float64 x for the output pass (codegen/fuse_row.c), or in
 * registers: short rows, block rows, and rows only partly kept in shared
 * memory (32771 float64, 256 KiB: the rest re-read). */
static void row_narrow_kept(void) {
  static const int64_t shapes[][2] = {{37, 7}, {37, 1000}, {129, 32771}};
  for (int k = 0; k < 3; k++) {
    int64_t rows = shapes[k][0], n = shapes[k][1], total = rows * n;
    double *vx = randv(total, -4, 4), *want = malloc(sizeof(double) * (size_t)total);
    for (int64_t r = 0; r < rows; r++) {
      double m = 0, ss = 0;
      for (int64_t c = 0; c < n; c++) m += vx[r * n + c];
      m /= (double)n;
      for (int64_t c = 0; c < n; c++) {
        double cv = (float)(vx[r * n + c] - m);
        want[r * n + c] = cv;
        ss += (double)(float)(cv * cv);
      }
      for (int64_t c = 0; c < n; c++) want[r * n + c] /= ss;
    }
    dev x = upload(UK_FLOAT64, 2, shapes[k], vx, k == 1);
    uk_fusion *f = make("x", "z", "c = float32(x - mean(x, axis=-1, keepdims=True)); z = c / sum(c * c, axis=-1, keepdims=True)");
    uk_arg in[1] = {uk_arg_array(&x.a)};
    uk_array out = {0};
    int kc = -1;
    CHECK_OK(uk_fusion_kernel_count(f, in, 1, &out, 1, NULL, &kc));
    CHECK(kc == 1);
    CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
    CHECK(out.dtype == UK_FLOAT32 && out.ndim == 2 && numel(&out) == total);
    double *got = fetch_out(&out);
    char label[64];
    snprintf(label, sizeof label, "row narrow kept %lldx%lld", (long long)rows, (long long)n);
    check_rel(label, got, want, total, 2e-5, 1e-12);
    free(got);
    uk_fusion_destroy(f);
    uk_array_free(ctx, &x.buf, NULL);
    free(vx);
    free(want);
  }
}

static void row_plans(void) {
  static const int64_t lens[] = {1, 7, 1000, 4097};
  static const uk_dtype ts[] = {UK_FLOAT32, UK_FLOAT64, UK_FLOAT16};
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
    for (int what = 0; what < 3; what++)
      for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++) {
        if (ts[j] == UK_FLOAT16 && what == R_NORM) continue; /* float16 rounds per operation: not a double reference */
        row_case(what, ts[j], 37, lens[k], (int)(k & 1), 1); /* warp rows (1, 7) and block rows */
      }
  row_case(R_SOFTMAX, UK_FLOAT32, 3 * 43, 16387, 1, 1); /* the whole row in shared memory */
  row_case(R_NORM, UK_FLOAT64, 3 * 43, 16387, 0, 1);    /* x and y: about 14500 elements kept (227 KiB), the rest re-read */
  row_case(R_SOFTMAX, UK_FLOAT32, 3, 9001, 0, 1);        /* a few rows of 72 KB: one kernel */
  row_case(R_SOFTMAX, UK_FLOAT32, 3, 300007, 0, 2);      /* a few rows of 2.4 MB: the split plan */
  row_case(R_CENTER, UK_FLOAT32, 0, 7, 0, 2);            /* no rows: the split plan */
  row_given();
  row_narrow_kept();
  /* empty rows: mean of nothing is NaN (an empty result); max has no identity */
  int64_t se[2] = {5, 0};
  dev xe = upload(UK_FLOAT32, 2, se, NULL, 0);
  uk_arg in[1] = {uk_arg_array(&xe.a)};
  uk_fusion *f = make("x", "z", row_progs[R_CENTER]);
  uk_array out = {0};
  CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
  CHECK(out.ndim == 2 && out.shape[0] == 5 && out.shape[1] == 0);
  uk_array_free(ctx, &out, NULL);
  uk_fusion_destroy(f);
  f = make("x", "z", row_progs[R_SOFTMAX]);
  memset(&out, 0, sizeof out);
  CHECK_STATUS(uk_fusion_call(f, in, 1, &out, 1, NULL), UK_ERR_SHAPE);
  CHECK(out.data == 0);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &xe.buf, NULL);
}

/* 0-d and empty arrays */
static void edge_shapes(void) {
  double v = 2.5;
  dev x0 = upload(UK_FLOAT64, 0, NULL, &v, 0);
  uk_fusion *f = make("x", "z", "z = x * 2 + 1");
  uk_arg in[1] = {uk_arg_array(&x0.a)};
  uk_array out = {0};
  CHECK_OK(uk_fusion_call(f, in, 1, &out, 1, NULL));
  CHECK(out.ndim == 0 && out.dtype == UK_FLOAT64);
  double *got = fetch_out(&out), want = 6.0;
  check_values("0-d", got, &want, 1, 0);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &x0.buf, NULL);
  int64_t se[2] = {0, 5};
  dev xe = upload(UK_FLOAT32, 2, se, NULL, 0);
  uk_arg ie[1] = {uk_arg_array(&xe.a)};
  f = make("x", "z", "z = x + 1");
  CHECK_OK(uk_fusion_call(f, ie, 1, &out, 1, NULL));
  CHECK(out.ndim == 2 && out.shape[0] == 0 && out.shape[1] == 5);
  uk_array_free(ctx, &out, NULL);
  uk_fusion_destroy(f);
  f = make("x", "z", "z = sum(x, axis=0) + 1");
  CHECK_OK(uk_fusion_call(f, ie, 1, &out, 1, NULL));
  CHECK(out.ndim == 1 && out.shape[0] == 5);
  double ones[5] = {1, 1, 1, 1, 1};
  got = fetch_out(&out);
  check_values("empty sum", got, ones, 5, 0);
  free(got);
  uk_fusion_destroy(f);
  f = make("x", "z", "z = max(x, axis=0)");
  CHECK_STATUS(uk_fusion_call(f, ie, 1, &out, 1, NULL), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "zero-size array");
  CHECK(out.data == 0);
  uk_fusion_destroy(f);
  f = make("x", "z", "z = max(x, axis=1)"); /* nothing to reduce into: (0,) */
  CHECK_OK(uk_fusion_call(f, ie, 1, &out, 1, NULL));
  CHECK(out.ndim == 1 && out.shape[0] == 0);
  uk_array_free(ctx, &out, NULL);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &xe.buf, NULL);
}

static int64_t pyfloordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static int64_t pymod(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* ints: Python // and %, int / int -> float64, ** ; float16: per-op rounding */
static void numerics(void) {
  int64_t n = 1001;
  double *va = malloc(sizeof(double) * (size_t)n), *vb = malloc(sizeof(double) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    va[k] = (double)((int64_t)(ut_rand() % 2001) - 1000);
    vb[k] = (double)((int64_t)(ut_rand() % 41) - 20);
  }
  dev a = upload(UK_INT32, 1, &n, va, 0), b = upload(UK_INT32, 1, &n, vb, 0);
  uk_fusion *f = make("a, b", "q, r, d, p", "q = a // b; r = a % b; d = a / b; p = b ** 3");
  uk_arg in[2] = {uk_arg_array(&a.a), uk_arg_array(&b.a)};
  uk_array out[4];
  memset(out, 0, sizeof out);
  CHECK_OK(uk_fusion_call(f, in, 2, out, 4, NULL));
  CHECK(out[0].dtype == UK_INT32 && out[2].dtype == UK_FLOAT64 && out[3].dtype == UK_INT32);
  double *wq = malloc(sizeof(double) * (size_t)n), *wr = malloc(sizeof(double) * (size_t)n),
         *wd = malloc(sizeof(double) * (size_t)n), *wp = malloc(sizeof(double) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    wq[k] = (double)pyfloordiv((int64_t)va[k], (int64_t)vb[k]);
    wr[k] = (double)pymod((int64_t)va[k], (int64_t)vb[k]);
    wd[k] = va[k] / vb[k];
    wp[k] = vb[k] * vb[k] * vb[k];
  }
  double *got = fetch_out(&out[0]);
  check_values("int //", got, wq, n, 0);
  free(got);
  got = fetch_out(&out[1]);
  check_values("int %", got, wr, n, 0);
  free(got);
  got = fetch_out(&out[2]);
  check_values("int / int", got, wd, n, 0);
  free(got);
  got = fetch_out(&out[3]);
  check_values("int ** 3", got, wp, n, 0);
  free(got);
  uk_fusion_destroy(f);
  /* float16: exp(-h) * h + 1, each operation rounded to float16 */
  double *vh = randv(n, -4, 4), *wh = malloc(sizeof(double) * (size_t)n);
  for (int64_t k = 0; k < n; k++) {
    double h = uk__f16_bits_to_f64(uk__f64_to_f16_bits(vh[k]));
    double e = uk__f16_bits_to_f64(uk__f64_to_f16_bits((double)expf((float)-h)));
    double m = uk__f16_bits_to_f64(uk__f64_to_f16_bits((double)((float)e * (float)h)));
    wh[k] = uk__f16_bits_to_f64(uk__f64_to_f16_bits((double)((float)m + 1.0f)));
  }
  dev h = upload(UK_FLOAT16, 1, &n, vh, 0);
  f = make("h", "z", "z = exp(-h) * h + 1");
  uk_arg ih[1] = {uk_arg_array(&h.a)};
  CHECK_OK(uk_fusion_call(f, ih, 1, out, 1, NULL));
  CHECK(out[0].dtype == UK_FLOAT16);
  got = fetch_out(&out[0]);
  check_values("float16 exp(-h)*h+1", got, wh, n, 2e-3);
  free(got);
  uk_fusion_destroy(f);
  uk_array_free(ctx, &a.buf, NULL);
  uk_array_free(ctx, &b.buf, NULL);
  uk_array_free(ctx, &h.buf, NULL);
  free(va), free(vb), free(vh), free(wh), free(wq), free(wr), free(wd), free(wp);
}

/* The builder's fusion computes what the text's does; precompile fills the
 * caches so that the first call compiles nothing. Reductions write given
 * strided outputs (every other element of a buffer) through their strides. */
static void builder_precompile_strided(void) {
  int64_t sx[2] = {9, 333}, n = 9 * 333;
  double *vx = randv(n, -2, 2), *vy = randv(n, -2, 2);
  dev x = upload(UK_FLOAT64, 2, sx, vx, 0), y = upload(UK_FLOAT64, 2, sx, vy, 1);
  uk_fusion_builder *b = NULL;
  CHECK_OK(uk_fusion_builder_create("x, y", &b));
  int t = uk_fusion_op(b, "subtract", (int[]){0, 1}, 2);
  int tt = uk_fusion_op(b, "multiply", (int[]){t, t}, 2);
  int s = uk_fusion_reduce(b, "sum", tt, (int[]){-1}, 1, 0, 0);
  CHECK_OK(uk_fusion_output(b, "d", uk_fusion_op(b, "sqrt", &s, 1)));
  uk_fusion *fb = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.builder = b, .name = "built"}, &fb));
  uk_fusion_builder_destroy(b);
  uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
  /* the output: a strided view, every other float64 of a poisoned buffer */
  int64_t s18 = 18;
  dev buf = upload(UK_FLOAT64, 1, &s18, NULL, 0);
  uk_array d = buf.a;
  d.shape[0] = 9;
  d.strides[0] = 16;
  uk_cache_stats before, after;
  CHECK_OK(uk_fusion_precompile(fb, in, 2, &d, 1, NULL));
  CHECK_OK(uk_context_cache_stats(ctx, &before));
  CHECK_OK(uk_fusion_call(fb, in, 2, &d, 1, NULL));
  CHECK_OK(uk_context_cache_stats(ctx, &after));
  CHECK(after.compiles == before.compiles); /* precompiled */
  double want[9];
  for (int r = 0; r < 9; r++) {
    double acc = 0;
    for (int c = 0; c < 333; c++) acc += (vx[r * 333 + c] - vy[r * 333 + c]) * (vx[r * 333 + c] - vy[r * 333 + c]);
    want[r] = sqrt(acc);
  }
  double *all = download(&buf.a, buf.buf.data, 18 * 8 + 64);
  double got[9];
  for (int r = 0; r < 9; r++) got[r] = all[2 * r];
  check_values("builder dist, strided output", got, want, 9, 1e-12);
  unsigned char raw[16];
  CHECK_OK(uk_memcpy_dtoh(raw, buf.buf.data + 8, 8));
  CHECK(raw[0] == 0xA5 && raw[7] == 0xA5); /* the gap between outputs keeps its poison */
  free(all);
  uk_fusion_destroy(fb);
  uk_array_free(ctx, &x.buf, NULL);
  uk_array_free(ctx, &y.buf, NULL);
  uk_array_free(ctx, &buf.buf, NULL);
  free(vx);
  free(vy);
}

int main(void) {
  ut_require_gpu();
  ut_seed(12);
  CHECK_OK(uk_context_create(NULL, &ctx));
  table_programs();
  axpy_views();
  reductions();
  split_plans();
  row_plans();
  edge_shapes();
  numerics();
  builder_precompile_strided();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_fusion");
}
