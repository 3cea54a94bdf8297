#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# One guest's half of a two-host run (tests/multihost/lib.sh boots both):
# rdmatrace.ko and rxe0 on the wire NIC, a clock skew stepped in on B, the
# true offset between the two clocks measured over shared memory
# (rdt-clockpair) before and after, and in between every source traced with
# rdmatrace-dump -f while this guest's ranks of one ring AllReduce run.
#
#   guest.sh A|B OUTDIR [rdma-ring-allreduce size options]
#
# Environment: MH_SKEW (seconds added to B's CLOCK_REALTIME, default 3.25),
# MH_NLOCAL (ranks per guest, 2), MH_PORT (the ring's TCP rendezvous on A,
# 18515), MH_TIMEOUT (the ring's -t, 60), MH_CUT (once rxe has sent that
# many packets, the guest drops every packet it sends on the wire, netem
# loss 100 %: the ring then fails by its -t, which is what is wanted, and
# the traces show the hang; tests/multihost/cut.test), MH_STUCK (the
# dump's --stuck limit: its live reports go to ROLE.dump.err).
# Writes to OUTDIR: ROLE.rdt (the trace), ROLE.dump.err, ROLE.ring.txt,
# ROLE.env (what ran), and on B clock-boot.txt, clock-pre.txt,
# clock-post.txt (rdt-clockpair's bounds on B - A as booted, after the
# step, after the run) and skew.txt (the step).
set -u
ROLE=${1:?usage: guest.sh A|B OUTDIR [ring size options]}
OUT=${2:?usage: guest.sh A|B OUTDIR [ring size options]}
shift 2
[ $# -gt 0 ] || set -- -b 4K -e 256K -f 4 -n 3 -w 1 -C 16K
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
RRA=$B/bin/rdma-ring-allreduce
CP=$B/tests/multihost/rdt-clockpair
SKEW=${MH_SKEW:-3.25}
NLOCAL=${MH_NLOCAL:-2}
PORT=${MH_PORT:-18515}
RT=${MH_TIMEOUT:-60}
IP_A=192.0.2.1 IP_B=192.0.2.2

say() { echo "mh-guest $ROLE: $*"; }
die() {
	echo "mh-guest $ROLE: FAIL: $*" >&2
	[ -s "$OUT/$ROLE.dump.err" ] && tail -n 20 "$OUT/$ROLE.dump.err" >&2
	exit 1
}

case $ROLE in
A) me=$IP_A peer=$IP_B first=0 ;;
B) me=$IP_B peer=$IP_A first=$NLOCAL ;;
*) die "role must be A or B" ;;
esac
for f in "$DUMP" "$RRA" "$CP"; do
	[ -x "$f" ] || die "$f not built (make)"
done
# (a failed `.` would end a non-interactive shell before die could say why)
[ -r /run/rdt-wire.env ] || die "no wire (tests/vm/run --wire ... --wire-ip)"
. /run/rdt-wire.env
[ "$WIRE_IP" = "$me" ] || die "wire address $WIRE_IP, want $me"
mkdir -p "$OUT" || die "cannot make $OUT"
# (not ROLE.console: the host writes it)
rm -f "$OUT/$ROLE.rdt" "$OUT/$ROLE.dump.err" "$OUT/$ROLE.ring.txt" "$OUT/$ROLE.env"
[ "$ROLE" = A ] || rm -f "$OUT/clock-"*.txt "$OUT/skew.txt"
hostname "rdt-host-$ROLE"

modprobe rdmatrace || die "modprobe rdmatrace"
rdt-rdma-up wire || die "rdt-rdma-up wire"
. /run/rdt-rdma.env
ulimit -l unlimited || die "ulimit -l unlimited"

# The other guest may still be booting: wait for it on the wire.
i=0
until ping -c 1 -W 1 "$peer" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 240 ] || die "$peer never answered on the wire"
done
say "wire up: $WIRE_DEV $me <-> $peer after $i tries; rxe $RXE_DEV gid $RXE_GID"

# The truth, B - A over shared memory, as the guests booted (session 1);
# the skew stepped into B's clock; the truth again (session 2).
if [ "$ROLE" = B ]; then
	"$CP" measure 1 >"$OUT/clock-boot.txt" || die "clock measure (as booted)"
	"$CP" step "$SKEW" >"$OUT/skew.txt" || die "cannot step the clock by $SKEW s"
	"$CP" measure 2 >"$OUT/clock-pre.txt" || die "clock measure (before)"
	say "B - A as booted: $(cat "$OUT/clock-boot.txt")"
	say "stepped CLOCK_REALTIME by $SKEW s; B - A: $(cat "$OUT/clock-pre.txt")"
else
	"$CP" serve 1 300 >/dev/null && "$CP" serve 2 300 >/dev/null ||
		die "clock serve (before)"
fi

