/* Textures and surfaces on a GPU, sampled by ElementwiseKernels (texture
 * arguments) and written by a raw kernel (surface): a 2-D CUDA array from
 * host data sampled with bilinear filtering and clamping at random points
 * (also outside) against a host reference in double precision, allowing
 * for the hardware's 8-bit interpolation weights; a 1-D int32 array with
 * normalised, wrapping coordinates; a pitched 2-D texture; a linear uint8
 * texture read as normalised floats; a 3-D array filled from device memory;
 * a surface written by a kernel and read back. */
#include <math.h>

#include "testutil.h"

static uk_context *ctx;

static uk_array dev_f32(const float *h, int64_t n) {
  uk_array a;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &a));
  CHECK_OK(uk_memcpy_htod(a.data, h, (size_t)n * 4));
  return a;
}

static void down(void *h, const uk_array *a, size_t bytes) { CHECK_OK(uk_memcpy_dtoh(h, a->data, bytes)); }

static uk_elementwise *kernel(const char *in, const char *out, const char *op, const char *name) {
  uk_elementwise *k = NULL;
  CHECK_OK(uk_elementwise_create(
      ctx, &(uk_elementwise_spec){.in_params = in, .out_params = out, .operation = op, .name = name}, &k));
  return k;
}

enum { W = 37, H = 23, NS = 4001 };

static double texel(const float *t, int x, int y) {
  x = x < 0 ? 0 : x >= W ? W - 1 : x;
  y = y < 0 ? 0 : y >= H ? H - 1 : y;
  return t[y * W + x];
}

static void bilinear(void) {
  float *img = malloc(W * H * 4), *back = malloc(W * H * 4);
  for (int i = 0; i < W * H; i++) img[i] = (float)ut_uniform(-1, 1);
  size_t ext[2] = {W, H};
  uk_cuda_array *a = NULL;
  CHECK_OK(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, ext, 0, &a));
  if (!a) return;
  CHECK_OK(uk_cuda_array_from_host(a, img));
  memset(back, 0, W * H * 4);
  CHECK_OK(uk_cuda_array_to_host(a, back));
  CHECK(memcmp(img, back, W * H * 4) == 0);
  uk_texture_desc d;
  memset(&d, 0, sizeof d);
  d.address[0] = d.address[1] = UK_ADDRESS_CLAMP;
  d.filter = UK_FILTER_LINEAR;
  uint64_t tex = 0;
  CHECK_OK(uk_texture_from_array(a, &d, &tex));
  float *u = malloc(NS * 4), *v = malloc(NS * 4), *z = malloc(NS * 4);
  for (int k = 0; k < NS; k++) u[k] = (float)ut_uniform(-2, W + 2), v[k] = (float)ut_uniform(-2, H + 2);
  uk_array du = dev_f32(u, NS), dv = dev_f32(v, NS), dz = dev_f32(u, NS); /* dz poisoned with u */
  uk_elementwise *k = kernel("U t, float32 u, float32 v", "float32 z", "z = tex2D<float>(t, u, v)", "tex_bilinear");
  uk_arg in[3] = {uk_arg_texture(tex), uk_arg_array(&du), uk_arg_array(&dv)};
  CHECK_OK(uk_elementwise_call(k, in, 3, &dz, 1, NULL));
  down(z, &dz, NS * 4);
  int bad = 0, interpolated = 0;
  for (int s = 0; s < NS; s++) {
    double xb = u[s] - 0.5, yb = v[s] - 0.5;
    int x0 = (int)floor(xb), y0 = (int)floor(yb);
    double ax = xb - x0, ay = yb - y0;
    double t00 = texel(img, x0, y0), t10 = texel(img, x0 + 1, y0), t01 = texel(img, x0, y0 + 1),
           t11 = texel(img, x0 + 1, y0 + 1);
    double want = (1 - ax) * (1 - ay) * t00 + ax * (1 - ay) * t10 + (1 - ax) * ay * t01 + ax * ay * t11;
    double hi = fmax(fmax(t00, t10), fmax(t01, t11)), lo = fmin(fmin(t00, t10), fmin(t01, t11));
    /* Weights in 8-bit fixed point: each off by at most 1/256. */
    double tol = 2.0 * (hi - lo) / 256 + 1e-5;
    if (!(fabs(z[s] - want) <= tol)) {
      if (bad++ < 5) fprintf(stderr, "bilinear (%g, %g): %.7g, want %.7g (tol %.3g)\n", u[s], v[s], z[s], want, tol);
    }
    interpolated += fabs(z[s] - texel(img, (int)floor(u[s]), (int)floor(v[s]))) > 1e-3;
  }
  CHECK(bad == 0);
  CHECK(interpolated > NS / 2); /* not point sampling */
  CHECK_OK(uk_texture_destroy(tex));
  uk_elementwise_destroy(k);
  uk_cuda_array_destroy(a);
  uk_array_free(ctx, &du, NULL), uk_array_free(ctx, &dv, NULL), uk_array_free(ctx, &dz, NULL);
  free(img), free(back), free(u), free(v), free(z);
}

