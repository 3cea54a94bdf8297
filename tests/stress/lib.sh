# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the fault tests (sourced, POSIX sh, in the guest).
# Builds on tests/kmod/lib.sh (fail, skip, ok, rdt_load, rdt_collect, count,
# values, rdma_up, $D, $T, $CHECK).
#
# Counts: `make check` runs the reduced count; `make stress` sets
# RDT_STRESS=1 for the full one.  RDT_STRESS_SCALE=N multiplies the reduced
# count instead (for trying a size in between).
. "${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/kmod/lib.sh"

SB=${RDT_BUILD:-${RDT_ROOT:-.}/build}/tests/stress
DUMP=${RDT_BUILD:-${RDT_ROOT:-.}/build}/bin/rdmatrace-dump

# n FULL REDUCED: the count for this run.
n() {
	if [ "${RDT_STRESS:-0}" = 1 ]; then echo "$1"
	else echo $(($2 * ${RDT_STRESS_SCALE:-1})); fi
}

# result NAME KEY=VALUE...: one machine-readable line for scripts/stress.sh.
result() { echo "RESULT $*"; }

# Splat and leak bookkeeping of the guest so far (tests/vm/run also scans
# the whole log after the test; these numbers go into the summary table).
# RDT_KCSAN=1 (scripts/kcsan.sh): KCSAN's data-race reports are counted
# and sorted by that script, not here.
splats() {
	dmesg | grep -E 'WARNING:|BUG:|Oops|KASAN|UBSAN|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage' |
		if [ "${RDT_KCSAN:-0}" = 1 ]; then grep -v 'BUG: KCSAN:'; else cat; fi | wc -l
}
leaks() {
	K=/sys/kernel/debug/kmemleak
	if [ -w $K ]; then
		echo scan >$K; sleep 1; echo scan >$K
		# Less the kernel's own known leaks (each said on stderr).
		"${RDT_ROOT:-.}/tests/vm/known-leaks" <$K | grep -c 'unreferenced object' || true
	else
		echo -
	fi
}
# pstate PID: its state letter (R, S, D, Z, ...), empty when gone.  A child
# that exited is a zombie until waited for, and `kill -0` still finds it.
pstate() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1; }

# wait_max PID SECONDS: wait for PID, at most SECONDS; 124 when it had to
# be killed (a process stuck in the kernel may not die even then: the
# caller must not wait for it again).
wait_max() {
	_t=0
	while _st=$(pstate "$1") && [ -n "$_st" ] && [ "$_st" != Z ]; do
		if [ $_t -ge $(($2 * 5)) ]; then
			kill -9 "$1" 2>/dev/null
			return 124
		fi
		_t=$((_t + 1)); sleep 0.2
	done
	wait "$1"
}

# What is stuck, and where: each user task with its state and kernel wait
# channel, the kernel stack of those in D state and of the workload
# programs, and the kernel's list of blocked tasks (sysrq w).
stuck_report() {
	echo "tasks (pid state wchan command):"
	for d in /proc/[0-9]*; do
		_p=${d#/proc/}
		_c=$(tr '\0' ' ' 2>/dev/null <"$d/cmdline")
		[ -n "$_c" ] || continue
		_st=$(pstate "$_p")
		echo "  $_p $_st $(cat "$d/wchan" 2>/dev/null) $(echo "$_c" | cut -c1-160)"
		case "$_st $_c" in
		D*|*rping*|*pingpong*|*modprobe*|*rmmod*)
			sed 's/^/      /' "$d/stack" 2>/dev/null | head -16 ;;
		esac
	done
	[ -w /proc/sysrq-trigger ] && echo w >/proc/sysrq-trigger
	dmesg | tail -60
}

