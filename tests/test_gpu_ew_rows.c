/* Elementwise loops of two or more axes on a GPU (issue 25): the rows plan
 * (ROWS, with and without vectors), beside the tiled and vectorised plans
 * the same shapes may take, over broadcast rows and columns, a broadcast
 * middle axis, zero and negative strides, padded and strided views, given
 * outputs with gaps (which must stay poisoned), 0-d and zero-size loops,
 * block sizes that leave threads idle, and more row groups than a grid's
 * y extent. Every case is checked element by element against a host
 * reference in double precision, with `i` (the loop's flat index) in the
 * operation; the variant each case takes is checked in its source. */
#include <math.h>

#include "testutil.h"

static uk_context *ctx;

/* A view of a buffer: strides in elements (0 and negative allowed); the
 * buffer holds `span` elements and [0, ..., 0] is element `base`. */
typedef struct view {
  int ndim;
  int64_t shape[3], strides[3], base, span;
} view;

static view mk(int ndim, const int64_t *shape, const int64_t *strides) {
  view v;
  memset(&v, 0, sizeof v);
  v.ndim = ndim;
  int64_t s = 1, lo = 0, hi = 0, empty = 0;
  for (int d = ndim - 1; d >= 0; d--) {
    v.shape[d] = shape[d];
    v.strides[d] = strides ? strides[d] : s;
    s *= shape[d];
    empty |= shape[d] == 0;
    if (shape[d] > 0) {
      if (v.strides[d] < 0) lo += v.strides[d] * (shape[d] - 1);
      else hi += v.strides[d] * (shape[d] - 1);
    }
  }
  v.base = -lo;
  v.span = empty ? 1 : hi - lo + 1;
  return v;
}

typedef struct operand {
  view v;
  uk_dtype t;
  double *h; /* the buffer's values */
  uk_array buf, a;
} operand;

static void put(uk_dtype t, void *dst, double v) {
  switch (t) {
  case UK_INT8: *(signed char *)dst = (signed char)v; break;
  case UK_FLOAT32: *(float *)dst = (float)v; break;
  default: *(double *)dst = v; break;
  }
}
static double get(uk_dtype t, const void *src) {
  switch (t) {
  case UK_INT8: return *(const signed char *)src;
  case UK_FLOAT32: return *(const float *)src;
  default: return *(const double *)src;
  }
}

/* Allocates the buffer, fills it (random, or the poison 0x5A bytes when
 * h_poison) and describes the view. */
static void make_operand(operand *o, uk_dtype t, view v, int poison) {
  memset(o, 0, sizeof *o);
  o->v = v;
  o->t = t;
  size_t it = uk_dtype_size(t), bytes = (size_t)v.span * it;
  int64_t n = v.span;
  CHECK_OK(uk_array_alloc(ctx, t, 1, &n, 0, NULL, &o->buf));
  unsigned char *hb = malloc(bytes);
  o->h = malloc((size_t)v.span * sizeof(double));
  for (int64_t j = 0; j < v.span; j++) {
    if (poison) {
      memset(hb + (size_t)j * it, 0x5A, it);
    } else {
      double x = t == UK_INT8 ? (double)(int)ut_uniform(-20, 20) : ut_uniform(-8, 8);
      put(t, hb + (size_t)j * it, x);
    }
    o->h[j] = get(t, hb + (size_t)j * it);
  }
  if (o->buf.data) CHECK_OK(uk_memcpy_htod(o->buf.data, hb, bytes));
  free(hb);
  memset(&o->a, 0, sizeof o->a);
  o->a.data = o->buf.data + (uint64_t)(v.base * (int64_t)it);
  o->a.dtype = t;
  o->a.ndim = v.ndim;
  for (int d = 0; d < v.ndim; d++) {
    o->a.shape[d] = v.shape[d];
    o->a.strides[d] = v.strides[d] * (int64_t)it;
  }
}

