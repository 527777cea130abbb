#!/usr/bin/env bash
# Wall time of `ukern precompile -j N` for 32 distinct elementwise
# specialisations, against -j 1 (issue 14). No GPU needed (--arch 90).
#
#   scripts/precompile-jobs-bench.sh BUILD_DIR [ROUNDS] [JOBS...]
#     BUILD_DIR  the build directory holding tools/ukern (e.g. build-gpu)
#     ROUNDS     default 2
#     JOBS       the -j values besides 1 (default: 2 4 8 16)
#
# The 32 items: sq24.uk (squared difference, 8 dtypes x contiguous,
# broadcast row, scalar) and add8.uk (sum, 8 dtypes). Every run gets a fresh
# cache directory and kernel text new to the machine (a run number in the
# operation, not only in a comment), so neither ukern's cache nor any NVRTC
# reuse answers. Runs alternate: each round runs -j 1 then every -j N, the
# second round in the reverse order, so drift of the machine's load falls on
# both sides.
set -euo pipefail

if [[ $# -lt 1 || ! -x "$1/tools/ukern" ]]; then
  echo "usage: $0 BUILD_DIR [ROUNDS] [JOBS...]   (BUILD_DIR/tools/ukern must exist)" >&2
  exit 2
fi
ukern="$1/tools/ukern"
rounds="${2:-2}"
shift $(($# < 2 ? $# : 2))
jobs=("$@")
[[ ${#jobs[@]} -gt 0 ]] || jobs=(2 4 8 16)
order=(1 "${jobs[@]}")

work="$(mktemp -d /tmp/ukern-pjobs-XXXXXX)"
trap 'rm -rf "$work"' EXIT
dtypes=(int8 int16 int32 int64 uint8 uint32 float32 float64)
tag="$$$(date +%s)"

# Writes the two specs of run $1 into $2.
write_specs() {
  local run="$1" dir="$2" d
  {
    echo "kind: elementwise"
    echo "name: sq24"
    echo "in_params: T x, T y"
    echo "out_params: T z"
    echo "operation: z = (x - y) * (x - y) + (T)($run % 7)"
    echo "inputs: |"
    for d in "${dtypes[@]}"; do
      echo "  ${d}[512,1000], ${d}[512,1000]"
      echo "  ${d}[512,1000], ${d}[1000]"
      echo "  ${d}[512,1000], ${d}(3)"
    done
  } >"$dir/sq24.uk"
  {
    echo "kind: elementwise"
    echo "name: add8"
    echo "in_params: T x, T y"
    echo "out_params: T z"
    echo "operation: z = x + y + (T)($run % 5)"
    echo "inputs: |"
    for d in "${dtypes[@]}"; do echo "  ${d}[1000], ${d}[1000]"; done
  } >"$dir/add8.uk"
}

# Per-process figures of one run from `--json` results (awk; mawk-safe).
# The children write their results in child order, and child c compiles
# items c, c + N, ... (round robin), so the list splits into the children's
# runs. Prints: compiled, the median first compile of a process (ms), the
# median later compile (ms), the busiest process's sum of compile times (ms).
per_process() {
  awk -v N="$1" '
    function median(a, n,   i, k, v) {
      for (i = 2; i <= n; i++) { v = a[i]; for (k = i - 1; k >= 1 && a[k] > v; k--) a[k + 1] = a[k]; a[k + 1] = v }
      return n == 0 ? 0 : n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    match($0, /"result": "[^"]*"/) {
      r = substr($0, RSTART + 11, RLENGTH - 12)
      match($0, /"ms": [0-9.]+/)
      n++; res[n] = r; t[n] = substr($0, RSTART + 6, RLENGTH - 6) + 0
      if (r == "compiled") compiled++
    }
    END {
      pos = 1
      for (c = 0; c < N; c++) {
        cnt = int(n / N) + (c < n % N ? 1 : 0); s = 0
        for (k = 0; k < cnt; k++) { v = t[pos + k]; s += v; if (k == 0) first[++nf] = v; else later[++nl] = v }
        pos += cnt
        if (s > busiest) busiest = s
      }
      printf "%d %.1f %.1f %.1f\n", compiled, median(first, nf), median(later, nl), busiest
    }' "$2"
}

# One run: -j $1, run tag $2; prints "wall_s compiled first_ms later_ms
# busiest_ms".
run_once() {
  local j="$1" run="$2" dir="$work/run$2"
  mkdir -p "$dir/cache"
  write_specs "${tag}${run}" "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  if ! "$ukern" precompile --arch 90 -j "$j" --json --dir "$dir/cache" "$dir/sq24.uk" "$dir/add8.uk" \
    >"$dir/out.json" 2>"$dir/err.txt"; then
    echo "ukern precompile -j $j failed:" >&2
    cat "$dir/out.json" "$dir/err.txt" >&2
    exit 1
  fi
  t1=$(date +%s.%N)
  local n stats
  n=$(find "$dir/cache" -name '*.ukc' | wc -l)
  stats=$(per_process "$j" "$dir/out.json")
  if [[ "$n" -ne 32 || "${stats%% *}" -ne 32 ]]; then
    echo "ukern precompile -j $j: $n cache entries, ${stats%% *} compiled; expected 32 of each" >&2
    exit 1
  fi
  rm -rf "$dir"
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $stats"
}

# A first run, discarded: the first NVRTC load and compiles on a fresh
# machine read the toolkit from disk and find the CPU clock low.
w=$(run_once 1 0)
printf 'warm-up -j 1 (discarded) %7.2f s\n' "${w%% *}" >&2

declare -A times
detail=()
run=0
for ((r = 1; r <= rounds; r++)); do
  seq=("${order[@]}")
  if ((r % 2 == 0)); then
    seq=()
    for ((k = ${#order[@]} - 1; k >= 0; k--)); do seq+=("${order[k]}"); done
  fi
  for j in "${seq[@]}"; do
    run=$((run + 1))
    read -r t compiled first later busiest <<<"$(run_once "$j" "$run")"
    times[$j,$r]="$t"
    detail+=("$(printf '| %d | %s | %.2f s | %d | %.1f | %.1f | %.0f | %.0f |' "$r" "$j" "$t" "$compiled" "$first" \
      "$later" "$busiest" "$(awk -v w="$t" -v b="$busiest" 'BEGIN {print w * 1000 - b}')")")
    printf 'round %d  -j %-3s %7.2f s\n' "$r" "$j" "$t" >&2
  done
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

cores=$(nproc)
echo
echo "ukern precompile, 32 specialisations, --arch 90, $cores cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| -j |'
for ((r = 1; r <= rounds; r++)); do printf ' round %d |' "$r"; done
printf ' median | speed-up vs -j 1 |\n|---|'
for ((r = 0; r <= rounds + 1; r++)); do printf -- '---|'; done
echo
vals=()
for ((r = 1; r <= rounds; r++)); do vals+=("${times[1,$r]}"); done
base=$(median "${vals[@]}")
for j in "${order[@]}"; do
  vals=()
  printf '| %s |' "$j"
  for ((r = 1; r <= rounds; r++)); do
    printf ' %.2f s |' "${times[$j,$r]}"
    vals+=("${times[$j,$r]}")
  done
  m=$(median "${vals[@]}")
  printf ' %.2f s | %.2fx |\n' "$m" "$(awk -v a="$base" -v b="$m" 'BEGIN {print a / b}')"
done

echo
echo "Per run: compiles done (from --json), the median first and later compile of a process, the busiest"
echo "process's sum of compile times, and the rest of the wall time (process start, NVRTC load, fork, exit)."
echo
echo "| round | -j | wall | compiled | first compile of a process (ms) | later compiles (ms) | busiest process, sum (ms) | wall - busiest (ms) |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${detail[@]}"
