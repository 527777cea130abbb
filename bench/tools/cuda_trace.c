/* A tracing libcuda.so.1 for bench_warm_start --trace (issue 14): put first
 * on LD_LIBRARY_PATH of one process, it forwards every driver entry point
 * that process reaches to the real driver and records each call's wall time.
 *
 * The real driver is dlopen'd by absolute path: $UK_CUDA_TRACE_REAL, else
 * the first of the usual install paths that is not this file. A process
 * reaches entry points two ways, and both are covered:
 *  - dlsym of a name: the names in NAMED below are exported (the floor and
 *    ukern's bootstrap use these);
 *  - cuGetProcAddress(_v2) (how ukern resolves its whole table): the real
 *    pointer is bound to one of SLOTS generic trampolines, one per distinct
 *    pointer, which is returned instead.
 * Forwarding is generic: every trampoline takes and passes 16 integer-class
 * arguments. That is exact for functions of up to 16 integer/pointer
 * arguments under the x86-64 SysV and AAPCS64 calling conventions (extra
 * arguments are ignored by the callee; the caller pops them), which covers
 * every entry point ukern uses (cudadrv.h: no floating-point or large
 * struct argument by value; cuLaunchKernel's 11 is the most). Every entry
 * point returns CUresult (an int).
 *
 * At exit, if $UK_CUDA_TRACE names a file, writes to it (0600, not through
 * a link):
 *   call NAME START_US DUR_US RESULT    every call in order (START_US:
 *                                       CLOCK_MONOTONIC, the children's clock)
 *   sum NAME COUNT TOTAL_MS MAX_MS      per entry point, by total time
 * This file is a bench instrument: it is built only with the benches and is
 * never linked into anything. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef uintptr_t A;
typedef int (*fwd_fn)(A, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A);
#define PARAMS                                                                                                  \
  A a0, A a1, A a2, A a3, A a4, A a5, A a6, A a7, A a8, A a9, A a10, A a11, A a12, A a13, A a14, A a15
#define ARGS a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15

/* Entry points exported by name: what the bench's children and ukern's
 * bootstrap (cudadrv.c) ask dlsym for, and the usual first calls of other
 * programs. cuGetProcAddress(_v2) are below, not generic. */
#define NAMED(X)                                                                                                \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet)     \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent)                    \
  X(cuModuleLoadData) X(cuModuleGetFunction) X(cuMemAlloc_v2) X(cuMemFree_v2) X(cuMemcpyHtoD_v2)             \
  X(cuMemcpyDtoH_v2) X(cuLaunchKernel) X(cuCtxSynchronize) X(cuMemPoolCreate) X(cuMemPoolSetAttribute)         \
  X(cuMemAllocFromPoolAsync) X(cuMemAllocAsync)

enum { SLOTS = 1000, MAX_CALLS = 1 << 17 };

typedef struct slot {
  const char *name; /* set once, with real, under bind_lock */
  fwd_fn real;
} slot;

typedef struct call {
  int slot, result;
  int64_t t0, t1; /* ns, CLOCK_MONOTONIC */
} call;

static slot slots[SLOTS];
static int nbound = 0;
static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static call calls[MAX_CALLS];
static atomic_int ncalls;
static atomic_int dropped;
static void *real_lib;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void record(int s, int64_t t0, int64_t t1, int r) {
  int i = atomic_fetch_add_explicit(&ncalls, 1, memory_order_relaxed);
  if (i >= MAX_CALLS) {
    atomic_fetch_add_explicit(&dropped, 1, memory_order_relaxed);
    return;
  }
  calls[i] = (call){s, r, t0, t1};
}

static int fwd(int s, PARAMS) {
  fwd_fn f = __atomic_load_n(&slots[s].real, __ATOMIC_ACQUIRE);
  if (!f) return 3; /* CUDA_ERROR_NOT_INITIALIZED: never bound */
  int64_t t0 = now_ns();
  int r = f(ARGS);
  record(s, t0, now_ns(), r);
  return r;
}

/* ---- the real driver */

