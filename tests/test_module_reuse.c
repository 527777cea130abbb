/* A destroyed module's object is kept by its context for the next module
 * (module.c), with the given source and options: a memory-cache hit made
 * again reuses them without copying. What the next module reports must be
 * its own: uk_module_source and the options as given, across hits of the
 * same key (also a key reached with other given options: an -arch option
 * leaves the key's list), new keys, two live modules and images loaded
 * with no source. Compiles for sm_90 with NVRTC, no GPU. */
#include "testutil.h"

static const char a_src[] = "extern \"C\" __global__ void ra(float *p) { p[threadIdx.x] *= 2.0f; }\n";
static const char b_src[] = "extern \"C\" __global__ void rb(float *p) { p[threadIdx.x] += 3.0f; }\n";

/* Compiles src with opts, checks what the module says, and destroys it
 * unless keep. */
static uk_module *made(uk_context *ctx, const char *src, const char *const *opts, int n, int keep) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.options = opts;
  mo.num_options = n;
  uk_module *m = NULL;
  CHECK_OK(uk_module_from_source(ctx, src, &mo, &m));
  if (!m) return NULL;
  CHECK_STREQ(uk_module_source(m), src);
  const char *const *got = NULL;
  int count = -1;
  CHECK_OK(uk_module_nvrtc_options(m, 0, &got, &count));
  CHECK(count == n);
  for (int k = 0; k < n && k < count; k++) CHECK_STREQ(got[k], opts[k]);
  if (!keep) {
    uk_module_destroy(m);
    return NULL;
  }
  return m;
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  uk_context *ctx = NULL;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return ut_finish("test_module_reuse");
  const char *x1[] = {"-DX=1"}, *x2[] = {"-DX=2"}, *arch[] = {"-arch=sm_90"}, *two[] = {"-DX=1", "-DY=5"};
  for (int round = 0; round < 3; round++) {
    made(ctx, a_src, x1, 1, 0);
    made(ctx, a_src, x1, 1, 0); /* a hit: the kept text */
    made(ctx, a_src, x2, 1, 0); /* another key */
    made(ctx, a_src, NULL, 0, 0);
    made(ctx, a_src, arch, 1, 0); /* the same key as the line above, other given options */
    made(ctx, a_src, NULL, 0, 0);
    made(ctx, a_src, two, 2, 0);
    made(ctx, a_src, x1, 1, 0); /* a prefix of the kept options */
    made(ctx, b_src, x1, 1, 0); /* another source */
    made(ctx, a_src, x1, 1, 0);
  }
  /* Two live modules, destroyed in either order, then reused. */
  uk_module *m1 = made(ctx, a_src, x1, 1, 1), *m2 = made(ctx, b_src, x2, 1, 1);
  CHECK(m1 && m2 && m1 != m2);
  uk_module_destroy(m2);
  uk_module_destroy(m1);
  made(ctx, b_src, x2, 1, 0);
  made(ctx, a_src, x1, 1, 0);
  /* A module loaded from an image has no source, even on a reused object. */
  uk_module *m = made(ctx, a_src, x1, 1, 1);
  const void *image = NULL;
  size_t bytes = 0;
  if (m) CHECK_OK(uk_module_image(m, &image, &bytes));
  void *copy = image ? malloc(bytes) : NULL;
  if (copy) memcpy(copy, image, bytes);
  uk_module_destroy(m);
  uk_module *im = NULL;
  /* Loading an image needs a device: without one only the source check runs. */
  if (copy && uk_module_from_image(ctx, copy, bytes, &im) == UK_OK) {
    CHECK(uk_module_source(im) == NULL);
    uk_module_destroy(im);
  }
  free(copy);
  made(ctx, a_src, x1, 1, 0);
  uk_cache_stats st;
  CHECK_OK(uk_context_cache_stats(ctx, &st));
  CHECK(st.compiles == 6 && st.memory_hits == 30);
  uk_context_destroy(ctx);
  return ut_finish("test_module_reuse");
}
