/* Raw modules on a GPU: CuPy's RawKernel / RawModule user-guide examples in
 * C, plus attributes, dynamic shared memory, cooperative launches, argument
 * checks, timing, and modules from cubin images and files. Random non-zero
 * inputs, poisoned outputs, host references in double precision. */
#include <complex.h>
#include <math.h>

#include "runtime/cudadrv.h"
#include "testutil.h"

static uk_context *ctx;

static uk_array dev_array(uk_dtype t, int64_t n) {
  uk_array a;
  memset(&a, 0, sizeof a);
  CHECK_OK(uk_array_alloc(ctx, t, 1, &n, 0, NULL, &a));
  return a;
}

static size_t nbytes(const uk_array *a) { return (size_t)uk_array_size(a) * uk_dtype_size(a->dtype); }

/* All bits set: NaN for floats, -1 for integers. */
static void poison(uk_array *a) {
  size_t n = nbytes(a);
  unsigned char *p = malloc(n);
  memset(p, 0xff, n);
  CHECK_OK(uk_memcpy_htod(a->data, p, n));
  free(p);
}

static float *random_floats(int64_t n) {
  float *p = malloc((size_t)n * sizeof *p);
  for (int64_t i = 0; i < n; i++) p[i] = (float)ut_uniform(-1, 1);
  return p;
}

static uk_module *compile(const char *src, int nexpr, const char *const *exprs) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.name_expressions = exprs;
  mo.num_name_expressions = nexpr;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  return m;
}

static unsigned blocks_for(int64_t n, unsigned block) { return (unsigned)((n + block - 1) / block); }

/* ---- vector add (RawKernel) ----------------------------------------------- */

static const char *vec_add_src =
    "extern \"C\" __global__ void vec_add(const float* a, const float* b, float* c, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) c[i] = a[i] + b[i];\n"
    "}\n";

/* Runs vec_add from module m on n random elements and checks every one. */
static void run_vec_add(uk_module *m, void *stream, const char *what) {
  int n = 1000003;
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "vec_add", &f));
  if (!f) return;
  float *a = random_floats(n), *b = random_floats(n), *c = malloc((size_t)n * sizeof *c);
  uk_array da = dev_array(UK_FLOAT32, n), db = dev_array(UK_FLOAT32, n), dc = dev_array(UK_FLOAT32, n);
  CHECK_OK(uk_memcpy_htod(da.data, a, nbytes(&da)));
  CHECK_OK(uk_memcpy_htod(db.data, b, nbytes(&db)));
  poison(&dc);
  /* Pageable copies may still be in flight for a non-blocking stream. */
  if (stream) CHECK_OK(uk_device_synchronize());
  void *args[] = {&da.data, &db.data, &dc.data, &n};
  uk_grid_launch g = {{blocks_for(n, 256), 1, 1}, {256, 1, 1}, 0, stream, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  if (stream) CHECK_OK(uk__cu_check(uk__cu.cuStreamSynchronize((CUstream)stream), "sync"));
  CHECK_OK(uk_memcpy_dtoh(c, dc.data, nbytes(&dc)));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += c[i] != (float)((double)a[i] + (double)b[i]);
  if (bad) fprintf(stderr, "vec_add (%s): %d wrong elements\n", what, bad);
  CHECK(bad == 0);
  uk_array_free(ctx, &da, NULL);
  uk_array_free(ctx, &db, NULL);
  uk_array_free(ctx, &dc, NULL);
  free(a);
  free(b);
  free(c);
}

