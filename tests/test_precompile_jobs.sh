#!/usr/bin/env bash
# ukern precompile -j N (issue 14): N processes share the items; every
# specialisation is compiled exactly once into the directory, a second run
# finds them all cached, a bad -j is refused, and a directory others can
# write is refused with the reason (issue 9 item 1).
# usage: test_precompile_jobs.sh <path to ukern>
set -u
UKERN=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # <name> <condition result 0/1>
  if [ "$2" -ne 0 ]; then echo "FAIL $1" >&2; fail=$((fail + 1)); fi
}
cat > "$tmp/five.uk" <<'SPEC'
kind: elementwise
name: five
in_params: T x, T y
out_params: T z
operation: z = x * 3 - y
inputs: |
  float32[1001], float32[1001]
  float64[1001], float64[1001]
  int32[1001], int32[1001]
  float32[64,33], float32[33]
  int64[1001], int64(2)
SPEC
out=$("$UKERN" precompile --arch 90 --dir "$tmp/c" -j 3 "$tmp/five.uk" 2>&1); rc=$?
check "-j 3 exit ($out)" $rc
check "-j 3 compiled 5" $([ "$(grep -c ' compiled ' <<<"$out")" -eq 5 ]; echo $?)
check "-j 3 entries 5" $([ "$(ls "$tmp/c" | grep -c '\.ukc$')" -eq 5 ]; echo $?)
out=$("$UKERN" precompile --arch 90 --dir "$tmp/c" -j 2 "$tmp/five.uk" 2>&1); rc=$?
check "-j 2 again exit" $rc
check "-j 2 again all cached ($out)" $([ "$(grep -c 'already cached' <<<"$out")" -eq 5 ]; echo $?)
out=$("$UKERN" precompile --arch 90 --dir "$tmp/c" -j 0 "$tmp/five.uk" 2>&1); rc=$?
check "-j 0 refused ($out)" $([ $rc -ne 0 ] && grep -q "not a number of processes" <<<"$out"; echo $?)
mkdir -p "$tmp/shared" && chmod 0777 "$tmp/shared"
out=$("$UKERN" precompile --arch 90 --dir "$tmp/shared" "$tmp/five.uk" 2>&1); rc=$?
check "shared dir refused ($out)" $([ $rc -ne 0 ] && grep -q "writable by all users" <<<"$out"; echo $?)
out=$("$UKERN" cache stats --dir "$tmp/shared" 2>&1)
check "cache stats says refused ($out)" $(grep -q "^refused .*writable by all users" <<<"$out"; echo $?)
if [ $fail -ne 0 ]; then echo "test_precompile_jobs: $fail failed"; exit 1; fi
echo "test_precompile_jobs: all passed"
