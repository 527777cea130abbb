/* C++ standard headers in raw source (issue 13 item 3): a kernel written
 * with ordinary std:: code compiles for sm_90 without a GPU; the map can be
 * turned off (then NVRTC cannot open <type_traits>); every mapped header
 * compiles on its own; the map is part of the cache key. */
#include "testutil.h"

#include "compiler_src.h"

static uk_context *ctx;

static uk_status compile(const char *src, int no_map, uk_module **m) {
  uk_module_options mo;
  memset(&mo, 0, sizeof mo);
  mo.no_std_headers = no_map;
  *m = NULL;
  return uk_module_from_source(ctx, src, &mo, m);
}

static void test_std_kernel(void) {
  uk_module *m = NULL;
  CHECK_OK(compile(std_src, 0, &m));
  const void *image = NULL;
  size_t bytes = 0;
  CHECK(m && uk_module_image(m, &image, &bytes) == UK_OK && bytes > 0);
  CHECK(image && memmem(image, bytes, "std_kernel", 10) != NULL);
  uk_module_destroy(m);

  /* Off: NVRTC's own answer. */
  CHECK_STATUS(compile(std_src, 1, &m), UK_ERR_COMPILE);
  CHECK_CONTAINS(uk_last_error_log(), "cannot open source file \"type_traits\"");

  /* The header names <cuda/std/...> still work as before. */
  CHECK_OK(compile("#include <cuda/std/type_traits>\n"
                   "static_assert(cuda::std::is_same<int, int>::value, \"\");\n"
                   "extern \"C\" __global__ void k() {}\n",
                   0, &m));
  uk_module_destroy(m);
}

/* Every mapped header in one program (libcu++ headers take ~1 s each to
 * compile alone), in an order where libcu++'s own includes reach the map
 * first (<climits>, <version>). */
static void test_all_headers(void) {
  static const char *const names[] = {"climits", "version", "cstdint", "array", "atomic", "bit", "bitset",
                                      "cassert", "cfloat", "chrono", "cmath", "complex", "concepts",
                                      "cstddef", "cstdlib", "cstring", "ctime", "functional",
                                      "initializer_list", "iterator", "limits", "memory", "numeric",
                                      "optional", "ratio", "span", "tuple", "type_traits", "utility",
                                      "variant"};
  char src[4096] = "";
  size_t len = 0;
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
    len += (size_t)snprintf(src + len, sizeof src - len, "#include <%s>\n", names[k]);
  snprintf(src + len, sizeof src - len,
           "extern \"C\" __global__ void k(int* y) { *y = std::numeric_limits<int>::max() + "
           "static_cast<int>(std::tuple_size<std::array<int, 3>>::value); }\n");
  uk_module *m = NULL;
  CHECK_OK(compile(src, 0, &m));
  uk_module_destroy(m);
}

/* A context-wide switch, and the key: the same source with the map off is
 * another entry (it compiled differently). */
static void test_context_switch(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  o.no_std_headers = 1;
  uk_context *off = NULL;
  CHECK_OK(uk_context_create(&o, &off));
  uk_module *m = NULL;
  CHECK_STATUS(uk_module_from_source(off, "#include <limits>\n__global__ void k() {}\n", NULL, &m), UK_ERR_COMPILE);
  uk_context_destroy(off);

  const char *src = "#if __has_include(<utility>)\nextern \"C\" __global__ void has() {}\n#else\n"
                    "extern \"C\" __global__ void hasnt() {}\n#endif\n";
  uk_module *a = NULL, *b = NULL;
  CHECK_OK(compile(src, 0, &a));
  CHECK_OK(compile(src, 1, &b));
  const void *ia = NULL, *ib = NULL;
  size_t na = 0, nb = 0;
  if (a && b && uk_module_image(a, &ia, &na) == UK_OK && uk_module_image(b, &ib, &nb) == UK_OK) {
    CHECK(memmem(ia, na, "has", 4) != NULL && memmem(ia, na, "hasnt", 5) == NULL);
    CHECK(memmem(ib, nb, "hasnt", 5) != NULL);
  } else {
    CHECK(0);
  }
  uk_module_destroy(a);
  uk_module_destroy(b);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (!ctx) return ut_finish("test_nvrtc_std");
  test_std_kernel();
  test_all_headers();
  test_context_switch();
  uk_context_destroy(ctx);
  return ut_finish("test_nvrtc_std");
}