static void test_vec_add(void) {
  uk_module *m = compile(vec_add_src, 0, NULL);
  run_vec_add(m, NULL, "plain");
  uk_function *f = NULL, *f2 = NULL;
  CHECK_OK(uk_module_function(m, "vec_add", &f));
  CHECK_OK(uk_module_function(m, "vec_add", &f2));
  CHECK(f && f == f2);
  /* The same through a declared signature (packed buffer). */
  CHECK_OK(uk_function_set_signature(f, "const float* a, const float* b, float* c, int n"));
  run_vec_add(m, NULL, "signature");
  /* And on a stream of the primary context. */
  CHECK_OK(uk_device_set_current(0));
  CUstream s = NULL;
  CHECK_OK(uk__cu_check(uk__cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate"));
  run_vec_add(m, s, "stream");
  uk__cu.cuStreamDestroy(s);
  uk_module_destroy(m);
}

/* ---- a module with two kernels (RawModule) ---------------------------------- */

static void test_two_kernels(void) {
  const char *src =
      "extern \"C\" __global__ void scale(const float* x, float* y, float a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i];\n"
      "}\n"
      "extern \"C\" __global__ void add_offset(float* y, float b, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] += b;\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uk_function *fs = NULL, *fo = NULL, *none = NULL;
  CHECK_OK(uk_module_function(m, "scale", &fs));
  CHECK_OK(uk_module_function(m, "add_offset", &fo));
  CHECK(fs && fo && fs != fo);
  CHECK_STATUS(uk_module_function(m, "nope", &none), UK_ERR_NOT_FOUND);
  CHECK(none == NULL);
  CHECK_CONTAINS(uk_last_error(), "no kernel 'nope' in module (kernels: ");
  CHECK_CONTAINS(uk_last_error(), "scale");
  CHECK_CONTAINS(uk_last_error(), "add_offset");
  if (!fs || !fo) return;

  int n = 4099;
  float a = 2.5f, b = -0.75f;
  float *x = random_floats(n), *y = malloc((size_t)n * sizeof *y);
  uk_array dx = dev_array(UK_FLOAT32, n), dy = dev_array(UK_FLOAT32, n);
  CHECK_OK(uk_memcpy_htod(dx.data, x, nbytes(&dx)));
  poison(&dy);
  uk_grid_launch g = {{blocks_for(n, 128), 1, 1}, {128, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  void *args1[] = {&dx.data, &dy.data, &a, &n};
  void *args2[] = {&dy.data, &b, &n};
  CHECK_OK(uk_function_launch(fs, &g, args1));
  CHECK_OK(uk_function_launch(fo, &g, args2));
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, nbytes(&dy)));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += fabs(y[i] - ((double)a * x[i] + b)) > 1e-6;
  CHECK(bad == 0);
  uk_array_free(ctx, &dx, NULL);
  uk_array_free(ctx, &dy, NULL);
  free(x);
  free(y);
  uk_module_destroy(m);
}

/* ---- template kernels through name expressions ------------------------------ */

static void test_templates(void) {
  const char *src =
      "template <typename T>\n"
      "__global__ void my_kernel(const T* x, T* y, T a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i] + T(1);\n"
      "}\n";
  const char *exprs[] = {"my_kernel<float>", "my_kernel<double>"};
  uk_module *m = compile(src, 2, exprs);
  uk_function *ff = NULL, *fd = NULL;
  CHECK_OK(uk_module_function(m, "my_kernel<float>", &ff));
  CHECK_OK(uk_module_function(m, "my_kernel<double>", &fd));
  CHECK(ff && fd && ff != fd);
  if (!ff || !fd) return;
  /* The lowered name reaches the same function. */
  const char *lowered = NULL;
  uk_function *ff2 = NULL;
  CHECK_OK(uk_module_lowered_name(m, "my_kernel<float>", &lowered));
  CHECK_OK(uk_module_function(m, lowered, &ff2));
  CHECK(ff2 == ff);

  int n = 777;
  float af = 1.5f;
  double ad = -3.25;
  float *xf = random_floats(n), *yf = malloc((size_t)n * sizeof *yf);
  double *xd = malloc((size_t)n * sizeof *xd), *yd = malloc((size_t)n * sizeof *yd);
  for (int i = 0; i < n; i++) xd[i] = ut_uniform(-10, 10);
  uk_array dxf = dev_array(UK_FLOAT32, n), dyf = dev_array(UK_FLOAT32, n);
  uk_array dxd = dev_array(UK_FLOAT64, n), dyd = dev_array(UK_FLOAT64, n);
  CHECK_OK(uk_memcpy_htod(dxf.data, xf, nbytes(&dxf)));
  CHECK_OK(uk_memcpy_htod(dxd.data, xd, nbytes(&dxd)));
  poison(&dyf);
  poison(&dyd);
  uk_grid_launch g = {{blocks_for(n, 64), 1, 1}, {64, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  void *argf[] = {&dxf.data, &dyf.data, &af, &n};
  void *argd[] = {&dxd.data, &dyd.data, &ad, &n};
  CHECK_OK(uk_function_launch(ff, &g, argf));
  CHECK_OK(uk_function_launch(fd, &g, argd));
  CHECK_OK(uk_memcpy_dtoh(yf, dyf.data, nbytes(&dyf)));
  CHECK_OK(uk_memcpy_dtoh(yd, dyd.data, nbytes(&dyd)));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    bad += fabs(yf[i] - ((double)af * xf[i] + 1)) > 1e-6;
    /* NVRTC contracts a * x + 1 into one fma: allow the rounding difference */
    bad += fabs(yd[i] - (ad * xd[i] + 1.0)) > 1e-14 * (fabs(ad * xd[i]) + 1.0);
  }
  CHECK(bad == 0);
  uk_array_free(ctx, &dxf, NULL);
  uk_array_free(ctx, &dyf, NULL);
  uk_array_free(ctx, &dxd, NULL);
  uk_array_free(ctx, &dyd, NULL);
  free(xf);
  free(yf);
  free(xd);
  free(yd);
  uk_module_destroy(m);
}

/* ---- __constant__ memory through its global address ------------------------- */

static void test_constant(void) {
  const char *src =
      "__constant__ float coef[4];\n"
      "__device__ int calls;\n"
      "extern \"C\" __global__ void poly(const float* x, float* y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = coef[0] + x[i] * (coef[1] + x[i] * (coef[2] + x[i] * coef[3]));\n"
      "  if (i == 0) calls += 1;\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uint64_t pc = 0, pcalls = 0;
  size_t bc = 0, bcalls = 0;
  CHECK_OK(uk_module_global(m, "coef", &pc, &bc));
  CHECK(pc != 0 && bc == 16);
  CHECK_OK(uk_module_global_on(m, 0, "calls", &pcalls, &bcalls));
  CHECK(pcalls != 0 && bcalls == 4);
  uint64_t p = 0;
  CHECK_STATUS(uk_module_global(m, "missing", &p, NULL), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "'missing'");
  float coef[4] = {0.5f, -1.25f, 2.0f, 0.75f};
  int zero = 0;
  CHECK_OK(uk_memcpy_htod(pc, coef, sizeof coef));
  CHECK_OK(uk_memcpy_htod(pcalls, &zero, sizeof zero));

  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "poly", &f));
  int n = 10007;
  float *x = random_floats(n), *y = malloc((size_t)n * sizeof *y);
  uk_array dx = dev_array(UK_FLOAT32, n), dy = dev_array(UK_FLOAT32, n);
  CHECK_OK(uk_memcpy_htod(dx.data, x, nbytes(&dx)));
  poison(&dy);
  void *args[] = {&dx.data, &dy.data, &n};
  uk_grid_launch g = {{blocks_for(n, 256), 1, 1}, {256, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, nbytes(&dy)));
  int calls = 0;
  CHECK_OK(uk_memcpy_dtoh(&calls, pcalls, sizeof calls));
  CHECK(calls == 2);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double v = x[i], want = coef[0] + v * (coef[1] + v * (coef[2] + v * coef[3]));
    bad += fabs(y[i] - want) > 1e-5 * (1 + fabs(want));
  }
  CHECK(bad == 0);
  uk_array_free(ctx, &dx, NULL);
  uk_array_free(ctx, &dy, NULL);
  free(x);
  free(y);
  uk_module_destroy(m);
}