static void wrap_1d(void) {
  enum { N = 101 };
  int32_t t[N];
  for (int i = 0; i < N; i++) t[i] = (int32_t)(ut_rand() % 100000) - 50000;
  size_t ext[1] = {N};
  uk_cuda_array *a = NULL;
  CHECK_OK(uk_cuda_array_create(0, UK_INT32, 1, 1, ext, 0, &a));
  if (!a) return;
  CHECK_OK(uk_cuda_array_from_host(a, t));
  uk_texture_desc d;
  memset(&d, 0, sizeof d);
  d.address[0] = UK_ADDRESS_WRAP;
  d.normalized_coords = 1;
  uint64_t tex = 0;
  CHECK_OK(uk_texture_from_array(a, &d, &tex));
  float u[3 * N];
  for (int k = 0; k < 3 * N; k++) u[k] = (float)((k % N + 0.5) / N + (k / N) - 1); /* periods -1, 0, 1 */
  uk_array du = dev_f32(u, 3 * N), dz;
  int64_t n = 3 * N;
  CHECK_OK(uk_array_alloc(ctx, UK_INT32, 1, &n, 0, NULL, &dz));
  CHECK_OK(uk_memset_d32(dz.data, 0x7FFFFFFF, 3 * N));
  uk_elementwise *k = kernel("U t, float32 u", "int32 z", "z = tex1D<int>(t, u)", "tex_wrap");
  uk_arg in[2] = {uk_arg_texture(tex), uk_arg_array(&du)};
  CHECK_OK(uk_elementwise_call(k, in, 2, &dz, 1, NULL));
  int32_t z[3 * N];
  down(z, &dz, sizeof z);
  int bad = 0;
  for (int s = 0; s < 3 * N; s++) bad += z[s] != t[s % N];
  CHECK(bad == 0);
  CHECK_OK(uk_texture_destroy(tex));
  uk_elementwise_destroy(k);
  uk_cuda_array_destroy(a);
  uk_array_free(ctx, &du, NULL), uk_array_free(ctx, &dz, NULL);
}

static void pitched_and_linear(void) {
  /* Pitched 2-D, point sampling at texel centres. */
  float img[H][W];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) img[y][x] = (float)ut_uniform(-50, 50);
  uint64_t d = 0;
  size_t pitch = 0;
  CHECK_OK(uk_mem_alloc_pitch(0, W * 4, H, 4, &d, &pitch));
  uk_copy_2d c = {(uint64_t)(uintptr_t)img, 1, W * 4, d, 0, pitch, W * 4, H};
  CHECK_OK(uk_memcpy_2d(&c));
  uint64_t tex = 0;
  CHECK_OK(uk_texture_from_pitch2d(d, UK_FLOAT32, 1, W, H, pitch, NULL, &tex));
  int64_t n = W * H;
  uk_array dz;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &dz));
  CHECK_OK(uk_memset_d32(dz.data, 0x7FC00000u, (size_t)n)); /* NaN */
  uk_elementwise *k = kernel("U t, int32 w", "float32 z", "z = tex2D<float>(t, i % w + 0.5f, i / w + 0.5f)", "tex_pitch");
  uk_arg in[2] = {uk_arg_texture(tex), uk_arg_int(W)};
  CHECK_OK(uk_elementwise_call(k, in, 2, &dz, 1, NULL));
  float z[H * W];
  down(z, &dz, sizeof z);
  CHECK(memcmp(z, img, sizeof z) == 0);
  CHECK_OK(uk_texture_destroy(tex));
  uk_elementwise_destroy(k);
  CHECK_OK(uk_mem_free(d));

  /* Linear uint8 read as normalised floats. */
  unsigned char b[W * H];
  for (int i = 0; i < W * H; i++) b[i] = (unsigned char)ut_rand();
  uk_array db;
  CHECK_OK(uk_array_alloc(ctx, UK_UINT8, 1, &n, 0, NULL, &db));
  CHECK_OK(uk_memcpy_htod(db.data, b, sizeof b));
  uk_texture_desc nd;
  memset(&nd, 0, sizeof nd);
  nd.read = UK_READ_NORMALIZED_FLOAT;
  CHECK_OK(uk_texture_from_linear(db.data, UK_UINT8, 1, (size_t)n, &nd, &tex));
  CHECK_OK(uk_memset_d32(dz.data, 0x7FC00000u, (size_t)n));
  uk_elementwise *k2 = kernel("U t", "float32 z", "z = tex1Dfetch<float>(t, (int)i)", "tex_linear_norm");
  uk_arg in2 = uk_arg_texture(tex);
  /* Every argument is raw: the size comes from the output. */
  CHECK_OK(uk_elementwise_call(k2, &in2, 1, &dz, 1, NULL));
  down(z, &dz, sizeof z);
  int bad = 0;
  for (int i = 0; i < W * H; i++) bad += !(fabs(z[i] - b[i] / 255.0) <= 1e-6);
  CHECK(bad == 0);
  CHECK_OK(uk_texture_destroy(tex));
  uk_elementwise_destroy(k2);
  uk_array_free(ctx, &db, NULL), uk_array_free(ctx, &dz, NULL);
}

