#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress: the fault tests of tests/stress/ at full count on the debug
# kernel (KASAN, lockdep, kmemleak, DEBUG_ATOMIC_SLEEP), hostile input and
# libFuzzer on the host, then a summary table (stdout and
# build/tests/stress/SUMMARY.md).
#
#   RDT_STRESS_KERNEL=debug     test-bed kernel for the guest tests
#   RDT_STRESS_ONLY="unload churn"   a subset of the guest tests
#                               (enable-race: tests/kmod/enable-race.test)
#   RDT_RACE_KERNELS="debian-6.1 debian-6.12 debian-6.12-rt"   kernels of enable-race
#   RDT_FUZZ_RUNS=10000000      libFuzzer executions on the decoder, and as
#                               many on the NCCL plugin's ring-file reader
#   RDT_STRESS_HOST=0           skip hostile input and libFuzzer (~17 min),
#                               e.g. when running the guest tests in parts
#   RDT_STRESS=1 is exported; RDT_STRESS=0 RDT_STRESS_SCALE=N runs the
#   reduced counts times N instead.
set -uo pipefail
cd "$(dirname "$0")/.."
export RDT_ROOT=$PWD RDT_BUILD=$PWD/build RDT_STRESS=${RDT_STRESS:-1}
K=${RDT_STRESS_KERNEL:-debug}
OUT=$RDT_BUILD/tests/stress
LOG=$OUT/logs
mkdir -p "$LOG"
# One run at a time: a run clears the logs its table must not show, and
# they are the other run's.
exec 8>"$OUT/.lock"
flock -n 8 || { echo "stress: another make stress is running (logs in $LOG): not started" >&2; exit 1; }
RUNS=${RDT_FUZZ_RUNS:-10000000}
fails=0
declare -A res

note() { echo "stress: $*"; }
kv() { kvl "$1" "$1" "$2"; }
# kvl TEST NAME KEY: KEY of "RESULT NAME ..." in TEST's log.
kvl() { sed -n "s/^RESULT $2 .*\b$3=\([^ ]*\).*/\1/p" "$LOG/$1.log" 2>/dev/null | tail -1; }

HOST=${RDT_STRESS_HOST:-1}
# This run's table must not show an earlier run's host figures.
[ "$HOST" != 0 ] || rm -f "$LOG/hostile.log" "$LOG"/fuzz.*.log "$LOG"/fuzz-ring.*.log
# Host: the helpers (the guest tests need rdt-scan), hostile input.
for t in build $([ "$HOST" = 0 ] || echo hostile); do
	note "host: $t"
	if tests/stress/$t.test >"$LOG/$t.log" 2>&1; then res[$t]=PASS; else res[$t]=FAIL; fails=$((fails + 1)); tail -20 "$LOG/$t.log"; fi
done

# libFuzzer on the decoder, at least RUNS executions (tests/lib/fuzz.test's target).
fz=FAIL fexec=0
[ "$HOST" = 0 ] && fz="not run" && res[hostile]="not run"
[ "$HOST" = 0 ] || note "host: libFuzzer, $RUNS executions"
if [ "$HOST" != 0 ] && command -v clang >/dev/null; then
	tests/fuzz-build.sh tests/lib/fuzz_file.c "$OUT/fuzz_file" \
		>"$LOG/fuzz-cc.log" 2>&1 || note "fuzzer build failed: $(tail -3 "$LOG/fuzz-cc.log")"
	C=$OUT/fuzz-corpus
	mkdir -p "$C"
	G=$RDT_BUILD/tests/lib/rdt-gen
	[ -x "$G" ] && "$G" -q 2 -n 5 -N 1 -T 1 -L 3 -u 1 -c 2 "$C/gen-a" >/dev/null
	[ -x "$G" ] && "$G" -q 1 -n 2 -b x "$C/gen-b" >/dev/null
	cp "$OUT"/real-*.rdt "$C/" 2>/dev/null
	# One fuzzer per CPU, each its share of the runs and its own seed.
	J=${RDT_FUZZ_JOBS:-$(nproc)}
	pids=()
	for j in $(seq 1 "$J"); do
		"$OUT/fuzz_file" -runs=$(((RUNS + J - 1) / J)) -seed=$((1000 + j)) -max_len=4096 \
			-rss_limit_mb=2048 -print_final_stats=1 "$C" >"$LOG/fuzz.$j.log" 2>&1 &
		pids+=($!)
	done
	fz=PASS
	for p in "${pids[@]}"; do wait "$p" || fz=FAIL; done
	[ -x "$OUT/fuzz_file" ] || fz=FAIL
	[ $fz = PASS ] || { fails=$((fails + 1)); tail -30 "$LOG"/fuzz.*.log; }
	fexec=$(cat "$LOG"/fuzz.*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
		awk '{ n += $1 } END { print n + 0 }')
