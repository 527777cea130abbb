/* Host-described device arrays and a double-precision host reference for
 * the reduction GPU tests (test_gpu_reduction, test_gpu_red_strategies);
 * red_gpu_util.c. Every function uses the context `ctx`. */
#ifndef UK_TESTS_RED_GPU_UTIL_H
#define UK_TESTS_RED_GPU_UTIL_H

#include "testutil.h"

extern uk_context *ctx;

typedef struct {
  uk_array a;   /* the view */
  uk_array buf; /* the allocation (uint8) */
  size_t bytes;
} darr;

void put_val(uk_dtype t, unsigned char *p, double v);
double get_val(uk_dtype t, const unsigned char *p);
/* Logical (C-order) index k -> byte offset of a view. */
int64_t offset_of(const uk_array *a, int64_t k);
int64_t size_of(int ndim, const int64_t *shape);
/* An array of `shape` laid out in memory axis order perm (perm[0] slowest;
 * NULL = C order), `pad` elements of stride on the last memory axis
 * (strided views), starting `skew` bytes into its allocation; vals are the
 * logical C-order values (NULL = poison). */
darr make(uk_dtype t, int ndim, const int64_t *shape, const int *perm, int pad, int skew, const double *vals);
void drop(darr *d);
/* Values of a view in logical order (synchronises first). */
double *fetch(const uk_array *a, uint64_t base, size_t bytes);
double *randv(int64_t n, double lo, double hi);

enum { R_SUM, R_SQ, R_MAX, R_MIN, R_PROD };

/* Reduces logical values over `reduced` axes into out (kept axes, C order);
 * absum gets the sum of |terms| per output (for tolerances). */
void ref(int op, int ndim, const int64_t *shape, const uint8_t *reduced, const double *v, double *out, double *absum,
         int64_t *nout);
/* Counts (and reports the first few) outputs off by more than tol relative
 * to absum + |want| (absum NULL: |want|); one check. */
int close_all(const char *label, const double *got, const double *want, const double *absum, int64_t n, double tol);

extern int mk_block_reduce; /* uk_reduction_spec.block_reduce of the kernels mk makes */
uk_reduction *mk(const char *in, const char *out, const char *map, const char *red, const char *post,
                 const char *identity, const char *name, const char *rtype, const char *preamble);
uk_reduce_launch axes_of(const int *ax, int n, int keepdims);
/* Runs k on x (allocated output), compares with the reference. */
void run_case(const char *label, uk_reduction *k, int op, const darr *x, const double *vals, const uk_reduce_launch *l,
              double tol, int post_sqrt);

#endif
