#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Whose is the 7.2 reload oops (reload-oops-7.2.sh)?  The same probe twice
# in one boot, each time followed by a restrack add (ibv_devinfo opens a
# ucontext), without rdmatrace: a kretprobe_events probe, a kprobe_events
# probe, then kretprobe-reload/rt_probe.ko (kmod/restrack.c's probe alone);
# then rdmatrace itself.  The first step that oopses names the culprit.
# Build rt_probe.ko first (make -C KDIR M=$PWD/kretprobe-reload), then:
#   tests/vm/run --kernel mainline -- tests/vm/repro/kretprobe-reload.sh
here=$(cd "$(dirname "$0")" && pwd)
rdt-rdma-up rxe >/dev/null
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
use() { ibv_devinfo -d rxe0 >/dev/null && echo "  $1: verbs ok"; }
use "before any probe"
for kind in r p; do
	for i in 1 2 3; do
		echo "$kind:rtp rdma_restrack_add" >>$T/kprobe_events || echo "  no $kind probe"
		echo 1 >$T/events/kprobes/rtp/enable
		use "kprobe_events $kind round $i"
		echo 0 >$T/events/kprobes/rtp/enable
		echo "-:rtp" >>$T/kprobe_events
		use "kprobe_events $kind round $i removed"
	done
done
for i in 1 2 3; do
	insmod "$here/kretprobe-reload/rt_probe.ko" && use "rt_probe round $i"
	rmmod rt_probe && use "rt_probe round $i unloaded"
done
KO=$RDT_ROOT/build/kmod/$(uname -r)/rdmatrace.ko
for i in 1 2 3; do
	insmod "$KO" && use "rdmatrace round $i"
	rmmod rdmatrace && use "rdmatrace round $i unloaded"
done
echo DONE
