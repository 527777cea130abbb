#!/usr/bin/env bash
# Installs the build into a temporary prefix, moves the prefix (the package
# must be relocatable), checks that no installed package file names the CUDA
# toolkit's absolute location, then builds + runs a consumer project against
# it (CMake package config and pkg-config file, shared and static). Also: the
# Python package lands where Python finds it under a prefix, and the README's
# install build compiles only the library and the tool (its objects counted).
# usage: test_install.sh <build dir> <consumer source dir> <toolkit dir>...
set -eu
build=$1
src=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/staging" >/dev/null
mv "$tmp/staging" "$tmp/prefix"
for f in include/ukern/ukern.h include/ukern/runtime.h lib/cmake/ukern/ukernConfig.cmake lib/pkgconfig/ukern.pc; do
  [ -f "$tmp/prefix/$f" ] || { echo "missing $f after install"; exit 1; }
done
checks=3
# the package files (CMake config/targets, pkg-config) name no toolkit path and
# not the staging prefix: the consumer's own find_dependency(CUDAToolkit) finds it
for dir in "$@" "$tmp/staging"; do
  for d in "$dir" "$(realpath -m "$dir")"; do
    [ -n "$d" ] && [ "$d" != / ] || continue
    if grep -rlF -- "$d" "$tmp/prefix/lib/cmake" "$tmp/prefix/lib/pkgconfig"; then
      echo "installed package files name the absolute path $d"
      exit 1
    fi
    checks=$((checks + 1))
  done
done
grep -q 'find_dependency(CUDAToolkit)' "$tmp/prefix/lib/cmake/ukern/ukernConfig.cmake" ||
  { echo "ukernConfig.cmake does not find_dependency(CUDAToolkit)"; exit 1; }
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" cmake -S "$src" -B "$tmp/consumer" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
for exe in use_shared use_static use_pkgconfig; do
  LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/$exe" | grep -q "linked" || { echo "$exe failed"; exit 1; }
done
# the pkg-config file alone also builds a consumer (no CMake involved)
cc "$src/main.c" -o "$tmp/by_pc" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs ukern)
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/by_pc" | grep -q "linked" || { echo "pkg-config consumer failed"; exit 1; }
# pkg-config --static links libukern.a with no CUDA -L (the README says so)
static_libs=$(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --static --libs ukern | sed 's/-lukern/-l:libukern.a/')
cc "$src/main.c" -o "$tmp/by_pc_static" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags ukern) $static_libs
if ldd "$tmp/by_pc_static" | grep -q libukern; then echo "the static consumer links libukern.so"; exit 1; fi
"$tmp/by_pc_static" | grep -q "linked" || { echo "pkg-config --static consumer failed"; exit 1; }
checks=$((checks + 2))
# the installed library must not need libcuda (it is dlopen'ed at run time)
if ldd "$tmp/prefix/lib/libukern.so" | grep -q libcuda; then echo "libukern.so links libcuda"; exit 1; fi
# the Python package (when the build has it): <prefix>/lib/python3.X/site-packages,
# where the Python it was built for looks under a prefix; nothing at <prefix>/ukern
if [ -f "$build/python/ukern/_ukern.abi3.so" ]; then
  py=$(sed -n "s/^_\{0,1\}Python3_EXECUTABLE:[A-Z]*=//p" "$build/CMakeCache.txt" | head -n 1)
  py=${py:-python3}
  site=$(PYTHONNOUSERSITE=1 "$py" -c 'import sys; print("lib/python%d.%d/site-packages" % sys.version_info[:2])')
  [ ! -e "$tmp/prefix/ukern" ] || { echo "the Python package is at <prefix>/ukern"; exit 1; }
  for f in __init__.py _ukern.abi3.so; do
    [ -f "$tmp/prefix/$site/ukern/$f" ] || { echo "missing $site/ukern/$f after install"; exit 1; }
  done
  where=$(cd / && PYTHONPATH="$tmp/prefix/$site" "$py" -c 'import ukern; print(ukern.__file__)')
  [ "$where" = "$tmp/prefix/$site/ukern/__init__.py" ] || { echo "import ukern found $where"; exit 1; }
  # with --prefix = the user base (~/.local), Python finds it with no PYTHONPATH
  where=$(cd / && PYTHONUSERBASE="$tmp/prefix" "$py" -c 'import ukern; print(ukern.__file__)')
  [ "$where" = "$tmp/prefix/$site/ukern/__init__.py" ] || { echo "user-site import found $where"; exit 1; }
  checks=$((checks + 3))
fi
# The README's install build (its configure command, run here into a directory
# of its own): it compiles the library and the tool only, no test, benchmark,
# example or Python object. Counted from the generated build rules.
readme=$(dirname "$0")/../README.md
configure=$(python3 - "$readme" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
block = re.search(r"## Installing\n\n```sh\n(.*?)```", text, re.S).group(1)
cmd = re.search(r"^(cmake -S \. -B \S+.*?)(?<!\\)$", block.replace("\\\n", " "), re.M).group(1)
print(cmd)
PY
)
case $configure in "cmake -S . -B "*) ;; *) echo "no configure command in the README's Installing section"; exit 1 ;; esac
args=${configure#cmake -S . -B }
args=${args#* }
# shellcheck disable=SC2086
cmake -S "$(dirname "$0")/.." -B "$tmp/install-build" $args >/dev/null
objects=$(find "$tmp/install-build" -name build.make -exec grep -hE '^[^ #]+\.c\.o: [^ ]+\.c$' {} + | sed 's/: .*//')
n=$(grep -c . <<<"$objects")
root=$(cd "$(dirname "$0")/.." && pwd)
want=$(($(ls "$root"/src/*/*.c | wc -l) + 1 + $(ls "$root"/tools/*.c | wc -l))) # + generated/embedded.c
if [ "$n" -ne "$want" ] || grep -Eq 'tests/|bench/|examples/|python/' <<<"$objects"; then
  echo "the README's install build compiles $n objects (wanted $want: the library and the tool):"
  echo "$objects"
  exit 1
fi
echo "the README's install build compiles $n objects (the library and the tool)"
checks=$((checks + 1))
echo "test_install: $((checks + 7)) passed, 0 failed"
