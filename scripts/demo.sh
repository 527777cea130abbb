#!/usr/bin/env bash
# Set-up command 1: installs dependencies, builds ukern and runs its demo.
# Without a GPU the demo compiles for sm_90 and stops; with one it also runs
# the kernel and checks it against the host. Each step says what it is doing
# (a first build takes about a minute) and shows the build's progress.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '==> %s\n' "$*" >&2; }
step "checking dependencies (scripts/deps.sh)"
scripts/deps.sh
step "configuring (cmake -S . -B build)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$log" 2>&1; then
  cat "$log" >&2
  exit 1
fi
step "building the library and the ukern tool (a first build takes about a minute)"
# cmake prints one "[ NN%] Building ..." line per file: the progress
cmake --build build -j"$(nproc)" --target ukern_cli 2>&1 | { grep -E '^\[ *[0-9]+%\]|rror|arning' >&2 || true; }
step "running: build/tools/ukern demo $*"
trap - EXIT
rm -f "$log"
exec build/tools/ukern demo "$@"
