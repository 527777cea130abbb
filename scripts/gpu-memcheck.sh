#!/usr/bin/env bash
# Every gpu-labelled test under compute-sanitizer memcheck, JOBS at a time
# (shell tests too: the sanitizer follows their child processes). A line per
# test and the totals in $OUT/memcheck/summary.txt; exit 1 when a test failed
# or memcheck reported an error. UKERN_TEST_MEMCHECK=1 lets a test avoid a
# pattern the tool misreports (see test_gpu_fusion_graph.c). GPU_PACK=1: the
# per-test logs end up in one archive, $OUT/memcheck/logs.tar.gz, beside
# summary.txt (a remote runner may return only a few files).
# Usage: scripts/gpu-memcheck.sh [build-dir] [jobs]
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOBS=${2:-4}
OUT=${OUT:-/tmp/ukern-gpu-out}
M="$OUT/memcheck"
mkdir -p "$M"
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found"; exit 1; }
export UKERN_TEST_MEMCHECK=1 M

# name <TAB> working directory <TAB> environment <TAB> command, from CTest itself.
ctest --test-dir "$BUILD" -L gpu --show-only=json-v1 | python3 -c '
import json, shlex, sys
for t in json.load(sys.stdin)["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    env = " ".join(shlex.quote(e) for e in props.get("ENVIRONMENT", []))
    cmd = " ".join(shlex.quote(c) for c in t["command"])
    print("\t".join([t["name"], props.get("WORKING_DIRECTORY", "."), env, cmd]))
' >"$M/list"

one() {
  IFS=$'\t' read -r name wd env cmd <<<"$1"
  (cd "$wd" && eval "env UKERN_CACHE_DIR=/tmp/ukern-memcheck/$name $env timeout 900 compute-sanitizer \
      --tool memcheck --report-api-errors no --target-processes all --error-exitcode 9 $cmd") >"$M/$name.log" 2>&1
  local rc=$? errors
  errors=$(grep -h 'ERROR SUMMARY' "$M/$name.log" | awk '{s += $4} END {print s + 0}')
  printf '%s rc=%d memcheck_errors=%d\n' "$name" "$rc" "$errors"
}
export -f one
tr '\n' '\0' <"$M/list" | xargs -0 -P "$JOBS" -I{} bash -c 'one "$1"' _ {} | sort >"$M/summary.txt"
bad=$(awk '!/rc=(0|77) memcheck_errors=0$/' "$M/summary.txt" | wc -l)
total=$(wc -l <"$M/summary.txt")
echo "memcheck: $total gpu tests, $((total - bad)) clean (passed or skipped, 0 errors), $bad not" | tee -a "$M/summary.txt"
cat "$M/summary.txt"
if [ "${GPU_PACK:-0}" = 1 ]; then
  (cd "$M" && tar -czf logs.tar.gz ./*.log list && rm -f ./*.log list) || bad=1
fi
[ "$bad" -eq 0 ]
