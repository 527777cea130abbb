/* ReductionKernel: the Euclidean norm of each row, checked against the host
 * in double precision. */
#include <math.h>

#include "common.h"

int main(void) {
  need_gpu();
  enum { R = 500, C = 3000 };
  static float hx[R * C], hy[R];
  unsigned seed = 2;
  for (int i = 0; i < R * C; i++) hx[i] = example_rand(&seed);

  uk_context *ctx;
  TRY(uk_context_create(NULL, &ctx));
  uk_reduction_spec spec = {0};
  spec.in_params = "T x";
  spec.out_params = "T y";
  spec.map_expr = "x * x";
  spec.reduce_expr = "a + b";
  spec.post_map_expr = "y = sqrt(a)";
  spec.identity = "0";
  spec.name = "l2norm";
  uk_reduction *norm;
  TRY(uk_reduction_create(ctx, &spec, &norm));
  int64_t shape[2] = {R, C};
  uk_array x, y = {0};
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x));
  TRY(uk_memcpy_htod(x.data, hx, sizeof hx));
  uk_arg in = uk_arg_array(&x);
  int axis = 1;
  uk_launch l = {0};
  l.axes = &axis;
  l.num_axes = 1;
  TRY(uk_reduction_call(norm, &in, 1, &y, 1, &l));
  TRY(uk_device_synchronize());
  TRY(uk_memcpy_dtoh(hy, y.data, sizeof hy));

  int bad = 0;
  for (int i = 0; i < R; i++) {
    double s = 0;
    for (int j = 0; j < C; j++) s += (double)hx[i * C + j] * hx[i * C + j];
    bad += fabs(hy[i] - sqrt(s)) > 1e-5 * sqrt(s);
  }
  printf("l2norm: y has shape (%lld); %d of %d rows wrong\n", (long long)y.shape[0], bad, R);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_reduction_destroy(norm);
  uk_context_destroy(ctx);
  return bad ? 1 : 0;
}
