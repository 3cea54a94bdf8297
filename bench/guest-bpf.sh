#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Guest side of figure 7 (what the BPF rxe source adds per packet), run
# under -icount, where guest ns count guest instructions: ib_write_bw over
# rxe0 without and with `rdmatrace-dump --rxe` attached (its programs on
# rxe_xmit_packet, rxe_resp_queue_pkt and rxe_comp_queue_pkt (received
# packets, once rxe found their QP), rxe_cq_post and the retry timers, and
# its reader), interleaved REPS times.  `--rxe` as a user runs it: since ABI
# 1.15 packets are counted in a map and carried in the next CQE, not
# recorded (--rxe=packets records them).  Per traced run:
#   bpf.rxe.prog_per_packet    the programs' own run time per packet
#                              (kernel.bpf_stats_enabled; attach not counted)
#   bpf.rxe.added_per_packet   the whole slowdown of ib_write_bw's measured
#                              window per packet: programs, their attach
#                              (trampoline or int3), ring buffer, reader
#   bpf.rxe.<program>.per_run  each program's run time per run
#   guest-bpf.sh REPS ITERS
set -eu
REPS=$1 N=$2
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
DUMP=$RDT_BUILD/bin/rdmatrace-dump
rdt-rdma-up rxe >/dev/null
. /run/rdt-rdma.env
ulimit -l unlimited 2>/dev/null || true
W=$(mktemp -d)
G=${RXE_GID:+-x $RXE_GID}
C=/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters
[ -r "$C/sent_pkts" ] || { echo "guest-bpf: no $C/sent_pkts" >&2; exit 1; }
pkts() { echo $(( $(cat "$C/sent_pkts") + $(cat "$C/rcvd_pkts") )); }
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# One ib_write_bw run: "PACKETS WINDOW_NS" (the window from the client's
# average bandwidth, MiB/s; packets over the whole run, both directions).
bw() {
	ib_write_bw -d "$RXE_DEV" $G -s 65536 -n "$N" >"$W/srv" 2>&1 &
	sp=$!
	rdt-wait-listen --tcp 18515 60 >&2 || true
	p0=$(pkts)
	ib_write_bw -d "$RXE_DEV" $G -s 65536 -n "$N" "$RXE_IP" >"$W/cli" 2>&1 || true
	wait $sp || true
	p1=$(pkts)
	awk -v n="$N" -v p=$((p1 - p0)) '$1 == 65536 && NF >= 4 { mb = $4 }
		END { if (mb > 0) printf "%d %.0f\n", p, n * 65536 / (mb * 1048576) * 1e9 }' "$W/cli"
}

# The rxe programs' "NAME RUN_TIME_NS RUN_CNT", from bpftool's stats (names
# are cut to 15 characters: fentry_resp_que, kprobe_comp_que).
progs() {
	bpftool prog show | awk '/ name / {
		for (i = 1; i < NF; i++) {
			if ($i == "name") n = $(i + 1)
			if ($i == "run_time_ns") t = $(i + 1)
			if ($i == "run_cnt") c = $(i + 1)
		}
		if (n ~ /cq_post|_rcv|_que|xmit_pac|retransmit|rnr_nak/) print n, t + 0, c + 0
		n = ""; t = 0; c = 0 }'
}

for r in $(seq "$REPS"); do
	set -- $(bw)
	[ $# = 2 ] || { echo "guest-bpf: untraced ib_write_bw gave no figure: $(tail -n 3 "$W/cli" | tr '\n' ' ')" >&2; continue; }
	un_p=$1 un_ns=$2
	"$DUMP" -f --no-relay --no-nccl-plugin --no-counters --rxe -o "$W/t.rdt" 2>"$W/err" &
	dp=$!
	i=0
	until [ -n "$(progs)" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || { cat "$W/err" >&2; exit 1; }
		sleep 0.1
	done
	set -- $(bw)
	progs >"$W/progs"
	kill -INT $dp
	wait $dp || true
	[ $# = 2 ] || { echo "guest-bpf: traced ib_write_bw gave no figure: $(tail -n 3 "$W/cli" | tr '\n' ' ')" >&2; continue; }
	tr_p=$1 tr_ns=$2
	awk -v up="$un_p" -v un="$un_ns" -v tp="$tr_p" -v tn="$tr_ns" '
		{ t += $2; if ($3) printf "R bpf.rxe.%s.per_run %.1f\n", $1, $2 / $3 }
		END {
			printf "R bpf.rxe.packets %d\n", tp
			if (tp) printf "R bpf.rxe.prog_per_packet %.1f\n", t / tp
			if (tp && up) printf "R bpf.rxe.added_per_packet %.1f\n", tn / tp - un / up
		}' "$W/progs"
	lost=$(sed -n 's/^rdmatrace-dump: [0-9]* events, \([0-9]*\) lost.*/\1/p' "$W/err")
	echo "R bpf.rxe.lost ${lost:-nan}"
	rm -f "$W/t.rdt"
done
rm -rf "$W"
