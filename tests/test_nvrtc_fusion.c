/* Every generated fusion kernel compiles with NVRTC for sm_90: operators and
 * functions over every dtype, each reduction kind, several reductions in one
 * struct accumulator, and the split plans (center, softmax). Through
 * uk_fusion_precompile, so the real call path generates the code; no GPU. */
#include "testutil.h"

static uk_context *ctx;

static uk_array arr(uk_dtype t, int ndim, const int64_t *shape, uint64_t data) {
  uk_array a;
  memset(&a, 0, sizeof a);
  uk_array_init(&a, data, t, ndim, shape);
  return a;
}

/* Precompiles f for these arguments (a failure prints NVRTC's log), then
 * destroys it. */
static void precompile_ok(uk_fusion *f, const uk_arg *in, int nin, uk_array *out, int nout, const char *prog,
                          uk_dtype t) {
  uk_status s = uk_fusion_precompile(f, in, nin, out, nout, NULL);
  ut_checks++;
  if (s) {
    ut_failures++;
    fprintf(stderr, "%s [%s]: %s: %s\n%s\n", prog, uk_dtype_name(t), uk_status_name(s), uk_last_error(),
            uk_last_error_log());
  }
  uk_fusion_destroy(f);
}

static void compile(const char *ins, const char *outs, const char *prog, uk_dtype t, int nin, int ndim,
                    const uk_arg *extra, int nextra) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "nv"}, &f));
  if (!f) return;
  int64_t shape[2] = {33, 65};
  uk_array a[4];
  uk_arg in[8];
  for (int k = 0; k < nin; k++) {
    a[k] = arr(t, ndim, shape, 0x100000000ull * (uint64_t)(k + 1));
    in[k] = uk_arg_array(&a[k]);
  }
  for (int k = 0; k < nextra; k++) in[nin + k] = extra[k];
  uk_array out[8];
  memset(out, 0, sizeof out);
  int nout = 1;
  for (const char *c = outs; *c; c++) nout += *c == ',';
  precompile_ok(f, in, nin + nextra, out, nout, prog, t);
}

/* A row-plan program (codegen/fuse_row.c) for inputs of one dtype and
 * shape (y: a vector over the row), checking the plan is the row kernel
 * (or, want_row 0, the split plan) and that it compiles on c. */
static int64_t row_shape[2] = {300, 1001};

static void compile_row(uk_context *c, const char *ins, const char *outs, const char *prog, uk_dtype t, int want_row,
                        int kept) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(c, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "rw"}, &f));
  if (!f) return;
  uk_array x = arr(t, 2, row_shape, 0x100000000ull), y = arr(t, 1, row_shape + 1, 0x200000000ull);
  uk_arg in[3] = {uk_arg_array(&x), uk_arg_array(&y), uk_arg_float(1e-5)};
  int nin = 1;
  for (const char *q = ins; *q; q++) nin += *q == ',';
  uk_array out[4];
  memset(out, 0, sizeof out);
  int nout = 1;
  for (const char *q = outs; *q; q++) nout += *q == ',';
  char *src = NULL;
  CHECK_OK(uk_fusion_source(f, in, nin, out, nout, NULL, &src));
  if (src && want_row) {
    CHECK_CONTAINS(src, "kernel 1 of 1 (row 'rw_row')");
    CHECK_CONTAINS(src, "_uk_row_reduce(");
    /* the last pass keeps a value for the outputs (test_fuse_row_keep
     * checks the source further) */
    if (kept) CHECK_CONTAINS(src, "if (_uk_keepv) *(");
    else CHECK(strstr(src, "_uk_keepv") == NULL);
  } else if (src) CHECK(strstr(src, "(row 'rw_row')") == NULL);
  uk_free(src);
  precompile_ok(f, in, nin, out, nout, prog, t);
}

static const char softmax[] =
    "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)";

/* The row plan: softmax, centering, a layer norm (two levels, a vector and
 * a scalar), per-row outputs beside per-element ones, struct accumulators,
 * over the dtypes that keep elements by cp.async (4 and 8 bytes) and those
 * that load them (float16, complex128, bool), and on an arch without
 * cp.async. */
