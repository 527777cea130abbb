/* Warm start (issue 14): the first call in a new process with a warm disk
 * cache, from process start to the result on the host, against a floor
 * program that does cuInit + cuModuleLoadData of a cubin read from a file +
 * one launch (warm_start_floor.c). Target: ukern <= floor + 1 ms, for
 * elementwise, reduction, fusion and raw modules.
 *
 *   bench_warm_start [JSON [PAIRS]] [--trace]   the bench (JSON: "-" for
 *       none); --trace then runs one floor and one ukern child per kind
 *       with the tracing libcuda.so.1 (tools/cuda_trace.c) and prints each one's
 *       driver calls from cuInit's return to the result (tools/warm_start_trace.c)
 *   bench_warm_start --child KIND DIR [--no-gpu]   one ukern child
 *
 * The parent fills the disk cache with one cold child per kind, writes each
 * kind's floor cubin (ukern's generated source for that call with a trivial
 * kernel appended, compiled through ukern), then spawns PAIRS interleaved
 * pairs per kind (floor and ukern child, the order alternating). Each child
 * reports CLOCK_MONOTONIC readings at the entry of main, after cuInit and
 * with the result on the host; the parent's reading just before
 * posix_spawn starts the clock. So per child: pre-main (exec, dynamic
 * loading: libukern and its libraries for ukern's child, nothing for the
 * floor's), cuInit, post-cuInit (everything else up to the result).
 *
 * Both children call cuInit themselves first (dlopen of libcuda.so.1) and
 * retain device 0's primary context, the ukern child before any ukern call:
 * cuInit costs 10-200 ms on the GPU host and the primary context ~100 ms,
 * each varying from process to process by 10 ms and more, far more than the
 * 1 ms target, so both sides pay them at the same place ("cuInit" below
 * means both) and the verdict is on the rest: ukern - floor of (pre-main +
 * post-cuInit), the median of the per-pair differences. The totals are
 * reported too.
 *
 * The children are small: the ukern child links only the public libukern
 * (ukern_internal would load NVRTC at start), the floor links neither.
 * Without a GPU the same harness runs in a reduced form: contexts set
 * uk_options.arch = 90, the ukern child stops with the image in hand
 * (precompile / uk_module_image), the floor only reads the cubin file, and
 * cuInit is 0. */
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ukern/ukern.h"
#include "warm_start_child.h"
#include "tools/warm_start_trace.h"

extern char **environ;

typedef enum { K_RAW, K_EW, K_RED, K_FUSION, K_COUNT } kind;
static const char *const kind_names[K_COUNT] = {"raw", "elementwise", "reduction", "fusion"};

static const char raw_src[] =
    "extern \"C\" __global__ void ws_raw(const float *x, float *y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] * 2.0f + 1.0f;\n"
    "}\n";
static const char fusion_prog[] = "t = x * 2; d = sqrt(sum(t * t, axis=-1))";

static int fail(const char *what, uk_status s) {
  fprintf(stderr, "bench_warm_start: %s: %s: %s\n%s\n", what, uk_status_name(s), uk_last_error(),
          uk_last_error_log());
  return 1;
}

/* The kernel object of one kind (the definitions both the children and the
 * parent's floor cubins use). */
typedef struct ws_kernel {
  kind k;
  uk_elementwise *ew;
  uk_reduction *red;
  uk_fusion *fu;
} ws_kernel;

static uk_status kernel_create(uk_context *ctx, kind k, ws_kernel *out) {
  memset(out, 0, sizeof *out);
  out->k = k;
  if (k == K_EW) return uk_elementwise_create(ctx, "T x", "T y", "y = x * 2 + 1", "ws_ew", NULL, &out->ew);
  if (k == K_FUSION) return uk_fusion_create(ctx, "x", "d", fusion_prog, "ws_fusion", NULL, &out->fu);
  if (k == K_RED) {
    uk_reduction_spec s;
    memset(&s, 0, sizeof s);
    s.in_params = "T x";
    s.out_params = "T y";
    s.map_expr = "x * x";
    s.reduce_expr = "a + b";
    s.post_map_expr = "y = a";
    s.identity = "0";
    s.name = "ws_red";
    return uk_reduction_create(ctx, &s, &out->red);
  }
  return UK_OK;
}

static void kernel_destroy(ws_kernel *w) {
  uk_elementwise_destroy(w->ew);
  uk_reduction_destroy(w->red);
  uk_fusion_destroy(w->fu);
}

