/* Every dtype x every elementwise variant x merged ndim compiles with NVRTC
 * for sm_90. Sources come from uk_elementwise_source with fake device
 * pointers, so this goes through the real call-path code generation; no
 * GPU needed. The golden kernels of test_ew_emit compile too. */
#include <time.h>

#include "runtime/context.h"
#include "testutil.h"

static uk_context *ctx;
static int compiles;
static double slowest_ms;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uk_array arr(uint64_t data, uk_dtype t, int ndim, const int64_t *shape, const int64_t *strides) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = t;
  a.ndim = ndim;
  int64_t s = (int64_t)uk_dtype_size(t);
  for (int d = ndim - 1; d >= 0; d--) {
    a.shape[d] = shape[d];
    a.strides[d] = strides ? strides[d] : s;
    s *= shape[d];
  }
  return a;
}

/* Generates the source of one call and compiles it; checks the variant. */
static void compile_call(uk_elementwise *k, const uk_arg *in, int nin, uk_array *out, int nout, int64_t size,
                         const char *variant, const char *label) {
  uk_launch l = {.size = size};
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, in, nin, out, nout, &l, &src));
  if (!src) return;
  if (variant && !strstr(src, variant)) {
    ut_failures++;
    fprintf(stderr, "%s: expected variant '%s' in:\n%s\n", label, variant, src);
  }
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = label;
  req.arch = 90;
  char **opts = NULL; /* as the call path compiles them (the library says which) */
  CHECK_OK(uk_elementwise_nvrtc_options(k, in, nin, out, nout, &l, &opts));
  int nopts = 0;
  while (opts && opts[nopts]) nopts++;
  req.options = (const char *const *)opts;
  req.num_options = nopts;
  uk__binary *bin = NULL;
  double t0 = now_ms();
  uk_status st = uk__context_compile(ctx, &req, &bin);
  double ms = now_ms() - t0;
  if (ms > slowest_ms) slowest_ms = ms;
  compiles++;
  ut_checks++;
  if (st != UK_OK || !bin || bin->image_size == 0) {
    ut_failures++;
    fprintf(stderr, "%s: %s: %s\n%s\n", label, uk_status_name(st), uk_last_error(), uk_last_error_log());
  }
  uk__binary_release(bin);
  uk_free(opts);
  uk_free(src);
}

