/* Lean cubins for generated reductions: NVRTC's PTX of a real reduction
 * program loses CUB's unreferenced constants and nothing else (and still
 * assembles with the toolkit's ptxas when there is one); with a GPU, the
 * driver-built cubin loads, keeps _uk_partial_size and lacks the constants
 * NVRTC's own cubin carries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "runtime/compile.h"
#include "runtime/context.h"
#include "runtime/cudadrv.h"
#include "runtime/device.h"
#include "runtime/lean_cubin.h"
#include "runtime/ptx_strip.h"
#include "testutil.h"

/* A libcu++ constant every CUB program instantiates. */
static const char cccl_constant[] = "_ZN4cuda3std3__417integral_constantIbLb1EE5valueE";

static int count_global_defs(const char *ptx) {
  int n = 0;
  for (const char *p = ptx; (p = strstr(p, "\n.global ")); p++) n++;
  return n;
}

static char *reduction_source(int arch) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = arch;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_reduction_spec spec = {"T x", "T y", "x", "a + b", "y = a", "0", "lean_sum", NULL, NULL, NULL, 0};
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &k));
  int64_t shape[1] = {1001};
  uk_array x;
  CHECK_OK(uk_array_init(&x, 0x10000, UK_FLOAT32, 1, shape));
  uk_array y; /* the 0-d result */
  CHECK_OK(uk_array_init(&y, 0x20000, UK_FLOAT32, 0, NULL));
  uk_arg in = uk_arg_array(&x);
  char *src = NULL;
  if (k) CHECK_OK(uk_reduction_source(k, &in, 1, &y, 1, NULL, &src));
  uk_reduction_destroy(k);
  uk_context_destroy(ctx);
  return src;
}

static void check_ptx(const char *src, int arch) {
  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = "lean_sum";
  req.arch = arch;
  req.ptx_only = 1;
  uk__binary *ptx = NULL;
  CHECK_OK(uk__nvrtc_compile(&req, &ptx));
  if (!ptx) return;
  CHECK(ptx->is_ptx && strstr(ptx->image, ".target sm_"));
  int before = count_global_defs(ptx->image);
  uk_strbuf lean;
  uk__sb_init(&lean);
  int dropped = -1;
  CHECK_OK(uk__ptx_drop_unused_globals(ptx->image, ptx->image_size, "_uk_", &lean, &dropped));
  const char *l = uk__sb_str(&lean);
  int after = count_global_defs(l);
  printf("PTX .global definitions: %d before, %d after (%d dropped); %zu -> %zu bytes\n", before, after, dropped,
         ptx->image_size, lean.len);
  CHECK(after == 1 && strstr(l, " .b8 _uk_partial_size[") != NULL);
  CHECK(dropped == before - after && strstr(ptx->image, cccl_constant) && !strstr(l, cccl_constant));
  CHECK(strstr(l, ".entry lean_sum_g(") && strstr(l, ".entry lean_sum_cols(") && strstr(l, ".entry lean_sum_p("));
  /* only definitions went: every other line is still there, in order */
  size_t kept_lines = 0, orig_lines = 0;
  for (const char *p = l; *p; p++) kept_lines += *p == '\n';
  for (const char *p = ptx->image; *p; p++) orig_lines += *p == '\n';
  CHECK(kept_lines + (size_t)dropped == orig_lines);

#ifdef UK_TEST_PTXAS
  char dir[] = "/tmp/uk_lean_XXXXXX";
  if (access(UK_TEST_PTXAS, X_OK) != 0) {
    printf("note: %s is not here; the trimmed PTX was not assembled\n", UK_TEST_PTXAS);
  } else if (mkdtemp(dir)) {
    char path[64], cmd[512];
    snprintf(path, sizeof path, "%s/lean.ptx", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
      fwrite(l, 1, lean.len, f);
      fclose(f);
      snprintf(cmd, sizeof cmd, "'%s' -arch=sm_%d '%s' -o '%s/lean.cubin'", UK_TEST_PTXAS, arch, path, dir);
      int rc = system(cmd);
      CHECK(rc == 0);
      if (rc != 0) fprintf(stderr, "ptxas rejected the trimmed PTX: %s\n", cmd);
      snprintf(cmd, sizeof cmd, "%s/lean.cubin", dir);
      remove(cmd);
    }
    remove(path);
    rmdir(dir);
  }
#endif
  uk__sb_release(&lean);
  uk__binary_release(ptx);
}

/* Loads an image and reports whether the CCCL constant and our partial
 * size symbol are there. */
