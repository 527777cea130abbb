/* One reduction, one stream, split calls of both partial protocols
 * (ukern/reduction.cuh): red_group's one-word partials are tagged 64-bit
 * words whose zero tag means "not written", and plain partials (float64,
 * column programs) leave any bits behind. A plain program's words in the
 * tagged buffer could read as written (a high word of 1: an int64 partial
 * in [2^32, 2^33), a float32 column partial of 1.4e-45) and be combined
 * before the real one arrived, so tagged partials get a buffer of their
 * own, zeroed when allocated. Stand-in driver (bench/tools/fake_driver.c),
 * the context's allocator recording allocations, cuMemsetD32Async and
 * cuLaunchKernel recording their arguments (no kernel runs): each split
 * launch's partials are the allocation of 64 KiB or more its argument
 * buffer names. Last, an allocator whose partials are not 16-byte aligned. */
#include "runtime/cudadrv.h"
#include "testutil.h"

enum { MAX_ALLOCS = 64, MIN_PARTIAL = 65536 };
typedef struct {
  uint64_t base;
  size_t bytes;
  int memsets; /* cuMemsetD32Async of the whole allocation to 0 */
} rec;
static rec allocs[MAX_ALLOCS];
static int nallocs;
static uint64_t inputs[4]; /* the arrays' own allocations: not partials */
static uint64_t launched;  /* the partials of the last launch (0: none) */

static int rec_alloc(void *user, size_t bytes, void *stream, uint64_t *dptr) {
  (void)user, (void)stream;
  void *m = aligned_alloc(256, (bytes + 255) / 256 * 256);
  *dptr = (uint64_t)(uintptr_t)m;
  if (m && nallocs < MAX_ALLOCS) allocs[nallocs++] = (rec){*dptr, bytes, 0};
  return m ? 0 : 1;
}

static void rec_free(void *user, uint64_t dptr, void *stream) {
  (void)user, (void)stream;
  for (int j = 0; j < nallocs; j++)
    if (allocs[j].base == dptr) allocs[j].base = 0; /* freed: never named again */
  free((void *)(uintptr_t)dptr);
}

static int find(uint64_t p) {
  for (int j = 0; j < nallocs; j++)
    if (p && allocs[j].base == p) return j;
  return -1;
}

static CUresult (*memset_d32)(CUdeviceptr, unsigned, size_t, CUstream);
static CUresult rec_memset(CUdeviceptr p, unsigned v, size_t n, CUstream s) {
  int j = find((uint64_t)p);
  if (j >= 0 && v == 0 && n * 4 == allocs[j].bytes) allocs[j].memsets++;
  return memset_d32(p, v, n, s);
}

static CUresult rec_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                           unsigned shared, CUstream s, void **params, void **extra) {
  (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s, (void)params;
  launched = 0;
  if (!extra || extra[0] != CU_LAUNCH_PARAM_BUFFER_POINTER || extra[2] != CU_LAUNCH_PARAM_BUFFER_SIZE)
    return CUDA_ERROR_INVALID_VALUE;
  const unsigned char *buf = extra[1];
  size_t bytes = *(const size_t *)extra[3];
  for (size_t o = 0; o + 8 <= bytes; o += 8) {
    uint64_t v;
    memcpy(&v, buf + o, 8);
    int j = find(v);
    if (j >= 0 && allocs[j].bytes >= MIN_PARTIAL && v != inputs[0] && v != inputs[1] && v != inputs[2] &&
        v != inputs[3])
      launched = v;
  }
  return CUDA_SUCCESS;
}

/* An allocator whose buffers of 64 KiB or more (the partials) start 8 bytes
 * past a 16-byte boundary. */
static int off_alloc(void *user, size_t bytes, void *stream, uint64_t *dptr) {
  (void)user, (void)stream;
  unsigned char *m = aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  *dptr = (uint64_t)(uintptr_t)(m && bytes >= MIN_PARTIAL ? m + 8 : m);
  return m ? 0 : 1;
}

static void off_free(void *user, uint64_t dptr, void *stream) {
  (void)user, (void)stream;
  free((void *)(uintptr_t)(dptr & ~(uint64_t)255));
}

/* Partials move as 16-byte words: an allocator's pointer off that
 * boundary fails the call with a hint, and nothing leaks (ASan). */
static void misaligned_allocator(void) {
  uk_context *ctx;
  uk_reduction *k = ut_sum_with_allocator((uk_allocator){off_alloc, off_free, NULL}, "misaligned_sum", &ctx);
  if (!k) {
    uk_context_destroy(ctx);
    return;
  }
  int64_t n = ((int64_t)1 << 20) + 1;
  uk_array x, y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &x));
  uk_arg in = uk_arg_array(&x);
  CHECK_STATUS(uk_reduction_call(k, &in, 1, &y, 1, NULL), UK_ERR_INVALID);
  CHECK_CONTAINS(uk_last_error(), "misaligned_sum: the context's allocator returned 0x");
  CHECK_CONTAINS(uk_last_error(), "not aligned to 16 bytes");
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_reduction_destroy(k);
  uk_context_destroy(ctx);
}

