/* Host cost per call as a count of instructions (issue 11): the calls of
 * the time-based host-cost rows (bench_elementwise, bench_reduction's small
 * sizes, bench_launch), each run N times in a region that callgrind counts.
 *
 * Meant to run without a GPU against the stand-in driver (fake_driver.c,
 * libcuda.so.1 in LD_LIBRARY_PATH) under
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=hc_measure
 * (bench/tools/host_instructions.py does this and reads the counts): only the main
 * thread inside hc_measure is counted, and each row ends with a dump of its
 * own counts, named after the row. Public API only, so that the same source
 * builds against an older ukern (55dd3c5) to compare.
 *
 * Usage: bench_host_instructions CACHE_DIR [N | --time]. Run it once without
 * valgrind first: the first call of each kernel compiles (NVRTC) and stores
 * it in CACHE_DIR, so the counted run only loads it. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ukern/ukern.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HC_CALLGRIND 1
#endif
#endif
#ifndef HC_CALLGRIND
#define CALLGRIND_DUMP_STATS_AT(what) ((void)(what))
#endif

static void check(uk_status s, const char *what) {
  if (s != UK_OK) {
    fprintf(stderr, "%s: %s\n", what, uk_last_error());
    exit(1);
  }
}

typedef uk_status (*call_fn)(void *);

/* The counted region: n calls of fn(arg). Not inlined, so that callgrind's
 * --toggle-collect can name it. */
__attribute__((noinline)) uk_status hc_measure(call_fn fn, void *arg, int n);
__attribute__((noinline)) uk_status hc_measure(call_fn fn, void *arg, int n) {
  uk_status st = UK_OK;
  for (int k = 0; k < n && st == UK_OK; k++) st = fn(arg);
  return st;
}

static int calls = 1000;

/* --time (on a GPU): each row's host time per call, as the benches take it
 * (the median over 40 batches of 200 calls, the stream drained between
 * batches), so that base and now compare process against process with
 * nothing else in them (bench/tools/host_time.py). */
static int timing;
static void *time_stream;
static int (*stream_sync)(void *);
/* The benches' "GPU time" (bench_reduction's time_red): an event, one call,
 * an event, their elapsed time (the host's part of the launch included). */
static int (*event_create)(void **, unsigned);
static int (*event_record)(void *, void *);
static int (*event_sync)(void *);
static int (*event_elapsed)(float *, void *, void *);

static uk_function *spin_fn;
static uk_grid_launch spin_grid;
static long long spin_cycles = 100000; /* ~50 us at the H200's clock */
static void *spin_args[1] = {&spin_cycles};
static const char spin_source[] =
    "extern \"C\" __global__ void spin(long long cycles) {\n"
    "  long long t0 = clock64();\n"
    "  while (clock64() - t0 < cycles) {}\n"
    "}\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

enum { BATCHES = 40, PER = 200 };

static double median(double *t) {
  qsort(t, BATCHES, sizeof *t, by_value);
  return (t[BATCHES / 2 - 1] + t[BATCHES / 2]) / 2;
}

/* The median GPU time (us) of one call between two events; behind_spin:
 * the call queued behind a 50 us spin kernel, so that the first event runs
 * only once the call's work is already queued (the device's part alone). */
static double event_time(const char *name, call_fn fn, void *arg, void *e0, void *e1, int behind_spin) {
  double t[BATCHES];
  for (int r = -5; r < BATCHES; r++) {
    float ms = 0;
    if (behind_spin) check(uk_function_launch(spin_fn, &spin_grid, spin_args), "spin");
    event_record(e0, time_stream);
    check(fn(arg), name);
    event_record(e1, time_stream);
    event_sync(e1);
    event_elapsed(&ms, e0, e1);
    if (r >= 0) t[r] = ms * 1e3;
  }
  return median(t);
}

/* launches: the call launches a kernel (its GPU-time lines are printed). */
static void row_of(const char *name, call_fn fn, void *arg, int launches) {
  for (int k = 0; k < 3; k++) check(fn(arg), name); /* first call compiles or loads */
  if (timing) {
    double t[BATCHES];
    for (int b = -3; b < BATCHES; b++) {
      stream_sync(time_stream);
      double t0 = now_us();
      check(hc_measure(fn, arg, PER), name);
      if (b >= 0) t[b] = (now_us() - t0) / PER;
    }
    printf("%s\t%.4f\n", name, median(t));
    static void *e0, *e1; /* made once, kept for every row */
    if (!launches || (!e0 && (event_create(&e0, 0) || event_create(&e1, 0)))) return;
    printf("%s, GPU time (event, call, event)\t%.4f\n", name, event_time(name, fn, arg, e0, e1, 0));
    printf("%s, device time (queued behind a spin)\t%.4f\n", name, event_time(name, fn, arg, e0, e1, 1));
    return;
  }
  check(hc_measure(fn, arg, calls), name);
  CALLGRIND_DUMP_STATS_AT(name);
  printf("row: %s\n", name);
}

