#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Figure 8 (--verbs) on the host: ns per post_send and per poll_cq (one
# completion) of verbs-bench's two provider-like functions, untraced,
# traced by verbs.bpf.c's programs (uprobe + uretprobe each, ring buffer
# drained by a thread), and under a bare tracefs uprobe + uretprobe on
# the same addresses (no BPF: the floor of this host), interleaved REPS
# times.
#   host-verbs.sh REPS CALLS
set -eu
REPS=$1 N=$2
B=${RDT_BUILD:-build}
VB=$B/bench/verbs-bench
[ "$(id -u)" = 0 ] || { echo "host-verbs: needs root, skipped" >&2; exit 0; }
[ -x "$VB" ] || { echo "host-verbs: $VB not built" >&2; exit 1; }
TF=/sys/kernel/tracing
[ -d $TF/events ] || mount -t tracefs nodev $TF 2>/dev/null || true
set -- $("$VB" offsets)
bin=$1 ps=$2 pc=$3
val() { awk -v k="$1" '$1 == k { print $2 }'; }
floor_on() {
	{ echo "p:rdt_vb_ps $bin:$ps"; echo "r:rdt_vb_psr $bin:$ps"
	  echo "p:rdt_vb_pc $bin:$pc"; echo "r:rdt_vb_pcr $bin:$pc"; } >>$TF/uprobe_events
	for e in rdt_vb_ps rdt_vb_psr rdt_vb_pc rdt_vb_pcr; do
		echo 1 >$TF/events/uprobes/$e/enable
	done
}
floor_off() {
	for e in rdt_vb_ps rdt_vb_psr rdt_vb_pc rdt_vb_pcr; do
		[ -e $TF/events/uprobes/$e ] || continue
		echo 0 >$TF/events/uprobes/$e/enable
		echo "-:$e" >>$TF/uprobe_events
	done
}
trap floor_off EXIT
for r in $(seq "$REPS"); do
	"$VB" plain "$N" >/tmp/vb.$$
	echo "R verbs_uprobe.post_send.untraced_ns $(val post_send_ns </tmp/vb.$$)"
	echo "R verbs_uprobe.poll_cq.untraced_ns $(val poll_cq_ns </tmp/vb.$$)"
	"$VB" traced "$N" >/tmp/vb.$$
	echo "R verbs_uprobe.post_send.traced_ns $(val post_send_ns </tmp/vb.$$)"
	echo "R verbs_uprobe.poll_cq.traced_ns $(val poll_cq_ns </tmp/vb.$$)"
	echo "R verbs_uprobe.traced_dropped $(val dropped </tmp/vb.$$)"
	if [ -w $TF/uprobe_events ]; then
		floor_on
		"$VB" plain "$N" >/tmp/vb.$$
		floor_off
		echo "R verbs_uprobe.post_send.floor_ns $(val post_send_ns </tmp/vb.$$)"
		echo "R verbs_uprobe.poll_cq.floor_ns $(val poll_cq_ns </tmp/vb.$$)"
	fi
done
rm -f /tmp/vb.$$