fi
res[fuzz]=$fz

# libFuzzer on the live reader of the NCCL plugin's ring files, RUNS
# executions (issue 31; tests/nccl-plugin/fuzz.test's target and seeds):
# images mutated, and resized between the reader's passes.  A hang is
# libFuzzer's -timeout, counted apart from crashes.
rz=FAIL rexec=0 rcrash=0 rhang=0
[ "$HOST" = 0 ] && rz="not run"
if [ "$HOST" != 0 ] && command -v clang >/dev/null; then
	note "host: libFuzzer on the NCCL ring-file reader, $RUNS executions"
	RC=$OUT/fuzz-ring-corpus
	{ make -s -C producers/nccl-profiler && make -s -C tests/nccl-plugin &&
	  tests/fuzz-build.sh tests/nccl-plugin/fuzz_ring.c "$OUT/fuzz_ring" &&
	  tests/nccl-plugin/fuzz-seeds.sh "$RC"; } >"$LOG/fuzz-ring-cc.log" 2>&1 ||
		note "ring fuzzer build failed: $(tail -3 "$LOG/fuzz-ring-cc.log")"
	J=${RDT_FUZZ_JOBS:-$(nproc)}
	pids=()
	for j in $(seq 1 "$J"); do
		"$OUT/fuzz_ring" -runs=$(((RUNS + J - 1) / J)) -seed=$((2000 + j)) -max_len=8192 \
			-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="$LOG/fuzz-ring.$j." "$RC" >"$LOG/fuzz-ring.$j.log" 2>&1 &
		pids+=($!)
	done
	rz=PASS
	for p in "${pids[@]}"; do wait "$p" || rz=FAIL; done
	[ -x "$OUT/fuzz_ring" ] || rz=FAIL
	[ $rz = PASS ] || { fails=$((fails + 1)); tail -30 "$LOG"/fuzz-ring.*.log; }
	rexec=$(cat "$LOG"/fuzz-ring.*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
		awk '{ n += $1 } END { print n + 0 }')
	rhang=$(cat "$LOG"/fuzz-ring.*.log | grep -c 'ERROR: libFuzzer: timeout' || true)
	rcrash=$(cat "$LOG"/fuzz-ring.*.log | grep -c 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:\|ERROR: libFuzzer: deadly signal\|ERROR: libFuzzer: out-of-memory' || true)
fi
res[fuzz_ring]=$rz

# Guest tests, one guest at a time.  The timeout only catches a hang:
# unload's 1000 cycles took 105 min on 2 idle TCG cores and twice that
# with another guest beside it, past the 2 h this once allowed.
ALL="unload churn reader overload control security faults"
for t in ${RDT_STRESS_ONLY:-$ALL}; do
	[ "$t" != enable-race ] || continue	# below, on the Debian kernels
	note "$K: $t"
	start=$(date +%s)
	tests/vm/run --kernel "$K" --timeout 10800 -- env RDT_STRESS=$RDT_STRESS \
		${RDT_STRESS_SCALE:+RDT_STRESS_SCALE=$RDT_STRESS_SCALE} \
		tests/stress/$t.test >"$LOG/$t.log" 2>&1
	rc=$?
	case $rc in
	0) res[$t]=PASS ;;
	126) res[$t]="FAIL (kernel splat)"; fails=$((fails + 1)) ;;
	77) res[$t]=SKIP ;;
	*) res[$t]="FAIL (exit $rc)"; fails=$((fails + 1)) ;;
	esac
	res[$t.secs]=$(($(date +%s) - start))
	[ $rc = 0 ] || [ $rc = 77 ] || grep -v '^\[' "$LOG/$t.log" | tail -15
done