/* ---- ukern::complex<float> ------------------------------------------------ */

static void test_complex(void) {
  const char *src =
      "#include <ukern/complex.cuh>\n"
      "using ukern::complex;\n"
      "extern \"C\" __global__ void cx(const complex<float>* a, const complex<float>* b,\n"
      "                                complex<float>* y, float* r, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i >= n) return;\n"
      "  complex<float> p = a[i], q = b[i];\n"
      "  y[i] = p * q + exp(p) / conj(q) - sqrt(q) * 2.0f + pow(p, 2.0f) - 1.0f / q;\n"
      "  r[i] = abs(p) + arg(q) + norm(p);\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "cx", &f));
  if (!f) return;
  CHECK_OK(uk_function_set_signature(f, "const complex<float>* a, const complex<float>* b, "
                                        "complex<float>* y, float* r, int n"));
  int n = 5003;
  float *a = random_floats(2 * n), *b = random_floats(2 * n);
  float *y = malloc((size_t)n * 2 * sizeof *y), *r = malloc((size_t)n * sizeof *r);
  uk_array da = dev_array(UK_COMPLEX64, n), db = dev_array(UK_COMPLEX64, n);
  uk_array dy = dev_array(UK_COMPLEX64, n), dr = dev_array(UK_FLOAT32, n);
  CHECK_OK(uk_memcpy_htod(da.data, a, nbytes(&da)));
  CHECK_OK(uk_memcpy_htod(db.data, b, nbytes(&db)));
  poison(&dy);
  poison(&dr);
  void *args[] = {&da.data, &db.data, &dy.data, &dr.data, &n};
  uk_grid_launch g = {{blocks_for(n, 128), 1, 1}, {128, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, nbytes(&dy)));
  CHECK_OK(uk_memcpy_dtoh(r, dr.data, nbytes(&dr)));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double complex p = a[2 * i] + I * a[2 * i + 1], q = b[2 * i] + I * b[2 * i + 1];
    double complex want = p * q + cexp(p) / conj(q) - csqrt(q) * 2.0 + cpow(p, 2.0) - 1.0 / q;
    double complex got = y[2 * i] + I * y[2 * i + 1];
    /* Float rounding is relative to the largest term, not to the sum. */
    double scale = cabs(p * q) + cabs(cexp(p) / conj(q)) + 2 * cabs(csqrt(q)) + cabs(p * p) +
                   1 / cabs(q);
    bad += cabs(got - want) > 1e-5 * (1 + scale);
    double wr = cabs(p) + carg(q) + creal(p * conj(p));
    bad += fabs(r[i] - wr) > 1e-5 * (1 + fabs(wr));
  }
  if (bad) fprintf(stderr, "complex: %d wrong values\n", bad);
  CHECK(bad == 0);
  uk_array_free(ctx, &da, NULL);
  uk_array_free(ctx, &db, NULL);
  uk_array_free(ctx, &dy, NULL);
  uk_array_free(ctx, &dr, NULL);
  free(a);
  free(b);
  free(y);
  free(r);
  uk_module_destroy(m);
}

