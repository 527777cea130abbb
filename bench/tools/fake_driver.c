/* A stand-in CUDA driver (built as libcuda.so.1) for bench_host_instructions:
 * ukern runs its whole host path on a machine without a GPU, so that
 * callgrind can count the instructions of a call.
 *
 * One H200-like device (sm_90, 132 SMs, 141 GB). Bodies are trivial and
 * succeed: "device memory" is host memory (so copies and memsets work),
 * modules, functions, streams, events and pools are small heap handles, a
 * launch does nothing. Each thread has a context stack, like the driver.
 * Entry points ukern resolves but these benches never reach answer
 * CUDA_ERROR_NOT_SUPPORTED and say so on stderr, so a path that starts to
 * need one is seen at once.
 *
 * Only cuGetProcAddress(_v2) is exported: ukern (now and at 55dd3c5) finds
 * every entry point through it. */
#include <cuda.h>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

enum { STACK = 16, SMS = 132 };

static struct { int ordinal; } primary; /* the one context's storage */
#define PRIMARY ((CUcontext)(void *)&primary)
/* initial-exec: a thread-local read is one instruction, not a call into
 * ld.so's __tls_get_addr (which would count as the caller's). */
#define TLS _Thread_local __attribute__((tls_model("initial-exec")))
static TLS CUcontext ctx_stack[STACK];
static TLS int ctx_depth;

