#!/usr/bin/env bash
# The ukern command without a GPU: help, exit codes, info, cache, demo, gen,
# compile, precompile and bad specs. With --gpu: run, bench, and precompile
# followed by run on a GPU (exit 77 = skipped without one).
# usage: test_cli.sh [--gpu] <path to ukern>
set -u
GPU=0
if [ "$1" = "--gpu" ]; then
  GPU=1
  shift
fi
UKERN=$1
SPECS=$(cd "$(dirname "$0")/../examples/specs" && pwd)
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

have_gpu=0
"$UKERN" info | grep -q '^devices  [1-9]' && have_gpu=1

if [ "$GPU" = 1 ]; then
  if [ "$have_gpu" = 0 ]; then
    echo "SKIP: no CUDA device"
    exit 77
  fi
  export UKERN_CACHE_DIR="$tmp/gpu"
  expect run-sq 0 '"ok": true' -- "$UKERN" run "$SPECS/squared_diff.uk" --json --repeat 5
  expect run-sq-f64 0 "every element written" -- "$UKERN" run "$SPECS/squared_diff.uk" --case 1 --repeat 5
  expect run-sq-half 0 '"unwritten": 0' -- "$UKERN" run "$SPECS/squared_diff.uk" --case 2 --json --repeat 5
  expect run-l2 0 '"ok": true' -- "$UKERN" run "$SPECS/l2norm.uk" --json --repeat 5
  expect run-argmax 0 '"ok": true' -- "$UKERN" run "$SPECS/argmax.uk" --json --repeat 3
  expect run-text 0 "% of the memcpy ceiling" -- "$UKERN" run "$SPECS/squared_diff.uk" --repeat 3
  # precompiled entries are the ones calls look up: the runs compile nothing
  expect pre-local 0 "compiled" -- env UKERN_CACHE_DIR="$tmp/pre" "$UKERN" precompile "$SPECS/squared_diff.uk" "$SPECS/l2norm.uk"
  expect pre-hit-ew 0 '"compiles": 0, "memory_hits": 0, "disk_hits": 1' -- env UKERN_CACHE_DIR="$tmp/pre" "$UKERN" run "$SPECS/squared_diff.uk" --json --repeat 2
  expect pre-hit-red 0 '"compiles": 0, "memory_hits": 0, "disk_hits": 1' -- env UKERN_CACHE_DIR="$tmp/pre" "$UKERN" run "$SPECS/l2norm.uk" --json --repeat 2
  expect bench-short 0 '"case": "reduction sum columns float32"' -- "$UKERN" bench --short --json --repeat 3
  expect bench-table 0 "launch: host cost of a cached call" -- "$UKERN" bench --short --repeat 3
  # the demo with a GPU runs the module, the elementwise and the reduction and checks them
  expect demo-gpu-ew 0 "ran      squared_diff" -- "$UKERN" demo --n 300000
  expect demo-gpu-red 0 "l2norm along rows (first call: compile + run)" -- "$UKERN" demo --n 300000
  expect demo-gpu-ok 0 "vector_add on 300000 elements" -- "$UKERN" demo --n 300000
  if "$UKERN" demo --n 300000 2>&1 | grep -q "WRONG"; then fail=$((fail + 1)); echo "FAIL demo-gpu: wrong results" >&2; else pass=$((pass + 1)); fi
  echo "test_cli --gpu: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi

# --- specs: gen (no GPU: fake addresses) -----------------------------------------
expect gen-help 0 "kernel specs" -- "$UKERN" gen --help
expect gen-sq 0 'extern "C" __global__ void squared_diff(' -- "$UKERN" gen "$SPECS/squared_diff.uk"
expect gen-sq-types 0 "parameters: T x (float32), T y (float32) -> T z (float32)" -- "$UKERN" gen "$SPECS/squared_diff.uk"
expect gen-case 0 "typedef double T;" -- "$UKERN" gen "$SPECS/squared_diff.uk" --case 1
expect gen-case-range 2 "--case 7: the spec has 3 input lines" -- "$UKERN" gen "$SPECS/squared_diff.uk" --case 7
expect gen-override 0 "(int8), T y (int8)" -- "$UKERN" gen "$SPECS/squared_diff.uk" --inputs "int8[10], int8[10]"
expect gen-flags 0 "// ukern elementwise kernel 'cube'" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x * x * x" --name cube --inputs "float64[5,7]"
expect gen-red 0 "// ukern reduction kernel 'l2norm'" -- "$UKERN" gen "$SPECS/l2norm.uk"
expect gen-argmax 0 "struct arg_best" -- "$UKERN" gen "$SPECS/argmax.uk"
"$UKERN" gen "$SPECS/squared_diff.uk" -o "$tmp/sq.cu" >/dev/null 2>&1
if grep -q "squared_diff" "$tmp/sq.cu" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL gen -o wrote nothing" >&2; fi

