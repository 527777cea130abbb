#!/usr/bin/env bash
# Installs the build into a temporary prefix, moves the prefix (the package
# must be relocatable), checks that no installed package file names the CUDA
# toolkit's absolute location, then builds + runs a consumer project against
# it (CMake package config and pkg-config file).
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
# the installed library must not need libcuda (it is dlopen'ed at run time)
if ldd "$tmp/prefix/lib/libukern.so" | grep -q libcuda; then echo "libukern.so links libcuda"; exit 1; fi
echo "test_install: $((checks + 7)) passed, 0 failed"
