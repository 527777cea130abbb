/* The public calls the ukern tool needs beyond kernels (issue 11): argument
 * checking of uk_module_fatbin, uk_fusion_compile_info and
 * uk_cache_entry_describe. Nothing here compiles: every case is refused
 * before NVRTC runs. */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

static const char *const code = "extern \"C\" __global__ void k(float *y) { y[0] = 1; }\n";

static void fatbin_args(uk_context *ctx) {
  const char *archs[] = {"90", "compute_90"};
  void *fat = (void *)1;
  size_t bytes = 7, sizes[2] = {0, 0};
  CHECK_STATUS(uk_module_fatbin(NULL, code, NULL, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "ctx is NULL");
  CHECK_STATUS(uk_module_fatbin(ctx, NULL, NULL, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "code is NULL");
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, NULL, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 2, NULL, &bytes, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 2, &fat, NULL, sizes), UK_ERR_INVALID);
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 0, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "num_archs is 0");
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, archs, 65, &fat, &bytes, sizes), UK_ERR_INVALID);
  const char *with_null[] = {"90", NULL};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, with_null, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "archs[1] is NULL");
  const char *bad[] = {"90", "sm90"};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, bad, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "'sm90' is not an architecture");
  const char *family[] = {"100f"};
  CHECK_STATUS(uk_module_fatbin(ctx, code, NULL, family, 1, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "family targets");
  uk_module_options mo = {0};
  mo.arch_name = "80";
  CHECK_STATUS(uk_module_fatbin(ctx, code, &mo, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "leave uk_module_options.arch and arch_name unset");
  memset(&mo, 0, sizeof mo);
  const char *opts[] = {"-lineinfo", "-arch=sm_80"};
  mo.options = opts;
  mo.num_options = 2;
  CHECK_STATUS(uk_module_fatbin(ctx, code, &mo, archs, 2, &fat, &bytes, sizes), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "'-arch=sm_80' names a target");
  /* refused calls leave the outputs alone */
  CHECK(fat == (void *)1 && bytes == 7 && sizes[0] == 0 && sizes[1] == 0);
}

static void fusion_info_args(uk_context *ctx) {
  uk_compile_info info;
  memset(&info, 0x5a, sizeof info);
  int64_t n = 5;
  uk_array x;
  CHECK_OK(uk_array_init(&x, 0x100000, UK_FLOAT32, 1, &n));
  uk_arg in = uk_arg_array(&x);
  uk_array out = {0};
  CHECK_STATUS(uk_fusion_compile_info(NULL, &in, 1, &out, 1, NULL, &info), UK_ERR_INVALID);
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "y", .program = "y = x * 2", .name = "twice"}, &f));
  CHECK_STATUS(uk_fusion_compile_info(f, &in, 1, &out, 1, NULL, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "info is NULL");
  /* a type error of the call comes before any compile; *info untouched */
  uk_fusion *g = NULL;
  CHECK_OK(uk_fusion_create(
      ctx, &(uk_fusion_spec){.inputs = "x", .outputs = "y", .program = "y = x & 1", .name = "band"}, &g));
  CHECK_STATUS(uk_fusion_compile_info(g, &in, 1, &out, 1, NULL, &info), UK_ERR_TYPE);
  CHECK(info.arch == 0x5a5a5a5a && info.image_bytes != 0);
  /* wrong argument counts */
  CHECK_STATUS(uk_fusion_compile_info(f, &in, 2, &out, 1, NULL, &info), UK_ERR_INVALID);
  uk_fusion_destroy(f);
  uk_fusion_destroy(g);
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  if (!f) return;
  CHECK(fwrite(data, 1, n, f) == n);
  fclose(f);
}

