/* Broadcasting, dimension merging, index width and contiguity. */
#include <stdio.h>

#include "codegen/shape.h"
#include "testutil.h"

static uk_operand_view view(const char *name, int ndim, const int64_t *shape, const int64_t *strides, int64_t item) {
  uk_operand_view v = {name, ndim, shape, strides, item};
  return v;
}

static void test_broadcast(void) {
  int64_t s25[] = {2, 5}, st25[] = {20, 4}, s5[] = {5}, st5[] = {4};
  uk_operand_view ops[2] = {view("x", 2, s25, st25, 4), view("y", 1, s5, st5, 4)};
  uk_loop l;
  CHECK_OK(uk__shape_broadcast(2, ops, &l));
  CHECK(l.ndim == 2 && l.shape[0] == 2 && l.shape[1] == 5 && l.size == 10);
  CHECK(l.strides[0][0] == 20 && l.strides[0][1] == 4);
  CHECK(l.strides[1][0] == 0 && l.strides[1][1] == 4);
  uk__shape_merge(&l); /* y is broadcast along axis 0: no merge */
  CHECK(l.ndim == 2);

  int64_t s31[] = {3, 1}, st31[] = {8, 8}, s14[] = {1, 4}, st14[] = {16, 4};
  uk_operand_view o2[2] = {view("a", 2, s31, st31, 8), view("b", 2, s14, st14, 4)};
  CHECK_OK(uk__shape_broadcast(2, o2, &l));
  CHECK(l.shape[0] == 3 && l.shape[1] == 4);
  CHECK(l.strides[0][0] == 8 && l.strides[0][1] == 0 && l.strides[1][0] == 0 && l.strides[1][1] == 4);

  int64_t s3[] = {3}, s4[] = {4}, st[] = {4};
  uk_operand_view bad[2] = {view("x", 1, s3, st, 4), view("y", 1, s4, st, 4)};
  CHECK_STATUS(uk__shape_broadcast(2, bad, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "shapes do not broadcast: 'x' has shape (3,) and 'y' has shape (4,)");

  int64_t s234[] = {2, 3, 4}, st234[] = {48, 16, 4}, s34[] = {3, 5}, st34[] = {20, 4};
  uk_operand_view bad2[2] = {view("x", 3, s234, st234, 4), view("z", 2, s34, st34, 4)};
  CHECK_STATUS(uk__shape_broadcast(2, bad2, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "shapes do not broadcast: 'x' has shape (2, 3, 4) and 'z' has shape (3, 5)");

  /* 0-d with 1-d */
  uk_operand_view o3[2] = {view("s", 0, NULL, NULL, 4), view("v", 1, s3, st, 4)};
  CHECK_OK(uk__shape_broadcast(2, o3, &l));
  CHECK(l.ndim == 1 && l.shape[0] == 3 && l.strides[0][0] == 0 && l.strides[1][0] == 4);

  /* only 0-d: loop shape () of size 1 */
  CHECK_OK(uk__shape_broadcast(1, o3, &l));
  CHECK(l.ndim == 0 && l.size == 1);
  uk__shape_merge(&l);
  CHECK(l.ndim == 0);

  /* zero-size */
  int64_t s03[] = {0, 3}, st03[] = {12, 4};
  uk_operand_view o4[2] = {view("e", 2, s03, st03, 4), view("v", 1, s3, st, 4)};
  CHECK_OK(uk__shape_broadcast(2, o4, &l));
  CHECK(l.size == 0 && l.shape[0] == 0 && l.shape[1] == 3);
  uk__shape_merge(&l);
  CHECK(l.ndim == 1 && l.shape[0] == 0);

  int64_t neg[] = {-1};
  uk_operand_view o5[1] = {view("n", 1, neg, st, 4)};
  CHECK_STATUS(uk__shape_broadcast(1, o5, &l), UK_ERR_SHAPE);
}

static void merged(int ndim, const int64_t *shape, const int64_t *strides, int want_ndim,
                   const int64_t *want_shape, const int64_t *want_strides) {
  uk_operand_view v = view("x", ndim, shape, strides, 4);
  uk_loop l;
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  uk__shape_merge(&l);
  CHECK(l.ndim == want_ndim);
  for (int d = 0; d < want_ndim && d < l.ndim; d++) {
    CHECK(l.shape[d] == want_shape[d]);
    CHECK(l.strides[0][d] == want_strides[d]);
  }
}

static void test_merge(void) {
  merged(3, (int64_t[]){2, 3, 4}, (int64_t[]){48, 16, 4}, 1, (int64_t[]){24}, (int64_t[]){4});
  /* X[:, ::2] of a (4, 8) float array walks memory with one stride */
  merged(2, (int64_t[]){4, 4}, (int64_t[]){32, 8}, 1, (int64_t[]){16}, (int64_t[]){8});
  /* X[:, :3] of a (4, 8) array can't merge */
  merged(2, (int64_t[]){4, 3}, (int64_t[]){32, 4}, 2, (int64_t[]){4, 3}, (int64_t[]){32, 4});
  /* transposed (3, 4) view of a (4, 3) array */
  merged(2, (int64_t[]){3, 4}, (int64_t[]){4, 12}, 2, (int64_t[]){3, 4}, (int64_t[]){4, 12});
  /* reversed on both axes: one negative stride */
  merged(2, (int64_t[]){3, 4}, (int64_t[]){-16, -4}, 1, (int64_t[]){12}, (int64_t[]){-4});
  /* size-1 axes drop, whatever their stride */
  merged(3, (int64_t[]){1, 5, 1}, (int64_t[]){999, 4, 777}, 1, (int64_t[]){5}, (int64_t[]){4});
  /* zero stride (broadcast view) stays its own axis */
  merged(2, (int64_t[]){3, 4}, (int64_t[]){0, 4}, 2, (int64_t[]){3, 4}, (int64_t[]){0, 4});
  /* all zero strides merge into one 0-stride axis */
  merged(2, (int64_t[]){3, 4}, (int64_t[]){0, 0}, 1, (int64_t[]){12}, (int64_t[]){0});

  /* two operands: merge only where both are contiguous across the axes */
  int64_t s[] = {2, 3, 4}, a[] = {48, 16, 4}, b[] = {64, 16, 4};
  uk_operand_view ops[2] = {view("a", 3, s, a, 4), view("b", 3, s, b, 4)};
  uk_loop l;
  CHECK_OK(uk__shape_broadcast(2, ops, &l));
  uk__shape_merge(&l);
  CHECK(l.ndim == 2 && l.shape[0] == 2 && l.shape[1] == 12);
  CHECK(l.strides[0][0] == 48 && l.strides[1][0] == 64 && l.strides[0][1] == 4 && l.strides[1][1] == 4);
  int64_t items[2] = {4, 4};
  CHECK(!uk__shape_is_contiguous(&l, items));
}

static void test_index_width(void) {
  uk_loop l;
  int64_t big[] = {((int64_t)1 << 31) + 5}, one[] = {1};
  uk_operand_view v = view("x", 1, big, one, 1);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(!uk__shape_fits_int32(&l));
  int64_t small[] = {1000};
  v = view("x", 1, small, one, 1);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(uk__shape_fits_int32(&l));
  /* few elements but a huge stride: byte offsets overflow int32 */
  int64_t huge[] = {(int64_t)1 << 30};
  v = view("x", 1, (int64_t[]){4}, huge, 4);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(!uk__shape_fits_int32(&l));
  /* negative strides count by magnitude */
  v = view("x", 1, (int64_t[]){3}, (int64_t[]){-((int64_t)1 << 30)}, 4);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(!uk__shape_fits_int32(&l));
  v = view("x", 1, (int64_t[]){2}, (int64_t[]){-((int64_t)1 << 30)}, 4);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(uk__shape_fits_int32(&l));

  int64_t items[1] = {4};
  v = view("x", 1, (int64_t[]){7}, (int64_t[]){4}, 4);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(uk__shape_is_contiguous(&l, items));
  v = view("x", 1, (int64_t[]){7}, (int64_t[]){-4}, 4);
  CHECK_OK(uk__shape_broadcast(1, &v, &l));
  CHECK(!uk__shape_is_contiguous(&l, items));
}

/* uk__shape_fits_int32 on both sides of 2^31: the element count, and each
 * operand's reach in either direction (strides of either sign, INT64_MIN
 * included). One operand, loop built directly (no merging). */
static void test_index_width_bounds(void) {
  static const struct {
    int ndim;
    int64_t shape[2], strides[2];
    int fits;
  } c[] = {
      {1, {INT32_MAX, 0}, {1, 0}, 1},                        /* 2^31 - 1 elements */
      {1, {(int64_t)INT32_MAX + 1, 0}, {1, 0}, 0},           /* 2^31 */
      {1, {(int64_t)INT32_MAX + 2, 0}, {1, 0}, 0},           /* 2^31 + 1 */
      {1, {INT32_MAX, 0}, {-1, 0}, 1},                       /* reach -(2^31 - 2) */
      {1, {(int64_t)INT32_MAX + 1, 0}, {-1, 0}, 0},
      {1, {(int64_t)INT32_MAX + 1, 0}, {0, 0}, 0},           /* broadcast: the count alone */
      {1, {2, 0}, {INT32_MAX, 0}, 1},                        /* reach 2^31 - 1 */
      {1, {2, 0}, {(int64_t)INT32_MAX + 1, 0}, 0},           /* reach 2^31 */
      {1, {2, 0}, {-(int64_t)INT32_MAX, 0}, 1},
      {1, {2, 0}, {-(int64_t)INT32_MAX - 1, 0}, 0},          /* -2^31: its magnitude does not fit */
      {1, {2, 0}, {INT64_MIN, 0}, 0},                        /* no -INT64_MIN */
      {1, {1, 0}, {INT64_MIN, 0}, 1},                        /* one element: the stride never moves */
      {1, {3, 0}, {INT64_MAX, 0}, 0},
      /* two axes adding up to exactly 2^31 - 1, then one more, each direction */
      {2, {2, (int64_t)1 << 29}, {((int64_t)1 << 31) - ((int64_t)1 << 29), 1}, 1},
      {2, {2, (int64_t)1 << 29}, {((int64_t)1 << 31) - ((int64_t)1 << 29) + 1, 1}, 0},
      {2, {2, (int64_t)1 << 29}, {-(((int64_t)1 << 31) - ((int64_t)1 << 29)), -1}, 1},
      {2, {2, (int64_t)1 << 29}, {-(((int64_t)1 << 31) - ((int64_t)1 << 29)) - 1, -1}, 0},
      /* each direction within 2^31 - 1 on its own */
      {2, {2, 2}, {INT32_MAX, -(int64_t)INT32_MAX}, 1},
  };
  for (size_t j = 0; j < sizeof c / sizeof c[0]; j++) {
    uk_loop l;
    memset(&l, 0, sizeof l);
    l.ndim = c[j].ndim;
    l.nops = 1;
    l.size = 1;
    for (int d = 0; d < c[j].ndim; d++) {
      l.shape[d] = c[j].shape[d];
      l.strides[0][d] = c[j].strides[d];
      l.size *= c[j].shape[d];
    }
    if (uk__shape_fits_int32(&l) != c[j].fits) {
      fprintf(stderr, "case %zu: fits_int32 %d, want %d\n", j, !c[j].fits, c[j].fits);
      CHECK(!"fits_int32");
    }
    /* a second operand that reaches nothing changes nothing */
    l.nops = 2;
    CHECK(uk__shape_fits_int32(&l) == c[j].fits);
  }
}

/* uk_array_size: the product, 0 for any zero extent however large the
 * others, -1 where it has none in int64. */
static void test_array_size(void) {
  static const struct {
    int ndim;
    int64_t shape[3];
    int64_t want;
  } c[] = {
      {0, {0}, 1},
      {2, {3, 5}, 15},
      {2, {INT64_MAX, 1}, INT64_MAX},
      {2, {INT64_MAX, 3}, -1},
      {3, {INT64_MAX / 2, 5, 0}, 0},
      {2, {0, INT64_MAX}, 0},
      {3, {(int64_t)1 << 32, (int64_t)1 << 31, 2}, -1},
      {3, {(int64_t)1 << 32, (int64_t)1 << 29, 2}, INT64_MAX / 2 + 1}, /* 2^62 */
      {3, {(int64_t)1 << 32, (int64_t)1 << 30, 2}, -1},                 /* 2^63 */
      {2, {-1, 3}, -1},
      {17, {1}, -1},
      {-1, {1}, -1},
  };
  for (size_t j = 0; j < sizeof c / sizeof c[0]; j++) {
    uk_array a;
    memset(&a, 0, sizeof a);
    a.ndim = c[j].ndim;
    for (int d = 0; d < 3; d++) a.shape[d] = c[j].shape[d];
    for (int d = 3; d < UK_MAX_NDIM; d++) a.shape[d] = 1;
    if (uk_array_size(&a) != c[j].want) {
      fprintf(stderr, "case %zu: uk_array_size %lld, want %lld\n", j, (long long)uk_array_size(&a),
              (long long)c[j].want);
      CHECK(!"uk_array_size");
    }
  }
  CHECK(uk_array_size(NULL) == 0);
}

static void test_shape_str(void) {
  char b[64];
  CHECK_STREQ(uk__shape_str(0, NULL, b, sizeof b), "()");
  CHECK_STREQ(uk__shape_str(1, (int64_t[]){5}, b, sizeof b), "(5,)");
  CHECK_STREQ(uk__shape_str(2, (int64_t[]){3, 4}, b, sizeof b), "(3, 4)");
}

/* uk__shape_check against a 128-bit reference, over extents and strides at
 * the edges of its fast path (2 axes, extents < 2^29, |stride| <= 2^31) and
 * of int64 itself. */
static int check_ref(int ndim, const int64_t *shape, const int64_t *strides, int64_t item, int64_t *count) {
  __int128 n = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0) return 0;
    n *= shape[d];
    if (n > INT64_MAX) n = (__int128)INT64_MAX + 1; /* saturate: only "too big" matters */
  }
  *count = n > INT64_MAX ? -1 : (int64_t)n;
  if (n == 0) return 1;
  if (n * item > INT64_MAX) return 0;
  __int128 reach[2] = {item, 0};
  for (int d = 0; d < ndim; d++) {
    if (strides[d] == INT64_MIN) return 0;
    __int128 s = strides[d] < 0 ? -(__int128)strides[d] : strides[d];
    reach[strides[d] < 0] += s * (shape[d] - 1);
    if (reach[0] > INT64_MAX || reach[1] > INT64_MAX) return 0;
  }
  return 1;
}