static void free_operand(operand *o) {
  uk_array_free(ctx, &o->buf, NULL);
  free(o->h);
}

/* The element of view v at loop index idx (loop of ndim nd), broadcast as
 * NumPy does (axes aligned on the right, extent 1 repeats). */
static int64_t elem(const view *v, int nd, const int64_t *idx) {
  int64_t off = v->base;
  for (int a = 0; a < v->ndim; a++) {
    int64_t k = idx[a + nd - v->ndim];
    if (v->shape[a] > 1) off += k * v->strides[a];
  }
  return off;
}

typedef struct ew_case {
  const char *label;
  uk_dtype t;
  int xn, yn, zn;        /* ndims (zn: the loop's) */
  int given;             /* bit 0, 1, 2: x's, y's, z's strides are given (else C-contiguous) */
  int64_t xs[3], xst[3]; /* shape, strides in elements */
  int64_t ys[3], yst[3];
  int64_t zs[3], zst[3]; /* the given output's view (its shape is the loop's) */
  const char *want;      /* in the source at block 0; NULL: not checked */
  int blocks[3];         /* block sizes to run (0: ukern's) */
} ew_case;

static const char *const OP = "z = x * (T)2 + y + (T)(i % 5)";

static void run_case(uk_elementwise *k, const ew_case *c) {
  operand x, y, z;
  make_operand(&x, c->t, mk(c->xn, c->xs, c->given & 1 ? c->xst : NULL), 0);
  make_operand(&y, c->t, mk(c->yn, c->ys, c->given & 2 ? c->yst : NULL), 0);
  make_operand(&z, c->t, mk(c->zn, c->zs, c->given & 4 ? c->zst : NULL), 1);
  int nd = c->zn;
  int64_t size = 1;
  for (int d = 0; d < nd; d++) size *= c->zs[d];
  /* the reference over the loop, in C order (i is that order) */
  double *want = malloc((size_t)(size ? size : 1) * sizeof(double));
  int64_t idx[3] = {0, 0, 0};
  for (int64_t f = 0; f < size; f++) {
    int64_t r = f;
    for (int d = nd - 1; d >= 0; d--) {
      idx[d] = r % c->zs[d];
      r /= c->zs[d];
    }
    want[f] = x.h[elem(&x.v, nd, idx)] * 2 + y.h[elem(&y.v, nd, idx)] + (double)(f % 5);
  }
  uk_arg in[2] = {uk_arg_array(&x.a), uk_arg_array(&y.a)};
  size_t it = uk_dtype_size(c->t), bytes = (size_t)z.v.span * it;
  unsigned char *poison = malloc(bytes), *got = malloc(bytes);
  memset(poison, 0x5A, bytes);
  for (int b = 0; b < 3; b++) {
    if (b > 0 && c->blocks[b] == 0) break;
    uk_launch l = {.size = -1, .block_size = c->blocks[b]};
    if (b == 0 && c->want) {
      char *src = NULL;
      CHECK_OK(uk_elementwise_source(k, in, 2, &z.a, 1, &l, &src));
      CHECK_CONTAINS(src, c->want);
      uk_free(src);
    }
    if (z.buf.data) CHECK_OK(uk_memcpy_htod(z.buf.data, poison, bytes));
    CHECK_OK(uk_elementwise_call(k, in, 2, &z.a, 1, &l));
    CHECK_OK(uk_device_synchronize());
    if (z.buf.data) CHECK_OK(uk_memcpy_dtoh(got, z.buf.data, bytes));
    /* every loop element right, every byte outside the view still poison */
    unsigned char *seen = calloc((size_t)z.v.span, 1);
    int64_t bad = 0, first = -1;
    for (int64_t f = 0; f < size; f++) {
      int64_t r = f;
      for (int d = nd - 1; d >= 0; d--) {
        idx[d] = r % c->zs[d];
        r /= c->zs[d];
      }
      int64_t e = elem(&z.v, nd, idx);
      seen[e] = 1;
      double g = get(c->t, got + (size_t)e * it), tol = c->t == UK_FLOAT32 ? 1e-5 : 1e-12;
      if (!(fabs(g - want[f]) <= tol * (1 + fabs(want[f])))) {
        if (first < 0) first = f;
        bad++;
      }
    }
    int64_t stray = 0;
    for (int64_t e = 0; e < z.v.span && z.buf.data; e++)
      if (!seen[e]) stray += memcmp(got + (size_t)e * it, poison, it) != 0;
    CHECK(bad == 0 && stray == 0);
    if (bad || stray)
      fprintf(stderr, "%s, block %d: %lld of %lld elements wrong (first: flat %lld), %lld written outside the view\n",
              c->label, c->blocks[b], (long long)bad, (long long)size, (long long)first, (long long)stray);
    free(seen);
  }
  /* allocated output: the loop's shape, C-contiguous, the same values */
  uk_array za;
  memset(&za, 0, sizeof za);
  CHECK_OK(uk_elementwise_call(k, in, 2, &za, 1, NULL));
  CHECK(za.ndim == nd && za.dtype == c->t);
  for (int d = 0; d < nd && d < za.ndim; d++) CHECK(za.shape[d] == c->zs[d]);
  if (za.data && size > 0) {
    CHECK_OK(uk_device_synchronize());
    unsigned char *h = malloc((size_t)size * it);
    CHECK_OK(uk_memcpy_dtoh(h, za.data, (size_t)size * it));
    int64_t bad = 0;
    for (int64_t f = 0; f < size; f++) {
      double g = get(c->t, h + (size_t)f * it), tol = c->t == UK_FLOAT32 ? 1e-5 : 1e-12;
      bad += !(fabs(g - want[f]) <= tol * (1 + fabs(want[f])));
    }
    CHECK(bad == 0);
    if (bad) fprintf(stderr, "%s, allocated output: %lld elements wrong\n", c->label, (long long)bad);
    free(h);
  }
  uk_array_free(ctx, &za, NULL);
  free(poison);
  free(got);
  free(want);
  free_operand(&x);
  free_operand(&y);
  free_operand(&z);
}

