#!/bin/sh
# The Dask example on two GPUs (issue 26 item 2): a bundle made beforehand
# (pipeline.py make-bundle, this machine's GPU), then the pipeline on a
# LocalCUDACluster with one worker per GPU, the bundle opened by a worker
# plugin: results against NumPy, and no worker compiles.
# SKIP (77) without two GPUs or without dask / distributed / dask-cuda / CuPy.
# usage: test_gpu_dask.sh BUILD_PYTHON_DIR EXAMPLE_DIR   ($PYTHON: python3)
set -u
PY=${PYTHON:-python3}
export PYTHONPATH="$1:$2${PYTHONPATH:+:$PYTHONPATH}"
EX=$2
why=$("$PY" - <<'PYEOF' 2>&1
import importlib, sys
for m in ("ukern", "cupy", "dask", "distributed", "dask_cuda"):
    try:
        importlib.import_module(m)
    except Exception as e:
        print("%s cannot be imported (%s)" % (m, str(e).splitlines()[0] if str(e) else type(e).__name__)); sys.exit(0)
import ukern
n = ukern.device_count()
if n < 2:
    print("%d GPU(s), this test needs 2" % n)
PYEOF
)
if [ -n "$why" ]; then echo "SKIP: $why"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export UKERN_CACHE_DIR="$tmp/cache"
SIZE="--rows 100003 --cols 257 --chunk 8192"
"$PY" "$EX/pipeline.py" make-bundle "$tmp/dask.ukb" $SIZE || { echo "FAIL: make-bundle"; exit 1; }
# the workers get an empty cache of their own: whatever they do not find in
# the bundle, they would have to compile (and the check fails)
"$PY" "$EX/pipeline.py" run --bundle "$tmp/dask.ukb" --gpus 2 --check --cache-dir "$tmp/workers" $SIZE \
  || { echo "FAIL: the pipeline on two GPUs"; exit 1; }
echo "test_gpu_dask: passed"