/* ---- attributes and 100 KB of dynamic shared memory ------------------------- */

static void test_attributes(void) {
  const char *src =
      "extern \"C\" __global__ void rev(const float* x, float* y, int m) {\n"
      "  extern __shared__ float s[];\n"
      "  for (int j = threadIdx.x; j < m; j += blockDim.x) s[j] = x[j];\n"
      "  __syncthreads();\n"
      "  for (int j = threadIdx.x; j < m; j += blockDim.x) y[j] = s[m - 1 - j];\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "rev", &f));
  if (!f) return;
  int regs = -1, maxt = -1, ptx = -1, bin = -1;
  CHECK_OK(uk_function_attribute(f, UK_ATTR_NUM_REGS, &regs));
  CHECK_OK(uk_function_attribute(f, UK_ATTR_MAX_THREADS_PER_BLOCK, &maxt));
  CHECK_OK(uk_function_attribute(f, UK_ATTR_PTX_VERSION, &ptx));
  CHECK_OK(uk_function_attribute(f, UK_ATTR_BINARY_VERSION, &bin));
  CHECK(regs > 0 && maxt > 0 && maxt <= 1024);
  CHECK(bin >= 90);
  CHECK_STREQ(uk_function_attr_name(UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES),
              "max_dynamic_shared_size_bytes");
  CHECK_STREQ(uk_function_attr_name(UK_ATTR_NUM_REGS), "num_regs");
  CHECK(uk_function_attr_name(UK_ATTR_COUNT_) == NULL);
  CHECK_STATUS(uk_function_set_attribute(f, UK_ATTR_NUM_REGS, 32), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "num_regs is read-only");

  int count = 100 * 1024 / 4;
  float *x = random_floats(count), *y = malloc((size_t)count * sizeof *y);
  uk_array dx = dev_array(UK_FLOAT32, count), dy = dev_array(UK_FLOAT32, count);
  CHECK_OK(uk_memcpy_htod(dx.data, x, nbytes(&dx)));
  void *args[] = {&dx.data, &dy.data, &count};
  uk_grid_launch g = {{1, 1, 1}, {256, 1, 1}, 100 * 1024, NULL, 0, {0, 0, 0}};
  /* Above 48 KB the kernel must opt in first. */
  CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_CUDA);
  CHECK_CONTAINS(uk_last_error(), "launching 'rev'");
  CHECK_OK(uk_function_set_attribute(f, UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024));
  int got = 0;
  CHECK_OK(uk_function_attribute(f, UK_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, &got));
  CHECK(got == 100 * 1024);
  CHECK_OK(uk_function_set_attribute(f, UK_ATTR_PREFERRED_SHARED_MEMORY_CARVEOUT, 100));
  poison(&dy);
  CHECK_OK(uk_function_launch(f, &g, args));
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, nbytes(&dy)));
  int bad = 0;
  for (int j = 0; j < count; j++) bad += y[j] != x[count - 1 - j];
  CHECK(bad == 0);
  uk_array_free(ctx, &dx, NULL);
  uk_array_free(ctx, &dy, NULL);
  free(x);
  free(y);
  uk_module_destroy(m);
}

