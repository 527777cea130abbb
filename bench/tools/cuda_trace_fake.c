/* A stand-in "real" driver for cuda_trace_selftest: a few entry points
 * with the real ones' shapes that check what reaches them. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

API int cuInit(unsigned flags) { return flags == 0 ? 0 : 1; }

/* 11 arguments like cuLaunchKernel: 6 in registers, 5 on the stack (x86-64). */
API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void *stream, void **params, void **extra) {
  int ok = f == (void *)0x1111 && gx == 2 && gy == 3 && gz == 4 && bx == 5 && by == 6 && bz == 7 &&
           shared == 0xFFFFFFFFu && stream == (void *)0x2222 && params == (void **)0x3333 && extra == (void **)0x4444;
  return ok ? 0 : 700;
}

/* A slow call: 2 ms. */
API int cuModuleLoadData(void **mod, const void *image) {
  struct timespec t = {0, 2000000};
  nanosleep(&t, NULL);
  *mod = (void *)image;
  return 0;
}

API int cuMemcpyHtoD_v2(unsigned long long dst, const void *src, size_t bytes) {
  return dst == 0xFFFFFFFF00000010ull && src == (const void *)0x20 && bytes == (size_t)1 << 40 ? 0 : 1;
}

API int cuGetProcAddress_v2(const char *name, void **pfn, int version, unsigned long long flags, void *status) {
  (void)version, (void)flags;
  if (status) memset(status, 0, sizeof(int));
  *pfn = !strcmp(name, "cuLaunchKernel")     ? (void *)cuLaunchKernel
         : !strcmp(name, "cuModuleLoadData") ? (void *)cuModuleLoadData
         : !strcmp(name, "cuInit")           ? (void *)cuInit
                                             : NULL;
  return *pfn ? 0 : 500;
}
