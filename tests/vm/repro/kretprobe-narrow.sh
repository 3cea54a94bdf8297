#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Narrowing the 7.2 reload oops (kretprobe-reload.sh showed it with
# kprobe_events alone): a plain kprobe added, removed and added again, on
# a function outside RDMA (getppid), then on rdma_restrack_add.  Seen on
# the 7.2.13 debug image: the first arming works; from the second, every
# call of the probed function jumps to 0 ("RIP: 0010:0x0" from FUNC+0x5,
# the ftrace call site), and works again once the probe is removed.
#   tests/vm/run --kernel mainline -- tests/vm/repro/kretprobe-narrow.sh
rdt-rdma-up rxe >/dev/null
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
use() { ibv_devinfo -d rxe0 >/dev/null && echo "  $1: verbs ok"; }
round() { # KIND FUNC TRIGGER N
	echo "$1:rtp $2" >>$T/kprobe_events || { echo "  no $1 probe on $2"; return; }
	echo 1 >$T/events/kprobes/rtp/enable
	$3 && echo "  $1 $2 round $4: ok"
	echo 0 >$T/events/kprobes/rtp/enable
	echo "-:rtp" >>$T/kprobe_events
	$3 && echo "  $1 $2 round $4 removed: ok"
}
getppid_call() { sh -c 'test -n "$PPID"'; }
for i in 1 2 3; do round p __x64_sys_getppid getppid_call $i; done
for i in 1 2 3; do round p rdma_restrack_add "use p$i" $i; done

grep -c . $T/trace
echo DONE
