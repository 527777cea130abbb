/* Every dtype's reduction programs (a program holds one kernel: rows and
 * columns for every dtype, packed rows once) compile with NVRTC for sm_90, plus the shapes of the golden kernels:
 * struct reduce types, raw inputs, two outputs, 64-bit index, 3-D kept
 * loops. float16/bfloat16 reduce in float. The programs combine with
 * ukern's own warp shuffles and include no CUB or libcu++ header. The
 * cub::BlockReduce variant (block_reduce = UK_BLOCK_REDUCE_CUB) of every
 * strategy compiles too, for several dtypes and a struct argmax, with -pch.
 * Tiny reductions' group and column programs (UK_RED_TINY elements or
 * fewer: rows and columns of every dtype) have no split pass
 * (red_group / red_cols<K, 256, false>) and compile too.
 * A precompiled reduction is a disk hit for a second context; the CUB
 * variant of the same reduction is a disk miss (its own key). No GPU needed. */
#include <time.h>

#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "runtime/context.h"
#include "testutil.h"

static uk_context *ctx;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Compiles src with the call's own options (opts: NULL-terminated, e.g.
 * -minimal), as the call would. */
static void compile_src(const char *label, const char *src, char **opts) {
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = label;
  req.arch = 90;
  req.options = (const char *const *)opts;
  while (opts && opts[req.num_options]) req.num_options++;
  uk__binary *bin = NULL;
  double t0 = now_ms();
  uk_status st = uk__context_compile(ctx, &req, &bin);
  ut_checks++;
  if (st != UK_OK || !bin || bin->image_size == 0) {
    ut_failures++;
    fprintf(stderr, "%s: %s: %s\n%s\n", label, uk_status_name(st), uk_last_error(), uk_last_error_log());
  } else {
    printf("%-28s %7.0f ms\n", label, now_ms() - t0);
  }
  uk__binary_release(bin);
}