/* The call's arrays: x[WS_N] float32 in; y[WS_N] (elementwise) or 0-d
 * (reduction, fusion) out. Data pointers are given (fake ones without a GPU). */
static void call_arrays(kind k, uint64_t xdata, uint64_t ydata, uk_array *x, uk_array *y) {
  int64_t n = WS_N;
  uk_array_init(x, xdata, UK_FLOAT32, 1, &n);
  uk_array_init(y, ydata, UK_FLOAT32, k == K_EW ? 1 : 0, &n);
}

/* ------------------------------------------------------------------ child */

/* The host reference of the kind's result element i (double precision). */
static double reference(kind k, const float *hx, int i) {
  if (k == K_RAW || k == K_EW) return (double)hx[i] * 2.0 + 1.0;
  double s = 0;
  for (int j = 0; j < WS_N; j++) s += k == K_RED ? (double)hx[j] * hx[j] : 4.0 * hx[j] * hx[j];
  return k == K_RED ? s : sqrt(s);
}

/* Runs the kind's call with the result copied to hy (GPU), or compiles it to
 * the image in hand (no GPU). */
static uk_status child_call(uk_context *ctx, ws_kernel *w, int gpu, const float *hx, float *hy) {
  uk_array x, y;
  uk_status s;
  if (!gpu) {
    call_arrays(w->k, 0x10000, 0x20000, &x, &y);
    uk_arg in = uk_arg_array(&x);
    if (w->k == K_EW) return uk_elementwise_precompile(w->ew, &in, 1, &y, 1, NULL);
    if (w->k == K_RED) return uk_reduction_precompile(w->red, &in, 1, &y, 1, NULL);
    if (w->k == K_FUSION) return uk_fusion_precompile(w->fu, &in, 1, &y, 1, NULL);
    uk_module *m = NULL;
    const void *img;
    size_t bytes;
    if ((s = uk_module_from_source(ctx, raw_src, NULL, &m)) == UK_OK) s = uk_module_image(m, &img, &bytes);
    uk_module_destroy(m);
    return s;
  }
  int64_t n = WS_N;
  memset(&y, 0, sizeof y);
  if ((s = uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x)) != UK_OK) return s;
  if ((s = uk_array_alloc(ctx, UK_FLOAT32, w->k <= K_EW ? 1 : 0, &n, 0, NULL, &y)) != UK_OK) goto out;
  if ((s = uk_memcpy_htod(x.data, hx, WS_N * sizeof *hx)) != UK_OK) goto out;
  uk_arg in = uk_arg_array(&x);
  if (w->k == K_EW) {
    s = uk_elementwise_call(w->ew, &in, 1, &y, 1, NULL);
  } else if (w->k == K_RED) {
    s = uk_reduction_call(w->red, &in, 1, &y, 1, NULL);
  } else if (w->k == K_FUSION) {
    s = uk_fusion_call(w->fu, &in, 1, &y, 1, NULL);
  } else {
    uk_module *m = NULL;
    uk_function *f;
    int nn = WS_N;
    void *args[] = {&x.data, &y.data, &nn};
    uk_grid_launch g;
    memset(&g, 0, sizeof g);
    g.grid[0] = (WS_N + 255) / 256;
    g.block[0] = 256;
    if ((s = uk_module_from_source(ctx, raw_src, NULL, &m)) == UK_OK &&
        (s = uk_module_function(m, "ws_raw", &f)) == UK_OK)
      s = uk_function_launch(f, &g, args);
    if (s == UK_OK) s = uk_array_to_host(ctx, &y, hy, WS_N * sizeof *hy, NULL);
    uk_module_destroy(m);
    goto out;
  }
  if (s == UK_OK) s = uk_array_to_host(ctx, &y, hy, (size_t)uk_array_size(&y) * sizeof *hy, NULL);
out:
  uk_array_free(ctx, &x, NULL);
  if (y.data) uk_array_free(ctx, &y, NULL);
  return s;
}