static void volume_and_surface(void) {
  enum { X = 5, Y = 4, Z = 3 };
  float vol[Z][Y][X], back[Z][Y][X];
  for (int i = 0; i < X * Y * Z; i++) (&vol[0][0][0])[i] = (float)ut_uniform(-9, 9);
  size_t ext[3] = {X, Y, Z};
  uk_cuda_array *a = NULL;
  CHECK_OK(uk_cuda_array_create(0, UK_FLOAT32, 1, 3, ext, 0, &a));
  if (!a) return;
  uk_array dv = dev_f32(&vol[0][0][0], X * Y * Z);
  CHECK_OK(uk_cuda_array_from_device(a, dv.data));
  memset(back, 0, sizeof back);
  CHECK_OK(uk_cuda_array_to_host(a, back));
  CHECK(memcmp(back, vol, sizeof vol) == 0);
  uint64_t tex = 0;
  CHECK_OK(uk_texture_from_array(a, NULL, &tex));
  int64_t n = X * Y * Z;
  uk_array dz;
  CHECK_OK(uk_array_alloc(ctx, UK_FLOAT32, 1, &n, 0, NULL, &dz));
  CHECK_OK(uk_memset_d32(dz.data, 0x7FC00000u, (size_t)n));
  uk_elementwise *k = kernel("U t", "float32 z",
                             "z = tex3D<float>(t, i % 5 + 0.5f, (i / 5) % 4 + 0.5f, i / 20 + 0.5f)", "tex_3d");
  uk_arg in = uk_arg_texture(tex);
  CHECK_OK(uk_elementwise_call(k, &in, 1, &dz, 1, NULL));
  memset(back, 0, sizeof back);
  down(back, &dz, sizeof back);
  CHECK(memcmp(back, vol, sizeof vol) == 0);
  /* Device copy back out of the array. */
  CHECK_OK(uk_memset_d32(dz.data, 0, (size_t)n));
  CHECK_OK(uk_cuda_array_to_device(a, dz.data));
  down(back, &dz, sizeof back);
  CHECK(memcmp(back, vol, sizeof vol) == 0);
  CHECK_OK(uk_texture_destroy(tex));
  uk_elementwise_destroy(k);
  uk_cuda_array_destroy(a);
  uk_array_free(ctx, &dv, NULL), uk_array_free(ctx, &dz, NULL);

  /* A surface written by a kernel. */
  size_t e2[2] = {W, H};
  uk_cuda_array *s = NULL;
  CHECK_OK(uk_cuda_array_create(0, UK_FLOAT32, 1, 2, e2, UK_CUDA_ARRAY_SURFACE, &s));
  if (!s) return;
  uint64_t surf = 0;
  CHECK_OK(uk_surface_from_array(s, &surf));
  uk_module *m = NULL;
  uk_function *f = NULL;
  CHECK_OK(uk_module_from_source(ctx,
                                 "extern \"C\" __global__ void paint(cudaSurfaceObject_t s, int w, int h) {\n"
                                 "  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;\n"
                                 "  if (x < w && y < h) surf2Dwrite(x * 1000.0f + y, s, x * 4, y);\n"
                                 "}\n",
                                 NULL, &m));
  if (m) CHECK_OK(uk_module_function(m, "paint", &f));
  int w = W, h = H;
  void *args[] = {&surf, &w, &h};
  uk_grid_launch g = {{1, H, 1}, {64, 1, 1}, 0, NULL, 0, {0, 0, 0}};
  if (f) CHECK_OK(uk_function_launch(f, &g, args));
  float img[H][W];
  memset(img, 0, sizeof img);
  CHECK_OK(uk_cuda_array_to_host(s, img));
  int bad = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) bad += img[y][x] != x * 1000.0f + y;
  CHECK(bad == 0);
  CHECK_OK(uk_surface_destroy(surf));
  uk_module_destroy(m);
  uk_cuda_array_destroy(s);
}

int main(void) {
  ut_require_gpu();
  ut_seed(44);
  CHECK_OK(uk_context_create(NULL, &ctx));
  CHECK_OK(uk_device_set_current(0));
  bilinear();
  wrap_1d();
  pitched_and_linear();
  volume_and_surface();
  CHECK_OK(uk_device_synchronize());
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_texture");
}
