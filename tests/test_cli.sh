#!/usr/bin/env bash
# The ukern command without a GPU: help, exit codes, info, cache, demo.
# usage: test_cli.sh <path to ukern>
set -u
UKERN=$1
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect <name> <wanted exit code> <text the output must contain> -- command...
expect() {
  local name=$1 code=$2 text=$3
  shift 4
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" -eq "$code" ] && grep -qF -- "$text" <<<"$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL %s: exit %s (wanted %s), output:\n%s\n' "$name" "$rc" "$code" "$out" >&2
  fi
}

expect help 0 "usage: ukern <command>" -- "$UKERN" --help
expect no-args 2 "usage: ukern <command>" -- "$UKERN"
expect unknown 2 "unknown command 'frobnicate'" -- "$UKERN" frobnicate
expect version 0 "ukern 0." -- "$UKERN" --version
expect info 0 "nvrtc    13." -- "$UKERN" info
expect info-help 0 "usage: ukern info" -- "$UKERN" info --help
expect info-extra 2 "unexpected argument 'x'" -- "$UKERN" info x
expect cache-noverb 2 "expected 'stats' or 'clear'" -- "$UKERN" cache
expect cache-badverb 2 "expected 'stats' or 'clear'" -- "$UKERN" cache purge

# a cache directory with two entries and an unrelated file
mkdir -p "$tmp/c"
printf 'x%.0s' {1..100} >"$tmp/c/0123456789abcdef0123456789abcdef.ukc"
printf 'y%.0s' {1..50} >"$tmp/c/fedcba9876543210fedcba9876543210.ukc"
echo keep >"$tmp/c/notes.txt"
expect stats 0 "entries    2" -- "$UKERN" cache stats --dir "$tmp/c"
expect stats-size 0 "size       150 B" -- "$UKERN" cache stats --dir "$tmp/c"
expect clear 0 "removed 2 entries" -- "$UKERN" cache clear --dir "$tmp/c"
expect after-clear 0 "entries    0" -- "$UKERN" cache stats --dir "$tmp/c"
if [ -f "$tmp/c/notes.txt" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL clear removed notes.txt" >&2; fi
expect stats-env 0 "directory  $tmp/c" -- env UKERN_CACHE_DIR="$tmp/c" "$UKERN" cache stats
: >"$tmp/file"
expect stats-bad-dir 1 "ukern: $tmp/file/sub" -- "$UKERN" cache stats --dir "$tmp/file/sub"

# the demo compiles for sm_90 without a GPU, then hits the memory cache
expect demo 0 "compiled module 'demo'" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-hit 0 "memory hits 1" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-disk 0 "(disk cache hit)" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-lowered 0 "scale<double>  -> _Z" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90
expect demo-bad 2 "unexpected argument '--bogus'" -- "$UKERN" demo --bogus

echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