static CUresult fk_cuInit(unsigned flags) { return flags == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
static CUresult fk_cuDriverGetVersion(int *v) {
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
static CUresult fk_cuGetErrorName(CUresult r, const char **s) {
  *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : r == CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_FAKE";
  return CUDA_SUCCESS;
}
static CUresult fk_cuGetErrorString(CUresult r, const char **s) {
  *s = r == CUDA_SUCCESS ? "no error" : "an error of the stand-in driver";
  return CUDA_SUCCESS;
}

/* --- device ---------------------------------------------------------------- */
static CUresult fk_cuDeviceGetCount(int *n) {
  *n = 1;
  return CUDA_SUCCESS;
}
static CUresult fk_cuDeviceGet(CUdevice *d, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult fk_cuDeviceGetName(char *name, int len, CUdevice d) {
  (void)d;
  snprintf(name, (size_t)len, "NVIDIA H200 (stand-in driver)");
  return CUDA_SUCCESS;
}
static CUresult fk_cuDeviceTotalMem(size_t *bytes, CUdevice d) {
  (void)d;
  *bytes = (size_t)150754820096ull;
  return CUDA_SUCCESS;
}
static CUresult fk_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  (void)d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = SMS; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: *v = 64; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: *v = 2147483647; break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: *v = 65535; break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 49152; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *v = 233472; break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: *v = 32; break;
  case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *v = 1024; break;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *v = 65536; break;
  case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: *v = 65536; break;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1980000; break;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 3201000; break;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 6144; break;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 62914560; break;
  case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: *v = 3; break;
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *v = 0x19; break;
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: *v = 0; break;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
  case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
  case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
  case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
  case CU_DEVICE_ATTRIBUTE_ECC_ENABLED: *v = 1; break;
  default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}

/* --- contexts: one primary context, a stack per thread --------------------- */
static CUresult fk_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  if (d != 0) return CUDA_ERROR_INVALID_DEVICE;
  *c = PRIMARY;
  return CUDA_SUCCESS;
}
static CUresult fk_cuDevicePrimaryCtxRelease(CUdevice d) { return d == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
static CUresult fk_cuCtxGetCurrent(CUcontext *c) {
  *c = ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
  return CUDA_SUCCESS;
}
static CUresult fk_cuCtxSetCurrent(CUcontext c) {
  if (ctx_depth)
    ctx_stack[ctx_depth - 1] = c;
  else if (c)
    ctx_stack[ctx_depth++] = c;
  if (ctx_depth && !c) ctx_depth--;
  return CUDA_SUCCESS;
}
static CUresult fk_cuCtxPushCurrent(CUcontext c) {
  if (!c || ctx_depth == STACK) return CUDA_ERROR_INVALID_VALUE;
  ctx_stack[ctx_depth++] = c;
  return CUDA_SUCCESS;
}
static CUresult fk_cuCtxPopCurrent(CUcontext *c) {
  if (!ctx_depth) return CUDA_ERROR_INVALID_CONTEXT;
  CUcontext top = ctx_stack[--ctx_depth];
  if (c) *c = top;
  return CUDA_SUCCESS;
}
static CUresult fk_cuCtxGetDevice(CUdevice *d) {
  if (!ctx_depth) return CUDA_ERROR_INVALID_CONTEXT;
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult fk_cuCtxSynchronize(void) { return CUDA_SUCCESS; }
static CUresult fk_cuCtxGetStreamPriorityRange(int *least, int *greatest) {
  if (least) *least = 0;
  if (greatest) *greatest = -5;
  return CUDA_SUCCESS;
}

/* --- streams and events: heap handles -------------------------------------- */
static CUresult new_handle(void **out) {
  *out = malloc(16);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult fk_cuStreamCreate(CUstream *s, unsigned flags) {
  (void)flags;
  return new_handle((void **)s);
}
static CUresult fk_cuStreamCreateWithPriority(CUstream *s, unsigned flags, int priority) {
  (void)flags, (void)priority;
  return new_handle((void **)s);
}
static CUresult fk_cuStreamDestroy(CUstream s) {
  free(s);
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamGetCtx(CUstream s, CUcontext *c) {
  (void)s;
  *c = PRIMARY;
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamGetDevice(CUstream s, CUdevice *d) {
  (void)s;
  *d = 0;
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamSynchronize(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamQuery(CUstream s) {
  (void)s;
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  (void)s, (void)e, (void)flags;
  return CUDA_SUCCESS;
}
static CUresult fk_cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) {
  (void)s;
  *st = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}
static CUresult fk_cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) {
  static TLS CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  CUstreamCaptureMode old = mode;
  mode = *m;
  *m = old;
  return CUDA_SUCCESS;
}
static CUresult fk_cuEventCreate(CUevent *e, unsigned flags) {
  (void)flags;
  return new_handle((void **)e);
}
static CUresult fk_cuEventDestroy(CUevent e) {
  free(e);
  return CUDA_SUCCESS;
}
static CUresult fk_cuEventRecord(CUevent e, CUstream s) {
  (void)e, (void)s;
  return CUDA_SUCCESS;
}
static CUresult fk_cuEventSynchronize(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
static CUresult fk_cuEventQuery(CUevent e) {
  (void)e;
  return CUDA_SUCCESS;
}
static CUresult fk_cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  (void)a, (void)b;
  *ms = 0.001f;
  return CUDA_SUCCESS;
}

/* --- modules and functions -------------------------------------------------- */
/* A module keeps what ukern asks the driver about its cubin: the data
 * symbols (name, size; cuModuleGetGlobal answers with the size the real
 * driver would, a reduction sizes its partials by one, and a zeroed host
 * buffer) and each kernel's parameters (cuFuncGetParamInfo, from the
 * EIATTR_KPARAM_INFO records of .nv.info.<kernel>: u32 index, u16 ordinal,
 * u16 offset, u32 flags with the size in bits 18..31). */
enum { MAX_GLOBALS = 32, MAX_KERNELS = 16, MAX_PARAMS = 64 };
typedef struct {
  char name[64];
  size_t bytes;
  void *data;
} fake_global;
typedef struct {
  char name[256];
  int nparams;
  unsigned short offset[MAX_PARAMS], size[MAX_PARAMS];
} fake_fn;
typedef struct {
  int n, nk;
  fake_global g[MAX_GLOBALS];
  fake_fn k[MAX_KERNELS];
} fake_module;

static void read_params(fake_fn *f, const unsigned char *p, size_t n) {
  for (size_t at = 0; at + 4 <= n;) {
    unsigned fmt = p[at], attr = p[at + 1], len = fmt == 4 ? (unsigned)(p[at + 2] | p[at + 3] << 8) : 0;
    const unsigned char *v = p + at + 4;
    if (fmt == 4 && attr == 0x17 && len == 12 && at + 4 + len <= n) {
      unsigned ord = (unsigned)(v[4] | v[5] << 8), off = (unsigned)(v[6] | v[7] << 8);
      unsigned flags = (unsigned)(v[8] | v[9] << 8 | v[10] << 16 | (unsigned)v[11] << 24);
      if (ord < MAX_PARAMS) {
        f->offset[ord] = (unsigned short)off;
        f->size[ord] = (unsigned short)(flags >> 18);
        if ((int)ord >= f->nparams) f->nparams = (int)ord + 1;
      }
    }
    at += 4 + len;
  }
}

/* The image is ukern's own cubin: trusted, not bounds-checked. */
static void read_module(fake_module *m, const unsigned char *img) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)(const void *)img;
  if (memcmp(img, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(const void *)(img + eh->e_shoff);
  const char *secnames = (const char *)img + sh[eh->e_shstrndx].sh_offset;
  for (int k = 0; k < eh->e_shnum; k++) {
    const char *sec = secnames + sh[k].sh_name;
    if (strncmp(sec, ".nv.info.", 9) == 0 && m->nk < MAX_KERNELS) {
      snprintf(m->k[m->nk].name, sizeof m->k[m->nk].name, "%s", sec + 9);
      read_params(&m->k[m->nk++], img + sh[k].sh_offset, sh[k].sh_size);
    }
    if (sh[k].sh_type != SHT_SYMTAB || sh[k].sh_link >= eh->e_shnum) continue;
    const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)(img + sh[k].sh_offset);
    const char *names = (const char *)img + sh[sh[k].sh_link].sh_offset;
    for (size_t j = 0; j < sh[k].sh_size / sizeof *sym && m->n < MAX_GLOBALS; j++)
      if (ELF64_ST_TYPE(sym[j].st_info) == STT_OBJECT && sym[j].st_size) {
        fake_global *g = &m->g[m->n];
        snprintf(g->name, sizeof g->name, "%s", names + sym[j].st_name);
        g->bytes = sym[j].st_size;
        if ((g->data = calloc(1, g->bytes))) m->n++;
      }
  }
}

static CUresult fk_cuModuleLoadData(CUmodule *m, const void *image) {
  fake_module *p = calloc(1, sizeof *p);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  read_module(p, image);
  *m = (CUmodule)(void *)p;
  return CUDA_SUCCESS;
}
static CUresult fk_cuModuleLoadDataEx(CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v) {
  (void)n, (void)o, (void)v;
  return fk_cuModuleLoadData(m, image);
}
static CUresult fk_cuModuleUnload(CUmodule m) {
  fake_module *p = (fake_module *)(void *)m;
  for (int k = 0; k < p->n; k++) free(p->g[k].data);
  free(p);
  return CUDA_SUCCESS;
}
/* A kernel the module's cubin lists lives in the module (freed with it, as
 * the driver does); any other name gets a function of its own that lives
 * as long as the process (nothing here reads either after the unload). */
static CUresult fk_cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
  fake_module *fm = (fake_module *)(void *)m;
  for (int k = 0; k < fm->nk; k++)
    if (strcmp(fm->k[k].name, name) == 0) {
      *f = (CUfunction)(void *)&fm->k[k];
      return CUDA_SUCCESS;
    }
  fake_fn *p = calloc(1, sizeof *p);
  if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
  snprintf(p->name, sizeof p->name, "%s", name);
  *f = (CUfunction)(void *)p;
  return CUDA_SUCCESS;
}
static CUresult fk_cuModuleGetGlobal(CUdeviceptr *p, size_t *bytes, CUmodule m, const char *name) {
  fake_module *fm = (fake_module *)(void *)m;
  for (int k = 0; k < fm->n; k++)
    if (strcmp(fm->g[k].name, name) == 0) {
      if (p) *p = (CUdeviceptr)(uintptr_t)fm->g[k].data;
      if (bytes) *bytes = fm->g[k].bytes;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}
static CUresult fk_cuFuncGetName(const char **name, CUfunction f) {
  *name = ((fake_fn *)(void *)f)->name;
  return CUDA_SUCCESS;
}
static CUresult fk_cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset, size_t *size) {
  const fake_fn *p = (const fake_fn *)(const void *)f;
  if (index >= (size_t)p->nparams) return CUDA_ERROR_INVALID_VALUE;
  *offset = p->offset[index];
  *size = p->size[index];
  return CUDA_SUCCESS;
}
static CUresult fk_cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
  (void)f;
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = 32; break;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = 90; break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = 49152; break;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *v = -1; break;
  default: *v = 0; break;
  }
  return CUDA_SUCCESS;
}
static CUresult fk_cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  (void)f, (void)a, (void)v;
  return CUDA_SUCCESS;
}
static CUresult fk_cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t shared) {
  (void)f, (void)shared;
  int per = block > 0 ? 2048 / block : 0;
  *n = per > 32 ? 32 : per;
  return CUDA_SUCCESS;
}
static CUresult fk_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, unsigned shared, CUstream s, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)params,
      (void)extra;
  return CUDA_SUCCESS;
}
static CUresult fk_cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra) {
  (void)c, (void)f, (void)params, (void)extra;
  return CUDA_SUCCESS;
}