static void test_check(void) {
  const int64_t ext[] = {0, 1, 3, ((int64_t)1 << 29) - 1, (int64_t)1 << 29, (int64_t)1 << 33, (int64_t)1 << 40,
                         (int64_t)1 << 62, INT64_MAX, -1};
  const int64_t str[] = {0, 4, -12, ((int64_t)1 << 31) - 1, (int64_t)1 << 31, -((int64_t)1 << 31),
                         -((int64_t)1 << 31) - 1, (int64_t)1 << 40, -((int64_t)1 << 40), INT64_MAX, INT64_MIN};
  const int64_t items[] = {1, 4, 16, 32};
  enum { NE = sizeof ext / sizeof *ext, NS = sizeof str / sizeof *str };
  int checked = 0, ok_seen = 0, bad_seen = 0;
  for (int ndim = 0; ndim <= 3; ndim++)
    for (int i = 0; i < 4; i++)
      for (int e0 = 0; e0 < NE; e0++)
        for (int e1 = 0; e1 < (ndim >= 2 ? NE : 1); e1++)
          for (int s0 = 0; s0 < NS; s0++)
            for (int s1 = 0; s1 < (ndim >= 2 ? NS : 1); s1 += (ndim >= 2 ? 3 : 1)) {
              int64_t shape[3] = {ext[e0], ext[e1], 5}, strides[3] = {str[s0], str[s1], 8};
              int64_t want_count, got_count = -7;
              int want = check_ref(ndim, shape, strides, items[i], &want_count);
              uk_status st = uk__shape_check("a", ndim, shape, strides, items[i], &got_count);
              if ((st == UK_OK) != want || (want && got_count != want_count)) {
                CHECK((st == UK_OK) == want);
                fprintf(stderr, "ndim %d item %lld shape (%lld, %lld) strides (%lld, %lld): got %d, want %d\n", ndim,
                        (long long)items[i], (long long)shape[0], (long long)shape[1], (long long)strides[0],
                        (long long)strides[1], st == UK_OK, want);
                return;
              }
              if (st != UK_OK) CHECK(st == UK_ERR_SHAPE);
              checked++;
              ok_seen += want;
              bad_seen += !want;
            }
  CHECK(checked > 10000 && ok_seen > 1000 && bad_seen > 1000);
  int64_t neg[] = {4, -2}, st2[] = {8, 4};
  CHECK_STATUS(uk__shape_check("x", 2, neg, st2, 4, NULL), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "'x' has a negative extent -2 on axis 1");
  CHECK_STATUS(uk__shape_check("x", UK_MAX_NDIM + 1, neg, st2, 4, NULL), UK_ERR_SHAPE);
}