static int child(const char *kname, const char *dir, int gpu) {
  double t_main = ws_now_us();
  kind k = K_COUNT;
  for (int j = 0; j < K_COUNT; j++)
    if (!strcmp(kname, kind_names[j])) k = (kind)j;
  if (k == K_COUNT) return 2;
  if (gpu) {
    ws_driver d;
    if (ws_driver_init(&d) != 0) return 1;
  }
  double t_init = gpu ? ws_now_us() : t_main;
  static float hx[WS_N], hy[WS_N];
  for (int i = 0; i < WS_N; i++) hx[i] = (float)(i % 13) - 6.0f;
  uk_options o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  o.arch = gpu ? 0 : 90;
  uk_context *ctx = NULL;
  ws_kernel w;
  uk_status s = uk_context_create(&o, &ctx);
  if (s != UK_OK) return fail("context", s);
  double t_ctx = ws_now_us();
  if ((s = kernel_create(ctx, k, &w)) != UK_OK) return fail("kernel", s);
  double t_def = ws_now_us();
  if ((s = child_call(ctx, &w, gpu, hx, hy)) != UK_OK) return fail(kname, s);
  double t_result = ws_now_us();
  uk_cache_stats st;
  uk_context_cache_stats(ctx, &st);
  int bad = 0;
  for (int i = 0; gpu && i < (k <= K_EW ? WS_N : 1); i++) {
    double want = reference(k, hx, i);
    if (fabs(hy[i] - want) > 1e-5 * fabs(want) + 1e-6) {
      fprintf(stderr, "bench_warm_start: %s: wrong result at %d: %g, expected %g\n", kname, i, (double)hy[i], want);
      bad = 1;
      break;
    }
  }
  kernel_destroy(&w);
  uk_context_destroy(ctx);
  if (bad) return 1;
  ws_report(t_main, t_init, t_result, (unsigned long long)st.disk_hits, (unsigned long long)st.compiles, t_ctx, t_def);
  /* Whether NVRTC was loaded (a disk hit must not load it): a field more. */
  printf("%d\n", ws_nvrtc_mapped());
  return 0;
}

/* ----------------------------------------------------------------- parent */

/* One child's times (ms) and cache counters; ctx, def, call: post split
 * into uk_context_create, defining the kernel, and the call to the result. */
typedef struct sample {
  double pre, init, post, total, exit, ctx, def, call;
  unsigned long long hits, compiles;
  int nvrtc; /* the ukern child had NVRTC loaded */
} sample;

/* Spawns argv, reads its report; 0 on success. */
static int spawn_child(char *const argv[], sample *out) {
  double t0, t_exit, rep[8];
  if (ws_spawn(argv, environ, &t0, &t_exit, rep) != 0) return -1;
  double tm = rep[0], ti = rep[1], tr = rep[2], tc = rep[5], td = rep[6];
  out->hits = (unsigned long long)rep[3];
  out->compiles = (unsigned long long)rep[4];
  out->nvrtc = rep[7] > 0;
  out->pre = (tm - t0) / 1e3;
  out->init = (ti - tm) / 1e3;
  out->post = (tr - ti) / 1e3;
  out->total = (tr - t0) / 1e3;
  out->exit = (t_exit - t0) / 1e3;
  out->ctx = (tc - ti) / 1e3;
  out->def = (td - tc) / 1e3;
  out->call = (tr - td) / 1e3;
  return 0;
}

/* Writes the floor's cubin for kind k: the source ukern generates for the
 * child's call, with the floor kernel appended, compiled through ukern with
 * the kernel's options for `arch` (no disk cache). */
static int floor_cubin(kind k, int arch, const char *path) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = arch;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  ws_kernel w;
  uk_array x, y;
  call_arrays(k, 0x10000, 0x20000, &x, &y);
  uk_arg in = uk_arg_array(&x);
  char *src = NULL, **opts = NULL, *full = NULL;
  uk_module *m = NULL;
  int rc = -1, fd = -1, nopts = 0;
  uk_status s = uk_context_create(&o, &ctx);
  if (s == UK_OK) s = kernel_create(ctx, k, &w);
  if (s != UK_OK) goto out;
  if (k == K_EW && (s = uk_elementwise_source(w.ew, &in, 1, &y, 1, NULL, &src)) == UK_OK)
    s = uk_elementwise_nvrtc_options(w.ew, &in, 1, &y, 1, NULL, &opts);
  if (k == K_RED && (s = uk_reduction_source(w.red, &in, 1, &y, 1, NULL, &src)) == UK_OK)
    s = uk_reduction_nvrtc_options(w.red, &in, 1, &y, 1, NULL, &opts);
  if (k == K_FUSION) {
    int count = 0;
    if ((s = uk_fusion_kernel_count(w.fu, &in, 1, &y, 1, &count)) == UK_OK && count != 1)
      fprintf(stderr, "bench_warm_start: the fusion runs %d kernels; the floor loads them as one module\n", count);
    if (s == UK_OK) s = uk_fusion_source(w.fu, &in, 1, &y, 1, NULL, &src);
  }
  kernel_destroy(&w);
  if (s != UK_OK) goto out;
  const char *text = k == K_RAW ? raw_src : src;
  size_t n = strlen(text);
  if (!(full = malloc(n + sizeof WS_FLOOR_KERNEL))) goto out;
  memcpy(full, text, n);
  memcpy(full + n, WS_FLOOR_KERNEL, sizeof WS_FLOOR_KERNEL);
  while (opts && opts[nopts]) nopts++;
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = (const char *const *)opts;
  mo.num_options = nopts;
  mo.name = "floor";
  const void *img;
  size_t bytes;
  if ((s = uk_module_from_source(ctx, full, &mo, &m)) != UK_OK || (s = uk_module_image(m, &img, &bytes)) != UK_OK)
    goto out;
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0 && write(fd, img, bytes) == (ssize_t)bytes) rc = 0;
out:
  if (s != UK_OK) fail("floor cubin", s);
  if (fd >= 0 && close(fd) != 0) rc = -1;
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  uk_free(src);
  uk_free(opts);
  free(full);
  return rc;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median over n samples of one field (offset into sample). */
