/* ReductionKernel bandwidth, host cost and compile times.
 *
 * Bandwidth = bytes read once (+ bytes written) / median device time (CUDA events, 5
 * warm-ups, 30 runs). The reference in each bandwidth row is a 1 GiB
 * cuMemcpyDtoD measured in the same run, counted as read + write bytes; the
 * CUB ceilings come from bench/ceilings.cu (separate program).
 * Compile rows run this program again in fresh processes (--child).
 * Usage: bench_reduction [out.json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "floor.h"
#include "runtime/cudadrv.h"

static uk_context *ctx;
static CUstream stream;

static uk_reduction *mk(const char *map, const char *post, const char *name, const char *rtype) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = map;
  s.reduce_expr = "a + b";
  s.post_map_expr = post;
  s.identity = "0";
  s.name = name;
  s.reduce_type = rtype;
  uk_reduction *k;
  bu_check(uk_reduction_create(ctx, &s, &k), "create");
  return k;
}

/* A device array of random-ish non-zero values (filled by an elementwise kernel). */
static uk_array fill(uk_dtype t, int ndim, const int64_t *shape) {
  uk_array a;
  bu_check(uk_array_alloc(ctx, t, ndim, shape, 0, stream, &a), "alloc");
  static uk_elementwise *f;
  if (!f)
    bu_check(
        uk_elementwise_create(
            ctx,
            &(uk_elementwise_spec){
                .in_params = "",
                .out_params = "T y",
                .operation =
                    "unsigned int h = (unsigned int)i * 2654435761u; y = (T)(0.25f + (h >> 8) * (1.0f / 16777216.0f))",
                .name = "bench_fill"},
            &f),
        "fill kernel");
  uk_array flat = a;
  flat.ndim = 1;
  flat.shape[0] = uk_array_size(&a);
  flat.strides[0] = (int64_t)uk_dtype_size(t);
  uk_launch l = {.stream = stream};
  bu_check(uk_elementwise_call(f, NULL, 0, &flat, 1, &l), "fill");
  return a;
}

/* Median device ms of calls of k on x (allocated output reused: given). */
static double time_red(uk_reduction *k, const uk_array *x, const int *axes, int naxes, uk_array *y) {
  uk_arg in = uk_arg_array(x);
  uk_launch l;
  memset(&l, 0, sizeof l);
  l.stream = stream;
  l.axes = axes;
  l.num_axes = naxes;
  memset(y, 0, sizeof *y);
  bu_check(uk_reduction_call(k, &in, 1, y, 1, &l), "first call");
  CUevent e0, e1;
  uk__cu.cuEventCreate(&e0, 0);
  uk__cu.cuEventCreate(&e1, 0);
  double t[30];
  for (int r = -5; r < 30; r++) {
    uk__cu.cuEventRecord(e0, stream);
    bu_check(uk_reduction_call(k, &in, 1, y, 1, &l), "call");
    uk__cu.cuEventRecord(e1, stream);
    uk__cu.cuEventSynchronize(e1);
    float ms = 0;
    uk__cu.cuEventElapsedTime(&ms, e0, e1);
    if (r >= 0) t[r] = ms;
  }
  uk__cu.cuEventDestroy(e0);
  uk__cu.cuEventDestroy(e1);
  return bu_median(t, 30);
}

static double memcpy_gbs;

static void bw_row(const char *name, uk_reduction *k, uk_dtype t, int64_t r, int64_t c, int axis) {
  int64_t shape[2] = {r, c};
  int nd = c ? 2 : 1;
  if (!c) shape[0] = r;
  uk_array x = fill(t, nd, shape), y;
  int ax[1] = {axis};
  double ms = time_red(k, &x, axis >= 0 ? ax : NULL, axis >= 0 ? 1 : 0, &y);
  /* BENCHMARKS.md counts bytes read plus bytes written (the outputs matter
   * for short rows: k = 2 writes half as much as it reads). */
  double bytes = (double)uk_array_size(&x) * (double)uk_dtype_size(t);
  double wbytes = (double)uk_array_size(&y) * (double)uk_dtype_size(y.dtype);
  double gbs = bytes / ms / 1e6, rw = (bytes + wbytes) / ms / 1e6;
  char label[160];
  snprintf(label, sizeof label, "%s (%.3f ms, %.0f GB/s read)", name, ms, gbs);
  bu_row(label, rw, memcpy_gbs, "GB/s r+w", "memcpy DtoD r+w", "", -1);
  printf("%-48s %8.3f ms %8.1f GB/s read %8.1f GB/s r+w\n", name, ms, gbs, rw);
  fflush(stdout);
  uk_array_free(ctx, &y, stream);
  uk_array_free(ctx, &x, stream);
}

