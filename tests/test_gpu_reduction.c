/* ReductionKernel on a real GPU: the user guide's l2norm, sum/max/min/prod/
 * mean, argmax with a struct reduce type and _J, two outputs, every axis
 * subset of a 4-D array, keepdims, negative axes, F-order and transposed
 * inputs, raw inputs, empty and 0-d inputs, given (contiguous and strided)
 * and allocated outputs, and every strategy, against a host reference in
 * double precision. Outputs are poisoned first; the errors of SEMANTICS.md
 * are checked with their messages. The cub::BlockReduce variant
 * (block_reduce = UK_BLOCK_REDUCE_CUB) gives the default variant's results. */
#include <math.h>

#include "codegen/scalar.h"
#include "red_gpu_util.h"

/* ------------------------------------------------------------------------ */

static void user_guide(void) {
  uk_reduction *l2 = mk("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm", NULL, NULL);
  int64_t shape[] = {300, 1000};
  double *v = randv(300 * 1000, -1, 1);
  darr x = make(UK_FLOAT32, 2, shape, NULL, 0, 0, v);
  int ax1[] = {1};
  uk_launch l = axes_of(ax1, 1, 0);
  run_case("l2norm axis 1", l2, R_SQ, &x, v, &l, 1e-5, 1);
  run_case("l2norm full", l2, R_SQ, &x, v, NULL, 1e-5, 1);
  drop(&x);
  free(v);
  uk_reduction_destroy(l2);
}

