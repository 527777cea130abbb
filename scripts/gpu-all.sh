#!/usr/bin/env bash
# Runs every gpu-labelled test and the benchmark suite in one call on a GPU
# machine, over a build carried from the development machine (build/).
# Results land in $OUT (default /tmp/ukern-gpu-out): test log, bench JSON and
# tables. GPU_PACK=1: the bench JSON files end up in one archive,
# $OUT/bench-json.tar.gz (report.md is made from them first), so that $OUT holds
# at most 6 files, for a remote runner that returns only a few.
# bench_host_instructions and bench_newproc_instructions are not run: they are
# tools for the stand-in driver (bench/tools/, no GPU).
# Usage: scripts/gpu-all.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
OUT=${OUT:-/tmp/ukern-gpu-out}
mkdir -p "$OUT"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-gpu-cache}
rm -rf "$UKERN_CACHE_DIR"
status=0
{
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader || true
  "$BUILD/tools/ukern" info || true
} 2>&1 | tee "$OUT/info.txt"

echo "== gpu tests"
ctest --test-dir "$BUILD" -L gpu --output-on-failure 2>&1 | tee "$OUT/gpu-tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== nvrtc tests (the no-GPU tier, here with a GPU present: both paths must hold)"
ctest --test-dir "$BUILD" -L nvrtc --output-on-failure 2>&1 | tee "$OUT/nvrtc-tests.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== benchmarks"
: >"$OUT/bench.md"
for b in "$BUILD"/bench/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  case $name in bench_host_instructions | bench_newproc_instructions) continue ;; esac
  echo "-- $name"
  "$b" "$OUT/$name.json" 2>&1 | tee -a "$OUT/bench.md"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done
if [ -f bench/cupy_bench.py ]; then
  echo "-- cupy companion"
  PYTHONUNBUFFERED=1 python3 bench/cupy_bench.py "$OUT/cupy.json" 2>&1 | tee -a "$OUT/bench.md"
fi
if [ -f bench/cupy_fuse_bench.py ]; then
  echo "-- cupy.fuse companion"
  PYTHONUNBUFFERED=1 python3 bench/cupy_fuse_bench.py "$OUT/cupy_fuse.json" 2>&1 | tee -a "$OUT/bench.md"
fi
python3 bench/report.py "$OUT" 2>&1 | tee "$OUT/report.md"
if [ "${GPU_PACK:-0}" = 1 ] && compgen -G "$OUT/*.json" >/dev/null; then
  (cd "$OUT" && tar -czf bench-json.tar.gz ./*.json && rm -f ./*.json) || status=1
fi
grep -h "tests passed\|tests failed" "$OUT/gpu-tests.log" || true
exit $status
