/* A module's source and NVRTC options read back (CuPy RawKernel `code` and
 * `options`): copies of what was given, the effective option list NVRTC
 * received (target, context options, given options, what ukern added),
 * memory-cache hits included; linked modules have options but no source;
 * argument checking. Compiles for an explicit arch, so no GPU is needed. */
#include "testutil.h"

static const char *kernel = "extern \"C\" __global__ void k(int *p) { p[0] = FOO + CTX; }\n";

/* The list has exactly `want` (n entries) and ends with NULL. */
static void check_list(uk_module *m, int effective, const char *const *want, int n) {
  const char *const *got = NULL;
  int count = -1;
  CHECK_OK(uk_module_nvrtc_options(m, effective, &got, &count));
  CHECK(count == n && got != NULL);
  if (!got || count != n) {
    for (int k = 0; got && k < count; k++) fprintf(stderr, "  got[%d] = %s\n", k, got[k]);
    return;
  }
  for (int k = 0; k < n; k++) CHECK_STREQ(got[k], want[k]);
  CHECK(got[n] == NULL);
  /* Copies, not the caller's pointers. */
  for (int k = 0; k < n; k++) CHECK(got[k] != want[k]);
}

static uk_context *context(const char *const *opts, int n, int arch, const char *arch_name) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.disable_disk_cache = 1;
  o.nvrtc_options = opts;
  o.num_nvrtc_options = n;
  o.arch = arch;
  o.arch_name = arch_name;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

static void given_and_effective(void) {
  const char *ctx_opts[] = {"-DCTX=1"};
  uk_context *ctx = context(ctx_opts, 1, 90, NULL);
  if (!ctx) return;
  /* The caller's buffers change after the call: the module keeps copies. */
  char code[256], o0[32], o2[32];
  snprintf(code, sizeof code, "%s", kernel);
  snprintf(o0, sizeof o0, "-DFOO=2");
  snprintf(o2, sizeof o2, "-std=c++17");
  const char *opts[] = {o0, "-arch=sm_90", o2};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = 3;
  for (int round = 0; round < 2; round++) { /* the second is a memory-cache hit */
    uk_module *m = NULL;
    CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
    if (!m) break;
    CHECK_STREQ(uk_module_source(m), kernel);
    CHECK(uk_module_source(m) != code);
    const char *given[] = {"-DFOO=2", "-arch=sm_90", "-std=c++17"};
    check_list(m, 0, given, 3);
    const char *effective[] = {"-arch=sm_90", "-DCTX=1", "-DFOO=2", "-std=c++17"};
    check_list(m, 1, effective, 4);
    check_list(m, 1, effective, 4); /* made once, read again */
    memset(code, 'x', sizeof code - 1);
    memset(o0, 'y', sizeof o0 - 1);
    CHECK_STREQ(uk_module_source(m), kernel);
    check_list(m, 0, given, 3);
    uk_module_destroy(m);
    snprintf(code, sizeof code, "%s", kernel);
    snprintf(o0, sizeof o0, "-DFOO=2");
  }
  uk_context_destroy(ctx);
}

/* The context's variant (arch_name) is the target; no options given. */
static void context_variant(void) {
  const char *ctx_opts[] = {"-DCTX=3", "-DFOO=4"};
  uk_context *ctx = context(ctx_opts, 2, 0, "90a");
  if (!ctx) return;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, kernel, NULL, &m));
  if (m) {
    const char *effective[] = {"-arch=sm_90a", "-DCTX=3", "-DFOO=4"};
    check_list(m, 1, effective, 3);
    check_list(m, 0, NULL, 0);
  }
  uk_module_destroy(m);
  /* The module's own arch wins over the context's. */
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.arch = 100;
  CHECK_OK(uk_module_from_source(ctx, kernel, &mo, &m));
  if (m) {
    const char *effective[] = {"-arch=sm_100", "-DCTX=3", "-DFOO=4"};
    check_list(m, 1, effective, 3);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

/* A kernel that launches kernels: ukern adds -rdc=true, and says so. */
static void added_rdc(void) {
  uk_context *ctx = context(NULL, 0, 90, NULL);
  if (!ctx) return;
  const char *code = "extern \"C\" __global__ void child(int *p) { p[threadIdx.x] = 1; }\n"
                     "extern \"C\" __global__ void parent(int *p) { child<<<1, 32>>>(p); }\n";
  const char *opts[] = {"-DUNUSED=1"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = 1;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, code, &mo, &m));
  if (m) {
    const char *effective[] = {"-arch=sm_90", "-DUNUSED=1", "-rdc=true"};
    check_list(m, 1, effective, 3);
    const char *given[] = {"-DUNUSED=1"};
    check_list(m, 0, given, 1);
    CHECK_STREQ(uk_module_source(m), code);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

/* A linked module: no single source; the given options (for its SOURCE
 * parts) are kept; no effective list. */
static void linked(void) {
  uk_context *ctx = context(NULL, 0, 90, NULL);
  if (!ctx) return;
  const char *opts[] = {"-DFOO=5", "-DCTX=6"};
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = 2;
  uk_link_input in[1] = {{UK_LINK_SOURCE, kernel, 0, NULL, "k.cu"}};
  uk_module *m = NULL;
  CHECK_OK(uk_module_link(ctx, in, 1, &mo, &m));
  if (m) {
    CHECK(uk_module_source(m) == NULL);
    check_list(m, 0, opts, 2);
    check_list(m, 1, NULL, 0);
    /* A linked cubin carries its kernels' parameter layouts too. */
    uk_function *f = NULL;
    CHECK_OK(uk_module_function(m, "k", &f));
    int n = 0;
    const uk_param_info *ps = NULL;
    if (f) CHECK_OK(uk_function_params(f, &n, &ps));
    CHECK(n == 1 && ps && ps[0].offset == 0 && ps[0].size == 8);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

static void arguments(void) {
  CHECK(uk_module_source(NULL) == NULL);
  const char *const *got = (const char *const *)1;
  int count = 7;
  CHECK_STATUS(uk_module_nvrtc_options(NULL, 0, &got, &count), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "uk_module_nvrtc_options: m is NULL");
  const char *ctx_opts[] = {"-DCTX=1", "-DFOO=1"};
  uk_context *ctx = context(ctx_opts, 2, 90, NULL);
  uk_module *m = NULL;
  if (ctx) CHECK_OK(uk_module_from_source(ctx, kernel, NULL, &m));
  if (m) {
    CHECK_STATUS(uk_module_nvrtc_options(m, 1, NULL, &count), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "options is NULL");
    CHECK_STATUS(uk_module_nvrtc_options(m, 0, &got, NULL), UK_ERR_INVALID);
    CHECK_CONTAINS(uk_last_error(), "count is NULL");
    CHECK(got == (const char *const *)1 && count == 7);
  }
  uk_module_destroy(m);
  uk_context_destroy(ctx);
}

int main(void) {
  given_and_effective();
  context_variant();
  added_rdc();
  linked();
  arguments();
  return ut_finish("test_nvrtc_module_source");
}
