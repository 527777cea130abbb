#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# in build-fuzz/ and runs each for SECONDS on its one-file corpus
# (tests/fuzz/corpus/<target>.corpus), one process at a time; then merges
# the new interesting inputs back into the corpus file (named records are
# kept) and prints executions and findings per target.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]     default: every target
#   tests/fuzz/run.sh --replay [TARGET...]    each target once over its corpus (-runs=0), no merge
#   FUZZ_BUILD=dir  FUZZ_NO_MERGE=1  FUZZ_ARGS="-max_len=65536 ..." change the defaults.
#
# A crash leaves build-fuzz/findings/<target>/crash-* (replay one with
# build/tests/test_fuzz_replay_<target> FILE); the summary lists them and the
# script exits 1.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
usage() { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
[ $# -ge 1 ] || usage
replay=0
if [ "$1" = --replay ]; then replay=1; secs=0; else secs=$1; fi
shift
[[ $secs =~ ^[0-9]+$ ]] || usage
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=($(sed -n 's/^set(UK_FUZZ_TARGETS \(.*\))$/\1/p' tests/fuzz.cmake))
fi
command -v clang >/dev/null || { echo "run.sh: clang (with libFuzzer) is needed" >&2; exit 2; }
build=${FUZZ_BUILD:-$root/build-fuzz}
CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DUKERN_FUZZ=ON -DUKERN_BUILD_TOOLS=OFF \
  -DUKERN_BUILD_BENCH=OFF -DUKERN_BUILD_EXAMPLES=OFF -DUKERN_BUILD_PYTHON=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}") >/dev/null
status=0
summary=()
for t in "${targets[@]}"; do
  corpus=tests/fuzz/corpus/$t.corpus
  work=$build/fuzz-work/$t
  rm -rf "$work" && mkdir -p "$work/old" "$work/new" "$work/merged" "$build/findings/$t"
  tests/fuzz/corpus.py unpack "$corpus" "$work/old"
  log=$work/log
  set +e
  if [ $replay = 1 ]; then
    "$build/tests/fuzz_$t" -runs=0 "$work/old" >"$log" 2>&1
  else
    # -timeout: an input slower than 10 s is a finding (quadratic work)
    "$build/tests/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
      -artifact_prefix="$build/findings/$t/" ${FUZZ_ARGS:-} "$work/new" "$work/old" >"$log" 2>&1
  fi
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  found=$(ls "$build/findings/$t" | wc -l)
  if [ $rc -ne 0 ]; then
    status=1
    where=$(grep -m1 -E '^ *#[0-9]+ .* in ' "$log" | sed 's/.* in //' || true)
    what=$(grep -m1 -E 'ERROR: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|invariant broken' "$log" || true)
    summary+=("$t: executions ${execs:-?}, FAILED (rc $rc): ${what:-see $log} ${where:+at $where}; $found finding(s) in $build/findings/$t")
  else
    summary+=("$t: executions ${execs:-?}, no finding")
  fi
  if [ $replay = 0 ] && [ -z "${FUZZ_NO_MERGE:-}" ]; then
    "$build/tests/fuzz_$t" -merge=1 "$work/merged" "$work/old" "$work/new" >>"$work/merge.log" 2>&1 || true
    tests/fuzz/corpus.py pack "$work/merged" "$corpus"
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
