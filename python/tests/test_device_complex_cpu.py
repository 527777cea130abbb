"""cpu tier of the complex device math that generated kernels use (issue 23):
<ukern/complex.cuh> (division, sqrt, exp, log, the trigonometric and hyperbolic
functions and their inverses, also thrust::asin ... of <cupy/complex.cuh>) and
<ukern/fusion.cuh> (the fusion ops' helpers: exp2, log2, expm1, log1p, reciprocal,
complex maximum/minimum/fmax/fmin, ordering comparisons, the max/min reductions'
identities and argmax/argmin) compiled for the host with the system C++ compiler (they
are __host__ __device__ code; CUDA's device-only spellings get host stand-ins), against
NumPy 2 on special values (signed zeros, infinities and NaN in either part, branch cuts,
the largest and the subnormal values) and on random ones. The device's math library
differs from the host's only in the last bits; on the GPU: test_fuse_complex_gpu.py."""
import itertools
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import ukern

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
RNG = np.random.default_rng(2023)
CXX = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")

# Reads lines "op type values..." (type f or d; complex values as re im pairs) and prints
# each result's parts in C99 hex ("%a"), booleans as 1/0.
PROBE = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define __host__
#define __device__
#define __forceinline__ inline
using std::isfinite;
using std::isinf;
using std::isnan;
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
static inline int __popcll(unsigned long long u) { return __builtin_popcountll(u); }
static inline float cyl_bessel_i0f(float) { return 0; }  // i0 is not probed here
static inline double cyl_bessel_i0(double) { return 0; }
#include <ukern/fusion.cuh>

template <class T> static ukern::complex<T> rd(char **p) {
  double re = std::strtod(*p, p), im = std::strtod(*p, p);
  return ukern::complex<T>((T)re, (T)im);
}
template <class T> static void put(const ukern::complex<T> &z) {
  std::printf("%a %a\n", (double)z.real(), (double)z.imag());
}
static void put(bool b) { std::printf("%d %d\n", (int)b, (int)b); }

template <class T> static void run(const char *op, char *p) {
  typedef ukern::complex<T> C;
  if (!std::strcmp(op, "max") || !std::strcmp(op, "min") || !std::strcmp(op, "argmax") || !std::strcmp(op, "argmin")) {
    int n = (int)std::strtol(p, &p, 10);
    bool mx = op[0] == 'm' ? op[1] == 'a' : op[3] == 'm' && op[4] == 'a';
    C acc = mx ? _uk_lim<C>::lowest() : _uk_lim<C>::highest();   // the reductions' identities
    _uk_argpair<C> arg = _uk_argpair_make<C>(acc, 9223372036854775807LL);
    for (int k = 0; k < n; k++) {
      C x = rd<T>(&p);
      acc = mx ? _uk_maximum(acc, x) : _uk_minimum(acc, x);
      arg = mx ? _uk_argmax_comb(arg, _uk_argpair_make<C>(x, k)) : _uk_argmin_comb(arg, _uk_argpair_make<C>(x, k));
    }
    if (op[0] == 'a') std::printf("%lld %lld\n", arg.i, arg.i);
    else put(acc);
    return;
  }
  C a = rd<T>(&p);
#define UNARY(name) if (!std::strcmp(op, #name)) put(_uk_##name(a)); else
  UNARY(arcsin) UNARY(arccos) UNARY(arctan) UNARY(arcsinh) UNARY(arccosh) UNARY(arctanh) UNARY(sqrt)
  UNARY(exp) UNARY(exp2) UNARY(expm1) UNARY(log) UNARY(log2) UNARY(log10) UNARY(log1p)
  UNARY(sin) UNARY(cos) UNARY(tan) UNARY(sinh) UNARY(cosh) UNARY(tanh) UNARY(reciprocal)
  if (!std::strcmp(op, "thrust_asin")) put(ukern::asin(a));
  else {
    C b = rd<T>(&p);
    if (!std::strcmp(op, "true_divide")) put(a / b);
    else if (!std::strcmp(op, "maximum")) put(_uk_maximum(a, b));
    else if (!std::strcmp(op, "minimum")) put(_uk_minimum(a, b));
    else if (!std::strcmp(op, "fmax")) put(_uk_fmax(a, b));
    else if (!std::strcmp(op, "fmin")) put(_uk_fmin(a, b));
    else if (!std::strcmp(op, "less")) put(a < b);
    else if (!std::strcmp(op, "less_equal")) put(a <= b);
    else if (!std::strcmp(op, "greater")) put(a > b);
    else if (!std::strcmp(op, "greater_equal")) put(a >= b);
    else if (!std::strcmp(op, "equal")) put(a == b);
    else if (!std::strcmp(op, "not_equal")) put(a != b);
    else std::printf("? ?\n");
  }
}