static int same_file(const char *a, const char *b) {
  struct stat x, y;
  return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void open_real(void) {
  static const char *const usual[] = {
      "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",          "/usr/lib/libcuda.so.1",
      "/usr/lib/aarch64-linux-gnu/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1"};
  Dl_info self;
  const char *me = dladdr((void *)open_real, &self) && self.dli_fname ? self.dli_fname : "";
  const char *env = getenv("UK_CUDA_TRACE_REAL");
  if (env && env[0] == '/' && !same_file(env, me)) {
    real_lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (real_lib) return;
  }
  for (size_t k = 0; k < sizeof usual / sizeof usual[0] && !real_lib; k++)
    if (access(usual[k], R_OK) == 0 && !same_file(usual[k], me)) real_lib = dlopen(usual[k], RTLD_NOW | RTLD_LOCAL);
  if (!real_lib) fprintf(stderr, "cuda_trace: no real libcuda.so.1 (set UK_CUDA_TRACE_REAL to its absolute path)\n");
}

/* The slot of real pointer f (bound to name on first sight); -1 when full. */
static int bind(const char *name, void *f) {
  pthread_mutex_lock(&bind_lock);
  int s = -1;
  for (int k = 0; k < nbound && s < 0; k++)
    if ((void *)slots[k].real == f) s = k;
  if (s < 0 && nbound < SLOTS) {
    s = nbound++;
    slots[s].name = strdup(name);
    __atomic_store_n(&slots[s].real, (fwd_fn)f, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&bind_lock);
  return s;
}

/* ---- generic trampolines: SLOTS functions slot_<n>, n = 0..999 */

#define T1(n) static int slot_##n(PARAMS) { return fwd(n, ARGS); }
#define T10(n) T1(n##0) T1(n##1) T1(n##2) T1(n##3) T1(n##4) T1(n##5) T1(n##6) T1(n##7) T1(n##8) T1(n##9)
#define T100(n) T10(n##0) T10(n##1) T10(n##2) T10(n##3) T10(n##4) T10(n##5) T10(n##6) T10(n##7) T10(n##8) T10(n##9)
T10() T100(1) T100(2) T100(3) T100(4) T100(5) T100(6) T100(7) T100(8) T100(9)
/* slot_0..slot_9 come from T10(): n##0 with an empty n is 0. Slots 10..99: */
T10(1) T10(2) T10(3) T10(4) T10(5) T10(6) T10(7) T10(8) T10(9)

#define E1(n) [n] = slot_##n,
#define E10(n) E1(n##0) E1(n##1) E1(n##2) E1(n##3) E1(n##4) E1(n##5) E1(n##6) E1(n##7) E1(n##8) E1(n##9)
#define E100(n) E10(n##0) E10(n##1) E10(n##2) E10(n##3) E10(n##4) E10(n##5) E10(n##6) E10(n##7) E10(n##8) E10(n##9)
static const fwd_fn trampolines[SLOTS] = {E10() E10(1) E10(2) E10(3) E10(4) E10(5) E10(6) E10(7) E10(8) E10(9)
                                              E100(1) E100(2) E100(3) E100(4) E100(5) E100(6) E100(7) E100(8)
                                                  E100(9)};

/* ---- exported entry points */

/* The slot of an exported name, bound at its first call. */
static int named_slot(const char *name, int *cache) {
  int s = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (s > 0) return s - 1;
  pthread_once(&real_once, open_real);
  void *f = real_lib ? dlsym(real_lib, name) : NULL;
  if (!f || (s = bind(name, f)) < 0) return -1;
  __atomic_store_n(cache, s + 1, __ATOMIC_RELEASE);
  return s;
}

#define EXPORT(fn)                                                                                              \
  __attribute__((visibility("default"))) int fn(PARAMS) {                                                       \
    static int cache;                                                                                           \
    int s = named_slot(#fn, &cache);                                                                            \
    return s < 0 ? 3 : fwd(s, ARGS);                                                                            \
  }
NAMED(EXPORT)
#undef EXPORT

typedef int (*gpa_fn)(const char *, void **, int, unsigned long long, void *);
typedef int (*gpa1_fn)(const char *, void **, int, unsigned long long);

/* A pointer the real driver returned, replaced by its trampoline; our own
 * cuGetProcAddress for that name, so later lookups stay traced. */
static int wrap_proc(const char *symbol, void **pfn, int r, int64_t t0, int which);

__attribute__((visibility("default"))) int cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                                             unsigned long long flags, void *status) {
  pthread_once(&real_once, open_real);
  gpa_fn real = real_lib ? (gpa_fn)dlsym(real_lib, "cuGetProcAddress_v2") : NULL;
  if (!real) return 3;
  int64_t t0 = now_ns();
  int r = real(symbol, pfn, version, flags, status);
  return wrap_proc(symbol, pfn, r, t0, 2);
}

__attribute__((visibility("default"))) int cuGetProcAddress(const char *symbol, void **pfn, int version,
                                                          unsigned long long flags) {
  pthread_once(&real_once, open_real);
  gpa1_fn real = real_lib ? (gpa1_fn)dlsym(real_lib, "cuGetProcAddress") : NULL;
  if (!real) return 3;
  int64_t t0 = now_ns();
  int r = real(symbol, pfn, version, flags);
  return wrap_proc(symbol, pfn, r, t0, 1);
}

static int wrap_proc(const char *symbol, void **pfn, int r, int64_t t0, int which) {
  static int gpa_slot[3];
  int g = named_slot(which == 2 ? "cuGetProcAddress_v2" : "cuGetProcAddress", &gpa_slot[which]);
  if (g >= 0) record(g, t0, now_ns(), r);
  if (r != 0 || !pfn || !*pfn || !symbol) return r;
  if (!strcmp(symbol, "cuGetProcAddress")) {
    *pfn = (void *)(which == 2 ? (void *)cuGetProcAddress_v2 : (void *)cuGetProcAddress);
    return r;
  }
  int s = bind(symbol, *pfn);
  if (s >= 0) *pfn = (void *)trampolines[s];
  else fprintf(stderr, "cuda_trace: more than %d entry points: %s is not traced\n", SLOTS, symbol);
  return r;
}

/* ---- the report */

static int by_total(const void *a, const void *b) {
  const double *x = a, *y = b;
  return x[1] < y[1] ? 1 : x[1] > y[1] ? -1 : 0;
}

__attribute__((destructor)) static void write_report(void) {
  const char *path = getenv("UK_CUDA_TRACE");
  if (!path || !*path) return;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    fprintf(stderr, "cuda_trace: cannot write %s\n", path);
    return;
  }
  int n = atomic_load(&ncalls);
  if (n > MAX_CALLS) n = MAX_CALLS;
  /* Per slot: {slot, total ms, max ms, count}, then by total. */
  double(*sum)[4] = calloc((size_t)nbound + 1, sizeof *sum);
  for (int k = 0; k < n; k++) {
    const call *c = &calls[k];
    fprintf(f, "call %s %.3f %.3f %d\n", slots[c->slot].name, (double)c->t0 / 1e3, (double)(c->t1 - c->t0) / 1e3,
            c->result);
    if (!sum) continue;
    double ms = (double)(c->t1 - c->t0) / 1e6;
    sum[c->slot][1] += ms;
    if (ms > sum[c->slot][2]) sum[c->slot][2] = ms;
    sum[c->slot][3] += 1;
  }
  if (sum) {
    for (int s = 0; s < nbound; s++) sum[s][0] = s;
    qsort(sum, (size_t)nbound, sizeof *sum, by_total);
    for (int s = 0; s < nbound; s++)
      if (sum[s][3] > 0)
        fprintf(f, "sum %s %.0f %.4f %.4f\n", slots[(int)sum[s][0]].name, sum[s][3], sum[s][1], sum[s][2]);
    free(sum);
  }
  if (atomic_load(&dropped)) fprintf(f, "dropped %d\n", atomic_load(&dropped));
  fclose(f);
}
