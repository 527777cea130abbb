/* The row plan (codegen/fuse_row.c) keeps, in place of an input's kept
 * elements, an elementwise value of the last pass that the per-element
 * outputs use again, when they no longer read that input: softmax computes
 * exp once per kept element (in registers: every element, in _uk_rv).
 * Checked on the generated source (both variants) (no GPU, no
 * NVRTC; test_nvrtc_fusion compiles these programs, test_gpu_fusion's row
 * cases check their values). */
#include <pthread.h>

#include "testutil.h"

static uk_context *ctx;

static const char softmax[] =
    "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True)";
static const char norm[] =
    "c = x - mean(x, axis=-1, keepdims=True); z = c / sqrt(mean(c * c, axis=-1, keepdims=True) + eps) * y + y";

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *q = strstr(s, what); q; q = strstr(q + 1, what)) n++;
  return n;
}

/* The row source of prog over x (rows x n of dtype t), y (n) and eps; NULL
 * when the plan is not the row kernel. */
static char *row_source(const char *ins, const char *outs, const char *prog, uk_dtype t, int64_t rows, int64_t n) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = ins, .outputs = outs, .program = prog, .name = "rk"}, &f));
  if (!f) return NULL;
  int64_t sx[2] = {rows, n};
  uk_array x, y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  uk_array_init(&x, 0x100000000ull, t, 2, sx);
  uk_array_init(&y, 0x200000000ull, t, 1, sx + 1);
  uk_arg in[3] = {uk_arg_array(&x), uk_arg_array(&y), uk_arg_float(1e-5)};
  int nin = 1, nout = 1;
  for (const char *q = ins; *q; q++) nin += *q == ',';
  for (const char *q = outs; *q; q++) nout += *q == ',';
  uk_array out[4];
  memset(out, 0, sizeof out);
  char *src = NULL;
  CHECK_OK(uk_fusion_source(f, in, nin, out, nout, NULL, &src));
  uk_fusion_destroy(f);
  if (src && !strstr(src, "(row 'rk_row')")) {
    uk_free(src);
    return NULL;
  }
  /* the cluster variant (sm_90+, between "#elif _UK_RC" and "#else") is
   * the shared one over a block's slice (test_nvrtc_row_cluster checks
   * it): cut, so that the counts below see the other two variants */
  char *cl = src ? strstr(src, "#elif _UK_RC\n") : NULL, *sh = cl ? strstr(cl, "#else\n") : NULL;
  CHECK(sh != NULL);
  if (sh) memmove(cl, sh, strlen(sh) + 1);
  return src;
}

/* The shared-memory variant (after "#else"; the registers variant
 * before it): the kept elements' output function, from its parameter
 * _uk_kv to the function of the re-read elements (which computes the value
 * again). */
static void kept_fn(const char *src, const char **from, const char **to) {
  const char *sh = strstr(src, "#else\n");
  *from = sh ? strstr(sh, "auto _uk_f = [&](const long long _J, const int _I") : NULL;
  *to = sh ? strstr(sh, "auto _uk_g = [&]") : NULL;
}

/* Occurrences of what in the registers variant (between "#if _UK_RK" and
 * "#else"). */
static int count_regs(const char *s, const char *what) {
  const char *a = strstr(s, "#if _UK_RK\n"), *b = a ? strstr(a, "#else\n") : NULL;
  int n = 0;
  if (!b) return -1;
  for (const char *q = strstr(a, what); q && q < b; q = strstr(q + 1, what)) n++;
  return n;
}