static void ops(void) {
  int64_t shape[] = {37, 523};
  int64_t n = 37 * 523;
  double *neg = randv(n, -100, -1), *v = randv(n, -1, 1), *near1 = randv(n, 0.999, 1.001);
  darr xn = make(UK_FLOAT64, 2, shape, NULL, 0, 0, neg), xv = make(UK_FLOAT64, 2, shape, NULL, 0, 0, v),
       xp = make(UK_FLOAT64, 2, shape, NULL, 0, 0, near1);
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "rsum", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "rmax", NULL, NULL);
  uk_reduction *mxi = mk("T x", "T y", "x", "max(a, b)", "y = a", "-INFINITY", "rmaxi", NULL, NULL);
  uk_reduction *mn = mk("T x", "T y", "x", "min(a, b)", "y = a", NULL, "rmin", NULL, NULL);
  uk_reduction *pr = mk("T x", "T y", "x", "a * b", "y = a", "1", "rprod", NULL, NULL);
  int ax0[] = {0}, ax1[] = {1};
  uk_launch l0 = axes_of(ax0, 1, 0), l1 = axes_of(ax1, 1, 0);
  run_case("sum axis 0", sum, R_SUM, &xv, v, &l0, 1e-13, 0);
  run_case("sum axis 1", sum, R_SUM, &xv, v, &l1, 1e-13, 0);
  run_case("sum full", sum, R_SUM, &xv, v, NULL, 1e-13, 0);
  /* no identity on negative data: the maximum, never 0 */
  run_case("max no identity axis 0", mx, R_MAX, &xn, neg, &l0, 0, 0);
  run_case("max no identity axis 1", mx, R_MAX, &xn, neg, &l1, 0, 0);
  run_case("max no identity full", mx, R_MAX, &xn, neg, NULL, 0, 0);
  run_case("max identity full", mxi, R_MAX, &xn, neg, NULL, 0, 0);
  run_case("min axis 1", mn, R_MIN, &xv, v, &l1, 0, 0);
  run_case("prod axis 1", pr, R_PROD, &xp, near1, &l1, 1e-12, 0);

  /* mean through _in_ind.size() / _out_ind.size() */
  uk_reduction *mean =
      mk("T x", "T y", "x", "a + b", "y = a / (_in_ind.size() / _out_ind.size())", "0", "rmean", NULL, NULL);
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&xv.a);
  CHECK_OK(uk_reduction_call(mean, &in, 1, &y, 1, &l1));
  double *got = fetch(&y, y.data, 37 * 8);
  double want[37], absum[37];
  int64_t no;
  uint8_t red[UK_MAX_NDIM] = {0, 1};
  ref(R_SUM, 2, shape, red, v, want, absum, &no);
  for (int k = 0; k < 37; k++) {
    want[k] /= 523;
    absum[k] /= 523;
  }
  close_all("mean", got, want, absum, 37, 1e-13);
  free(got);
  uk_array_free(ctx, &y, NULL);

  /* argmax: struct reduce type, _J, no identity */
  const char *pre = "struct amax { double v; long long i; };\n"
                    "__device__ amax mk(double v, long long i) { amax r; r.v = v; r.i = i; return r; }\n"
                    "__device__ amax pick(const amax &a, const amax &b) {\n"
                    "  return (a.v > b.v || (a.v == b.v && a.i < b.i)) ? a : b;\n}\n";
  uk_reduction *am = mk("T x", "int64 y", "mk(x, _J)", "pick(a, b)", "y = a.i", NULL, "argmax", "amax", pre);
  for (int axis = 0; axis < 2; axis++) {
    uk_launch la = axes_of(axis ? ax1 : ax0, 1, 0);
    memset(&y, 0, sizeof y);
    CHECK_OK(uk_reduction_call(am, &in, 1, &y, 1, &la));
    int64_t nout = axis ? 37 : 523, nred = axis ? 523 : 37;
    got = fetch(&y, y.data, (size_t)nout * 8);
    int bad = 0;
    for (int64_t o = 0; o < nout; o++) {
      int64_t best = 0;
      for (int64_t j = 1; j < nred; j++) {
        double a = axis ? v[o * 523 + j] : v[j * 523 + o], b = axis ? v[o * 523 + best] : v[best * 523 + o];
        if (a > b) best = j;
      }
      bad += got[o] != (double)best;
    }
    CHECK(bad == 0);
    free(got);
    uk_array_free(ctx, &y, NULL);
  }

  /* two outputs, both written and returned */
  uk_reduction *two = mk("T x", "T s, T m", "x", "a + b", "s = a; m = a / _in_ind.size()", "0", "summean", NULL, NULL);
  uk_array ys[2];
  memset(ys, 0, sizeof ys);
  CHECK_OK(uk_reduction_call(two, &in, 1, ys, 2, NULL));
  CHECK(ys[0].data && ys[1].data && ys[0].ndim == 0 && ys[1].ndim == 0);
  double *s0 = fetch(&ys[0], ys[0].data, 8), *s1 = fetch(&ys[1], ys[1].data, 8);
  double tot = 0, ab = 0;
  for (int64_t k = 0; k < n; k++) {
    tot += v[k];
    ab += fabs(v[k]);
  }
  CHECK(fabs(s0[0] - tot) <= 1e-13 * ab);
  CHECK(fabs(s1[0] - tot / (double)n) <= 1e-13 * ab / (double)n);
  free(s0);
  free(s1);
  uk_array_free(ctx, &ys[0], NULL);
  uk_array_free(ctx, &ys[1], NULL);

  uk_reduction_destroy(sum);
  uk_reduction_destroy(mx);
  uk_reduction_destroy(mxi);
  uk_reduction_destroy(mn);
  uk_reduction_destroy(pr);
  uk_reduction_destroy(mean);
  uk_reduction_destroy(am);
  uk_reduction_destroy(two);
  drop(&xn);
  drop(&xv);
  drop(&xp);
  free(neg);
  free(v);
  free(near1);
}

