/* uk_function_image_attribute: kernel attributes read from a cubin that
 * NVRTC compiled for sm_90, with no device. The gpu tier
 * (python/tests/test_gpu_raw.py) compares them with the driver's. */
#include "testutil.h"

static const char *src =
    "__constant__ float cbuf[37];\n"
    "extern \"C\" __global__ void __launch_bounds__(256) bounded(float* x, int n) {\n"
    "  __shared__ float s[300];\n"
    "  s[threadIdx.x] = x[threadIdx.x] + cbuf[n % 37];\n"
    "  __syncthreads();\n"
    "  x[threadIdx.x] = s[(threadIdx.x + 1) % 256];\n"
    "}\n"
    "extern \"C\" __global__ void plain(double* x) { x[threadIdx.x] = sin(x[threadIdx.x]) * cos(x[threadIdx.x + 1]); }\n";

static int attr(uk_function *f, uk_function_attr a) {
  int v = -1;
  CHECK_OK(uk_function_image_attribute(f, a, &v));
  return v;
}

int main(void) {
  uk_options o = {0};
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, NULL, &m));
  uk_function *b = NULL, *p = NULL;
  CHECK_OK(uk_module_function(m, "bounded", &b));
  CHECK_OK(uk_module_function(m, "plain", &p));
  if (!b || !p) return ut_finish("test_nvrtc_image_attrs");

  CHECK(attr(b, UK_ATTR_BINARY_VERSION) == 90 && attr(p, UK_ATTR_BINARY_VERSION) == 90);
  CHECK(attr(b, UK_ATTR_MAX_THREADS_PER_BLOCK) == 256); /* __launch_bounds__ */
  CHECK(attr(p, UK_ATTR_MAX_THREADS_PER_BLOCK) == 1024);
  int rb = attr(b, UK_ATTR_NUM_REGS), rp = attr(p, UK_ATTR_NUM_REGS);
  CHECK(rb > 0 && rb <= 255 && rp > 0 && rp <= 255);
  /* 300 floats, as the driver counts them: without the 1 KiB the system
   * reserves per block, which sm_90 cubins count in the kernel's section. */
  CHECK(attr(b, UK_ATTR_SHARED_SIZE_BYTES) == 1200);
  CHECK(attr(p, UK_ATTR_SHARED_SIZE_BYTES) == 0);
  CHECK(attr(b, UK_ATTR_CONST_SIZE_BYTES) == 37 * 4);
  CHECK(attr(b, UK_ATTR_LOCAL_SIZE_BYTES) == 0);
  CHECK(attr(p, UK_ATTR_LOCAL_SIZE_BYTES) >= 0);

  int v = 7;
  CHECK_STATUS(uk_function_image_attribute(b, UK_ATTR_PTX_VERSION, &v), UK_ERR_NOT_FOUND);
  CHECK_CONTAINS(uk_last_error(), "kernel 'bounded': the cubin does not state ptx_version");
  CHECK(v == 7);
  CHECK_STATUS(uk_function_image_attribute(b, UK_ATTR_COUNT_, &v), UK_ERR_INVALID);
  CHECK_STATUS(uk_function_image_attribute(NULL, UK_ATTR_NUM_REGS, &v), UK_ERR_INVALID);

  /* A module of PTX states nothing. */
  const char *opts[] = {"-arch=compute_90"};
  uk_module_options mo = {0};
  mo.options = opts;
  mo.num_options = 1;
  uk_module *mp = NULL;
  uk_function *fp = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &mp));
  if (mp && uk_module_function(mp, "plain", &fp) == UK_OK) {
    CHECK_STATUS(uk_function_image_attribute(fp, UK_ATTR_NUM_REGS, &v), UK_ERR_NOT_FOUND);
    CHECK_CONTAINS(uk_last_error(), "holds no cubin");
  }
  uk_module_destroy(mp);
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_image_attrs");
}