#define F32 UK_FLOAT32
#define F64 UK_FLOAT64
#define I8 UK_INT8

static const ew_case cases[] = {
    {"1023x1025 + row",
     F32,
     2,
     1,
     2,
     0,
     {1023, 1025},
     {0},
     {1025},
     {0},
     {1023, 1025},
     {0},
     "rows, 32-bit index, ndim 2",
     {0, 100, 1024}},
    {"1023x1025 + column",
     F32,
     2,
     2,
     2,
     0,
     {1023, 1025},
     {0},
     {1023, 1},
     {0},
     {1023, 1025},
     {0},
     "rows, 32-bit index, ndim 2",
     {0, 100, 1024}},
    {"1024x1024 + row: vectors",
     F32,
     2,
     1,
     2,
     0,
     {1024, 1024},
     {0},
     {1024},
     {0},
     {1024, 1024},
     {0},
     "rows, vectorised x4, 32-bit index, ndim 2",
     {0, 100, 1024}},
    {"1024x1024 + column: vectors, y once per row",
     F32,
     2,
     2,
     2,
     0,
     {1024, 1024},
     {0},
     {1024, 1},
     {0},
     {1024, 1024},
     {0},
     "rows, vectorised x4, 32-bit index, ndim 2",
     {0, 100, 1024}},
    {"1000x1022 of 1024-wide rows: vectors and a tail of 2",
     F32,
     2,
     1,
     2,
     5,
     {1000, 1022},
     {1024, 1},
     {1022},
     {0},
     {1000, 1022},
     {1024, 1},
     "rows, vectorised x4",
     {0, 100, 1024}},
    {"rows reversed, y reversed",
     F32,
     2,
     1,
     2,
     3,
     {513, 1025},
     {-1025, 1},
     {1025},
     {-1},
     {513, 1025},
     {0},
     "rows, 32-bit index, ndim 2",
     {0, 100, 0}},
    {"y with zero strides on both axes: one merged axis",
     F32,
     2,
     2,
     2,
     2,
     {1023, 1025},
     {0},
     {1023, 1025},
     {0, 0},
     {1023, 1025},
     {0},
     "ndim 1",
     {0, 100, 0}},
    {"y with a zero inner stride (as_strided column)",
     F32,
     2,
     2,
     2,
     2,
     {1023, 1025},
     {0},
     {1023, 1025},
     {1, 0},
     {1023, 1025},
     {0},
     "rows, 32-bit index, ndim 2",
     {0, 1024, 0}},
    {"3-d, middle axis broadcast, odd rows",
     F32,
     3,
     3,
     3,
     0,
     {7, 5, 129},
     {0},
     {7, 1, 129},
     {0},
     {7, 5, 129},
     {0},
     "rows, 32-bit index, ndim 3",
     {0, 100, 0}},
    {"3-d, middle axis broadcast, vectors",
     F32,
     3,
     3,
     3,
     0,
     {6, 5, 128},
     {0},
     {6, 1, 128},
     {0},
     {6, 5, 128},
     {0},
     "rows, vectorised x4, 32-bit index, ndim 3",
     {0, 100, 0}},
    {"y transposed: tiled",
     F32,
     2,
     2,
     2,
     2,
     {1023, 1025},
     {0},
     {1023, 1025},
     {1, 1023},
     {1023, 1025},
     {0},
     "tiled 32x32",
     {0, 100, 0}},
    {"output every other column",
     F32,
     2,
     1,
     2,
     4,
     {1023, 1025},
     {0},
     {1025},
     {0},
     {1023, 1025},
     {2050, 2},
     "rows, 32-bit index, ndim 2",
     {0, 100, 0}},
    {"int8 rows of 2, 16 bytes apart: vectors halved",
     I8,
     2,
     1,
     2,
     5,
     {301, 2},
     {16, 1},
     {2},
     {0},
     {301, 2},
     {16, 1},
     "rows, vectorised x2, 32-bit index, ndim 2",
     {0, 100, 0}},
    {"float64 257x130 + column",
     F64,
     2,
     2,
     2,
     0,
     {257, 130},
     {0},
     {257, 1},
     {0},
     {257, 130},
     {0},
     "rows, vectorised x2, 32-bit index, ndim 2",
     {0, 100, 1024}},
    {"65573 row groups of one row at block 32: past grid y",
     F32,
     2,
     1,
     2,
     0,
     {65573, 128},
     {0},
     {128},
     {0},
     {65573, 128},
     {0},
     "rows, vectorised x4",
     {0, 32, 0}},
    {"0-d", F32, 0, 0, 0, 0, {0}, {0}, {0}, {0}, {0}, {0}, "ndim 0", {0, 0, 0}},
    {"zero rows", F32, 2, 1, 2, 0, {0, 1025}, {0}, {1025}, {0}, {0, 1025}, {0}, NULL, {0, 0, 0}},
    {"zero columns", F32, 2, 1, 2, 0, {1023, 0}, {0}, {0}, {0}, {1023, 0}, {0}, NULL, {0, 0, 0}},
};

int main(void) {
  ut_require_gpu();
  CHECK_OK(uk_context_create(NULL, &ctx));
  if (!ctx) return ut_finish("test_gpu_ew_rows");
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = "T x, T y", .out_params = "T z", .operation = OP, .name = "rows_add"},
      &k));
  if (k)
    for (size_t j = 0; j < sizeof cases / sizeof cases[0]; j++) run_case(k, &cases[j]);
  uk_elementwise_destroy(k);
  CHECK_OK(uk_device_synchronize());
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_ew_rows");
}
