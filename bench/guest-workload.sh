#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of figure 5 (workload slowdown): ib_write_bw, ib_send_lat and
# the ring allreduce over rxe0, untraced and traced (rdmatrace loaded and
# enabled with every event, rdmatrace-dump -f -o consuming relay + BPF),
# interleaved REPS times.
#   guest-workload.sh REPS BW_ITERS LAT_ITERS RING_BYTES
set -eu
REPS=$1 BWN=$2 LATN=$3 RB=$4
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
DUMP=$RDT_BUILD/bin/rdmatrace-dump
RRA=$RDT_BUILD/bin/rdma-ring-allreduce
D=/sys/kernel/debug/rdmatrace
grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug
rdt-rdma-up rxe >/dev/null
. /run/rdt-rdma.env
ulimit -l unlimited 2>/dev/null || true
W=$(mktemp -d)
G=${RXE_GID:+-x $RXE_GID}

pt() {	# TOOL ARGS: server + client on rxe0, client output to stdout
	"$1" -d "$RXE_DEV" $G $2 >"$W/srv" 2>&1 &
	sp=$!
	sleep 1
	"$1" -d "$RXE_DEV" $G $2 "$RXE_IP" 2>&1 || true
	wait $sp || true
}

measure() {	# MODE
	bw=$(pt ib_write_bw "-s 65536 -n $BWN" | awk '$1 == 65536 && NF >= 4 { print $4 }' | tail -1)
	lat=$(pt ib_send_lat "-s 64 -n $LATN" | awk '$1 == 64 && NF >= 5 { print $5 }' | tail -1)
	ring=$("$RRA" -d "$RXE_DEV" ${RXE_GID:+-g "$RXE_GID"} -N 2 -b "$RB" -e "$RB" -n 5 -w 1 -t 60 2>&1 |
		awk -v b="$RB" '$1 == b { print $5 }' | tail -1)
	echo "R workload.$1.write_bw_MBps ${bw:-nan}"
	echo "R workload.$1.send_lat_us ${lat:-nan}"
	echo "R workload.$1.ring_time_us ${ring:-nan}"
}

for r in $(seq "$REPS"); do
	rmmod rdmatrace 2>/dev/null || true
	measure untraced
	modprobe rdmatrace
	"$DUMP" -f -o "$W/t.rdt" 2>"$W/err" &
	dp=$!
	i=0
	until [ "$(cat $D/enable)" = 1 ]; do
		i=$((i + 1)); [ $i -lt 300 ] || { cat "$W/err" >&2; exit 1; }
		sleep 0.05
	done
	measure traced
	kill -INT $dp
	wait $dp || true
	lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
	echo "R workload.traced.lost ${lost:-nan}"
	rm -f "$W/t.rdt"
done
rm -rf "$W"