/* One dtype through every variant. */
static void dtype_cases(uk_dtype t) {
  const char *tn = uk_dtype_name(t);
  int64_t it = (int64_t)uk_dtype_size(t);
  uk_elementwise *k = NULL;
  /* x, y: loop operands; w: raw; s: scalar; i and _ind used. */
  CHECK_OK(
      uk_elementwise_create(ctx,
                            &(uk_elementwise_spec){.in_params = "T x, T y, raw T w, T s",
                                                   .out_params = "T z",
                                                   .operation = "z = x * y + w[(_ind.size() - 1 - i) % w.size()] + s",
                                                   .name = "ew_all"},
                            &k));
  if (!k) return;
  char label[128];
  int64_t n1[] = {1001}, wshape[] = {7};
  uk_array w = arr(0x90000, t, 1, wshape, NULL), z;
  uk_arg in[4];
  in[2] = uk_arg_array(&w);
  in[3] = uk_arg_int(1);
  /* vectorised (complex128: 16-byte elements, contiguous) */
  uk_array x = arr(0x10000, t, 1, n1, NULL), y = arr(0x20000, t, 1, n1, NULL);
  in[0] = uk_arg_array(&x);
  in[1] = uk_arg_array(&y);
  memset(&z, 0, sizeof z);
  snprintf(label, sizeof label, "%s vectorised", tn);
  compile_call(k, in, 4, &z, 1, -1, it < 16 ? "vectorised x" : "contiguous, 32-bit index, ndim 1", label);
  /* contiguous, misaligned (1-byte types stay aligned to their size) */
  uk_array xm = arr(0x10000 + (uint64_t)it, t, 1, n1, NULL);
  in[0] = uk_arg_array(&xm);
  snprintf(label, sizeof label, "%s contiguous", tn);
  compile_call(k, in, 4, &z, 1, -1, "contiguous, 32-bit index, ndim 1", label);
  /* 64-bit contiguous */
  int64_t big[] = {(1ll << 31) + 5};
  uk_array xb = arr(0x10000, t, 1, big, NULL), yb = arr(0x20000, t, 1, big, NULL);
  in[0] = uk_arg_array(&xb);
  in[1] = uk_arg_array(&yb);
  snprintf(label, sizeof label, "%s vectorised 64", tn);
  compile_call(k, in, 4, &z, 1, -1, "64-bit index, ndim 1", label);
  /* 0-d */
  uk_array x0 = arr(0x10000, t, 0, NULL, NULL), y0 = arr(0x20000, t, 0, NULL, NULL);
  in[0] = uk_arg_array(&x0);
  in[1] = uk_arg_array(&y0);
  snprintf(label, sizeof label, "%s 0-d", tn);
  compile_call(k, in, 4, &z, 1, -1, "contiguous, 32-bit index, ndim 0", label);
  /* strided (ndim 1) and rows (ndim 2, 3), 32- and 64-bit: every axis stepped by 2 elements so
   * nothing merges (x's inner stride is not unit: rows without vectors) */
  for (int wide = 0; wide < 2; wide++)
    for (int nd = 1; nd <= 3; nd++) {
      int64_t shape[3], st[3];
      int64_t last = wide ? (1ll << 31) / 2 + 3 : 5;
      for (int d = 0; d < nd; d++) shape[d] = d == nd - 1 ? last : 3;
      int64_t s = 2 * it;
      for (int d = nd - 1; d >= 0; d--) {
        st[d] = s;
        s *= 2 * shape[d];
      }
      uk_array xs = arr(0x10000, t, nd, shape, st), ys = arr(0x20000, t, nd, shape, NULL);
      in[0] = uk_arg_array(&xs);
      in[1] = uk_arg_array(&ys);
      char want[64];
      snprintf(want, sizeof want, "%s, %s index, ndim %d", nd == 1 ? "strided" : "rows", wide ? "64-bit" : "32-bit",
               nd);
      snprintf(label, sizeof label, "%s %s", tn, want);
      compile_call(k, in, 4, &z, 1, -1, want, label);
    }
  /* rows with vectors: y broadcast along rows (ndim 2) or along the middle axis (ndim 3), or a
   * broadcast column (loaded once per row); 32- and 64-bit */
  for (int wide = 0; wide < 2; wide++)
    for (int form = 0; form < 3; form++) {
      int64_t inner = wide ? (1ll << 30) + 64 : 64, sh3[3] = {3, 5, inner};
      int nd = form == 1 ? 3 : 2;
      int64_t *sh = nd == 3 ? sh3 : sh3 + 1;
      /* form 0: y (inner,) as rows; 1: y (3, 1, inner); 2: y (5, 1) as a column */
      int64_t rows2[2] = {0, it}, mid3[3] = {inner * it, 0, it}, col2[2] = {it, 0};
      const int64_t *yst = form == 0 ? rows2 : form == 1 ? mid3 : col2;
      uk_array xr = arr(0x10000, t, nd, sh, NULL), yr = arr(0x20000, t, nd, sh, yst);
      in[0] = uk_arg_array(&xr);
      in[1] = uk_arg_array(&yr);
      memset(&z, 0, sizeof z);
      char want[80];
      if (it < 16)
        snprintf(want, sizeof want, "rows, vectorised x%d, %s index, ndim %d", (int)(16 / it), wide ? "64-bit" : "32-bit",
                 nd);
      else
        snprintf(want, sizeof want, "rows, %s index, ndim %d", wide ? "64-bit" : "32-bit", nd);
      snprintf(label, sizeof label, "%s rows form %d %s", tn, form, wide ? "64" : "32");
      compile_call(k, in, 4, &z, 1, -1, want, label);
    }
  /* tiled: y transposed (32- and 64-bit index), z transposed, every operand transposed */
  for (int wide = 0; wide < 2; wide++) {
    int64_t sh[2] = {wide ? 65539 : 40, wide ? 32769 : 50}, tst[2] = {it, sh[0] * it};
    uk_array xt = arr(0x10000, t, 2, sh, NULL), yt = arr(0x20000, t, 2, sh, tst);
    in[0] = uk_arg_array(&xt);
    in[1] = uk_arg_array(&yt);
    memset(&z, 0, sizeof z);
    snprintf(label, sizeof label, "%s tiled %s", tn, wide ? "64" : "32");
    compile_call(k, in, 4, &z, 1, -1, wide ? "tiled 32x32, lanes along axis 1, 64-bit index" :
                                             "tiled 32x32, lanes along axis 1, 32-bit index", label);
    if (wide) continue;
    uk_array zt = arr(0x30000, t, 2, sh, tst);
    in[1] = uk_arg_array(&xt);
    snprintf(label, sizeof label, "%s tiled output", tn);
    compile_call(k, in, 4, &zt, 1, -1, "_uk_t_z(_uk_ty + 8 * _uk_q, _uk_tx);", label);
    in[0] = uk_arg_array(&yt);
    in[1] = uk_arg_array(&yt);
    snprintf(label, sizeof label, "%s tiled columns", tn);
    compile_call(k, in, 4, &zt, 1, -1, "lanes along axis 0", label);
  }
  uk_elementwise_destroy(k);
}

