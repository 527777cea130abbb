/* Resident blocks per multiprocessor from the cubin (occupancy.h) against
 * the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor, on a GPU:
 * - raw kernels that bind each limit (static shared memory of 20000,
 *   40000 and 49152 bytes, registers capped by -maxrregcount from 32 to
 *   255 on a kernel that wants many, launch bounds of 128 threads) at
 *   block sizes 32 to 1024: the same count, or 0 where the driver refuses
 *   (and past the kernel's launch bounds, where no block can run);
 * - the reduction programs ukern loads (a float32 and a complex128 sum, a
 *   float64 sum with the CUB block combine, a struct argmax over rows and
 *   over columns): the occupancy the planner got at load (uk__spec) equals
 *   the driver's for the program's kernel, and on compute capability
 *   7.0-9.x it came from the cubin (the rules are held there). */
#include "codegen/red_emit.h"
#include "codegen/red_plan.h"
#include "runtime/cudadrv.h"
#include "runtime/kernel_pipeline.h"
#include "runtime/occupancy.h"
#include "red_gpu_util.h"

static int cc_major;

static const char raw_src[] =
    "extern \"C\" __global__ void s20k(float *o) {\n"
    "  __shared__ float s[5000];\n"
    "  s[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x + 1] = s[4999 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void s40k(char *o) {\n"
    "  __shared__ char s[40000];\n"
    "  s[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x + 1] = s[39999 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void s48k(char *o) {\n"
    "  __shared__ char s[49152];\n"
    "  s[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x + 1] = s[49151 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void __launch_bounds__(128) bounded(float *o) { o[threadIdx.x] += 1.0f; }\n"
    "extern \"C\" __global__ void empty() {}\n"
    /* Many values live at once: as many registers as the cap allows. */
    "extern \"C\" __global__ void heavy(const float *x, float *o, int n) {\n"
    "  float v[96];\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < 96; k++) v[k] = x[threadIdx.x + k * n];\n"
    "  float a = 0.0f;\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < 96; k++) a += v[k] * v[95 - k] + v[(k * 7) % 96];\n"
    "  o[threadIdx.x] = a;\n"
    "}\n";

/* The driver's count for fn, -1 where it refuses the block size. */
static int driver_blocks(CUfunction fn, int block) {
  int n = -1;
  return uk__cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, fn, block, 0) == CUDA_SUCCESS ? n : -1;
}

static void raw_kernels(const char *maxrreg) {
  const char *opts[1] = {maxrreg};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = maxrreg ? 1 : 0;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, raw_src, &mo, &m));
  if (!m) return;
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  CUmodule mod = NULL;
  CHECK(image && uk__cu.cuModuleLoadData(&mod, image) == CUDA_SUCCESS);
  static const char *const names[] = {"s20k", "s40k", "s48k", "bounded", "empty", "heavy"};
  static const int blocks[] = {32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024};
  int compared = 0;
  for (size_t j = 0; mod && j < sizeof names / sizeof names[0]; j++) {
    CUfunction fn = NULL;
    CHECK(uk__cu.cuModuleGetFunction(&fn, mod, names[j]) == CUDA_SUCCESS);
    if (!fn) continue;
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
      int mine = uk__occupancy_of_cubin(0, image, bytes, names[j], blocks[b]);
      int theirs = driver_blocks(fn, blocks[b]);
      int regs = -1, most = 0;
      uk__cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn);
      uk__cu.cuFuncGetAttribute(&most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn);
      /* Past the kernel's launch bounds no block runs: 0 here, whatever the
       * driver's count (its calculator checks the device's limit only). */
      int ok = blocks[b] > most ? mine == 0 : mine == (theirs < 0 ? 0 : theirs);
      ut_checks++;
      if (!ok) {
        ut_failures++;
        fprintf(stderr, "%s (%s, %d registers), %d threads: cubin %d blocks, driver %d\n", names[j],
                maxrreg ? maxrreg : "no cap", regs, blocks[b], mine, theirs);
      }
      compared++;
    }
  }
  CHECK(compared == 6 * 11);
  if (mod) uk__cu.cuModuleUnload(mod);
  uk_module_destroy(m);
}

/* Runs k over a (rows, cols) array of t along `axis` (-1: all), then
 * compares each loaded program's occupancy with the driver's. */
