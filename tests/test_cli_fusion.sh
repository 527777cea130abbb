#!/usr/bin/env bash
# Fusion specs in the ukern tool (issue 12): gen prints every kernel of the
# plan, compile and precompile work without a GPU (-j N too; a second
# precompile compiles nothing), bad fusion specs fail with a position and a
# hint, run and bench take fusion specs on a GPU.
# usage: test_cli_fusion.sh [--cpu|--nvrtc|--gpu] <path to ukern>   (nvrtc without a flag)
set -u
TIER=nvrtc
case "$1" in --cpu) TIER=cpu; shift ;; --nvrtc) shift ;; --gpu) TIER=gpu; shift ;; esac
UKERN=$1
SPECS=$(cd "$(dirname "$0")/../examples/specs" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
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
    printf 'FAIL %s: exit %s (wanted %s), wanted "%s" in:\n%s\n' "$name" "$rc" "$code" "$text" "$out" >&2
  fi
}
# count_is <name> <wanted> <actual>
count_is() {
  if [ "$2" -eq "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: $3, wanted $2" >&2; fi
}
have_gpu=0
"$UKERN" info | grep -q '^devices  [1-9]' && have_gpu=1
AXPY=(--kind fusion --name axpy --in "a, x, y" --out z --program "z = a * x + y")

if [ "$TIER" = cpu ]; then
  # gen: the source of every kernel of the plan, each after its banner
  expect gen-dist 0 "// ==== ukern fusion 'row_dist': kernel 1 of 1 (reduction 'row_dist_r0') ====" -- "$UKERN" gen "$SPECS/row_dist.uk"
  expect gen-dist-types 0 "float32 in0 (float32), float32 in1 (float32) -> float32 out0 (float32)" -- "$UKERN" gen "$SPECS/row_dist.uk"
  expect gen-dist-f64 0 "-> float64 out0 (float64)" -- "$UKERN" gen "$SPECS/row_dist.uk" --case 1
  expect gen-softmax-1 0 "kernel 1 of 1 (row 'softmax_row')" -- "$UKERN" gen "$SPECS/softmax.uk"
  expect gen-softmax-2 0 "_uk_row_reduce(_uk_a2, _uk_op2()" -- "$UKERN" gen "$SPECS/softmax.uk"
  count_is gen-softmax-banners 1 "$("$UKERN" gen "$SPECS/softmax.uk" | grep -c '^// ==== ukern fusion')"
  expect gen-flags 0 "kernel 1 of 1 (elementwise 'axpy')" -- "$UKERN" gen "${AXPY[@]}" --inputs "2.5, float32[1000], float32[1000]"
  # NumPy 2 types: a weak Python float keeps float16; int32 + float32 array gives float64
  expect gen-weak 0 "-> float16 out0 (float16)" -- "$UKERN" gen "${AXPY[@]}" --inputs "2.5, float16[7], float16[7]"
  expect gen-promote 0 "-> float64 out0 (float64)" -- "$UKERN" gen "${AXPY[@]}" --inputs "int32(3), float32[7], int32[7]"
  "$UKERN" gen "$SPECS/softmax.uk" -o "$tmp/softmax.cu" >/dev/null 2>&1
  count_is gen-o 1 "$(grep -c '^// ==== ukern fusion' "$tmp/softmax.cu" 2>/dev/null || echo 0)"
  expect gen-help 0 "kind: elementwise | reduction | fusion | module" -- "$UKERN" gen --help
  expect gen-help-fusion 0 "example (row_dist.uk)" -- "$UKERN" gen --help

  # bad fusion specs: the position in the program, where it is in the file, a hint
  printf 'kind: fusion\nname: bad\nin_params: x, y\nout_params: z\nprogram: |\n  t = x - y\n  z = t +* 2\ninputs: float32[3], float32[3]\n' >"$tmp/syntax.uk"
  expect bad-syntax 1 "program:2:8: unexpected token" -- "$UKERN" gen "$tmp/syntax.uk"
  expect bad-syntax-caret 1 "           ^" -- "$UKERN" gen "$tmp/syntax.uk"
  expect bad-syntax-line 1 "(line 1 of 'program' is $tmp/syntax.uk:6)" -- "$UKERN" gen "$tmp/syntax.uk"
  expect bad-syntax-hint 1 "hint: in a fusion spec, in_params and out_params are names" -- "$UKERN" gen "$tmp/syntax.uk"
  expect bad-typed-names 1 "inputs:1:1: expected a name" -- "$UKERN" gen --kind fusion --in "T x" --out z --program "z = x" --inputs "float32[3]"
  expect bad-unknown-name 1 "UK_ERR_SYNTAX" -- "$UKERN" gen --kind fusion --in x --out z --program "z = x + w" --inputs "float32[3]"
  expect bad-type 1 "program:1:7: bitwise_and needs boolean or integer operands" -- "$UKERN" gen --kind fusion --in x,y --out z --program "z = x & y" --inputs "float32[3], float32[3]"
  expect bad-type-hint 1 "hint: a fusion's types and shapes follow NumPy 2" -- "$UKERN" gen --kind fusion --in x,y --out z --program "z = x & y" --inputs "float32[3], float32[3]"
  expect bad-shape 1 "could not be broadcast together with shapes (10,) (11,)" -- "$UKERN" gen --kind fusion --in x,y --out z --program "z = x + y" --inputs "float32[10], float32[11]"
  expect bad-noprogram 2 "a fusion kernel needs the field 'program'" -- "$UKERN" gen --kind fusion --in x --out z --inputs "float32[3]"
  expect bad-noprogram-hint 2 "hint: e.g. \`in_params: x, y\`" -- "$UKERN" gen --kind fusion --in x --out z --inputs "float32[3]"
  expect bad-op 2 "field 'operation' does not apply to a fusion kernel (it is for elementwise kernels)" -- "$UKERN" gen "$SPECS/row_dist.uk" --op "d = x"
  expect bad-op-hint 2 "hint: a fusion's computation is its \`program\`" -- "$UKERN" gen "$SPECS/row_dist.uk" --op "d = x"
  expect bad-axes-hint 2 "name their axes in the program" -- "$UKERN" gen "$SPECS/row_dist.uk" --axes 1
  expect bad-program-elsewhere 2 "field 'program' does not apply to an elementwise kernel (it is for fusion kernels)" -- "$UKERN" gen "$SPECS/squared_diff.uk" --program "z = x"
  expect bad-nargs 2 "inputs: 1 argument given, but in_params declares 2" -- "$UKERN" gen "$SPECS/row_dist.uk" --inputs "float32[3,4]"
  if [ "$have_gpu" = 0 ]; then
    expect run-nogpu 3 "run needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" run "$SPECS/row_dist.uk"
    expect bench-nogpu 3 "bench needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" bench --short "$SPECS/row_dist.uk"
  fi
elif [ "$TIER" = nvrtc ]; then
  # compile without a GPU: every kernel of the plan in the table
  expect compile-dist 0 "compiled 'row_dist' for sm_90" -- "$UKERN" compile "$SPECS/row_dist.uk" --arch 90
  out=$("$UKERN" compile "$SPECS/softmax.uk" --arch 90 2>&1)
  count_is compile-softmax-kernels 1 "$(grep -cE '^softmax_row +[0-9]+ ' <<<"$out")"
  expect compile-90a 0 "compiled 'axpy' for sm_90a" -- "$UKERN" compile "${AXPY[@]}" --inputs "2.5, float32[1000], float32[1000]" --arch 90a
  out=$("$UKERN" compile "$SPECS/softmax.uk" --arch 90 --json 2>/dev/null)
  if python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["ok"] and len(d["kernels"]) == 1 and d["image_bytes"] > 0))' "$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1)); printf 'FAIL compile-json: %s\n' "$out" >&2
  fi
  # precompile: every `inputs` line; the second run compiles nothing
  out=$("$UKERN" precompile --arch 90 --dir "$tmp/c" "$SPECS/row_dist.uk" "$SPECS/softmax.uk" 2>&1)
  count_is pre-compiled 5 "$(grep -c '^sm_90  compiled ' <<<"$out")"
  count_is pre-entries 5 "$(ls "$tmp/c" | grep -c '\.ukc$')" # row_dist 3 lines x 1 kernel + softmax 2 x 1 (the row plan)
  out=$("$UKERN" precompile --arch 90 --dir "$tmp/c" "$SPECS/row_dist.uk" "$SPECS/softmax.uk" 2>&1)
  count_is pre-again-cached 5 "$(grep -c '^sm_90  already cached ' <<<"$out")"
  count_is pre-again-compiled 0 "$(grep -c ' compiled ' <<<"$out")"
  # the specialisations told apart: kind, name, dtypes (issue 27)
  expect pre-list 0 "fusion row softmax_row (float32 -> float32)" -- "$UKERN" cache list --dir "$tmp/c"
  expect pre-list-f64 0 "fusion row softmax_row (float64 -> float64)" -- "$UKERN" cache list --dir "$tmp/c"
  expect pre-list-red 0 "fusion reduction row_dist_r0 (float16, float16 -> float16): kept ndim 1" -- "$UKERN" cache list --dir "$tmp/c"
  # -j 3: the lines shared between processes, each compiled once
  out=$("$UKERN" precompile --arch 90 --dir "$tmp/j" -j 3 "$SPECS/row_dist.uk" "$SPECS/softmax.uk" 2>&1)
  count_is pre-jobs-compiled 5 "$(grep -c ' compiled ' <<<"$out")"
  count_is pre-jobs-entries 5 "$(ls "$tmp/j" | grep -c '\.ukc$')"
  out=$("$UKERN" precompile --arch 90 --dir "$tmp/j" -j 2 "$SPECS/row_dist.uk" "$SPECS/softmax.uk" 2>&1)
  count_is pre-jobs-again 5 "$(grep -c 'already cached' <<<"$out")"
  # two architectures: one entry per kernel per arch
  out=$("$UKERN" precompile --arch 80,90 --dir "$tmp/two" "$SPECS/softmax.uk" 2>&1)
  count_is pre-two-archs 4 "$(grep -c ' compiled ' <<<"$out")"
  printf 'kind: fusion\nin_params: x, y\nout_params: z\nprogram: z = x & y\ninputs: float32[3], float32[3]\n' >"$tmp/band.uk"
  expect pre-bad-type 1 "bitwise_and needs boolean or integer operands" -- "$UKERN" precompile --arch 90 --dir "$tmp/bad" "$tmp/band.uk"
