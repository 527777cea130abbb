/* Code written for CuPy's ElementwiseKernel / ReductionKernel on a real GPU
 * (issue 23), against host references: state that loop_prep declares sees
 * one element per thread (contiguous and strided loops), an early return
 * keeps what was assigned before it, CuPy's nonzero kernel (CIndexer get(),
 * ndim; CArray indexing by an index array), a raw parameter given a scalar,
 * size= with an allocated non-raw output, _non_const inputs written back,
 * directives in the operation, and CuPy's first_nonzero reduction (an
 * identity naming a parameter, _j). Outputs are poisoned first. */
#include "testutil.h"

static uk_context *ctx;

static uk_array dev(uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, t, ndim, shape, 0, NULL, &a));
  return a;
}

static void *down(uint64_t ptr, size_t bytes) {
  void *h = malloc(bytes ? bytes : 1);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, ptr, bytes));
  return h;
}

static void poison(uint64_t ptr, size_t bytes) {
  unsigned char *h = malloc(bytes);
  memset(h, 0xA5, bytes);
  CHECK_OK(uk_memcpy_htod(ptr, h, bytes));
  free(h);
}

static uk_array up_f32(const float *h, int64_t n) {
  uk_array a = dev(UK_FLOAT32, 1, &n);
  CHECK_OK(uk_memcpy_htod(a.data, h, (size_t)n * 4));
  return a;
}

static float *rand_f32(int64_t n) {
  float *h = malloc((size_t)n * 4);
  for (int64_t k = 0; k < n; k++) h[k] = (float)ut_uniform(-2.0, 2.0);
  return h;
}

static uk_elementwise *make(const char *in, const char *out, const char *op, const uk_elementwise_spec *o) {
  uk_elementwise *k = NULL;
  uk_elementwise_spec s = {0};
  if (o) s = *o;
  s.in_params = in;
  s.out_params = out;
  s.operation = op;
  s.name = "cupy_case";
  CHECK_OK(uk_elementwise_create(ctx, &s, &k));
  return k;
}

/* loop_prep state: CuPy's one element per thread gives run == 0 at every element. */
static void loop_prep_state(void) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.loop_prep = "T run { 0 }"; /* a brace initialiser, no ';' */
  o.after_loop = "(void)run";
  uk_elementwise *k = make("T x", "T y", "y = x + run; run += 1", &o);
  const int64_t n = 1000003;
  float *hx = rand_f32(2 * n);
  uk_array x = up_f32(hx, 2 * n);
  for (int strided = 0; strided < 2; strided++) {
    uk_array xv = x; /* every element, or every other one (a strided loop) */
    xv.shape[0] = strided ? n : 2 * n;
    xv.strides[0] = strided ? 8 : 4;
    uk_array y = dev(UK_FLOAT32, 1, xv.shape);
    poison(y.data, (size_t)xv.shape[0] * 4);
    uk_arg in[1] = {uk_arg_array(&xv)};
    CHECK_OK(uk_elementwise_call(k, in, 1, &y, 1, NULL));
    float *hy = down(y.data, (size_t)xv.shape[0] * 4);
    int64_t bad = 0;
    for (int64_t j = 0; j < xv.shape[0]; j++) bad += hy[j] != hx[strided ? 2 * j : j];
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "loop_prep state (%s): %lld elements differ\n", strided ? "strided" : "contiguous",
                     (long long)bad);
    free(hy);
    uk_array_free(ctx, &y, NULL);
  }
  uk_array_free(ctx, &x, NULL);
  free(hx);
  uk_elementwise_destroy(k);
}

/* An early return keeps the assignment before it; a directive chooses the branch. */
static void early_return_and_directives(void) {
  uk_elementwise *k = make("T x", "T y",
                           "y = -7;\n"
                           "#if defined(__CUDA_ARCH__)\n"
                           "if (x > 0) return;\n"
                           "#endif\n"
                           "y = x", NULL);
  const int64_t n = 4099;
  float *hx = rand_f32(n);
  uk_array x = up_f32(hx, n), y = dev(UK_FLOAT32, 1, &n);
  poison(y.data, (size_t)n * 4);
  uk_arg in[1] = {uk_arg_array(&x)};
  CHECK_OK(uk_elementwise_call(k, in, 1, &y, 1, NULL));
  float *hy = down(y.data, (size_t)n * 4);
  int64_t bad = 0;
  for (int64_t j = 0; j < n; j++) bad += hy[j] != (hx[j] > 0 ? -7.0f : hx[j]);
  CHECK(bad == 0);
  free(hy);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  free(hx);
  uk_elementwise_destroy(k);
}

