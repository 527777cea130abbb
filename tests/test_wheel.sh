#!/usr/bin/env bash
# The wheel of scripts/wheel.sh as a user gets it: installed with pip into a
# fresh venv (NumPy comes as its dependency), then used with no compiler on
# PATH (only the venv's bin: python, pip; no gcc, cc or nvcc): `import ukern`, an
# ElementwiseKernel's source() and precompile() and a ReductionKernel's
# precompile for sm_90, with no GPU (NVRTC loaded from the toolkit at run time).
# Also: libffi is vendored, libcuda and NVRTC are not. One abi3 wheel serves
# every Python given (default: python3.11 and python3.12 where present).
# usage: test_wheel.sh WHEEL [PYTHON...]
set -u
whl=$(realpath "$1")
shift
pythons=("$@")
if [ "${#pythons[@]}" -eq 0 ]; then
  for v in 3.11 3.12; do # on PATH, else a pyenv version that is not the active one
    for p in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v"*/bin/"python$v"; do
      if "$p" -c pass >/dev/null 2>&1; then pythons+=("$p"); break; fi
    done
  done
fi
[ "${#pythons[@]}" -gt 0 ] || pythons=(python3)
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # name, then a command that must succeed
  local name=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    printf 'FAIL %s:\n%s\n' "$name" "$(tail -n 30 "$tmp/out")" >&2
  fi
}
names=$(python3 -m zipfile -l "$whl")
check vendors-libffi grep -q "ukern.libs/libffi" <<<"$names"
check no-libcuda bash -c '! grep -Eq "libcuda|libnvrtc|libnvJitLink" <<<"$1"' _ "$names"
check numpy-dependency bash -c 'python3 -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); m = [n for n in z.namelist() if n.endswith(\".dist-info/METADATA\")][0]; sys.exit(b\"Requires-Dist: numpy\" not in z.read(m))" "$1"' _ "$whl"
check abi3-manylinux bash -c '[[ $(basename "$1") == *-cp39-abi3-manylinux_*_x86_64.whl ]]' _ "$whl"
for py in "${pythons[@]}"; do
  v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  venv="$tmp/venv-$v"
  t0=$(date +%s.%N)
  check "venv-$v" "$py" -m venv "$venv"
  check "pip-install-$v" "$venv/bin/python" -m pip install -q --disable-pip-version-check "$whl"
  t1=$(date +%s.%N)
  echo "python $v: venv + pip install of the wheel (NumPy included): $(echo "$t1 - $t0" | bc) s"
  # PATH: the venv's bin (python, pip) and nothing else
  check "no-compiler-$v" env -i PATH="$venv/bin" HOME="$tmp" /bin/bash -c '! command -v gcc && ! command -v cc && ! command -v nvcc'
  check "use-$v" env -i PATH="$venv/bin" HOME="$tmp" UKERN_CACHE_DIR="$tmp/cache-$v" /bin/bash -c 'cd / && python -I -c "
import os, numpy as np, ukern
assert ukern.__file__.startswith(os.environ[\"UKERN_CACHE_DIR\"].rsplit(\"/\", 1)[0]), ukern.__file__
ukern.configure(arch=90)
sq = ukern.ElementwiseKernel(\"T x, T y\", \"T z\", \"z = (x - y) * (x - y)\", \"squared_diff\")
a = np.zeros((1000, 3), np.float32)
src = sq.source(a, a)
assert \"squared_diff\" in src and \"typedef float T;\" in src, src[:300]
sq.precompile(a, a)
l2 = ukern.ReductionKernel(\"T x\", \"T y\", \"x * x\", \"a + b\", \"y = sqrt(a)\", \"0\", \"l2norm\")
l2.precompile(np.zeros((64, 33), np.float64), axis=1)
s = ukern.cache_stats()
assert s[\"compiles\"] == 2 and s[\"cache_dir\"] == os.environ[\"UKERN_CACHE_DIR\"], s
print(\"ok\", s)
"'
done
echo "test_wheel: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
