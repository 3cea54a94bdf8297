#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest half of `make demo` (scripts/demo.sh boots the test-bed guest
# and runs this as root): load rdmatrace, bring up rxe0, record every source
# (kmod relay, BPF rxe/TCP, USDT marks of the ring binary, the NCCL profiler
# plugin the ring hosts) into OUTDIR/trace.rdt while a 3-rank ring AllReduce
# and the kernel verbs workload run, then stop
# the recorder cleanly.  OUTDIR is in the checkout, which the guest shares.
#
#   scripts/demo-guest.sh OUTDIR [rdma-ring-allreduce size options]
#
# Writes: trace.rdt, live.txt (the recorder's text output, written live),
# dump.err (source status, drop report), ring.txt (the ring's output),
# run.env (device, kernel, QPNs of the kernel workload).
set -u
OUT=${1:?usage: demo-guest.sh OUTDIR [ring size options]}
shift
[ $# -gt 0 ] || set -- -b 8 -e 1M -f 4 -n 5 -w 1 -C 32768
NRANKS=${DEMO_NRANKS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
RRA=$B/bin/rdma-ring-allreduce

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
die() { echo "demo-guest: $*" >&2; [ -s "$OUT/dump.err" ] && cat "$OUT/dump.err" >&2; exit 1; }

for f in "$DUMP" "$RRA"; do
	[ -x "$f" ] || die "$f not built (make all)"
done
mkdir -p "$OUT" || die "cannot make $OUT"
rm -f "$OUT/trace.rdt" "$OUT/live.txt" "$OUT/dump.err" "$OUT/ring.txt" "$OUT/run.env"
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs none /sys/kernel/debug || die "cannot mount debugfs"

say "loading rdmatrace.ko and bringing up SoftRoCE"
modprobe rdmatrace || die "modprobe rdmatrace"
echo "rdmatrace $(cat /sys/module/rdmatrace/version 2>/dev/null) on $(uname -r)"
rdt-rdma-up rxe || die "rdt-rdma-up rxe"
. /run/rdt-rdma.env
[ -n "${RXE_DEV:-}" ] || die "rdt-rdma-up wrote no RXE_DEV"
ulimit -l unlimited || die "ulimit -l unlimited"

# The ring loads the NCCL profiler plugin as NCCL would; its rings live on
# the guest's tmpfs (the shared checkout is no place for shared memory).
export RDMATRACE_NCCL_DIR=/tmp/rdt-nccl
mkdir -p "$RDMATRACE_NCCL_DIR" || die "cannot make $RDMATRACE_NCCL_DIR"
say "starting rdmatrace-dump --follow (relay + BPF rxe/tcp/verbs + USDT + NCCL plugin)"
# --verbs: the ring's own posts and polls (rdma-core's rxe provider posts
# in userspace), joined to the module's doorbells and rxe's CQEs.
# --stuck=5: a healthy run must report nothing (demo.sh checks; its
# slowest collective under TCG took 0.4 s).  --rxe=packets: every packet
# on the timeline too (by default only counted in each CQE), and the
# report sets rxe_rcv's count against the port counter.
"$DUMP" -f --rxe=packets --tcp --verbs --stuck=5 --usdt="$RRA" -o "$OUT/trace.rdt" -F text -w "$OUT/live.txt" \
	2>"$OUT/dump.err" &
dpid=$!
i=0
until grep -q '^usdt:' "$OUT/dump.err" 2>/dev/null; do
	kill -0 $dpid 2>/dev/null || die "rdmatrace-dump exited"
	i=$((i + 1))
	[ $i -lt 300 ] || die "rdmatrace-dump never attached"
	sleep 0.1
done
cat "$OUT/dump.err"
grep -q '^usdt: attached' "$OUT/dump.err" || die "USDT marks not attached"
grep -q '^rxe: attached' "$OUT/dump.err" || die "rxe BPF source not attached"
grep -q '^verbs: devices .*post_send@' "$OUT/dump.err" || die "verbs source not attached"
sleep 0.5	# the relay reader's first poll

say "ring AllReduce: $NRANKS ranks on $RXE_DEV (GID $RXE_GID), $*, and rdt_workload.ko"
NCCL_PROFILER_PLUGIN=$B/lib/libnccl-profiler-rdmatrace.so \
	"$RRA" -N "$NRANKS" -d "$RXE_DEV" ${RXE_GID:+-g "$RXE_GID"} -v "$@" >"$OUT/ring.txt" 2>&1 &
rpid=$!
# The kernel verbs workload (RC loopback from a module) alongside the ring.
WL="count=128 size=1024"
modprobe rdt_workload dev="$RXE_DEV" $WL || die "rdt_workload failed"
P=/sys/module/rdt_workload/parameters
{
	echo "KERNEL=$(uname -r)"
	echo "RXE_DEV=$RXE_DEV RXE_GID=$RXE_GID RXE_IP=${RXE_IP:-}"
	echo "NRANKS=$NRANKS"
	echo "RING_ARGS='$*'"
	echo "WORKLOAD='$WL' WL_QPN_SEND=$(cat $P/qpn_send) WL_QPN_RECV=$(cat $P/qpn_recv)"
} >"$OUT/run.env"
rmmod rdt_workload
sleep 1
say "live excerpt: rdmatrace-dump's text output while the ring runs"
sed -n '/COLL_MARK\|coll_mark/,$p' "$OUT/live.txt" | head -n 24
wait $rpid
rrc=$?
say "ring output"
cat "$OUT/ring.txt"
[ $rrc = 0 ] || die "rdma-ring-allreduce failed ($rrc)"

sleep 0.5	# let the last completions reach the reader
kill -INT $dpid
wait $dpid
drc=$?
say "rdmatrace-dump stopped"
tail -n 5 "$OUT/dump.err"
[ $drc = 0 ] || die "rdmatrace-dump exited $drc"
rmmod rdmatrace || die "rmmod rdmatrace"
sync
exit 0
