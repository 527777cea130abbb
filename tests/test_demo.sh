#!/usr/bin/env bash
# scripts/demo.sh shows the caches at work whatever the user's cache holds: a
# compile, a memory hit, then a disk hit (its own cache directory, emptied
# first), and uses UKERN_CACHE_DIR as it is when given. Run from .ci/run after
# the build (demo.sh reconfigures build/, so this is not a ctest).
# usage: test_demo.sh
set -u
cd "$(dirname "$0")/.."
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
expect() { # name, text, output
  if grep -qF -- "$2" <<<"$3"; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    printf 'FAIL %s: no "%s" in:\n%s\n' "$1" "$2" "$3" >&2
  fi
}
# another process filled the user's cache (here $XDG_CACHE_HOME/ukern) first
UKERN_CACHE_DIR="$tmp/xdg/ukern" build/tools/ukern demo --n 1000 >/dev/null 2>&1
for run in 1 2; do # the second run too starts from its own, emptied cache
  out=$(env -u UKERN_CACHE_DIR XDG_CACHE_HOME="$tmp/xdg" scripts/demo.sh --n 1000 2>&1)
  expect "own-dir-$run" "cache: $PWD/build/demo-cache (emptied" "$out"
  expect "compile-$run" "compiled module 'demo' in" "$out"
  expect "nvrtc-$run" "(NVRTC)" "$out"
  expect "memory-hit-$run" "(memory hits 1, disk hits 0, compiles 1)" "$out"
  expect "disk-hit-$run" "(a new process: memory hits 0, disk hits 1, compiles 0)" "$out"
done
# UKERN_CACHE_DIR given: used as it is (the filled one: a disk hit at once)
out=$(UKERN_CACHE_DIR="$tmp/xdg/ukern" scripts/demo.sh --n 1000 2>&1)
expect given-dir "cache: $tmp/xdg/ukern (from UKERN_CACHE_DIR" "$out"
expect given-hit "(disk cache hit)" "$out"
echo "test_demo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
