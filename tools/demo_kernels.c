/* The kernel part of `ukern demo`: an ElementwiseKernel (squared_diff) and a
 * ReductionKernel (l2norm along rows), CuPy's user-guide examples. Without a
 * GPU they are generated and compiled for the demo's arch (fake device
 * addresses: nothing is dereferenced); with one they run on random data and
 * every result is checked against the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Lines of generated source, and its banner line saying how it runs
 * ("// variant: ..." for elementwise, "// loops: ..." for reductions). */
static void describe_source(const char *what, const char *src, double ms, int compiled) {
  int lines = 0;
  for (const char *p = src; *p; p++) lines += *p == '\n';
  const char *v = strstr(src, "// variant: ");
  if (v) v += strlen("// variant: ");
  else if ((v = strstr(src, "// loops: "))) v += strlen("// loops: ");
  int vlen = 0;
  while (v && v[vlen] && v[vlen] != '\n') vlen++;
  printf("%-8s %d lines of CUDA (%.*s), %s in %.1f ms\n", what, lines, vlen, v ? v : "",
         compiled ? "compiled" : "found in the cache", ms);
}

static float *random_floats(size_t n, float lo, float hi) {
  float *p = malloc(n * sizeof *p);
  for (size_t i = 0; p && i < n; i++) p[i] = lo + (hi - lo) * (float)rand() / (float)RAND_MAX;
  return p;
}

static int check(const char *what, size_t bad, size_t n, double ms, double bytes) {
  printf("ran      %s: %.3f ms, %.0f GB/s, %s\n", what, ms, bytes / (ms * 1e6),
         bad ? "WRONG RESULTS" : "all results match the host");
  if (bad) fprintf(stderr, "ukern demo: %s: %zu of %zu results differ from the host\n", what, bad, n);
  return bad ? CLI_FAIL : CLI_OK;
}

static uk_status upload(uk_context *ctx, const float *h, int ndim, const int64_t *shape, uk_array *a) {
  uk_status s = uk_array_alloc(ctx, UK_FLOAT32, ndim, shape, 0, NULL, a);
  if (s == UK_OK) s = uk_memcpy_htod(a->data, h, (size_t)uk_array_size(a) * sizeof(float));
  return s;
}

