#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make deb: rdmatrace's Debian packages (debian/) from a copy of the
# working tree, so the build never touches the checkout's own build/.
#   scripts/deb.sh [OUTDIR]     (default build/deb)
# Leaves OUTDIR/*.deb and OUTDIR/lintian.txt; fails on a lintian error.
set -eu
cd "$(dirname "$0")/.."
out=${1:-build/deb}
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
deb=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "$ver" = "$deb" ] || {
	echo "deb: dkms.conf says $ver, debian/changelog $deb: update the changelog" >&2
	exit 1
}
for t in dpkg-buildpackage dh dh_dkms lintian; do
	command -v $t >/dev/null || { echo "deb: $t missing (make deps)" >&2; exit 1; }
done

src=$out/rdmatrace-$ver
rm -rf "$out"
mkdir -p "$src"
# Tracked and new files as they are now; build/ and other ignored paths
# stay behind.
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"
# A make above us (make deb) must not leak its flags into the package build.
(cd "$src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dpkg-buildpackage -b -us -uc) \
	>"$out/build.log" 2>&1 || {
	tail -30 "$out/build.log"
	echo "deb: dpkg-buildpackage failed (whole log: $out/build.log)" >&2
	exit 1
}
rm -rf "$src"
lintian --fail-on error "$out"/*.changes >"$out/lintian.txt" 2>&1 || {
	cat "$out/lintian.txt"
	echo "deb: lintian reports errors" >&2
	exit 1
}
for f in "$out"/*.deb; do
	echo "deb: $f"
done
[ ! -s "$out/lintian.txt" ] || { echo "deb: lintian (no errors):"; cat "$out/lintian.txt"; }
