/* The floor of bench_warm_start: a program that neither links ukern nor
 * compiles, doing only what a first call cannot leave out: bring up the
 * driver (dlopen + cuInit), the primary context, read the cubin file,
 * cuModuleLoadData, upload one input, one launch, copy the result back.
 *
 *   warm_start_floor CUBIN            on a GPU
 *   warm_start_floor --alloc pool CUBIN   allocating as ukern does: a pool
 *                                     of its own (cuMemPoolCreate, release
 *                                     threshold: never) and
 *                                     cuMemAllocFromPoolAsync on the NULL stream
 *   warm_start_floor --alloc async CUBIN  cuMemAllocAsync (the default pool)
 *   warm_start_floor --no-gpu CUBIN   only reads the file (the floor of
 *                                     "image in hand" without a GPU)
 *
 * Prints the report line of warm_start_child.h; exits 1 on any failure or a
 * wrong result. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "warm_start_child.h"

/* The whole of a regular file, malloc'd; NULL on failure. */
static char *read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  char *buf = NULL;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (buf = malloc((size_t)st.st_size))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
      if (n <= 0) break;
      got += (size_t)n;
    }
    if (got != (size_t)st.st_size) {
      free(buf);
      buf = NULL;
    }
    *size = got;
  }
  if (fd >= 0) close(fd);
  if (!buf) fprintf(stderr, "warm_start_floor: cannot read %s\n", path);
  return buf;
}

typedef enum { ALLOC_PLAIN, ALLOC_POOL, ALLOC_ASYNC } alloc_kind;

/* cuMemPoolProps as cuda.h lays it out (88 bytes: allocType, handleTypes,
 * location {type, id}, then fields left zero); the enum values below are
 * cuda.h's. */
enum { POOL_PROPS_BYTES = 88, ALLOC_TYPE_PINNED = 1, LOCATION_TYPE_DEVICE = 1, ATTR_RELEASE_THRESHOLD = 4 };

/* Two device buffers of `bytes`, allocated the `how` way (device 0). */
static int alloc2(const ws_driver *d, alloc_kind how, size_t bytes, unsigned long long *x, unsigned long long *y) {
  if (how == ALLOC_PLAIN) {
    int r = d->cuMemAlloc_v2(x, bytes);
    return r ? r : d->cuMemAlloc_v2(y, bytes);
  }
  if (how == ALLOC_ASYNC) {
    if (!d->cuMemAllocAsync) return -1;
    int r = d->cuMemAllocAsync(x, bytes, NULL);
    return r ? r : d->cuMemAllocAsync(y, bytes, NULL);
  }
  if (!d->cuMemPoolCreate || !d->cuMemPoolSetAttribute || !d->cuMemAllocFromPoolAsync) return -1;
  int props[POOL_PROPS_BYTES / sizeof(int)] = {ALLOC_TYPE_PINNED, 0, LOCATION_TYPE_DEVICE, 0};
  unsigned long long keep = ~0ull;
  void *pool = NULL;
  int r = d->cuMemPoolCreate(&pool, props);
  if (!r) r = d->cuMemPoolSetAttribute(pool, ATTR_RELEASE_THRESHOLD, &keep);
  if (!r) r = d->cuMemAllocFromPoolAsync(x, bytes, pool, NULL);
  return r ? r : d->cuMemAllocFromPoolAsync(y, bytes, pool, NULL);
}

static int run_gpu(const char *path, double t_main, alloc_kind how) {
  ws_driver d;
  if (ws_driver_init(&d) != 0) return 1;
  double t_init = ws_now_us();
  size_t size = 0;
  char *img = read_file(path, &size);
  if (!img) return 1;
  void *ctx, *mod, *fn;
  unsigned long long x, y;
  static float hx[WS_N], hy[WS_N];
  int n = WS_N;
  for (int i = 0; i < n; i++) hx[i] = (float)(i % 13) - 6.0f;
  void *args[] = {&x, &y, &n};
  int r = d.cuDevicePrimaryCtxRetain(&ctx, 0);
  if (!r) r = d.cuCtxSetCurrent(ctx);
  if (!r) r = d.cuModuleLoadData(&mod, img);
  if (!r) r = d.cuModuleGetFunction(&fn, mod, "_uk_floor_k");
  if (!r) r = alloc2(&d, how, sizeof hx, &x, &y);
  if (!r) r = d.cuMemcpyHtoD_v2(x, hx, sizeof hx);
  if (!r) r = d.cuLaunchKernel(fn, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
  if (!r) r = d.cuMemcpyDtoH_v2(hy, y, sizeof hy); /* waits for the launch (legacy stream) */
  double t_result = ws_now_us();
  free(img);
  if (r) {
    fprintf(stderr, "warm_start_floor: driver call failed (%d)\n", r);
    return 1;
  }
  for (int i = 0; i < n; i++)
    if (hy[i] != hx[i] * 2.0f + 1.0f) {
      fprintf(stderr, "warm_start_floor: wrong result at %d: %g\n", i, (double)hy[i]);
      return 1;
    }
  ws_report(t_main, t_init, t_result, 1, 0, t_init, t_init);
  return 0;
}

int main(int argc, char **argv) {
  double t_main = ws_now_us();
  if (argc == 2) return run_gpu(argv[1], t_main, ALLOC_PLAIN);
  if (argc == 4 && !strcmp(argv[1], "--alloc") && (!strcmp(argv[2], "pool") || !strcmp(argv[2], "async")))
    return run_gpu(argv[3], t_main, !strcmp(argv[2], "pool") ? ALLOC_POOL : ALLOC_ASYNC);
  if (argc == 3 && !strcmp(argv[1], "--no-gpu")) {
    size_t size = 0;
    char *img = read_file(argv[2], &size);
    double t_result = ws_now_us();
    if (!img) return 1;
    free(img);
    ws_report(t_main, t_main, t_result, 1, 0, t_main, t_main);
    return 0;
  }
  fprintf(stderr, "usage: warm_start_floor [--no-gpu | --alloc pool|async] CUBIN\n");
  return 2;
}