# With the wire cut, --verbs too: the ring's own send WRs, which --stuck
# needs to say which QP waits for what (the module sees doorbells only).
# MH_STUCK=SECONDS: its live --stuck reports in ROLE.dump.err (make demo
# HANG=1).  --rxe=packets: a record per packet (by default rxe's packets
# are only counted in its CQEs), which the merge's clock alignment pairs.
"$DUMP" -f --rxe=packets --tcp ${MH_CUT:+--verbs} ${MH_STUCK:+--stuck=$MH_STUCK} \
	--usdt="$RRA" -o "$OUT/$ROLE.rdt" -q 2>"$OUT/$ROLE.dump.err" &
dpid=$!
i=0
until grep -q '^usdt:' "$OUT/$ROLE.dump.err" 2>/dev/null; do
	kill -0 $dpid 2>/dev/null || die "rdmatrace-dump exited"
	i=$((i + 1))
	# 3 min: a loaded host (two guests beside a build) took over one
	[ $i -lt 1800 ] || die "rdmatrace-dump never attached"
	sleep 0.1
done
grep -q '^rxe: attached.*rxe_xmit_packet' "$OUT/$ROLE.dump.err" ||
	die "rxe source (with rxe_xmit_packet) not attached: $(grep '^rxe' "$OUT/$ROLE.dump.err")"
sleep 0.5	# the relay reader's first poll

say "ranks $first..$((first + NLOCAL - 1)) of $((2 * NLOCAL)), rendezvous tcp:$IP_A:$PORT, $*"
{
	echo "ROLE=$ROLE KERNEL=$(uname -r) HOST=$(hostname)"
	echo "WIRE_DEV=$WIRE_DEV WIRE_IP=$WIRE_IP RXE_DEV=$RXE_DEV RXE_GID=$RXE_GID"
	echo "FIRST=$first NLOCAL=$NLOCAL NRANKS=$((2 * NLOCAL))"
	echo "RING_ARGS='$*'"
} >"$OUT/$ROLE.env"
t0=$(date +%s)
"$RRA" -N "$NLOCAL" --first-rank "$first" --nranks $((2 * NLOCAL)) \
	--oob "tcp:$IP_A:$PORT" -t "$RT" -d "$RXE_DEV" -g "$RXE_GID" -v "$@" \
	>"$OUT/$ROLE.ring.txt" 2>&1 &
rpid=$!
if [ -n "${MH_CUT:-}" ]; then
	# Once the ring is running across the wire: rxe has sent MH_CUT
	# packets (the rendezvous goes over the wire too, and the other
	# guest may start late).  Each guest cuts its own side.
	modprobe -q sch_netem || die "no sch_netem"
	C=/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters/sent_pkts
	i=0
	while [ "$(cat "$C" 2>/dev/null || echo 0)" -lt "$MH_CUT" ]; do
		kill -0 $rpid 2>/dev/null || die "the ring ended before $MH_CUT packets: $(tail -3 "$OUT/$ROLE.ring.txt")"
		i=$((i + 1))
		[ $i -lt 3000 ] || die "rxe sent fewer than $MH_CUT packets in 10 minutes"
		sleep 0.2
	done
	# iproute2's tc: busybox sh prefers its own applet, which has no netem
	/usr/sbin/tc qdisc add dev "$WIRE_DEV" root netem loss 100% || die "netem on $WIRE_DEV"
	echo "CUT_AT=$(cut -d' ' -f1 /proc/uptime)" >>"$OUT/$ROLE.env"
	say "wire cut (netem loss 100 % on $WIRE_DEV) after $MH_CUT rxe packets sent"
fi
wait $rpid
rrc=$?
echo "RING_SECONDS=$(($(date +%s) - t0)) RING_RC=$rrc" >>"$OUT/$ROLE.env"
cat "$OUT/$ROLE.ring.txt"
sleep 1	# the last ACKs and completions reach the reader
kill -INT $dpid
wait $dpid
drc=$?
tail -n 4 "$OUT/$ROLE.dump.err"
if [ -n "${MH_CUT:-}" ]; then
	# the ring must not end well: its wire is gone
	[ $rrc != 0 ] || die "rdma-ring-allreduce ended well with the wire cut"
	/usr/sbin/tc qdisc del dev "$WIRE_DEV" root 2>/dev/null
else
	[ $rrc = 0 ] || die "rdma-ring-allreduce failed ($rrc)"
fi
[ $drc = 0 ] || die "rdmatrace-dump exited $drc"

# The truth again after the run: the clocks may not have moved apart.
if [ "$ROLE" = B ]; then
	"$CP" measure 3 >"$OUT/clock-post.txt" || die "clock measure (after)"
	say "B - A after: $(cat "$OUT/clock-post.txt")"
else
	"$CP" serve 3 300 >/dev/null || die "clock serve (after)"
fi
rmmod rdmatrace || die "rmmod rdmatrace"
sync
say "done"
