#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Figure 6 (NCCL profiler plugin) on the host: ns per startEvent +
# stopEvent pair in the NCCL process (np-bench, a ProxyStep under a
# ProxyOp as NCCL's proxy thread makes them), REPS times:
#  - with rdmatrace-dump -f draining the rings (bursts of 1000 pairs, 2 ms
#    apart, rings of 2^18 records: what the reader's pass every <= 100 ms
#    keeps up with; the loss it reported is a figure too), and the
#    reader's CPU time per event it read (user + system, from /proc, taken
#    before it is stopped: nccl.plugin.reader_ns_per_event; it reads the
#    rings with pread(), issue 31);
#  - with no reader: the rings fill, then every record is dropped and
#    counted (the path a job without rdmatrace-dump running takes).
#   host-nccl-plugin.sh REPS PAIRS
set -eu
REPS=$1 N=$2
B=${RDT_BUILD:-build}
NB=$B/bench/np-bench DUMP=$B/bin/rdmatrace-dump
SO=$(readlink -f "$B/lib/libnccl-profiler-rdmatrace.so")
# tmpfs, as /dev/shm is where the plugin puts its rings
W=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$W"' EXIT
export RDMATRACE_NCCL_DIR=$W/shm
mkdir "$W/shm"
ns() { awk '$1 == "pair_ns" { print $2 }'; }
for r in $(seq "$REPS"); do
	: >"$W/err"
	"$DUMP" -f --no-relay --no-bpf -q 2>"$W/err" &
	dp=$!
	i=0
	until grep -q 'watching for them' "$W/err"; do
		i=$((i + 1)); [ $i -lt 200 ] || { cat "$W/err" >&2; exit 1; }
		sleep 0.05
	done
	v=$(RDMATRACE_NCCL_SLOTS=262144 "$NB" "$SO" "$N" 1000 2000 400 | ns)
	echo "R nccl.plugin.event_pair_ns $v"
	sleep 0.3
	cpu=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$dp/stat")
	kill -INT $dp; wait $dp || true
	lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
	echo "R nccl.plugin.reader_lost ${lost:-nan}"
	ev=$(sed -n 's/^rdmatrace-dump: \([0-9]*\) events,.*/\1/p' "$W/err")
	echo "R nccl.plugin.reader_ns_per_event $(awk -v c="$cpu" -v e="${ev:-0}" \
		-v hz="$(getconf CLK_TCK)" 'BEGIN { print e ? c / hz * 1e9 / e : "nan" }')"
	echo "R nccl.plugin.noreader_pair_ns $("$NB" "$SO" "$N" 1000 0 0 | ns)"
	rm -f "$W"/shm/*
done
