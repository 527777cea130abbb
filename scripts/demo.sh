#!/usr/bin/env bash
# Set-up command 1: installs dependencies, builds ukern and runs its demo.
# Without a GPU the demo compiles for sm_90 and stops; with one it also runs
# the kernel and checks it against the host. Each step says what it is doing
# (a first build takes about a minute) and shows the build's progress.
# The demo uses a cache directory of its own, emptied first (build/demo-cache),
# so that it shows a compile, then a memory hit and a disk hit whatever other
# processes put in the user's cache; UKERN_CACHE_DIR=DIR uses DIR as it is.
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
if [ -z "${UKERN_CACHE_DIR:-}" ]; then
  export UKERN_CACHE_DIR="$PWD/build/demo-cache"
  rm -rf "$UKERN_CACHE_DIR"
  step "cache: $UKERN_CACHE_DIR (emptied; UKERN_CACHE_DIR=DIR to use another)"
else
  step "cache: $UKERN_CACHE_DIR (from UKERN_CACHE_DIR, as it is)"
fi
step "running: build/tools/ukern demo $*"
trap - EXIT
rm -f "$log"
exec build/tools/ukern demo "$@"
