#!/usr/bin/env bash
# The Dask part of issue 26 on a machine with two GPUs, from a build made
# elsewhere and carried in build/ (nothing is built here) and the wheels of
# dask, distributed, dask-cuda and their missing dependencies carried in .whl/
# (no network there): installs the wheels into /tmp/site, makes a bundle,
# runs test_gpu_bundle, the Dask example test (two GPUs) and the benchmark.
# Results in $OUT (default /tmp/ukern-gpu-out): logs, dask_bench.json and its table.
# Wheels it expects (python 3.12; the machine's image has the rest: numpy,
# cupy-cuda13x, pandas, numba, nvidia-ml-py, cuda-core, click, cloudpickle,
# fsspec, toolz, pyyaml, msgpack, psutil, sortedcontainers, jinja2, packaging):
#   dask==2026.7.1 distributed==2026.7.1 dask-cuda==26.10.0
#   rapids-dask-dependency==26.10.0 partd==1.4.2 locket==1.0.0 tblib==3.2.2
#   tornado==6.6.1 zict==3.0.0
# Usage: scripts/gpu-dask.sh [build-dir] [--quick]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
QUICK=${2:-}
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/ukern-gpu-out}
WHL=${WHL:-.whl}
mkdir -p "$OUT"
export PYTHONDONTWRITEBYTECODE=1
# NVLink multicast stays off (the machine's rule), in the workers too.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls "$WHL"/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl \
    2>&1 | grep -v "WARNING: Running pip as" | tee "$OUT/dask-pip.log"
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD/$BUILD/python:$PWD/examples/dask:$PYTHONPATH"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-gpu-dask-cache}
status=0
{
  nvidia-smi -L
  "$PY" -c "import sys, ukern, cupy, numpy, dask, distributed, dask_cuda; print('python', sys.version.split()[0], 'ukern', ukern.__version__, 'devices', ukern.device_count(), 'cupy', cupy.__version__, 'numpy', numpy.__version__, 'dask', dask.__version__, 'distributed', distributed.__version__, 'dask_cuda', dask_cuda.__version__)"
} 2>&1 | tee "$OUT/dask-info.txt"
echo "== test_gpu_bundle (C: a bundle's kernels launched, results checked, NVRTC not loaded)"
UKERN_CACHE_DIR=/tmp/ukern-gpu-bundle-test "$BUILD/tests/test_gpu_bundle" 2>&1 | tee "$OUT/test_gpu_bundle.log"
rc=${PIPESTATUS[0]}; [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || status=1
echo "== test_gpu_dask (the example on two GPUs, from a bundle)"
tests/test_gpu_dask.sh "$PWD/$BUILD/python" "$PWD/examples/dask" 2>&1 | tee "$OUT/test_gpu_dask.log"
rc=${PIPESTATUS[0]}; [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || status=1
echo "== the bundle the example makes, listed"
"$PY" examples/dask/pipeline.py make-bundle "$OUT/dask.ukb" 2>&1 | tee "$OUT/dask-bundle.txt"
"$BUILD/tools/ukern" bundle list "$OUT/dask.ukb" 2>&1 | tee -a "$OUT/dask-bundle.txt"
echo "== bench/dask_bench.py"
PYTHONUNBUFFERED=1 "$PY" bench/dask_bench.py "$OUT/dask_bench.json" $QUICK 2>&1 | tee "$OUT/dask_bench.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
exit $status
