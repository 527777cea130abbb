/* What the two kinds of child process of bench_warm_start share: the
 * clock, bringing up the driver through dlopen (as ukern and any program
 * that does not link libcuda do) and the report line. Compiled into both
 * the ukern child (bench_warm_start, linked with the public libukern) and
 * the floor child (warm_start_floor, linked with neither ukern nor CUDA). */
#ifndef UK_BENCH_WARM_START_CHILD_H
#define UK_BENCH_WARM_START_CHILD_H

#include <stddef.h>

/* CLOCK_MONOTONIC in us: comparable across processes on one machine. */
double ws_now_us(void);

/* The driver entry points the floor child uses (CUresult as int, handles
 * as pointers: no cuda.h needed here). */
typedef struct ws_driver {
  int (*cuInit)(unsigned);
  int (*cuDevicePrimaryCtxRetain)(void **, int);
  int (*cuCtxSetCurrent)(void *);
  int (*cuModuleLoadData)(void **, const void *);
  int (*cuModuleGetFunction)(void **, void *, const char *);
  int (*cuMemAlloc_v2)(unsigned long long *, size_t);
  int (*cuMemcpyHtoD_v2)(unsigned long long, const void *, size_t);
  int (*cuMemcpyDtoH_v2)(void *, unsigned long long, size_t);
  int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                        void **, void **);
  /* Optional (NULL when the driver lacks them): the floor's --alloc
   * variants, which allocate the way ukern does. */
  int (*cuMemPoolCreate)(void **, const void *);
  int (*cuMemPoolSetAttribute)(void *, int, void *);
  int (*cuMemAllocFromPoolAsync)(unsigned long long *, size_t, void *, void *);
  int (*cuMemAllocAsync)(unsigned long long *, size_t, void *);
} ws_driver;

/* dlopen("libcuda.so.1"), its entry points, cuInit(0), and device 0's
 * primary context retained and made current. 0 on success, else -1 with a
 * message on stderr. */
int ws_driver_init(ws_driver *d);

/* The floor kernel both sides compute: y[i] = x[i] * 2 + 1 (elements n). */
#define WS_FLOOR_KERNEL                                                                  \
  "\nextern \"C\" __global__ void _uk_floor_k(const float *x, float *y, int n) {\n"      \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                                   \
  "  if (i < n) y[i] = x[i] * 2.0f + 1.0f;\n"                                            \
  "}\n"

/* Elements of every input array the children upload. */
enum { WS_N = 1024 };

/* Prints the child's report to stdout: "main init result hits compiles ctx
 * def" (times as ws_now_us readings; ctx and def: the ukern child's
 * readings after uk_context_create and after defining the kernel, the
 * floor's = init). */
void ws_report(double t_main, double t_init, double t_result, unsigned long long hits, unsigned long long compiles,
               double t_ctx, double t_def);

/* 1 when libnvrtc is mapped into this process (/proc/self/maps), else 0. */
int ws_nvrtc_mapped(void);

/* Spawns argv with environment envp (stdout to a pipe) and reads its report
 * line into rep[8] (the ws_report fields in order, then the ukern child's
 * "NVRTC loaded" flag: -1 when the line has none). t_spawn: ws_now_us()
 * just before posix_spawn; t_exit: once it was reaped. 0 on success, -1
 * (with a message) when it could not run, failed or reported nothing. */
int ws_spawn(char *const argv[], char *const envp[], double *t_spawn, double *t_exit, double rep[8]);

#endif
