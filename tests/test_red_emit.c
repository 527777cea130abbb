/* Generated reduction source, compared byte for byte with golden files in
 * tests/golden/red_<name>.cu (UKERN_UPDATE_GOLDEN=1 rewrites them; review the
 * diff), and the call-time and create-time errors that need no GPU, with
 * their exact messages. Goes through uk_reduction_source with fake device
 * pointers, so it tests the real call-path decisions. */
#include <stdlib.h>

#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "testutil.h"

static uk_context *ctx;

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

static void golden(const char *name, const char *src) {
  const char *dir = getenv("UKERN_TEST_DATA");
  char path[4096];
  snprintf(path, sizeof path, "%s/golden/red_%s.cu", dir ? dir : "tests", name);
  const char *upd = getenv("UKERN_UPDATE_GOLDEN");
  if (upd && strcmp(upd, "1") == 0) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
      fputs(src, f);
      fclose(f);
    }
    return;
  }
  char *want = read_file(path);
  ut_checks++;
  if (!want || strcmp(want, src) != 0) {
    ut_failures++;
    fprintf(stderr, "golden %s differs (UKERN_UPDATE_GOLDEN=1 rewrites it); generated:\n%s\n", path, src);
  }
  free(want);
}

static uk_array arr(uint64_t data, uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  CHECK_OK(uk_array_init(&a, data, t, ndim, shape));
  return a;
}

static uk_reduction *mk(const char *in, const char *out, const char *map, const char *red, const char *post,
                        const char *identity, const char *name, const char *rtype, const char *preamble) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = in;
  s.out_params = out;
  s.map_expr = map;
  s.reduce_expr = red;
  s.post_map_expr = post;
  s.identity = identity;
  s.name = name;
  s.reduce_type = rtype;
  s.preamble = preamble;
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &k));
  return k;
}

static char *source(uk_reduction *k, const uk_arg *in, int nin, uk_array *out, int nout, const int *ax, int nax) {
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax;
  l.num_axes = nax;
  char *src = NULL;
  CHECK_OK(uk_reduction_source(k, in, nin, out, nout, &l, &src));
  CHECK_STREQ(uk_last_error(), ""); /* a success leaves no error, with a driver or without */
  return src;
}

/* s without its #line directives and the lines of the CUB variant (a copy; free it). */
static char *no_line_directives(const char *s) {
  static const char *const drop[] = {"#line ", "#define UKERN_RED_BLOCK_CUB 1\n", "#include <cub/block/block_reduce.cuh>\n",
                                     "#pragma nv_hdrstop\n", "// block combine: cub::BlockReduce (block_reduce = cub)\n"};
  char *r = malloc(strlen(s) + 1), *o = r;
  while (*s) {
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) + 1 : strlen(s);
    int keep = 1;
    for (size_t j = 0; j < sizeof drop / sizeof drop[0]; j++) keep &= strncmp(s, drop[j], strlen(drop[j])) != 0;
    if (keep) {
      memcpy(o, s, n);
      o += n;
    }
    s += n;
  }
  *o = 0;
  return r;
}