int main() {
  static char line[1 << 16];
  while (std::fgets(line, sizeof line, stdin)) {
    char op[32], ty[4];
    int used = 0;
    if (std::sscanf(line, "%31s %3s %n", op, ty, &used) < 2) continue;
    if (ty[0] == 'f') run<float>(op, line + used);
    else run<double>(op, line + used);
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler (c++, g++ or clang++) on PATH")
    d = tmp_path_factory.mktemp("cxprobe")
    (d / "probe.cpp").write_text(PROBE)
    exe = d / "probe"
    r = subprocess.run([CXX, "-O1", "-ffp-contract=off", f"-I{TEMPLATES}", str(d / "probe.cpp"), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]

    def call(lines):
        out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
        rows = [ln.split() for ln in out.stdout.splitlines()]
        assert len(rows) == len(lines)
        return rows
    return call


def _text(z):
    return f"{float(z.real)!r} {float(z.imag)!r}"


def _parts(row):
    return complex(float.fromhex(row[0]), float.fromhex(row[1]))


def _agree(got, want, rtol, tiny):
    """One part: NaN where NumPy has NaN, NumPy's infinities, zeros of NumPy's sign where
    both are zero, else within rtol (relative, down to the smallest normal value)."""
    if np.isnan(want) or np.isnan(got):
        return np.isnan(want) and np.isnan(got)
    if np.isinf(want) or np.isinf(got):
        return got == want
    if got == 0 and want == 0:
        return np.signbit(got) == np.signbit(want)
    return abs(got - want) <= rtol * max(abs(want), tiny)


TYPES = {"complex64": ("f", 3e-5, 1.2e-38), "complex128": ("d", 1e-12, 2.3e-308)}
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 0.999999, 1.0000001, 1e-8, -1e-20, 3e-39, 1e-45, 4e-320,
           1e-155, 1e-300, 1e18, -1e30, 3.4e38, 1e155, -1e300, 1.7e308, np.inf, -np.inf, np.nan]
INVERSE = ["arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "sqrt"]
# the other complex functions of the fusion language (square is x * x; NumPy's own
# results for it past overflow differ between its scalar and array loops)
OTHERS = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh",
          "reciprocal"]


def _special(dtype):
    with np.errstate(over="ignore"):
        parts = np.array(SPECIAL).astype(np.dtype(dtype).char.lower())   # float32 rounds (1e300 -> inf)
    return np.array([complex(a, b) for a, b in itertools.product(parts, parts)], dtype=dtype)


def _random(dtype, n=1500):
    lo, hi = (-36, 36) if dtype == "complex64" else (-300, 300)
    sign = RNG.choice([-1.0, 1.0], (2, n))
    big = sign * 10.0 ** RNG.uniform(lo, hi, (2, n))
    small = RNG.uniform(-3, 3, (2, n))
    return np.concatenate([big[0] + 1j * big[1], small[0] + 1j * small[1]]).astype(dtype)


def _check_unary(probe, fn, z, numpy_fn):
    ty, rtol, tiny = TYPES[z.dtype.name]
    rows = probe([f"{fn} {ty} {_text(v)}" for v in z])
    with np.errstate(all="ignore"):
        want = numpy_fn(z)
    bad = [(v, _parts(r), w) for v, r, w in zip(z, rows, want)
           if not (_agree(_parts(r).real, w.real, rtol, tiny) and _agree(_parts(r).imag, w.imag, rtol, tiny))]
    assert not bad, f"{len(bad)} of {len(z)} differ from NumPy, e.g. (z, ukern, NumPy): {bad[:5]}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", INVERSE + OTHERS)
def test_functions_match_numpy_on_special_values(probe, fn, dtype):
    _check_unary(probe, fn, _special(dtype), getattr(np, fn))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", INVERSE + OTHERS)
def test_functions_match_numpy_on_random_values(probe, fn, dtype):
    _check_unary(probe, fn, _random(dtype), getattr(np, fn))


def test_thrust_names_are_the_same_functions(probe):
    # cupy/complex.cuh's thrust::asin is ukern::asin: the same values as the fusion op's
    z = _special("complex128")
    assert probe([f"thrust_asin d {_text(v)}" for v in z]) == probe([f"arcsin d {_text(v)}" for v in z])


EXTREMA_PARTS = [0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", ["maximum", "minimum", "fmax", "fmin", "less", "less_equal", "greater",
                                "greater_equal", "equal", "not_equal", "true_divide"])
