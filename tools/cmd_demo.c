/* ukern demo: the main job in miniature. Compiles a raw module with NVRTC
 * (for the local GPU, or for --arch when there is none), shows the cache at
 * work, and with a GPU runs the kernel and checks it against the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static const char help[] =
    "usage: ukern demo [--arch N] [--n ELEMENTS]\n"
    "Compiles a small module (a vector add and a kernel template instantiated for\n"
    "float and double), then compiles it again to show the memory cache and in a\n"
    "second context (as a new process would) to show the disk cache; then an\n"
    "ElementwiseKernel (squared_diff) and a ReductionKernel (l2norm along rows).\n"
    "With a GPU it runs all three on random data, checks every result against the\n"
    "host and prints the times. Without one it generates and compiles them for\n"
    "--arch (default 90, i.e. sm_90) and stops there.\n";

static const char source[] =
    "#include <ukern/complex.cuh>\n"
    "extern \"C\" __global__ void vector_add(const float* x, const float* y, float* z, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) z[i] = x[i] + y[i];\n"
    "}\n"
    "template <typename T> __global__ void scale(T* x, T a, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int run_on_gpu(uk_context *ctx, uk_module *m, long long n) {
  uk_function *f = NULL;
  uk_status s = uk_module_function(m, "vector_add", &f);
  if (s == UK_OK) s = uk_function_set_signature(f, "const float* x, const float* y, float* z, long long n");
  if (s != UK_OK) return cli_fail("vector_add", s);
  size_t bytes = (size_t)n * sizeof(float);
  float *hx = malloc(bytes), *hy = malloc(bytes), *hz = malloc(bytes);
  uk_array x = {0}, y = {0}, z = {0};
  int64_t shape[1] = {n};
  int rc = CLI_FAIL;
  if (!hx || !hy || !hz) {
    fprintf(stderr, "ukern demo: out of host memory\n");
    goto out;
  }
  srand(7);
  for (long long k = 0; k < n; k++) {
    hx[k] = (float)rand() / (float)RAND_MAX - 0.5f;
    hy[k] = (float)rand() / (float)RAND_MAX + 0.25f;
    hz[k] = NAN; /* poison: every element must be written */
  }
  if ((s = uk_array_alloc(ctx, UK_FLOAT32, 1, shape, 0, NULL, &x)) != UK_OK ||
      (s = uk_array_alloc(ctx, UK_FLOAT32, 1, shape, 0, NULL, &y)) != UK_OK ||
      (s = uk_array_alloc(ctx, UK_FLOAT32, 1, shape, 0, NULL, &z)) != UK_OK ||
      (s = uk_memcpy_htod(x.data, hx, bytes)) != UK_OK ||
      (s = uk_memcpy_htod(y.data, hy, bytes)) != UK_OK ||
      (s = uk_memcpy_htod(z.data, hz, bytes)) != UK_OK) {
    rc = cli_fail("device memory", s);
    goto out;
  }
  void *args[4] = {&x.data, &y.data, &z.data, &n};
  uk_grid_launch g = {{(unsigned)((n + 255) / 256), 1, 1}, {256, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  float ms = 0;
  for (int rep = 0; rep < 3; rep++)
    if ((s = uk_function_launch_timed(f, &g, args, &ms)) != UK_OK) {
      rc = cli_fail("launch", s);
      goto out;
    }
  if ((s = uk_memcpy_dtoh(hz, z.data, bytes)) != UK_OK) {
    rc = cli_fail("copy back", s);
    goto out;
  }
  long long bad = 0;
  for (long long k = 0; k < n; k++)
    if (hz[k] != (float)((double)hx[k] + (double)hy[k])) bad++;
  printf("ran      vector_add on %lld elements: %.3f ms, %.1f GB/s, %s\n", n, (double)ms,
         3.0 * (double)bytes / ((double)ms * 1e6), bad ? "WRONG RESULTS" : "all elements match the host");
  rc = bad ? CLI_FAIL : CLI_OK;
out:
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
  free(hx);
  free(hy);
  free(hz);
  return rc;
}

int cli_demo(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) {
    fputs(help, stdout);
    return CLI_OK;
  }
  int arch = 0;
  long long n = 1 << 24;
  for (int k = 1; k < argc; k++) {
    if (!strcmp(argv[k], "--arch") && k + 1 < argc) arch = atoi(argv[++k]);
    else if (!strcmp(argv[k], "--n") && k + 1 < argc) n = atoll(argv[++k]);
    else {
      fprintf(stderr, "ukern demo: unexpected argument '%s'\n%s", argv[k], help);
      return CLI_USAGE;
    }
  }
  if (n < 1) n = 1;
  int ndev = 0;
  int have_gpu = uk_device_count(&ndev) == UK_OK && ndev > 0;
  if (!have_gpu) {
    printf("no GPU   (%s)\n         compiling for sm_%d only\n", uk_last_error(), arch ? arch : 90);
    if (!arch) arch = 90;
  }
  uk_options opts = {0};
  opts.arch = arch;
  uk_context *ctx = NULL;
  uk_status s = uk_context_create(&opts, &ctx);
  if (s != UK_OK) return cli_fail("context", s);

  const char *names[] = {"scale<float>", "scale<double>"};
  uk_module_options mo = {0};
  mo.name_expressions = names;
  mo.num_name_expressions = 2;
  mo.name = "demo";
  uk_module *m = NULL, *again = NULL;
  int rc = CLI_OK;
  double t0 = now_ms();
  s = uk_module_from_source(ctx, source, &mo, &m);
  double t1 = now_ms();
  if (s != UK_OK) {
    rc = cli_fail("compile", s);
    goto out;
  }
  uk_cache_stats st;
  uk_context_cache_stats(ctx, &st);
  const void *image = NULL;
  size_t image_bytes = 0;
  uk_module_image(m, &image, &image_bytes);
  printf("compiled module 'demo' in %.2f ms (%s), cubin %zu bytes\n", t1 - t0,
         st.compiles ? "NVRTC" : "disk cache hit", image_bytes);
  for (int k = 0; k < 2; k++) {
    const char *lowered = NULL;
    if (uk_module_lowered_name(m, names[k], &lowered) == UK_OK)
      printf("         %-14s -> %s\n", names[k], lowered);
  }
  t0 = now_ms();
  s = uk_module_from_source(ctx, source, &mo, &again);
  t1 = now_ms();
  if (s != UK_OK) {
    rc = cli_fail("compile again", s);
    goto out;
  }
  uk_context_cache_stats(ctx, &st);
  printf("again    %.3f ms (memory hits %llu, disk hits %llu, compiles %llu), cache dir %s\n",
         t1 - t0, (unsigned long long)st.memory_hits, (unsigned long long)st.disk_hits,
         (unsigned long long)st.compiles, *uk_context_cache_dir(ctx) ? uk_context_cache_dir(ctx) : "(disabled)");
  /* A second context has its own memory cache: what a new process gets. */
  uk_context *ctx2 = NULL;
  uk_module *third = NULL;
  if ((s = uk_context_create(&opts, &ctx2)) == UK_OK) {
    t0 = now_ms();
    s = uk_module_from_source(ctx2, source, &mo, &third);
    t1 = now_ms();
  }
  if (s != UK_OK) {
    rc = cli_fail("new context", s);
  } else {
    uk_context_cache_stats(ctx2, &st);
    printf("new ctx  %.3f ms (a new process: memory hits %llu, disk hits %llu, compiles %llu)\n", t1 - t0,
           (unsigned long long)st.memory_hits, (unsigned long long)st.disk_hits, (unsigned long long)st.compiles);
  }
  uk_module_destroy(third);
  uk_context_destroy(ctx2);
  if (rc != CLI_OK) goto out;
  if (have_gpu) rc = run_on_gpu(ctx, m, n);
  if (rc == CLI_OK) rc = cli_demo_kernels(ctx, have_gpu, n);
  if (rc == CLI_OK && !have_gpu) printf("done     (run on a machine with a GPU to launch and check the kernels)\n");
out:
  uk_module_destroy(again);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return rc;
}