# --- bad specs: clear errors, non-zero exits ---------------------------------------
printf 'kind: elementwise\nin_params: T x\nout_params: T y\nopration: y = x\n' >"$tmp/typo.uk"
expect bad-field 2 "typo.uk:4: unknown field 'opration' (did you mean 'operation'?)" -- "$UKERN" gen "$tmp/typo.uk"
printf 'kind: elementwise\nin_params: T x\nout_params: T y\n' >"$tmp/missing.uk"
expect bad-missing 2 "an elementwise kernel needs the field 'operation'" -- "$UKERN" gen "$tmp/missing.uk"
expect bad-kindfield 2 "field 'map_expr' does not apply to an elementwise kernel" -- "$UKERN" gen "$SPECS/squared_diff.uk" --map "x"
expect bad-kind 2 "kind 'scan' is not elementwise, reduction or module" -- "$UKERN" gen "$SPECS/squared_diff.uk" --kind scan
printf 'name: a\nname: b\n' >"$tmp/twice.uk"
expect bad-twice 2 "twice.uk:2: field 'name' given twice" -- "$UKERN" gen "$tmp/twice.uk"
printf 'in_params: |\noperation: x\n' >"$tmp/block.uk"
expect bad-block 2 "opens a block" -- "$UKERN" gen "$tmp/block.uk"
printf 'name: a\n  indented\n' >"$tmp/indent.uk"
expect bad-indent 2 "indent.uk:2: indented line outside" -- "$UKERN" gen "$tmp/indent.uk"
expect bad-nofile 2 "cannot open spec '$tmp/nope.uk'" -- "$UKERN" gen "$tmp/nope.uk"
expect bad-syntax 1 "in_params:1:11: expected a parameter name after type 'T'" -- "$UKERN" gen --in "T x, raw T" --out "T y" --op "y = x" --inputs "float32[3]"
expect bad-nargs 2 "inputs: 2 arguments given, but in_params declares 1 (T x)" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x" --inputs "float32[3], float32[3]"
expect bad-dtype 2 "unknown dtype 'flaot32' (did you mean 'float32'?)" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x" --inputs "flaot32[3]"
expect bad-dim 2 "dimension '-3' of float32[...] is not a non-negative integer" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x" --inputs "float32[-3]"
expect bad-scalar 2 "'abc' is neither an array" -- "$UKERN" gen --in "T x, T s" --out "T y" --op "y = x * s" --inputs "float32[3], abc"
expect bad-noinputs 2 "no \`inputs\`" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x"
expect bad-unbound 1 "UK_ERR_TYPE" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x" --inputs "3"
expect bad-axes 2 "axes: 'x' is not an axis" -- "$UKERN" gen "$SPECS/l2norm.uk" --axes "x"
expect bad-flag 2 "unexpected argument '--bogus'" -- "$UKERN" gen "$SPECS/squared_diff.uk" --bogus
expect bad-flagval 2 "--inputs needs a value" -- "$UKERN" gen "$SPECS/squared_diff.uk" --inputs

# --- compile (NVRTC for a named arch) ----------------------------------------------
expect compile-help 0 "usage: ukern compile" -- "$UKERN" compile --help
expect compile-sq 0 "compiled 'squared_diff' for sm_90" -- "$UKERN" compile "$SPECS/squared_diff.uk" --arch 90
expect compile-regs 0 "registers   spills st/ld" -- "$UKERN" compile "$SPECS/squared_diff.uk" --arch 90
expect compile-l2 0 "l2norm_cols" -- "$UKERN" compile "$SPECS/l2norm.uk" --arch 90
printf '%s\n' 'extern "C" __global__ void stage(const float* x, float* y) {' \
  '  __shared__ float s[128];' '  s[threadIdx.x] = x[threadIdx.x];' '  __syncthreads();' \
  '  y[threadIdx.x] = s[127 - threadIdx.x];' '}' \
  'template <typename T> __global__ void scale(T* x, T a, long long n) {' \
  '  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;' '  if (i < n) x[i] *= a;' '}' >"$tmp/tpl.cu"
