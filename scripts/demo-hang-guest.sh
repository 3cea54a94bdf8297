#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make demo HANG=1` (scripts/demo-hang.sh boots the
# guest and runs this as root).  Two ranks of the ring AllReduce on rxe
# devices at the two ends of a veth pair (rdt-rdma-up veth: rank 0 on rxa,
# whose packets leave through rva; rank 1 on rxb), traced live with
# rdmatrace-dump -f --stuck=LIMIT (--verbs, --rxe, the ring's USDT marks,
# the port counters; rdmatrace.ko for the QPs' states and peers).  After a
# few seconds of collectives, netem drops every packet on rank 0's link
# (rva); the ring hangs, rxe retries; SIGUSR1 asks for the picture; then
# the loss is lifted and the ring goes on.  The ring's QPs retry for ever
# (--retry-cnt 7, as NCCL_IB_RETRY_CNT=7 does), so the job rides it out.
#
#   scripts/demo-hang-guest.sh OUTDIR [rdma-ring-allreduce size options]
#
# Writes: trace.rdt, dump.err (the live reports: rdmatrace-dump's stderr),
# ring.txt, qps.txt (rdma res show qp, before the loss).
set -u
OUT=${1:?usage: demo-hang-guest.sh OUTDIR [ring size options]}
shift
[ $# -gt 0 ] || set -- -b 4K -e 4K -n 1000000 -w 1
LIMIT=${DEMO_STUCK:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
RRA=$B/bin/rdma-ring-allreduce

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo-hang-guest: $*" >&2; [ -s "$OUT/dump.err" ] && cat "$OUT/dump.err" >&2; exit 1; }
# wait_for PATTERN SECONDS: PATTERN in dump.err within SECONDS.
wait_for() {
	for _ in $(seq $(($2 * 5))); do
		grep -q "$1" "$OUT/dump.err" && return 0
		sleep 0.2
	done
	return 1
}

for f in "$DUMP" "$RRA"; do
	[ -x "$f" ] || die "$f not built (make all)"
done
mkdir -p "$OUT" || die "cannot make $OUT"
rm -f "$OUT/trace.rdt" "$OUT/dump.err" "$OUT/ring.txt" "$OUT/qps.txt"
ulimit -l unlimited 2>/dev/null || true

say "rdmatrace.ko, and rxe on the two ends of a veth pair"
modprobe rdmatrace || die "modprobe rdmatrace"
rdt-rdma-up veth || die "rdt-rdma-up veth"
# netem in place from the start, at 0 %: the loss comes with "change"
# (adding a root qdisc under traffic can flush a WR with an error).
tc qdisc replace dev rva root netem loss 0% || die "netem"

say "rdmatrace-dump -f --stuck=$LIMIT (live reports on its stderr)"
"$DUMP" -f --no-nccl-plugin --counters=200 --verbs --rxe --usdt="$RRA" \
	--stuck="$LIMIT" -q -o "$OUT/trace.rdt" 2>"$OUT/dump.err" &
dp=$!
wait_for '^verbs: devices' 60 || die "rdmatrace-dump did not attach"
grep -E '^(rxe|usdt|verbs|counters):' "$OUT/dump.err" | cut -c1-160

say "the ring: rank 0 on rxa, rank 1 on rxb ($*)"
"$RRA" -d rxa,rxb -N 2 "$@" -t 120 --retry-cnt 7 >"$OUT/ring.txt" 2>&1 &
rp=$!
# Collectives under way: both ranks' QPs (two each) in RTS (slow on a loaded
# host), then a few seconds of traffic.
for _ in $(seq 300); do
	[ "$(rdma res show qp 2>/dev/null | grep rdma-ring | grep -c ' state RTS ')" -ge 4 ] && break
	kill -0 $rp 2>/dev/null || break
	sleep 0.2
done
sleep 2
kill -0 $rp 2>/dev/null || { cat "$OUT/ring.txt"; die "the ring ended early"; }
rdma res show qp | grep rdma-ring >"$OUT/qps.txt"
cat "$OUT/qps.txt"

say "netem: every packet on rank 0's link (rva) dropped"
tc qdisc change dev rva root netem loss 100% || die "netem"
# What a missing report leaves to go on (it happened once, on a loaded
# CI host): the QPs' states, the qdisc's drop count, the ring's output.
no_report() {
	echo "demo-hang-guest: the QPs now:" >&2
	rdma res show qp 2>&1 | grep rdma-ring >&2
	tc -s qdisc show dev rva >&2
	echo "demo-hang-guest: the ring's output:" >&2
	cat "$OUT/ring.txt" >&2
	die "no report 30 s into the loss"
}
wait_for '^stuck: report new' 30 || no_report
sleep $((LIMIT + 2))
kill -USR1 $dp
sleep 1
say "the loss lifted"
tc qdisc change dev rva root netem loss 0%
wait_for '^stuck: moving' 60 || echo "(no 'moving' line 60 s after the loss lifted)"
kill -0 $rp 2>/dev/null || { cat "$OUT/ring.txt"; die "the ring did not survive the loss"; }
kill $rp
wait $rp 2>/dev/null
kill -INT $dp
wait $dp || die "rdmatrace-dump exited with $?"
say "rdmatrace-dump's live reports"
grep '^stuck:' "$OUT/dump.err"
