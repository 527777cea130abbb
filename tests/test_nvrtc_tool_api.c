/* uk_module_fatbin, uk_fusion_compile_info and uk_cache_entry_describe
 * with NVRTC, no GPU needed: the fatbin holds the very images
 * uk_module_from_source makes (and its compiles are the cache entries those
 * calls look up); a fusion's compile statistics cover every kernel of its
 * plan; an entry describes its target and kernels. */
#include <dirent.h>
#include <stdio.h>

#include "testutil.h"

static const char *const code =
    "extern \"C\" __global__ void twice(float *y) { y[threadIdx.x] *= 2.0f; }\n";

static int count(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

static void fatbin(uk_context *ctx) {
  const char *archs[] = {"80", "90a", "compute_90"};
  void *fat = NULL;
  size_t bytes = 0, sizes[3] = {0, 0, 0};
  CHECK_OK(uk_module_fatbin(ctx, code, NULL, archs, 3, &fat, &bytes, sizes));
  if (!fat) return;
  const unsigned char *p = fat;
  CHECK(bytes > sizes[0] + sizes[1] + sizes[2] && sizes[0] > 64 && sizes[1] > 64 && sizes[2] > 64);
  CHECK(p[0] == 0x50 && p[1] == 0xed && p[2] == 0x55 && p[3] == 0xba); /* fatbin magic, little-endian */
  /* uk_module_from_source for one of the targets finds the fatbin's compile
   * in the cache and gives the same cubin, which the fatbin holds. */
  uk_cache_stats before, after;
  CHECK_OK(uk_context_cache_stats(ctx, &before));
  uk_module_options mo = {0};
  mo.arch_name = "sm_90a";
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  CHECK_OK(uk_context_cache_stats(ctx, &after));
  CHECK(after.compiles == before.compiles && after.memory_hits == before.memory_hits + 1);
  const void *image = NULL;
  size_t n = 0;
  if (m && uk_module_image(m, &image, &n) == UK_OK) {
    CHECK(n == sizes[1]);
    CHECK(memmem(fat, bytes, image, n) != NULL);
  }
  uk_module_destroy(m);
  /* the PTX image is text naming the kernel */
  CHECK(memmem(fat, bytes, ".entry twice", 12) != NULL);
  uk_free(fat);
}

static void fusion_info(uk_context *ctx) {
  static const char *const opts[] = {"-Xptxas=-v"};
  uk_fusion_spec fo = {.options = opts, .num_options = 1};
  uk_fusion *f = NULL;
  fo.inputs = "x";
  fo.outputs = "y";
  fo.program = "m = max(x, axis=0, keepdims=True); y = exp(x - m)";
  fo.name = "shifted_exp";
  CHECK_OK(uk_fusion_create(ctx, &fo, &f));
  if (!f) return;
  int64_t shape[2] = {37, 129};
  uk_array x, y = {0};
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 2, shape));
  uk_arg in = uk_arg_array(&x);
  int kernels = 0;
  CHECK_OK(uk_fusion_kernel_count(f, &in, 1, &y, 1, NULL, &kernels));
  CHECK(kernels == 2);
  uk_compile_info info;
  memset(&info, 0, sizeof info);
  CHECK_OK(uk_fusion_compile_info(f, &in, 1, &y, 1, NULL, &info));
  CHECK(info.arch == 90 && info.is_ptx == 0 && info.image_bytes > 0 && info.ms > 0);
  CHECK(count(info.log, "Compiling entry function") == kernels); /* ptxas: every kernel of the plan */
  /* the kernels the log names are those uk_fusion_source shows */
  char *src = NULL;
  CHECK_OK(uk_fusion_source(f, &in, 1, &y, 1, NULL, &src));
  CHECK(count(src, "// ==== ukern fusion 'shifted_exp': kernel") == kernels);
  uk_free(src);
  uk_free(info.log);
  /* nothing to compute compiles nothing: zeroed */
  shape[0] = 0;
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 2, shape));
  uk_fusion *g = NULL;
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "y", .program = "y = x + 1", .name = "plus_one"}, &g));
  memset(&info, 0x5a, sizeof info);
  CHECK_OK(uk_fusion_compile_info(g, &in, 1, &y, 1, NULL, &info));
  CHECK(info.log == NULL && info.image_bytes == 0 && info.arch == 0);
  uk_fusion_destroy(g);
  uk_fusion_destroy(f);
}

/* Compiles `src` for `arch` into a fresh cache directory and describes
 * its one entry. */
static void describe_one(const char *src, const char *arch, const char *const *names, int nnames, const char *want_arch,
                         const char *const *want, int nwant) {
  char *dir = ut_temp_dir("describe");
  if (!dir) return;
  uk_options o = {0};
  o.cache_dir = dir;
  o.arch_name = arch;
  uk_context *ctx = NULL;
  uk_module *m = NULL;
  uk_module_options mo = {0};
  mo.name_expressions = names;
  mo.num_name_expressions = nnames;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  DIR *d = opendir(dir);
  struct dirent *de;
  int entries = 0;
  while (d && (de = readdir(d))) {
    size_t n = strlen(de->d_name);
    if (n < 4 || strcmp(de->d_name + n - 4, ".ukc") != 0) continue;
    entries++;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    uk_cache_entry_info info;
    memset(&info, 0, sizeof info);
    CHECK_OK(uk_cache_entry_describe(path, &info));
    CHECK_STREQ(info.arch, want_arch);
    CHECK(info.num_kernels == nwant);
    for (int j = 0; j < nwant && j < info.num_kernels; j++) CHECK_STREQ(info.kernels[j], want[j]);
    CHECK(info.kernels && info.kernels[info.num_kernels] == NULL);
    uk_free(info.kernels);
  }
  if (d) closedir(d);
  CHECK(entries == 1);
  free(dir);
}

static void entry_describe(void) {
  /* kernels found in the source, attributes skipped wherever they stand */
  const char *two = "extern \"C\" __global__ void __launch_bounds__(128) first(float *y) { y[0] = 1; }\n"
                    "extern \"C\" __global__ void\nsecond(float *y) { y[1] = 2; }\n";
  const char *const want_two[] = {"first", "second"};
  describe_one(two, "90a", NULL, 0, "sm_90a", want_two, 2);
  describe_one(two, "compute_90", NULL, 0, "compute_90", want_two, 2);
  /* name expressions: the compile's own spelling */
  const char *tpl = "template <typename T> __global__ void scale(T *x, T a) { x[0] *= a; }\n";
  const char *const names[] = {"scale<float>", "scale<double>"};
  describe_one(tpl, "80", names, 2, "sm_80", names, 2);
}

int main(void) {
  uk_options o = {0};
  o.arch = 90;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) {
    fatbin(ctx);
    fusion_info(ctx);
  }
  entry_describe();
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_tool_api");
}
