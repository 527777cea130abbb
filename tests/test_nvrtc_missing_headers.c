/* uk_module_options.missing_headers_empty (Jitify's way, CuPy's jitify=True):
 * an include NVRTC cannot open compiles as an empty header, named in the
 * module's log; a program that uses what it would have declared fails with
 * the names in the failure's log; without the flag the include is NVRTC's
 * error. The flag is part of the cache key: a module compiled with it is
 * never handed to a request without it (memory or disk). nvcc refuses it.
 * Compiles for sm_90 with NVRTC: no GPU needed. */
#include <stdlib.h>

#include "testutil.h"

static const char *unused_include =
    "#include \"ut_missing/one.h\"\n"
    "#include <ut_missing/two.h>\n"
    "#include <type_traits>\n" /* found: the std header map */
    "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = std::is_same<int, int>::value ? 1.f : 0.f; }\n";

static const char *used_include = "#include \"ut_missing/three.h\"\n"
                                  "extern \"C\" __global__ void k(float *p) { p[0] = FROM_THREE; }\n";

static uk_context *context(const char *cache_dir) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  if (cache_dir) o.cache_dir = cache_dir;
  else o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  return ctx;
}

static uk_status build(uk_context *ctx, const char *code, int empty, int backend, uk_module **m) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.name = "jitify_like";
  mo.missing_headers_empty = empty;
  mo.backend = backend;
  *m = NULL;
  return uk_module_from_source(ctx, code, &mo, m);
}

static void unused_missing_headers_compile(void) {
  uk_context *ctx = context(NULL);
  if (!ctx) return;
  uk_module *m = NULL;
  /* Without the flag: NVRTC's error for the first one. */
  CHECK_STATUS(build(ctx, unused_include, 0, UK_BACKEND_NVRTC, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error(), "cannot open source file \"ut_missing/one.h\"");
  CHECK(m == NULL);
  for (int round = 0; round < 2; round++) { /* the second is a memory-cache hit */
    CHECK_OK(build(ctx, unused_include, 1, UK_BACKEND_NVRTC, &m));
    if (!m) return;
    const char *log = uk_module_log(m);
    CHECK_CONTAINS(log, "ukern: header \"ut_missing/one.h\" not found: compiled as empty");
    CHECK_CONTAINS(log, "ukern: header \"ut_missing/two.h\" not found: compiled as empty");
    CHECK(strstr(log, "type_traits") == NULL); /* found headers are not named */
    uk_function *f = NULL;
    CHECK_OK(uk_module_function(m, "k", &f));
    uk_module_destroy(m);
  }
  /* The flag is in the key: a request without it still fails after the hits. */
  CHECK_STATUS(build(ctx, unused_include, 0, UK_BACKEND_NVRTC, &m), UK_ERR_COMPILE);
  CHECK(m == NULL);
  uk_context_destroy(ctx);
}

static void used_missing_header_fails_with_the_names(void) {
  uk_context *ctx = context(NULL);
  if (!ctx) return;
  uk_module *m = NULL;
  CHECK_STATUS(build(ctx, used_include, 1, UK_BACKEND_NVRTC, &m), UK_ERR_COMPILE);
  CHECK(m == NULL);
  CHECK_CONTAINS(uk_last_error(), "identifier \"FROM_THREE\" is undefined");
  CHECK_CONTAINS(uk_last_error_log(), "ukern: header \"ut_missing/three.h\" not found: compiled as empty");
  CHECK_CONTAINS(uk_last_error_log(), "2 | extern \"C\" __global__ void k"); /* the numbered source */
  uk_context_destroy(ctx);
}

static void nvcc_refuses_it(void) {
  uk_context *ctx = context(NULL);
  if (!ctx) return;
  uk_module *m = NULL;
  CHECK_STATUS(build(ctx, unused_include, 1, UK_BACKEND_NVCC, &m), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "missing_headers_empty needs the nvrtc backend");
  CHECK(m == NULL);
  uk_context_destroy(ctx);
}

/* The disk cache: the flagged module is found again by a new context, and a
 * request without the flag is not served from that entry. */
static void disk_cache_keeps_them_apart(void) {
  char *dir = ut_temp_dir("missing_headers");
  if (!dir) {
    CHECK(dir != NULL);
    return;
  }
  for (int round = 0; round < 2; round++) {
    uk_context *ctx = context(dir);
    if (!ctx) break;
    uk_module *m = NULL;
    CHECK_OK(build(ctx, unused_include, 1, UK_BACKEND_NVRTC, &m));
    if (m) CHECK_CONTAINS(uk_module_log(m), "\"ut_missing/two.h\" not found");
    uk_module_destroy(m);
    uk_cache_stats s;
    CHECK_OK(uk_context_cache_stats(ctx, &s));
    CHECK(round == 0 ? s.compiles == 1 : (s.compiles == 0 && s.disk_hits == 1));
    CHECK_STATUS(build(ctx, unused_include, 0, UK_BACKEND_NVRTC, &m), UK_ERR_COMPILE);
    uk_context_destroy(ctx);
  }
  free(dir);
}

int main(void) {
  unused_missing_headers_compile();
  used_missing_header_fails_with_the_names();
  nvcc_refuses_it();
  disk_cache_keeps_them_apart();
  return ut_finish("test_nvrtc_missing_headers");
}