static void case_of(const char *label, const uk_reduction_spec *s, uk_dtype t, int ndim, const int64_t *shape,
                    const int *ax, int nax, int nout, uk_arg *extra, int nextra, const char *kernel) {
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, s, &k));
  if (!k) return;
  uk_array x;
  CHECK_OK(uk_array_init(&x, 0x100000, t, ndim, shape));
  uk_arg in[4] = {uk_arg_array(&x)};
  for (int j = 0; j < nextra; j++) in[1 + j] = extra[j];
  uk_array y[2];
  memset(y, 0, sizeof y);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax;
  l.num_axes = nax;
  char *src = NULL, **opts = NULL;
  CHECK_OK(uk_reduction_source(k, in, 1 + nextra, y, nout, &l, &src));
  CHECK_OK(uk_reduction_nvrtc_options(k, in, 1 + nextra, y, nout, &l, &opts));
  if (src) {
    /* one kernel per program: the one this call's shapes need */
    CHECK_CONTAINS(src, kernel);
    const char *g = strstr(src, "__global__");
    CHECK(g && !strstr(g + 1, "__global__"));
    if (s->block_reduce == UK_BLOCK_REDUCE_CUB) {
      /* CUB's block reduce first, then ukern's header that uses it */
      static const char head[] = "#define UKERN_RED_BLOCK_CUB 1\n#include <cub/block/block_reduce.cuh>\n"
                                 "#include <ukern/reduction.cuh>\n#pragma nv_hdrstop\n";
      CHECK(strncmp(src, head, sizeof head - 1) == 0);
      CHECK_CONTAINS(src, "// block combine: cub::BlockReduce (block_reduce = cub)");
      int pch = 0;
      for (int j = 0; opts && opts[j]; j++) pch |= strcmp(opts[j], "-pch") == 0;
      CHECK(pch);
    } else {
      /* ukern's own device header first (past 128 MiB of inputs, after the
         define of the default load policy); nothing from CUB or libcu++ */
      static const char head[] = "#include <ukern/reduction.cuh>\n", plain[] = "#define _UK_RED_LD 0\n";
      int64_t bytes = (int64_t)uk_dtype_size(t);
      for (int d = 0; d < ndim; d++) bytes *= shape[d];
      const char *h = src;
      if (bytes > UK_RED_STREAM_MAX_BYTES) {
        CHECK(strncmp(h, plain, sizeof plain - 1) == 0);
        h += sizeof plain - 1;
      }
      /* short rows (the banner says so): the narrow groups' define, then the header */
      static const char narrow[] = "#define _UK_RED_NARROW 1\n";
      int is_narrow = strncmp(h, narrow, sizeof narrow - 1) == 0;
      CHECK(is_narrow == (strstr(src, "; short rows: 2 or 4 threads an output too") != NULL));
      if (is_narrow) h += sizeof narrow - 1;
      CHECK(strncmp(h, head, sizeof head - 1) == 0);
      /* 8 vectors a trip: red_group over one reduced axis of one input, in a plan that may split */
      if (strstr(src, "#define _UK_RED_G8TRIP 1\n"))
        CHECK(strstr(src, "#include <ukern/red_group.cuh>") && strstr(src, "reduced ndim 1") &&
              !strstr(src, "never split"));
      CHECK(!strstr(src, "cub/") && !strstr(src, "cuda/std") && !strstr(src, "CCCL"));
      for (int j = 0; opts && opts[j]; j++) CHECK(strcmp(opts[j], "-pch") != 0);
    }
    /* the header of the strategy the kernel runs, and no other's */
    const char *inc = strstr(src, "#include <ukern/red_"), *call = g ? strstr(g, "ukern::red_") : NULL;
    CHECK(inc && !strstr(inc + 1, "#include <ukern/red_") && call);
    if (inc && call) {
      size_t n = strcspn(inc + 16, ".");
      CHECK(strncmp(inc + 16, call + 7, n) == 0 && call[7 + n] == '<');
    }
    /* group and column programs without their split pass exactly where
       the planner never splits: UK_RED_TINY elements or fewer */
    int64_t elems = 1;
    for (int d = 0; d < ndim; d++) elems *= shape[d];
    if (call) CHECK((strstr(call, "<_uk_k, 256, false>(") == call + strcspn(call, "<")) ==
                    (strncmp(call, "ukern::red_pack<", 16) != 0 && elems <= UK_RED_TINY));
    CHECK_CONTAINS(src, "struct _uk_reduce_op {");
    compile_src(label, src, opts);
  }
  uk_free(opts);
  uk_free(src);
  uk_reduction_destroy(k);
}

static uk_reduction_spec spec(const char *in, const char *out, const char *map, const char *red, const char *post,
                              const char *identity, const char *rtype, const char *pre) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = in;
  s.out_params = out;
  s.map_expr = map;
  s.reduce_expr = red;
  s.post_map_expr = post;
  s.identity = identity;
  s.name = "red";
  s.reduce_type = rtype;
  s.preamble = pre;
  return s;
}

/* uk_reduction_precompile in a GPU-less context fills the disk cache with
 * the entry a second context's precompile (the same lookup a call makes)
 * then hits without compiling. */
