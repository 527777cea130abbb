/* The nvcc backend (uk_module_options.backend = UK_BACKEND_NVCC): a cubin
 * for sm_90 from the toolkit's nvcc, ukern's headers on its include path,
 * cached in memory and on disk under a key apart from NVRTC's, errors with
 * nvcc's log. With the argument "none" ($UKERN_NVCC names no file): the
 * clear error. Skips (77) where the toolkit has no nvcc. */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime/compile.h"
#include "testutil.h"

static const char *src =
    "#include <cupy/complex.cuh>\n"
    "#include <cupy/math_constants.h>\n"
    "extern \"C\" __global__ void k(complex<float>* x, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] = asin(x[i]) * CUDART_PI_F;\n"
    "}\n";

static uk_module_options nvcc_opts(void) {
  uk_module_options o;
  memset(&o, 0, sizeof o);
  o.backend = UK_BACKEND_NVCC;
  o.name = "nvcc_test";
  return o;
}

static uk_context *make_ctx(const char *dir) {
  uk_options o = {0};
  o.arch = 90;
  o.cache_dir = dir;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "none") == 0) {
    uk_context *ctx = make_ctx(NULL);
    uk_module_options o = nvcc_opts();
    uk_module *m = NULL;
    CHECK_STATUS(uk_module_from_source(ctx, src, &o, &m), UK_ERR_NOT_FOUND);
    CHECK_CONTAINS(uk_last_error(), "nvcc not found");
    CHECK_CONTAINS(uk_last_error(), "UKERN_NVCC");
    CHECK(m == NULL);
    uk_context_destroy(ctx);
    return ut_finish("test_nvcc_backend none");
  }
  /* nvcc's private directories go here, to see that none is left. */
  char tmp[] = "/tmp/uk_nvcc_tmp_XXXXXX";
  CHECK(mkdtemp(tmp) != NULL);
  setenv("TMPDIR", tmp, 1);
  if (strcmp(uk__nvcc_key(), "none") == 0) {
    printf("SKIP: no nvcc in this toolkit or on the PATH\n");
    return 77;
  }
  CHECK_CONTAINS(uk__nvcc_key(), "nvcc V");
  char dir[] = "/tmp/uk_nvcc_test_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  uk_context *ctx = make_ctx(dir);
  uk_module_options o = nvcc_opts();
  uk_module *m = NULL, *m2 = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &o, &m));
  const void *image = NULL;
  size_t bytes = 0;
  CHECK_OK(uk_module_image(m, &image, &bytes));
  CHECK(bytes > 64 && image && memcmp(image, "\x7f" "ELF", 4) == 0);
  uk_function *f = NULL;
  CHECK_OK(uk_module_function(m, "k", &f));
  int np = 0;
  const uk_param_info *pi = NULL;
  CHECK_OK(uk_function_params(f, &np, &pi));
  CHECK(np == 2 && pi[0].size == 8 && pi[1].size == 4 && pi[1].offset == 8);

  /* The declared signature's types, for bindings (uk_function_signature). */
  int ns = -1;
  const int *types = NULL;
  CHECK_STATUS(uk_function_signature(f, &ns, &types), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "kernel 'k' has no declared signature");
  CHECK_OK(uk_function_set_signature(f, "complex<float>* x, int n"));
  CHECK_OK(uk_function_signature(f, &ns, &types));
  CHECK(ns == 2 && types[0] == -1 && types[1] == UK_INT32);
  CHECK_OK(uk_function_set_signature(f, "float2* x, unsigned short n"));
  CHECK_OK(uk_function_signature(f, &ns, &types));
  CHECK(ns == 2 && types[0] == -1 && types[1] == UK_UINT16);
  CHECK_STATUS(uk_function_signature(NULL, &ns, &types), UK_ERR_INVALID);
  void *handle = NULL;
  int ndev = 0;
  if (uk_device_count(&ndev) != UK_OK || ndev == 0) {
    CHECK_STATUS(uk_function_handle(f, -1, &handle), UK_ERR_NO_DEVICE);
    CHECK(handle == NULL);
  } else {
    CHECK_OK(uk_function_handle(f, -1, &handle));
    CHECK(handle != NULL);
  }

  /* Memory hit; then NVRTC on the same source is another key. */
  uk_cache_stats s;
  CHECK_OK(uk_module_from_source(ctx, src, &o, &m2));
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 1 && s.memory_hits >= 1);
  uk_module_destroy(m2);
  m2 = NULL;
  uk_module_options nv = o;
  nv.backend = UK_BACKEND_NVRTC;
  CHECK_OK(uk_module_from_source(ctx, src, &nv, &m2));
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 2);
  uk_module_destroy(m2);
  m2 = NULL;
  uk_context_destroy(ctx);

  /* A new context: the nvcc entry comes from disk. */
  ctx = make_ctx(dir);
  CHECK_OK(uk_module_from_source(ctx, src, &o, &m2));
  CHECK_OK(uk_context_cache_stats(ctx, &s));
  CHECK(s.compiles == 0 && s.disk_hits == 1);
  uk_module_destroy(m2);
  m2 = NULL;

  /* Options reach nvcc: -D selects the failing branch; the error names nvcc
   * and its first error line, the log holds the command and the source. */
  const char *bad = "#if PRECISION == 3\n#error precision not supported\n#endif\n"
                    "extern \"C\" __global__ void k(float* x) { x[0] = 1.f; }\n";
  const char *opt3[] = {"-DPRECISION=3"}, *opt2[] = {"-DPRECISION=2"};
  o.options = opt3;
  o.num_options = 1;
  CHECK_STATUS(uk_module_from_source(ctx, bad, &o, &m2), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error(), "nvcc: ");
  CHECK_CONTAINS(uk_last_error(), "precision not supported");
  CHECK_CONTAINS(uk_last_error_log(), "-DPRECISION=3");
  CHECK_CONTAINS(uk_last_error_log(), "    2 | #error precision not supported");
  o.options = opt2;
  CHECK_OK(uk_module_from_source(ctx, bad, &o, &m2));
  uk_module_destroy(m2);
  m2 = NULL;

  /* A kernel that launches kernels: relocatable code, linked with the
   * device runtime as NVRTC's is (-rdc=true added, or -dc given). */
  const char *dp = "extern \"C\" __global__ void child(float* x) { x[threadIdx.x] = 1.0f; }\n"
                   "extern \"C\" __global__ void parent(float* x, int c) { child<<<1, c>>>(x + threadIdx.x * c); }\n";
  const char *dc[] = {"-dc"}, *dlto[] = {"-dlto"};
  for (int with_dc = 0; with_dc < 2; with_dc++) {
    o.options = with_dc ? dc : NULL;
    o.num_options = with_dc;
    CHECK_OK(uk_module_from_source(ctx, dp, &o, &m2));
    uk_function *pf = NULL;
    CHECK_OK(uk_module_function(m2, "parent", &pf));
    CHECK_OK(uk_module_image(m2, &image, &bytes));
    CHECK(bytes > 64 && memcmp(image, "\x7f" "ELF", 4) == 0);
    uk_module_destroy(m2);
    m2 = NULL;
  }
  o.options = dlto;
  o.num_options = 1;
  CHECK_STATUS(uk_module_from_source(ctx, dp, &o, &m2), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "-dlto needs the nvrtc backend");
  o.options = NULL;
  o.num_options = 0;

  /* Name expressions need NVRTC's lowered names. */
  const char *names[] = {"k"};
  o.num_options = 0;
  o.name_expressions = names;
  o.num_name_expressions = 1;
  CHECK_STATUS(uk_module_from_source(ctx, src, &o, &m2), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "name expressions need the nvrtc backend");

  /* Nothing is left in the temporary directory. */
  int left = 0;
  DIR *d = opendir(tmp);
  CHECK(d != NULL);
  for (struct dirent *e; d && (e = readdir(d));) left += e->d_name[0] != '.';
  if (d) closedir(d);
  CHECK(left == 0);
  rmdir(tmp);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_nvcc_backend");
}
