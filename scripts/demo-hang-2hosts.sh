#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo HANG=1 HOSTS=2`: where is it stuck, live.  The two-host ring of
# `make demo HOSTS=2` (tests/multihost/lib.sh: guests A and B on one wire,
# ranks 0-1 on A, 2-3 on B), each guest tracing with rdmatrace-dump -f
# --stuck=2; once each guest's rxe has sent 3000 packets it drops every
# packet it sends on the wire (netem loss 100 %), and the ring hangs until
# its timeout (60 s).  Shows each guest's live report as it came, then the
# report of the two traces merged on the host, which names the other host.
#
#   scripts/demo-hang-2hosts.sh [rdma-ring-allreduce size options]
#         (default: 4 KiB collectives, more than run before the cut)
#
# Environment: DEMO_OUT (out/demo-hang, inside the checkout), DEMO_KERNEL
# (debian-6.12), DEMO_TIMEOUT (900 s per guest).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
OUT=${DEMO_OUT:-$ROOT/out/demo-hang}
KERNEL=${DEMO_KERNEL:-debian-6.12}
TIMEOUT=${DEMO_TIMEOUT:-900}
export MH_SKEW=0 MH_CUT=3000 MH_TIMEOUT=60 MH_STUCK=2
[ $# -gt 0 ] || set -- -b 4K -e 4K -f 2 -n 100000 -w 1 -C 4K

. "$ROOT/scripts/demo-lib.sh"
demo_out
demo_need "$DUMP" "$B/bin/rdma-ring-allreduce" "$B/tests/multihost/rdt-clockpair"
. "$ROOT/tests/multihost/lib.sh"

start=$(date +%s)
say "booting two $KERNEL guests, A (192.0.2.1) and B (192.0.2.2), on one wire; each cuts its side after $MH_CUT rxe packets"
mh_run "$KERNEL" "$TIMEOUT" "$OUT" "$@" || { mh_consoles "$OUT"; die "a guest failed (A exited $MH_RC_A, B $MH_RC_B)"; }
grep -h "^mh-guest" "$OUT/A.console" "$OUT/B.console"
for g in A B; do
	say "guest $g: rdmatrace-dump -f --stuck=2, live (its standard error)"
	grep '^stuck:' "$OUT/$g.dump.err" | head -n 16
	say "guest $g: the ring's last words"
	tail -n 2 "$OUT/$g.ring.txt"
done
say "on the host: the two traces merged, rdmatrace-dump -i A.rdt -i B.rdt --stuck=2"
"$DUMP" -i "$OUT/A.rdt" -i "$OUT/B.rdt" -q --stuck=2 2>"$OUT/stuck.txt" ||
	die "merged --stuck failed: $(tail -3 "$OUT/stuck.txt")"
grep '^stuck:' "$OUT/stuck.txt" | head -n 12
grep -q '^stuck: cause: .* on host rdt-host-[AB]' "$OUT/stuck.txt" ||
	die "the merged report does not name the other host"
say "done in $(( $(date +%s) - start ))s: traces, consoles and reports in $OUT"