static void row(const char *name, call_fn fn, void *arg) { row_of(name, fn, arg, 1); }

/* --- the calls --------------------------------------------------------------- */
typedef struct {
  uk_elementwise *k;
  uk_arg in[2];
  uk_array *out;
  uk_launch l;
} ew_args;

static uk_status ew_call(void *p) {
  ew_args *a = p;
  return uk_elementwise_call(a->k, a->in, 2, a->out, 1, &a->l);
}

typedef struct {
  uk_reduction *k;
  uk_arg in;
  uk_array *out;
  uk_launch l;
} red_args;

static uk_status red_call(void *p) {
  red_args *a = p;
  return uk_reduction_call(a->k, &a->in, 1, a->out, 1, &a->l);
}

typedef struct {
  uk_function *f;
  uk_grid_launch g;
  void **args;
} fn_args;

static uk_status fn_call(void *p) {
  fn_args *a = p;
  return uk_function_launch(a->f, &a->g, a->args);
}

typedef struct {
  uk_fusion *f;
  uk_arg in[2];
  uk_array *out;
  uk_launch l;
} fu_args;

static uk_status fu_call(void *p) {
  fu_args *a = p;
  return uk_fusion_call(a->f, a->in, 2, a->out, 1, &a->l);
}

typedef struct {
  uk_context *ctx;
  const char *source;
} hit_args;

/* bench_compile's "in-memory hit": the module of a source compiled before,
 * from the context's memory cache, and its release. */
static uk_status hit_call(void *p) {
  hit_args *a = p;
  uk_module *m;
  uk_status st = uk_module_from_source(a->ctx, a->source, NULL, &m);
  if (st == UK_OK) uk_module_destroy(m);
  return st;
}

/* A stream as the benches have one (cuStreamCreate, non-blocking), from
 * the driver ukern loaded. */
