#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of figure 2 (capture rate).  Producer: rdt_bench mode=rate,
# ib_poll_cq on an empty CQ at a paced rate, rdmatrace's event mask set to
# POLL_CQ only and its pid filter to the producer: exactly one event per
# call.  Consumer: rdmatrace-dump -f -o FILE (relay only).  Rates double
# from START until events are lost (in two runs at that rate: one may lose
# to a stall of the host's), then three bisection steps narrow the last
# loss-free rate, which is the figure; a run at twice it checks the
# drop count: lost (as rdmatrace-dump reports it and as debugfs counts it)
# = generated - stored.
#   guest-capture.sh SECONDS START MAXRATE [dump|record]
# record: the consumer is rdmatrace-record -D DIR instead (a copy of the
# relay files, no decode), and rdmatrace-dump -d DIR -o FILE decodes the
# capture after each run; figures are then reported as capture_record.*.
set -eu
SECS=$1 RATE=$2 MAX=$3 MODE=${4:-dump}
case $MODE in
dump) K=capture PER_EVENT=64 ;;
record) K=capture_record PER_EVENT=128 ;;
*) echo "guest-capture.sh: consumer '$MODE' is neither dump nor record" >&2; exit 2 ;;
esac
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
KO=$RDT_BUILD/bench/kmod/$(uname -r)/rdt_bench.ko
DUMP=$RDT_BUILD/bin/rdmatrace-dump
REC=$RDT_BUILD/bin/rdmatrace-record
COUNT=$RDT_BUILD/bench/rdt-count
D=/sys/kernel/debug/rdmatrace
grep -q " /sys/kernel/debug " /proc/mounts || mount -t debugfs none /sys/kernel/debug
rdt-rdma-up rxe >/dev/null
. /run/rdt-rdma.env
W=$(mktemp -d)

run() {	# RATE -> sets gen stored lost dbg
	rmmod rdmatrace 2>/dev/null || true
	modprobe rdmatrace clock=tsc	# as a host that trusts its TSC (kmod/clock.h)
	echo $((1 << (80 - 64))) >$D/events
	rm -rf "$W/cap" "$W/c.rdt"
	if [ "$MODE" = record ]; then
		"$REC" -D "$W/cap" 2>"$W/rec.err" &
	else
		"$DUMP" -f --no-bpf -o "$W/c.rdt" 2>"$W/err" &
	fi
	dp=$!
	i=0
	until [ "$(cat $D/enable)" = 1 ]; do
		i=$((i + 1)); [ $i -lt 200 ] || { cat "$W/err" >&2; exit 1; }
		sleep 0.05
	done
	# The capture is a file in the guest's tmpfs: a run asked for more
	# events than it holds (48 bytes each; 64 here, with room to spare,
	# and twice that for the recorder's copy and its decode) makes fewer
	# calls at the same rate.  The 2x check of a reader that
	# kept up with the producer's ceiling (2.4 M asked, 1.04 M made) asked
	# for 9.6 M events, and the reader stopped on "No space left on
	# device" at 8.9 M (2026-11-30).
	n=$(( $1 * SECS ))
	room=$(( $(df -Pk "$W" | awk 'NR == 2 { print $4 }') * 1024 / PER_EVENT ))
	[ "$n" -le "$room" ] || { echo "capture: rate=$1: $n calls would not fit in $W: $room made" >&2; n=$room; }
	sh -c "echo \$\$ >$D/filter_pid; exec insmod $KO dev=$RXE_DEV mode=rate rate=$1 iters=$n"
	gen=$(cat /sys/module/rdt_bench/parameters/calls)
	ns=$(cat /sys/module/rdt_bench/parameters/total_ns)
	rmmod rdt_bench
	sleep 0.5
	# A reader that fails (it died on a corrupt record past the capture
	# rate before d340e10; it now skips such data, counts it, and exits
	# 1) is a result to report, not a reason to lose the figure.
	kill -INT $dp 2>/dev/null || true
	rfail=0
	if [ "$MODE" = record ]; then
		wait $dp || { rfail=1; echo "capture: rate=$1: rdmatrace-record failed: $(tail -1 "$W/rec.err")" >&2; }
		rsaid=$(sed -n 's/^rdmatrace-record: the module dropped \([0-9]*\) events.*/\1/p' "$W/rec.err")
		"$DUMP" -d "$W/cap" -o "$W/c.rdt" 2>"$W/err" ||
			{ rfail=1; echo "capture: rate=$1: decoding the capture failed: $(tail -1 "$W/err")" >&2; }
		echo "capture: rate=$1: $(grep 'bytes from' "$W/rec.err")" >&2
		rm -rf "$W/cap"
	else
		wait $dp || { rfail=1; echo "capture: rate=$1: rdmatrace-dump failed: $(tail -1 "$W/err")" >&2; }
	fi
	dbg=$(awk '$1 == "total" { print $2 }' $D/dropped)
	lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
	# The recorder's own count must agree with the decoder's.
	[ "$MODE" != record ] || [ "${rsaid:-x}" = "${lost:-y}" ] || {
		rfail=1; echo "capture: rate=$1: the recorder says ${rsaid:-?} dropped, the decoder ${lost:-?}" >&2; }
	stored=$("$COUNT" "$W/c.rdt" 80 | awk '{ print $4 }')
	achieved=$(awk -v g="$gen" -v t="$ns" 'BEGIN { printf "%.0f", g * 1e9 / t }')
	echo "$K rate=$1 achieved=$achieved generated=$gen stored=$stored lost_reported=$lost lost_debugfs=$dbg" >&2
}

