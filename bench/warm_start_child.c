/* Shared by bench_warm_start's children (warm_start_child.h). */
#include "warm_start_child.h"

#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

double ws_now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int ws_driver_init(ws_driver *d) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "warm_start: %s\n", dlerror());
    return -1;
  }
  /* Each entry point as the pointer type of its field (POSIX dlsym). */
#define WS_SYM(name) *(void **)&d->name = dlsym(lib, #name)
  WS_SYM(cuInit);
  WS_SYM(cuDevicePrimaryCtxRetain);
  WS_SYM(cuCtxSetCurrent);
  WS_SYM(cuModuleLoadData);
  WS_SYM(cuModuleGetFunction);
  WS_SYM(cuMemAlloc_v2);
  WS_SYM(cuMemcpyHtoD_v2);
  WS_SYM(cuMemcpyDtoH_v2);
  WS_SYM(cuLaunchKernel);
#undef WS_SYM
  if (!d->cuInit || !d->cuDevicePrimaryCtxRetain || !d->cuCtxSetCurrent || !d->cuModuleLoadData ||
      !d->cuModuleGetFunction || !d->cuMemAlloc_v2 || !d->cuMemcpyHtoD_v2 || !d->cuMemcpyDtoH_v2 ||
      !d->cuLaunchKernel) {
    fprintf(stderr, "warm_start: libcuda.so.1 lacks a driver entry point\n");
    return -1;
  }
  int r = d->cuInit(0);
  if (r != 0) {
    fprintf(stderr, "warm_start: cuInit failed (%d)\n", r);
    return -1;
  }
  return 0;
}

void ws_report(double t_main, double t_init, double t_result, unsigned long long hits, unsigned long long compiles,
               double t_ctx, double t_def) {
  printf("%.3f %.3f %.3f %llu %llu %.3f %.3f\n", t_main, t_init, t_result, hits, compiles, t_ctx, t_def);
  fflush(stdout);
}
