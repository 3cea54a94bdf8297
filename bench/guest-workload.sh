#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of figure 5 (workload slowdown): ib_write_bw, ib_send_lat and
# the ring allreduce over rxe0, untraced and traced (rdmatrace loaded and
# enabled with every event, rdmatrace-dump -f -o consuming relay + BPF),
# interleaved REPS times; then the ring under each source and reader alone,
# and the design's floor (floor_split).
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

# TOOL ARGS SIZE COLUMN: a perftest server and client on rxe0; prints the
# client's COLUMN on its SIZE line.  The client starts once the server
# listens on perftest's port (a fixed sleep lost the race under tracing:
# ib_send_lat traced gave no figure at 6107c54); a run with no figure is
# said, with the client's and server's last lines, and tried once more.
pt() {
	for try in 1 2; do
		"$1" -d "$RXE_DEV" $G $2 >"$W/srv" 2>&1 &
		sp=$!
		rdt-wait-listen --tcp 18515 60 >&2 || true
		"$1" -d "$RXE_DEV" $G $2 "$RXE_IP" >"$W/cli" 2>&1 || true
		wait $sp || true
		v=$(awk -v s="$3" -v c="$4" '$1 == s && NF >= c { print $c }' "$W/cli" | tail -1)
		if [ -n "$v" ]; then
			echo "$v"
			return 0
		fi
		echo "guest-workload: $1 gave no figure (try $try): client: $(tail -n 3 "$W/cli" | tr '\n' ' ') server: $(tail -n 3 "$W/srv" | tr '\n' ' ')" >&2
	done
}

# The time per iteration, over 20 (the tool's default): with 5 (to
# 98c5ec5) a run lasted ~150 ms, and one host stall in it moved the
# figure by a fifth (untraced runs 31.4-37.1 ms an iteration, traced
# 27.9-49.1 ms, against a 15 % target).
ring() {
	"$RRA" -d "$RXE_DEV" ${RXE_GID:+-g "$RXE_GID"} -N 2 -b "$RB" -e "$RB" -n 20 -w 1 -t 60 2>&1 |
		awk -v b="$RB" '$1 == b { print $5 }' | tail -1
}

measure() {	# MODE
	bw=$(pt ib_write_bw "-s 65536 -n $BWN" 65536 4)
	lat=$(pt ib_send_lat "-s 64 -n $LATN" 64 5)
	rt=$(ring)
	echo "R workload.$1.write_bw_MBps ${bw:-nan}"
	echo "R workload.$1.send_lat_us ${lat:-nan}"
	echo "R workload.$1.ring_time_us ${rt:-nan}"
}

# Until the reader started last (pid $1) traces: the module's tracing on,
# or (BPF only) its first BPF link open.
wait_tracing() {	# PID WHAT
	i=0
	while :; do
		case $2 in
		relay) [ "$(cat $D/enable)" = 1 ] && break ;;
		bpf) ls -l /proc/"$1"/fd 2>/dev/null | grep -q 'bpf[-_]link' && break ;;
		esac
		kill -0 "$1" 2>/dev/null || { cat "$W/err" >&2; exit 1; }
		i=$((i + 1)); [ $i -lt 300 ] || { cat "$W/err" >&2; exit 1; }
		sleep 0.05
	done
	[ "$2" = relay ] || sleep 1	# the other BPF programs attach
}

# Where the ring's slowdown goes: the ring alone under one source or one
# reader at a time (issue 21).  relay: rdmatrace.ko only, rdmatrace-dump
# -f decoding; record: the same probes, rdmatrace-record copying; bpf:
# the BPF sources only (rxe, tcp, nccl), rdmatrace-dump -f decoding.
ring_split() {	# MODE WHAT CMD...
	m=$1 what=$2; shift 2
	"$@" 2>"$W/err" &
	dp=$!
	wait_tracing $dp "$what"
	rt=$(ring)
	echo "R workload.$m.ring_time_us ${rt:-nan}"
	kill -INT $dp
	wait $dp || true
	rm -rf "$W/t.rdt" "$W/rec"
}

# The floor of the design (issue 36), no reader: at the rxe functions the
# BPF source hooks on every packet and CQE, programs that do nothing but
# read the clock at a CQE (bench/hook-floor.bpf.c, -DSTAMP); alone
# (floor_hooks), then with rdmatrace.ko tracing too (floor: its records
# go to relay buffers nobody reads, which these short runs do not fill).
floor_split() {	# MODE ENABLE
	"$RDT_BUILD/bench/hook-floor" "$RDT_BUILD/bench/hook-floor-ts.bpf.o" >"$W/hf" 2>&1 &
	hp=$!
	until grep -q '^attached' "$W/hf"; do
		kill -0 $hp 2>/dev/null || { cat "$W/hf" >&2; exit 1; }
		sleep 0.05
	done
	echo "$2" >$D/enable
	lat=$(pt ib_send_lat "-s 64 -n $LATN" 64 5)
	rt=$(ring)
	echo 0 >$D/enable
	echo "R workload.$1.send_lat_us ${lat:-nan}"
	echo "R workload.$1.ring_time_us ${rt:-nan}"
	kill $hp
	wait $hp || true
}

for r in $(seq "$REPS"); do
	rmmod rdmatrace 2>/dev/null || true
	measure untraced
	modprobe rdmatrace clock=tsc
	"$DUMP" -f -o "$W/t.rdt" 2>"$W/err" &
	dp=$!
	wait_tracing $dp relay
	measure traced
	kill -INT $dp
	wait $dp || true
	lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
	echo "R workload.traced.lost ${lost:-nan}"
	rm -f "$W/t.rdt"
	ring_split split_relay relay "$DUMP" -f --no-bpf --no-counters --no-nccl-plugin -o "$W/t.rdt"
	ring_split split_record relay "$RDT_BUILD/bin/rdmatrace-record" -D "$W/rec" --no-counters
	ring_split split_bpf bpf "$DUMP" -f --no-relay --no-counters --no-nccl-plugin -o "$W/t.rdt"
	floor_split floor_hooks 0
	floor_split floor 1
done
rm -rf "$W"