static void goldens(void) {
  uk_array y[2];
  memset(y, 0, sizeof y);
  /* the user guide's l2norm along axis 1 */
  uk_reduction *l2 = mk("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm", NULL, NULL);
  int64_t s2[] = {100, 200};
  uk_array x = arr(0x100000, UK_FLOAT32, 2, s2);
  uk_arg in[2] = {uk_arg_array(&x)};
  int ax1[] = {1};
  char *src = source(l2, in, 1, y, 1, ax1, 1);
  if (src) {
    golden("l2norm_rows", src);
    CHECK_CONTAINS(src, "typedef float T;");
    CHECK_CONTAINS(src, "return (rt)(\n#line 1 \"map_expr\"\nx * x\n#line ");
    CHECK_CONTAINS(src, "#line 1 \"post_map_expr\"\ny = sqrt(a);\n#line ");
    CHECK_CONTAINS(src, "l2norm_g(const _uk_args _uk_a)"); /* rows: the group kernel only */
    CHECK(!strstr(src, "l2norm_cols") && !strstr(src, "l2norm_p("));
    CHECK_CONTAINS(src, "unsigned int *_uk_count;");
    CHECK(!strstr(src, "_UK_RED_WHOLE")); /* a kept axis: threads an output from the plan ... */
    /* ... compiled in (the key's width: rows of 200 float32, a warp each) */
    CHECK_CONTAINS(src, "#define _UK_RED_GW 32\n#include <ukern/red_group.cuh>");
    CHECK_CONTAINS(src, "; threads an output compiled in: 32\n");
  }
  uk_free(src);
  /* the same along axis 0: the columns kernel only, its rows a block compiled in */
  int ax0[] = {0};
  src = source(l2, in, 1, y, 1, ax0, 1);
  if (src) {
    CHECK_CONTAINS(src, "l2norm_cols(const _uk_args _uk_a) { ukern::red_cols<_uk_k, 256>(_uk_a); }");
    CHECK(!strstr(src, "l2norm_g(") && !strstr(src, "l2norm_p("));
    CHECK_CONTAINS(src, "#define _UK_RED_GW ");
  }
  uk_free(src);
  /* short rows (32 float32: 2 or 4 threads a row, the narrow program): the width stays an argument */
  int64_t s32[] = {100, 32};
  uk_array x32 = arr(0x100000, UK_FLOAT32, 2, s32);
  in[0] = uk_arg_array(&x32);
  src = source(l2, in, 1, y, 1, ax1, 1);
  if (src) {
    CHECK_CONTAINS(src, "#define _UK_RED_NARROW 1\n");
    CHECK(!strstr(src, "_UK_RED_GW"));
  }
  uk_free(src);
  /* the width is the plan's for the partial the program will have (reduction.c partial_guess): columns of
     1000 float32, a sum's 4 bytes 16 threads an output; the same as a float64 sum (reduce_type double, an
     8-byte partial) and as a maximum without identity (the value and its flag, 8 bytes): 64 */
  int64_t scol[] = {1000, 4096};
  uk_array xc = arr(0x100000, UK_FLOAT32, 2, scol);
  in[0] = uk_arg_array(&xc);
  uk_reduction *sd = mk("T x", "T y", "x", "a + b", "y = a", "0", "sumd", "double", NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "maxn", NULL, NULL);
  static const struct {
    int which;
    const char *want;
  } widths[] = {{0, "#define _UK_RED_GW 16\n"}, {1, "#define _UK_RED_GW 64\n"}, {2, "#define _UK_RED_GW 64\n"}};
  for (size_t j = 0; j < sizeof widths / sizeof widths[0]; j++) {
    uk_reduction *r = widths[j].which == 0 ? l2 : widths[j].which == 1 ? sd : mx;
    src = r ? source(r, in, 1, y, 1, ax0, 1) : NULL;
    CHECK(src != NULL);
    if (src) CHECK_CONTAINS(src, widths[j].want);
    uk_free(src);
  }
  uk_reduction_destroy(sd);
  uk_reduction_destroy(mx);
  in[0] = uk_arg_array(&x);
  /* full reduction of a half array with a float reduce type */
  uk_reduction *hs = mk("T x", "T y", "x", "a + b", "y = a", "0", "hsum", "float", NULL);
  uk_array xh = arr(0x100000, UK_FLOAT16, 2, s2);
  in[0] = uk_arg_array(&xh);
  src = source(hs, in, 1, y, 1, NULL, 0);
  if (src) {
    golden("half_full", src);
    CHECK_CONTAINS(src, "typedef float _uk_rt;");
    CHECK_CONTAINS(src, "static const int vec = 8;");
    CHECK_CONTAINS(src, "loops: kept ndim 0, reduced ndim 1");
    /* one output: red_group's threads an output and outputs as constants */
    CHECK_CONTAINS(src, "#define _UK_RED_WHOLE 1\n#include <ukern/red_group.cuh>");
    CHECK(!strstr(src, "_UK_RED_GW")); /* the block's threads, whatever the plan's */
  }
  uk_free(src);
  /* argmax: struct reduce type from the preamble, _J, no identity, 3-D */
  const char *pre = "struct amax { float v; long long i; };\n"
                    "__device__ amax mk(float v, long long i) { amax r; r.v = v; r.i = i; return r; }\n";
  uk_reduction *am = mk("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "argmax", "amax", pre);
  int64_t s3[] = {4, 5, 6};
  uk_array x3 = arr(0x100000, UK_FLOAT32, 3, s3);
  in[0] = uk_arg_array(&x3);
  src = source(am, in, 1, y, 1, ax1, 1);
  if (src) {
    golden("argmax_struct", src);
    CHECK_CONTAINS(src, "typedef amax _uk_rt;");
    CHECK_CONTAINS(src, "const long long _J = (long long)_uk_r;");
    CHECK_CONTAINS(src, "static const bool has_identity = false;");
    CHECK_CONTAINS(src, "return rt();"); /* never used: empty pieces are skipped */
    CHECK_CONTAINS(src, "loops: kept ndim 2, reduced ndim 1");
  }
  uk_free(src);
  /* two outputs, a scalar, _in_ind/_out_ind, 64-bit index */
  uk_reduction *two = mk("T x, T w", "T s, T m", "x * w", "a + b", "s = a;\nm = a / (_in_ind.size() / _out_ind.size())",
                         "0", "wmean", NULL, NULL);
  int64_t sbig[] = {(int64_t)1 << 20, 1024};
  uk_array xb = arr(0x100000, UK_FLOAT64, 2, sbig);
  in[0] = uk_arg_array(&xb);
  in[1] = uk_arg_float(0.5);
  src = source(two, in, 2, y, 2, ax1, 1);
  if (src) {
    golden("two_outputs", src);
    CHECK_CONTAINS(src, "const ukern::ew_index _in_ind(_uk_a._uk_insize);");
    CHECK_CONTAINS(src, "typedef unsigned long long idx;");
    CHECK_CONTAINS(src, "const T w = _uk_a.w;");
    CHECK_CONTAINS(src, "T &m = ukern::at(_uk_a._uk_p_m,");
    /* rows of 1024 float64, a block of 256 each: that width stays an argument (reduction.c plan_width) */
    CHECK(!strstr(src, "_UK_RED_GW") && !strstr(src, "compiled in"));
  }
  uk_free(src);
  /* a raw input along the leading reduced axis */
  uk_reduction *rd = mk("T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "wdot", NULL, NULL);
  int64_t sw[] = {100};
  uk_array w = arr(0x200000, UK_FLOAT32, 1, sw);
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_array(&w);
  src = source(rd, in, 2, y, 1, ax0, 1);
  if (src) {
    golden("raw_leading", src);
    CHECK_CONTAINS(src, "ukern::raw_array<T, 1, true> w;");
  }
  uk_free(src);
  /* the argmax with cub::BlockReduce as the block combine (rows: the group
   * kernel): the same program with CUB's header first and one banner line */
  uk_reduction_spec cs;
  memset(&cs, 0, sizeof cs);
  cs.in_params = "T x";
  cs.out_params = "int64 y";
  cs.map_expr = "mk(x, _J)";
  cs.reduce_expr = "a.v >= b.v ? a : b";
  cs.post_map_expr = "y = a.i";
  cs.name = "argmax";
  cs.reduce_type = "amax";
  cs.preamble = pre;
  cs.block_reduce = UK_BLOCK_REDUCE_CUB;
  uk_reduction *amc = NULL;
  CHECK_OK(uk_reduction_create(ctx, &cs, &amc));
  int ax2[] = {2};
  in[0] = uk_arg_array(&x3);
  char *plain = source(am, in, 1, y, 1, ax2, 1);
  src = amc ? source(amc, in, 1, y, 1, ax2, 1) : NULL;
  if (src && plain) {
    golden("argmax_struct_cub", src);
    static const char head[] = "#define UKERN_RED_BLOCK_CUB 1\n#include <cub/block/block_reduce.cuh>\n"
                               "#include <ukern/reduction.cuh>\n#pragma nv_hdrstop\n"
                               "// The planned strategy's header only (the others are never parsed).\n"
                               "\n#define _UK_RED_GW 1\n#include <ukern/red_group.cuh>\n// ukern";
    CHECK(strncmp(src, head, sizeof head - 1) == 0);
    CHECK_CONTAINS(src, "\n// block combine: cub::BlockReduce (block_reduce = cub)\n");
    /* apart from those lines (and the #line numbers they shift), the default variant's program */
    char *a = no_line_directives(src), *b = no_line_directives(plain);
    CHECK_STREQ(a, b);
    CHECK(strstr(plain, "#line ") != NULL && strlen(a) < strlen(src));
    free(a);
    free(b);
    /* 4 x 5 x 6 elements: never split, so no split pass (CUB's block combine too) */
    CHECK_CONTAINS(src, "argmax_g(const _uk_args _uk_a) { ukern::red_group<_uk_k, 256, false>(_uk_a); }");
  }
  uk_free(src);
  uk_free(plain);
  /* the key differs: the CUB variant's NVRTC options add -pch */
  char **opts = NULL;
  uk_launch l2l;
  memset(&l2l, 0, sizeof l2l);
  l2l.axes = ax2;
  l2l.num_axes = 1;
  CHECK_OK(uk_reduction_nvrtc_options(amc, in, 1, y, 1, &l2l, &opts));
  int pch = 0;
  for (int j = 0; opts && opts[j]; j++) pch |= strcmp(opts[j], "-pch") == 0;
  CHECK(pch);
  uk_free(opts);
  uk_reduction_destroy(amc);
  uk_reduction_destroy(l2);
  uk_reduction_destroy(hs);
  uk_reduction_destroy(am);
  uk_reduction_destroy(two);
  uk_reduction_destroy(rd);
}

static void create_errors(void) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "raw T y";
  s.map_expr = "x";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.name = "r";
  uk_reduction *k = NULL;
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_SYNTAX);
  CHECK_STREQ(uk_last_error(), "out_params:1:1: reduction outputs cannot be raw\n    raw T y\n    ^");
  s.out_params = "T y";
  s.block_reduce = 2;
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(),
              "uk_reduction_spec: block_reduce is 2 (hint: UK_BLOCK_REDUCE_UKERN (0) or UK_BLOCK_REDUCE_CUB (1))");
  s.block_reduce = -1;
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_INVALID);
  CHECK(k == NULL);
  s.block_reduce = UK_BLOCK_REDUCE_UKERN;
  s.map_expr = NULL;
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "uk_reduction_spec: map_expr is NULL (hint: it is required)");
  s.map_expr = "x";
  s.in_params = "T x,, T z";
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_SYNTAX);
  s.in_params = "T x";
  s.name = "2bad";
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_SYNTAX);
  s.name = "r";
  s.out_params = "";
  CHECK_STATUS(uk_reduction_create(ctx, &s, &k), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "r: a reduction needs at least one output");
  CHECK(k == NULL);
}

