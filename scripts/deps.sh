#!/usr/bin/env bash
# Installs what a fresh Debian machine with the CUDA toolkit lacks to build ukern
# and its Python package (python/: scikit-build-core, pytest, numpy from PyPI).
# Idempotent; quiet when everything is already there.
set -euo pipefail
need=()
for pkg in cmake pkg-config libffi-dev libxxhash-dev libdlpack-dev gcc make; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -d /usr/local/cuda/include ] && [ -z "${CUDA_HOME:-}" ]; then
  echo "error: the CUDA toolkit (NVRTC, headers, CUB) is needed: install it or set CUDA_HOME" >&2
  exit 1
fi
# The Python package's build backend and test tools, for the python3 on PATH.
PY=${PYTHON:-python3}
if command -v "$PY" >/dev/null 2>&1; then
  pyneed=()
  for mod in scikit_build_core:scikit-build-core pytest:pytest numpy:numpy; do
    "$PY" -c "import ${mod%%:*}" >/dev/null 2>&1 || pyneed+=("${mod##*:}")
  done
  if [ "${#pyneed[@]}" -gt 0 ]; then
    echo "installing (pip): ${pyneed[*]}"
    "$PY" -m pip install -q --disable-pip-version-check "${pyneed[@]}" 2>&1 | grep -v "WARNING: Running pip as" || true
  fi
fi