static void softmax_once(void) {
  static const uk_dtype ts[] = {UK_FLOAT32, UK_FLOAT64, UK_FLOAT16, UK_BFLOAT16};
  static const char *const store[] = {"*(_uk_vec<float, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;",
                                      "*(_uk_vec<double, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;",
                                      "*(_uk_vec<ukern::half, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;",
                                      "*(_uk_vec<ukern::bfloat16, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;"};
  static const int64_t lens[] = {7, 1001, 16384};
  for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
    for (size_t j = 0; j < sizeof lens / sizeof lens[0]; j++) {
      char *src = row_source("x", "z", softmax, ts[k], 300, lens[j]);
      CHECK(src != NULL);
      if (!src) continue;
      const char *kf, *rest;
      kept_fn(src, &kf, &rest);
      /* stored once in the sum's pass, for kept elements only: a vector
       * of them (as wide as x's) at a time; the rest's into a dummy */
      CHECK_CONTAINS(src, store[k]);
      CHECK_CONTAINS(src, "_uk_f(_J, _uk_vin0.v[_i], _uk_kr.v[_i]));");
      CHECK_CONTAINS(src, ", _uk_kd)); }");
      CHECK(count(src, "if (_uk_keepv)") == 0);
      CHECK(count(src, "_uk_keepr = _uk_v") == 2);
      /* read back as vectors by the output pass */
      CHECK_CONTAINS(src,
                     ts[k] == UK_FLOAT32 ? "_uk_f(_J, _i, _uk_vkv.v[_i], false);" : "_uk_f(_J, _i, _uk_vkv.v[_i]);");
      /* shared memory: exp once in the sum's pass, once for the re-read
       * rest; none where the kept value is read. Registers: once, the
       * value kept in _uk_rv for every element */
      CHECK(count(src, "_uk_exp(") == 3);
      CHECK(count_regs(src, "_uk_exp(") == 1);
      CHECK(count_regs(src, "_uk_keepr = _uk_v") == 1);
      /* float32: branch-free divisions, then a vector's exact ones where
       * one flagged (fuse_row.c vec_redo); registers where _UK_RD says */
      if (ts[k] == UK_FLOAT32) {
        CHECK(count_regs(src, "_uk_f(_J, _I, _uk_rv[_I], !_UK_RD);") == 1 &&
              count_regs(src, "_uk_f(_J, _I, _uk_rv[_I], true);") == 1 &&
              count_regs(src, "if (_UK_RD && _uk_bad) {") == 1);
        CHECK(count(src, "_uk_f(_J, _i, _uk_vkv.v[_i], true);") == 1 && count(src, "if (_uk_bad) {") == 1);
        CHECK(count(src, "_uk_try") == 0);
      } else CHECK(count_regs(src, "_uk_f(_J, _I, _uk_rv[_I]);") == 1 && count(src, "_uk_bad") == 0);
      CHECK(count_regs(src, "_uk_keepv") == 0);
      CHECK(kf && rest && kf < rest);
      const char *ex = kf ? strstr(kf, "_uk_exp(") : NULL;
      CHECK(ex && ex > rest);
      /* the division stays; float32: by the row's reciprocal (_uk_rdiv,
       * the same result), made once a row after the sum */
      const char *dv = kf ? strstr(kf, "float(_uk_kv) / float(_uk_v") : NULL;
      if (ts[k] == UK_FLOAT64) dv = kf ? strstr(kf, "(_uk_kv / _uk_v") : NULL;
      if (ts[k] == UK_FLOAT32) dv = kf ? strstr(kf, "_uk_rdiv_try(_uk_kv, _uk_d") : NULL;
      CHECK(dv && dv < rest);
      CHECK(count(src, "= _uk_rd_make(_uk_v") == (ts[k] == UK_FLOAT32 ? 2 : 0));
      CHECK(count(src, "_uk_rdiv(") == (ts[k] == UK_FLOAT32 ? 1 : 0)); /* the re-read rest's */
      CHECK(count(src, "_uk_rdiv_try(_uk_kv, _uk_d") == (ts[k] == UK_FLOAT32 ? 2 : 0));
      CHECK(count_regs(src, "_uk_rdiv_try(_uk_kv, _uk_d") == (ts[k] == UK_FLOAT32 ? 1 : 0));
      uk_free(src);
    }
}

/* Other shapes of the rule: the layer norm keeps x - mean(x) (y is still
 * read); a value used with x itself after the pass, per-row outputs only,
 * and a value wider than x's slot keep nothing or something narrower. */