/* Kernels shaped like the golden ones: preamble, loop_prep, after_loop,
 * write-only and read outputs, raw views, size=, placeholders mixed with
 * fixed types. */
static void other_cases(void) {
  int64_t n1[] = {1000};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, n1, NULL), xd = arr(0x10000, UK_FLOAT64, 1, n1, NULL);
  uk_array zg = arr(0x30000, UK_FLOAT64, 1, n1, NULL), z;
  memset(&z, 0, sizeof z);
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.preamble = "__device__ float twice(float v) { return 2 * v; }";
  o.loop_prep = "float acc = 0";
  o.after_loop = "if (acc < 0) _raw_x[0] = acc;";
  uk_elementwise *k = NULL;
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&x)};
  o.in_params = "float32 x";
  o.out_params = "float32 z";
  o.operation = "acc += x; z = twice(x) + _raw_x.size()";
  o.name = "prep";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  compile_call(k, in, 1, &z, 1, -1, NULL, "prep_after");
  uk_elementwise_destroy(k);
  k = NULL;
  in[0] = uk_arg_array(&xd);
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){
          .in_params = "T x", .out_params = "T z", .operation = "z += x; z = z * _raw_z.size()", .name = "acc"},
      &k));
  compile_call(k, in, 1, &zg, 1, -1, "vectorised x2", "accumulate");
  /* the same into a 2-d output that is read, x a broadcast column: rows with vectors */
  int64_t s2[] = {7, 12}, col[] = {8, 0};
  uk_array x2 = arr(0x10000, UK_FLOAT64, 2, s2, col), z2 = arr(0x30000, UK_FLOAT64, 2, s2, NULL);
  in[0] = uk_arg_array(&x2);
  compile_call(k, in, 1, &z2, 1, -1, "ukern::vload<2>(&ukern::at(_uk_p_z, _uk_o_z) + _uk_c)", "accumulate rows");
  uk_elementwise_destroy(k);
  k = NULL;
  /* a raw 3-d non-contiguous view, indexed with an index array */
  int64_t s3[] = {2, 3, 4}, st3[] = {96, 32, 8};
  uk_array r3 = arr(0x10000, UK_FLOAT32, 3, s3, st3);
  in[0] = uk_arg_array(&r3);
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){.in_params = "raw T x",
                             .out_params = "T z",
                             .operation = "long long idx[3] = {i % 2, i % 3, i % 4}; z = x[idx] + x[i % x.size()] + "
                                          "x.shape()[0] + x.strides()[2]",
                             .name = "raw3"},
      &k));
  compile_call(k, in, 1, &z, 1, 100, "vectorised x4", "raw3");
  uk_elementwise_destroy(k);
  k = NULL;
  /* mixed placeholders and fixed types, half and bfloat16 with a float scalar */
  uk_array h = arr(0x10000, UK_FLOAT16, 1, n1, NULL), b = arr(0x20000, UK_BFLOAT16, 1, n1, NULL);
  in[0] = uk_arg_array(&h);
  in[1] = uk_arg_array(&b);
  uk_array zz[2];
  memset(zz, 0, sizeof zz);
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "T x, U y",
                                                        .out_params = "T a, float32 c",
                                                        .operation = "a = x * x; c = (float)x + (float)y",
                                                        .name = "two"},
                                 &k));
  compile_call(k, in, 2, zz, 2, -1, "vectorised x4", "two placeholders");
  uk_elementwise_destroy(k);
  k = NULL;
  /* a texture object read with tex1Dfetch; T comes from x, U binds nothing */
  in[0] = uk_arg_texture(0x1234);
  in[1] = uk_arg_array(&x);
  memset(&z, 0, sizeof z);
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "U t, T x",
                                                        .out_params = "T z",
                                                        .operation = "z = tex1Dfetch<float>(t, (int)i) * x",
                                                        .name = "tex"},
                                 &k));
  compile_call(k, in, 2, &z, 1, -1, "U t (uint64, texture object)", "texture");
  uk_elementwise_destroy(k);
}

