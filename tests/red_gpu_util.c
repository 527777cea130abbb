/* Host-described device arrays and a double-precision host reference for
 * the reduction GPU tests (test_gpu_reduction, test_gpu_red_strategies). */
#include "red_gpu_util.h"

#include <math.h>

#include "codegen/scalar.h"

uk_context *ctx;

/* ------------------------------------------------------------------------ */
/* Host-described device arrays                                              */
/* ------------------------------------------------------------------------ */

void put_val(uk_dtype t, unsigned char *p, double v) {
  switch (t) {
  case UK_FLOAT32: { float f = (float)v; memcpy(p, &f, 4); break; }
  case UK_FLOAT64: memcpy(p, &v, 8); break;
  case UK_FLOAT16: { uint16_t h = uk__f64_to_f16_bits(v); memcpy(p, &h, 2); break; }
  case UK_INT32: { int32_t i = (int32_t)v; memcpy(p, &i, 4); break; }
  case UK_INT64: { int64_t i = (int64_t)v; memcpy(p, &i, 8); break; }
  case UK_COMPLEX64: { float c[2] = {(float)v, (float)(0.5 * v)}; memcpy(p, c, 8); break; }
  default: break;
  }
}

double get_val(uk_dtype t, const unsigned char *p) {
  switch (t) {
  case UK_FLOAT32: { float f; memcpy(&f, p, 4); return f; }
  case UK_FLOAT64: { double d; memcpy(&d, p, 8); return d; }
  case UK_FLOAT16: { uint16_t h; memcpy(&h, p, 2); return uk__f16_bits_to_f64(h); }
  case UK_INT32: { int32_t i; memcpy(&i, p, 4); return i; }
  case UK_INT64: { int64_t i; memcpy(&i, p, 8); return (double)i; }
  case UK_COMPLEX64: { float c[2]; memcpy(c, p, 8); return c[0]; }
  default: return NAN;
  }
}

/* Logical (C-order) index k -> byte offset of a view. */
int64_t offset_of(const uk_array *a, int64_t k) {
  int64_t off = 0;
  for (int d = a->ndim - 1; d >= 0; d--) {
    off += (k % a->shape[d]) * a->strides[d];
    k /= a->shape[d];
  }
  return off;
}

int64_t size_of(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= shape[d];
  return n;
}

/* An array of `shape` laid out in memory axis order perm (perm[0] slowest;
 * NULL = C order), `pad` elements of stride on the last memory axis
 * (strided views), starting `skew` bytes into its allocation; vals are the
 * logical C-order values (NULL = poison). */
darr make(uk_dtype t, int ndim, const int64_t *shape, const int *perm, int pad, int skew, const double *vals) {
  darr r;
  memset(&r, 0, sizeof r);
  int64_t it = (int64_t)uk_dtype_size(t), s = it * (pad > 0 ? pad : 1);
  r.a.dtype = t;
  r.a.ndim = ndim;
  for (int j = ndim - 1; j >= 0; j--) {
    int d = perm ? perm[j] : j;
    r.a.shape[d] = shape[d];
    r.a.strides[d] = s;
    s *= shape[d] > 0 ? shape[d] : 1;
  }
  r.bytes = (size_t)(s + skew + 16);
  int64_t nb = (int64_t)r.bytes;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &nb, 0, NULL, &r.buf));
  r.a.data = r.buf.data + (uint64_t)skew;
  unsigned char *h = malloc(r.bytes);
  memset(h, 0xA5, r.bytes);
  int64_t n = size_of(ndim, shape);
  for (int64_t k = 0; vals && k < n; k++) put_val(t, h + skew + offset_of(&r.a, k), vals[k]);
  CHECK_OK(uk_memcpy_htod(r.buf.data, h, r.bytes));
  free(h);
  return r;
}

void drop(darr *d) { uk_array_free(ctx, &d->buf, NULL); }

/* Values of a view in logical order (synchronises first). */
double *fetch(const uk_array *a, uint64_t base, size_t bytes) {
  unsigned char *h = malloc(bytes);
  CHECK_OK(uk_device_synchronize());
  CHECK_OK(uk_memcpy_dtoh(h, base, bytes));
  int64_t n = size_of(a->ndim, a->shape);
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t k = 0; k < n; k++) v[k] = get_val(a->dtype, h + (a->data - base) + offset_of(a, k));
  free(h);
  return v;
}

double *randv(int64_t n, double lo, double hi) {
  double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t k = 0; k < n; k++) v[k] = ut_uniform(lo, hi);
  return v;
}

/* ------------------------------------------------------------------------ */
/* Host reference                                                            */
/* ------------------------------------------------------------------------ */


/* Reduces logical values over `reduced` axes into out (kept axes, C order);
 * absum gets the sum of |terms| per output (for tolerances). */