static double med_field(const sample *s, int n, size_t off, double *tmp) {
  for (int j = 0; j < n; j++) tmp[j] = *(const double *)((const char *)&s[j] + off);
  return median(tmp, n);
}

/* Per-kind results, for the table and the JSON. */
typedef struct result {
  double fl[8], uk[8]; /* medians: total, pre, init, post, exit, ctx, def, call */
  double diff, diff_total;
  double diff_pool, pool_post; /* against the floor allocating from a pool (GPU only) */
  int warm_hits, nvrtc_loaded;
} result;

/* fp: the floor allocating from a pool of its own, as ukern does (NULL: none). */
static void summarise(const sample *fl, const sample *uk, const sample *fp, int n, result *r) {
  double *tmp = malloc((size_t)n * sizeof *tmp);
  if (!tmp) exit(1);
  const size_t offs[8] = {offsetof(sample, total), offsetof(sample, pre),  offsetof(sample, init),
                          offsetof(sample, post),  offsetof(sample, exit), offsetof(sample, ctx),
                          offsetof(sample, def),   offsetof(sample, call)};
  for (int f = 0; f < 8; f++) {
    r->fl[f] = med_field(fl, n, offs[f], tmp);
    r->uk[f] = med_field(uk, n, offs[f], tmp);
  }
  r->warm_hits = 0;
  r->nvrtc_loaded = 0;
  for (int j = 0; j < n; j++) {
    r->nvrtc_loaded += uk[j].nvrtc;
    tmp[j] = (uk[j].pre + uk[j].post) - (fl[j].pre + fl[j].post);
    r->warm_hits += uk[j].compiles == 0 && uk[j].hits >= 1;
  }
  r->diff = median(tmp, n);
  for (int j = 0; j < n; j++) tmp[j] = uk[j].total - fl[j].total;
  r->diff_total = median(tmp, n);
  r->diff_pool = r->pool_post = 0;
  if (fp) {
    for (int j = 0; j < n; j++) tmp[j] = (uk[j].pre + uk[j].post) - (fp[j].pre + fp[j].post);
    r->diff_pool = median(tmp, n);
    r->pool_post = med_field(fp, n, offsetof(sample, post), tmp);
  }
  free(tmp);
}