/* Every axis subset of a 4-D array, keepdims, negative axes, layouts. */
static void axes_and_layouts(void) {
  int64_t shape[] = {3, 4, 5, 6};
  int64_t n = 360;
  double *v = randv(n, -1, 1);
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "rsum4", NULL, NULL);
  int fperm[] = {3, 2, 1, 0}, tperm[] = {1, 3, 0, 2};
  for (int layout = 0; layout < 3; layout++) {
    darr x = make(UK_FLOAT64, 4, shape, layout == 0 ? NULL : layout == 1 ? fperm : tperm, 0, 0, v);
    for (int mask = 0; mask < 16; mask++) {
      int ax[4], na = 0;
      for (int d = 0; d < 4; d++)
        if (mask >> d & 1) ax[na++] = (mask & 8) ? d - 4 : d; /* negative axes on half the subsets */
      for (int keep = 0; keep < 2; keep++) {
        uk_launch l = axes_of(ax, na, keep);
        if (na == 0) l.reduce_none = 1;
        char label[96];
        snprintf(label, sizeof label, "layout %d mask %d keepdims %d", layout, mask, keep);
        run_case(label, sum, R_SUM, &x, v, &l, 1e-13, 0);
      }
    }
    drop(&x);
  }
  /* keepdims shape */
  darr x = make(UK_FLOAT64, 4, shape, NULL, 0, 0, v);
  int ax[] = {1, -1};
  uk_launch l = axes_of(ax, 2, 1);
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x.a);
  CHECK_OK(uk_reduction_call(sum, &in, 1, &y, 1, &l));
  CHECK(y.ndim == 4 && y.shape[0] == 3 && y.shape[1] == 1 && y.shape[2] == 5 && y.shape[3] == 1);
  uk_array_free(ctx, &y, NULL);

  /* given outputs: contiguous and strided (every other element), poison kept */
  int64_t oshape[] = {3, 5};
  int ax13[] = {1, 3};
  uk_launch l13 = axes_of(ax13, 2, 0);
  uint8_t red[UK_MAX_NDIM] = {0, 1, 0, 1};
  double want[15], absum[15];
  int64_t no;
  ref(R_SUM, 4, shape, red, v, want, absum, &no);
  for (int pad = 0; pad < 3; pad += 2) {
    darr yo = make(UK_FLOAT64, 2, oshape, NULL, pad, 0, NULL);
    CHECK_OK(uk_reduction_call(sum, &in, 1, &yo.a, 1, &l13));
    double *got = fetch(&yo.a, yo.buf.data, yo.bytes);
    close_all(pad ? "strided output" : "given output", got, want, absum, 15, 1e-13);
    free(got);
    if (pad) { /* the gaps still hold the poison */
      unsigned char *h = malloc(yo.bytes);
      CHECK_OK(uk_memcpy_dtoh(h, yo.buf.data, yo.bytes));
      CHECK(h[8] == 0xA5 && h[15] == 0xA5);
      free(h);
    }
    drop(&yo);
  }
  drop(&x);

  /* 0-d input */
  double one = 2.5;
  darr z = make(UK_FLOAT64, 0, shape, NULL, 0, 0, &one);
  run_case("0-d", sum, R_SUM, &z, &one, NULL, 0, 0);
  drop(&z);
  free(v);
  uk_reduction_destroy(sum);
}