# loop NAME CMD...: run CMD until $T/stop exists and one run passed (at
# most 6 runs past the stop), one line per run: ok, fail, or abort (exit
# 2: see rping_on).
loop() {
	_n=$1; shift
	_ok=0 _late=0
	while [ ! -e "$T/stop" ] || { [ $_ok = 0 ] && [ $_late -lt 6 ]; }; do
		[ ! -e "$T/stop" ] || _late=$((_late + 1))
		"$@" >"$T/$_n.out" 2>&1
		case $? in
		0) echo ok; _ok=1 ;;
		2) echo "abort $(tail -2 "$T/$_n.out" | tr '\n' ' ')" ;;
		*) echo "fail $(tail -2 "$T/$_n.out" | tr '\n' ' ')"
		   # The first failed run's whole output, for the report.
		   [ -e "$T/$_n.fail" ] || cp "$T/$_n.out" "$T/$_n.fail" ;;
		esac
	done >"$T/$_n.log"
}
# loop_fail NAME: the first failed run's whole output, indented (stdout).
loop_fail() {
	[ -e "$T/$1.fail" ] || return 0
	echo "  $1: the first failed run said:"
	sed 's/^/    /' "$T/$1.fail"
}

# uptime_s: the guest's clock as dmesg stamps it, to set a workload's run
# beside the kernel's log and the load cycles.
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# rdma_report PID...: where an RDMA program is stuck: each process's state,
# wait channel and kernel stack, rxe's QPs (state, PSNs) and the port's
# counters (retries, drops), whether rdmatrace is loaded, the kernel's log.
rdma_report() {
	echo "at $(uptime_s) s:"
	for _p in "$@"; do
		echo "  pid $_p: state $(pstate "$_p") wchan $(cat "/proc/$_p/wchan" 2>/dev/null)"
		sed 's/^/      /' "/proc/$_p/stack" 2>/dev/null | head -16
	done
	echo "  rdma res show qp:"
	rdma res show qp 2>&1 | sed 's/^/    /'
	echo "  $RXE_DEV counters:"
	for _f in /sys/class/infiniband/"$RXE_DEV"/ports/1/hw_counters/*; do
		_v=$(cat "$_f" 2>/dev/null) && [ "$_v" != 0 ] && echo "    ${_f##*/} $_v"
	done
	echo "  rdmatrace: $(grep -c '^rdmatrace ' /proc/modules) loaded"
	dmesg | tail -20 | sed 's/^/    /'
}

# rping_on IP PORT: one verified rping exchange (-C 50 -V); exit 2 for a
# connection siw dropped before any data.
rping_on() { # IP PORT
	rping -s -a "$1" -p "$2" -C 50 -V >"$T/rp.$2" 2>&1 &
	_s=$!
	rdt-wait-listen "$1" "$2" || { kill $_s; wait_max $_s 30; return 1; }
	# -v: a failure says how far the exchange got.
	timeout -k 10 120 rping -c -a "$1" -p "$2" -C 50 -V -v >"$T/rc.$2" 2>&1 || {
		_p=$(grep -c 'ping data' "$T/rc.$2")
		echo "client: $_p of 50 pings, $(tail -1 "$T/rc.$2");" \
			"server: $(tail -4 "$T/rp.$2" | tr '\n' ' ')"
		kill $_s 2>/dev/null; wait_max $_s 30
		# Under load the debug kernel's siw sometimes drops a new
		# connection before the first ping (the server sees DISCONNECT,
		# both rpings then hang); it happens with rdmatrace never loaded
		# too, so it is counted apart.  Data that went wrong, or an
		# exchange cut after it began, is a failure.
		[ "$_p" = 0 ] && grep -q 'DISCONNECT EVENT' "$T/rp.$2" && return 2
		return 1; }
	wait_max $_s 60 || { echo "server did not end after the client"; return 1; }
}

leak_clear() { [ -w /sys/kernel/debug/kmemleak ] && echo clear >/sys/kernel/debug/kmemleak; true; }

# Second netdevs for devices that come and go (rxe and siw take one each).
dummy() { # NAME
	ip link show "$1" >/dev/null 2>&1 || ip link add "$1" type dummy || fail "ip link add $1"
	ip link set "$1" up
}

# The kernel workload once: verifies every completion and every byte.  The
# module loads once at a time: concurrent callers take turns.
workload() { # DEV COUNT [more params]
	_d=$1 _c=$2 _r=0; shift 2
	until mkdir "$T/workload.lock" 2>/dev/null; do sleep 0.1; done
	modprobe rdt_workload dev="$_d" count="$_c" "$@" || _r=1
	rmmod rdt_workload 2>/dev/null
	rmdir "$T/workload.lock"
	return $_r
}
