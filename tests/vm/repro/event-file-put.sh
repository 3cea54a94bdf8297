#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The 7.2 WARN in event_file_put() at the rmmod of a module one of whose
# trace events lost a field to a failed allocation at load
# (upstream/linux-7.2/0005).  tests/stress/faults.test met it at full
# count (load try N=167): "Could not initialize trace point events/..."
# at modprobe, the module loads and works, and its rmmod WARNs twice in
# event_file_put() (trace_events.c:1302, then :1294).
#
# Each try loads rdmatrace.ko with the Nth allocation failed (rdt-fail,
# fail-nth) over the range where the module's events are registered; each
# load that says it could not initialize a trace point is unloaded, and
# dmesg read for event_file_put, until HITS such loads.  Prints VERDICT:
# warn (the bug, at one of them at least), clean (every such load and
# rmmod said nothing), or none (no try hit a field).
#   tests/vm/run --kernel mainline -- tests/vm/repro/event-file-put.sh [FIRST LAST HITS]
FIRST=${1:-100} LAST=${2:-300} HITS=${3:-3}
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../../.." && pwd)}
FAILER=${RDT_BUILD:-$RDT_ROOT/build}/tests/kmod/rdt-fail
[ -x "$FAILER" ] || { echo "$FAILER not built (make -C kmod tools)"; exit 2; }
[ -w /proc/self/fail-nth ] || { echo "no fail-nth (CONFIG_FAULT_INJECTION)"; exit 2; }
FI=/sys/kernel/debug
for a in failslab fail_page_alloc; do
	[ -d $FI/$a ] || continue
	echo N >$FI/$a/ignore-gfp-wait
	echo 0 >$FI/$a/verbose
	echo 0 >$FI/$a/probability
done
KO=$(modinfo -n rdmatrace) || exit 2
rdt-rdma-up rxe >/dev/null
verdict=none hits=0
n=$FIRST
while [ "$n" -le "$LAST" ] && [ "$hits" -lt "$HITS" ]; do
	[ -d /sys/module/rdmatrace ] && rmmod rdmatrace
	dmesg -c >/dev/null
	line=$("$FAILER" "$n" load "$KO" enable=1)
	n=$((n + 1))
	dmesg | grep -q 'Could not initialize trace point events/' || continue
	echo "N=$((n - 1)): $line"
	dmesg | grep -E 'error code is|Could not initialize trace point'
	[ -d /sys/module/rdmatrace ] || { echo "  the load was refused"; continue; }
	hits=$((hits + 1))
	dmesg -c >/dev/null
	rmmod rdmatrace || echo "  rmmod failed"
	if dmesg | grep -q 'event_file_put'; then
		dmesg | grep -E 'WARNING:|event_file_put' | head -6
		verdict=warn
	elif [ "$verdict" = none ]; then
		verdict=clean
	fi
done
[ -d /sys/module/rdmatrace ] && rmmod rdmatrace
echo "VERDICT: $verdict ($hits loads with a trace point not initialized, tries $FIRST..$((n - 1)))"
