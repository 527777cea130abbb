/* Front-end decisions on a real GPU (issue 9 item 7): an output that the
 * operation may leave unassigned keeps its value (it is loaded first), for
 * every variant (vectorised, contiguous, strided). Outputs are poisoned
 * with known values first. */
#include "testutil.h"

static uk_context *ctx;

/* n floats at a byte offset `skew` (0: aligned, vectorised; 4: contiguous)
 * with element stride `step` (1, or -1 for a reversed view). */
/* never: the operation assigns no element (else: those with x > 0, 2 * x). */
static void run_case(const char *op, const char *preamble, int64_t n, int skew, int step, int never) {
  uk_elementwise_spec o;
  memset(&o, 0, sizeof o);
  o.preamble = preamble;
  uk_elementwise *k = NULL;
  o.in_params = "T x";
  o.out_params = "T z";
  o.operation = op;
  o.name = "keep_unassigned";
  CHECK_OK(uk_elementwise_create(ctx, &o, &k));
  if (!k) return;
  int64_t total = n + 2;
  uk_array bx, bz;
  memset(&bx, 0, sizeof bx);
  memset(&bz, 0, sizeof bz);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &total, 0, NULL, &bx));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &total, 0, NULL, &bz));
  float *hx = malloc((size_t)total * 4), *hz = malloc((size_t)total * 4), *got = malloc((size_t)total * 4);
  for (int64_t j = 0; j < total; j++) {
    hx[j] = (float)ut_uniform(-4, 4);
    hz[j] = 1000.0f + (float)j; /* the poison: what must survive where x <= 0 */
  }
  CHECK_OK(uk_memcpy_htod(bx.data, hx, (size_t)total * 4));
  CHECK_OK(uk_memcpy_htod(bz.data, hz, (size_t)total * 4));
  uk_array x = bx, z = bz;
  int64_t first = step > 0 ? skew / 4 : skew / 4 + n - 1;
  x.data += (uint64_t)(first * 4);
  z.data += (uint64_t)(first * 4);
  x.shape[0] = z.shape[0] = n;
  x.strides[0] = z.strides[0] = 4 * step;
  uk_arg in = uk_arg_array(&x);
  CHECK_OK(uk_elementwise_call(k, &in, 1, &z, 1, NULL));
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(got, bz.data, (size_t)total * 4));
  int bad = 0, kept = 0;
  for (int64_t j = 0; j < total; j++) {
    int inside = j >= skew / 4 && j < skew / 4 + n;
    int assigned = inside && !never && hx[j] > 0;
    float want = assigned ? 2.0f * hx[j] : hz[j];
    if (inside && !assigned) kept++;
    if (got[j] != want && bad++ < 5)
      fprintf(stderr, "  %s: z[%lld] = %g, want %g (x = %g)\n", op, (long long)j, got[j], want, hx[j]);
  }
  CHECK(bad == 0);
  if (n >= 1001) CHECK(kept > 0); /* the case really has unassigned elements */
  free(hx);
  free(hz);
  free(got);
  uk_array_free(ctx, &bx, NULL);
  uk_array_free(ctx, &bz, NULL);
  uk_elementwise_destroy(k);
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_frontend");
  const char *pre = "#define BEGIN_POS if (x > 0) {\n#define END }";
  const int64_t sizes[] = {1, 7, 1001, 65539};
  for (int s = 0; s < 4; s++) {
    run_case("BEGIN_POS; z = 2 * x; END", pre, sizes[s], 0, 1, 0);
    run_case("BEGIN_POS; z = 2 * x; END", pre, sizes[s], 4, 1, 0);
    run_case("BEGIN_POS; z = 2 * x; END", pre, sizes[s], 0, -1, 0);
    /* the splice makes the store part of the comment: no element is assigned */
    run_case("// twice \\\nz = 2 * x", NULL, sizes[s], 0, 1, 1);
    run_case("// twice \\\nz = 2 * x", NULL, sizes[s], 4, -1, 1);
  }
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_frontend");
}