clean() { [ "$rfail" = 0 ] && [ "$dbg" = 0 ] && [ "$stored" = "$gen" ]; }

# More POLL_CQ records stored than calls made happened once (2026-11-24,
# 201895 of 200000 at 100 k/s, 0 lost) and not in 9 repeats: keep such a
# file for a look, say so, and run that rate again instead of taking it
# for loss.
checked_run() {	# RATE
	run "$1"
	if [ "$stored" -gt "$gen" ]; then
		cp "$W/c.rdt" "$RDT_BUILD/bench/capture-extra-$1.rdt" 2>/dev/null || true
		echo "capture: rate=$1 stored $stored > generated $gen: file kept as" \
			"$RDT_BUILD/bench/capture-extra-$1.rdt; running it again" >&2
		run "$1"
	fi
	# A loss is a rate's only if a second run loses too: one 2 s run
	# that loses a few thousand events to a stall of the host's (TCG
	# vCPU threads on a shared 2-core machine) put the figure at a
	# bisection step below a rate both readers sustain (2026-11-29:
	# the module's reader lost 3682 of 800 k at 400 k/s, 0 at 750 k/s;
	# the recorder 8319 at 800 k/s, 0 at 1.2 M/s).  Both readers alike.
	clean || { retried=$((retried + 1)); run "$1"; }
}
retried=0

ok=0 bad=
while :; do
	checked_run "$RATE"
	if clean; then
		ok=$RATE ok_ach=$achieved
		[ $((RATE * 2)) -le "$MAX" ] || break
		RATE=$((RATE * 2))
		continue
	fi
	bad=$RATE
	break
done
# Doubling brackets the figure within 2x: three halvings of the bracket
# bring it within 1/8, then the drop check runs at twice that rate.
if [ -n "$bad" ] && [ "$ok" -gt 0 ]; then
	for step in 1 2 3; do
		mid=$(((ok + bad) / 2))
		checked_run "$mid"
		if clean; then ok=$mid ok_ach=$achieved; else bad=$mid; fi
	done
	RATE=$((ok * 2))
	run "$RATE"
fi
echo "R $K.zero_loss_rate $ok"
echo "R $K.retried $retried"
echo "R $K.zero_loss_achieved ${ok_ach:-0}"
if [ -n "$bad" ]; then
	echo "R $K.over.rate $RATE"
	echo "R $K.over.achieved $achieved"
	echo "R $K.over.generated $gen"
	echo "R $K.over.stored $stored"
	echo "R $K.over.lost_reported ${lost:-0}"
	echo "R $K.over.lost_debugfs $dbg"
	echo "R $K.over.reader_failed $rfail"
	echo "R $K.over.exact $([ "${lost:-x}" = $((gen - stored)) ] && [ "$dbg" = $((gen - stored)) ] && echo 1 || echo 0)"
fi
rm -rf "$W"