static void other_programs(void) {
  char *src = row_source("x, y, eps", "z", norm, UK_FLOAT64, 300, 1001);
  CHECK(src != NULL);
  if (src) {
    CHECK_CONTAINS(src, "*(_uk_vec<double, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;");
    CHECK_CONTAINS(src, "_uk_f(_J, _i, _uk_vkv.v[_i], _uk_vin1.v[_i]);");
    const char *kf, *rest;
    kept_fn(src, &kf, &rest);
    CHECK(kf && rest && kf < rest);
    /* sqrt(var + eps) once a row in each variant, before the outputs'
     * functions, not in them */
    CHECK(count(src, "_uk_sqrt(") == 2);
    const char *sq = strstr(src, "_uk_sqrt("), *fo = strstr(src, "_uk_w_out0[_UK_RK * _UK_RV]");
    CHECK(sq && fo && sq < fo);
    CHECK(count(src, "_uk_rdiv(") == 0); /* float64 */
    uk_free(src);
  }
  src = row_source("x, y, eps", "z", norm, UK_FLOAT32, 300, 1001);
  CHECK(src != NULL);
  if (src) {
    CHECK(count(src, "_uk_sqrt(") == 2);
    CHECK(count(src, "= _uk_rd_make(_uk_v") == 2);
    CHECK(count_regs(src, "_uk_rdiv_try(_uk_kv, _uk_d") == 1 && count_regs(src, "_uk_rdiv(") == 0);
    uk_free(src);
  }
  static const char *const none[] = {
      "m = max(x, axis=-1, keepdims=True); e = exp(x - m); z = e / sum(e, axis=-1, keepdims=True) + x",
      "z = sum(x - mean(x, axis=-1, keepdims=True), axis=-1)", "z = x - mean(x, axis=-1, keepdims=True)",
      "m = max(x, axis=-1, keepdims=True); z = exp(x - m) / sum(exp(x - m), axis=-1, keepdims=True)"};
  for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
    src = row_source("x", "z", none[k], UK_FLOAT32, 300, 1001);
    if (!src) fprintf(stderr, "not the row plan: %s\n", none[k]);
    CHECK(src != NULL);
    if (!src) continue;
    if (strstr(src, "_uk_keepv") || strstr(src, "_uk_kv")) fprintf(stderr, "kept a value: %s\n", none[k]);
    CHECK(strstr(src, "_uk_keepv") == NULL && strstr(src, "_uk_kv") == NULL && strstr(src, "_uk_rv") == NULL &&
          strstr(src, "_uk_keepr") == NULL && strstr(src, "_uk_kr") == NULL);
    /* the shared variant's two output functions: the kept elements' (gathering
     * a vector's outputs) and the rest's (storing each); none for a per-row
     * output (none[1]) */
    CHECK(count(src, "auto _uk_g") == (k == 1 ? 0 : 1));
    uk_free(src);
  }
  /* int32: exp(x - m) is float64, wider than x's slot; x - m (int32) is
   * kept, as wide as x: stored as vectors */
  src = row_source("x", "z", softmax, UK_INT32, 300, 1001);
  CHECK(src != NULL);
  if (src) {
    CHECK_CONTAINS(src, "*(_uk_vec<int, _UK_RV> *)(_uk_k_in0 + _J0) = _uk_kr;");
    CHECK_CONTAINS(src, "_uk_exp(((double)(_uk_kv)))");
    uk_free(src);
  }
  /* one level whose value the outputs use again: exp(x) */
  src = row_source("x", "z", "e = exp(x); z = e / sum(e, axis=-1, keepdims=True)", UK_FLOAT32, 300, 1001);
  CHECK(src != NULL);
  if (src) {
    CHECK(count(src, "_uk_keepr = _uk_v") == 2);
    CHECK(count(src, "_uk_exp(") == 3 && count_regs(src, "_uk_exp(") == 1);
    uk_free(src);
  }
}

/* The variant a call picks (uk__row_size through the source's first
 * lines): x rows x n of dtype t at address base with row pitch `pitch`
 * elements (last axis reversed with rev), z allocated. */
static void variant(uk_dtype t, int64_t rows, int64_t n, uint64_t base, int64_t pitch, int rev, const char *want) {
  uk_fusion *f = NULL;
  CHECK_OK(
      uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = softmax, .name = "rk"}, &f));
  if (!f) return;
  int64_t sx[2] = {rows, n}, es = (int64_t)uk_dtype_size(t);
  uk_array x, z;
  memset(&z, 0, sizeof z);
  uk_array_init(&x, base, t, 2, sx);
  x.strides[0] = pitch * es;
  if (rev) x.data += (uint64_t)((n - 1) * es), x.strides[1] = -es;
  uk_arg in[1] = {uk_arg_array(&x)};
  char *src = NULL;
  CHECK_OK(uk_fusion_source(f, in, 1, &z, 1, NULL, &src));
  const char *v = src ? strstr(src, "#define _UK_RK") : NULL; /* the variant's, before the source's defaults */
  if (!v || strncmp(v, want, strlen(want)))
    fprintf(stderr, "%s %lldx%lld pitch %lld: want %s, got %.40s\n", uk_dtype_name(t), (long long)rows, (long long)n,
            (long long)pitch, want, v ? v : "(none)");
  CHECK(v && strncmp(v, want, strlen(want)) == 0);
  CHECK_CONTAINS(src, strstr(want, "_UK_RK 0") ? "\n// row plan: rows in shared memory" : "\n// row plan: rows in registers");
  uk_free(src);
  uk_fusion_destroy(f);
}

