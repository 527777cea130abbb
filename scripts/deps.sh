#!/usr/bin/env bash
# Installs what a fresh Debian machine with the CUDA toolkit lacks to build ukern.
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