static void symbols(const uk__binary *b, int *has_cccl, int *has_partial) {
  CUmodule m = NULL;
  CHECK(uk__cu.cuModuleLoadData(&m, b->image) == CUDA_SUCCESS);
  CUdeviceptr p;
  size_t bytes = 0;
  *has_cccl = m && uk__cu.cuModuleGetGlobal(&p, &bytes, m, cccl_constant) == CUDA_SUCCESS;
  *has_partial = m && uk__cu.cuModuleGetGlobal(&p, &bytes, m, "_uk_partial_size") == CUDA_SUCCESS && bytes > 0;
  if (m) uk__cu.cuModuleUnload(m);
}

/* The whole path: a reduction call compiles a lean cubin and gets the sum
 * of random data right (against a double host sum). */
static void run_lean_reduction(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_reduction_spec spec = {"T x", "T y", "x", "a + b", "y = a", "0", "lean_call", NULL, NULL, NULL, 0};
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &spec, &k));
  enum { N = 100003 };
  float *h = malloc(N * sizeof *h);
  double want = 0, mag = 0;
  srand(7);
  for (int i = 0; h && i < N; i++) {
    h[i] = (float)(rand() % 2001 - 1000) / 997.0f + 0.001f;
    want += h[i];
    mag += fabs(h[i]);
  }
  int64_t n = N;
  uk_array x, y;
  memset(&x, 0, sizeof x);
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &x));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 0, NULL, 0, NULL, &y));
  float got = -12345.0f;
  CHECK_OK(uk_memcpy_htod(y.data, &got, sizeof got)); /* poisoned */
  if (h && x.data) CHECK_OK(uk_memcpy_htod(x.data, h, N * sizeof *h));
  uk_arg in = uk_arg_array(&x);
  if (k) CHECK_OK(uk_reduction_call(k, &in, 1, &y, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(&got, y.data, sizeof got));
  printf("lean reduction: sum %.6f, host %.6f\n", got, want);
  CHECK(fabs(got - want) <= 1e-6 * mag + 1e-3); /* one lost element is ~0.5 */
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_reduction_destroy(k);
  uk_context_destroy(ctx);
  free(h);
}

static void check_gpu(void) {
  int n = 0;
  if (uk_device_count(&n) != UK_OK || n == 0) {
    printf("SKIP: the GPU half (no CUDA device: %s)\n", uk_last_error());
    return;
  }
  uk_device_info info;
  CHECK_OK(uk_device_info_get(0, &info));
  char *src = reduction_source(info.arch);
  unsetenv("UKERN_LEAN_CUBIN");
  CHECK(!uk__lean_possible(0, info.arch, NULL, 0)); /* opt-in */
  setenv("UKERN_LEAN_CUBIN", "1", 1);
  int pushed = 0;
  CHECK_OK(uk__device_enter(0, &pushed));
  CHECK(uk__lean_possible(0, info.arch, NULL, 0));
  static const char *const debug[] = {"-lineinfo"};
  CHECK(!uk__lean_possible(0, info.arch, debug, 1));
  CHECK(!uk__lean_possible(0, info.arch + 1, NULL, 0));

  uk__compile_req req;
  memset(&req, 0, sizeof req);
  req.source = src;
  req.name = "lean_sum";
  req.arch = info.arch;
  uk__binary *fat = NULL, *lean = NULL;
  CHECK_OK(uk__nvrtc_compile(&req, &fat));
  req.lean_keep = "_uk_";
  req.lean_device = 0;
  CHECK_OK(uk__lean_compile(&req, &lean));
  if (fat && lean) {
    CHECK(!lean->is_ptx && lean->image_size > 4 && memcmp(lean->image, "\177ELF", 4) == 0);
    int cccl = -1, partial = -1;
    symbols(fat, &cccl, &partial);
    CHECK(cccl == 1 && partial == 1);
    symbols(lean, &cccl, &partial);
    CHECK(cccl == 0 && partial == 1);
    printf("cubin: NVRTC %zu bytes, lean %zu bytes\n", fat->image_size, lean->image_size);
    CHECK(lean->image_size < fat->image_size);
  }
  uk__binary_release(fat);
  uk__binary_release(lean);
  uk__device_leave(pushed);
  free(src);
  run_lean_reduction();
}

int main(void) {
  char *src = reduction_source(90);
  if (src) check_ptx(src, 90);
  free(src);
  check_gpu();
  return ut_finish("test_lean_cubin");
}