static void memcpy_ref(void) {
  size_t bytes = (size_t)1 << 30;
  CUdeviceptr a, b;
  uk__cu.cuMemAlloc(&a, bytes);
  uk__cu.cuMemAlloc(&b, bytes);
  CUevent e0, e1;
  uk__cu.cuEventCreate(&e0, 0);
  uk__cu.cuEventCreate(&e1, 0);
  double t[20];
  for (int r = -3; r < 20; r++) {
    uk__cu.cuEventRecord(e0, stream);
    uk__cu.cuMemcpyDtoDAsync(b, a, bytes, stream);
    uk__cu.cuEventRecord(e1, stream);
    uk__cu.cuEventSynchronize(e1);
    float ms;
    uk__cu.cuEventElapsedTime(&ms, e0, e1);
    if (r >= 0) t[r] = ms;
  }
  memcpy_gbs = 2.0 * (double)bytes / bu_median(t, 20) / 1e6;
  printf("memcpy DtoD 1 GiB: %.1f GB/s (read + write)\n", memcpy_gbs);
  uk__cu.cuMemFree(a);
  uk__cu.cuMemFree(b);
}

/* Host cost: async calls of a tiny reduction vs raw cuLaunchKernel of a tiny kernel, in interleaved
 * batches (bu_host_cost): the host's speed drifts within a run, so the two are timed side by side. */
typedef struct {
  uk_reduction *k;
  uk_arg *in;
  uk_array *out;
  uk_launch *l;
} red_call_args;

static void red_call(void *p) {
  red_call_args *a = p;
  bu_check(uk_reduction_call(a->k, a->in, 1, a->out, 1, a->l), "call");
}

static void small_sizes(void) {
  uk_reduction *k = mk("x", "y = a", "bench_small", NULL);
  static const char src[] = "extern \"C\" __global__ void tiny(float *y, long long n) { if (n < 0) y[0] = 1; }\n";
  uk_module *m;
  bu_check(uk_module_from_source(ctx, src, NULL, &m), "tiny");
  const void *image;
  size_t nb;
  bu_check(uk_module_image(m, &image, &nb), "image");
  CUmodule mod;
  CUfunction fn;
  uk__cu.cuModuleLoadData(&mod, image);
  uk__cu.cuModuleGetFunction(&fn, mod, "tiny");
  CUdeviceptr ynull = 0;
  long long one = 1;
  void *raw_args[2] = {&ynull, &one};
  int64_t sizes[] = {1, 1024, 1 << 16};
  for (int j = 0; j < 3; j++) {
    uk_array x = fill(UK_FLOAT32, 1, &sizes[j]), y;
    double gpu_ms = time_red(k, &x, NULL, 0, &y);
    uk_arg in = uk_arg_array(&x);
    uk_launch l;
    memset(&l, 0, sizeof l);
    l.stream = stream;
    red_call_args ra = {k, &in, &y, &l};
    double host, raw;
    bu_host_cost(red_call, &ra, fn, raw_args, stream, &host, &raw);
    char label[96];
    snprintf(label, sizeof label, "sum f32 n=%lld host us/call", (long long)sizes[j]);
    bu_row(label, host, raw, "us", "raw cuLaunchKernel", "<= raw + 1.5 us", host <= raw + 1.5);
    snprintf(label, sizeof label, "sum f32 n=%lld GPU time", (long long)sizes[j]);
    bu_row(label, gpu_ms * 1e3, 0, "us", "", "<= CUB + 1 us (CUB: ceilings.cu)", -1);
    printf("small n=%lld: host %.2f us (raw launch %.2f us), GPU %.2f us\n", (long long)sizes[j], host, raw,
           gpu_ms * 1e3);
    uk_array_free(ctx, &y, stream);
    uk_array_free(ctx, &x, stream);
  }
  uk__cu.cuModuleUnload(mod);
  uk_module_destroy(m);
  uk_reduction_destroy(k);
}

/* --child DIR NAME: first reduction call in this process, then a new
 * specialisation; prints "first_ms second_ms". NAME is new in every bench
 * run (and reaches the PTX), so neither NVRTC's nor the driver's own caches
 * can answer for ukern's. With --warm, only the first call (a disk hit by
 * then), its result copied to the host: the parent times the whole process. */