/* Definitions written for CuPy (issue 23): what its kernels rely on compiles. */
static void cupy_cases(void) {
  int64_t n1[] = {1000}, s2[] = {3, 4}, d2[] = {5, 2};
  uk_array x = arr(0x10000, UK_FLOAT32, 1, n1, NULL), z;
  uk_array src = arr(0x10000, UK_FLOAT32, 2, s2, NULL), idx = arr(0x20000, UK_INT64, 2, s2, NULL);
  uk_array dst = arr(0x30000, UK_INT64, 2, d2, NULL);
  uk_elementwise_spec o;
  uk_elementwise *k = NULL;
  uk_arg in[3] = {uk_arg_array(&x), uk_arg_int(3), uk_arg_array(&x)};
  /* loop_prep: a brace initialiser with no ';' and state the operation updates */
  memset(&o, 0, sizeof o);
  o.loop_prep = "const double step { 1.0 / (_ind.size() - 1) }; double run { 0 }";
  o.after_loop = "(void)run";
  memset(&z, 0, sizeof z);
  o.in_params = "T x";
  o.out_params = "T z";
  o.operation = "z = x * step + run; run += 1";
  o.name = "cupy_prep";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  compile_call(k, in, 1, &z, 1, -1, "variant: contiguous", "cupy loop_prep");
  uk_elementwise_destroy(k);
  /* directives inside the operation; M_PI and thrust::complex as CuPy's kernels see them */
  CHECK_OK(uk_elementwise_create(
      ctx,
      &(uk_elementwise_spec){.in_params = "T x",
                             .out_params = "T z",
                             .operation = "#if __CUDA_ARCH__ >= 900\n  z = x * M_PI;\n#else\n  z = -x;\n#endif\n"
                                          "z += thrust::abs(thrust::complex<T>(x, 1))",
                             .name = "cupy_directives"},
      &k));
  memset(&z, 0, sizeof z);
  compile_call(k, in, 1, &z, 1, -1, "#include <cupy/carray.cuh>", "cupy directives");
  uk_elementwise_destroy(k);
  /* raw int32 given a scalar; an early return keeps the outputs by reference */
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "T x, raw int32 n",
                                                        .out_params = "T z",
                                                        .operation = "if (x < 0) return; z = x + n",
                                                        .name = "cupy_rawscalar"},
                                 &k));
  memset(&z, 0, sizeof z);
  compile_call(k, in, 2, &z, 1, -1, "T &z = _uk_p_z[_uk_j];", "cupy raw scalar");
  uk_elementwise_destroy(k);
  /* CArray and CIndexer members: CuPy's nonzero kernel, unmerged 2-d loop */
  memset(&o, 0, sizeof o);
  o.no_reduce_dims = 1;
  in[0] = uk_arg_array(&src);
  in[1] = uk_arg_array(&idx);
  uk_array out = dst;
  o.in_params = "T src, S index";
  o.out_params = "raw U dst";
  o.operation =
      "if (src != 0) {\n"
      "  for (int j = 0; j < _ind.ndim; j++) {\n"
      "    ptrdiff_t ind[] = {index - 1, j};\n"
      "    dst[ind] = _ind.get()[j];\n"
      "  }\n"
      "}\n"
      "using idx_t = decltype(dst)::index_t;\n"
      "const ptrdiff_t *sh = dst.shape(), *st = dst.strides();\n"
      "if (dst.ndim == 2 && !decltype(dst)::c_contiguous) dst[{(idx_t)0, (idx_t)1}] = sh[0] + st[1] + dst.size();";
  o.name = "cupy_nonzero";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  compile_call(k, in, 2, &out, 1, -1, "ukern::ew_indexer<2> _ind(_uk_size);", "cupy CArray/CIndexer");
  uk_elementwise_destroy(k);
  /* _non_const: the input is written back */
  in[0] = uk_arg_array(&x);
  CHECK_OK(uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "_non_const T x, T y",
                                                        .out_params = "T z",
                                                        .operation = "z = x; x = y",
                                                        .name = "cupy_nonconst"},
                                 &k));
  in[1] = uk_arg_array(&x);
  memset(&z, 0, sizeof z);
  compile_call(k, in, 2, &z, 1, -1, "_uk_p_x[_uk_j] = x;", "cupy _non_const");
  uk_elementwise_destroy(k);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_nvrtc_elementwise");
  double t0 = now_ms();
  for (int t = 0; t < UK_DTYPE_COUNT_; t++) dtype_cases((uk_dtype)t);
  other_cases();
  cupy_cases();
  printf("%d NVRTC compiles in %.0f ms (slowest %.1f ms)\n", compiles, now_ms() - t0, slowest_ms);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_elementwise");
}
