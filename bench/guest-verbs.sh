#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of figure 1 (kernel verb cost): run rdt_bench mode=verbs with
# rdmatrace not loaded / loaded but disabled / enabled with every event,
# interleaved, REPS times.  Prints "R verbs.<mode>.<metric> VALUE" lines.
#   guest-verbs.sh TAG REPS ITERS
set -eu
TAG=$1 REPS=$2 ITERS=$3
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
KO=$RDT_BUILD/bench/kmod/$(uname -r)/rdt_bench.ko
D=/sys/kernel/debug/rdmatrace
P=/sys/module/rdt_bench/parameters
[ -f "$KO" ] || { echo "guest-verbs: $KO not built" >&2; exit 1; }
[ -d /sys/kernel/debug/tracing ] || grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug
rdt-rdma-up rxe >/dev/null
. /run/rdt-rdma.env

one() {	# MODE [rdt_bench PARAM...]
	m=$1
	shift
	insmod "$KO" dev="$RXE_DEV" mode=verbs iters="$ITERS" warmup=200 "$@"
	set -- "$m" $(cat $P/total_ns $P/ns_send $P/ns_recv $P/ns_poll_hit \
		$P/ns_poll_empty $P/n_poll_empty $P/polls)
	rmmod rdt_bench
	# One round = post_recv + post_send + the polls that returned the two
	# completions (usually 1-2); empty polls are reported apart.
	awk -v m="$1" -v g="$TAG" -v n="$ITERS" -v tot="$2" -v s="$3" -v r="$4" \
	    -v ph="$5" -v pe="$6" -v ne="$7" -v np="$8" 'BEGIN {
		nh = np - ne
		printf "R verbs.%s.%s.post_send_ns %.2f\n", g, m, s / n
		printf "R verbs.%s.%s.post_recv_ns %.2f\n", g, m, r / n
		printf "R verbs.%s.%s.poll_cq_hit_ns %.2f\n", g, m, nh ? ph / nh : 0
		printf "R verbs.%s.%s.poll_cq_empty_ns %.2f\n", g, m, ne ? pe / ne : 0
		printf "R verbs.%s.%s.verb_ns %.2f\n", g, m, (s + r + ph) / (2 * n + nh)
		printf "R verbs.%s.%s.round_ns %.2f\n", g, m, (s + r + ph) / n
		printf "R verbs.%s.%s.wall_ns_per_round %.2f\n", g, m, tot / n }'
}

for r in $(seq "$REPS"); do
	rmmod rdmatrace 2>/dev/null || true
	one none
	# 64 x 256 KiB per CPU: an unread buffer holds every event of a run,
	# so the enabled figure is the write path, never the cheaper drop path.
	# Stamped by the TSC, as on a host whose TSC the kernel trusts
	# (kmod/clock.h): TCG guests lack constant_tsc, so clock=auto would
	# choose ktime_get_ns() here; enabled_ktime is that fallback's cost.
	modprobe rdmatrace n_subbufs=64 clock=tsc
	one disabled
	echo 1 >$D/enable
	one enabled
	echo 0 >$D/enable
	echo ktime >$D/clock
	echo 1 >$D/enable
	one enabled_ktime
	echo 0 >$D/enable
	echo tsc >$D/clock
	echo 1 >$D/enable
	# wr_ids that are kernel addresses (a ULP's ib_cqe): hashed, mostly
	# from the per-CPU cache.
	one enabled_cqe wr_cqe=1
	echo 0 >$D/enable
	drop=$(awk '$1 == "total" { print $2 }' $D/dropped)
	echo "R verbs.$TAG.enabled.dropped ${drop:-0}"
	rmmod rdmatrace
done