/* CuPy's nonzero kernel (cupy/_core/_routines_indexing.pyx, v14.2.0). */
static void nonzero(void) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.no_reduce_dims = 1;
  uk_elementwise *k = make("T src, S index", "raw U dst",
                           "if (src != 0){\n"
                           "    for(int j = 0; j < _ind.ndim; j++){\n"
                           "        ptrdiff_t ind[] = {index - 1, j};\n"
                           "        dst[ind] = _ind.get()[j];\n"
                           "    }\n"
                           "}",
                           &o);
  int64_t sh[2] = {37, 41}, n = sh[0] * sh[1];
  float *hs = malloc((size_t)n * 4);
  int64_t *hi = malloc((size_t)n * 8), count = 0;
  for (int64_t j = 0; j < n; j++) {
    hs[j] = ut_uniform(0, 1) < 0.3 ? (float)ut_uniform(0.5, 2.0) : 0.0f;
    count += hs[j] != 0;
    hi[j] = count;
  }
  uk_array src = dev(UK_FLOAT32, 2, sh), idx = dev(UK_INT64, 2, sh);
  CHECK_OK(uk_memcpy_htod(src.data, hs, (size_t)n * 4));
  CHECK_OK(uk_memcpy_htod(idx.data, hi, (size_t)n * 8));
  int64_t dsh[2] = {count, 2};
  uk_array dst = dev(UK_INT64, 2, dsh);
  poison(dst.data, (size_t)count * 16);
  uk_arg in[2] = {uk_arg_array(&src), uk_arg_array(&idx)};
  CHECK_OK(uk_elementwise_call(k, in, 2, &dst, 1, NULL));
  int64_t *hd = down(dst.data, (size_t)count * 16), bad = 0, m = 0;
  for (int64_t j = 0; j < n; j++)
    if (hs[j] != 0) {
      bad += hd[2 * m] != j / sh[1] || hd[2 * m + 1] != j % sh[1];
      m++;
    }
  CHECK(bad == 0 && m == count);
  free(hd);
  free(hs);
  free(hi);
  uk_array_free(ctx, &src, NULL);
  uk_array_free(ctx, &idx, NULL);
  uk_array_free(ctx, &dst, NULL);
  uk_elementwise_destroy(k);
}

/* raw int32 given a scalar; size= with an allocated non-raw output; _non_const written back. */
static void scalars_size_non_const(void) {
  const int64_t n = 5;
  float hx[5] = {1.5f, -2.0f, 3.25f, 0.5f, -1.0f};
  uk_array x = up_f32(hx, n), y;
  memset(&y, 0, sizeof y);
  uk_elementwise *k = make("raw T x, raw int32 m", "T y", "y = x[i % x.size()] * m", NULL);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_int(3)};
  uk_launch l = {.size = 12};
  CHECK_OK(uk_elementwise_call(k, in, 2, &y, 1, &l));
  CHECK(y.ndim == 1 && y.shape[0] == 12 && y.dtype == UK_FLOAT32);
  if (y.data) {
    float *hy = down(y.data, 12 * 4);
    int bad = 0;
    for (int j = 0; j < 12; j++) bad += hy[j] != hx[j % 5] * 3;
    CHECK(bad == 0);
    free(hy);
    uk_array_free(ctx, &y, NULL);
  }
  uk_elementwise_destroy(k);
  k = make("_non_const T x", "T y", "y = x; x = x * 2", NULL);
  memset(&y, 0, sizeof y);
  in[0] = uk_arg_array(&x);
  CHECK_OK(uk_elementwise_call(k, in, 1, &y, 1, NULL));
  float *hy = down(y.data, (size_t)n * 4), *hx2 = down(x.data, (size_t)n * 4);
  int bad = 0;
  for (int j = 0; j < n; j++) bad += hy[j] != hx[j] || hx2[j] != 2 * hx[j];
  CHECK(bad == 0);
  free(hy);
  free(hx2);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &x, NULL);
  uk_elementwise_destroy(k);
}

/* CuPy's first_nonzero (cupy/_manipulation/add_remove.py, v14.2.0) over rows and columns. */
static void first_nonzero(void) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T data, int64 len";
  s.out_params = "int64 y";
  s.map_expr = "data == T(0) ? len : _j";
  s.reduce_expr = "min(a, b)";
  s.post_map_expr = "y = a";
  s.identity = "len";
  s.name = "first_nonzero";
  uk_reduction *r = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &r));
  int64_t sh[2] = {37, 53}, n = sh[0] * sh[1];
  float *h = malloc((size_t)n * 4);
  for (int64_t j = 0; j < n; j++) h[j] = ut_uniform(0, 1) < 0.05 ? 1.0f : 0.0f;
  for (int64_t c = 0; c < sh[1]; c++) h[3 * sh[1] + c] = 0; /* row 3: nothing, the identity */
  uk_array x = dev(UK_FLOAT32, 2, sh);
  CHECK_OK(uk_memcpy_htod(x.data, h, (size_t)n * 4));
  for (int axis = 0; axis < 2; axis++) {
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_int(n)};
    uk_launch l;
    memset(&l, 0, sizeof l);
    l.axes = &axis;
    l.num_axes = 1;
    uk_array y;
    memset(&y, 0, sizeof y);
    CHECK_OK(uk_reduction_call(r, in, 2, &y, 1, &l));
    int64_t nout = sh[1 - axis], nred = sh[axis], bad = 0;
    int64_t *hy = down(y.data, (size_t)nout * 8);
    for (int64_t o = 0; o < nout; o++) {
      int64_t want = n; /* CuPy's _j: reduced index * outputs + output index */
      for (int64_t q = 0; q < nred && want == n; q++) {
        int64_t row = axis == 0 ? q : o, col = axis == 0 ? o : q;
        if (h[row * sh[1] + col] != 0) want = q * nout + o;
      }
      bad += hy[o] != want;
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "first_nonzero axis %d: %lld outputs differ\n", axis, (long long)bad);
    free(hy);
    uk_array_free(ctx, &y, NULL);
  }
  uk_array_free(ctx, &x, NULL);
  free(h);
  uk_reduction_destroy(r);
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_cupy_ew");
  loop_prep_state();
  early_return_and_directives();
  nonzero();
  scalars_size_non_const();
  first_nonzero();
  CHECK_OK(uk_device_synchronize());
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_cupy_ew");
}
