#!/usr/bin/env bash
# The copy-rate sweep (issue 25) on a GPU machine, from a build made elsewhere and
# carried (default build-gpu/; the Python extension is abi3). Writes into $OUT
# (default /tmp/ukern-gpu-out), at most 8 files: sweep.json (rewritten after every
# point, so a timeout still leaves the points done), sweep.md (the "Sweep" section
# for docs/PERF.md), sweep_<kind>.png (4 plots; skipped without matplotlib, see
# below) and sweep.log (progress).
# --quick: 4 sizes, capped torch.compile compiles, a 270 s budget (fits ~5 minutes
# with compiles). Without it: the full profile (all sizes and widths, no budget).
# The sweep's own wall limit (SWEEP_TIMEOUT seconds, default 300 quick / 3000 full)
# kills it and still writes the report from the partial JSON.
# Without matplotlib on the GPU host, make the plots from the JSON on any machine:
#   pip install --target /tmp/mpl matplotlib && PYTHONPATH=/tmp/mpl python3 bench/sweep_report.py ...
# Regenerate the report later: python3 bench/sweep_report.py sweep.json --perf docs/PERF.md --plots DIR
# Usage: scripts/gpu-sweep.sh [--quick] [build-dir] [extra sweep.py arguments...]
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
QUICK= BUILD=build-gpu EXTRA=()
for a in "$@"; do   # any order: --quick, a build directory, sweep.py's own arguments
  if [ "$a" = "--quick" ]; then QUICK=--quick
  elif [ -d "$a" ] && [ -d "$a/python" ]; then BUILD=$a
  else EXTRA+=("$a"); fi
done
OUT=${OUT:-/tmp/ukern-gpu-out}
mkdir -p "$OUT"
case "$BUILD" in /*) ;; *) BUILD="$PWD/$BUILD" ;; esac
export PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export UKERN_CACHE_DIR=${UKERN_CACHE_DIR:-/tmp/ukern-sweep-cache}
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 MPLCONFIGDIR=/tmp/ukern-sweep-mpl
LIMIT=${SWEEP_TIMEOUT:-$([ -n "$QUICK" ] && echo 300 || echo 3000)}
status=0
timeout -k 5 "$LIMIT" "$PY" bench/sweep.py --out "$OUT/sweep.json" $QUICK "${EXTRA[@]}" 2>&1 | tee "$OUT/sweep.log"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || { status=1; echo "sweep.py exited $rc (124: SWEEP_TIMEOUT); reporting what it wrote" | tee -a "$OUT/sweep.log"; }
if [ -s "$OUT/sweep.json" ]; then
  "$PY" bench/sweep_report.py "$OUT/sweep.json" --md "$OUT/sweep.md" --plots "$OUT" 2>&1 | tee -a "$OUT/sweep.log"
else
  echo "no sweep.json written" | tee -a "$OUT/sweep.log"; status=1
fi
exit $status
