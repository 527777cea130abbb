/* Which device headers a generated elementwise kernel includes, and that the
 * leaner selection compiles to the same code. Of ukern/half.cuh a kernel
 * takes only the 16-bit types its dtypes and text use (UKERN_HALF_ONLY_F16 /
 * _BF16: the other type's declarations cost NVRTC ~2 ms); its PTX must equal
 * that of the same source compiled with the whole header, but for unused
 * constants of the left-out type. Runs without a GPU. */
#include <nvrtc.h>

#include "base/embedded.h"
#include "testutil.h"

static uk_context *ctx;

static uk_array arr(uint64_t data, uk_dtype t, int64_t n) {
  uk_array a;
  uk_array_init(&a, data, t, 1, &n);
  return a;
}

/* The source of `op` on two inputs of dtypes tx, ty and an output of tz
 * (1001 elements; fake, aligned device addresses: nothing runs). */
static char *source(const char *op, uk_dtype tx, uk_dtype ty, uk_dtype tz) {
  uk_elementwise *k = NULL;
  char *src = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "X x, Y y", .out_params = "Z z", .operation = op, .name = "hdr"}, &k));
  if (!k) return NULL;
  uk_array x = arr(0x100000, tx, 1001), y = arr(0x200000, ty, 1001), z = arr(0x300000, tz, 1001);
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  uk_launch l = {.size = -1};
  CHECK_OK(uk_elementwise_source(k, in, 2, &z, 1, &l, &src));
  uk_elementwise_destroy(k);
  return src;
}

/* The include lines: `want` in order, and nothing else of ukern's. */
static void includes(const char *op, uk_dtype tx, uk_dtype ty, uk_dtype tz, const char *want) {
  char *src = source(op, tx, ty, tz);
  if (!src) return;
  char got[512] = "";
  size_t n = 0;
  for (const char *p = src; *p;) {
    size_t len = strcspn(p, "\n");
    if ((!strncmp(p, "#include", 8) || !strncmp(p, "#define UKERN_", 14)) && n + len + 2 < sizeof got) {
      memcpy(got + n, p, len);
      n += len;
      got[n++] = '|';
      got[n] = 0;
    }
    p += len + (p[len] == '\n');
  }
  if (strcmp(got, want)) fprintf(stderr, "op '%s' (%s, %s -> %s):\n", op, uk_dtype_name(tx), uk_dtype_name(ty),
                                 uk_dtype_name(tz));
  CHECK_STREQ(got, want);
  uk_free(src);
}