def test_complex_extrema_comparisons_and_division_match_numpy(probe, fn, dtype):
    # NumPy 2 orders complex values by the real part, then the imaginary part; a NaN in
    # either part compares false; maximum/minimum return the NaN operand, fmax/fmin the
    # other; division is Smith's, dividing by +0 for a zero divisor
    ty = TYPES[dtype][0]
    vals = np.array([complex(a, b) for a, b in itertools.product(EXTREMA_PARTS, EXTREMA_PARTS)], dtype=dtype)
    a, b = (g.ravel() for g in np.meshgrid(vals, vals))
    rows = probe([f"{fn} {ty} {_text(x)} {_text(y)}" for x, y in zip(a, b)])
    with np.errstate(all="ignore"):
        want = getattr(np, fn)(a, b)
    if want.dtype == bool:
        got = np.array([r[0] == "1" for r in rows])
        bad = np.flatnonzero(got != want)
        assert not bad.size, [(a[k], b[k], got[k], want[k]) for k in bad[:6]]
        return
    rtol = TYPES[dtype][1] if fn == "true_divide" else 0    # else the result is one of the operands
    for x, y, r, w in zip(a, b, rows, want):
        g = _parts(r)
        assert _agree(g.real, w.real, rtol, 1) and _agree(g.imag, w.imag, rtol, 1), (fn, x, y, g, w)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_max_min_argmax_argmin_reductions_match_numpy(probe, dtype):
    # folds from the reductions' identities (lowest/highest of the complex order), over
    # rows holding infinite parts, ties in the real part, -0.0 and at most one NaN
    ty = TYPES[dtype][0]
    rows = [RNG.integers(-3, 3, 9) + 1j * RNG.integers(-3, 3, 9) for _ in range(40)]
    rows += [np.array([complex(-np.inf, -np.inf)]), np.array([complex(np.inf, np.inf), complex(np.inf, 5)]),
             np.array([complex(-np.inf, 1), complex(-np.inf, -np.inf), complex(-np.inf, np.nan)]),
             np.array([complex(1, np.nan), complex(np.inf, np.inf)]), np.array([complex(-0.0, -0.0), 0j]),
             np.array([complex(2, 1), complex(np.nan, 0), complex(3, 0)]), np.array([complex(np.inf, -np.inf)])]
    for k in range(40, 48, 2):
        rows[k % 40][RNG.integers(0, 9)] = complex(np.nan, 1) if k % 4 else complex(0, np.nan)
    for op, fn in [("max", np.max), ("min", np.min), ("argmax", np.argmax), ("argmin", np.argmin)]:
        lines = [f"{op} {ty} {len(r)} " + " ".join(_text(v) for v in r.astype(dtype)) for r in rows]
        for r, got in zip(rows, probe(lines)):
            r = r.astype(dtype)
            want = fn(r)
            if op.startswith("arg"):
                assert int(got[0]) == want, (op, r, got, want)
            else:
                g = _parts(got)
                assert _agree(g.real, want.real, 0, 0) and _agree(g.imag, want.imag, 0, 0), (op, r, g, want)


def test_fused_complex_programs_compile_for_sm_90(arch90):
    # the programs test_fuse_complex_gpu.py runs, compiled by NVRTC (no GPU needed)
    names = INVERSE + OTHERS
    z = np.ones((5, 7), "complex64")
    for k in range(0, len(names), 7):
        ukern.fuse(lambda a: tuple(getattr(np, n)(a) for n in names[k:k + 7])).precompile(z)

    @ukern.fuse
    def ext(x, y):
        return np.maximum(x, y), np.minimum(x, y), np.fmax(x, y), np.fmin(x, y), x < y, x <= y, x > y, x >= y
    ext.precompile(z, z.astype("complex128"))

    @ukern.fuse
    def red(a):
        return a.max(axis=1), np.amin(a, axis=1), a.argmax(axis=1), np.argmin(a, axis=1), a[2:].max(), \
            a[2:].min(keepdims=True), np.max(a[2:], axis=0)
    red.precompile(z)
    assert red.kernel_count(z) >= 2