static void entry_describe_args(void) {
  uk_cache_entry_info info;
  memset(&info, 0x5a, sizeof info);
  CHECK_STATUS(uk_cache_entry_describe(NULL, &info), UK_ERR_INVALID);
  CHECK_STATUS(uk_cache_entry_describe("x.ukc", NULL), UK_ERR_INVALID);
  char *dir = ut_temp_dir("entry_describe");
  if (!dir) return;
  char path[1024], link_path[1100];
  snprintf(path, sizeof path, "%s/missing.ukc", dir);
  CHECK_STATUS(uk_cache_entry_describe(path, &info), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), "cannot open");
  CHECK_STATUS(uk_cache_entry_describe(dir, &info), UK_ERR_IO); /* a directory */
  CHECK_CONTAINS(uk_last_error(), "not a regular file");
  snprintf(path, sizeof path, "%s/text.ukc", dir);
  write_file(path, "hello, this is not a cache entry at all\n", 40);
  CHECK_STATUS(uk_cache_entry_describe(path, &info), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), "not a ukern cache entry");
  /* a link to an entry-looking file is not followed */
  snprintf(link_path, sizeof link_path, "%s/link.ukc", dir);
  CHECK(symlink(path, link_path) == 0);
  CHECK_STATUS(uk_cache_entry_describe(link_path, &info), UK_ERR_IO);
  /* a FIFO neither blocks nor is read */
  snprintf(link_path, sizeof link_path, "%s/fifo.ukc", dir);
  CHECK(mkfifo(link_path, 0600) == 0);
  CHECK_STATUS(uk_cache_entry_describe(link_path, &info), UK_ERR_IO);
  /* a header claiming a key longer than the file */
  unsigned char hdr[40] = "UKC1";
  hdr[8] = 0xff;
  hdr[9] = 0xff;
  snprintf(path, sizeof path, "%s/damaged.ukc", dir);
  write_file(path, hdr, sizeof hdr);
  CHECK_STATUS(uk_cache_entry_describe(path, &info), UK_ERR_IO);
  CHECK_CONTAINS(uk_last_error(), "damaged");
  /* a key with no target and no kernels: described, empty */
  unsigned char small[32 + 9] = "UKC1";
  small[8] = 9;
  memcpy(small + 32, "version 1", 9);
  snprintf(path, sizeof path, "%s/empty.ukc", dir);
  write_file(path, small, sizeof small);
  uk_status st = uk_cache_entry_describe(path, &info);
  CHECK_STATUS(st, UK_OK);
  if (st == UK_OK) {
    CHECK(info.arch[0] == 0 && info.num_kernels == 0 && info.kernels && info.kernels[0] == NULL);
    CHECK_STREQ(info.kind, "");
    uk_free(info.kernels);
  }
  free(dir);
}

/* An entry file whose key holds `source` (header, key, no payload). */
static void write_entry(const char *path, const char *source) {
  char key[4096];
  int n = snprintf(key, sizeof key, "arch 90 0\nsource %zu %s\n", strlen(source), source);
  unsigned char buf[32 + 4096] = "UKC1";
  buf[8] = (unsigned char)(n & 0xff);
  buf[9] = (unsigned char)(n >> 8);
  memcpy(buf + 32, key, (size_t)n);
  write_file(path, buf, 32 + (size_t)n);
}

/* What tells specialisations apart: kind, name, dtypes and variant read from
 * the banner of a generated source (issue 27); a source ukern did not
 * generate is a module; a broken banner gives no name, never a crash. */