void ref(int op, int ndim, const int64_t *shape, const uint8_t *reduced, const double *v, double *out,
                double *absum, int64_t *nout) {
  int64_t n = size_of(ndim, shape), no = 1;
  for (int d = 0; d < ndim; d++)
    if (!reduced[d]) no *= shape[d];
  *nout = no;
  for (int64_t o = 0; o < no; o++) {
    out[o] = op == R_MAX ? -INFINITY : op == R_MIN ? INFINITY : op == R_PROD ? 1 : 0;
    absum[o] = 0;
  }
  for (int64_t k = 0; k < n; k++) {
    int64_t rem = k, o = 0, mul = 1;
    for (int d = ndim - 1; d >= 0; d--) {
      int64_t c = rem % shape[d];
      rem /= shape[d];
      if (!reduced[d]) {
        o += c * mul;
        mul *= shape[d];
      }
    }
    double x = v[k], t = op == R_SQ ? x * x : x;
    if (op == R_MAX) out[o] = fmax(out[o], t);
    else if (op == R_MIN) out[o] = fmin(out[o], t);
    else if (op == R_PROD) out[o] *= t;
    else out[o] += t;
    absum[o] += fabs(t);
  }
}

int close_all(const char *label, const double *got, const double *want, const double *absum, int64_t n,
                     double tol) {
  int bad = 0;
  for (int64_t k = 0; k < n; k++) {
    double lim = tol * (absum ? absum[k] + fabs(want[k]) : fabs(want[k])) + 1e-30;
    if (!(fabs(got[k] - want[k]) <= lim)) {
      if (bad < 5) fprintf(stderr, "%s: [%lld] got %.17g want %.17g\n", label, (long long)k, got[k], want[k]);
      bad++;
    }
  }
  ut_checks++;
  if (bad) ut_failures++;
  return bad;
}

int mk_block_reduce;

uk_reduction *mk(const char *in, const char *out, const char *map, const char *red, const char *post,
                        const char *identity, const char *name, const char *rtype, const char *preamble) {
  uk_reduction_spec s;
  memset(&s, 0, sizeof s);
  s.block_reduce = mk_block_reduce;
  s.in_params = in;
  s.out_params = out;
  s.map_expr = map;
  s.reduce_expr = red;
  s.post_map_expr = post;
  s.identity = identity;
  s.name = name;
  s.reduce_type = rtype;
  s.preamble = preamble;
  uk_reduction *k = NULL;
  CHECK_OK(uk_reduction_create(ctx, &s, &k));
  return k;
}

uk_reduce_launch axes_of(const int *ax, int n, int keepdims) {
  uk_reduce_launch l;
  memset(&l, 0, sizeof l);
  l.axes = ax;
  l.num_axes = n;
  l.keepdims = keepdims;
  return l;
}

/* Runs k on x (allocated output), compares with the reference. */
void run_case(const char *label, uk_reduction *k, int op, const darr *x, const double *vals,
                     const uk_reduce_launch *l, double tol, int post_sqrt) {
  uk_array y;
  memset(&y, 0, sizeof y);
  uk_arg in = uk_arg_array(&x->a);
  uk_status st = uk_reduction_call(k, &in, 1, &y, 1, l);
  ut_checks++;
  if (st != UK_OK) {
    ut_failures++;
    fprintf(stderr, "%s: %s: %s\n%s", label, uk_status_name(st), uk_last_error(), uk_last_error_log());
    return;
  }
  uint8_t red[UK_MAX_NDIM] = {0};
  int nd = x->a.ndim;
  if (!l || l->num_axes == 0) {
    for (int d = 0; d < nd; d++) red[d] = !(l && l->reduce_none);
  } else {
    for (int j = 0; j < l->num_axes; j++) red[l->axes[j] < 0 ? l->axes[j] + nd : l->axes[j]] = 1;
  }
  /* room for every output: an empty reduction (extent 0 reduced) has more outputs than elements */
  int64_t n = size_of(nd, x->a.shape), no, cap = 1;
  for (int d = 0; d < nd; d++)
    if (!red[d]) cap *= x->a.shape[d];
  if (cap < n) cap = n;
  double *want = malloc(sizeof(double) * (size_t)(cap + 1)), *absum = malloc(sizeof(double) * (size_t)(cap + 1));
  ref(op, nd, x->a.shape, red, vals, want, absum, &no);
  if (post_sqrt)
    for (int64_t o = 0; o < no; o++) want[o] = sqrt(want[o]);
  CHECK(size_of(y.ndim, y.shape) == no);
  /* allocated outputs are C-contiguous */
  int64_t s = (int64_t)uk_dtype_size(y.dtype);
  for (int d = y.ndim - 1; d >= 0; d--) {
    CHECK(y.strides[d] == s);
    s *= y.shape[d];
  }
  double *got = fetch(&y, y.data, (size_t)(no ? no : 1) * uk_dtype_size(y.dtype));
  close_all(label, got, want, post_sqrt ? NULL : absum, no, tol);
  free(got);
  free(want);
  free(absum);
  uk_array_free(ctx, &y, NULL);
}