/* --- memory: host memory stands for device memory --------------------------- */
static CUresult fk_cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  void *m = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemFree(CUdeviceptr p) {
  free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s) {
  (void)s;
  return fk_cuMemAlloc(p, bytes);
}
static CUresult fk_cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  (void)s;
  return fk_cuMemFree(p);
}
static CUresult fk_cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
  (void)props;
  return new_handle((void **)pool);
}
static CUresult fk_cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
  (void)pool, (void)a, (void)v;
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t bytes, CUmemoryPool pool, CUstream s) {
  (void)pool, (void)s;
  return fk_cuMemAlloc(p, bytes);
}
static CUresult fk_cuMemGetInfo(size_t *free_bytes, size_t *total) {
  *free_bytes = (size_t)140000000000ull;
  *total = (size_t)150754820096ull;
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n) {
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  (void)st;
  return fk_cuMemcpyHtoD(d, s, n);
}
static CUresult fk_cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream st) {
  (void)st;
  return fk_cuMemcpyDtoH(d, s, n);
}
static CUresult fk_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  (void)st;
  return fk_cuMemcpyDtoD(d, s, n);
}
static CUresult fk_cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  memset((void *)(uintptr_t)d, v, n);
  return CUDA_SUCCESS;
}
static CUresult fk_cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
  (void)st;
  return fk_cuMemsetD8(d, v, n);
}
static CUresult fk_cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream st) {
  (void)st;
  unsigned *p = (unsigned *)(uintptr_t)d;
  for (size_t k = 0; k < n; k++) p[k] = v;
  return CUDA_SUCCESS;
}
static CUresult fk_cuPointerGetAttribute(void *out, CUpointer_attribute a, CUdeviceptr p) {
  (void)p;
  switch (a) {
  case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)out = PRIMARY; break;
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)out = CU_MEMORYTYPE_DEVICE; break;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)out = 0; break;
  default: return CUDA_ERROR_NOT_SUPPORTED;
  }
  return CUDA_SUCCESS;
}

