#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# la57-boot.sh [N], on the host: the boot KASAN report of the 7.2 debug
# image with 5-level paging, without upstream/linux-7.2/0006 and with it.
# Boots the test bed's debug image (built with 0006; as `mainline`: no
# leak scans) N times and counts the boots whose log has a KASAN report;
# then builds the same tree without 0006 in a copy of the cached build
# tree, and boots that image N times the same way.  The copy rebuilds in
# full (its objects' command lines name the copy's own path): 1195 s on 2
# busy cores.  The patched count should be 0 and the unpatched one above
# 0 (doc/DESIGN.md, "KASAN at boot under TCG"; 3 of 80 boots, 2026-11-28).
#
# The patch is taken out of the cached source only for the build and put
# back with the file's own time, so the cached kernel is not rebuilt;
# don't run this beside a build of the debug kernel.
set -euo pipefail
N=${1:-20}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${RDT_CACHE:-$HOME/.cache/rdmatrace}
patch=$repo/upstream/linux-7.2/0006-x86-cpu-Keep-X86_FEATURE_LA57-while-the-boot-CPU-is-.patch
build=$("$repo/tests/vm/kernels" kdir mainline)
src=$(readlink -f "$build/source")
work=$cache/la57-proof
[ -r "$patch" ] || { echo "no $patch" >&2; exit 1; }

# boots IMAGE-ARGS...: N boots, the count of those with a KASAN report.
boots() {
	local i n=0 rc log
	log=$(mktemp)
	for i in $(seq "$N"); do
		rc=0
		"$repo/tests/vm/run" --kernel mainline --allow-splat --timeout 400 "$@" \
			-- true >"$log" 2>&1 || rc=$?
		# A guest that never ran the command is no boot to count.
		[ $rc = 0 ] || { echo "  boot $i: tests/vm/run exited $rc" >&2; tail -5 "$log" >&2; exit 1; }
		if grep -q 'BUG: KASAN' "$log"; then
			n=$((n + 1))
			echo "  boot $i: $(grep -m1 'BUG: KASAN' "$log")" >&2
			grep -m3 -E 'identify_cpu|handle_edge_irq|do_raw_spin_lock' "$log" | sed 's/^/    /' >&2 || true
		fi
	done
	rm -f "$log"
	echo "$n"
}

echo "la57-boot: $N boots of the patched debug image (LA57 on)" >&2
after=$(boots)
echo "la57-boot: patched: $after of $N boots reported KASAN" >&2

# The unpatched image: the patch comes out of the cached source only
# while a copy of the build tree builds bzImage, and is put back with the
# file's own time, so the cached kernel is not rebuilt by it.
files=$(sed -n 's|^+++ b/||p' "$patch")
rm -rf "$work"
mkdir -p "$work/orig"
echo "la57-boot: copying $build" >&2
cp -a "$build" "$work/build"
for f in $files; do
	mkdir -p "$work/orig/$(dirname "$f")"
	cp -p "$src/$f" "$work/orig/$f"
done
restore() {
	for f in $files; do cp -p "$work/orig/$f" "$src/$f"; done
}
trap restore EXIT
patch -s -p1 -R -d "$src" <"$patch"
start=$(date +%s)
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$src" O="$work/build" ARCH=x86_64 -j"$(nproc)" bzImage
restore
trap - EXIT
echo "la57-boot: unpatched image built in $(( $(date +%s) - start )) s" >&2

echo "la57-boot: $N boots of the unpatched debug image (LA57 on)" >&2
before=$(boots --image "$work/build/arch/x86/boot/bzImage")
echo "la57-boot: unpatched: $before of $N boots reported KASAN" >&2
echo "unpatched=$before patched=$after boots=$N"
