#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The reload oops seen on the 7.2 debug kernel (branch mainline-boot, not
# yet in make check): the second load of rdmatrace in one boot, then the
# first rdma_restrack_add(), oopses ("RIP: 0010:0x0" from
# rdma_restrack_add+0x5, the ftrace-based kprobe entry of the restrack
# kretprobe).  Run: tests/vm/run --kernel mainline -- tests/vm/repro/reload-oops-7.2.sh
rdt-rdma-up rxe >/dev/null
KO=$RDT_ROOT/build/kmod/$(uname -r)/rdmatrace.ko
insmod "$KO" && ibv_devinfo -d rxe0 | head -2 && echo load1-ok
rmmod rdmatrace && echo unload1-ok
insmod "$KO" && echo load2-ok
ibv_devinfo -d rxe0 | head -2 && echo verbs-after-reload-ok
