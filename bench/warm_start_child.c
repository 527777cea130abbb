/* Shared by bench_warm_start's children (warm_start_child.h). */
#include "warm_start_child.h"

#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
  WS_SYM(cuMemPoolCreate);
  WS_SYM(cuMemPoolSetAttribute);
  WS_SYM(cuMemAllocFromPoolAsync);
  WS_SYM(cuMemAllocAsync);
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
  /* Device 0's primary context too: creating it costs ~100 ms and varies by
   * +-15 ms from process to process, and each side would otherwise pay it
   * at a different place (the floor here, ukern inside its first call). */
  void *ctx;
  if ((r = d->cuDevicePrimaryCtxRetain(&ctx, 0)) != 0 || (r = d->cuCtxSetCurrent(ctx)) != 0) {
    fprintf(stderr, "warm_start: no primary context on device 0 (%d)\n", r);
    return -1;
  }
  return 0;
}

void ws_report(double t_main, double t_init, double t_result, unsigned long long hits, unsigned long long compiles,
               double t_ctx, double t_def) {
  printf("%.3f %.3f %.3f %llu %llu %.3f %.3f\n", t_main, t_init, t_result, hits, compiles, t_ctx, t_def);
  fflush(stdout);
}

int ws_spawn(char *const argv[], char *const envp[], double *t_spawn, double *t_exit, double rep[8]) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  pid_t pid;
  *t_spawn = ws_now_us();
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  char buf[256];
  size_t got = 0;
  ssize_t n;
  while (rc == 0 && got < sizeof buf - 1 && (n = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)n;
  buf[got] = '\0';
  close(fds[0]);
  int status = 0;
  if (rc != 0 || waitpid(pid, &status, 0) != pid) return -1;
  *t_exit = ws_now_us();
  rep[7] = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      sscanf(buf, "%lf %lf %lf %lf %lf %lf %lf %lf", &rep[0], &rep[1], &rep[2], &rep[3], &rep[4], &rep[5], &rep[6],
             &rep[7]) < 7) {
    fprintf(stderr, "bench_warm_start: child %s %s failed\n", argv[0], argv[1] ? argv[1] : "");
    return -1;
  }
  return 0;
}

int ws_nvrtc_mapped(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[4096];
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f)) found = strstr(line, "libnvrtc") != NULL;
  if (f) fclose(f);
  return found;
}