static void precompile_then_hit(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  char *dir = ut_temp_dir("red-precompile"); /* empty, whatever earlier runs left */
  o.cache_dir = dir;
  uk_reduction_spec s = spec("T x, T w", "T y", "x * w", "a > b ? a : b", "y = a", NULL, NULL, NULL);
  s.name = "pre_max";
  int64_t shape[] = {300, 70};
  int ax[] = {-1};
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax;
  l.num_axes = 1;
  for (int round = 0; round < 4; round++) {
    s.block_reduce = round >= 2 ? UK_BLOCK_REDUCE_CUB : UK_BLOCK_REDUCE_UKERN;
    uk_context *c = NULL;
    uk_reduction *k = NULL;
    CHECK_OK(uk_context_create(&o, &c));
    if (!c) break;
    CHECK_OK(uk_reduction_create(c, &s, &k));
    uk_array x, w, y;
    CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT64, 2, shape));
    CHECK_OK(uk_array_init(&w, 0x300000, UK_FLOAT64, 1, shape + 1));
    memset(&y, 0, sizeof y);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&w)};
    double t = now_ms();
    CHECK_OK(uk_reduction_precompile(k, in, 2, &y, 1, &l));
    t = now_ms() - t;
    CHECK(y.data == 0); /* nothing allocated */
    uk_cache_stats st;
    CHECK_OK(uk_context_cache_stats(c, &st));
    if (round % 2 == 0) { /* round 2: the CUB variant is a key of its own */
      CHECK(st.compiles == 1 && st.disk_misses == 1 && st.disk_hits == 0 && st.store_failures == 0);
      printf("precompile (cold)%s %7.0f ms\n", round ? ", cub" : "      ", t);
    } else {
      CHECK(st.compiles == 0 && st.disk_hits == 1);
      printf("precompile, disk hit    %7.2f ms\n", t);
    }
    /* bad arguments fail as a call would, compiling nothing */
    uk_arg one[1] = {uk_arg_array(&x)};
    CHECK_STATUS(uk_reduction_precompile(k, one, 1, &y, 1, &l), UK_ERR_INVALID);
    CHECK_STATUS(uk_reduction_precompile(NULL, in, 2, &y, 1, &l), UK_ERR_INVALID);
    CHECK_STREQ(uk_last_error(), "uk_reduction_precompile: k is NULL");
    uk_reduction_destroy(k);
    uk_context_destroy(c);
  }
  free(dir);
}

/* A context compiling for sm_90 without a device or the disk cache; NULL where none can be made. */
static uk_context *offline_sm90(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *c = NULL;
  CHECK_OK(uk_context_create(&o, &c));
  return c;
}

/* A launch reducing the one axis *axis. */
static uk_launch over_axis(const int *axis) {
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = axis;
  l.num_axes = 1;
  return l;
}

/* A float32 sum over the first axis of 8388608 x 2 (dense rows of two
 * outputs: 128 threads an output, red_plan.c) compiles for sm_90 with its
 * width, 128, compiled in (red_cols' _UK_RED_GW). */
static void pairs_compile(void) {
  uk_context *c = offline_sm90();
  if (!c) return;
  uk_reduction_spec fs = spec("T x", "T y", "x", "a + b", "y = a", "0", NULL, NULL);
  int64_t shape[] = {8388608, 2};
  int ax0[] = {0};
  uk_launch l = over_axis(ax0);
  uk_array x, y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 2, shape));
  uk_arg in = uk_arg_array(&x);
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(c, &fs, &k));
  char *src = NULL;
  if (k) CHECK_OK(uk_reduction_source(k, &in, 1, &y, 1, &l, &src));
  if (src) CHECK_CONTAINS(src, "#define _UK_RED_GW 128");
  uk_free(src);
  if (k) CHECK_OK(uk_reduction_precompile(k, &in, 1, &y, 1, &l));
  uk_reduction_destroy(k);
  uk_context_destroy(c);
}

/* Two float32 inputs over rows of 32 (8 threads a row, a vector each):
 * with rows for two trips of a wave, the key's rows (reduction.c key_rows)
 * compile for sm_90, red_group loading two rows a trip (K::map_rows); a
 * thousand rows keep the program of one. */
static void rows_compile(void) {
  uk_context *c = offline_sm90();
  if (!c) return;
  uk_reduction_spec fs = spec("T x, T y", "T z", "(x - y) * (x - y)", "a + b", "z = a", "0", NULL, NULL);
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(c, &fs, &k));
  for (int j = 0; j < 2 && k; j++) {
    int64_t shape[] = {j ? 1000 : 8388608, 32};
    int ax1[] = {1};
    uk_launch l = over_axis(ax1);
    uk_array x, y, z;
    memset(&z, 0, sizeof z);
    CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 2, shape));
    CHECK_OK(uk_array_init(&y, 0x200000, UK_FLOAT32, 2, shape));
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
    char *src = NULL;
    CHECK_OK(uk_reduction_source(k, in, 2, &z, 1, &l, &src));
    if (src) {
      CHECK_CONTAINS(src, "#define _UK_RED_GW 8");
      CHECK((strstr(src, "#define _UK_RED_ROWS 2") == NULL) == j);
      CHECK((strstr(src, "map_rows(") == NULL) == j);
    }
    uk_free(src);
    CHECK_OK(uk_reduction_precompile(k, in, 2, &z, 1, &l));
  }
  uk_reduction_destroy(k);
  uk_context_destroy(c);
}