# Tracing switched on and off, and the module in and out, under traffic
# (issue 40): on the Debian kernels, each in its own guest, with a host core
# kept busy (tests/kmod/enable-race.test).  RDT_RACE_KERNELS to change them.
RACE_KERNELS=${RDT_RACE_KERNELS:-debian-6.1 debian-6.12 debian-6.12-rt}
RACE_CYCLES=$([ "$RDT_STRESS" = 1 ] && echo 10000 || echo $((200 * ${RDT_STRESS_SCALE:-1})))
for k in $RACE_KERNELS; do
	t=enable-race.$k
	case " ${RDT_STRESS_ONLY:-enable-race} " in *" enable-race "*) ;; *) res[$t]="not run"; continue ;; esac
	note "$k: enable-race, $RACE_CYCLES cycles"
	RDT_KERNEL=$k RDT_RACE_CYCLES=$RACE_CYCLES RDT_RACE_TIMEOUT=36000 \
		tests/kmod/enable-race.test >"$LOG/$t.log" 2>&1
	rc=$?
	case $rc in
	0) res[$t]=PASS ;;
	77) res[$t]=SKIP ;;
	*) res[$t]="FAIL (exit $rc)"; fails=$((fails + 1)); grep -v '^\[' "$LOG/$t.log" | tail -15 ;;
	esac
done

# Unload under traffic on PREEMPT_RT (issue 32), where a post can block in
# the driver: rmmod.test's rounds (1000) and rt-unload.test's unloads while
# a traced post sleeps in the driver (100), in debian-6.12-rt guests.
RT_KERNEL=debian-6.12-rt
RT_ROUNDS=$([ "$RDT_STRESS" = 1 ] && echo 1000 || echo $((20 * ${RDT_STRESS_SCALE:-1})))
for t in rmmod rt-unload; do
	case " ${RDT_STRESS_ONLY:-rt-unload} " in *" rt-unload "*) ;; *) res[rt.$t]="not run"; continue ;; esac
	n=$RT_ROUNDS
	[ $t = rmmod ] || n=$(( (RT_ROUNDS + 9) / 10 ))
	note "$RT_KERNEL: $t, $n rounds"
	tests/vm/run --kernel $RT_KERNEL --timeout 36000 -- env RDT_RMMOD_ROUNDS=$n \
		RDT_RT_UNLOAD_ROUNDS=$n tests/kmod/$t.test >"$LOG/rt.$t.log" 2>&1
	rc=$?
	case $rc in
	0) res[rt.$t]=PASS ;;
	126) res[rt.$t]="FAIL (kernel splat)"; fails=$((fails + 1)) ;;
	77) res[rt.$t]=SKIP ;;
	*) res[rt.$t]="FAIL (exit $rc)"; fails=$((fails + 1)); grep -v '^\[' "$LOG/rt.$t.log" | tail -15 ;;
	esac
	res[rt.$t.n]=$n
done

