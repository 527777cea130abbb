#!/usr/bin/env bash
# The ukern command. Tiers:
#   --cpu  no NVRTC compile, no GPU: help, exit codes, specs and their errors,
#          gen, info, cache, --json outputs, what needs a GPU says so
#   (none) NVRTC without a GPU: compile, precompile, cache list, demo
#   --gpu  run, bench, precompile followed by run (exit 77 = skipped without one)
# usage: test_cli.sh [--cpu|--gpu] <path to ukern>
set -u
GPU=0
TIER=nvrtc
if [ "$1" = "--gpu" ]; then
  GPU=1
  TIER=gpu
  shift
elif [ "$1" = "--cpu" ]; then
  TIER=cpu
  shift
fi
UKERN=$1
SPECS=$(cd "$(dirname "$0")/../examples/specs" && pwd)
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect <name> <wanted exit code> <text the output must contain> -- command...
# expect_not: the same, with a text the output must not contain.
check_output() {
  local negate=$1 name=$2 code=$3 text=$4
  shift 5
  local out rc found=0
  out=$("$@" 2>&1)
  rc=$?
  grep -qF -- "$text" <<<"$out" && found=1
  if [ "$rc" -eq "$code" ] && [ "$found" -ne "$negate" ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL %s: exit %s (wanted %s), output:\n%s\n' "$name" "$rc" "$code" "$out" >&2
  fi
}
expect() { check_output 0 "$@"; }
expect_not() { check_output 1 "$@"; }

# expect_json <name> <wanted exit code> <key paths (a.b.0.c) that must exist> -- command...
# stdout must be exactly one JSON document (python3 -m json.tool parses it).
expect_json() {
  local name=$1 code=$2 keys=$3
  shift 4
  local out rc
  out=$("$@" 2>"$tmp/json-stderr")
  rc=$?
  if [ "$rc" -eq "$code" ] && python3 -m json.tool <<<"$out" >/dev/null 2>&1 &&
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
for path in sys.argv[2].split():
    v = d
    for part in path.split("."):
        v = v[int(part)] if isinstance(v, list) else v[part]
' "$out" "$keys" 2>/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL %s: exit %s (wanted %s), keys %s, stdout:\n%s\nstderr:\n%s\n' "$name" "$rc" "$code" "$keys" \
      "$out" "$(cat "$tmp/json-stderr")" >&2
  fi
}

# expect_py <name> <wanted exit code> <python expression of d (stdout as JSON),
# out (stdout bytes) and err (stderr bytes) that must be true> -- command...
expect_py() {
  local name=$1 code=$2 cond=$3
  shift 4
  local rc
  "$@" >"$tmp/py-stdout" 2>"$tmp/py-stderr"
  rc=$?
  if [ "$rc" -eq "$code" ] && python3 -c '
import json, os, sys
out = open(sys.argv[2], "rb").read()
err = open(sys.argv[3], "rb").read()
d = json.loads(out) if out.strip().startswith(b"{") else None
sys.exit(0 if eval(sys.argv[1]) else 1)
' "$cond" "$tmp/py-stdout" "$tmp/py-stderr"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL %s: exit %s (wanted %s), condition %s\nstdout:\n%s\nstderr:\n%s\n' "$name" "$rc" "$code" "$cond" \
      "$(cat -v "$tmp/py-stdout")" "$(cat -v "$tmp/py-stderr")" >&2
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
  # --json: one parseable object with the documented keys
  expect_json run-json-keys 0 "ok kernel kind inputs device arch ms gbps memcpy_gbps share unwritten cache.compiles cache.disk_hits" -- "$UKERN" run "$SPECS/l2norm.uk" --json --repeat 2
  expect_json bench-json-keys 0 "ok device arch elements rows.0.case rows.0.ms rows.0.gbps rows.9.us rows.10.ms rows.11.ms" -- "$UKERN" bench --short --json --repeat 2
  expect_json info-json-gpu 0 "devices.0.name devices.0.arch devices.0.multiprocessors devices.0.memory_bytes" -- "$UKERN" info --json
  expect_json pre-json-gpu 0 "ok results.0.arch results.0.result" -- env UKERN_CACHE_DIR="$tmp/pre" "$UKERN" precompile "$SPECS/squared_diff.uk" --json
  # the demo with a GPU runs the module, the elementwise and the reduction and checks them
  expect demo-gpu-ew 0 "ran      squared_diff" -- "$UKERN" demo --n 300000
  expect demo-gpu-red 0 "l2norm along rows (first call: compile + run)" -- "$UKERN" demo --n 300000
  expect demo-gpu-ok 0 "vector_add on 300000 elements" -- "$UKERN" demo --n 300000
  if "$UKERN" demo --n 300000 2>&1 | grep -q "WRONG"; then fail=$((fail + 1)); echo "FAIL demo-gpu: wrong results" >&2; else pass=$((pass + 1)); fi
  # fewer elements than the l2norm matrix's 4096 rows: the matrix must shrink to fit x
  expect demo-gpu-small 0 "l2norm along rows (first call: compile + run)" -- "$UKERN" demo --n 1000
  if "$UKERN" demo --n 1000 2>&1 | grep -q "WRONG"; then fail=$((fail + 1)); echo "FAIL demo-gpu-small: wrong results" >&2; else pass=$((pass + 1)); fi
  echo "test_cli --gpu: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi

printf '%s\n' 'extern "C" __global__ void stage(const float* x, float* y) {' \
  '  __shared__ float s[128];' '  s[threadIdx.x] = x[threadIdx.x];' '  __syncthreads();' \
  '  y[threadIdx.x] = s[127 - threadIdx.x];' '}' \
  'template <typename T> __global__ void scale(T* x, T a, long long n) {' \
  '  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;' '  if (i < n) x[i] *= a;' '}' >"$tmp/tpl.cu"

printf 'kind: elementwise\nin_params: T x\nout_params: T y\nopration: y = x\n' >"$tmp/typo.uk"

if [ "$TIER" = cpu ]; then

# --- specs: gen (no GPU: fake addresses) -----------------------------------------
expect gen-help 0 "kernel specs" -- "$UKERN" gen --help
expect gen-sq 0 'extern "C" __global__ void squared_diff(' -- "$UKERN" gen "$SPECS/squared_diff.uk"
expect gen-sq-types 0 "parameters: T x (float32), T y (float32) -> T z (float32)" -- "$UKERN" gen "$SPECS/squared_diff.uk"
expect gen-case 0 "typedef double T;" -- "$UKERN" gen "$SPECS/squared_diff.uk" --case 1
expect gen-case-range 2 "--case 7: the spec has 3 input lines" -- "$UKERN" gen "$SPECS/squared_diff.uk" --case 7
expect gen-override 0 "(int8), T y (int8)" -- "$UKERN" gen "$SPECS/squared_diff.uk" --inputs "int8[10], int8[10]"
expect gen-flags 0 "// ukern elementwise kernel 'cube'" -- "$UKERN" gen --in "T x" --out "T y" --op "y = x * x * x" --name cube --inputs "float64[5,7]"
expect gen-red 0 "// ukern reduction kernel 'l2norm'" -- "$UKERN" gen "$SPECS/l2norm.uk"
expect_not gen-red-default 0 "cub::BlockReduce" -- "$UKERN" gen "$SPECS/l2norm.uk"
expect gen-red-cub 0 "// block combine: cub::BlockReduce (block_reduce = cub)" -- "$UKERN" gen "$SPECS/l2norm.uk" --block-reduce cub
expect gen-red-cub-head 0 "#include <cub/block/block_reduce.cuh>" -- "$UKERN" gen "$SPECS/l2norm.uk" --block_reduce cub
expect gen-red-bad-br 2 "block_reduce is 'warp', expected ukern or cub" -- "$UKERN" gen "$SPECS/l2norm.uk" --block-reduce warp
expect gen-ew-br 2 "block_reduce" -- "$UKERN" gen "$SPECS/squared_diff.uk" --block-reduce cub
expect gen-argmax 0 "struct arg_best" -- "$UKERN" gen "$SPECS/argmax.uk"
"$UKERN" gen "$SPECS/squared_diff.uk" -o "$tmp/sq.cu" >/dev/null 2>&1
if grep -q "squared_diff" "$tmp/sq.cu" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL gen -o wrote nothing" >&2; fi

# --- bad specs: clear errors, non-zero exits ---------------------------------------
expect bad-field 2 "typo.uk:4: unknown field 'opration' (did you mean 'operation'?)" -- "$UKERN" gen "$tmp/typo.uk"
printf 'kind: elementwise\nin_params: T x\nout_params: T y\n' >"$tmp/missing.uk"
expect bad-missing 2 "an elementwise kernel needs the field 'operation'" -- "$UKERN" gen "$tmp/missing.uk"
expect bad-kindfield 2 "field 'map_expr' does not apply to an elementwise kernel" -- "$UKERN" gen "$SPECS/squared_diff.uk" --map "x"
expect bad-kind 2 "kind 'scan' is not elementwise, reduction, fusion or module" -- "$UKERN" gen "$SPECS/squared_diff.uk" --kind scan
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

# --- commands that need a GPU say so (exit 3) when there is none -------------------
if [ "$have_gpu" = 0 ]; then
  expect run-nogpu 3 "run needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" run "$SPECS/squared_diff.uk"
  expect bench-nogpu 3 "bench needs a GPU: UK_ERR_NO_DEVICE" -- "$UKERN" bench --short
  expect pre-nogpu 3 "name the target with --arch" -- "$UKERN" precompile "$SPECS/squared_diff.uk"
fi
expect run-help 0 "usage: ukern run" -- "$UKERN" run --help
expect bench-help 0 "usage: ukern bench" -- "$UKERN" bench --help
expect run-module 2 "tpl.cu is a module: run takes an elementwise, reduction or fusion spec" -- "$UKERN" run "$tmp/tpl.cu"
expect run-module-how 2 "see examples/raw_module_templates.c" -- "$UKERN" run "$tmp/tpl.cu"

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
expect stats-bad-dir 1 "--dir '$tmp/file/sub': Not a directory" -- "$UKERN" cache stats --dir "$tmp/file/sub"
expect cache-list 0 "0 entries in $tmp/c" -- "$UKERN" cache list --dir "$tmp/c"

# --- issue 9 item 13: spec files, flags, the cache directory, modules ------------
printf 'kind: elementwise\nin_params: T x\nout_params: T z\noperation: z = x\0 * 2\ninputs: float32[3]\n' >"$tmp/nul.uk"
expect nul-spec 2 "nul.uk:4: a NUL byte" -- "$UKERN" gen "$tmp/nul.uk"
expect_not nul-spec-cut 2 "z = x;" -- "$UKERN" gen "$tmp/nul.uk"
printf 'extern "C" __global__ void k(float *x) {\n  x[0] = 1;\0 x[1] = 2;\n}\n' >"$tmp/nul.cu"
expect nul-cu 2 "nul.cu:2: a NUL byte" -- "$UKERN" compile "$tmp/nul.cu" --arch 90
printf 'kind: module\nfile: nul.cu\n' >"$tmp/nulfile.uk"
expect nul-file 2 "nul.cu:2: a NUL byte" -- "$UKERN" precompile --arch 90 --dir "$tmp/nulpre" "$tmp/nulfile.uk"
mkfifo "$tmp/fifo.uk"
expect fifo-spec 2 "fifo.uk': not a regular file" -- timeout 20 "$UKERN" gen "$tmp/fifo.uk"
expect stats-missing 1 "--dir '$tmp/no-such-dir': No such file or directory" -- "$UKERN" cache stats --dir "$tmp/no-such-dir"
expect list-missing 1 "--dir '$tmp/no-such-dir'" -- "$UKERN" cache list --dir "$tmp/no-such-dir"
if [ -e "$tmp/no-such-dir" ]; then fail=$((fail + 1)); echo "FAIL cache stats created --dir" >&2; else pass=$((pass + 1)); fi
expect arch-novalue 2 "ukern compile: --arch needs a value" -- "$UKERN" compile "$SPECS/squared_diff.uk" --arch
expect case-novalue 2 "ukern compile: --case needs a value" -- "$UKERN" compile "$SPECS/squared_diff.uk" --case
expect pre-arch-novalue 2 "ukern precompile: --arch needs a value" -- "$UKERN" precompile "$SPECS/squared_diff.uk" --arch
expect pre-dir-novalue 2 "ukern precompile: --dir needs a value" -- "$UKERN" precompile "$SPECS/squared_diff.uk" --dir
expect run-novalue 2 "ukern run: --repeat needs a value" -- "$UKERN" run "$SPECS/squared_diff.uk" --repeat
expect bench-novalue 2 "ukern bench: --repeat needs a value" -- "$UKERN" bench --repeat
expect cache-novalue 2 "ukern cache: --dir needs a value" -- "$UKERN" cache stats --dir
printf 'kind: module\nfile: tpl.cu\ninputs: float32[3]\n' >"$tmp/modinputs.uk"
expect module-inputs 2 "field 'inputs' does not apply to a module kernel (it is for elementwise, reduction and fusion kernels)" -- "$UKERN" gen "$tmp/modinputs.uk"
expect module-inputs-how 2 "run its kernels from a program" -- "$UKERN" precompile --arch 90 "$tmp/modinputs.uk"

# --- issue 9 item 17: --json on every command that prints results ----------------
expect_json info-json 0 "version nvrtc driver devices cache.directory cache.entries cache.bytes" -- "$UKERN" info --json
expect_json stats-json 0 "directory entries bytes" -- "$UKERN" cache stats --dir "$tmp/c" --json
expect_json list-json 0 "directory entries count" -- "$UKERN" cache list --dir "$tmp/c" --json
expect_json stats-missing-json 1 "ok error.status error.message" -- "$UKERN" cache stats --dir "$tmp/no-such-dir" --json
# a failure reported on stderr (bad flag, bad spec) still gives one JSON object
expect_json run-json-usage 2 "ok error.what error.status" -- "$UKERN" run "$SPECS/squared_diff.uk" --bogus --json
expect_json pre-json-badspec 2 "ok error.status" -- "$UKERN" precompile --json --arch 90 --dir "$tmp/pre-bad" "$tmp/typo.uk"
expect_json compile-json-usage 2 "ok error.status" -- "$UKERN" compile --json --arch

# --- issue 27: gen without a spec, stats and list agree, JSON errors carry the
# message, names that are not UTF-8 or hold control bytes ------------------------
expect gen-nothing 2 "no kernel given: name a spec file" -- "$UKERN" gen
expect_not gen-nothing-field 2 "needs the field" -- "$UKERN" gen
# the default directory not created yet: an empty cache for both (exit 0)
expect stats-notyet 0 "entries    0" -- env UKERN_CACHE_DIR="$tmp/not-yet" "$UKERN" cache stats
expect list-notyet 0 "0 entries in $tmp/not-yet (not created yet)" -- env UKERN_CACHE_DIR="$tmp/not-yet" "$UKERN" cache list
expect_py stats-notyet-json 0 'd["exists"] is False and d["entries"] == 0' -- env UKERN_CACHE_DIR="$tmp/not-yet" "$UKERN" cache stats --json
expect_py list-notyet-json 0 'd["exists"] is False and d["count"] == 0 and d["entries"] == []' -- env UKERN_CACHE_DIR="$tmp/not-yet" "$UKERN" cache list --json
if [ -e "$tmp/not-yet" ]; then fail=$((fail + 1)); echo "FAIL cache stats/list created the default directory" >&2; else pass=$((pass + 1)); fi
# the message itself, not a pointer to stderr
expect_py json-usage-message 2 'd["ok"] is False and "unexpected argument \x27--bogus\x27" in d["error"]["message"] and "usage:" not in d["error"]["message"]' -- "$UKERN" run "$SPECS/squared_diff.uk" --bogus --json
expect_py json-spec-message 2 '"unknown field \x27opration\x27" in d["error"]["message"]' -- "$UKERN" precompile --json --arch 90 --dir "$tmp/pre-bad" "$tmp/typo.uk"
expect_not json-no-pointer 2 "see the message on stderr" -- "$UKERN" run "$SPECS/squared_diff.uk" --bogus --json
# a directory named by bytes that are not UTF-8: valid JSON, the bytes back by os.fsencode
odd=$(printf '%s/odd-\377\376-\303\251' "$tmp")
mkdir -p "$odd"
expect_py json-non-utf8-list 0 'os.fsencode(d["directory"]).endswith(b"/odd-\xff\xfe-\xc3\xa9")' -- "$UKERN" cache list --dir "$odd" --json
expect_py json-non-utf8-stats 0 'os.fsencode(d["directory"]).endswith(b"/odd-\xff\xfe-\xc3\xa9")' -- "$UKERN" cache stats --dir "$odd" --json
expect_py json-non-utf8-error 1 'b"/odd-\xff\xfe-\xc3\xa9/missing\x27: No such file" in os.fsencode(d["error"]["message"])' -- "$UKERN" cache stats --dir "$odd/missing" --json
for json_cmd in "cache list" "cache stats"; do
  if "$UKERN" $json_cmd --dir "$odd" --json | python3 -m json.tool >/dev/null 2>&1; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL json.tool rejects: ukern $json_cmd --json on $odd" >&2; fi
done
# error prefixes: control bytes and bytes that are not UTF-8 escaped, never raw
esc=$(printf '%s/esc-\033[31m-\377' "$tmp")
expect_py prefix-escaped 1 'b"esc-\\x1b[31m-\\xff" in err and b"\x1b" not in err and b"\xff" not in err' -- "$UKERN" cache stats --dir "$esc"
expect_py prefix-escaped-spec 2 'b"esc-\\x1b[31m-\\xff" in err and b"\x1b" not in err' -- "$UKERN" gen "$esc"
expect_py prefix-escaped-json 1 '"esc-\x1b[31m-\udcff" in d["error"]["message"]' -- "$UKERN" cache stats --dir "$esc" --json

if [ "$have_gpu" = 0 ]; then
  expect_json run-json-nogpu 3 "ok error.what error.status error.message" -- "$UKERN" run "$SPECS/squared_diff.uk" --json
  out=$("$UKERN" run "$SPECS/squared_diff.uk" --json 2>/dev/null)
  if python3 -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (d["ok"] is False and d["error"]["status"] == "UK_ERR_NO_DEVICE"))' "$out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL run-json-nogpu-status: %s\n' "$out" >&2
  fi
  expect_json bench-json-nogpu 3 "ok error.status error.message" -- "$UKERN" bench --short --json
fi

else

# --- compile (NVRTC for a named arch) ----------------------------------------------
expect compile-help 0 "usage: ukern compile" -- "$UKERN" compile --help
expect compile-sq 0 "compiled 'squared_diff' for sm_90" -- "$UKERN" compile "$SPECS/squared_diff.uk" --arch 90
expect compile-regs 0 "registers   spills st/ld" -- "$UKERN" compile "$SPECS/squared_diff.uk" --arch 90
expect compile-l2 0 "l2norm_g" -- "$UKERN" compile "$SPECS/l2norm.uk" --arch 90
expect compile-l2-cub 0 "l2norm_g" -- "$UKERN" compile "$SPECS/l2norm.uk" --arch 90 --block-reduce cub
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
expect pre-list 0 "elementwise squared_diff (float32, float32 -> float32): rows, vectorised x4" -- "$UKERN" cache list --dir "$tmp/pre"
expect pre-list-cu 0 "module stage, scale" -- "$UKERN" cache list --dir "$tmp/pre"
# specialisations of one kernel told apart: kind, name, dtypes, variant, arch, size, last use
expect_py pre-list-json 0 'sorted(e["dtypes"] for e in d["entries"] if e["name"] == "squared_diff") == ["float16, float16 -> float16", "float32, float32 -> float32", "float64, float64 -> float64"] and all(e["kind"] == "elementwise" and e["arch"] == "sm_90" and e["bytes"] > 0 and e["variant"] and e["last_used"].endswith("Z") and e["last_used_s_ago"] >= 0 for e in d["entries"] if e["name"]) and [e["kind"] for e in d["entries"] if not e["name"]] == ["module"]' -- "$UKERN" cache list --dir "$tmp/pre" --json
if "$UKERN" cache list --dir "$tmp/pre" --json | python3 -m json.tool >/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL pre-list json.tool" >&2; fi
n_stats=$("$UKERN" cache stats --dir "$tmp/pre" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"])')
n_list=$("$UKERN" cache list --dir "$tmp/pre" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["count"])')
if [ -n "$n_stats" ] && [ "$n_stats" = "$n_list" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL stats ($n_stats) and list ($n_list) disagree" >&2; fi
expect pre-two-archs 0 "sm_80  compiled" -- "$UKERN" precompile --arch 80 --arch 90 --dir "$tmp/pre" "$tmp/tpl.cu"
expect pre-none 2 "give at least one spec" -- "$UKERN" precompile --arch 90
expect pre-badspec 2 "unknown field 'opration'" -- "$UKERN" precompile --arch 90 --dir "$tmp/pre" "$tmp/typo.uk"
expect pre-flags 2 "spec fields come from the spec files only" -- "$UKERN" precompile --arch 90 "$SPECS/squared_diff.uk" --op "z = x"

# --- issue 9 items 13 and 17 with NVRTC ------------------------------------------
expect_not compile-error-nocall 1 "uk_last_error_log" -- "$UKERN" compile "$tmp/broken.cu" --arch 90
expect compile-error-log 1 "(the log follows)" -- "$UKERN" compile "$tmp/broken.cu" --arch 90
expect pre-red 0 "sm_90  compiled" -- "$UKERN" precompile --arch 90 --dir "$tmp/red" "$SPECS/l2norm.uk"
expect list-red 0 "reduction l2norm (float32 -> float32): kept ndim 1, reduced ndim 1" -- "$UKERN" cache list --dir "$tmp/red"
expect_not list-red-attr 0 "__launch_bounds__" -- "$UKERN" cache list --dir "$tmp/red"
expect_json list-red-json 0 "entries.0.file entries.0.bytes entries.0.arch entries.0.kernels.0 count" -- "$UKERN" cache list --dir "$tmp/red" --json
expect_json compile-json 0 "ok name arch compile_ms image image_bytes kernels.0.kernel kernels.0.registers kernels.0.spill_stores" -- "$UKERN" compile "$SPECS/l2norm.uk" --arch 90 --json
expect_json compile-json-error 1 "ok error.status error.message error.log" -- "$UKERN" compile "$tmp/broken.cu" --arch 90 --json
expect_json pre-jobs-json-error 1 "ok error.status" -- "$UKERN" precompile -j 2 --json --arch 90 --dir "$tmp/pj" "$tmp/broken.cu" "$SPECS/squared_diff.uk"
expect_json pre-json 0 "ok results.0.arch results.0.result results.0.ms results.0.what" -- "$UKERN" precompile --arch 90 --dir "$tmp/red" "$SPECS/l2norm.uk" --json

# the demo compiles for sm_90 without a GPU, then hits the memory cache
expect demo 0 "compiled module 'demo'" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-hit 0 "memory hits 1" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-disk 0 "(disk cache hit)" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90 --n 1000
expect demo-lowered 0 "scale<double>  -> _Z" -- env UKERN_CACHE_DIR="$tmp/demo" "$UKERN" demo --arch 90
expect demo-bad 2 "unexpected argument '--bogus'" -- "$UKERN" demo --bogus

fi

echo "test_cli ($TIER): $pass passed, $fail failed"
[ "$fail" -eq 0 ]