static uk_reduction *sum;

/* The partials of one call over `axes` (NULL: all) of x into a fresh output. */
static uint64_t partials_of(uk_context *ctx, uk_array *x, const int *axis, const char *label) {
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(x);
  uk_launch l = {.axes = axis, .num_axes = axis ? 1 : 0};
  launched = 0;
  uk_status st = uk_reduction_call(sum, &in, 1, &y, 1, &l);
  ut_checks++;
  if (st != UK_OK) {
    ut_failures++;
    fprintf(stderr, "%s: %s: %s\n", label, uk_status_name(st), uk_last_error());
  }
  uk_array_free(ctx, &y, NULL);
  if (!launched) fprintf(stderr, "%s: no split launch (pick larger shapes)\n", label);
  return launched;
}

int main(void) {
  ut_require_stand_in();
  uk__cu.cuLaunchKernel = rec_launch;
  memset_d32 = uk__cu.cuMemsetD32Async;
  uk__cu.cuMemsetD32Async = rec_memset;
  uk_context *ctx;
  sum = ut_sum_with_allocator((uk_allocator){rec_alloc, rec_free, NULL}, "partials_sum", &ctx);
  if (!sum) {
    uk_context_destroy(ctx);
    return ut_finish("test_red_partials");
  }
  int64_t n = ((int64_t)1 << 20) + 1, cols[2] = {65536, 257};
  uk_array d, f, c;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT64, 1, &n, 0, NULL, &d));
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &f));
  CHECK_OK(uk_array_alloc(ctx, UK_INT32, 2, cols, 0, NULL, &c));
  inputs[0] = d.data, inputs[1] = f.data, inputs[2] = c.data;
  const int axis0 = 0;
  /* plain (float64 group), tagged (float32 group), plain (int32 columns), each twice, interleaved */
  uint64_t p64 = partials_of(ctx, &d, NULL, "float64 full sum");
  uint64_t t32 = partials_of(ctx, &f, NULL, "float32 full sum");
  uint64_t pcol = partials_of(ctx, &c, &axis0, "int32 column sum");
  uint64_t t32b = partials_of(ctx, &f, NULL, "float32 full sum, again");
  uint64_t p64b = partials_of(ctx, &d, NULL, "float64 full sum, again");
  uint64_t pcolb = partials_of(ctx, &c, &axis0, "int32 column sum, again");
  CHECK(p64 && t32 && pcol && t32b && p64b && pcolb);
  /* the tagged buffer is its own, kept for the stream, and zeroed once: when allocated (the
     kernels clear what they take) */
  CHECK(t32 != p64 && t32 != pcol && t32b == t32 && p64b != t32 && pcolb != t32);
  int jt = find(t32);
  CHECK(jt >= 0 && allocs[jt].memsets == 1);
  if (jt >= 0 && allocs[jt].memsets != 1) fprintf(stderr, "tagged buffer zeroed %d times\n", allocs[jt].memsets);
  uk_array_free(ctx, &d, NULL);
  uk_array_free(ctx, &f, NULL);
  uk_array_free(ctx, &c, NULL);
  uk_reduction_destroy(sum);
  uk_context_destroy(ctx);
  misaligned_allocator();
  return ut_finish("test_red_partials");
}
