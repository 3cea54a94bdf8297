#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Register rdmatrace.ko's source with DKMS (make install) or remove it
# (make uninstall).  With DESTDIR set (packaging), only the source tree is
# staged under $DESTDIR/usr/src: registration belongs to the package's
# postinst.
#   scripts/dkms.sh install|uninstall
set -eu
cd "$(dirname "$0")/.."
name=rdmatrace
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
[ -n "$ver" ] || { echo "dkms.sh: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
src="${DESTDIR:-}/usr/src/$name-$ver"

case ${1:-} in
install)
	rm -rf "$src"
	mkdir -p "$src/kmod" "$src/include/rdmatrace" "$src/tests/kmod" "$src/tests/kunit"
	cp dkms.conf "$src/"
	cp kmod/Makefile kmod/Kbuild kmod/Kbuild.probes kmod/*.c kmod/*.h "$src/kmod/"
	# The wire header, where kmod/Kbuild looks for it (../include).
	cp include/rdmatrace/wire.h "$src/include/rdmatrace/"
	# The test modules build beside it (dkms.conf installs only rdmatrace).
	cp tests/kmod/Kbuild tests/kmod/workload.c tests/kmod/rdt_loopback.[ch] \
		"$src/tests/kmod/"
	cp tests/kunit/Kbuild tests/kunit/*.c "$src/tests/kunit/"
	echo "dkms.sh: source in $src"
	[ -z "${DESTDIR:-}" ] || exit 0
	if ! command -v dkms >/dev/null; then
		echo "dkms.sh: dkms not installed; build with 'make KDIR=...'" >&2
		exit 0
	fi
	dkms status -m "$name" -v "$ver" | grep -q . || dkms add -m "$name" -v "$ver"
	if [ -d "/lib/modules/$(uname -r)/build" ]; then
		dkms install -m "$name" -v "$ver"
	else
		echo "dkms.sh: no headers for the running kernel $(uname -r);" \
			"'dkms install $name/$ver -k KERNEL' builds for another"
	fi ;;
uninstall)
	if command -v dkms >/dev/null && [ -z "${DESTDIR:-}" ] &&
		dkms status -m "$name" -v "$ver" | grep -q .; then
		dkms remove -m "$name" -v "$ver" --all
	fi
	rm -rf "$src" ;;
*)
	echo "usage: scripts/dkms.sh install|uninstall" >&2
	exit 2 ;;
esac
