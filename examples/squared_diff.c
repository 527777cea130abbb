/* ElementwiseKernel: z = (x - y)^2 with y broadcast along the rows, checked
 * against the host. */
#include <math.h>

#include "common.h"

int main(void) {
  need_gpu();
  enum { R = 300, C = 1000 };
  static float hx[R * C], hy[C], hz[R * C];
  unsigned seed = 1;
  for (int i = 0; i < R * C; i++) hx[i] = example_rand(&seed);
  for (int j = 0; j < C; j++) hy[j] = example_rand(&seed);

  /* README.md shows from here ... */
  uk_context *ctx;
  TRY(uk_context_create(NULL, &ctx));
  uk_elementwise *sq;
  TRY(uk_elementwise_create(ctx, "T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff", NULL, &sq));
  int64_t shape[2] = {R, C}, row[1] = {C};
  uk_array x, y, z = {0}; /* z.data == 0: ukern allocates the output */
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 2, shape, 0, NULL, &x));
  TRY(uk_array_alloc(ctx, UK_FLOAT32, 1, row, 0, NULL, &y));
  TRY(uk_memcpy_htod(x.data, hx, sizeof hx));
  TRY(uk_memcpy_htod(y.data, hy, sizeof hy));
  uk_arg in[2] = {uk_arg_array(&x), uk_arg_array(&y)};
  TRY(uk_elementwise_call(sq, in, 2, &z, 1, NULL));
  TRY(uk_device_synchronize());
  TRY(uk_memcpy_dtoh(hz, z.data, sizeof hz));
  /* ... to here (scripts/readme-check.py) */

  int bad = 0;
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) {
      float d = hx[i * C + j] - hy[j];
      bad += hz[i * C + j] != d * d;
    }
  printf("squared_diff: z has shape (%lld, %lld); %d of %d elements wrong\n", (long long)z.shape[0],
         (long long)z.shape[1], bad, R * C);
  uk_array_free(ctx, &x, NULL);
  uk_array_free(ctx, &y, NULL);
  uk_array_free(ctx, &z, NULL);
  uk_elementwise_destroy(sq);
  uk_context_destroy(ctx);
  return bad ? 1 : 0;
}