static void raw_and_empty(void) {
  /* raw input indexed by _J along leading reduced axes */
  uk_reduction *dot = mk("T x, raw T w", "T y", "x * w[_J]", "a + b", "y = a", "0", "wdot", NULL, NULL);
  int64_t shape[] = {50, 7}, wshape[] = {50};
  double *v = randv(350, -1, 1), *w = randv(50, -1, 1);
  darr x = make(UK_FLOAT64, 2, shape, NULL, 0, 0, v), wa = make(UK_FLOAT64, 1, wshape, NULL, 0, 0, w);
  uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&wa.a)};
  int ax0[] = {0}, ax1[] = {1};
  uk_launch l0 = axes_of(ax0, 1, 0), l1 = axes_of(ax1, 1, 0);
  uk_array y;
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_call(dot, in, 2, &y, 1, &l0));
  if (y.data) {
    double *got = fetch(&y, y.data, 7 * 8);
    double want[7] = {0}, ab[7] = {0};
    for (int j = 0; j < 50; j++)
      for (int m = 0; m < 7; m++) {
        want[m] += v[j * 7 + m] * w[j];
        ab[m] += fabs(v[j * 7 + m] * w[j]);
      }
    close_all("raw leading", got, want, ab, 7, 1e-13);
    free(got);
    uk_array_free(ctx, &y, NULL);
  }
  memset(&y, 0, sizeof y);
  CHECK_STATUS(uk_reduction_call(dot, in, 2, &y, 1, &l1), UK_ERR_SHAPE);
  CHECK_CONTAINS(uk_last_error(), "raw input 'w' needs the reduced axes to be the leading ones");
  drop(&x);
  drop(&wa);
  free(v);
  free(w);
  uk_reduction_destroy(dot);

  /* empty reductions */
  uk_reduction *s1 = mk("T x", "T y", "x", "a + b", "y = a + 1", "0", "esum", NULL, NULL);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "emax", NULL, NULL);
  int64_t eshape[] = {5, 0};
  darr e = make(UK_FLOAT32, 2, eshape, NULL, 0, 0, NULL);
  uk_arg ein = uk_arg_array(&e.a);
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_call(s1, &ein, 1, &y, 1, &l1));
  CHECK(y.ndim == 1 && y.shape[0] == 5);
  if (y.data) {
    double *got = fetch(&y, y.data, 20);
    int bad = 0;
    for (int k = 0; k < 5; k++) bad += got[k] != 1.0;
    CHECK(bad == 0);
    free(got);
    uk_array_free(ctx, &y, NULL);
  }
  memset(&y, 0, sizeof y);
  CHECK_STATUS(uk_reduction_call(mx, &ein, 1, &y, 1, &l1), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "zero-size array to reduction operation emax which has no identity");
  /* reducing the non-empty axis of an empty array: no output elements, fine */
  memset(&y, 0, sizeof y);
  CHECK_OK(uk_reduction_call(mx, &ein, 1, &y, 1, &l0));
  CHECK(y.ndim == 1 && y.shape[0] == 0);
  drop(&e);
  uk_reduction_destroy(s1);
  uk_reduction_destroy(mx);
}

