#!/usr/bin/env bash
# Runs the Python package's tests (cpu and gpu tiers) and its benchmark on a GPU
# machine, from a build made elsewhere and carried in build/ (the extension is
# abi3: a build made with Python 3.11 imports on 3.12). No network, no pip.
# Results land in $OUT (default /tmp/ukern-gpu-out): pytest log, bench JSON and table.
# Usage: scripts/gpu-python.sh [build-dir] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${OUT:-/tmp/ukern-gpu-out}
mkdir -p "$OUT"
export PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-gpu-py-cache}
PY=${PYTHON:-python3}
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
