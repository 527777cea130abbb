#!/usr/bin/env bash
# A project that add_subdirectory()s ukern gets the library only: no tests,
# tool, benchmarks or examples, no build type forced on it, and it links.
# usage: test_subdir.sh <ukern source dir>
set -u
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { # check <name> <condition command...>
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; fi
}
if ! cmake -S "$src/tests/consumer_subdir" -B "$tmp/b" -DUKERN_SOURCE="$src" >"$tmp/configure.log" 2>&1; then
  cat "$tmp/configure.log" >&2
  echo "test_subdir: configure failed"
  exit 1
fi
targets=$(cmake --build "$tmp/b" --target help 2>&1)
check library-target grep -q '^\.\.\. ukern$' <<<"$targets"
for t in ukern_cli test_base test_fuzz_replay_params example_squared_diff bench_reduction; do
  check "no-$t" bash -c '! grep -q "^\.\.\. $1\$" <<<"$2"' _ "$t" "$targets"
done
check no-ctest-file test ! -e "$tmp/b/ukern/tests/CTestTestfile.cmake"
check build-type-unforced grep -q '^CMAKE_BUILD_TYPE:STRING=$' "$tmp/b/CMakeCache.txt"
check no-install-rules bash -c '! grep -qs ukernTargets "$1"' _ "$tmp/b/ukern/cmake_install.cmake"
if cmake --build "$tmp/b" --target use_subdir -j2 >"$tmp/build.log" 2>&1; then
  check runs bash -c '"$1" | grep -q linked' _ "$tmp/b/use_subdir"
else
  cat "$tmp/build.log" >&2
  check build false
fi
echo "test_subdir: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
