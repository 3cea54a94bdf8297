#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Whose is the lost completion event of stress/unload on the 7.2 debug
# kernel?  The same four loops as that test (the kernel workload, ibv_rc_pingpong -e,
# rping on rxe and on siw) for DUR seconds, with rdmatrace per MODE:
#   none    never loaded
#   loaded  loaded once with tracing on, never unloaded
#   cycles  loaded and unloaded as stress/unload does, without end
# A pingpong client not done in 120 s (guest clock) is reported and the
# script says HUNG; otherwise the count of runs.
#   tests/vm/run --kernel debug --timeout 900 -- env MODE=none DUR=480 tests/vm/repro/pingpong-events.sh
. "${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/stress/lib.sh"
MODE=${MODE:-none} DUR=${DUR:-480}
rmmod rdmatrace 2>/dev/null || true
rdma_up
modprobe rdma_ucm 2>/dev/null || true
# rxe_state: each rxe QP's requester and completer state, from a kprobe
# (BTF arguments) on rxe_qp_to_attr, which `rdma res show qp` calls: the
# requester's WQE index against the send queue's producer and consumer,
# its PSN against the completer's, the send task's state, whether the
# retransmit timer is pending (pprev non-NULL), and need_retry.
rxe_state() {
	K=/sys/kernel/tracing
	[ -d $K/events ] || mount -t tracefs nodev $K
	echo 'p:rxe/q rxe_qp_to_attr qn=qp->elem.index wi=qp->req.wqe_index rpsn=qp->req.psn cpsn=qp->comp.psn prod=qp->sq.queue->buf->producer_index cons=qp->sq.queue->buf->consumer_index ts=qp->send_task.state nr=qp->req.need_retry tpp=qp->retrans_timer.entry.pprev so=qp->skb_out.counter' >>$K/kprobe_events || { echo "no rxe_qp_to_attr probe"; return; }
	echo 1 >$K/events/rxe/q/enable
	rdma res show qp >/dev/null
	echo 0 >$K/events/rxe/q/enable
	grep 'q:' $K/trace | sed 's/.*q: //'
}
pingpong() {
	stdbuf -oL ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID" -n 200 -c -e -p 18700 >"$T/pp.srv" 2>&1 &
	_s=$!
	rdt-wait-listen --tcp 18700 || { kill $_s; wait_max $_s 30; return 1; }
	stdbuf -oL ibv_rc_pingpong -d "$RXE_DEV" -g "$RXE_GID" -n 200 -c -e -p 18700 127.0.0.1 >"$T/pp.cli" 2>&1 &
	_c=$!
	_end=$(( $(cut -d. -f1 /proc/uptime) + 120 ))
	while _st=$(pstate "$_c") && [ -n "$_st" ] && [ "$_st" != Z ]; do
		[ "$(cut -d. -f1 /proc/uptime)" -lt $_end ] || {
			echo "HUNG at $(uptime_s)"; rdma_report "$_c" "$_s" >"$T/hung"
			rxe_state >>"$T/hung" 2>&1
			kill -9 "$_c" "$_s"; return 1; }
		sleep 0.2
	done
	wait "$_c" || { echo "client failed"; cat "$T/pp.cli"; return 1; }
	wait_max $_s 60
}
loop kernel workload "$RXE_DEV" 32 repeat=4 &
L="$!"
loop pingpong pingpong &
L="$L $!"
loop rping_rxe rping_on "$RXE_IP" 17800 &
L="$L $!"
[ -z "${SIW_DEV:-}" ] || { loop rping_siw rping_on "$SIW_IP" 17801 & L="$L $!"; }
[ "$MODE" = loaded ] && modprobe rdmatrace enable=1
end=$(( $(cut -d. -f1 /proc/uptime) + DUR ))
i=0
while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
	[ -e "$T/hung" ] && break
	if [ "$MODE" = cycles ]; then
		modprobe rdmatrace enable=$((i % 2)); [ $((i % 2)) = 0 ] || sleep 0.2
		rmmod rdmatrace; i=$((i + 1))
	else
		sleep 2
	fi
done
touch "$T/stop"
for l in $L; do wait_max "$l" 600; done
echo "MODE=$MODE cycles=$i: pingpong $(grep -c '^ok' "$T/pingpong.log") ok, $(grep -c "^fail" "$T/pingpong.log") failed;" \
	"kernel $(grep -c '^ok' "$T/kernel.log") ok; rping_rxe $(grep -c '^ok' "$T/rping_rxe.log") ok"
grep -v '^ok' "$T/pingpong.log" | head -5
[ ! -e "$T/hung" ] || { echo HUNG; cat "$T/hung"; }