expect compile-cu 0 "compiled 'tpl' for sm_80" -- "$UKERN" compile "$tmp/tpl.cu" --arch 80 --name-expr "scale<double>"
expect compile-cu-names 0 "scale<double>" -- "$UKERN" compile "$tmp/tpl.cu" --arch 90 --name-expr "scale<double>"
out=$("$UKERN" compile "$tmp/tpl.cu" --arch 90 2>&1)
if grep -Eq '^stage +[0-9]+ +0/0 +0 +512 +1$' <<<"$out"; then pass=$((pass + 1)); else fail=$((fail + 1)); printf 'FAIL compile-smem:\n%s\n' "$out" >&2; fi
expect compile-log 0 "ptxas info    : Compiling entry function 'stage'" -- "$UKERN" compile "$tmp/tpl.cu" --arch 90 --log
printf 'extern "C" __global__ void k(float *x) {\n  x[0] = undefined_thing;\n}\n' >"$tmp/broken.cu"
expect compile-error 1 'identifier "undefined_thing" is undefined' -- "$UKERN" compile "$tmp/broken.cu" --arch 90
expect compile-numbered 1 "    2 |   x[0] = undefined_thing;" -- "$UKERN" compile "$tmp/broken.cu" --arch 90
expect compile-badarch 2 "--arch: 'sm90' is not an architecture" -- "$UKERN" compile "$tmp/broken.cu" --arch sm90
expect compile-nothing 2 "give a spec or a .cu file" -- "$UKERN" compile

# --- precompile for a named arch, then the cache lists it --------------------------
expect pre-help 0 "usage: ukern precompile" -- "$UKERN" precompile --help
expect pre-first 0 "sm_90  compiled" -- "$UKERN" precompile --arch 90 --dir "$tmp/pre" "$SPECS/squared_diff.uk" "$tmp/tpl.cu"
expect pre-again 0 "sm_90  already cached" -- "$UKERN" precompile --arch 90 --dir "$tmp/pre" "$SPECS/squared_diff.uk"
expect pre-count 0 "entries    4" -- "$UKERN" cache stats --dir "$tmp/pre"
expect pre-list 0 "sm_90 squared_diff" -- "$UKERN" cache list --dir "$tmp/pre"
expect pre-list-cu 0 "sm_90 stage, scale" -- "$UKERN" cache list --dir "$tmp/pre"
expect pre-two-archs 0 "sm_80  compiled" -- "$UKERN" precompile --arch 80 --arch 90 --dir "$tmp/pre" "$tmp/tpl.cu"
expect pre-none 2 "give at least one spec" -- "$UKERN" precompile --arch 90
expect pre-badspec 2 "unknown field 'opration'" -- "$UKERN" precompile --arch 90 --dir "$tmp/pre" "$tmp/typo.uk"
expect pre-flags 2 "spec fields come from the spec files only" -- "$UKERN" precompile --arch 90 "$SPECS/squared_diff.uk" --op "z = x"

# --- commands that need a GPU say so (exit 3) when there is none -------------------
if [ "$have_gpu" = 0 ]; then
  expect run-nogpu 3 "run needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" run "$SPECS/squared_diff.uk"
  expect bench-nogpu 3 "bench needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" bench --short
  expect pre-nogpu 3 "name the target with --arch" -- "$UKERN" precompile "$SPECS/squared_diff.uk"
fi
expect run-help 0 "usage: ukern run" -- "$UKERN" run --help
expect bench-help 0 "usage: ukern bench" -- "$UKERN" bench --help
expect run-module 2 "modules have no inputs to generate" -- "$UKERN" run "$tmp/tpl.cu"

# --- existing commands ---------------------------------------------------------------
expect help 0 "usage: ukern <command>" -- "$UKERN" --help
expect no-args 2 "usage: ukern <command>" -- "$UKERN"
expect unknown 2 "unknown command 'frobnicate'" -- "$UKERN" frobnicate
expect version 0 "ukern 0." -- "$UKERN" --version
expect info 0 "nvrtc    13." -- "$UKERN" info
expect info-help 0 "usage: ukern info" -- "$UKERN" info --help
expect info-extra 2 "unexpected argument 'x'" -- "$UKERN" info x
expect cache-noverb 2 "expected 'stats', 'list' or 'clear'" -- "$UKERN" cache
expect cache-badverb 2 "expected 'stats', 'list' or 'clear'" -- "$UKERN" cache purge

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
expect cache-list 0 "0 entries in $tmp/c" -- "$UKERN" cache list --dir "$tmp/c"

# the demo compiles for sm_90 without a GPU, then hits the memory cache
expect demo 0 "compiled module 'demo'" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-hit 0 "memory hits 1" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-disk 0 "(disk cache hit)" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-lowered 0 "scale<double>  -> _Z" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90
expect demo-bad 2 "unexpected argument '--bogus'" -- "$UKERN" demo --bogus

echo "test_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
