/* Issue 9 item 7 through the real call path (uk_elementwise_source, fake
 * pointers, no GPU): when the scanner is not certain that every path of the
 * operation assigns an output, the generated kernel loads it first. */
#include "testutil.h"

static uk_context *ctx;

static uk_array arr1(uint64_t data, int64_t n) {
  uk_array a;
  memset(&a, 0, sizeof a);
  a.data = data;
  a.dtype = UK_FLOAT32;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 4;
  return a;
}

/* The source of a call on 1001 misaligned floats (the contiguous variant). */
static char *source_of(const char *op, const char *preamble) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.preamble = preamble;
  uk_elementwise *k = NULL;
  o.in_params = "T x";
  o.out_params = "T z";
  o.operation = op;
  o.name = "scan_case";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  if (!k) return NULL;
  uk_array x = arr1(0x10004, 1001), z = arr1(0x20004, 1001);
  uk_arg in = uk_arg_array(&x);
  char *src = NULL;
  CHECK_OK(uk_elementwise_source(k, &in, 1, &z, 1, NULL, &src));
  uk_elementwise_destroy(k);
  return src;
}

static void expect(const char *op, const char *preamble, int loaded) {
  char *src = source_of(op, preamble);
  if (!src) return;
  const char *load = "T z = _uk_p_z[_uk_j];", *bare = "    T z;\n";
  int has_load = strstr(src, load) != NULL, has_bare = strstr(src, bare) != NULL;
  CHECK(has_load == loaded && has_bare == !loaded);
  if (has_load != loaded)
    fprintf(stderr, "  operation \"%s\" (preamble \"%s\"): output %s, expected %s:\n%s\n", op,
            preamble ? preamble : "", has_load ? "loaded" : "not loaded", loaded ? "loaded" : "not", src);
  uk_free(src);
}

int main(void) {
  uk_options opts;
  memset(&opts, 0, sizeof opts);
  opts.arch = 90;
  opts.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&opts, &ctx));
  if (!ctx) return ut_finish("test_frontend_emit");
  expect("z = 2 * x", NULL, 0);                          /* surely assigned: not loaded */
  expect("// twice \\\nz = 2 * x", NULL, 1);             /* the comment swallows the store */
  expect("BEGIN_POS; z = 2 * x; END", "#define BEGIN_POS if (x > 0) {\n#define END }", 1);
  expect("z = 2 * x", "#define z w\n__device__ float w;", 1);
  expect("z = 2 * x", "#define UNUSED 1", 0);
  uk_context_destroy(ctx);
  return ut_finish("test_frontend_emit");
}