/* ---- cooperative launch with a grid-wide barrier ---------------------------- */

static void test_cooperative(void) {
  const char *src =
      "#include <cooperative_groups.h>\n"
      "extern \"C\" __global__ void ring(int* buf, int* out, int salt) {\n"
      "  namespace cg = cooperative_groups;\n"
      "  cg::grid_group grid = cg::this_grid();\n"
      "  if (threadIdx.x == 0) buf[blockIdx.x] = (int)blockIdx.x * 7 + salt;\n"
      "  grid.sync();\n"
      "  if (threadIdx.x == 0) out[blockIdx.x] = buf[(blockIdx.x + 1) % gridDim.x];\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "ring", &f));
  if (!f) return;
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  int nb = info.multiprocessors;
  uk_array dbuf = dev_array(UK_INT32, nb), dout = dev_array(UK_INT32, nb);
  int *out = malloc((size_t)nb * sizeof *out);
  for (int pass = 0; pass < 2; pass++) {
    /* Pass 1 packs through a declared signature. */
    if (pass == 1) CHECK_OK(uk_function_set_signature(f, "int* buf, int* out, int salt"));
    int salt = 1000 + pass * 17;
    poison(&dbuf);
    poison(&dout);
    void *args[] = {&dbuf.data, &dout.data, &salt};
    uk_grid_launch g = {{(unsigned)nb, 1, 1}, {128, 1, 1}, 0, NULL, 1, {0, 0, 0}};
    CHECK_OK(uk_function_launch(f, &g, args));
    CHECK_OK(uk_memcpy_dtoh(out, dout.data, nbytes(&dout)));
    int bad = 0;
    for (int b = 0; b < nb; b++) bad += out[b] != ((b + 1) % nb) * 7 + salt;
    CHECK(bad == 0);
  }
  uk_array_free(ctx, &dbuf, NULL);
  uk_array_free(ctx, &dout, NULL);
  free(out);
  uk_module_destroy(m);
}

