#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Figure 4 (NCCL) on the host: ns per ncclAllReduce call through dlopen,
# untraced, traced by rdmatrace-dump --nccl (uprobe + uretprobe, BPF ring
# buffer, consumer writing a file), and the bare uprobe + uretprobe floor
# of this host (tracefs probes, no BPF), interleaved REPS times.
#   host-nccl.sh REPS CALLS
set -eu
REPS=$1 N=$2
B=${RDT_BUILD:-build}
NB=$B/bench/nccl-bench DUMP=$B/bin/rdmatrace-dump
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
[ "$(id -u)" = 0 ] || { echo "host-nccl: needs root, skipped" >&2; exit 0; }
TF=/sys/kernel/tracing
[ -d $TF/events ] || mount -t tracefs nodev $TF 2>/dev/null || true
libs="double:$B/tests/nccl-double/libnccl-double.so"
REAL=${RDT_REAL_NCCL:-/usr/local/cuda/lib/libnccl.so.2}
[ -r "$REAL" ] && libs="real:$(readlink -f "$REAL") $libs"

ns() { "$NB" "$1" "$N" | awk '$1 == "allreduce_ns_per_call" { print $2 }'; }
for l in $libs; do
	tag=${l%%:*} lib=${l#*:}
	off=$(nm -D "$lib" | awk '$3 == "ncclAllReduce" { print $1; exit }')
	for r in $(seq "$REPS"); do
		echo "R nccl.$tag.untraced_ns $(ns "$lib")"
		: >"$W/err"
		"$DUMP" -f --no-relay --nccl="$lib" -o "$W/n.rdt" 2>"$W/err" &
		dp=$!
		i=0
		until grep -q '^nccl: attached' "$W/err"; do
			i=$((i + 1)); [ $i -lt 200 ] || { cat "$W/err" >&2; exit 1; }
			sleep 0.05
		done
		echo "R nccl.$tag.traced_ns $(ns "$lib")"
		sleep 0.2
		kill -INT $dp; wait $dp || true
		lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
		echo "R nccl.$tag.traced_lost ${lost:-nan}"
		if [ -n "$off" ] && [ -w $TF/uprobe_events ]; then
			echo "p:rdtbench/e $lib:0x$off" >>$TF/uprobe_events
			echo "r:rdtbench/r $lib:0x$off" >>$TF/uprobe_events
			echo 1 >$TF/events/rdtbench/enable
			echo "R nccl.$tag.floor_ns $(ns "$lib")"
			echo 0 >$TF/events/rdtbench/enable
			echo >$TF/trace
			echo "-:rdtbench/e" >>$TF/uprobe_events
			echo "-:rdtbench/r" >>$TF/uprobe_events
		fi
	done
done