int cli_demo_kernels(uk_context *ctx, int have_gpu, long long n) {
  /* The matrix views x's first rows * cols <= n elements (--n may be under 4096). */
  const int64_t rows = n < 4096 ? (n > 0 ? n : 1) : 4096, cols = n / rows > 1 ? n / rows : 1, flat = n,
                mat[2] = {rows, cols};
  uk_elementwise *sq = NULL;
  uk_reduction *l2 = NULL;
  uk_reduction_spec spec = {"T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm", NULL, NULL, NULL, 0, 0};
  float *hx = NULL, *hy = NULL, *hz = NULL;
  uk_array x = {0}, y = {0}, z = {0}, m = {0}, r = {0};
  char *src = NULL;
  int rc = CLI_FAIL;
  uk_status s;
  if ((s = uk_elementwise_create(ctx,
                                 &(uk_elementwise_spec){.in_params = "T x, T y",
                                                        .out_params = "T z",
                                                        .operation = "z = (x - y) * (x - y)",
                                                        .name = "squared_diff"},
                                 &sq)) != UK_OK ||
      (s = uk_reduction_create(ctx, &spec, &l2)) != UK_OK)
    return cli_fail("defining the demo kernels", s);
  int axis[1] = {1};
  uk_launch rl = {.axes = axis, .num_axes = 1};

  if (!have_gpu) { /* generate and compile: descriptors with fake, aligned addresses */
    uk_array_init(&x, 0x100000, UK_FLOAT32, 1, &flat);
    uk_array_init(&y, 0x200000, UK_FLOAT32, 1, &flat);
    uk_array_init(&m, 0x300000, UK_FLOAT32, 2, mat);
    uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)}, min[1] = {uk_arg_array(&m)};
    uk_cache_stats before, after;
    uk_context_cache_stats(ctx, &before);
    cli_progress_begin("compiling squared_diff");
    double t0 = cli_now_ms();
    s = uk_elementwise_precompile(sq, in, 2, &z, 1, NULL);
    double t1 = cli_now_ms();
    cli_progress_end();
    if (s != UK_OK || (s = uk_elementwise_source(sq, in, 2, &z, 1, NULL, &src)) != UK_OK) {
      rc = cli_fail("squared_diff", s);
      goto out;
    }
    uk_context_cache_stats(ctx, &after);
    describe_source("squared_diff", src, t1 - t0, after.compiles > before.compiles);
    before = after;
    uk_free(src);
    src = NULL;
    cli_progress_begin("compiling l2norm (CUB)");
    t0 = cli_now_ms();
    s = uk_reduction_precompile(l2, min, 1, &r, 1, &rl);
    t1 = cli_now_ms();
    cli_progress_end();
    if (s != UK_OK || (s = uk_reduction_source(l2, min, 1, &r, 1, &rl, &src)) != UK_OK) {
      rc = cli_fail("l2norm", s);
      goto out;
    }
    uk_context_cache_stats(ctx, &after);
    describe_source("l2norm", src, t1 - t0, after.compiles > before.compiles);
    rc = CLI_OK;
    goto out;
  }

  /* On the GPU: z = (x - y)^2 over n elements, then the L2 norm of each row of x. */
  srand(11);
  hx = random_floats((size_t)n, -1, 1);
  hy = random_floats((size_t)n, -1, 1);
  hz = malloc((size_t)n * sizeof *hz);
  if (!hx || !hy || !hz) {
    fprintf(stderr, "ukern demo: out of host memory\n");
    goto out;
  }
  if ((s = upload(ctx, hx, 1, &flat, &x)) != UK_OK || (s = upload(ctx, hy, 1, &flat, &y)) != UK_OK) {
    rc = cli_fail("device memory", s);
    goto out;
  }
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  double t0 = cli_now_ms();
  if ((s = uk_elementwise_call(sq, in, 2, &z, 1, NULL)) != UK_OK || (s = uk_device_synchronize()) != UK_OK) {
    rc = cli_fail("squared_diff", s);
    goto out;
  }
  double first = cli_now_ms() - t0;
  t0 = cli_now_ms();
  s = uk_elementwise_call(sq, in, 2, &z, 1, NULL);
  if (s == UK_OK) s = uk_device_synchronize();
  double ms = cli_now_ms() - t0;
  if (s != UK_OK || (s = uk_memcpy_dtoh(hz, z.data, (size_t)n * sizeof *hz)) != UK_OK) {
    rc = cli_fail("squared_diff", s);
    goto out;
  }
  size_t bad = 0;
  for (long long i = 0; i < n; i++) {
    double d = (double)hx[i] - hy[i];
    bad += fabs(hz[i] - d * d) > 1e-6 * (d * d) + 1e-12;
  }
  printf("         squared_diff first call %.1f ms (compile + run)\n", first);
  if ((rc = check("squared_diff", bad, (size_t)n, ms, 3.0 * (double)n * 4)) != CLI_OK) goto out;

  uk_array_init(&m, x.data, UK_FLOAT32, 2, mat); /* x viewed as rows x cols */
  m.device = x.device;
  uk_arg min[1] = {uk_arg_array(&m)};
  t0 = cli_now_ms();
  if ((s = uk_reduction_call(l2, min, 1, &r, 1, &rl)) != UK_OK || (s = uk_device_synchronize()) != UK_OK ||
      (s = uk_memcpy_dtoh(hz, r.data, (size_t)rows * sizeof *hz)) != UK_OK) {
    rc = cli_fail("l2norm", s);
    goto out;
  }
  ms = cli_now_ms() - t0;
  bad = 0;
  for (int64_t i = 0; i < rows; i++) {
    double acc = 0;
    for (int64_t j = 0; j < cols; j++) acc += (double)hx[i * cols + j] * hx[i * cols + j];
    bad += fabs(hz[i] - sqrt(acc)) > 1e-4 * sqrt(acc) + 1e-6;
  }
  rc = check("l2norm along rows (first call: compile + run)", bad, (size_t)rows, ms, (double)rows * (double)cols * 4);
out:
  uk_free(src);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_array_free(ctx, &r, NULL);
  free(hx);
  free(hy);
  free(hz);
  uk_reduction_destroy(l2);
  uk_elementwise_destroy(sq);
  return rc;
}