static int child(const char *dir, const char *name, int warm) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  bu_check(uk_context_create(&o, &ctx), "context");
  int64_t n = 4096;
  uk_array x, x2, y;
  bu_check(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x), "alloc");
  uk_reduction *k = mk("x * x", "y = sqrt(a)", name, NULL);
  uk_arg in = uk_arg_array(&x);
  memset(&y, 0, sizeof y);
  if (warm) {
    float r;
    bu_check(uk_reduction_call(k, &in, 1, &y, 1, NULL), "first call");
    bu_check(uk_memcpy_dtoh(&r, y.data, sizeof r), "result");
    return 0;
  }
  bu_check(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &x2), "alloc");
  bu_check(uk_device_synchronize(), "sync");
  uk_arg in2 = uk_arg_array(&x2);
  double t0 = bu_now_us();
  bu_check(uk_reduction_call(k, &in, 1, &y, 1, NULL), "first call");
  double t1 = bu_now_us();
  uk_array_free(ctx, &y, NULL);
  memset(&y, 0, sizeof y);
  double t2 = bu_now_us();
  bu_check(uk_reduction_call(k, &in2, 1, &y, 1, NULL), "second call");
  double t3 = bu_now_us();
  printf("%.4f %.4f\n", (t1 - t0) / 1e3, (t3 - t2) / 1e3);
  return 0;
}

static int run_child(const char *self, const char *dir, const char *name, double *first, double *second) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "'%s' --child '%s' '%s'", self, dir, name);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  int ok = fscanf(p, "%lf %lf", first, second) == 2;
  pclose(p);
  return ok ? 0 : -1;
}

/* Warm children per bench run: one process's first call varies 0.30-0.50 ms
 * on the GPU hosts (two modes; every driver call and host gap of the slow
 * ones is slower alike), so one sample a run compared modes, not builds. */
#define WARM_CHILDREN 7

/* The warm row: the median of WARM_CHILDREN children's first calls (each a
 * disk hit; their second calls, a disk hit too, are not used). */
static int warm_call_median(const char *self, const char *dir, const char *name, double *ms) {
  double t[WARM_CHILDREN], second;
  for (int k = 0; k < WARM_CHILDREN; k++)
    if (run_child(self, dir, name, &t[k], &second)) return -1;
  *ms = bu_median(t, WARM_CHILDREN);
  return 0;
}

/* The cubin of the program the warm child's call runs, for the floor's
 * load-and-launch process. */
static int reduction_cubin(const char *name, const char *path) {
  uk_context *c;
  bu_check(uk_context_create(NULL, &c), "context");
  uk_context *keep = ctx;
  ctx = c;
  uk_reduction *k = mk("x * x", "y = sqrt(a)", name, NULL);
  ctx = keep;
  int64_t n = 4096;
  uk_array x, y;
  bu_check(uk_array_alloc(c, UK_FLOAT32, 1, &n, 0, NULL, &x), "alloc");
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x);
  char *src = NULL;
  uk_device_info info;
  int rc = -1;
  if (uk_reduction_source(k, &in, 1, &y, 1, NULL, &src) == UK_OK && uk_device_info_get(0, &info) == UK_OK)
    rc = floor_write_cubin(src, info.arch, path);
  uk_free(src);
  uk_array_free(c, &x, NULL);
  uk_reduction_destroy(k);
  uk_context_destroy(c);
  return rc;
}

static double median3(char *const argv[]) {
  double t[3];
  for (int k = 0; k < 3; k++)
    if ((t[k] = floor_spawn_ms(argv)) < 0) return -1;
  return bu_median(t, 3);
}

/* Compile and start-up rows, each against a floor measured in this run:
 * bare NVRTC on a CUB program with -pch (first and second compile of a
 * process), and a bare driver program that loads the same cubin from a file
 * and launches once (process start to result on the host). */
