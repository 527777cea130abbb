#!/usr/bin/env bash
# Runs CuPy v14.2's own test files for its kernel classes against ukern on a
# GPU machine: cupy.fuse / ElementwiseKernel / ReductionKernel / RawKernel /
# RawModule replaced by ukern's (python/tests/cupy_compat/ukern_cupy_compat.py;
# UKERN_COMPAT=fuse,elementwise,reduction,raw picks which, "none" runs CuPy
# itself as the baseline). Needs cupy, pytest and numpy on the GPU machine,
# and CuPy's tests copied to $CUPYTESTS (default .cupytests) with the paths
# they have in CuPy's repository (tests/conftest.py, tests/cupy_tests/...).
# Writes into $OUT (default /tmp/ukern-cupy-compat): junit-<file>.xml and
# <file>.log per test file, and summary.txt: passed/failed/errors/skipped per file.
# Usage: scripts/gpu-cupy-compat.sh [build-dir] [test file relative to $CUPYTESTS/tests ...]
# Each file runs under `timeout ${FILE_TIMEOUT:-540}` seconds, ${JOBS:-4} processes at a time;
# SHARDS=N splits every file into N processes (UKERN_COMPAT_SHARD, every N-th test each).
# At the timeout pytest gets SIGINT (it stops, names the test it was in and still writes
# the junit file of the tests done; SIGKILL 30 s later), and a test running longer than
# ${TEST_TIMEOUT:-240} s has every thread's Python stack dumped to the log (faulthandler):
# a stall shows where it is. Note: test_raw.py's jitify tests (and
# test_jitify_deprecation_warning[True], which calls CuPy's own
# compiler.compile_using_nvrtc(jitify=True)) run CuPy's Jitify, which takes minutes
# with CUDA 13's CCCL headers (CuPy's own shards stall there too).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-python3}
BUILD=${1:-build}
[ $# -gt 0 ] && shift
CUPYTESTS=${CUPYTESTS:-$REPO/.cupytests}
OUT=${OUT:-/tmp/ukern-cupy-compat}
mkdir -p "$OUT"
TESTS=$CUPYTESTS/tests
if [ ! -d "$TESTS/cupy_tests" ]; then
  echo "no CuPy tests at $TESTS/cupy_tests (set CUPYTESTS)" >&2
  exit 2
fi
if [ $# -eq 0 ]; then
  set -- $(cd "$TESTS" && ls cupy_tests/core_tests/fusion_tests/test_*.py \
    cupy_tests/core_tests/test_userkernel.py cupy_tests/core_tests/test_raw.py \
    cupy_tests/core_tests/test_reduction.py 2>/dev/null)
fi
export PYTHONPATH="$REPO/$BUILD/python:$REPO/python/tests/cupy_compat:$TESTS${PYTHONPATH:+:$PYTHONPATH}"
if ! "$PY" -c "import pytest" >/dev/null 2>&1 && [ -d "$REPO/$BUILD/pyvendor" ]; then
  PYTHONPATH="$PYTHONPATH:$REPO/$BUILD/pyvendor"
fi
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-cupy-compat-cache}
export PYTHONDONTWRITEBYTECODE=1
echo "UKERN_COMPAT=${UKERN_COMPAT:-fuse,elementwise,reduction,raw}" | tee "$OUT/summary.txt"
"$PY" -c "import cupy, numpy, ukern; print('cupy', cupy.__version__, 'numpy', numpy.__version__, 'ukern', ukern.__version__)" \
  2>&1 | tee -a "$OUT/summary.txt"
run_file() {
  local f=$1 shard=$2 tag rc
  tag=$(echo "$f" | sed 's#^cupy_tests/##; s#/#_#g; s#\.py$##')
  [ "${SHARDS:-1}" -gt 1 ] && tag="$tag.shard$shard"
  (cd "$TESTS" && UKERN_COMPAT_SHARD=$([ "${SHARDS:-1}" -gt 1 ] && echo "$shard/$SHARDS") \
    timeout -s INT -k 30 "${FILE_TIMEOUT:-540}" "$PY" -m pytest -q -p no:cacheprovider -p ukern_cupy_compat \
    --import-mode=prepend --junitxml="$OUT/junit-$tag.xml" -o junit_family=xunit1 \
    -o faulthandler_timeout="${TEST_TIMEOUT:-240}" "$f") >"$OUT/$tag.log" 2>&1
  rc=$?
  [ $rc -eq 124 ] && echo "(timed out after ${FILE_TIMEOUT:-540}s)" >>"$OUT/$tag.log"
  echo "== $f: $(tail -n 1 "$OUT/$tag.log")"
  return $rc
}
# ${JOBS:-4} files at a time (NVRTC compiles are CPU-bound; the GPU is shared)
status=0
pids=()
for f in "$@"; do
  for ((k = 0; k < ${SHARDS:-1}; k++)); do
    run_file "$f" "$k" &
    pids+=($!)
    if [ ${#pids[@]} -ge "${JOBS:-4}" ]; then
      wait "${pids[0]}" || status=1
      pids=("${pids[@]:1}")
    fi
  done
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
"$PY" "$REPO/python/tests/cupy_compat/junit_summary.py" "$OUT"/junit-*.xml | tee -a "$OUT/summary.txt"
exit $status
