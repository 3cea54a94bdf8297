#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check`: deps, the debug kernel, the build, then tests/check; each
# phase is timed, so that a slow one shows in CI's log.  tests/check times
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
phase debug-kernel $make --no-print-directory debug-kernel || exit
phase build $make --no-print-directory all || exit
tests/check --phases "$phases" "$@"
