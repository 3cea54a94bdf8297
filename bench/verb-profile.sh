#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Where a wrapped verb's instructions go: boot a guest with QEMU's gdb
# stub, single-step rdmatrace's post_send / post_recv / poll_cq wrappers
# (bench/verb_profile.py) with rdmatrace loaded disabled, then enabled, and
# print the instructions per call by kernel function, the wrapped
# original not counted.  Results: build/bench/profile/MODE/result.json.
#   bench/verb-profile.sh [--kernel K] [MODE...]   (MODE: disabled enabled)
#   RDT_PROF_SAMPLES=N   calls counted per wrapper (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
K=debian-6.1
[ "${1:-}" != --kernel ] || { K=$2; shift 2; }
MODES=${*:-disabled enabled}
command -v gdb >/dev/null || { echo "verb-profile: gdb missing: run 'make deps'" >&2; exit 1; }
OUT=$PWD/build/bench/profile
make -s -C bench kmod KDIR="$(tests/vm/kernels kdir "$K")" >/dev/null
make -s -C kmod tools >/dev/null	# rdt-check: the records the guest wrote
for m in $MODES; do
	case $m in disabled|enabled) ;; *) echo "verb-profile: unknown mode '$m'" >&2; exit 1 ;; esac
	D=$OUT/$m
	rm -rf "$D" && mkdir -p "$D"
	port=$((20000 + RANDOM % 20000))
	# A guest held by gdb sees time jump: no lockup watchdog, and the
	# TSC stays the clocksource (as in figure 1) instead of hpet.
	tests/vm/run --kernel "$K" --smp 1 --icount --timeout 900 --gdb $port \
		--append "tsc=reliable nowatchdog" -- \
		bench/guest-profile.sh "$D" "$m" 200 >"$D/guest.log" 2>&1 &
	vm=$!
	for _ in $(seq 600); do
		[ -e "$D/kallsyms" ] || ! kill -0 $vm 2>/dev/null || { sleep 0.5; continue; }
		break
	done
	[ -e "$D/kallsyms" ] || { cat "$D/guest.log" >&2; echo "verb-profile: the guest did not get ready" >&2; exit 1; }
	RDT_PROF_DIR=$D RDT_PROF_NONE=$([ "$m" = disabled ] && echo 1 || echo 0) gdb -nx -batch -ex 'set architecture i386:x86-64' \
		-ex "target remote 127.0.0.1:$port" -x bench/verb_profile.py >"$D/gdb.log" 2>&1 ||
		{ kill $vm 2>/dev/null; cat "$D/gdb.log" >&2; exit 1; }
	wait $vm || { cat "$D/guest.log" >&2; echo "verb-profile: the guest run failed" >&2; exit 1; }
	[ -s "$D/result.json" ] || { cat "$D/gdb.log" >&2; exit 1; }
done
python3 - "$OUT" $MODES <<'PY'
import json, sys
out, modes = sys.argv[1], sys.argv[2:]
for m in modes:
    r = json.load(open("%s/%s/result.json" % (out, m)))
    print("## rdmatrace %s: instructions per call outside the original" % m)
    print("wrappers entered: %s" % ", ".join("%s %d" % kv for kv in sorted(r.pop("_entered", {}).items())))
    for k, v in r.items():
        tot = sum(v["functions"].values())
        print("%-22s %6.1f  (min %d, max %d, %d calls)" % (k, tot, v["min"], v["max"], v["calls"]))
        for s, n in v["functions"].items():
            if n >= 0.5:
                print("    %-40s %6.1f" % (s, n))
PY