static void row_plans(void) {
  static const uk_dtype ts[] = {UK_FLOAT32, UK_FLOAT64, UK_FLOAT16, UK_BFLOAT16, UK_INT32};
  /* the last pass keeps exp(x - m) for the division */
  for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) compile_row(ctx, "x", "z", softmax, ts[k], 1, 1);
  /* one level: no value of a last pass is used again */
  compile_row(ctx, "x", "z", "z = x - mean(x, axis=-1, keepdims=True)", UK_COMPLEX128, 1, 0);
  compile_row(ctx, "x", "z", "z = x - mean(x, axis=-1, keepdims=True)", UK_COMPLEX64, 1, 0);
  compile_row(ctx, "x", "z", "z = x & any(x, axis=-1, keepdims=True)", UK_BOOL, 1, 0);
  /* x - mean(x) kept in x's place; y still read */
  compile_row(ctx, "x, y, eps", "z",
              "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * y + y",
              UK_FLOAT32, 1, 1);
  compile_row(ctx, "x, y, eps", "z",
              "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * y + y",
              UK_FLOAT64, 1, 1);
  /* a float32 value kept in float64 slots */
  compile_row(ctx, "x", "z", "c = float32(x - mean(x, axis=-1, keepdims=True)); z = c / sum(c * c, axis=-1, keepdims=True)",
              UK_FLOAT64, 1, 1);
  /* x is used per element after the last pass: nothing replaces it */
  compile_row(ctx, "x", "z", "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True) + x",
              UK_FLOAT32, 1, 0);
  compile_row(ctx, "x", "z, l, a, v",
              "m = max(x, axis=-1, keepdims=True); s = sum(exp(x - m), axis=-1, keepdims=True); z = exp(x - m) / s; "
              "l = log(s) + m; a = argmax(x, axis=-1); v = var(x - m, axis=-1, keepdims=True)",
              UK_FLOAT32, 1, 0); /* exp(x - m) written twice: two nodes, neither used again */
  compile_row(ctx, "x", "z", "z = x - mean(x, axis=0, keepdims=True)", UK_FLOAT32, 0, 0);
  row_shape[0] = 3; /* a few long rows (2.4 MB each): the split plan (online max and sum of exp, then the division) */
  row_shape[1] = 300000;
  compile_row(ctx, "x", "z", softmax, UK_FLOAT32, 0, 0);
  row_shape[0] = 300;
  row_shape[1] = 1001;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 75;
  uk_context *c75 = NULL;
  CHECK_OK(uk_context_create(&o, &c75));
  if (c75) compile_row(c75, "x", "z", softmax, UK_FLOAT32, 1, 1);
  uk_context_destroy(c75);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  CHECK_OK(uk_context_create(&o, &ctx));
  static const uk_dtype all[] = {UK_BOOL,    UK_INT8,     UK_INT16,   UK_INT32,   UK_INT64,
                                 UK_UINT8,   UK_UINT16,   UK_UINT32,  UK_UINT64,  UK_FLOAT16,
                                 UK_BFLOAT16, UK_FLOAT32, UK_FLOAT64, UK_COMPLEX64, UK_COMPLEX128};
  uk_arg weak[3] = {uk_arg_int(3), uk_arg_float(0.25), uk_arg_bool(1)};
  /* one program per dtype holding every operator and function that applies
   * to it (each compile is one NVRTC run) */
  static const char arith[] = "z = x * y + i - x / f; c = (x == y) | (x != b); w = where(c, astype(x, 'f2'), x ** 2)";
  static const char real_fns[] =
      "; r = x // y + x % y + maximum(x, y) - fmin(x, y) + clip(x, 1, 5) + sign(x) + square(y) + abs(x); "
      "m = isnan(x) | isinf(y) | ~isfinite(x) | logical_xor(x > 1, y < 2) | logical_not(x); "
      "e = exp(x) + exp2(x) + expm1(x) + log(y) + log2(y) + log10(y) + log1p(y) + sqrt(x) + cbrt(x) + "
      "sin(x) + cos(x) + tan(x) + arcsin(x) + arccos(x) + arctan(x) + arctan2(x, y) + sinh(x) + cosh(x) + "
      "tanh(x) + arcsinh(x) + arccosh(y) + arctanh(x) + hypot(x, y) + rint(x) + copysign(x, y) + ceil(x) + "
      "trunc(x) + angle(x)";
  static const char int_fns[] = "; q = (x & y) | (x ^ ~y) + fmod(x, y) + x ** y + floor(x) + reciprocal(y)";
  static const char cx_fns[] =
      "; r = exp(x) * sqrt(y) - log(x) / tanh(y) + conj(x) + exp2(x) - expm1(y) * log2(x) + log1p(y); "
      "m = abs(x) + real(y) * imag(x) + angle(x)";
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    uk_dtype t = all[k];
    int cx = t == UK_COMPLEX64 || t == UK_COMPLEX128, b = t == UK_BOOL;
    int ints = t == UK_INT8 || t == UK_UINT16 || t == UK_INT64;
    char prog[2048];
    snprintf(prog, sizeof prog, "%s%s%s", b ? "z = x + y * i; c = x == y; w = where(c, float32(x), f)" : arith,
             b ? "" : cx ? cx_fns : real_fns, ints ? int_fns : "");
    const char *outs = b ? "z, c, w" : cx ? "z, c, w, r, m" : ints ? "z, c, w, r, m, e, q" : "z, c, w, r, m, e";
    compile("x, y, i, f, b", outs, prog, t, 2, 2, weak, 3);
  }
  /* reductions: one program per kind group and a few dtypes (each compiles CUB) */
  compile("x, y", "d", "t = x - y; d = sqrt(sum(t * t, axis=-1))", UK_FLOAT32, 2, 2, NULL, 0);
  compile("x", "s, p, a, l", "s = sum(x, axis=0); p = prod(x, axis=0); a = any(x, axis=0); l = all(x, axis=0)",
          UK_INT8, 1, 2, NULL, 0);
  compile("x", "m, v, s, mx, mn", "m = mean(x, axis=1); v = var(x, axis=1); s = std(x, axis=1, ddof=1); "
          "mx = max(x, axis=1); mn = min(x, axis=1)", UK_FLOAT16, 1, 2, NULL, 0);
  compile("x", "i, j", "i = argmax(x, axis=1); j = argmin(x, axis=1)", UK_FLOAT64, 1, 2, NULL, 0);
  compile("x", "i", "i = argmax(x)", UK_UINT16, 1, 2, NULL, 0);
  /* the in-order steps (_uk_argmax_step) on complex (lexicographic) values, and beside a sum's plain combine */
  compile("x", "i, j", "i = argmax(x); j = argmin(x)", UK_COMPLEX64, 1, 2, NULL, 0);
  compile("x", "i, s", "i = argmin(x, axis=1); s = sum(x, axis=1)", UK_FLOAT16, 1, 2, NULL, 0);
  /* pairs over the first axis: the column kernel, rows of vectors and of scalars */
  compile("x", "i, j", "i = argmax(x, axis=0); j = argmin(x, axis=0)", UK_FLOAT32, 1, 2, NULL, 0);
  compile("x", "s", "s = sum(x * 1j, axis=(0, 1), keepdims=True)", UK_FLOAT32, 1, 2, NULL, 0);
  compile("x", "c", "c = x - mean(x, axis=1, keepdims=True)", UK_FLOAT32, 1, 2, NULL, 0);
  compile("x", "y", "m = max(x, axis=-1, keepdims=True); e = exp(x - m); y = e / sum(e, axis=-1, keepdims=True)",
          UK_FLOAT32, 1, 2, NULL, 0);
  compile("x, a", "m", "m = mean(x, axis=0) * a", UK_BFLOAT16, 1, 2, weak + 1, 1);
  row_plans();
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_fusion");
}
