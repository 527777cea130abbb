/* Complex functions in fusion programs on a GPU (issue 12): exp, log, sqrt,
 * conj, exp2, log2, expm1, log1p, real, imag, abs and angle of complex64 and
 * complex128 arrays (a reversed view), against C99 <complex.h> in double
 * precision, outputs allocated (NumPy's dtypes: the real functions give the
 * real part's). */
#include <complex.h>
#include <math.h>

#include "testutil.h"

static uk_context *ctx;

enum { NOUT = 12, NCX = 8, N = 1001 }; /* the first NCX outputs are complex */
static const char *const names[NOUT] = {"exp",   "log",   "sqrt", "conj", "exp2", "log2",
                                        "expm1", "log1p", "real", "imag", "abs",  "angle"};

static double complex ref(int k, double complex z) {
  switch (k) {
  case 0: return cexp(z);
  case 1: return clog(z);
  case 2: return csqrt(z);
  case 3: return conj(z);
  case 4: return cexp(z * M_LN2);
  case 5: return clog(z) / M_LN2;
  case 6: return cexp(z) - 1;
  case 7: return clog(1 + z);
  case 8: return creal(z);
  case 9: return cimag(z);
  case 10: return cabs(z);
  default: return carg(z);
  }
}

static void run(uk_dtype t) {
  const int wide = t == UK_COMPLEX128;
  const size_t part = wide ? 8 : 4;
  int64_t n = N, bytes = N * 2 * (int64_t)part;
  double complex *z = malloc(sizeof *z * N);
  unsigned char *h = malloc((size_t)bytes);
  for (int k = 0; k < N; k++) {
    double re = ut_uniform(-3, 3), im = ut_uniform(-3, 3);
    if (k % 97 == 0) im = 0; /* on the real axis: angle 0 or pi */
    if (!wide) re = (float)re, im = (float)im;
    z[k] = CMPLX(re, im);
    /* element k lives at position N-1-k: the view below is reversed */
    unsigned char *p = h + (size_t)(N - 1 - k) * 2 * part;
    if (wide) {
      memcpy(p, &re, 8);
      memcpy(p + 8, &im, 8);
    } else {
      float fr = (float)re, fi = (float)im;
      memcpy(p, &fr, 4);
      memcpy(p + 4, &fi, 4);
    }
  }
  uk_array buf, a;
  CHECK_OK(uk_array_alloc(ctx, t, 1, &n, 0, NULL, &buf));
  CHECK_OK(uk_memcpy_htod(buf.data, h, (size_t)bytes));
  a = buf;
  a.data += (uint64_t)((N - 1) * 2 * part);
  a.strides[0] = -(int64_t)(2 * part);
  uk_fusion *f = NULL;
  CHECK_OK(uk_fusion_create(
      ctx,
      &(uk_fusion_spec){.inputs = "a",
                        .outputs = "e, l, s, c, e2, l2, em, lp, r, i, m, g",
                        .program = "e = exp(a); l = log(a); s = sqrt(a); c = conj(a); e2 = exp2(a); l2 = log2(a); "
                                   "em = expm1(a); lp = log1p(a); r = real(a); i = imag(a); m = abs(a); g = angle(a)",
                        .name = "cx"},
      &f));
  uk_arg in[1] = {uk_arg_array(&a)};
  uk_array out[NOUT];
  memset(out, 0, sizeof out);
  CHECK_OK(uk_fusion_call(f, in, 1, out, NOUT, NULL));
  CHECK_OK(uk_device_synchronize());
  double rtol = wide ? 1e-12 : 2e-6;
  for (int o = 0; o < NOUT; o++) {
    int cx = o < NCX;
    uk_dtype want = cx ? t : wide ? UK_FLOAT64 : UK_FLOAT32;
    CHECK(out[o].dtype == want && out[o].ndim == 1 && out[o].shape[0] == N);
    if (out[o].dtype != want || !out[o].data) continue;
    size_t es = (cx ? 2 : 1) * part;
    unsigned char *g = malloc(es * N);
    CHECK_OK(uk_memcpy_dtoh(g, out[o].data, es * N));
    int bad = 0;
    for (int k = 0; k < N; k++) {
      double v[2] = {0, 0};
      for (int j = 0; j < (cx ? 2 : 1); j++) {
        if (wide) memcpy(&v[j], g + (size_t)k * es + 8 * (size_t)j, 8);
        else {
          float x;
          memcpy(&x, g + (size_t)k * es + 4 * (size_t)j, 4);
          v[j] = x;
        }
      }
      double complex w = ref(o, z[k]);
      double scale = fmax(1.0, cabs(w));
      if (!(fabs(v[0] - creal(w)) <= rtol * scale && fabs(v[1] - (cx ? cimag(w) : 0)) <= rtol * scale) &&
          bad++ < 5)
        fprintf(stderr, "%s %s(%.9g%+.9gj): got %.17g%+.17gj, want %.17g%+.17gj\n", uk_dtype_name(t), names[o],
                creal(z[k]), cimag(z[k]), v[0], v[1], creal(w), cimag(w));
    }
    ut_checks++;
    if (bad) ut_failures++;
    free(g);
    uk_array_free(ctx, &out[o], NULL);
  }
  uk_fusion_destroy(f);
  uk_array_free(ctx, &buf, NULL);
  free(z);
  free(h);
}

int main(void) {
  ut_require_gpu();
  ut_seed(21);
  CHECK_OK(uk_context_create(NULL, &ctx));
  run(UK_COMPLEX64);
  run(UK_COMPLEX128);
  uk_context_destroy(ctx);
  return ut_finish("test_gpu_fusion_complex");
}
