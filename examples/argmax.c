/* ReductionKernel with a struct as the reduce type: the index of the largest
 * element of each row (ties go to the lower index). */
#include "common.h"

static const char preamble[] =
    "struct arg_best { float v; long long i; };\n"
    "__device__ arg_best make_best(float v, long long i) { arg_best r; r.v = v; r.i = i; return r; }\n"
    "__device__ arg_best best_of(arg_best a, arg_best b) {\n"
    "  return (b.v > a.v || (b.v == a.v && b.i < a.i)) ? b : a;\n"
    "}\n";

int main(void) {
  need_gpu();
  enum { R = 700, C = 2500 };
  static float hx[R * C];
  static long long hy[R];
  unsigned seed = 3;
  for (int i = 0; i < R * C; i++) hx[i] = example_rand(&seed);

  uk_context *ctx;
  TRY(uk_context_create(NULL, &ctx));
  uk_reduction_spec spec = {0};
  spec.in_params = "float32 x";
  spec.out_params = "int64 y";
  spec.map_expr = "make_best(x, _J)"; /* _J: the index along the reduced axis */
  spec.reduce_expr = "best_of(a, b)";
  spec.post_map_expr = "y = a.i";
  spec.reduce_type = "arg_best";
  spec.preamble = preamble;
  spec.name = "row_argmax"; /* no identity: every row has elements */
  uk_reduction *am;
  TRY(uk_reduction_create(ctx, &spec, &am));
  int64_t shape[2] = {R, C};
  uk_array x, y = {0};
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x));
  TRY(uk_memcpy_htod(x.data, hx, sizeof hx));
  uk_arg in = uk_arg_array(&x);
  int axis = -1;
  uk_launch l = {0};
  l.axes = &axis;
  l.num_axes = 1;
  TRY(uk_reduction_call(am, &in, 1, &y, 1, &l));
  TRY(uk_device_synchronize());
  TRY(uk_memcpy_dtoh(hy, y.data, sizeof hy));

  int bad = 0;
  for (int i = 0; i < R; i++) {
    int best = 0;
    for (int j = 1; j < C; j++)
      if (hx[i * C + j] > hx[i * C + best]) best = j;
    bad += hy[i] != best;
  }
  printf("argmax: %d of %d rows wrong\n", bad, R);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_reduction_destroy(am);
  uk_context_destroy(ctx);
  return bad ? 1 : 0;
}