static void variants(void) {
  const uint64_t b = 0x100000000ull;
  /* _UK_RT: threads a row; _UK_RW: T x K x V is the row (no bounds tests) */
  variant(UK_FLOAT32, 1000, 32, b, 32, 0, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 2\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 1000, 33, b, 33, 0, "#define _UK_RK 16\n#define _UK_RV 1\n#define _UK_RT 4\n#define _UK_RW 0\n");
  /* off the 16-byte grid, pitch off the grid, pitch on it, reversed */
  variant(UK_FLOAT32, 1000, 32, b + 4, 32, 0, "#define _UK_RK 16\n#define _UK_RV 1\n#define _UK_RT 2\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 1000, 32, b, 33, 0, "#define _UK_RK 16\n#define _UK_RV 1\n#define _UK_RT 2\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 1000, 32, b, 36, 0, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 2\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 1000, 32, b, 32, 1, "#define _UK_RK 16\n#define _UK_RV 1\n#define _UK_RT 2\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 100, 8192, b, 8192, 0, "#define _UK_RK 4\n#define _UK_RV 4\n#define _UK_RT 512\n#define _UK_RW 1\n");
  /* past 512 threads x 16: 32 a thread */
  variant(UK_FLOAT32, 100, 12288, b, 12288, 0, "#define _UK_RK 8\n#define _UK_RV 4\n#define _UK_RT 512\n#define _UK_RW 0\n");
  variant(UK_FLOAT32, 100, 12289, b, 12289, 0, "#define _UK_RK 0\n#define _UK_RV 1\n#define _UK_RT 512\n#define _UK_RW 0\n"); /* scalars */
  /* past 512 x 32: shared memory */
  variant(UK_FLOAT32, 100, 16388, b, 16388, 0, "#define _UK_RK 0\n#define _UK_RV 4\n#define _UK_RT 1024\n#define _UK_RW 0\n");
  variant(UK_FLOAT32, 100, 16385, b, 16385, 0, "#define _UK_RK 0\n#define _UK_RV 1\n#define _UK_RT 1024\n#define _UK_RW 0\n");
  variant(UK_FLOAT64, 100, 1000, b, 1000, 0, "#define _UK_RK 4\n#define _UK_RV 2\n#define _UK_RT 128\n#define _UK_RW 0\n");
  variant(UK_FLOAT16, 100, 4096, b, 4096, 0, "#define _UK_RK 2\n#define _UK_RV 8\n#define _UK_RT 256\n#define _UK_RW 1\n");
  variant(UK_FLOAT32, 7, 1, b, 1, 0, "#define _UK_RK 1\n#define _UK_RV 1\n#define _UK_RT 1\n#define _UK_RW 1\n");
}

/* Calls racing to a fusion's first run of the row plan: one emits the
 * row kernel under the fusion's lock (runtime/fusion.c ensure_row), each
 * gets the same source; a call whose shapes run the split plan emits
 * nothing and gets the split plan's. */
typedef struct race_arg {
  uk_fusion *f;
  int64_t rows, n;
  char *src;
  uk_status s;
} race_arg;

static void *race(void *p) {
  race_arg *a = p;
  int64_t sx[2] = {a->rows, a->n};
  uk_array x, out;
  memset(&x, 0, sizeof x);
  memset(&out, 0, sizeof out);
  uk_array_init(&x, 0x100000000ull, UK_FLOAT32, 2, sx);
  uk_arg in = uk_arg_array(&x);
  a->s = uk_fusion_source(a->f, &in, 1, &out, 1, NULL, &a->src);
  return NULL;
}

static void first_calls_race(void) {
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "z", .program = softmax, .name = "rk"}, &f));
  if (!f) return;
  enum { N = 8 };
  pthread_t t[N];
  race_arg a[N];
  int started[N];
  for (int k = 0; k < N; k++) {
    /* every fourth: 2 rows of 2^22, past 16 blocks' shared memory: the split plan's */
    a[k] = (race_arg){f, k % 4 == 3 ? 2 : 300, k % 4 == 3 ? 1 << 22 : 1001, NULL, UK_ERR_INVALID};
    started[k] = pthread_create(&t[k], NULL, race, &a[k]) == 0;
    CHECK(started[k]);
  }
  for (int k = 0; k < N; k++)
    if (started[k]) pthread_join(t[k], NULL);
  for (int k = 0; k < N; k++) {
    CHECK_OK(a[k].s);
    int row = a[k].src && strstr(a[k].src, "(row 'rk_row')");
    CHECK(row == (k % 4 != 3));
    if (k && k % 4 != 3 && a[0].src && a[k].src) CHECK(strcmp(a[0].src, a[k].src) == 0);
  }
  for (int k = 0; k < N; k++) uk_free(a[k].src);
  uk_fusion_destroy(f);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  softmax_once();
  other_programs();
  variants();
  first_calls_race();
  uk_context_destroy(ctx);
  return ut_finish("test_fuse_row_keep");
}
