#!/bin/sh
# bench/tools/call_walk.sh SRC_TREE WORK_DIR: builds SRC_TREE at -O0 (a
# static libukern and the stand-in driver) in WORK_DIR/build, the probe
# call_walk.c against it, warms its kernels into WORK_DIR/cache, then counts
# one call of each path under callgrind and prints call_walk.py's line per
# path (functions entered, files, returns). Compare two trees by running it
# on each (e.g. a `git archive` of the base). Needs valgrind; no GPU.
set -e
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$1" && pwd); work=$2
mkdir -p "$work/cache"
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Debug -DUKERN_BUILD_BENCH=ON -DUKERN_BUILD_TESTS=OFF \
  -DUKERN_BUILD_PYTHON=OFF > "$work/configure.log"
cmake --build "$work/build" -j2 --target ukern_static uk_fake_cuda > "$work/build.log"
cc -g -O0 -I"$src/include" "$here/call_walk.c" "$work/build/libukern.a" -lffi -ldl -lpthread -lm -o "$work/call_walk"
export LD_LIBRARY_PATH="$work/build/bench/fake_cuda"
"$work/call_walk" "$work/cache" 2>/dev/null
for p in probe_ew probe_row probe_split; do
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=$p --callgrind-out-file="$work/$p.out" \
    --dump-instr=no --compress-strings=no --compress-pos=no "$work/call_walk" "$work/cache" > /dev/null 2>&1
  printf '%s: ' "$p"
  python3 "$here/call_walk.py" "$work/$p.out" "$src"
done