static void call_errors(void) {
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "rmax", NULL, NULL);
  uk_reduction *rd = mk("T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "wdot", NULL, NULL);
  uk_reduction *onlyraw = mk("raw T w", "T y", "w[_J]", "a + b", "y = a", "0", "rawonly", NULL, NULL);
  uk_reduction *fx = mk("float32 x", "U y", "x", "a + b", "y = a", "0", "unbound", NULL, NULL);
  uk_reduction *view = mk("T x, T s", "T y", "x + _raw_s[0]", "a + b", "y = a", "0", "view", NULL, NULL);
  int64_t s2[] = {4, 0}, s3[] = {4, 6, 8};
  uk_array e = arr(0x100000, UK_FLOAT32, 2, s2), x = arr(0x100000, UK_FLOAT32, 3, s3);
  uk_array y[1];
  memset(y, 0, sizeof y);
  uk_launch l;
  memset(&l, 0, sizeof l);
  char *src = NULL;
  uk_arg in[2] = {uk_arg_array(&e)};
  int ax1[] = {1}, ax0[] = {0}, dup[] = {0, -3}, oob[] = {3}, ax02[] = {0, 2};
  l.axes = ax1;
  l.num_axes = 1;
  CHECK_STATUS(uk_reduction_source(mx, in, 1, y, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "zero-size array to reduction operation rmax which has no identity");
  l.axes = ax0; /* (4, 0) reduced along axis 0: no output elements, no error */
  CHECK_OK(uk_reduction_source(mx, in, 1, y, 1, &l, &src));
  uk_free(src);
  src = NULL;
  in[0] = uk_arg_array(&x);
  l.axes = dup;
  l.num_axes = 2;
  CHECK_STATUS(uk_reduction_source(mx, in, 1, y, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "rmax: axis -3 is repeated in axes (axis 0): duplicate value in 'axis'");
  l.axes = oob;
  l.num_axes = 1;
  CHECK_STATUS(uk_reduction_source(mx, in, 1, y, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "rmax: axis 3 is out of bounds for an input of ndim 3");
  /* a given output of the wrong shape (keepdims 1s count) */
  int64_t ks[] = {4, 8};
  uk_array yo = arr(0x300000, UK_FLOAT32, 2, ks);
  l.axes = ax1;
  l.keepdims = 1;
  CHECK_STATUS(uk_reduction_source(mx, in, 1, &yo, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "rmax: output 'y' has shape (4, 8) but the result shape is (4, 1, 8)");
  l.keepdims = 0;
  CHECK_OK(uk_reduction_source(mx, in, 1, &yo, 1, &l, &src));
  uk_free(src);
  src = NULL;
  /* raw inputs need leading reduced axes */
  int64_t sw[] = {6};
  uk_array w = arr(0x200000, UK_FLOAT32, 1, sw);
  in[1] = uk_arg_array(&w);
  l.axes = ax02;
  l.num_axes = 2;
  CHECK_STATUS(uk_reduction_source(rd, in, 2, y, 1, &l, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "wdot: raw input 'w' needs the reduced axes to be the leading ones (axes 0..m-1 of "
                               "the input), so that _J numbers them");
  in[0] = uk_arg_array(&w);
  CHECK_STATUS(uk_reduction_source(onlyraw, in, 1, y, 1, NULL, &src), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(),
              "rawonly: a reduction needs at least one non-raw array input (its shape is the shape reduced)");
  /* types */
  uk_array xd = arr(0x100000, UK_FLOAT64, 3, s3);
  in[0] = uk_arg_array(&xd);
  CHECK_STATUS(uk_reduction_source(fx, in, 1, y, 1, NULL, &src), UK_ERR_TYPE);
  in[0] = uk_arg_array(&x);
  CHECK_STATUS(uk_reduction_source(fx, in, 1, y, 1, NULL, &src), UK_ERR_TYPE);
  CHECK_CONTAINS(uk_last_error(), "'U'");
  in[1] = uk_arg_float(1.0);
  CHECK_STATUS(uk_reduction_source(view, in, 2, y, 1, NULL, &src), UK_ERR_INVALID);
  CHECK_STREQ(uk_last_error(), "view: map_expr uses '_raw_s' but input 's' is a scalar, not an array");
  CHECK(src == NULL);
  uk_reduction_destroy(mx);
  uk_reduction_destroy(rd);
  uk_reduction_destroy(onlyraw);
  uk_reduction_destroy(fx);
  uk_reduction_destroy(view);
}

/* identity '' (or blank) is no identity, as in CuPy; reduce_type written
 * as a NumPy name or code is its C type; C spellings stay C (float is
 * float, not NumPy's float64). */
static void spec_forms(void) {
  int64_t s2[] = {4, 0}, s3[] = {4, 6};
  uk_array e = arr(0x100000, UK_FLOAT32, 2, s2), x = arr(0x100000, UK_FLOAT32, 2, s3);
  uk_arg ine[1] = {uk_arg_array(&e)}, inx[1] = {uk_arg_array(&x)};
  uk_array y[1];
  uk_launch l;
  memset(&l, 0, sizeof l);
  int ax1[] = {1};
  l.axes = ax1;
  l.num_axes = 1;
  static const char *const blanks[] = {"", "  ", "\t\n"};
  for (int j = 0; j < 3; j++) {
    uk_reduction *k = mk("T x", "T y", "x", "max(a, b)", "y = a", blanks[j], "rmax", NULL, NULL);
    char *src = NULL;
    memset(y, 0, sizeof y);
    CHECK_STATUS(uk_reduction_source(k, ine, 1, y, 1, &l, &src), UK_ERR_SHAPE);
    CHECK_STREQ(uk_last_error(), "zero-size array to reduction operation rmax which has no identity");
    memset(y, 0, sizeof y);
    src = source(k, inx, 1, y, 1, ax1, 1);
    CHECK_CONTAINS(src, "static const bool has_identity = false;");
    CHECK_CONTAINS(src, "// reduce type: T; identity: none");
    uk_free(src);
    uk_reduction_destroy(k);
  }
  static const struct {
    const char *rtype, *want;
  } types[] = {{"float32", "float"},         {" float64 ", "double"}, {"f4", "float"},
               {"f8", "double"},             {"int64", "long long"},  {"i8", "long long"},
               {"c16", "ukern::complex<double>"}, {"bf16", "ukern::bfloat16"}, {"uint32", "unsigned int"},
               {"float", "float"},           {"double", "double"},    {"int", "int"},
               {"T", "T"},                   {"", "float"},           {"   ", "float"}};
  for (size_t j = 0; j < sizeof types / sizeof types[0]; j++) {
    uk_reduction *k = mk("T x", "float32 y", "x", "a + b", "y = a", "0", "rsum", types[j].rtype, NULL);
    memset(y, 0, sizeof y);
    char *src = source(k, inx, 1, y, 1, ax1, 1), want[96];
    snprintf(want, sizeof want, "// reduce type: %s; identity: 0", types[j].want);
    CHECK_CONTAINS(src, want);
    uk_free(src);
    uk_reduction_destroy(k);
  }
}

/* red_group's __launch_bounds__ asks for resident blocks when two or more
 * inputs are loaded in vectors over rows of more than 8 vectors (ptxas
 * otherwise sank their loads to their uses: 2 of 8 in flight), and for
 * nothing else. */
static void launch_bounds(void) {
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 2, 4) == 4);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 2, 2) == 4);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 3, 4) == 3);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 4, 8) == 2);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 7, 4) == 1);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 40, 4) == 1);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 1, 4) == 0);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_G, 2, 1) == 0);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_COLS, 2, 4) == 0);
  CHECK(uk__red_min_blocks(UK_RED_GROUP_PACK, 2, 4) == 0);
  CHECK(uk__red_deep(UK_RED_GROUP_G, 2, 4, 33) && !uk__red_deep(UK_RED_GROUP_G, 2, 4, 32));
  CHECK(uk__red_deep(UK_RED_GROUP_G, 2, 2, 17) && !uk__red_deep(UK_RED_GROUP_G, 2, 2, 16));
  CHECK(!uk__red_deep(UK_RED_GROUP_G, 1, 4, 1 << 20) && !uk__red_deep(UK_RED_GROUP_COLS, 2, 4, 1 << 20));
  static const struct {
    const char *in, *map;
    uk_dtype t;
    int nin, axis;
    int64_t row;
    const char *want;
  } cases[] = {
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT32, 2, 1, 256, "__launch_bounds__(256, 4) lb_g("},
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT64, 2, 1, 256, "__launch_bounds__(256, 4) lb_g("},
      {"T x, T y, T z", "x * y + z", UK_FLOAT32, 3, 1, 256, "__launch_bounds__(256, 3) lb_g("},
      {"T x", "x * x", UK_FLOAT32, 1, 1, 256, "__launch_bounds__(256) lb_g("},
      {"T x, T y", "(x - y) * (x - y)", UK_COMPLEX128, 2, 1, 256, "__launch_bounds__(256) lb_g("},
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT32, 2, 0, 256, "__launch_bounds__(256) lb_cols("},
      /* rows of 8 vectors or fewer: one vector a thread, no bounds (33 floats: bounds) */
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT32, 2, 1, 32, "__launch_bounds__(256) lb_g("},
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT32, 2, 1, 33, "__launch_bounds__(256, 4) lb_g("},
      {"T x, T y", "(x - y) * (x - y)", UK_FLOAT64, 2, 1, 16, "__launch_bounds__(256) lb_g("},
  };
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_reduction *k = mk(cases[j].in, "T out", cases[j].map, "a + b", "out = a", "0", "lb", NULL, NULL);
    int64_t shape[] = {64, cases[j].row};
    uk_array x[3], y[1];
    memset(y, 0, sizeof y);
    uk_arg in[3];
    for (int i = 0; i < cases[j].nin; i++) {
      x[i] = arr(0x100000 + (uint64_t)i * 0x100000, cases[j].t, 2, shape);
      in[i] = uk_arg_array(&x[i]);
    }
    int ax[] = {cases[j].axis};
    char *src = source(k, in, cases[j].nin, y, 1, ax, 1);
    CHECK_CONTAINS(src, cases[j].want);
    uk_free(src);
    uk_reduction_destroy(k);
  }
}