static void *make_stream(void) {
  typedef int (*get_proc_fn)(const char *, void **, int, unsigned long long, void *);
  typedef int (*stream_create_fn)(void **, unsigned);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  get_proc_fn get_proc = lib ? (get_proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
  void *fn = NULL, *sync = NULL, *stream = NULL, *ev[4] = {NULL};
  int q = 0;
  if (!get_proc || get_proc("cuStreamCreate", &fn, 12000, 0, &q) != 0 || !fn ||
      get_proc("cuStreamSynchronize", &sync, 12000, 0, &q) != 0 || !sync ||
      get_proc("cuEventCreate", &ev[0], 12000, 0, &q) != 0 || get_proc("cuEventRecord", &ev[1], 12000, 0, &q) != 0 ||
      get_proc("cuEventSynchronize", &ev[2], 12000, 0, &q) != 0 ||
      get_proc("cuEventElapsedTime", &ev[3], 12000, 0, &q) != 0 || !ev[0] || !ev[1] || !ev[2] || !ev[3] ||
      ((stream_create_fn)fn)(&stream, 1 /* CU_STREAM_NON_BLOCKING */) != 0) {
    fprintf(stderr, "cannot create a stream through libcuda.so.1\n");
    exit(1);
  }
  stream_sync = (int (*)(void *))sync;
  event_create = (int (*)(void **, unsigned))ev[0];
  event_record = (int (*)(void *, void *))ev[1];
  event_sync = (int (*)(void *))ev[2];
  event_elapsed = (int (*)(float *, void *, void *))ev[3];
  time_stream = stream;
  return stream;
}

static const char launch_source[] = /* bench_launch's kernel */
    "extern \"C\" __global__ void tiny(const float* x, float* y, long long n, float a) {\n"
    "  if (n < 0) y[0] = x[0] * a;\n"
    "}\n";

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s CACHE_DIR [CALLS]\n", argv[0]);
    return 2;
  }
  if (argc > 2 && !strcmp(argv[2], "--time")) timing = 1;
  else if (argc > 2) calls = atoi(argv[2]);
  if (calls <= 0) calls = 1000;
  int ndev = 0;
  check(uk_device_count(&ndev), "device count");
  check(uk_device_set_current(0), "set device"); /* as in the benches: the stream's context is current */
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.cache_dir = argv[1];
  uk_context *ctx;
  check(uk_context_create(&o, &ctx), "context");
  void *stream = make_stream();
  uk_module *spin_mod = NULL;
  if (timing) {
    check(uk_module_from_source(ctx, spin_source, NULL, &spin_mod), "spin module");
    check(uk_module_function(spin_mod, "spin", &spin_fn), "spin function");
    spin_grid.grid[0] = spin_grid.block[0] = 1;
    spin_grid.stream = stream;
  }

  /* bench_elementwise "host cost per call": 1-element f32 operands, output given. */
  const int64_t one = 1;
  uk_array a, b, c;
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &one, 0, stream, &a), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &one, 0, stream, &b), "alloc");
  check(uk_array_alloc(ctx, UK_FLOAT32, 1, &one, 0, stream, &c), "alloc");
  ew_args ea;
  memset(&ea, 0, sizeof ea);
  check(uk_elementwise_create(ctx,
                              &(uk_elementwise_spec){.in_params = "T x, T y",
                                                     .out_params = "T z",
                                                     .operation = "z = (x - y) * (x - y)",
                                                     .name = "squared_diff"},
                              &ea.k),
        "elementwise create");
  ea.in[0] = uk_arg_array(&a);
  ea.in[1] = uk_arg_array(&b);
  ea.out = &c;
  ea.l.stream = stream;
  ea.l.size = -1;
  row("elementwise z = (x - y)^2, 1 element, output given", ew_call, &ea);

  /* bench_reduction small_sizes(): sum f32 over n elements, output given
   * (allocated by the first call, as there). */
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.in_params = "T x";
  s.out_params = "T y";
  s.map_expr = "x";
  s.reduce_expr = "a + b";
  s.post_map_expr = "y = a";
  s.identity = "0";
  s.name = "bench_small";
  red_args ra;
  memset(&ra, 0, sizeof ra);
  check(uk_reduction_create(ctx, &s, &ra.k), "reduction create");
  ra.l.stream = stream;
  const int64_t sizes[] = {1, 1024, 1 << 16};
  for (int j = 0; j < 3; j++) {
    uk_array x, y;
    memset(&y, 0, sizeof y);
    check(uk_array_alloc(ctx, UK_FLOAT32, 1, &sizes[j], 0, stream, &x), "alloc");
    ra.in = uk_arg_array(&x);
    ra.out = &y;
    check(uk_reduction_call(ra.k, &ra.in, 1, &y, 1, &ra.l), "first reduction call");
    char name[96];
    snprintf(name, sizeof name, "reduction sum f32 n=%lld, output given", (long long)sizes[j]);
    row(name, red_call, &ra);
    uk_array_free(ctx, &y, stream);
    uk_array_free(ctx, &x, stream);
  }

  /* bench_launch: 1 block of 32 threads, 4 arguments, with and without a
   * declared signature (two modules, as there). */
  uk_module *m1, *m2;
  fn_args fa;
  memset(&fa, 0, sizeof fa);
  check(uk_module_from_source(ctx, launch_source, NULL, &m1), "compile");
  check(uk_module_from_source(ctx, launch_source, NULL, &m2), "compile 2");
  uk_function *f_sig, *f_plain;
  check(uk_module_function(m1, "tiny", &f_sig), "function");
  check(uk_module_function(m2, "tiny", &f_plain), "function 2");
  check(uk_function_set_signature(f_sig, "const float* x, float* y, long long n, float a"), "signature");
  unsigned long long xp = (unsigned long long)(uintptr_t)a.data, yp = (unsigned long long)(uintptr_t)b.data;
  long long n = 1;
  float alpha = 2.0f;
  void *args[4] = {&xp, &yp, &n, &alpha};
  fa.g.grid[0] = 1;
  fa.g.block[0] = 32;
  fa.g.stream = stream;
  fa.args = args;
  fa.f = f_plain;
  row("uk_function_launch, no signature", fn_call, &fa);
  fa.f = f_sig;
  row("uk_function_launch, signature declared", fn_call, &fa);

  /* bench_compile: a module kept alive, then the same source again (a hit). */
  static const char saxpy[] =
      "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, long long n) {\n"
      "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) y[i] = a * x[i] + y[i] + 1.0f;\n"
      "}\n";
  uk_module *keep;
  check(uk_module_from_source(ctx, saxpy, NULL, &keep), "compile saxpy");
  hit_args ha = {ctx, saxpy};
  row_of("uk_module_from_source, in-memory hit (+ uk_module_destroy)", hit_call, &ha, 0);
  uk_module_destroy(keep);

  /* bench_fusion "host cost per call": z = 2 * x + y, 1 element, output given. */
  fu_args fu;
  memset(&fu, 0, sizeof fu);
  check(uk_fusion_create(
            ctx, &(uk_fusion_spec){.inputs = "x, y", .outputs = "z", .program = "z = 2 * x + y", .name = "tiny_fused"},
            &fu.f),
        "fusion create");
  fu.in[0] = uk_arg_array(&a);
  fu.in[1] = uk_arg_array(&b);
  fu.out = &c;
  fu.l.stream = stream;
  row("fusion z = 2 * x + y, 1 element, output given", fu_call, &fu);
  uk_fusion_destroy(fu.f);

  if (spin_mod) uk_module_destroy(spin_mod);
  uk_module_destroy(m2);
  uk_module_destroy(m1);
  uk_reduction_destroy(ra.k);
  uk_elementwise_destroy(ea.k);
  uk_array_free(ctx, &a, stream);
  uk_array_free(ctx, &b, stream);
  uk_array_free(ctx, &c, stream);
  uk_context_destroy(ctx);
  if (!timing) printf("%d calls per row\n", calls);
  return 0;
}