static void entry_banner(void) {
  char *dir = ut_temp_dir("entry_banner");
  if (!dir) return;
  char path[1024];
  uk_cache_entry_info info;
  static const struct {
    const char *source, *kind, *name, *dtypes, *variant;
  } cases[] = {
      {"// ukern elementwise kernel 'sq' (template elementwise_vec.cu)\n"
       "// parameters: T x (float16), raw T y (float16, ndim 2, contiguous), U s (int8, scalar) -> T z (float16)\n"
       "// variant: vectorised x8, 32-bit index, ndim 1\nextern \"C\" __global__ void sq(float *y) {}\n",
       "elementwise", "sq", "float16, float16, int8 -> float16", "vectorised x8, 32-bit index, ndim 1"},
      {"#include <ukern/reduction.cuh>\n// ukern reduction kernel 'argmax' (template reduction.cu)\n"
       "// parameters: T x (float64) -> int64 y (int64)\n// reduce type: amax; identity: none\n"
       "// loops: kept ndim 2, reduced ndim 1, 32-bit index; kernel: a block per output\n",
       "reduction", "argmax", "float64 -> int64", "kept ndim 2, reduced ndim 1, 32-bit index; kernel: a block per output"},
      {"// parameters: x (float32) -> y (float32)\n", "module", "", "", ""},               /* no banner */
      {"// ukern elementwise kernel 'unclosed\n// parameters: T x (float32) ->\n", "module", "", "", ""},
      {"// ukern elementwise kernel 'k' (t)\n// parameters: T x (float32 ->\n", "elementwise", "k", "float32 ->", ""},
      {"// ukern\n", "module", "", "", ""},
      {"// ukern elementwise kernel 'f_e0' (template elementwise_vec.cu)\n// parameters: float32 in0 (float32) -> "
       "float64 out0 (float64)\n// variant: strided\n#include <ukern/fusion.cuh>\n// fusion parameters: in0 = x\n",
       "fusion elementwise", "f_e0", "float32 -> float64", "strided"},
      {"#include <ukern/fusion_row.cuh>\n#include <ukern/fusion.cuh>\n// fusion parameters: in0 = x in1 = s out0 = y\n"
       "extern \"C\" __global__ void __launch_bounds__(512, 2) sm_row(\n    const ukern::half *_uk_p_in0, const "
       "_uk_st<2> _uk_s_in0,\n    const int in1,\n    float *_uk_p_out0, const _uk_st<2> _uk_s_out0,\n"
       "    const _uk_geo<2> _uk_g) {\n}\n",
       "fusion row", "sm_row", "float16, int32 -> float32", ""},
  };
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    snprintf(path, sizeof path, "%s/%032zx.ukc", dir, j);
    write_entry(path, cases[j].source);
    memset(&info, 0x5a, sizeof info);
    uk_status st = uk_cache_entry_describe(path, &info);
    CHECK_STATUS(st, UK_OK);
    if (st != UK_OK) continue;
    CHECK_STREQ(info.arch, "sm_90");
    CHECK_STREQ(info.kind, cases[j].kind);
    CHECK_STREQ(info.name, cases[j].name);
    CHECK_STREQ(info.dtypes, cases[j].dtypes);
    CHECK_STREQ(info.variant, cases[j].variant);
    uk_free(info.kernels);
  }
  /* a name and dtypes longer than their fields: cut, terminated */
  char big[3000];
  int n = snprintf(big, sizeof big, "// ukern elementwise kernel '");
  for (int j = 0; j < 300; j++) big[n++] = 'n';
  n += snprintf(big + n, sizeof big - (size_t)n, "' (t)\n// parameters:");
  for (int j = 0; j < 100; j++) n += snprintf(big + n, sizeof big - (size_t)n, " T x%d (complex128),", j);
  snprintf(big + n, sizeof big - (size_t)n, "\n");
  snprintf(path, sizeof path, "%s/%032x.ukc", dir, 99);
  write_entry(path, big);
  if (uk_cache_entry_describe(path, &info) == UK_OK) {
    CHECK(strlen(info.name) == sizeof info.name - 1 && info.name[0] == 'n');
    CHECK(strlen(info.dtypes) < sizeof info.dtypes && !strncmp(info.dtypes, "complex128, complex128", 22));
    uk_free(info.kernels);
  } else {
    CHECK(0);
  }
  free(dir);
}

int main(void) {
  uk_options o = {0};
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) {
    fatbin_args(ctx);
    fusion_info_args(ctx);
  }
  entry_describe_args();
  entry_banner();
  uk_context_destroy(ctx);
  return ut_finish("test_tool_api");
}
