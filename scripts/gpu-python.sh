#!/usr/bin/env bash
# Runs the Python package's tests (cpu and gpu tiers) and its benchmark on a GPU
# machine, from a build made elsewhere and carried in build/ (the extension is
# abi3: a build made with Python 3.11 imports on 3.12). No network, no pip.
# Results land in $OUT (default /tmp/ukern-gpu-out): pytest log, bench JSON and table.
# The GPU machine may lack pytest: run `scripts/gpu-python.sh --prepare [build-dir]`
# on the build machine first; it puts pytest (pure Python) into <build>/pyvendor,
# which travels with build/ and is used when the GPU machine has no pytest.
# Usage: scripts/gpu-python.sh [build-dir] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ "${1:-}" = "--prepare" ]; then
  BUILD=${2:-build}
  "$PY" -m pip install -q --disable-pip-version-check --no-compile --target "$BUILD/pyvendor" pytest 2>&1 |
    grep -v "WARNING: Running pip as" || true
  [ -d "$BUILD/pyvendor/pytest" ] && echo "pytest vendored into $BUILD/pyvendor"
  exit 0
fi
BUILD=${1:-build}
OUT=${OUT:-/tmp/ukern-gpu-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-gpu-py-cache}
export PYTHONDONTWRITEBYTECODE=1 # the tree may be read-only
if ! "$PY" -c "import pytest" >/dev/null 2>&1 && [ -d "$BUILD/pyvendor" ]; then
  PYTHONPATH="$PYTHONPATH:$PWD/$BUILD/pyvendor"   # after the system's packages
fi
status=0
"$PY" -c "import sys, ukern; print('ukern', ukern.__version__, 'python', sys.version.split()[0], 'devices', ukern.device_count())" \
  2>&1 | tee "$OUT/python-info.txt" || status=1
echo "== python tests"
"$PY" -m pytest -q -rs -p no:cacheprovider python/tests 2>&1 | tee "$OUT/python-tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== python bench"
PYTHONUNBUFFERED=1 "$PY" bench/python_bench.py "$OUT/python_bench.json" ${2:-} 2>&1 | tee "$OUT/python-bench.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
