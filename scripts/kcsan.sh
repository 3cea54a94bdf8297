#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress's data-race run: the churn and unload stress tests once on
# the KCSAN kernel (tests/vm/kernels build-kcsan: debug.config less KASAN,
# kmemleak and fault injection, plus tests/vm/kcsan.config).  Every KCSAN
# report is sorted by where the two racing accesses are: in rdmatrace
# (KCSAN's summary or an access's top frame tagged "[rdmatrace]": none may
# remain, the run fails) or elsewhere (rxe, ib_core, the rest of the
# kernel: listed apart).  Any other splat fails the run as everywhere.
#
#   RDT_KCSAN_TESTS="churn unload"   the stress tests to run
#   RDT_STRESS=0                     their counts (0: make check's, 1: full)
set -uo pipefail
cd "$(dirname "$0")/.."
export RDT_ROOT=$PWD RDT_BUILD=$PWD/build RDT_STRESS=${RDT_STRESS:-0}
OUT=$RDT_BUILD/tests/stress
LOG=$OUT/logs
mkdir -p "$LOG"
note() { echo "kcsan: $*"; }

tests/vm/kernels build-kcsan || { note "the KCSAN kernel did not build"; exit 1; }
kv=$(tests/vm/kernels release kcsan) || exit 1
make -s -C kmod KDIR="$(tests/vm/kernels kdir kcsan)" OUT="$RDT_BUILD/kmod/$kv" ||
	{ note "rdmatrace.ko did not build for $kv"; exit 1; }
make -s -C kmod tools >/dev/null || exit 1
# Races in the module are only seen if its accesses are instrumented.
n=$(nm "$RDT_BUILD/kmod/$kv/rdmatrace.ko" | grep -c ' U __tsan_')
[ "$n" -gt 0 ] || { note "rdmatrace.ko for $kv has no KCSAN instrumentation"; exit 1; }
note "rdmatrace.ko calls $n KCSAN (__tsan_*) hooks"

# reports LOG: one line per KCSAN report, "module|other A / B" and the
# top frame of each access.  A report shows up to three times in the log
# (console, and tests/vm/run's dmesg scan and full copy; the console may
# drop the frames): one line per report, by its timestamp, with frames
# where any copy had them.
reports() {
	awk '
	function flush() {
		if (key == "") return
		if (!(key in what) || (best[key] == "" && top != "")) { what[key] = sum; best[key] = top }
		key = ""
	}
	{ sub(/\r$/, "") }	# the serial console ends its lines with CR LF
	/BUG: KCSAN:/ {
		flush(); key = $0; sub(/\].*/, "", key); sub(/.*\[ */, "", key)
		sum = $0; sub(/.*BUG: KCSAN: /, "", sum); top = ""; want = 0; next }
	key != "" && /(read|write|read-write).* of [0-9]+ bytes by / { want = 1; next }
	key != "" && want { f = $0; sub(/^[0-9]*:?\[[ 0-9.]+\] */, "", f); sub(/^ */, "", f)
		want = 0; if (f != "") top = top " " f; next }
	key != "" && /Reported by Kernel Concurrency Sanitizer/ { flush() }
	END {
		flush()
		for (k in what) {
			where = (what[k] " " best[k]) ~ /\[rdmatrace\]/ ? "module" : "other"
			print where "\t" k "\t" what[k] "\t" best[k]
		}
	}' "$1" | sort -t "$(printf '\t')" -k2,2n
}

fails=0
declare -A res

# The control: a module that races on purpose must give a report, sorted
# "other" (not rdmatrace): else KCSAN or this script's sorting is broken.
sd=$RDT_BUILD/tests/splat/$kv
rm -rf "$sd" && mkdir -p "$sd" && cp tests/vm/splat/* "$sd/" &&
	make -s -C "$(tests/vm/kernels kdir kcsan)" M="$sd" modules >/dev/null 2>&1 ||
	{ note "cannot build the racing control module"; exit 1; }
note "$kv: control (tests/vm/splat/rdt_splat.ko race=1)"
tests/vm/run --kernel kcsan --allow-splat --timeout 600 -- \
	insmod "$sd/rdt_splat.ko" race=1 >"$LOG/kcsan.control.log" 2>&1
reports "$LOG/kcsan.control.log" >"$LOG/kcsan.control.races"
if grep -q '^other.*rdt_splat_\(writer\|reader\)' "$LOG/kcsan.control.races" &&
   ! grep -q '^module' "$LOG/kcsan.control.races"; then
	control="the racing control module gave $(wc -l <"$LOG/kcsan.control.races") report(s), sorted outside rdmatrace"
	note "$control"
else
	note "control FAILED: no KCSAN report of rdt_splat_writer/reader sorted 'other' ($LOG/kcsan.control.log)"
	cat "$LOG/kcsan.control.races"
	exit 1
fi
for t in ${RDT_KCSAN_TESTS:-churn unload}; do
	note "$kv: $t"
	start=$(date +%s)
	# KCSAN's own counters after the test: proof that it watched.
	tests/vm/run --kernel kcsan --allow-splat --timeout 10800 -- \
		sh -c 'env RDT_STRESS="$1" RDT_KCSAN=1 "$2"; rc=$?
			sed "s/^/kcsan-stat /" /sys/kernel/debug/kcsan; exit $rc' \
		sh "$RDT_STRESS" "tests/stress/$t.test" >"$LOG/kcsan.$t.log" 2>&1
	rc=$?
	kstat() { sed -n "s/^kcsan-stat $1: *//p" "$LOG/kcsan.$t.log" | tail -1; }
	watched=$(kstat setup_watchpoints) counted=$(kstat data_races)
	secs=$(($(date +%s) - start))
	reports "$LOG/kcsan.$t.log" >"$LOG/kcsan.$t.races"
	nm=$(grep -c '^module' "$LOG/kcsan.$t.races")
	no=$(grep -c '^other' "$LOG/kcsan.$t.races")
	# Splats other than KCSAN's, as tests/vm/run would have failed on.
	ns=$(grep -aE 'WARNING:|BUG:|Oops|UBSAN|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage' \
		"$LOG/kcsan.$t.log" | grep -vc 'BUG: KCSAN:')
	if [ "$(kstat enabled)" != 1 ] || [ "${watched:-0}" -eq 0 ]; then
		res[$t]="FAIL (KCSAN not watching: enabled=$(kstat enabled) setup_watchpoints=${watched:-none})"
		fails=$((fails + 1))
	elif [ $rc = 0 ] && [ "$nm" = 0 ] && [ "$ns" = 0 ]; then
		res[$t]=PASS
	else
		res[$t]="FAIL (exit $rc, $nm races in rdmatrace, $ns other splats)"
		fails=$((fails + 1))
		grep -av '^\[' "$LOG/kcsan.$t.log" | tail -15
	fi
	res[$t.line]="| $t ($kv) | ${res[$t]} | $nm | $no | $watched | $counted | ${secs} s |"
done

echo
echo "| test | result | races in rdmatrace | races elsewhere (rxe, ib_core, ...) | watchpoints set | data_races counted by KCSAN | time |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for t in ${RDT_KCSAN_TESTS:-churn unload}; do echo "${res[$t.line]}"; done
echo "Control: $control."
echo
for t in ${RDT_KCSAN_TESTS:-churn unload}; do
	[ -s "$LOG/kcsan.$t.races" ] || continue
	echo "$t: the races (where, time, KCSAN's summary, the two top frames):"
	cut -c1-240 "$LOG/kcsan.$t.races"
done
exit $((fails > 0))