static void compile_times(const char *self) {
  char dir[] = "/tmp/ukern_bench_redXXXXXX";
  if (!mkdtemp(dir)) return;
  double cold, next, warm, fcold, fnext;
  char name[64], fname[80], cubin[4200];
  snprintf(name, sizeof name, "child_l2_%ld_%ld", (long)getpid(), (long)time(NULL));
  snprintf(fname, sizeof fname, "%s_floor", name);
  snprintf(cubin, sizeof cubin, "%s/floor.cubin", dir);
  int failed = run_child(self, dir, name, &cold, &next) || warm_call_median(self, dir, name, &warm) ||
               floor_nvrtc_cub(self, fname, &fcold, &fnext) || reduction_cubin(name, cubin);
  char *warm_argv[] = {(char *)self, "--child-warm", dir, name, NULL};
  char *floor_argv[] = {(char *)self, "--floor-load", cubin, NULL};
  double wall = failed ? -1 : median3(warm_argv), fwall = failed ? -1 : median3(floor_argv);
  if (failed || wall < 0 || fwall < 0) {
    fprintf(stderr, "bench: compile child failed\n");
    return;
  }
  bu_row("first reduction in a process, cold (ms)", cold, fcold, "ms", "bare NVRTC, CUB + -pch, first",
         "<= floor", cold <= fcold);
  bu_row("next new specialisation, same process (ms)", next, fnext, "ms", "bare NVRTC, CUB + -pch, second",
         "<= 1.3x floor", next <= 1.3 * fnext);
  /* Three processes each, cuInit and the primary context included (each
   * varies by 10 ms and more between processes): reported only. The verdict
   * on the warm start (<= floor + 1 ms) is bench_warm_start's, which pays
   * those at the same place on both sides. */
  bu_row("first call in a new process, warm disk cache, process start to result (ms)", wall, fwall, "ms",
         "cuInit + cuModuleLoadData (same cubin, from a file) + one launch", "reported (verdict: bench_warm_start)",
         -1);
  bu_row("first call in a new process, warm disk cache, call only (ms)", warm, 0, "ms", "", "reported", -1);
  printf("compile: cold first %.1f ms (floor %.1f), next specialisation %.1f ms (floor %.1f), "
         "warm new process %.2f ms (floor %.2f), warm call only %.3f ms\n",
         cold, fcold, next, fnext, wall, fwall, warm);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench: could not remove %s\n", dir);
}

int main(int argc, char **argv) {
  if (argc > 3 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3], 0);
  if (argc > 3 && strcmp(argv[1], "--child-warm") == 0) return child(argv[2], argv[3], 1);
  int fc = floor_child_main(argc, argv);
  if (fc >= 0) return fc;
  const char *json = argc > 1 ? argv[1] : NULL;
  int ndev = 0;
  if (uk_device_count(&ndev) != UK_OK) {
    printf("SKIP: %s\n", uk_last_error());
    return 77;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    compile_times(self);
  }
  bu_check(uk_context_create(NULL, &ctx), "context");
  bu_check(uk_device_set_current(0), "device");
  bu_check(uk__cu_check(uk__cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"), "stream");
  memcpy_ref();
  uk_reduction *sum = mk("x", "y = a", "bsum", NULL), *l2 = mk("x * x", "y = sqrt(a)", "bl2", NULL);
  uk_reduction *hsum = mk("x", "y = a", "bhsum", "float");
  const int64_t N = (int64_t)1 << 28;
  bw_row("full sum f32 2^28", sum, UK_FLOAT32, N, 0, -1);
  bw_row("full L2 norm f32 2^28", l2, UK_FLOAT32, N, 0, -1);
  bw_row("full sum f64 2^27", sum, UK_FLOAT64, N / 2, 0, -1);
  bw_row("full sum f16 (f32 accumulator) 2^28", hsum, UK_FLOAT16, N, 0, -1);
  bw_row("rows (axis=1) 16384^2 f32", sum, UK_FLOAT32, 16384, 16384, 1);
  bw_row("columns (axis=0) 16384^2 f32", sum, UK_FLOAT32, 16384, 16384, 0);
  int ks[] = {2, 4, 16, 64, 256, 4096};
  for (int j = 0; j < 6; j++) {
    char name[64];
    snprintf(name, sizeof name, "short inner axis (N/%d, %d) axis=1", ks[j], ks[j]);
    bw_row(name, sum, UK_FLOAT32, N / ks[j], ks[j], 1);
  }
  int fs[] = {2, 16, 128};
  for (int j = 0; j < 3; j++) {
    char name[64];
    snprintf(name, sizeof name, "few outer rows (%d, N/%d) axis=0", fs[j], fs[j]);
    bw_row(name, sum, UK_FLOAT32, fs[j], N / fs[j], 0);
  }
  /* few dense columns (sums over axis 0 of pairs, triples, ...): one tile over every output (red_plan.c) */
  int cs[] = {2, 3, 4, 16};
  for (int j = 0; j < 4; j++) {
    char name[64];
    const int64_t rows = N / (cs[j] == 3 ? 4 : cs[j]);
    snprintf(name, sizeof name, "few columns (%lld, %d) axis=0", (long long)rows, cs[j]);
    bw_row(name, sum, UK_FLOAT32, rows, cs[j], 0);
  }
  small_sizes();
  bu_finish("ReductionKernel (read GB/s = bytes read once / median time)", json);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(l2);
  uk_reduction_destroy(hsum);
  uk__cu.cuStreamDestroy(stream);
  uk_context_destroy(ctx);
  return 0;
}