/* uk_reduction_precompile compiles the programs a call would settle on (reduction.c kind_offline_next):
 * a 16-byte struct reduce type, whose partial the first guess cannot size (4 bytes), over 1000 x 2048
 * float32 columns is guessed 16 threads an output and planned 32 or 64 for the compiled program at any
 * occupancy (bench/tools/plan_describe.c): two compiles, or three where the second program's plan
 * differs again; again, none. A float32 sum of the same shape, whose partial the guess sizes: one. */
static void precompile_settles(void) {
  uk_context *c = offline_sm90();
  if (!c) return;
  const char *pre = "struct s16 { float s, q; long long n; };\n"
                    "__device__ s16 one16(float x) { s16 r; r.s = x; r.q = x * x; r.n = 1; return r; }\n"
                    "__device__ s16 zero16() { s16 r; r.s = 0; r.q = 0; r.n = 0; return r; }\n"
                    "__device__ s16 add16(const s16 &a, const s16 &b) {\n"
                    "  s16 r; r.s = a.s + b.s; r.q = a.q + b.q; r.n = a.n + b.n; return r;\n}\n";
  uk_reduction_spec ss = spec("T x", "T y", "one16(x)", "add16(a, b)", "y = a.s + a.q + (T)a.n", "zero16()", "s16",
                              pre);
  uk_reduction_spec fs = spec("T x", "T y", "x", "a + b", "y = a", "0", NULL, NULL);
  int64_t shape[] = {1000, 2048};
  int ax0[] = {0};
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax0;
  l.num_axes = 1;
  uk_array x, y;
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 2, shape));
  uk_arg in = uk_arg_array(&x);
  for (int j = 0; j < 2; j++) {
    uk_reduction *k = NULL;
    CHECK_OK(uk_reduction_create(c, j ? &fs : &ss, &k));
    uint64_t before[2];
    for (int round = 0; k && round < 2; round++) {
      uk_cache_stats st;
      memset(&y, 0, sizeof y);
      CHECK_OK(uk_context_cache_stats(c, &st));
      before[round] = st.compiles;
      CHECK_OK(uk_reduction_precompile(k, &in, 1, &y, 1, &l));
      CHECK_OK(uk_context_cache_stats(c, &st));
      const uint64_t made = st.compiles - before[round];
      if (round == 1) CHECK(made == 0);
      else if (j == 0) CHECK(made == 2 || made == 3);
      else CHECK(made == 1);
      if (round == 0) printf("precompile of %s: %llu programs\n", j ? "a float32 sum" : "a struct sum", (unsigned long long)made);
    }
    uk_reduction_destroy(k);
  }
  uk_context_destroy(c);
}

/* Non-adjacent reduced axes (0 and 2 of 3-D): the group kernel's vector
 * loads find each vector's row from its flat position (map_vec over two
 * reduced axes), with and without an identity, for several element sizes,
 * two inputs of different sizes, and a struct argmax. */