/* --- what the benches never reach ------------------------------------------- */
#define UNSUPPORTED(X)                                                                                  \
  X(cuLaunchCooperativeKernel) X(cuMemsetD16) X(cuMemsetD32) X(cuMemsetD16Async) X(cuMemcpy2D)         \
  X(cuMemcpy2DAsync) X(cuMemcpy3D) X(cuMemAllocPitch) X(cuMemHostAlloc) X(cuMemFreeHost)               \
  X(cuMemHostRegister) X(cuMemHostUnregister) X(cuMemHostGetDevicePointer) X(cuArray3DCreate)          \
  X(cuArrayDestroy) X(cuTexObjectCreate) X(cuTexObjectDestroy) X(cuSurfObjectCreate)                   \
  X(cuSurfObjectDestroy) X(cuDeviceCanAccessPeer) X(cuCtxEnablePeerAccess)        \
  X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions)

#define FK_STUB_(fn)                                                          \
  static CUresult fk_##fn(void) {                                             \
    fprintf(stderr, "fake libcuda: %s is not implemented\n", #fn);            \
    return CUDA_ERROR_NOT_SUPPORTED;                                          \
  }
UNSUPPORTED(FK_STUB_)
#undef FK_STUB_

#define IMPLEMENTED(X)                                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)         \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceTotalMem) X(cuDeviceGetAttribute)                     \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent)    \
  X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)                      \
  X(cuCtxGetStreamPriorityRange) X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy) \
  X(cuStreamGetCtx) X(cuStreamGetDevice) X(cuStreamSynchronize) X(cuStreamQuery)                    \
  X(cuStreamWaitEvent) X(cuStreamIsCapturing) X(cuThreadExchangeStreamCaptureMode) X(cuEventCreate) \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery) X(cuEventElapsedTime)    \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction)                \
  X(cuModuleGetGlobal) X(cuFuncGetName) X(cuFuncGetParamInfo) X(cuFuncGetAttribute)                 \
  X(cuFuncSetAttribute) X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuLaunchKernel)            \
  X(cuLaunchKernelEx) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync) X(cuMemFreeAsync)               \
  X(cuMemPoolCreate) X(cuMemPoolSetAttribute) X(cuMemAllocFromPoolAsync) X(cuMemGetInfo)            \
  X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)         \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD32Async)                         \
  X(cuPointerGetAttribute)

/* The names are stringised before cuda.h's macros (cuMemAlloc ->
 * cuMemAlloc_v2) could expand them: ukern asks for the base names. */
#define FK_ENTRY_(fn) {#fn, (void *)fk_##fn},
static const struct {
  const char *name;
  void *fn;
} table[] = {IMPLEMENTED(FK_ENTRY_) UNSUPPORTED(FK_ENTRY_)};
#undef FK_ENTRY_

API CUresult cuGetProcAddress_v2(const char *name, void **pfn, int version, cuuint64_t flags,
                                 CUdriverProcAddressQueryResult *status) {
  (void)version, (void)flags;
  for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
    if (strcmp(name, table[k].name) == 0) {
      *pfn = table[k].fn;
      if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
      return CUDA_SUCCESS;
    }
  *pfn = NULL;
  if (status) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}
