#!/usr/bin/env bash
# scripts/nvdisasm.sh ARGS...: NVIDIA's disassembler, which the development host's toolkit lacks, from PyPI's
# nvidia-cuda-nvdisasm wheel (fetched once into ${XDG_CACHE_HOME:-$HOME/.cache}/ukern-tools), run with ARGS: e.g.
# `scripts/nvdisasm.sh -c prog.cubin` for the SASS of a cubin that `nvcc -cubin` or ptxas wrote from a program's
# source (`ukern gen`, or Python's `k.source(...)`). Developers' tool only: no test or build step uses it.
set -euo pipefail
VER=${NVDISASM_VERSION:-13.2.78}
DIR=${XDG_CACHE_HOME:-$HOME/.cache}/ukern-tools/nvdisasm-$VER
BIN=$DIR/nvidia/cu13/bin/nvdisasm
if [ ! -x "$BIN" ]; then
  mkdir -p "$DIR"
  python3 -m pip download --quiet --no-deps "nvidia-cuda-nvdisasm==$VER" -d "$DIR" >&2
  python3 -m zipfile -e "$DIR"/nvidia_cuda_nvdisasm-"$VER"-*.whl "$DIR"
  chmod +x "$BIN"
fi
exec "$BIN" "$@"
