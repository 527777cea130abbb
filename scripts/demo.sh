#!/usr/bin/env bash
# Set-up command 1: installs dependencies, builds ukern and runs its demo.
# Without a GPU the demo compiles for sm_90 and stops; with one it also runs
# the kernel and checks it against the host.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target ukern_cli >/dev/null
exec build/tools/ukern demo "$@"