# A guest test that passed had no splat and, on a kernel with kmemleak, no
# leak report: tests/vm/run scans for both after the command and fails the
# run (exit 126) on any.  Tests that count them themselves say so in RESULT.
splat() {
	grep -q 'kernel splat' "$LOG/$1.log" 2>/dev/null && { echo '>0'; return; }
	v=$(kv "$1" splats)
	[ -n "$v" ] && { echo "$v"; return; }
	[ "${res[$1]}" = PASS ] && echo 0 || echo -
}
leak() {
	v=$(kv "$1" leaks)
	[ -n "$v" ] && { echo "$v"; return; }
	[ "${res[$1]}" = PASS ] && grep -q '^CONFIG_DEBUG_KMEMLEAK=y' \
		"$(tests/vm/kernels kdir "$K")/.config" 2>/dev/null && echo 0 || echo -
}
# row NAME LABEL WHAT [host]: one line of the table.  A test this run did
# not run shows no figures: its log is an earlier run's.  The host tests
# run outside a guest, so splats and leaks do not apply to them.
row() {
	local sl
	[ "${res[$1]:-}" = "not run" ] && { echo "| $2 | not run | - | - | - |"; return; }
	if [ "${4:-}" = host ]; then sl="- | -"; else sl="$(splat "$1") | $(leak "$1")"; fi
	echo "| $2 | ${res[$1]:-} | $3 | $sl |"
}
{
	echo "| test | result | what ran | splats | leaks |"
	echo "| --- | --- | --- | --- | --- |"
	for t in $ALL; do res[$t]=${res[$t]:-not run}; done
	row unload "unload under traffic ($K)" \
		"$(kv unload cycles) modprobe/rmmod cycles, $(kv unload runs) verified workload runs (rdt_workload, ibv_rc_pingpong --chk, rping -V on rxe and siw), $(kv unload failures) failed, $(kv unload connect_drops) siw connections dropped before any data (seen without rdmatrace too)"
	row churn "rdma link churn ($K)" \
		"$(kv churn cycles) add/delete cycles, $(kv churn devices) devices wrapped on add and unwrapped on remove, $(kv churn traced) traced"
	row reader "reader faults ($K)" \
		"$(kv reader kills) SIGKILL+restart, $(kv reader toggles) enable toggles, two readers, $(kv reader geometries) geometries"
	row overload "overload ($K)" \
		"$(kv overload seconds) s: $(kv overload generated) generated, $(kv overload stored) stored, $(kv overload dropped) dropped; drops exact per CPU: $(kv overload exact)"
	row control "control files ($K)" \
		"$(kv control params) bad module parameters, $(kv control writes) bad writes, state unchanged"
	row security "security ($K)" \
		"non-root opened 0 of $(kv security files) files; $(kv security u64_fields) 64-bit fields in $(kv security records) records, $(kv security kernel_addresses) kernel addresses; no payload"
	# One row per operation that had its allocations failed.
	for op in load newlink buffer_size n_subbufs enable verbs; do
		[ "${res[faults]:-not run}" = "not run" ] && break
		case $op in
		load) what="modprobe with rxe present: $(kvl faults faults_load_init refused_by_init) refused in rdmatrace's init, $(kvl faults faults_load_init untraced) loaded with rxe said untraced" ;;
		newlink) what="rdma link add while loaded: $(kvl faults faults_newlink_untraced untraced) devices added and said untraced" ;;
		buffer_size|n_subbufs) what="$op change while disabled" ;;
		enable) what="enable" ;;
		verbs) what="first verbs of a traced workload (open, PD, MR, CQ, QP to RTS, send/recv, poll)" ;;
		esac
		row faults "fault injection: $op ($K)" \
			"$what: $(kvl faults faults_$op sites) allocation sites, $(kvl faults faults_$op injected) failures injected (fail-nth), $(kvl faults faults_$op refused) refused cleanly, $(kvl faults faults_$op absorbed) absorbed; then normal operation"
	done
	[ "${res[faults]:-not run}" != "not run" ] || row faults "fault injection ($K)" "-"
	for k in $RACE_KERNELS; do
		row "enable-race.$k" "tracing on/off and unload under traffic ($k, a host core busy)" \
			"$(kv "enable-race.$k" cycles) cycles of load, enable, disable, enable, post_send tracepoint on and off, unload, in $(kv "enable-race.$k" secs) s, under two ibv_rc_pingpong pairs, rping on siw and $(kv "enable-race.$k" runs) verified rdt_workload/rping runs"
	done
	row rt.rmmod "rmmod under traffic ($RT_KERNEL)" \
		"${res[rt.rmmod.n]:-0} rounds of rmmod while rdt_workload and ibv_rc_pingpong run"
	row rt.rt-unload "rmmod while a traced post sleeps in the driver ($RT_KERNEL)" \
		"${res[rt.rt-unload.n]:-0} unloads, each waiting for the blocked post"
	row hostile "hostile input (host, ASan+UBSan)" \
		"$(kv hostile cases) mutated files, crashes $(kv hostile crashes)" host
	row fuzz "libFuzzer on the decoder (host)" \
		"${fexec:-0} executions, crashes $([ "$fz" = PASS ] && echo 0 || echo '>0')" host
	row fuzz_ring "libFuzzer on the NCCL plugin's ring-file reader, files resized between reads (host, ASan+UBSan)" \
		"${rexec:-0} executions, crashes $rcrash, hangs $rhang" host
} >"$OUT/SUMMARY.md"
echo
cat "$OUT/SUMMARY.md"
echo
note "$fails failed; logs in $LOG"
[ $fails = 0 ]