static void test_includes(void) {
  const char *core = "#include <ukern/ew_core.cuh>|";
  char f16[256], bf16[256], both[256], cx[256];
  snprintf(f16, sizeof f16, "%s#define UKERN_HALF_ONLY_F16|#include <ukern/half.cuh>|", core);
  snprintf(bf16, sizeof bf16, "%s#define UKERN_HALF_ONLY_BF16|#include <ukern/half.cuh>|", core);
  snprintf(both, sizeof both, "%s#include <ukern/half.cuh>|", core);
  snprintf(cx, sizeof cx, "#include <ukern/complex.cuh>|%s", core);
  includes("z = x * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT32, core);
  includes("z = x * y", UK_FLOAT16, UK_FLOAT16, UK_FLOAT16, f16);
  includes("z = x * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT16, f16); /* an output alone */
  includes("z = x * y", UK_BFLOAT16, UK_BFLOAT16, UK_FLOAT32, bf16);
  includes("z = x * y", UK_FLOAT16, UK_BFLOAT16, UK_FLOAT32, both);
  /* named in the text only */
  includes("z = (ukern::half)x * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT32, f16);
  includes("z = uk_float16(x) * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT32, f16);
  includes("z = (ukern::bfloat16)x * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT32, bf16);
  includes("z = uk_bfloat16(x) * y", UK_FLOAT32, UK_FLOAT32, UK_FLOAT32, bf16);
  includes("z = uk_bfloat16(x) * y", UK_FLOAT16, UK_FLOAT32, UK_FLOAT32, both);
  includes("z = x * y", UK_COMPLEX64, UK_FLOAT32, UK_COMPLEX64, cx);
}

/* ------------------------------------------------------------------------ */
/* Same code                                                                 */
/* ------------------------------------------------------------------------ */

/* PTX of `src` (compute_90, -minimal as ukern compiles these), with the
 * embedded headers; NULL on failure (the log is printed). */
static char *ptx_of(const char *src) {
  const char *hs[32], *hn[32];
  int nh = 0;
  for (int k = 0; k < uk__embedded_header_count && nh < 32; k++, nh++) {
    hs[nh] = uk__embedded_headers[k].data;
    hn[nh] = uk__embedded_headers[k].name;
  }
  const char *opts[] = {"-arch=compute_90", "-minimal"};
  nvrtcProgram p = NULL;
  char *out = NULL;
  if (nvrtcCreateProgram(&p, src, "hdr.cu", nh, hs, hn) != NVRTC_SUCCESS) return NULL;
  nvrtcResult r = nvrtcCompileProgram(p, 2, opts);
  size_t n = 0;
  if (r != NVRTC_SUCCESS) {
    nvrtcGetProgramLogSize(p, &n);
    char *log = calloc(n + 1, 1);
    if (log) nvrtcGetProgramLog(p, log);
    fprintf(stderr, "compile failed: %s\n%s\n%s\n", nvrtcGetErrorString(r), log ? log : "", src);
    free(log);
  } else if (nvrtcGetPTXSize(p, &n) == NVRTC_SUCCESS && (out = calloc(n + 1, 1))) {
    nvrtcGetPTX(p, out);
  }
  nvrtcDestroyProgram(&p);
  return out;
}

/* The PTX without the `is_int<T>` constants the front end emits for the
 * types it saw (the whole header has one more type, and their order may
 * differ). */
static void drop_type_constants(char *ptx) {
  char *w = ptx;
  for (const char *r = ptx; *r;) {
    size_t len = strcspn(r, "\n") + (r[strcspn(r, "\n")] == '\n');
    int drop = !strncmp(r, ".global ", 8) && strstr(r, "half_detail6is_int") &&
               strstr(r, "half_detail6is_int") < r + len;
    if (!drop) memmove(w, r, len), w += len;
    r += len;
  }
  *w = 0;
}

static void same_code(const char *op, uk_dtype tx, uk_dtype ty, uk_dtype tz) {
  char *lean = source(op, tx, ty, tz);
  if (!lean) return;
  /* the same text with the whole header: the define line removed */
  char *full = strdup(lean), *d = full ? strstr(full, "#define UKERN_HALF_ONLY_") : NULL;
  CHECK(d != NULL);
  if (d) {
    size_t len = strcspn(d, "\n") + 1;
    memmove(d, d + len, strlen(d + len) + 1);
    char *a = ptx_of(lean), *b = ptx_of(full);
    CHECK(a && b);
    if (a && b) {
      drop_type_constants(a);
      drop_type_constants(b);
      CHECK_CONTAINS(a, ".entry hdr");
      if (strcmp(a, b)) fprintf(stderr, "PTX differs for '%s':\n--- lean\n%s\n--- full\n%s\n", op, a, b);
      CHECK(strcmp(a, b) == 0);
    }
    free(a);
    free(b);
  }
  free(full);
  uk_free(lean);
}

static void test_same_code(void) {
  same_code("z = x * y + 1", UK_FLOAT16, UK_FLOAT16, UK_FLOAT16);
  same_code("z = x * y + 1", UK_BFLOAT16, UK_BFLOAT16, UK_BFLOAT16);
  same_code("z = x < y ? Z(abs(x) / y) : Z(x - 3 + isnan(x))", UK_FLOAT16, UK_INT64, UK_FLOAT16);
  same_code("z = (Z)(x * 2.5) - y; z += (long long)y", UK_FLOAT64, UK_INT32, UK_BFLOAT16);
  same_code("z = x * (float)y", UK_FLOAT32, UK_UINT8, UK_FLOAT16);
}

int main(void) {
  uk_options o;
  memset(&o, 0, sizeof o);
  o.arch = 90;
  o.disable_disk_cache = 1;
  CHECK_OK(uk_context_create(&o, &ctx));
  if (ctx) {
    test_includes();
    test_same_code();
  }
  uk_context_destroy(ctx);
  return ut_finish("test_ew_headers");
}