/* Shapes that pick each strategy, several dtypes. */
static void strategies(void) {
  struct {
    int64_t r, c;
    int axis, skew;
    uk_dtype t;
  } cases[] = {
      {1024, 4096, 1, 0, UK_FLOAT32},  /* block per row, vectors */
      {1024, 4096, 0, 0, UK_FLOAT32},  /* columns, 8 per output, split */
      {1 << 16, 4, 1, 0, UK_FLOAT32},  /* short rows, a thread each, vectors */
      {1 << 14, 8, 1, 4, UK_FLOAT32},  /* short rows, misaligned: scalar */
      {16, 1 << 16, 0, 0, UK_FLOAT32}, /* few outer rows: a thread per output */
      {4096, 100, 1, 0, UK_FLOAT32},   /* a warp per row */
      {4096, 100, 1, 4, UK_FLOAT32},   /* a warp per row, misaligned */
      {1, 1 << 22, 1, 0, UK_FLOAT32},  /* one long row: split + finish */
      {3, 1 << 20, 1, 0, UK_FLOAT16},  /* half in, float reduce type */
      {300, 300, 0, 0, UK_COMPLEX64},  /* complex columns */
      {300, 300, 1, 0, UK_INT32},      /* exact integers */
      {300, 300, 1, 8, UK_INT64},
      {70002, 2, 1, 0, UK_FLOAT32},   /* rows of 2 packed in float4: a partial last warp */
      {4099, 2, 1, 0, UK_FLOAT32},    /* rows of 2, an odd count: a thread each */
      {70002, 2, 1, 4, UK_FLOAT32},   /* rows of 2, misaligned: a thread each */
      {20004, 2, 1, 0, UK_FLOAT16},   /* 4 rows of 2 per vector of 8 halves */
      {3001, 2, 1, 0, UK_FLOAT64},    /* one row of 2 per vector */
      {5000, 2, 1, 0, UK_INT32},
      {2, (1 << 18) + 4, 0, 0, UK_FLOAT32}, /* 2 outer rows: 4 adjacent outputs per thread */
      {2, 1001, 0, 0, UK_FLOAT32},    /* 2 outer rows, odd: an output per thread */
      {200, 3000, 0, 0, UK_FLOAT32},  /* columns, 8 threads per output, not split */
      {16384, 256, 0, 0, UK_FLOAT32}, /* columns, split over whole waves */
      /* short rows of 64-255 bytes (uk__red_narrow_lanes): 2 or 4 threads a row */
      {(1 << 16) + 3, 32, 1, 0, UK_FLOAT32}, /* 128 bytes: 4 threads, 2 vectors each */
      {4099, 24, 1, 0, UK_FLOAT32},          /* 96 bytes: 2 threads, 3 and 3 vectors */
      {3001, 20, 1, 0, UK_FLOAT32},          /* 80 bytes: 2 threads, 3 and 2 vectors */
      {5001, 16, 1, 0, UK_FLOAT64},          /* 128 bytes of doubles: 4 threads */
      {4097, 32, 1, 0, UK_INT32},            /* exact integers, 4 threads */
      {4097, 32, 1, 4, UK_FLOAT32},          /* misaligned: 8 threads, scalars, narrow program */
      {8193, 30, 1, 0, UK_FLOAT32},          /* rows of 120 bytes: no vectors, 8 threads */
  };
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "ssum", NULL, NULL);
  uk_reduction *hsum = mk("T x", "T y", "x", "a + b", "y = a", "0", "hsum", "float", NULL);
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    int64_t shape[] = {cases[j].r, cases[j].c}, n = cases[j].r * cases[j].c;
    uk_dtype t = cases[j].t;
    int integer = t == UK_INT32 || t == UK_INT64;
    double *v = randv(n, -1, 1);
    for (int64_t k = 0; k < n; k++) {
      if (integer) v[k] = floor(v[k] * 1000);
      if (t == UK_FLOAT16) v[k] = uk__f16_bits_to_f64(uk__f64_to_f16_bits(v[k]));
      if (t == UK_FLOAT32) v[k] = (float)v[k];
    }
    darr x = make(t, 2, shape, NULL, 0, cases[j].skew, v);
    int ax[] = {cases[j].axis};
    uk_launch l = axes_of(ax, 1, 0);
    char label[96];
    snprintf(label, sizeof label, "strategy (%lld, %lld) axis %d skew %d %s", (long long)cases[j].r,
             (long long)cases[j].c, cases[j].axis, cases[j].skew, uk_dtype_name(t));
    double tol = integer ? 0 : t == UK_FLOAT16 ? 2e-3 : t == UK_FLOAT64 ? 1e-13 : 2e-6;
    run_case(label, t == UK_FLOAT16 ? hsum : sum, R_SUM, &x, v, &l, tol, 0);
    run_case(label, t == UK_FLOAT16 ? hsum : sum, R_SUM, &x, v, NULL, tol, 0);
    drop(&x);
    free(v);
  }
  /* rows of 2 packed: no identity (the maximum of negative data) and _J
   * (the position within the row, not within the vector) */
  int64_t shape2[] = {4100, 2}, n2 = 4100 * 2;
  double *neg = randv(n2, -100, -1);
  for (int64_t k = 0; k < n2; k++) neg[k] = (float)neg[k];
  darr xn = make(UK_FLOAT32, 2, shape2, NULL, 0, 0, neg);
  int ax1[] = {1};
  uk_launch l1 = axes_of(ax1, 1, 0);
  uk_reduction *mx = mk("T x", "T y", "x", "max(a, b)", "y = a", NULL, "pmax", NULL, NULL);
  run_case("rows of 2, max, no identity", mx, R_MAX, &xn, neg, &l1, 0, 0);
  uk_reduction *wj = mk("T x", "T y", "x * (T)(_J + 1)", "a + b", "y = a", "0", "pwj", NULL, NULL);
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&xn.a);
  CHECK_OK(uk_reduction_call(wj, &in, 1, &y, 1, &l1));
  double *got = fetch(&y, y.data, 4100 * 4);
  int bad = 0;
  for (int64_t o = 0; o < 4100; o++) {
    double want = neg[2 * o] + 2 * neg[2 * o + 1];
    if (fabs(got[o] - want) > 1e-5 * fabs(want)) bad++;
  }
  CHECK(bad == 0);
  free(got);
  uk_array_free(ctx, &y, NULL);
  drop(&xn);
  free(neg);
  uk_reduction_destroy(mx);
  uk_reduction_destroy(wj);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(hsum);
}

/* Both variants on the same array; the CUB one's output against the
 * default's (tol 0: bit for bit) and, through run_case, the reference. */
