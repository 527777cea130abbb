#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds + runs a consumer
# project against it (CMake package config and pkg-config file).
# usage: test_install.sh <build dir> <consumer source dir>
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/ukern/ukern.h lib/cmake/ukern/ukernConfig.cmake lib/pkgconfig/ukern.pc; do
  [ -f "$tmp/prefix/$f" ] || { echo "missing $f after install"; exit 1; }
done
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" cmake -S "$src" -B "$tmp/consumer" \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
for exe in use_shared use_static use_pkgconfig; do
  LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/consumer/$exe" | grep -q "linked" || { echo "$exe failed"; exit 1; }
done
# the installed library must not need libcuda (it is dlopen'ed at run time)
if ldd "$tmp/prefix/lib/libukern.so" | grep -q libcuda; then echo "libukern.so links libcuda"; exit 1; fi
echo "test_install: 4 passed, 0 failed"