/* uk__shape_broadcast against NumPy's rule written out here, on random
 * operands: identical shapes (its fast path), broadcastable and not. */
static void test_broadcast_random(void) {
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  int fast = 0, general = 0, refused = 0;
  for (int t = 0; t < 20000; t++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = seed >> 11;
    int nops = 1 + (int)(r % 4), nd0 = (int)((r >> 2) % 5), mode = (int)((r >> 5) % 3);
    static const int64_t ext[] = {0, 1, 2, 3, 5};
    int64_t shapes[4][4], strides[4][4];
    uk_operand_view ops[4];
    for (int k = 0; k < nops; k++) {
      int nd = mode == 0 ? nd0 : (int)((r >> (8 + 3 * k)) % 5);
      for (int d = 0; d < nd; d++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t q = seed >> 20;
        shapes[k][d] = mode == 0 && k > 0 ? shapes[0][d] : ext[q % 5];
        if (mode == 1 && k > 0 && q % 3) shapes[k][d] = 1; /* mostly broadcastable */
        strides[k][d] = (int64_t)(q % 64) * 4 - 128;
      }
      ops[k] = view("o", nd, shapes[k], strides[k], 4);
    }
    /* reference */
    int ndim = 0, ok = 1;
    for (int k = 0; k < nops; k++) ndim = ops[k].ndim > ndim ? ops[k].ndim : ndim;
    int64_t want[4] = {1, 1, 1, 1}, size = 1;
    for (int d = 0; d < ndim; d++)
      for (int k = 0; k < nops; k++) {
        int od = d - (ndim - ops[k].ndim);
        if (od < 0 || ops[k].shape[od] == 1) continue;
        if (want[d] == 1) want[d] = ops[k].shape[od];
        else if (want[d] != ops[k].shape[od]) ok = 0;
      }
    for (int d = 0; d < ndim; d++) size *= want[d];
    uk_loop l;
    uk_status st = uk__shape_broadcast(nops, ops, &l);
    int same = 1;
    for (int k = 1; k < nops; k++) {
      same &= ops[k].ndim == ops[0].ndim;
      for (int d = 0; same && d < ops[k].ndim; d++) same = ops[k].shape[d] == ops[0].shape[d];
    }
    fast += same;
    general += !same && ok;
    refused += !ok;
    if ((st == UK_OK) != ok) {
      CHECK((st == UK_OK) == ok);
      return;
    }
    if (!ok) {
      CHECK(st == UK_ERR_SHAPE);
      continue;
    }
    int good = l.ndim == ndim && l.nops == nops && l.size == size;
    for (int d = 0; good && d < ndim; d++) good = l.shape[d] == want[d];
    for (int k = 0; good && k < nops; k++)
      for (int d = 0; good && d < ndim; d++) {
        int od = d - (ndim - ops[k].ndim);
        good = l.strides[k][d] == (od < 0 || ops[k].shape[od] == 1 ? 0 : ops[k].strides[od]);
      }
    if (!good) {
      CHECK(good);
      return;
    }
  }
  CHECK(fast > 1000 && general > 1000 && refused > 1000);
  int64_t neg[] = {3, -1}, st[] = {8, 4};
  uk_operand_view twice[2] = {view("p", 2, neg, st, 4), view("q", 2, neg, st, 4)};
  uk_loop l;
  CHECK_STATUS(uk__shape_broadcast(2, twice, &l), UK_ERR_SHAPE);
  CHECK_STREQ(uk_last_error(), "'p' has a negative extent -1 on axis 1");
}

int main(void) {
  test_broadcast();
  test_merge();
  test_index_width();
  test_index_width_bounds();
  test_array_size();
  test_shape_str();
  test_check();
  test_broadcast_random();
  return ut_finish("test_shape");
}
