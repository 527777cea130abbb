/* Floors measured in the bench's own run (floor.h). */
#include "floor.h"

#include <cuda.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "runtime/compile.h"

extern char **environ;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* One NVRTC compile of a CUB program whose text is new (name, round). */
static double nvrtc_once(const char *name, int round) {
  char src[512];
  snprintf(src, sizeof src,
           "#include <cub/warp/warp_reduce.cuh>\n"
           "extern \"C\" __global__ void %s_%d(float *p) {\n"
           "  typedef cub::WarpReduce<float> W;\n"
           "  __shared__ typename W::TempStorage t;\n"
           "  p[threadIdx.x] = W(t).Sum(p[threadIdx.x]);\n"
           "}\n",
           name, round);
  const char *const *dirs = NULL;
  int ndirs = 0;
  if (uk__nvrtc_include_dirs(&dirs, &ndirs) != UK_OK) return -1;
  const char *opts[40];
  char incs[32][4096];
  int no = 0;
  opts[no++] = "-arch=sm_90";
  opts[no++] = "-pch";
  for (int k = 0; k < ndirs && k < 32; k++) {
    snprintf(incs[k], sizeof incs[k], "-I%s", dirs[k]);
    opts[no++] = incs[k];
  }
  nvrtcProgram p;
  if (nvrtcCreateProgram(&p, src, "floor.cu", 0, NULL, NULL) != NVRTC_SUCCESS) return -1;
  double t = now_ms();
  nvrtcResult r = nvrtcCompileProgram(p, no, opts);
  t = now_ms() - t;
  size_t n = 0;
  if (r == NVRTC_SUCCESS && nvrtcGetCUBINSize(p, &n) == NVRTC_SUCCESS && n > 0) {
    char *img = malloc(n);
    if (img) nvrtcGetCUBIN(p, img); /* as ukern takes the cubin */
    free(img);
  }
  nvrtcDestroyProgram(&p);
  return r == NVRTC_SUCCESS ? t : -1;
}

/* cuInit, the primary context, cuModuleLoadData of the file, one launch of
 * _uk_floor_k, its result copied back: nothing a program could leave out. */
static int load_and_launch(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 1;
  static char img[64 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib || n == 0) return 1;
#define SYM(name, ...) CUresult (*name)(__VA_ARGS__) = (CUresult(*)(__VA_ARGS__))dlsym(lib, #name)
  SYM(cuInit, unsigned);
  SYM(cuDevicePrimaryCtxRetain, CUcontext *, CUdevice);
  SYM(cuCtxSetCurrent, CUcontext);
  SYM(cuModuleLoadData, CUmodule *, const void *);
  SYM(cuModuleGetFunction, CUfunction *, CUmodule, const char *);
  SYM(cuMemAlloc_v2, CUdeviceptr *, size_t);
  SYM(cuLaunchKernel, CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
      void **, void **);
  SYM(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t);
#undef SYM
  CUcontext c;
  CUmodule m;
  CUfunction fn;
  CUdeviceptr d;
  float out = 0;
  void *args[] = {&d};
  if (!cuInit || !cuMemcpyDtoH_v2 || cuInit(0) || cuDevicePrimaryCtxRetain(&c, 0) || cuCtxSetCurrent(c) ||
      cuModuleLoadData(&m, img) || cuModuleGetFunction(&fn, m, "_uk_floor_k") || cuMemAlloc_v2(&d, 4) ||
      cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL) || cuMemcpyDtoH_v2(&out, d, 4))
    return 1;
  return out == 42.0f ? 0 : 1;
}

int floor_child_main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "--floor-nvrtc") == 0) {
    double a = nvrtc_once(argv[2], 0), b = nvrtc_once(argv[2], 1);
    if (a < 0 || b < 0) return 1;
    printf("%.4f %.4f\n", a, b);
    return 0;
  }
  if (argc > 2 && strcmp(argv[1], "--floor-load") == 0) return load_and_launch(argv[2]);
  return -1;
}

int floor_nvrtc_cub(const char *self, const char *name, double *first_ms, double *second_ms) {
  char cmd[4608];
  snprintf(cmd, sizeof cmd, "'%s' --floor-nvrtc '%s'", self, name);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  int ok = fscanf(p, "%lf %lf", first_ms, second_ms) == 2;
  return pclose(p) == 0 && ok ? 0 : -1;
}

int floor_write_cubin(const char *source, int arch, const char *path) {
  static const char k[] = "\nextern \"C\" __global__ void _uk_floor_k(float *p) { *p = 42.0f; }\n";
  size_t n = strlen(source);
  char *src = malloc(n + sizeof k);
  if (!src) return -1;
  memcpy(src, source, n);
  memcpy(src + n, k, sizeof k);
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = "floor";
  req.arch = arch;
  uk__binary *bin = NULL;
  int rc = -1;
  if (uk__nvrtc_compile(&req, &bin) == UK_OK) {
    FILE *f = fopen(path, "wb");
    if (f && fwrite(bin->image, 1, bin->image_size, f) == bin->image_size) rc = 0;
    if (f && fclose(f) != 0) rc = -1;
  }
  uk__binary_release(bin);
  free(src);
  return rc;
}

double floor_spawn_ms(char *const argv[]) {
  pid_t pid;
  int status = 0;
  double t = now_ms();
  if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0) return -1;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return now_ms() - t;
}
