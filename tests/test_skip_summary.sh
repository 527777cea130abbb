#!/usr/bin/env bash
# scripts/skip-summary.py (run by scripts/test.sh): the reasons tests were
# skipped, read from a ctest log, printed once per reason with the tests.
# usage: test_skip_summary.sh <python> <skip-summary.py>
set -u
py=$1
script=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
block() { # number, name, output lines...
  local n=$1 name=$2
  shift 2
  printf '%s/9 Testing: %s\n%s/9 Test: %s\nCommand: "x"\nOutput:\n----------\n' "$n" "$name" "$n" "$name"
  printf '%s\n' "$@"
  printf '<end of output>\nTest time =   0.01 sec\n----------\nTest Passed.\n----------\n\n'
}
{
  echo "Start testing: now"
  block 1 test_gpu_a "SKIP: no CUDA device"
  block 2 test_cpu_b "cpu: 10 passed, 0 failed" "not a SKIP: line"
  block 3 test_gpu_c "SKIP: no CUDA device"
  block 4 test_cli_gpu "SKIP: needs nvcc" "SKIP: needs nvcc"
  echo "SKIP: outside any output block"
} >"$tmp/LastTest.log"
out=$("$py" "$script" "$tmp/LastTest.log")
want='skipped tests and why (3 tests):
    2 x no CUDA device
        test_gpu_a, test_gpu_c
    1 x needs nvcc
        test_cli_gpu'
pass=0
fail=0
if [ "$out" = "$want" ]; then pass=$((pass + 1)); else
  fail=$((fail + 1))
  printf 'FAIL grouped reasons:\n%s\nwanted:\n%s\n' "$out" "$want"
fi
# no skipped test: nothing printed; a missing log: a note, exit 0
block 1 test_cpu_b "ok" >"$tmp/none.log"
out=$("$py" "$script" "$tmp/none.log")
if [ -z "$out" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL no skips printed:\n%s\n' "$out"; fi
if "$py" "$script" "$tmp/missing.log" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL missing log"; fi
echo "test_skip_summary: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
