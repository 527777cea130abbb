/* Host cost per launch: raw cuLaunchKernel vs uk_function_launch (with and
 * without a declared signature), same kernel, same stream, async.
 * Target (BENCHMARKS.md): uk_function_launch <= raw + 0.5 us. */
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"
#include "runtime/cudadrv.h"

static const char source[] =
    "extern \"C\" __global__ void tiny(const float* x, float* y, long long n, float a) {\n"
    "  if (n < 0) y[0] = x[0] * a;\n"
    "}\n";

enum { BATCH = 200, BATCHES = 60 };

int main(int argc, char **argv) {
  const char *json = argc > 1 ? argv[1] : NULL;
  int ndev = 0;
  if (uk_device_count(&ndev) != UK_OK) {
    printf("SKIP: %s\n", uk_last_error());
    return 77;
  }
  uk_context *ctx;
  bu_check(uk_context_create(NULL, &ctx), "context");
  uk_module *m;
  bu_check(uk_module_from_source(ctx, source, NULL, &m), "compile");
  uk_function *f_sig, *f_plain;
  bu_check(uk_module_function(m, "tiny", &f_sig), "function");
  bu_check(uk_device_set_current(0), "set device");

  /* The raw path: the same cubin loaded straight through the driver. */
  const void *image;
  size_t image_bytes;
  bu_check(uk_module_image(m, &image, &image_bytes), "image");
  CUmodule raw_mod;
  CUfunction raw_fn;
  CUstream stream;
  bu_check(uk__cu_check(uk__cu.cuModuleLoadData(&raw_mod, image), "cuModuleLoadData"), "raw load");
  bu_check(uk__cu_check(uk__cu.cuModuleGetFunction(&raw_fn, raw_mod, "tiny"), "cuModuleGetFunction"), "raw fn");
  bu_check(uk__cu_check(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"), "stream");

  uk_module *m2;
  bu_check(uk_module_from_source(ctx, source, NULL, &m2), "compile 2");
  bu_check(uk_module_function(m2, "tiny", &f_plain), "function 2");
  bu_check(uk_function_set_signature(f_sig, "const float* x, float* y, long long n, float a"), "signature");

  uint64_t x = 0, y = 0;
  long long n = 1;
  float a = 2.0f;
  void *args[4] = {&x, &y, &n, &a};
  uk_grid_launch g = {{1, 1, 1}, {32, 1, 1}, 0, stream, 0, {0, 0, 0}};

  double raw[BATCHES], sig[BATCHES], plain[BATCHES];
  for (int b = -3; b < BATCHES; b++) { /* 3 warm-up batches */
    double t0 = bu_now_us();
    for (int k = 0; k < BATCH; k++)
      if (uk__cu.cuLaunchKernel(raw_fn, 1, 1, 1, 32, 1, 1, 0, stream, args, NULL) != CUDA_SUCCESS) {
        fprintf(stderr, "raw launch failed\n");
        return 1;
      }
    double t1 = bu_now_us();
    uk__cu.cuStreamSynchronize(stream);
    double t2 = bu_now_us();
    for (int k = 0; k < BATCH; k++) bu_check(uk_function_launch(f_sig, &g, args), "launch");
    double t3 = bu_now_us();
    uk__cu.cuStreamSynchronize(stream);
    double t4 = bu_now_us();
    for (int k = 0; k < BATCH; k++) bu_check(uk_function_launch(f_plain, &g, args), "launch");
    double t5 = bu_now_us();
    uk__cu.cuStreamSynchronize(stream);
    if (b >= 0) {
      raw[b] = (t1 - t0) / BATCH;
      sig[b] = (t3 - t2) / BATCH;
      plain[b] = (t5 - t4) / BATCH;
    }
  }
  double r = bu_median(raw, BATCHES), s = bu_median(sig, BATCHES), p = bu_median(plain, BATCHES);
  bu_row("launch, signature declared (host us/launch)", s, r, "us", "raw cuLaunchKernel",
         "<= raw + 0.5 us", s <= r + 0.5);
  bu_row("launch, no signature (host us/launch)", p, r, "us", "raw cuLaunchKernel", "<= raw + 0.5 us",
         p <= r + 0.5);
  printf("raw cuLaunchKernel %.3f us, uk_function_launch with signature %.3f us (+%.3f), without %.3f us (+%.3f)\n",
         r, s, s - r, p, p - r);
  bu_finish("Host cost per launch (median of 60 batches of 200 async launches)", json);
  uk__cu.cuStreamDestroy(stream);
  uk__cu.cuModuleUnload(raw_mod);
  uk_module_destroy(m2);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return 0;
}