static void non_adjacent(const char *pre) {
  int64_t s3[] = {6, 5, 64};
  int ax02[] = {0, 2};
  const char *nd_vec = "_uk_ko.x + (sidx)_uk_q * (sidx)_uk_a._uk_rs_x_0 + (sidx)_uk_c1 * (sidx)_uk_a._uk_rs_x_1";
  const uk_dtype ts[] = {UK_FLOAT32, UK_FLOAT64, UK_INT8, UK_FLOAT16, UK_COMPLEX64, UK_COMPLEX128};
  for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++) {
    uk_dtype d = ts[j];
    uk_reduction_spec s = spec("T x", "T y", "x", "a + b", "y = a", j % 2 ? NULL : "0", d == UK_FLOAT16 ? "float" : NULL,
                               NULL);
    char label[64];
    snprintf(label, sizeof label, "%s axes 0, 2", uk_dtype_name(d));
    case_of(label, &s, d, 3, s3, ax02, 2, 1, NULL, 0, nd_vec);
  }
  uk_reduction_spec two = spec("T x, float64 w", "T y", "x * w", "a + b", "y = a", "0", NULL, NULL);
  uk_array w;
  CHECK_OK(uk_array_init(&w, 0x300000, UK_FLOAT64, 3, s3));
  uk_arg wa = uk_arg_array(&w);
  case_of("float32 x float64 axes 0, 2", &two, UK_FLOAT32, 3, s3, ax02, 2, 1, &wa, 1, nd_vec);
  uk_reduction_spec am = spec("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "amax", pre);
  case_of("argmax struct axes 0, 2", &am, UK_FLOAT32, 3, s3, ax02, 2, 1, NULL, 0, nd_vec);
}

/* The cub::BlockReduce variant of every strategy: rows (the block combine),
 * columns, packed rows, full; with and without an identity; a struct argmax
 * (red_opt<amax> through cub::BlockReduce); half in, float reduce type. */
static void cub_variants(void) {
  double t0 = now_ms();
  int64_t s2[] = {64, 96}, sp[] = {64, 2}, s3[] = {4, 5, 6};
  int ax1[] = {1}, ax0[] = {0}, ax2[] = {2};
  const uk_dtype ts[] = {UK_FLOAT32, UK_FLOAT64, UK_INT32, UK_INT64, UK_FLOAT16, UK_COMPLEX64};
  for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++) {
    uk_dtype d = ts[j];
    uk_reduction_spec s = spec("T x", "T y", "x", "a + b", "y = a", j % 2 ? NULL : "0",
                               d == UK_FLOAT16 ? "float" : NULL, NULL);
    s.block_reduce = UK_BLOCK_REDUCE_CUB;
    char label[64];
    snprintf(label, sizeof label, "cub %s rows", uk_dtype_name(d));
    case_of(label, &s, d, 2, s2, ax1, 1, 1, NULL, 0, "red_g(");
    if (j < 2) {
      snprintf(label, sizeof label, "cub %s columns", uk_dtype_name(d));
      case_of(label, &s, d, 2, s2, ax0, 1, 1, NULL, 0, "red_cols(");
      snprintf(label, sizeof label, "cub %s full", uk_dtype_name(d));
      case_of(label, &s, d, 2, s2, NULL, 0, 1, NULL, 0, "red_g(");
    }
  }
  uk_reduction_spec ps = spec("T x", "T y", "x", "a + b", "y = a", "0", NULL, NULL);
  ps.block_reduce = UK_BLOCK_REDUCE_CUB;
  case_of("cub float32 rows of 2", &ps, UK_FLOAT32, 2, sp, ax1, 1, 1, NULL, 0, "red_p(");
  const char *pre = "struct amax { double v; long long i; };\n"
                    "__device__ amax mk(double v, long long i) { amax r; r.v = v; r.i = i; return r; }\n";
  uk_reduction_spec am = spec("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "amax", pre);
  am.block_reduce = UK_BLOCK_REDUCE_CUB;
  case_of("cub argmax struct rows", &am, UK_FLOAT64, 3, s3, ax2, 1, 1, NULL, 0, "red_g(");
  printf("cub variants %.1f s\n", (now_ms() - t0) / 1e3);
}

/* Every value of the device code's measurement knobs (UKERN_RED_TUNE,
 * red_emit.h; read when a reduction is created) compiles: the loads' cache
 * policies, the last block's fences and combine widths, eight loads a trip,
 * red_cols' row runs, least resident blocks; over a split full sum
 * (red_group), a split column sum and a struct argmax (red_cols), each
 * program led by its defines (these in the parser's order ld, cw, trip,
 * rp, mb: the first in that order leads). */