static void same_as_default(const char *label, uk_reduction *kd, uk_reduction *kc, int op, const darr *x,
                            const double *vals, const uk_launch *l, double tol) {
  uk_array y[2];
  memset(y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x->a);
  CHECK_OK(uk_reduction_call(kd, &in, 1, &y[0], 1, l));
  uk_status st = uk_reduction_call(kc, &in, 1, &y[1], 1, l);
  ut_checks++;
  if (st != UK_OK) {
    ut_failures++;
    fprintf(stderr, "%s (cub): %s: %s\n%s", label, uk_status_name(st), uk_last_error(), uk_last_error_log());
  } else {
    CHECK(y[0].ndim == y[1].ndim && memcmp(y[0].shape, y[1].shape, sizeof(int64_t) * (size_t)y[0].ndim) == 0);
    int64_t no = size_of(y[0].ndim, y[0].shape);
    if (no > 0) {
      size_t bytes = (size_t)no * uk_dtype_size(y[0].dtype);
      double *a = fetch(&y[0], y[0].data, bytes), *b = fetch(&y[1], y[1].data, bytes);
      char lab[160];
      snprintf(lab, sizeof lab, "%s: cub vs default", label);
      close_all(lab, b, a, NULL, no, tol);
      free(a);
      free(b);
      if (op >= 0) run_case(label, kc, op, x, vals, l, tol > 0 ? tol : 1e-6, 0);
    }
  }
  uk_array_free(ctx, &y[0], NULL);
  uk_array_free(ctx, &y[1], NULL);
}

static void cub_variant(void) {
  struct {
    int nd;
    int64_t s[3];
    int ax[3], nax, keep;
    uk_dtype t;
  } cases[] = {
      {2, {1024, 4096}, {1}, 1, 0, UK_FLOAT32},       /* a block per row: the CUB combine */
      {2, {1024, 4096}, {1}, 1, 1, UK_INT32},         /* exact: bit for bit */
      {2, {1, 1 << 22}, {1}, 1, 0, UK_FLOAT64},       /* split + finish, both through CUB */
      {3, {7, 3, 1001}, {0, 2}, 2, 1, UK_FLOAT32},    /* odd sizes, several axes, keepdims */
      {3, {5, 333, 17}, {-1, 0}, 2, 0, UK_INT64},
      {2, {300, 300}, {0}, 1, 0, UK_COMPLEX64},       /* columns: the same code in both */
      {2, {70002, 2}, {1}, 1, 0, UK_FLOAT32},         /* rows of 2, packed */
      {2, {50, 0}, {1}, 1, 0, UK_FLOAT32},            /* empty reductions: the identity */
      {2, {0, 50}, {1}, 1, 1, UK_FLOAT32},            /* no outputs */
      {1, {1}, {0}, 0, 0, UK_FLOAT32},                /* full, one element */
      {3, {33, 65, 129}, {0}, 0, 0, UK_INT32},        /* full reduction, odd */
  };
  uk_reduction *sd = mk("T x", "T y", "x", "a + b", "y = a", "0", "csum", NULL, NULL);
  mk_block_reduce = UK_BLOCK_REDUCE_CUB;
  uk_reduction *sc = mk("T x", "T y", "x", "a + b", "y = a", "0", "csum", NULL, NULL);
  mk_block_reduce = UK_BLOCK_REDUCE_UKERN;
  for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) {
    uk_dtype t = cases[j].t;
    int64_t n = size_of(cases[j].nd, cases[j].s);
    int integer = t == UK_INT32 || t == UK_INT64;
    double *v = randv(n, integer ? -1 : 0.5, integer ? 1 : 1.5); /* float sums far from 0: relative tolerances */
    for (int64_t k = 0; k < n; k++) v[k] = integer ? floor(v[k] * 1000) : (float)v[k];
    darr x = make(t, cases[j].nd, cases[j].s, NULL, 0, 0, v);
    uk_launch l = axes_of(cases[j].ax, cases[j].nax, cases[j].keep);
    char label[96];
    snprintf(label, sizeof label, "cub case %zu %s", j, uk_dtype_name(t));
    same_as_default(label, sd, sc, R_SUM, &x, v, &l, integer ? 0 : t == UK_FLOAT64 ? 1e-13 : 2e-6);
    drop(&x);
    free(v);
  }
  /* struct reduce type, no identity (red_opt<amax> through CUB): the same indices */
  const char *pre = "struct amax { double v; long long i; };\n"
                    "__device__ amax mk(double v, long long i) { amax r; r.v = v; r.i = i; return r; }\n";
  uk_reduction *ad = mk("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "camax", "amax", pre);
  mk_block_reduce = UK_BLOCK_REDUCE_CUB;
  uk_reduction *ac = mk("T x", "int64 y", "mk(x, _J)", "a.v >= b.v ? a : b", "y = a.i", NULL, "camax", "amax", pre);
  mk_block_reduce = UK_BLOCK_REDUCE_UKERN;
  int64_t sa[] = {513, 3001};
  double *v = randv(sa[0] * sa[1], -1, 1); /* distinct values: no ties */
  darr x = make(UK_FLOAT64, 2, sa, NULL, 0, 0, v);
  int ax1[] = {1};
  uk_launch l = axes_of(ax1, 1, 0);
  same_as_default("cub argmax struct rows", ad, ac, -1, &x, v, &l, 0);
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x.a);
  CHECK_OK(uk_reduction_call(ac, &in, 1, &y, 1, &l));
  if (y.data) { /* against the host's argmax too */
    double *got = fetch(&y, y.data, (size_t)sa[0] * 8);
    int bad = 0;
    for (int64_t r = 0; r < sa[0]; r++) {
      int64_t best = 0;
      for (int64_t c = 1; c < sa[1]; c++)
        if (v[r * sa[1] + c] > v[r * sa[1] + best]) best = c;
      bad += got[r] != (double)best;
    }
    CHECK(bad == 0);
    free(got);
  }
  uk_array_free(ctx, &y, NULL);
  drop(&x);
  free(v);
  uk_reduction_destroy(ad);
  uk_reduction_destroy(ac);
  uk_reduction_destroy(sd);
  uk_reduction_destroy(sc);
}

