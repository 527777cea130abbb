#!/usr/bin/env bash
# The copy-rate sweep (issue 25) on a GPU machine, from a build made elsewhere and
# carried (default build-gpu/; the Python extension is abi3). Writes into $OUT
# (default /tmp/ukern-gpu-out), at most 8 files: sweep.json (rewritten after every
# point, so a timeout still leaves the points done), sweep.md (the "Sweep" section
# for docs/PERF.md), sweep_<kind>.png (4 plots; skipped without matplotlib, see
# below) and sweep.log (progress).
# --quick: 4 sizes, capped torch.compile compiles, a 270 s budget, one GPU.
# --full: the full profile (8 sizes, 7 widths, torch.compile at every fusion point
#   >= 32 MiB) in one call of ~560 s: one shard per GPU (SWEEP_SHARDS, default every
#   GPU of CUDA_VISIBLE_DEVICES or nvidia-smi), each `sweep.py --shard I/N` on its own
#   GPU with the points dealt by estimated cost, run at once; their JSONs
#   (sweep-shardI.json, rewritten after every point) are merged into sweep.json and
#   then removed; their lines, prefixed "[shard I]", go to stdout and sweep.log. The estimate is
#   printed first (bench/sweep.py --estimate, no GPU needed). Default wall limit
#   500 s, each shard's budget 45 s less (points past it are recorded as skipped).
# Neither: the full profile on one GPU, no budget (SWEEP_TIMEOUT 3000).
# The sweep's own wall limit (SWEEP_TIMEOUT seconds) kills it and still writes the
# report from the partial JSON(s).
# Over two calls instead (a slower machine): --full --sizes 30,26,22,16 in one, copy
# sweep.json aside, --full --sizes 28,24,20,18 in the other; then, anywhere:
#   python3 bench/sweep_report.py a.json b.json --out-json sweep.json --md sweep.md --plots DIR
# Without matplotlib on the GPU host, make the plots from the JSON on any machine:
#   pip install --target /tmp/mpl matplotlib && PYTHONPATH=/tmp/mpl python3 bench/sweep_report.py ...
# Regenerate the report later: python3 bench/sweep_report.py sweep.json --perf docs/PERF.md --plots DIR
# Usage: scripts/gpu-sweep.sh [--quick|--full] [build-dir] [extra sweep.py arguments...]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
MODE= BUILD=build-gpu EXTRA=()
for a in "$@"; do   # any order: --quick/--full, a build directory, sweep.py's own arguments
  if [ "$a" = "--quick" ] || [ "$a" = "--full" ]; then MODE=$a
  elif [ -d "$a" ] && [ -d "$a/python" ]; then BUILD=$a
  else EXTRA+=("$a"); fi
done
OUT=${OUT:-/tmp/ukern-gpu-out}
mkdir -p "$OUT"
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-sweep-cache}   # shared by the shards (atomic renames)
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MPLCONFIGDIR=/tmp/ukern-sweep-mpl
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
status=0

report() {   # report JSON...: the merged sweep.json, sweep.md and the plots
  "$PY" bench/sweep_report.py "$@" --out-json "$OUT/sweep.json.merged" --md "$OUT/sweep.md" --plots "$OUT" 2>&1 |
    tee -a "$OUT/sweep.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] && mv "$OUT/sweep.json.merged" "$OUT/sweep.json"
}

if [ "$MODE" = "--full" ]; then
  if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then IFS=, read -ra GPUS <<<"$CUDA_VISIBLE_DEVICES"
  else mapfile -t GPUS < <(nvidia-smi -L 2>/dev/null | grep '^GPU' | sed 's/^GPU \([0-9]*\):.*/\1/'); fi
  [ "${#GPUS[@]}" -ge 1 ] || GPUS=(0)
  N=${SWEEP_SHARDS:-${#GPUS[@]}}
  LIMIT=${SWEEP_TIMEOUT:-500}
  BUDGET=$((LIMIT > 90 ? LIMIT - 45 : LIMIT))
  rm -f "$OUT"/sweep-shard*.json "$OUT/sweep.log"
  "$PY" bench/sweep.py --estimate --shard 0/"$N" "${EXTRA[@]}" 2>&1 | tee "$OUT/sweep.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || exit 2
  echo "$N shard(s) on GPUs ${GPUS[*]}, wall limit ${LIMIT} s, budget ${BUDGET} s each" | tee -a "$OUT/sweep.log"
  pids=()
  for ((i = 0; i < N; i++)); do
    # One log: each shard's lines, prefixed, appended whole (sed -u flushes per line).
    ( CUDA_VISIBLE_DEVICES=${GPUS[$((i % ${#GPUS[@]}))]} timeout -k 5 "$LIMIT" "$PY" bench/sweep.py \
        --out "$OUT/sweep-shard$i.json" --shard "$i/$N" --budget "$BUDGET" "${EXTRA[@]}" 2>&1 |
        sed -u "s/^/[shard $i] /" | tee -a "$OUT/sweep.log"
      exit "${PIPESTATUS[0]}" ) &
    pids+=($!)
  done
  for ((i = 0; i < N; i++)); do
    wait "${pids[$i]}"; rc=$?
    [ "$rc" -eq 0 ] || { status=1; echo "shard $i: sweep.py exited $rc (124: SWEEP_TIMEOUT); reporting what it wrote" | tee -a "$OUT/sweep.log"; }
  done
  shards=()
  for ((i = 0; i < N; i++)); do [ -s "$OUT/sweep-shard$i.json" ] && shards+=("$OUT/sweep-shard$i.json"); done
  rm -f "$OUT"/sweep-shard*.json.tmp
  if [ "${#shards[@]}" -gt 0 ] && report "${shards[@]}"; then
    rm -f "${shards[@]}"   # the merged sweep.json holds every point (and each shard's meta)
  else
    echo "no merged sweep.json (shard JSONs kept)" | tee -a "$OUT/sweep.log"; status=1
  fi
  exit $status
fi

QUICK=$([ "$MODE" = "--quick" ] && echo --quick)
LIMIT=${SWEEP_TIMEOUT:-$([ -n "$QUICK" ] && echo 300 || echo 3000)}
timeout -k 5 "$LIMIT" "$PY" bench/sweep.py --out "$OUT/sweep.json" $QUICK "${EXTRA[@]}" 2>&1 | tee "$OUT/sweep.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { status=1; echo "sweep.py exited $rc (124: SWEEP_TIMEOUT); reporting what it wrote" | tee -a "$OUT/sweep.log"; }
if [ -s "$OUT/sweep.json" ]; then
  report "$OUT/sweep.json" || status=1
else
  echo "no sweep.json written" | tee -a "$OUT/sweep.log"; status=1
fi
exit $status
