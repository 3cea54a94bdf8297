#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of bench/verb-profile: load rdmatrace (MODE: disabled or
# enabled), publish the kernel's symbols to the host's gdb, wait for it to
# set its breakpoints, then run rdt_bench mode=verbs under them.
#   guest-profile.sh DIR MODE ITERS
set -eu
DIR=$1 MODE=$2 ITERS=$3
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
KO=$RDT_BUILD/bench/kmod/$(uname -r)/rdt_bench.ko
[ -f "$KO" ] || { echo "guest-profile: $KO not built" >&2; exit 1; }
grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug
rdt-rdma-up rxe >/dev/null
. /run/rdt-rdma.env
# The TSC clock, as on a host whose TSC the kernel trusts (kmod/clock.h);
# TCG guests lack constant_tsc, so auto would pick ktime here.
modprobe rdmatrace n_subbufs=64 clock=${RDT_BENCH_CLOCK:-tsc}
[ "$MODE" = disabled ] || echo 1 >/sys/kernel/debug/rdmatrace/enable
cat /proc/kallsyms >"$DIR/kallsyms.tmp"
mv "$DIR/kallsyms.tmp" "$DIR/kallsyms"
i=0
while [ ! -e "$DIR/go" ]; do
	i=$((i + 1))
	[ $i -lt 3000 ] || { echo "guest-profile: no go from the host" >&2; exit 1; }
	sleep 0.1
done
insmod "$KO" dev="$RXE_DEV" mode=verbs iters="$ITERS" warmup=20
rmmod rdt_bench
# Enabled: what the wrappers wrote, per record type (the record path is
# inline in them, so the profile's functions cannot show it ran).  Each
# CPU's relay file is read and checked on its own (rdt-check, one stream
# a file).
CHECK=$RDT_BUILD/tests/kmod/rdt-check
if [ "$MODE" = enabled ] && [ -x "$CHECK" ]; then
	for f in /sys/kernel/debug/rdmatrace/trace[0-9]*; do
		cat "$f" >"$DIR/stream"
		"$CHECK" "$DIR/stream" || true
	done | awk '{ n[$1]++ } END { for (t in n) print t, n[t] }' >"$DIR/records"
	rm -f "$DIR/stream"
fi
rmmod rdmatrace