static void reduction(uk_reduction *k, uk_dtype t, int64_t rows, int64_t cols, int axis, const char *suffix) {
  if (!k) return;
  int64_t shape[2] = {rows, cols};
  uk_array x, y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, t, 2, shape, 0, NULL, &x));
  CHECK_OK(uk_memset_d8(x.data, 0, (size_t)(rows * cols) * uk_dtype_size(t)));
  uk_arg in = uk_arg_array(&x);
  uk_launch l = axes_of(&axis, axis < 0 ? 0 : 1, 0);
  CHECK_OK(uk_reduction_call(k, &in, 1, &y, 1, &l));
  CHECK_OK(uk_device_synchronize());
  const uk__kernel *kd = (const uk__kernel *)k; /* the first member of every kind's object */
  int seen = 0;
  for (uk__spec *e = atomic_load(&((uk__kernel *)kd)->specs); e; e = e->next) {
    const uk_red_key *key = (const uk_red_key *)e->key;
    if ((key->group == UK_RED_GROUP_COLS) != (strcmp(suffix, "_cols") == 0)) continue; /* another group's program */
    char name[128];
    snprintf(name, sizeof name, "%s%s", kd->name, suffix);
    CUfunction fn = NULL;
    CHECK(uk__cu.cuModuleGetFunction(&fn, e->module, name) == CUDA_SUCCESS);
    if (!fn) continue;
    int theirs = driver_blocks(fn, 256);
    ut_checks++;
    if (e->occupancy != theirs) {
      ut_failures++;
      fprintf(stderr, "%s: the planner got %d blocks per SM, the driver says %d\n", name, e->occupancy, theirs);
    }
    seen++;
  }
  CHECK(seen >= 1);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &x, NULL);
}

static void reductions(void) {
  const char *am = "struct amax { float v; long long i; };\n"
                   "__device__ amax mk(float v, long long i) { amax r; r.v = v; r.i = i; return r; }\n"
                   "__device__ amax pick(const amax &a, const amax &b) {\n"
                   "  return (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b;\n}\n";
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "occ_sum", NULL, NULL);
  reduction(sum, UK_FLOAT32, 1, 1 << 20, -1, "_g");
  reduction(sum, UK_COMPLEX128, 64, 1000, 1, "_g");
  mk_block_reduce = UK_BLOCK_REDUCE_CUB;
  uk_reduction *cub = mk("T x", "T y", "x", "a + b", "y = a", "0", "occ_cub", NULL, NULL);
  reduction(cub, UK_FLOAT64, 1, 1 << 16, -1, "_g");
  mk_block_reduce = UK_BLOCK_REDUCE_UKERN;
  uk_reduction *arg = mk("T x", "int64 y", "mk(x, _J)", "pick(a, b)", "y = a.i", NULL, "occ_argmax", "amax", am);
  reduction(arg, UK_FLOAT32, 4099, 1024, 1, "_g");
  reduction(arg, UK_FLOAT32, 1024, 4096, 0, "_cols");
  uk_reduction_destroy(sum);
  uk_reduction_destroy(cub);
  uk_reduction_destroy(arg);
}

/* On 7.0-9.x the cubin answers (no driver query at load). */
static void held(void) {
  if (cc_major < 7 || cc_major > 9) return;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, raw_src, NULL, &m));
  if (!m) return;
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  CHECK(uk__occupancy_of_cubin(0, image, bytes, "empty", 256) > 0);
  uk_module_destroy(m);
}

/* A known capability's table row (occupancy.c, what the planner uses instead
 * of 9 attribute reads) is what this device reports. */
static void table_row(void) {
  int major = 0, minor = 0;
  CHECK(uk__cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS);
  CHECK(uk__cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS);
  uk_occ_device t;
  if (!uk__occupancy_known_limits(major, minor, &t)) {
    printf("note: compute capability %d.%d has no table row (read from the driver)\n", major, minor);
    return;
  }
  static const CUdevice_attribute lim[] = {
      CU_DEVICE_ATTRIBUTE_WARP_SIZE,                   CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
      CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
      CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK};
  const int got[9] = {t.warp_size,   t.max_threads_per_block, t.max_threads_per_sm, t.max_blocks_per_sm,
                      t.regs_per_sm, t.regs_per_block,        t.smem_per_sm,        t.smem_per_block,
                      t.reserved_smem_per_block};
  for (int j = 0; j < 9; j++) {
    int v = -1;
    CHECK(uk__cu.cuDeviceGetAttribute(&v, lim[j], 0) == CUDA_SUCCESS);
    if (v != got[j]) printf("sm_%d%d: attribute %d is %d, the table says %d\n", major, minor, (int)lim[j], v, got[j]);
    CHECK(v == got[j]);
  }
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  cc_major = info.arch / 10;
  table_row();
  raw_kernels(NULL);
  static const char *const caps[] = {"-maxrregcount=32", "-maxrregcount=40", "-maxrregcount=64",
                                     "-maxrregcount=72", "-maxrregcount=96", "-maxrregcount=128",
                                     "-maxrregcount=168", "-maxrregcount=255"};
  for (size_t j = 0; j < sizeof caps / sizeof caps[0]; j++) raw_kernels(caps[j]);
  reductions();
  held();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_occupancy");
}