static void errors(void) {
  uk_reduction *sum = mk("T x", "T y", "x", "a + b", "y = a", "0", "esum", NULL, NULL);
  uk_reduction *f64 = mk("float64 x", "float64 y", "x", "a + b", "y = a", "0", "fsum", NULL, NULL);
  int64_t shape[] = {4, 6};
  double *v = randv(24, -1, 1);
  darr x = make(UK_FLOAT32, 2, shape, NULL, 0, 0, v);
  uk_arg in = uk_arg_array(&x.a);
  uk_array y;
  memset(&y, 0, sizeof y);
  int dup[] = {1, -1}, oob[] = {2};
  uk_launch l = axes_of(dup, 2, 0);
  CHECK_STATUS(uk_reduction_call(sum, &in, 1, &y, 1, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "esum: axis -1 is repeated in axes (axis 1): duplicate value in 'axis'");
  l = axes_of(oob, 1, 0);
  CHECK_STATUS(uk_reduction_call(sum, &in, 1, &y, 1, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "esum: axis 2 is out of bounds for an input of ndim 2");
  CHECK_STATUS(uk_reduction_call(f64, &in, 1, &y, 1, NULL), UK_ERR_TYPE);
  /* a given output of the wrong shape */
  int64_t wrong[] = {6};
  darr yo = make(UK_FLOAT32, 1, wrong, NULL, 0, 0, NULL);
  int ax1[] = {1};
  l = axes_of(ax1, 1, 0);
  CHECK_STATUS(uk_reduction_call(sum, &in, 1, &yo.a, 1, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "esum: output 'y' has shape (6,) but the result shape is (4,)");
  drop(&yo);
  drop(&x);
  free(v);
  uk_reduction_destroy(sum);
  uk_reduction_destroy(f64);
}

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_reduction");
  ut_seed(42);
  user_guide();
  ops();
  axes_and_layouts();
  raw_and_empty();
  strategies();
  cub_variant();
  errors();
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_reduction");
}
