#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo HANG=1`: where is it stuck, live.  Boots one test-bed guest
# (debian-6.12) that runs the ring AllReduce across a veth pair, traced
# with rdmatrace-dump -f --stuck=2, and drops every packet on one rank's
# link after a few seconds of collectives (scripts/demo-hang-guest.sh).
# Shows the live reports as they came, then the same trace read after the
# fact.  HOSTS=2: the two-host version (scripts/demo-hang-2hosts.sh).
#
#   scripts/demo-hang.sh [rdma-ring-allreduce size options]
#
# Environment: DEMO_OUT (out/demo-hang, inside the checkout), KERNEL or
# DEMO_KERNEL (debian-6.12), DEMO_TIMEOUT (600 s).
set -u
[ "${HOSTS:-1}" = 1 ] || exec "$(dirname "$0")/demo-hang-2hosts.sh" "$@"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${RDT_BUILD:-$ROOT/build}
DUMP=$B/bin/rdmatrace-dump
OUT=${DEMO_OUT:-$ROOT/out/demo-hang}
KERNEL=${KERNEL:-${DEMO_KERNEL:-debian-6.12}}
TIMEOUT=${DEMO_TIMEOUT:-600}

. "$ROOT/scripts/demo-lib.sh"
demo_out
demo_need "$DUMP" "$B/bin/rdma-ring-allreduce"

start=$(date +%s)
say "booting the $KERNEL guest (QEMU); the guest's output follows"
"$ROOT/tests/vm/run" --kernel "$KERNEL" --timeout "$TIMEOUT" -- \
	"$ROOT/scripts/demo-hang-guest.sh" "$OUT" "$@" || die "the guest run failed ($?)"
[ -s "$OUT/trace.rdt" ] || die "no trace recorded in $OUT/trace.rdt"
say "after the fact: rdmatrace-dump -i trace.rdt -q --stuck=2"
"$DUMP" -i "$OUT/trace.rdt" -q --stuck=2 2>"$OUT/stuck.txt" ||
	die "--stuck on the saved trace failed: $(tail -3 "$OUT/stuck.txt")"
grep '^stuck:' "$OUT/stuck.txt"
# The demo's own check: each side names a ring QP that rxe retried.
for f in dump.err stuck.txt; do
	grep -q "^stuck: cause: .*wr_id=0x[0-9a-f]* .*rxe retried [1-9][0-9]* times" "$OUT/$f" ||
		die "$f: no cause naming a retried WR"
done
say "done in $(( $(date +%s) - start )) s: trace and reports in $OUT"
cat <<EOF
  Read a report from its first line: the cause (here rxe retrying a ring WR, with the rank,
  collective and step that own its QP), then one qp line per stuck QP and one coll line per
  rank (README, "Where is it stuck").
EOF