static void tune_variants(const char *pre) {
  static const char *const tunes[] = {"ld=1", "ld=2",        "ld=3", "ld=4",        "ld=5",       "ld=6,cw=16",
                                      "cw=1", "cw=3,trip=8", "rp=1", "swz=1,cw=16", "mb=4,trip=8"};
  /* the first define of each */
  static const char *const first[] = {"LD", "LD", "LD", "LD", "LD", "LD", "CW", "CW", "RP", "CW", "TRIP"};
  int64_t sfull[] = {1 << 20}, scol[] = {65536, 256};
  int ax0[] = {0};
  for (size_t j = 0; j < sizeof tunes / sizeof tunes[0]; j++) {
    setenv("UKERN_RED_TUNE", tunes[j], 1);
    uk_reduction_spec s = spec("T x", "T y", "x", "a + b", "y = a", "0", NULL, NULL);
    uk_reduction_spec am = spec("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "amax", pre);
    uk_reduction *k[3] = {NULL, NULL, NULL};
    CHECK_OK(uk_reduction_create(ctx, &s, &k[0]));
    CHECK_OK(uk_reduction_create(ctx, &s, &k[1]));
    CHECK_OK(uk_reduction_create(ctx, &am, &k[2]));
    unsetenv("UKERN_RED_TUNE");
    for (int c = 0; c < 3; c++) {
      if (!k[c]) continue;
      uk_array x, y;
      CHECK_OK(uk_array_init(&x, 0x100000, c == 2 ? UK_FLOAT64 : UK_FLOAT32, c ? 2 : 1, c ? scol : sfull));
      memset(&y, 0, sizeof y);
      uk_arg in[1] = {uk_arg_array(&x)};
      uk_launch l;
      memset(&l, 0, sizeof l);
      l.axes = ax0;
      l.num_axes = 1;
      char *src = NULL, **opts = NULL, label[64], def[32];
      CHECK_OK(uk_reduction_source(k[c], in, 1, &y, 1, &l, &src));
      CHECK_OK(uk_reduction_nvrtc_options(k[c], in, 1, &y, 1, &l, &opts));
      snprintf(label, sizeof label, "%s %s", tunes[j], c == 0 ? "full sum" : c == 1 ? "column sum" : "argmax columns");
      snprintf(def, sizeof def, "#define _UK_RED_%s ", first[j]);
      CHECK(src && strncmp(src, def, strlen(def)) == 0);
      CHECK_CONTAINS(src, c ? "ukern::red_cols<" : "ukern::red_group<");
      if (strstr(tunes[j], "mb=4")) CHECK_CONTAINS(src, "__launch_bounds__(256, 4)"); /* least resident blocks */
      /* the full sum (one input, one axis of 2^20) loads 8 vectors a trip unless a knob sets the trip */
      if (c == 0) CHECK(src && (strstr(src, "#define _UK_RED_G8TRIP 1\n") != NULL) == (strstr(tunes[j], "trip=") == NULL));
      if (c > 0) CHECK(src && !strstr(src, "_UK_RED_G8TRIP"));
      if (src) compile_src(label, src, opts);
      uk_free(opts);
      uk_free(src);
      uk_reduction_destroy(k[c]);
    }
  }
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  unsetenv("UKERN_RED_TUNE"); /* the default programs, but where a case sets it */
  CHECK_OK(uk_context_create(&o, &ctx));
  int64_t s2[] = {64, 96}, s16[] = {16, 96};
  int ax1[] = {1}, ax0[] = {0};
  double t0 = now_ms();
  for (int t = 0; t < UK_DTYPE_COUNT_; t++) {
    uk_dtype d = (uk_dtype)t;
    int half = d == UK_FLOAT16 || d == UK_BFLOAT16;
    /* no identity: exercises the has-value combine in every strategy */
    uk_reduction_spec s = spec("T x", "T y", "x", "a + b", "y = a", d == UK_BOOL ? NULL : "0", half ? "float" : NULL,
                               NULL);
    char label[64];
    snprintf(label, sizeof label, "%s rows", uk_dtype_name(d));
    case_of(label, &s, d, 2, s2, ax1, 1, 1, NULL, 0, "red_g(");
    snprintf(label, sizeof label, "%s columns", uk_dtype_name(d));
    case_of(label, &s, d, 2, s2, ax0, 1, 1, NULL, 0, "red_cols(");
    /* 16 x 96: a tiny reduction, the programs without their split pass */
    snprintf(label, sizeof label, "%s rows, tiny", uk_dtype_name(d));
    case_of(label, &s, d, 2, s16, ax1, 1, 1, NULL, 0, "red_g(");
    snprintf(label, sizeof label, "%s columns, tiny", uk_dtype_name(d));
    case_of(label, &s, d, 2, s16, ax0, 1, 1, NULL, 0, "red_cols(");
  }
  uk_reduction_spec ps = spec("T x", "T y", "x", "a + b", "y = a", "0", NULL, NULL);
  int64_t sp[] = {64, 2};
  case_of("float32 rows of 2, packed", &ps, UK_FLOAT32, 2, sp, ax1, 1, 1, NULL, 0, "red_p(");
  const char *pre = "struct amax { double v; long long i; };\n"
                    "__device__ amax mk(double v, long long i) { amax r; r.v = v; r.i = i; return r; }\n";
  uk_reduction_spec am = spec("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "amax", pre);
  int64_t s3[] = {4, 5, 6};
  case_of("argmax struct, kept 2-D", &am, UK_FLOAT64, 3, s3, ax1, 1, 1, NULL, 0, "red_cols(");
  uk_reduction_spec two = spec("T x, T w", "T s, T m", "x * w", "max(a, b)",
                               "s = a, m = a / (_in_ind.size() / _out_ind.size())", NULL, NULL, NULL);
  int64_t sbig[] = {(int64_t)1 << 20, 1024};
  uk_arg half = uk_arg_float(0.5);
  case_of("two outputs, 64-bit", &two, UK_FLOAT32, 2, sbig, ax1, 1, 2, &half, 1, "red_g(");
  uk_reduction_spec rd = spec("T x, raw T w", "T y", "x * w[_J] + _raw_x[0]", "a + b", "y = a", "0", NULL, NULL);
  int64_t sw[] = {64};
  uk_array w;
  CHECK_OK(uk_array_init(&w, 0x200000, UK_FLOAT32, 1, sw));
  uk_arg wa = uk_arg_array(&w);
  case_of("raw leading", &rd, UK_FLOAT32, 2, s2, ax0, 1, 1, &wa, 1, "red_cols(");
  uk_reduction_spec cx = spec("T x", "T y", "x * conj(x)", "a + b", "y = a", "0", NULL, NULL);
  case_of("complex128 full", &cx, UK_COMPLEX128, 2, s2, NULL, 0, 1, NULL, 0, "red_g(");
  /* CuPy's first_nonzero: the identity names a scalar parameter; map_expr uses _j
   * (rows and columns: both strategies pass it) */
  uk_reduction_spec fz = spec("T data, int64 len", "int64 y", "data == T(0) ? len : _j", "min(a, b)", "y = a", "len",
                              NULL, NULL);
  uk_arg len = uk_arg_int(64 * 96);
  case_of("first_nonzero rows", &fz, UK_FLOAT32, 2, s2, ax1, 1, 1, &len, 1, "const long long len = _uk_a.len;");
  case_of("first_nonzero columns", &fz, UK_FLOAT32, 2, s2, ax0, 1, 1, &len, 1, "(long long)(_uk_ko._uk_o + _uk_k)");
  non_adjacent(pre);
  tune_variants(pre);
  printf("total %.1f s\n", (now_ms() - t0) / 1e3);
  cub_variants();
  uk_context_destroy(ctx);
  precompile_then_hit();
  precompile_settles();
  pairs_compile();
  rows_compile();
  return ut_finish("test_nvrtc_reduction");
}
