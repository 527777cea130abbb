#!/usr/bin/env bash
# Set-up command 2: installs dependencies, builds everything and runs the tests:
# ctest, then the Python package's pytest tiers (from the build tree).
# Without a GPU the gpu-labelled tests and the Python gpu tier are skipped; the
# reasons are printed once, grouped (scripts/skip-summary.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
rc=0
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@" || rc=$?
# ctest counts skipped tests but does not show why: the reasons, grouped.
python3 scripts/skip-summary.py build/Testing/Temporary/LastTest.log || true
[ "$rc" -eq 0 ] || exit "$rc"
PY=${PYTHON:-python3}
if [ ! -f build/python/ukern/_ukern.abi3.so ]; then
  echo "SKIP: python tests: the extension was not built (Python headers or dlpack.h missing)"
elif ! "$PY" -c "import pytest, numpy" >/dev/null 2>&1; then
  echo "SKIP: python tests: pytest and numpy are needed (scripts/deps.sh installs them with pip)"
else
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$PWD/build/python${PYTHONPATH:+:$PYTHONPATH}" "$PY" -m pytest -q -rs -p no:cacheprovider python/tests
fi
