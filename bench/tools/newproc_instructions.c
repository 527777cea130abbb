/* bench_compile's "first call, new process, warm disk cache" row without a
 * GPU: one process does what that bench's child does (driver initialised,
 * a context on CACHE_DIR, then the timed region: uk_module_from_source +
 * uk_module_function of the saxpy text) against the stand-in driver
 * (fake_driver.c). Public API only, so that the same source builds against
 * 55dd3c5's libukern.a (bench/tools/newproc_instructions.py does both).
 *
 *   newproc_instructions CACHE_DIR        one measured process: prints
 *                                         "<region us> <minor faults> <disk hits>
 *                                         <compiles>"
 * The region is the function np_region (callgrind --toggle-collect) and is
 * bracketed by write(-1, "np:begin"/"np:end") for strace. Run once first to
 * fill CACHE_DIR (that run compiles with NVRTC for the stand-in's sm_90). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ukern/ukern.h"

static const char source[] =
    "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, long long n) {\n"
    "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i] + 4242.0f;\n"
    "}\n";

static void check(uk_status s, const char *what) {
  if (s != UK_OK) {
    fprintf(stderr, "newproc_instructions: %s: %s\n", what, uk_last_error());
    exit(1);
  }
}

static long minor_faults(void) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The counted region; not inlined, so that callgrind can name it. */
__attribute__((noinline)) uk_status np_region(uk_context *ctx, uk_module **m);
__attribute__((noinline)) uk_status np_region(uk_context *ctx, uk_module **m) {
  uk_function *f;
  uk_status st = uk_module_from_source(ctx, source, NULL, m);
  return st == UK_OK ? uk_module_function(*m, "saxpy", &f) : st;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: newproc_instructions CACHE_DIR\n");
    return 2;
  }
  int ndev;
  check(uk_device_count(&ndev), "devices");
  check(uk_device_set_current(0), "device");
  uk_options o = {0};
  o.cache_dir = argv[1];
  uk_context *ctx;
  check(uk_context_create(&o, &ctx), "context");
  uk_module *m = NULL;
  /* The clock and the fault count once before, so that neither's first use
   * (lazy binding, vDSO) falls inside the measurement. */
  (void)now_us();
  (void)minor_faults();
  long f0 = minor_faults();
  if (write(-1, "np:begin", 8) != -1) return 1; /* strace's mark; fd -1 fails */
  double t0 = now_us();
  uk_status st = np_region(ctx, &m);
  double t1 = now_us();
  if (write(-1, "np:end", 6) != -1) return 1;
  long f1 = minor_faults();
  check(st, "module");
  uk_cache_stats s;
  check(uk_context_cache_stats(ctx, &s), "stats");
  printf("%.3f %ld %llu %llu\n", t1 - t0, f1 - f0, (unsigned long long)s.disk_hits,
         (unsigned long long)s.compiles);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return 0;
}
