/* Broadcasting, dimension merging, index width and contiguity. */
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

static void test_shape_str(void) {
  char b[64];
  CHECK_STREQ(uk__shape_str(0, NULL, b, sizeof b), "()");
  CHECK_STREQ(uk__shape_str(1, (int64_t[]){5}, b, sizeof b), "(5,)");
  CHECK_STREQ(uk__shape_str(2, (int64_t[]){3, 4}, b, sizeof b), "(3, 4)");
}

int main(void) {
  test_broadcast();
  test_merge();
  test_index_width();
  test_shape_str();
  return ut_finish("test_shape");
}
