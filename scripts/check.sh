#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: deps, the build, then tests/check, with the debug kernel
# built beside the tests that do not need it (scripts/debug-kernel-bg.sh);
# each phase is timed, so that a slow one shows in CI's log.  tests/check times
# its own phases (host tests, each kernel's guests) and prints the table of
# all of them before its last line.
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
phases=build/tests/phases
mkdir -p build/tests
: >"$phases"

phase() {
	local name=$1 start rc secs
	shift
	start=$(date +%s)
	"$@"
	rc=$?
	secs=$(( $(date +%s) - start ))
	echo "$name $secs" >>"$phases"
	echo "phase: $name ${secs}s$([ $rc = 0 ] || echo " (failed, exit $rc)")"
	return $rc
}

phase deps scripts/deps.sh || exit
# What the guests of Debian's kernels need from the kernel cache, made
# before the debug build takes the cache's lock for its ~28 minutes: the
# kernel sources (siw, checkpatch), siw for each Debian kernel, and the
# compile-only 7.2 tree that kmod/build-mainline and install/deb build
# the module against (they would wait on the lock otherwise).  Debian's
# sid out of reach is theirs to report, not a reason to stop here.
prep_kernels() {
	local k
	tests/vm/kernels source 6.1 >/dev/null || return
	tests/vm/kernels prepare-tree 7.2 >/dev/null ||
		echo "kernel-prep: no 7.2 tree (kmod/build-mainline and install/deb say why)"
	for k in $(tests/vm/kernels names); do
		case $k in
		debian-*) tests/vm/kernels build-siw "$k" >/dev/null || return ;;
		esac
	done
}
phase kernel-prep prep_kernels || exit
scripts/debug-kernel-bg.sh start
trap 'scripts/debug-kernel-bg.sh stop' EXIT
phase build $make --no-print-directory all || exit
tests/check --phases "$phases" --debug-ready "scripts/debug-kernel-bg.sh ready" "$@"
