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
splats() {
	dmesg | grep -cE 'WARNING:|BUG:|Oops|KASAN|UBSAN|possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage' || true
}
leaks() {
	K=/sys/kernel/debug/kmemleak
	if [ -w $K ]; then
		echo scan >$K; sleep 1; echo scan >$K
		grep -c 'unreferenced object' $K || true
	else
		echo -
	fi
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
