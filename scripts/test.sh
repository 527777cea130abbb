#!/usr/bin/env bash
# Set-up command 2: installs dependencies, builds everything and runs the tests.
# Without a GPU the gpu-labelled tests are skipped and say why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