/* ---- signatures that do not match the kernel are refused -------------------- */

static void test_wrong_arguments(void) {
  const char *src =
      "extern \"C\" __global__ void axpy_idx(float* y, double a, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = (float)(a * i);\n"
      "}\n";
  uk_module *m = compile(src, 0, NULL);
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "axpy_idx", &f));
  if (!f) return;
  int n = 1000;
  double a = 0.5;
  uk_array dy = dev_array(UK_FLOAT32, n);
  void *args[] = {&dy.data, &a, &n};
  uk_grid_launch g = {{blocks_for(n, 128), 1, 1}, {128, 1, 1}, 0, NULL, 0, {0, 0, 0}};

  CHECK_OK(uk_function_set_signature(f, "float* y, double a"));
  CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "axpy_idx");
  CHECK_CONTAINS(uk_last_error(), "3 parameters");
  CHECK_CONTAINS(uk_last_error(), "declares 2");

  CHECK_OK(uk_function_set_signature(f, "float* y, float a, int n"));
  CHECK_STATUS(uk_function_launch(f, &g, args), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "parameter 'a' (float)");

  CHECK_STATUS(uk_function_set_signature(f, "float* y double a"), UK_ERR_SYNTAX);

  CHECK_OK(uk_function_set_signature(f, "float* y, double a, int n"));
  poison(&dy);
  CHECK_OK(uk_function_launch(f, &g, args));
  float *y = malloc((size_t)n * sizeof *y);
  CHECK_OK(uk_memcpy_dtoh(y, dy.data, nbytes(&dy)));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += y[i] != (float)(a * i);
  CHECK(bad == 0);

  float ms = -1;
  CHECK_OK(uk_function_launch_timed(f, &g, args, &ms));
  CHECK(ms > 0 && ms < 1000);
  uk_array_free(ctx, &dy, NULL);
  free(y);
  uk_module_destroy(m);
}

/* ---- modules from a cubin image and from a .cubin file ---------------------- */

static void test_images(void) {
  uk_module *m = compile(vec_add_src, 0, NULL);
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  uk_module *mi = NULL, *mf = NULL;
  CHECK_OK(uk_module_from_image(ctx, image, bytes, &mi));
  if (mi) run_vec_add(mi, NULL, "image");

  char *dir = ut_temp_dir("cubin");
  char path[4200];
  snprintf(path, sizeof path, "%s/vec_add.cubin", dir ? dir : "/tmp");
  FILE *fp = fopen(path, "wb");
  CHECK(fp != NULL);
  if (fp) {
    CHECK(fwrite(image, 1, bytes, fp) == bytes);
    fclose(fp);
  }
  CHECK_OK(uk_module_from_file(ctx, path, &mf));
  if (mf) run_vec_add(mf, NULL, "file");

  char missing[4300];
  snprintf(missing, sizeof missing, "%s/missing.cubin", dir ? dir : "/tmp");
  uk_module *mm = NULL;
  CHECK_STATUS(uk_module_from_file(ctx, missing, &mm), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), missing);
  CHECK_CONTAINS(uk_last_error(), "No such file");
  CHECK_STATUS(uk_module_from_image(ctx, "not a module", 12, &mm), UK_ERR_INVALID);
  CHECK(mm == NULL);

  uk_module_destroy(mf);
  uk_module_destroy(mi);
  uk_module_destroy(m);
  free(dir);
}

int main(void) {
  ut_require_gpu();
  ut_seed(20261121);
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_module");
  test_vec_add();
  test_two_kernels();
  test_templates();
  test_constant();
  test_complex();
  test_attributes();
  test_cooperative();
  test_wrong_arguments();
  test_images();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_module");
}