/* A group or column program the planner never splits (UK_RED_TINY
 * elements or fewer in all, uk__red_tiny) is red_group / red_cols<K, 256,
 * false>: no split pass; one element more the default (SPLIT true), as is
 * a packed program (never split, no such pass) and a column program whose
 * UKERN_RED_TUNE forces pieces (sp). One output of up to UK_RED_WIDE_MAX
 * aligned elements is red_group<K, 1024, false> under
 * __launch_bounds__(1024), and a quarter to twice as many outputs as SMs
 * (132 offline) of 4097-16384 elements red_group<K, 512, false> (the
 * key's block). */
static void unsplit(void) {
  CHECK(uk__red_tiny(1, UK_RED_TINY) && !uk__red_tiny(1, UK_RED_TINY + 1));
  CHECK(uk__red_tiny(64, UK_RED_TINY / 64) && !uk__red_tiny(64, UK_RED_TINY / 64 + 1));
  CHECK(uk__red_tiny(0, INT64_MAX) && uk__red_tiny(INT64_MAX, 0) && !uk__red_tiny(UK_RED_TINY + 1, 1));
  static const struct {
    int64_t r, c;
    int axis; /* -1: all */
    uk_dtype t;
    const char *want; /* the kernel's call */
  } cases[] = {
      {1, UK_RED_TINY, -1, UK_FLOAT64, "ukern::red_group<_uk_k, 256, false>(_uk_a);"},
      {1, UK_RED_TINY + 1, -1, UK_FLOAT64, "ukern::red_group<_uk_k, 1024, false>(_uk_a);"}, /* wide */
      {1, UK_RED_WIDE_MAX, -1, UK_FLOAT32, "ukern::red_group<_uk_k, 1024, false>(_uk_a);"},
      {1, UK_RED_WIDE_MAX + 1, -1, UK_FLOAT32, "ukern::red_group<_uk_k, 256>(_uk_a);"},
      {2, UK_RED_TINY, -1, UK_FLOAT32, "ukern::red_group<_uk_k, 1024, false>(_uk_a);"}, /* merged: one row */
      {2, UK_RED_TINY, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256>(_uk_a);"},             /* two outputs */
      {64, 64, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256, false>(_uk_a);"},
      {64, 65, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256>(_uk_a);"},
      {16, 256, 1, UK_INT8, "ukern::red_group<_uk_k, 256, false>(_uk_a);"},
      {2, 2049, 1, UK_INT8, "ukern::red_group<_uk_k, 256>(_uk_a);"},
      {7, 0, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256, false>(_uk_a);"},
      {64, 64, 0, UK_FLOAT32, "ukern::red_cols<_uk_k, 256, false>(_uk_a);"},
      {65, 64, 0, UK_FLOAT32, "ukern::red_cols<_uk_k, 256>(_uk_a);"},
      {2048, 2, 0, UK_INT16, "ukern::red_cols<_uk_k, 256, false>(_uk_a);"},
      {64, 2, 1, UK_FLOAT32, "ukern::red_pack<_uk_k, 256>(_uk_a);"},
      {128, 8192, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 512, false>(_uk_a);"}, /* block rows */
      {33, 16384, 1, UK_FLOAT64, "ukern::red_group<_uk_k, 512, false>(_uk_a);"},
      {264, 4112, 1, UK_INT8, "ukern::red_group<_uk_k, 512, false>(_uk_a);"},
      {264, 4100, 1, UK_INT8, "ukern::red_group<_uk_k, 256>(_uk_a);"}, /* rows of part vectors: no vector loads */
      {32, 8192, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256>(_uk_a);"},  /* too few outputs */
      {265, 8192, 1, UK_FLOAT32, "ukern::red_group<_uk_k, 256>(_uk_a);"}, /* too many */
      {8192, 128, 0, UK_FLOAT32, "ukern::red_cols<_uk_k, 256>(_uk_a);"},  /* columns */
  };
  uk_reduction *k = mk("T x", "T y", "x * x", "a + b", "y = a", "0", "tiny", NULL, NULL);
  for (size_t j = 0; k && j < sizeof cases / sizeof cases[0]; j++) {
    int64_t shape[] = {cases[j].r, cases[j].c};
    uk_array x = arr(0x100000, cases[j].t, 2, shape), y[1];
    memset(y, 0, sizeof y);
    uk_arg in[1] = {uk_arg_array(&x)};
    int ax[] = {cases[j].axis};
    char *src = source(k, in, 1, y, 1, cases[j].axis < 0 ? NULL : ax, cases[j].axis < 0 ? 0 : 1);
    CHECK_CONTAINS(src, cases[j].want);
    int never = strstr(cases[j].want, "false") != NULL;
    CHECK(src && (strstr(src, "; never split: no split pass") != NULL) == never);
    int block = strstr(cases[j].want, "1024") ? 1024 : strstr(cases[j].want, "512") ? 512 : 0;
    char banner[64], bounds[32];
    snprintf(banner, sizeof banner, "; blocks of %d threads, one an output\n", block);
    snprintf(bounds, sizeof bounds, "__launch_bounds__(%d)", block ? block : 256);
    CHECK(src && (strstr(src, banner) != NULL) == (block > 0) && strstr(src, bounds) != NULL);
    uk_free(src);
  }
  /* two inputs (a deep program): a block of 256 an output, the split program's resident blocks */
  uk_reduction *dot = mk("T x, T w", "T y", "x * w", "a + b", "y = a", "0", "dot", NULL, NULL);
  int64_t ds[] = {128, 8192};
  uk_array dx = arr(0x100000, UK_FLOAT32, 2, ds), dw = arr(0x200000, UK_FLOAT32, 2, ds), dy[1];
  memset(dy, 0, sizeof dy);
  uk_arg din[2] = {uk_arg_array(&dx), uk_arg_array(&dw)};
  int dax[] = {1};
  char *dsrc = dot ? source(dot, din, 2, dy, 1, dax, 1) : NULL;
  CHECK_CONTAINS(dsrc, "ukern::red_group<_uk_k, 256>(_uk_a);");
  CHECK_CONTAINS(dsrc, "__launch_bounds__(256, 4)");
  uk_free(dsrc);
  uk_reduction_destroy(dot);
  uk_reduction_destroy(k);
  setenv("UKERN_RED_TUNE", "sp=2", 1);
  k = mk("T x", "T y", "x * x", "a + b", "y = a", "0", "tiny", NULL, NULL);
  unsetenv("UKERN_RED_TUNE");
  int64_t s64[] = {64, 64};
  uk_array x = arr(0x100000, UK_FLOAT32, 2, s64), y[1];
  memset(y, 0, sizeof y);
  uk_arg in[1] = {uk_arg_array(&x)};
  int ax0[] = {0};
  char *src = k ? source(k, in, 1, y, 1, ax0, 1) : NULL;
  CHECK_CONTAINS(src, "ukern::red_cols<_uk_k, 256>(_uk_a);");
  uk_free(src);
  uk_reduction_destroy(k);
}

/* Short rows of 64-255 bytes over the loop inputs (uk__red_narrow_lanes):
 * the program is narrow (its define first, its banner says so, groups of 2
 * and 4 threads combine); other row lengths, and other kernels, are not. */
static void narrow_rows(void) {
  static const struct {
    int64_t r, c;
    int axis, nin;
    uk_dtype t;
    int narrow;
  } cases[] = {
      {5000, 32, 1, 1, UK_FLOAT32, 1},  /* 128 bytes */
      {5000, 16, 1, 2, UK_FLOAT32, 1},  /* 2 x 64 bytes */
      {5000, 20, 1, 1, UK_FLOAT32, 1},  /* 80 bytes */
      {5000, 16, 1, 1, UK_FLOAT32, 0},  /* 64 bytes: a thread a row */
      {5000, 32, 1, 2, UK_FLOAT32, 0},  /* 256 bytes: 8 threads a row */
      {5000, 64, 1, 1, UK_FLOAT32, 0},  /* more than 8 vectors */
      {5000, 16, 1, 1, UK_FLOAT64, 1},  /* 128 bytes of doubles */
      {5000, 4, 1, 2, UK_FLOAT32, 0},   /* one vector a row */
      {5000, 32, 0, 1, UK_FLOAT32, 0},  /* columns */
      {5000, 2, 1, 1, UK_FLOAT32, 0},   /* packed rows of 2 */
  };
  uk_reduction *k1 = mk("T x", "T y", "x * x", "a + b", "y = a", "0", "nar1", NULL, NULL);
  uk_reduction *k2 = mk("T x, T z", "T y", "(x - z) * (x - z)", "a + b", "y = a", "0", "nar2", NULL, NULL);
  for (size_t j = 0; k1 && k2 && j < sizeof cases / sizeof cases[0]; j++) {
    int64_t shape[] = {cases[j].r, cases[j].c};
    uk_array x = arr(0x100000, cases[j].t, 2, shape), z = arr(0x8000000, cases[j].t, 2, shape), y[1];
    memset(y, 0, sizeof y);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&z)};
    int ax[] = {cases[j].axis};
    char *src = source(cases[j].nin == 1 ? k1 : k2, in, cases[j].nin, y, 1, ax, 1);
    int def = src && strstr(src, "#define _UK_RED_NARROW 1\n") != NULL;
    int banner = src && strstr(src, "; short rows: 2 or 4 threads an output too") != NULL;
    CHECK(src && def == cases[j].narrow && banner == cases[j].narrow);
    if (!(src && def == cases[j].narrow))
      fprintf(stderr, "  narrow case %zu: (%lld, %lld) axis %d, %d inputs\n", j, (long long)cases[j].r,
              (long long)cases[j].c, cases[j].axis, cases[j].nin);
    uk_free(src);
  }
  uk_reduction_destroy(k1);
  uk_reduction_destroy(k2);
}

/* UKERN_RED_TUNE: the device code's measurement knobs, as defines before
 * every header; none (the default source, the goldens') without it. */
static void tune_knobs(void) {
  char b[128];
  uk__red_tune_parse("ld=1,last=1,cw=8,trip=8", b, sizeof b); /* last: a retired knob, ignored */
  CHECK_STREQ(b, "#define _UK_RED_LD 1\n#define _UK_RED_CW 8\n#define _UK_RED_TRIP 8\n");
  uk__red_tune_parse("rp=1,swz=1,mb=4,by=16,sp=2,cv=0", b, sizeof b);
  CHECK_STREQ(b, "#define _UK_RED_RP 1\n#define _UK_RED_MB 4\n"); /* plan knobs: no define */
  /* the planner's knobs: key=N of 1 to 5 digits, else the default */
  CHECK(uk__red_tune_value("rp=1,by=16,sp=2", "by", 0) == 16 && uk__red_tune_value("rp=1,by=16,sp=2", "sp", 0) == 2);
  CHECK(uk__red_tune_value("by=16", "cv", -1) == -1 && uk__red_tune_value(NULL, "by", 7) == 7);
  CHECK(uk__red_tune_value("cv=0,sp=65535", "cv", -1) == 0 && uk__red_tune_value("cv=0,sp=65535", "sp", 0) == 65535);
  CHECK(uk__red_tune_value("by=1x,sp=123456,by=,bys=4,b=4", "by", -2) == -2);
  CHECK(uk__red_tune_value("by=8,sp=2,by=16,by=x", "by", 0) == 16); /* the last well-formed one */
  CHECK(uk__red_tune_value("sp=123456", "sp", -2) == -2);
  uk__red_tune_parse("", b, sizeof b);
  CHECK_STREQ(b, "");
  uk__red_tune_parse(NULL, b, sizeof b);
  CHECK_STREQ(b, "");
  /* unknown keys, three digits, no digit, empty items, a key that prefixes another: ignored */
  uk__red_tune_parse("ld=123,bogus=1,last=x,,l=1,cw=16,ld=,trip=8x,ld=1x", b, sizeof b);
  CHECK_STREQ(b, "#define _UK_RED_CW 16\n");
  /* a define that does not fit is left out whole */
  uk__red_tune_parse("ld=2,cw=16", b, 30);
  CHECK_STREQ(b, "#define _UK_RED_LD 2\n");
  uk__red_tune_parse("ld=2", b, 5);
  CHECK_STREQ(b, "");
  /* a repeated key: one define, the last well-formed value (two would not compile) */
  uk__red_tune_parse("ld=1,ld=2", b, sizeof b);
  CHECK_STREQ(b, "#define _UK_RED_LD 2\n");
  uk__red_tune_parse("cw=4,ld=1,cw=16,ld=x,cw=", b, sizeof b);
  CHECK_STREQ(b, "#define _UK_RED_LD 1\n#define _UK_RED_CW 16\n");
  /* every key twice still fits the kernel's buffer (uk_red_kernel.tune) whole */
  char kb[sizeof ((uk_red_kernel *)0)->tune];
  uk__red_tune_parse("ld=1,cw=8,trip=8,rp=1,mb=4,trip=4,cw=32,rp=0,mb=2,ld=0", kb, (int)sizeof kb);
  CHECK_STREQ(kb, "#define _UK_RED_LD 0\n#define _UK_RED_CW 32\n#define _UK_RED_TRIP 4\n#define _UK_RED_RP 0\n"
                  "#define _UK_RED_MB 2\n");
  /* the table's order, not the text's: one setting in any order is one source */
  uk__red_tune_parse("trip=8,cw=8,rp=1,ld=1", b, sizeof b);
  CHECK_STREQ(b, "#define _UK_RED_LD 1\n#define _UK_RED_CW 8\n#define _UK_RED_TRIP 8\n#define _UK_RED_RP 1\n");
  uk__red_tune_parse("ld=2", b, 0); /* no room at all: nothing written */
  CHECK_STREQ(b, "#define _UK_RED_LD 1\n#define _UK_RED_CW 8\n#define _UK_RED_TRIP 8\n#define _UK_RED_RP 1\n");
  uk_array y[1];
  memset(y, 0, sizeof y);
  int64_t s2[] = {300, 64};
  uk_array x = arr(0x100000, UK_FLOAT32, 2, s2);
  uk_arg in[1] = {uk_arg_array(&x)};
  int ax0[] = {0};
  setenv("UKERN_RED_TUNE", "cw=8,ld=1,ld=2", 1);
  uk_reduction *t = mk("T x", "T y", "x", "a + b", "y = a", "0", "tuned", NULL, NULL);
  unsetenv("UKERN_RED_TUNE");
  uk_reduction *d = mk("T x", "T y", "x", "a + b", "y = a", "0", "tuned", NULL, NULL);
  char *st = t ? source(t, in, 1, y, 1, ax0, 1) : NULL, *sd = d ? source(d, in, 1, y, 1, ax0, 1) : NULL;
  CHECK(st && sd);
  if (st && sd) {
    static const char head[] = "#define _UK_RED_LD 2\n#define _UK_RED_CW 8\n";
    CHECK(strncmp(st, head, sizeof head - 1) == 0);
    char *a = no_line_directives(st + sizeof head - 1), *b = no_line_directives(sd);
    CHECK_STREQ(a, b); /* the defines, then the default source (#line numbers move by two) */
    free(a);
    free(b);
    CHECK(strncmp(sd, "#include <ukern/reduction.cuh>\n", 31) == 0 && !strstr(sd, "#define _UK_RED_LD") &&
          !strstr(sd, "#define _UK_RED_CW"));
  }
  uk_free(st);
  uk_free(sd);
  uk_reduction_destroy(t);
  uk_reduction_destroy(d);
}

/* The loads' cache policy by input size: at most UK_RED_STREAM_MAX_BYTES
 * (every loop input's bytes together) the header's default (loads past
 * L1), one element more the default policy (#define _UK_RED_LD 0); a
 * knob's ld wins over both. */
static void load_policy(void) {
  uk_array y[1];
  memset(y, 0, sizeof y);
  int ax1[] = {1};
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "psum", NULL, NULL);
  uk_reduction *dot = mk("T x, float64 w", "T y", "x * w", "a + b", "y = a", "0", "pdot", NULL, NULL);
  static const char plain[] = "#define _UK_RED_LD 0\n#include <ukern/reduction.cuh>\n";
  int64_t at[] = {UK_RED_STREAM_MAX_BYTES / 4 / 1024, 1024}, past[] = {UK_RED_STREAM_MAX_BYTES / 4 / 1024, 1025};
  for (int j = 0; j < 2; j++) {
    uk_array x = arr(0x100000, UK_FLOAT32, 2, j ? past : at);
    uk_arg in[1] = {uk_arg_array(&x)};
    char *src = sum ? source(sum, in, 1, y, 1, ax1, 1) : NULL;
    CHECK(src && (strncmp(src, plain, sizeof plain - 1) == 0) == j);
    CHECK(src && (strncmp(src, "#include <ukern/reduction.cuh>\n", 31) == 0) == !j);
    uk_free(src);
  }
  /* two inputs: 4 + 8 bytes an element; 128 MiB / 12 elements is not whole */
  int64_t n12 = UK_RED_STREAM_MAX_BYTES / 12, s_at[] = {1, n12}, s_past[] = {1, n12 + 1};
  for (int j = 0; j < 2; j++) {
    uk_array x = arr(0x100000, UK_FLOAT32, 2, j ? s_past : s_at), w = arr(0x200000, UK_FLOAT64, 2, j ? s_past : s_at);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&w)};
    char *src = dot ? source(dot, in, 2, y, 1, ax1, 1) : NULL;
    CHECK(src && (strncmp(src, plain, sizeof plain - 1) == 0) == j);
    uk_free(src);
  }
  uk_array xp = arr(0x100000, UK_FLOAT32, 2, past);
  uk_arg inp[1] = {uk_arg_array(&xp)};
  setenv("UKERN_RED_TUNE", "ld=2", 1);
  uk_reduction *t = mk("T x", "T y", "x", "a + b", "y = a", "0", "psum", NULL, NULL);
  unsetenv("UKERN_RED_TUNE");
  char *src = t ? source(t, inp, 1, y, 1, ax1, 1) : NULL;
  static const char knob[] = "#define _UK_RED_LD 2\n#include <ukern/reduction.cuh>\n";
  CHECK(src && strncmp(src, knob, sizeof knob - 1) == 0);
  uk_free(src);
  uk_reduction_destroy(t);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(dot);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  unsetenv("UKERN_RED_TUNE"); /* the goldens are the default source */
  CHECK_OK(uk_context_create(&o, &ctx));
  goldens();
  tune_knobs();
  load_policy();
  create_errors();
  call_errors();
  spec_forms();
  launch_bounds();
  unsplit();
  narrow_rows();
  uk_context_destroy(ctx);
  return ut_finish("test_red_emit");
}
