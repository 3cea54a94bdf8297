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
modprobe rdmatrace n_subbufs=64
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
rmmod rdmatrace