else
  if [ "$have_gpu" = 0 ]; then
    echo "SKIP: no CUDA device"
    exit 77
  fi
  export UKERN_CACHE_DIR="$tmp/gpu"
  expect run-dist 0 '"kind": "fusion", "inputs": "float32[4096,4096], float32[4096]", "outputs": "float32[4096]"' -- "$UKERN" run "$SPECS/row_dist.uk" --json --repeat 3
  expect run-dist-ok 0 '"unwritten": 0, "ok": true' -- "$UKERN" run "$SPECS/row_dist.uk" --json --repeat 3
  expect run-dist-half 0 '"outputs": "float16[257]"' -- "$UKERN" run "$SPECS/row_dist.uk" --case 2 --json --repeat 3
  expect run-softmax 0 "every element written" -- "$UKERN" run "$SPECS/softmax.uk" --case 1 --repeat 3
  expect run-softmax-out 0 "outputs     float64[100,77]" -- "$UKERN" run "$SPECS/softmax.uk" --case 1 --repeat 3
  expect run-given 0 '"outputs": "float32[1000]"' -- "$UKERN" run "${AXPY[@]}" --inputs "2.5, float32[1000], float32[1000]" --outputs "float32[1000]" --json --repeat 3
  expect run-given-f64 0 '"outputs": "float64[1000]"' -- "$UKERN" run "${AXPY[@]}" --inputs "2.5, float32[1000], float32[1000]" --outputs "float64[1000]" --json --repeat 3
  expect run-given-bad 1 "run: UK_ERR_SHAPE" -- "$UKERN" run "${AXPY[@]}" --inputs "2.5, float32[1000], float32[1000]" --outputs "float32[999]" --repeat 2
  # precompiled entries are the ones calls look up: the run compiles nothing
  "$UKERN" precompile --dir "$tmp/pre" "$SPECS/softmax.uk" >/dev/null 2>&1
  expect pre-hit 0 '"compiles": 0' -- env UKERN_CACHE_DIR="$tmp/pre" "$UKERN" run "$SPECS/softmax.uk" --json --repeat 2
  expect bench-spec 0 '"case": "softmax(float64[100,77])"' -- "$UKERN" bench --json --repeat 2 "$SPECS/softmax.uk"
  expect bench-suite 0 '"case": "fusion sum((x-y)^2, axis=-1) float32"' -- "$UKERN" bench --short --json --repeat 2
fi
echo "test_cli_fusion ($TIER): $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
