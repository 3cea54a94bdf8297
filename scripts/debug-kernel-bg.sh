#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make check builds the debug kernel beside the tests that do not need it:
# each guest of a Debian kernel keeps about one of the two cores busy, the
# build (at the lowest priority) takes what is left, and the ~12 minutes it
# takes alone stop adding to CI's time.
#
#   debug-kernel-bg.sh start   start `make debug-kernel` in the background
#   debug-kernel-bg.sh ready   wait for it, then build the module for it
#                              (tests/check --debug-ready runs this, its
#                              debug stream beside the other tests)
#
# The phase times go to build/tests/phases: the build's own time, how long
# the tests then waited for it, and the module build.
set -uo pipefail
cd "$(dirname "$0")/.."
make=${MAKE:-make}
st=build/tests/debug-kernel
phases=build/tests/phases
me=scripts/debug-kernel-bg.sh

case ${1:-} in
start)
	mkdir -p build/tests
	rm -f "$st.done" "$st.pid"
	# setsid: a new session, so `stop` can end make and every compiler
	# under it at once.
	setsid bash -c '
		start=$(date +%s)
		nice -n 19 "$1" --no-print-directory debug-kernel >"$2.log" 2>&1
		rc=$?
		echo "$rc $(( $(date +%s) - start ))" >"$2.done.tmp"
		mv "$2.done.tmp" "$2.done"' _ "$make" "$st" </dev/null &
	echo $! >"$st.pid"
	echo "debug kernel: building beside the tests (log: $st.log)"
	;;
ready)
	[ -e "$st.pid" ] || { echo "$me: no build was started ($st.pid missing)"; exit 1; }
	pid=$(cat "$st.pid")
	t0=$(date +%s)
	while [ ! -e "$st.done" ]; do
		if ! kill -0 "$pid" 2>/dev/null && [ ! -e "$st.done" ]; then
			echo "$me: the build (pid $pid) ended without a status; its log:"
			tail -n 40 "$st.log"
			exit 1
		fi
		sleep 2
	done
	echo "debug-kernel-wait $(( $(date +%s) - t0 ))" >>"$phases"
	read -r rc secs <"$st.done"
	echo "debug-kernel $secs" >>"$phases"
	if [ "$rc" != 0 ]; then
		echo "$me: make debug-kernel failed (exit $rc) after ${secs}s; its log:"
		tail -n 40 "$st.log"
		exit 1
	fi
	grep '^kernels:' "$st.log" | tail -n 2
	t0=$(date +%s)
	# This kernel only: the Debian kernels' modules are in use by guests
	# (a rebuild rewrites them in place).
	$make --no-print-directory kmod KDIR="$(tests/vm/kernels kdir debug)" ||
		{ echo "$me: make kmod for the debug kernel failed"; exit 1; }
	echo "debug-kmod $(( $(date +%s) - t0 ))" >>"$phases"
	echo "debug kernel ready: built in ${secs}s beside the tests, module built"
	;;
stop)
	# make check ending early (a failed phase, a signal) ends the build.
	[ -e "$st.pid" ] || exit 0
	pid=$(cat "$st.pid")
	[ -e "$st.done" ] || kill -TERM -- "-$pid" 2>/dev/null
	exit 0
	;;
*)
	echo "usage: $me start|ready|stop" >&2
	exit 2
	;;
esac