static void print_results(const result *r, int pairs, int gpu, int arch, const char *json) {
  printf("\nWarm start: first call in a new process, warm disk cache (%s, sm_%d, %d interleaved pairs per kind;\n"
         "ms, medians; the ukern child links libukern, the floor neither)\n\n",
         gpu ? "GPU" : "no GPU: process start to image in hand, floor reads the cubin file", arch, pairs);
  printf("| kind | side | total (spawn to result) | pre-main | cuInit + primary context | post-cuInit | spawn to exit |\n"
         "|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < K_COUNT; k++)
    for (int side = 0; side < 2; side++) {
      const double *v = side ? r[k].uk : r[k].fl;
      printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", kind_names[k], side ? "ukern" : "floor", v[0], v[1],
             v[2], v[3], v[4]);
    }
  printf("\n| kind | ukern - floor: pre-main + post-cuInit | ukern - floor: total | warm disk hits | NVRTC loaded | "
         "target | met |\n|---|---|---|---|---|---|---|\n");
  for (int k = 0; k < K_COUNT; k++)
    printf("| %s | %+.2f ms | %+.2f ms | %d/%d | %d/%d | <= +1 ms | %s |\n", kind_names[k], r[k].diff, r[k].diff_total,
           r[k].warm_hits, pairs, r[k].nvrtc_loaded, pairs, r[k].diff <= 1.0 ? "yes" : "NO");
  printf("\nukern's post-cuInit, split (ms, medians): uk_context_create | defining the kernel | the call to the "
         "result\n\n| kind | context | definition | call |\n|---|---|---|---|\n");
  for (int k = 0; k < K_COUNT; k++)
    printf("| %s | %.3f | %.3f | %.3f |\n", kind_names[k], r[k].uk[5], r[k].uk[6], r[k].uk[7]);
  if (gpu) {
    printf("\nAgainst the floor allocating as ukern does (a pool of its own, cuMemAllocFromPoolAsync: the driver's\n"
           "stream-ordered allocator starts up at the first such allocation of a process)\n\n"
           "| kind | that floor: post-cuInit | ukern - that floor: pre-main + post-cuInit |\n|---|---|---|\n");
    for (int k = 0; k < K_COUNT; k++)
      printf("| %s | %.2f | %+.2f ms |\n", kind_names[k], r[k].pool_post, r[k].diff_pool);
  }
  FILE *f = json && strcmp(json, "-") ? fopen(json, "w") : NULL;
  if (!f) return;
  fprintf(f, "{\"title\": \"Warm start (%s, sm_%d, %d pairs)\", \"rows\": [\n", gpu ? "GPU" : "no GPU", arch, pairs);
  for (int k = 0; k < K_COUNT; k++) {
    fprintf(f,
            "  {\"case\": \"warm start %s: pre-main + post-cuInit (ms)\", \"ukern\": %.4f, \"reference\": %.4f, "
            "\"unit\": \"ms\", \"reference_name\": \"floor process\", \"target\": \"<= floor + 1 ms\", "
            "\"pass\": %d, \"diff\": %.4f},\n",
            kind_names[k], r[k].uk[1] + r[k].uk[3], r[k].fl[1] + r[k].fl[3], r[k].diff <= 1.0, r[k].diff);
    fprintf(f,
            "  {\"case\": \"warm start %s: total, spawn to result (ms)\", \"ukern\": %.4f, \"reference\": %.4f, "
            "\"unit\": \"ms\", \"reference_name\": \"floor process\", \"target\": \"reported\", \"pass\": -1, "
            "\"diff\": %.4f}%s\n",
            kind_names[k], r[k].uk[0], r[k].fl[0], r[k].diff_total, k + 1 < K_COUNT || gpu ? "," : "");
  }
  for (int k = 0; gpu && k < K_COUNT; k++)
    fprintf(f,
            "  {\"case\": \"warm start %s: pre-main + post-cuInit against the floor allocating from a pool (ms)\", "
            "\"ukern\": %.4f, \"reference\": %.4f, \"unit\": \"ms\", \"reference_name\": \"floor process with a pool\", "
            "\"target\": \"reported\", \"pass\": -1, \"diff\": %.4f}%s\n",
            kind_names[k], r[k].uk[1] + r[k].uk[3], r[k].uk[1] + r[k].uk[3] - r[k].diff_pool, r[k].diff_pool,
            k + 1 < K_COUNT ? "," : "");
  fprintf(f, "]}\n");
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "--child"))
    return child(argv[2], argv[3], !(argc > 4 && !strcmp(argv[4], "--no-gpu")));
  int trace = argc > 1 && !strcmp(argv[argc - 1], "--trace");
  if (trace) argc--;
  const char *json = argc > 1 ? argv[1] : NULL;
  int pairs = argc > 2 ? atoi(argv[2]) : 15;
  if (pairs < 1 || pairs > 1000) pairs = 15;
  char self[4096], floor_exe[4200];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  snprintf(floor_exe, sizeof floor_exe, "%.*s/warm_start_floor", (int)(strrchr(self, '/') - self), self);
  if (access(floor_exe, X_OK) != 0) {
    fprintf(stderr, "bench_warm_start: %s not found (build the warm_start_floor target)\n", floor_exe);
    return 1;
  }
  int ndev = 0, gpu = uk_device_count(&ndev) == UK_OK, arch = 90;
  uk_device_info info;
  if (gpu && uk_device_info_get(0, &info) == UK_OK) arch = info.arch;
  if (!gpu) printf("no GPU (%s): reduced run, image in hand, sm_90\n", uk_last_error());
  char dir[] = "/tmp/ukern-warm-start-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char cubin[K_COUNT][4200];
  char *uk_argv[K_COUNT][6], *fl_argv[K_COUNT][4], *fp_argv[K_COUNT][5];
  int rc = 1;
  sample *fl = calloc((size_t)(K_COUNT * pairs), sizeof *fl), *uk = calloc((size_t)(K_COUNT * pairs), sizeof *uk);
  sample *fp = calloc((size_t)(K_COUNT * pairs), sizeof *fp);
  if (!fl || !uk || !fp) goto out;
  for (int k = 0; k < K_COUNT; k++) {
    snprintf(cubin[k], sizeof cubin[k], "%s/floor-%s.cubin", dir, kind_names[k]);
    char **a = uk_argv[k], **b = fl_argv[k];
    a[0] = self, a[1] = "--child", a[2] = (char *)kind_names[k], a[3] = dir, a[4] = gpu ? NULL : "--no-gpu", a[5] = NULL;
    b[0] = floor_exe, b[1] = gpu ? cubin[k] : "--no-gpu", b[2] = gpu ? NULL : cubin[k], b[3] = NULL;
    char **c = fp_argv[k];
    c[0] = floor_exe, c[1] = "--alloc", c[2] = "pool", c[3] = cubin[k], c[4] = NULL;
    sample cold;
    if (floor_cubin((kind)k, arch, cubin[k]) != 0 || spawn_child(uk_argv[k], &cold) != 0) goto out;
    printf("%-12s cold first call (fills the cache): %.1f ms, %llu compiles\n", kind_names[k], cold.total,
           cold.compiles);
  }
  for (int p = 0; p < pairs; p++)
    for (int k = 0; k < K_COUNT; k++)
      for (int side = 0; side < 3; side++) {
        /* floor, ukern, then the floor with a pool; reversed in odd pairs */
        int which = p & 1 ? 2 - side : side;
        if (which == 2 && !gpu) continue;
        sample *s = which == 1 ? &uk[k * pairs + p] : which ? &fp[k * pairs + p] : &fl[k * pairs + p];
        if (spawn_child(which == 1 ? uk_argv[k] : which ? fp_argv[k] : fl_argv[k], s) != 0) goto out;
      }
  result r[K_COUNT];
  for (int k = 0; k < K_COUNT; k++) summarise(&fl[k * pairs], &uk[k * pairs], gpu ? &fp[k * pairs] : NULL, pairs, &r[k]);
  print_results(r, pairs, gpu, arch, json);
  rc = 0;
  if (trace && !gpu) printf("\n--trace: no GPU, no driver calls to trace\n");
  if (trace && gpu) {
    char exe_dir[4096];
    snprintf(exe_dir, sizeof exe_dir, "%.*s", (int)(strrchr(self, '/') - self), self);
    int ok = ws_trace_setup(exe_dir) == 0;
    for (int k = 0; ok && k < K_COUNT; k++) {
      char label[2][64];
      snprintf(label[0], sizeof label[0], "%s, floor child", kind_names[k]);
      snprintf(label[1], sizeof label[1], "%s, ukern child", kind_names[k]);
      ok = ws_trace_child(fl_argv[k], label[0], dir) == 0 && ws_trace_child(uk_argv[k], label[1], dir) == 0;
    }
    /* The floor allocating as ukern does: what the allocator costs alone. */
    static const char *const how[2][2] = {{"pool", "raw, floor child allocating from a pool of its own (as ukern)"},
                                          {"async", "raw, floor child allocating with cuMemAllocAsync"}};
    for (int v = 0; ok && v < 2; v++) {
      char *a[] = {floor_exe, "--alloc", (char *)how[v][0], cubin[K_RAW], NULL};
      ok = ws_trace_child(a, how[v][1], dir) == 0;
    }
    if (!ok) rc = 1;
  }
  for (int k = 0; k < K_COUNT; k++)
    if (r[k].warm_hits != pairs) {
      fprintf(stderr, "bench_warm_start: %s: %d of %d warm children compiled or missed the disk cache\n",
              kind_names[k], pairs - r[k].warm_hits, pairs);
      rc = 1;
    }
out:
  free(fl);
  free(fp);
  free(uk);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "bench_warm_start: could not remove %s\n", dir);
  return rc;
}
