#!/bin/sh
# ukern bundle create|list|verify and the bundles line of `ukern info`
# (issue 26 item 1), no GPU: two specs for sm_80 and sm_90 become one
# bundle; --from-cache packs a cache directory; a damaged copy is refused
# (exit 1, the file and the reason); bad usage exits 2.
# usage: test_cli_bundle.sh UKERN SPECDIR
set -u
UKERN=$1
SPECS=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
check() { # NAME STATUS
  n=$((n + 1))
  if [ "$2" -ne 0 ]; then echo "FAIL $1"; echo "$out"; fail=1; else echo "ok $1"; fi
}
out=$("$UKERN" bundle create "$tmp/k.ukb" --arch 80,90 --spec "$SPECS/squared_diff.uk" "$SPECS/l2norm.uk" 2>&1)
check create $?
echo "$out" | grep -q "^4 kernels$"; check create-count $?
echo "$out" | grep -q "^sm_80 sm_90 .* l2norm"; check create-lists $?
[ ! -w "$tmp/k.ukb" ] || [ "$(id -u)" = 0 ]; check read-only $?
out=$("$UKERN" bundle list "$tmp/k.ukb" 2>&1)
check list $?
[ "$(echo "$out" | grep -c '^sm_80 sm_90 .* squared_diff (float[0-9]*, float[0-9]* -> float[0-9]*)$')" = 3 ]; check list-kernels $?
out=$("$UKERN" bundle verify "$tmp/k.ukb" 2>&1)
check verify $?
echo "$out" | grep -q "good: .*4 kernels for sm_80 sm_90, .* bytes, ukern .*, all checksums good"; check verify-line $?
# a byte of the last kernel's code flipped
cp "$tmp/k.ukb" "$tmp/bad.ukb"
chmod u+w "$tmp/bad.ukb"
size=$(wc -c < "$tmp/k.ukb")
printf 'Z' | dd of="$tmp/bad.ukb" bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
out=$("$UKERN" bundle verify "$tmp/bad.ukb" 2>&1)
[ $? -eq 1 ] && echo "$out" | grep -q "bundle $tmp/bad.ukb: entry .*: a kernel's code fails its checksum: damaged"; check damaged $?
# from a cache directory: precompile fills it, sm_90 only is packed
out=$("$UKERN" precompile --dir "$tmp/cache" --arch 80,90 "$SPECS/squared_diff.uk" 2>&1)
check precompile $?
out=$("$UKERN" bundle create "$tmp/c.ukb" --from-cache "$tmp/cache" --arch 90 2>&1)
[ $? -eq 0 ] && echo "$out" | grep -q "^3 kernels; 3 entries for other archs left out$"; check from-cache $?
out=$(UKERN_BUNDLE="$tmp/k.ukb" "$UKERN" info 2>&1)
echo "$out" | grep -q "^bundles  $tmp/k.ukb: 4 kernels for sm_80 sm_90, 0 hits"; check info $?
out=$(UKERN_BUNDLE="$tmp/bad.ukb" "$UKERN" info 2>&1)
echo "$out" | grep -q "^bundles  refused: \$UKERN_BUNDLE: bundle $tmp/bad.ukb"; check info-refused $?
out=$(UKERN_BUNDLE="$tmp/k.ukb" "$UKERN" info --json 2>&1)
printf '%s\n' "$out" | grep -qF "\"bundles\": {\"text\": \"$tmp/k.ukb: 4 kernels for sm_80 sm_90, 0 hits\\n\", \"error\": null}}"; check info-json $?
out=$("$UKERN" bundle create "$tmp/x.ukb" 2>&1)
[ $? -eq 2 ]; check usage $?
out=$("$UKERN" bundle frobnicate 2>&1)
[ $? -eq 2 ] && echo "$out" | grep -q "unknown subcommand"; check usage-sub $?
if [ $fail -ne 0 ]; then echo "test_cli_bundle: failed"; exit 1; fi
echo "test_cli_bundle: $n checks passed"
