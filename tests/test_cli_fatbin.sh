#!/bin/sh
# ukern precompile --arch 80,90,90a --fatbin: one fatbin holding an image per
# architecture, reported by the tool (issue 13 item 4); the file starts with
# the fatbin magic and is as long as reported. usage: test_cli_fatbin.sh UKERN
set -u
UKERN=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf 'extern "C" __global__ void k(float* y) { y[threadIdx.x] *= 2.0f; }\n' > "$tmp/k.cu"
out=$("$UKERN" precompile --dir "$tmp/cache" --arch 80,90,90a --arch compute_90 --fatbin "$tmp/k.fatbin" "$tmp/k.cu" 2>&1)
rc=$?
check() { # NAME CONDITION-RESULT
  if [ "$2" -ne 0 ]; then echo "FAIL $1"; echo "$out"; fail=1; else echo "ok $1"; fi
}
check exit $rc
echo "$out" | grep -q "^fatbin $tmp/k.fatbin (.*): sm_80 cubin .*, sm_90 cubin .*, sm_90a cubin .*, compute_90 ptx "; check report $?
magic=$(od -An -tx4 -N4 "$tmp/k.fatbin" 2>/dev/null | tr -d ' ')
[ "$magic" = "ba55ed50" ]; check magic $?
# An elementwise spec is not a module: refused.
out=$("$UKERN" precompile --dir "$tmp/cache" --arch 90 --fatbin "$tmp/x.fatbin" "$tmp/k.cu" "$tmp/k.cu" 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "takes one module"; check one-module $?
out=$("$UKERN" precompile --dir "$tmp/cache" --arch 90,100f --fatbin "$tmp/f.fatbin" "$tmp/k.cu" 2>&1)
[ $? -ne 0 ] && echo "$out" | grep -q "family targets"; check family $?
if [ $fail -ne 0 ]; then echo "test_cli_fatbin: failed"; exit 1; fi
echo "test_cli_fatbin: 5 checks passed"
