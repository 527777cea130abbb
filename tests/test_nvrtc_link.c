/* Linking without a GPU (issue 13 item 1): relocatable device code and
 * dynamic parallelism from RawModule source are linked with nvJitLink
 * (+ libcudadevrt.a) into a loadable cubin for sm_90, checked by reading
 * the ELF: an executable image holding parent and child kernels with no
 * undefined symbols left. Also -dlto, link errors with their options line,
 * the disk cache of linked images, and a missing nvJitLink. */
#include <sys/wait.h>
#include <unistd.h>

#include "cubin_facts.h"
#include "testutil.h"

static const char *dp_source =
    "extern \"C\" __global__ void child(float* y, int base) {\n"
    "  y[base + threadIdx.x] = 2.0f * (base + threadIdx.x) + 1.0f;\n"
    "}\n"
    "extern \"C\" __global__ void parent(float* y, int per) {\n"
    "  if (threadIdx.x == 0) child<<<1, per>>>(y, blockIdx.x * per);\n"
    "}\n";

/* Two translation-unit style pieces in one rdc program: an extern device
 * function called through a declaration. */
static const char *rdc_source =
    "extern __device__ float twice(float);\n"
    "extern \"C\" __global__ void use_twice(float* y) { y[threadIdx.x] = twice(y[threadIdx.x]); }\n"
    "__device__ float twice(float v) { return 2.0f * v; }\n";

static const char *unresolved_source =
    "extern __device__ float missing_fn(float);\n"
    "extern \"C\" __global__ void uses_missing(float* y) { y[0] = missing_fn(y[0]); }\n";

static uk_context *new_ctx(const char *dir) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.cache_dir = dir;
  o.disable_disk_cache = dir == NULL;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

static elf_facts module_facts(uk_module *m) {
  const void *image = NULL;
  size_t bytes = 0;
  elf_facts f;
  memset(&f, 0, sizeof f);
  if (m && uk_module_image(m, &image, &bytes) == UK_OK) f = inspect(image, bytes);
  return f;
}

static void test_dynamic_parallelism(const char *dir) {
  uk_context *ctx = new_ctx(dir);
  /* No option: the launch in the source turns on -rdc=true and linking. */
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, dp_source, NULL, &m));
  elf_facts f = module_facts(m);
  CHECK(f.ok);
  CHECK(f.type == ET_EXEC); /* linked, not the relocatable ET_REL NVRTC gives */
  CHECK(f.has_parent && f.has_child);
  CHECK(f.undefined == 0);
  CHECK(f.syscalls == 1); /* libcudadevrt's launch reached the driver's syscall */
  uk_module_destroy(m);

  /* -rdc=false is the user's word: NVRTC then refuses the device launch. */
  const char *no_rdc[] = {"-rdc=false"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = no_rdc;
  mo.num_options = 1;
  m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, dp_source, &mo, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "nvrtc options: -arch=sm_90");
  CHECK_CONTAINS(uk_last_error_log(), "-rdc=false");

  /* The same linked image from the disk in a new context (no compile). */
  if (dir) {
    uk_context *ctx2 = new_ctx(dir);
    CHECK_OK(uk_module_from_source(ctx2, dp_source, NULL, &m));
    uk_cache_stats s;
    CHECK_OK(uk_context_cache_stats(ctx2, &s));
    CHECK(s.disk_hits == 1 && s.compiles == 0);
    f = module_facts(m);
    CHECK(f.type == ET_EXEC && f.has_parent && f.has_child && f.undefined == 0);
    uk_module_destroy(m);
    uk_context_destroy(ctx2);
  }
  uk_context_destroy(ctx);
}

static void test_rdc_and_lto(void) {
  uk_context *ctx = new_ctx(NULL);
  static const char *const spellings[][2] = {{"-rdc=true", NULL}, {"--relocatable-device-code=true", NULL},
                                             {"-dc", NULL}, {"-rdc=true", "-dlto"}, {"-dlto", NULL}};
  for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; k++) {
    uk_module_options mo;
    memset(&mo, 0, sizeof mo);
    mo.options = (const char **)spellings[k];
    mo.num_options = spellings[k][1] ? 2 : 1;
    uk_module *m = NULL;
    CHECK_OK(uk_module_from_source(ctx, rdc_source, &mo, &m));
    elf_facts f = module_facts(m);
    CHECK(f.ok && f.type == ET_EXEC && f.has_use_twice && f.undefined == 0);
    if (!(f.ok && f.type == ET_EXEC)) fprintf(stderr, "  with option %s\n", spellings[k][0]);
    uk_module_destroy(m);
  }
  /* Without rdc NVRTC's own cubin is already whole: still executable. */
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, rdc_source, NULL, &m));
  CHECK(module_facts(m).type == ET_EXEC);
  uk_module_destroy(m);

  /* An unresolved extern: the link fails, naming the symbol and options. */
  const char *rdc[] = {"-rdc=true"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = rdc;
  mo.num_options = 1;
  mo.name = "unresolved";
  m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, unresolved_source, &mo, &m), UK_ERR_COMPILE);
  CHECK(m == NULL);
  CHECK_CONTAINS(uk_last_error(), "nvJitLink: linking 'unresolved'");
  CHECK(strncmp(uk_last_error_log(), "nvjitlink options: -arch=sm_90", 30) == 0);
  CHECK_CONTAINS(uk_last_error_log(), "missing_fn");
  uk_context_destroy(ctx);
}

/* In a new process (nvJitLink is loaded once per process, and a fork
 * would inherit it). */
static int missing_nvjitlink_child(void) {
  uk_context *ctx = new_ctx(NULL);
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(ctx, dp_source, NULL, &m), UK_ERR_NO_DEVICE);
  CHECK_CONTAINS(uk_last_error(), "nvJitLink is not available: /nonexistent/libnvJitLink.so.13");
  CHECK_CONTAINS(uk_last_error(), "UKERN_NVJITLINK");
  /* Code that needs no link still compiles. */
  CHECK_OK(uk_module_from_source(ctx, rdc_source, NULL, &m));
  uk_module_destroy(m);
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_link (no nvJitLink)");
}

static void test_missing_nvjitlink(const char *self) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("UKERN_NVJITLINK", "/nonexistent/libnvJitLink.so.13", 1);
    execl("/proc/self/exe", self, "--missing-nvjitlink", (char *)NULL);
    _exit(99);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--missing-nvjitlink")) return missing_nvjitlink_child();
  char *dir = ut_temp_dir("link");
  test_dynamic_parallelism(dir);
  test_rdc_and_lto();
  test_missing_nvjitlink(argv[0]);
  free(dir);
  return ut_finish("test_nvrtc_link");
}
