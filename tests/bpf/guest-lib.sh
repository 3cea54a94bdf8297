# Sourced by the guest tests of tests/bpf: tracer start/stop around a workload.
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
SELFTEST=$RDT_BUILD/bpf/rdt-bpf-selftest
DUMP=$RDT_BUILD/bin/rdmatrace-dump

fail() { echo "FAIL: $*"; [ -n "${T:-}" ] && [ -f "$T/status" ] && cat "$T/status"; exit 1; }

T=$(mktemp -d)
trap 'kill $TRACER 2>/dev/null; rm -rf "$T"' EXIT
TRACER=

[ -x "$SELFTEST" ] || fail "$SELFTEST not built (make -C producers/bpf on the host)"

# start_tracer ARGS...: run rdt-bpf-selftest ARGS, wait until attached.
start_tracer() {
	rm -f "$T/ready"
	"$SELFTEST" "$@" --ready="$T/ready" >"$T/trace" 2>"$T/status" &
	TRACER=$!
	for _ in $(seq 600); do
		[ -e "$T/ready" ] && { cat "$T/status"; return 0; }
		kill -0 $TRACER 2>/dev/null || break
		sleep 0.1
	done
	fail "tracer did not attach"
}

stop_tracer() {
	sleep 0.5
	kill -INT $TRACER
	wait $TRACER || fail "tracer exited with $?"
	TRACER=
	DROPPED=$(sed -n 's/^dropped=//p' "$T/trace")
	[ "${ALLOW_DROPS:-0}" = 1 ] || [ "$DROPPED" = 0 ] ||
		fail "records dropped: dropped=$DROPPED"
}

# preemptible: this kernel preempts anywhere (PREEMPT, PREEMPT_RT, or
# PREEMPT_DYNAMIC in full or lazy mode), as the rxe source decides.
preemptible() {
	case " $(uname -v) " in
	*" PREEMPT_RT "*|*" PREEMPT "*) return 0 ;;
	*" PREEMPT_DYNAMIC "*) grep -qE '\((full|lazy)\)' /sys/kernel/debug/sched/preempt 2>/dev/null ;;
	*) return 1 ;;
	esac
}

# rxe_veth_pair: rxe devices rxa and rxb on the two ends of a veth pair
# (rdt-rdma-up veth: rva 10.99.0.1, rvb 10.99.0.2, routed through it so
# netem can drop their packets), their RoCE v2 GID indexes in $ga and $gb.
rxe_veth_pair() {
	rdt-rdma-up veth || fail "rdt-rdma-up veth"
	. /run/rdt-rdma.env
	ga=$RXA_GID gb=$RXB_GID
}

# start_dump ARGS...: rdmatrace-dump -f ARGS to $T/trace.json and the
# binary $T/trace.rdt, attached; without the module's relay source unless
# DUMP_RELAY says otherwise (an option of rdmatrace-dump, or nothing), and
# without the port counters unless DUMP_COUNTERS does (--counters=MS).
start_dump() {
	"$DUMP" -f ${DUMP_RELAY---no-relay} --no-nccl-plugin ${DUMP_COUNTERS---no-counters} -o "$T/trace.rdt" \
		-F json -w "$T/trace.json" "$@" 2>"$T/status" &
	TRACER=$!
	for _ in $(seq 600); do
		grep -q "^verbs: " "$T/status" && break
		kill -0 $TRACER 2>/dev/null || break
		sleep 0.1
	done
	cat "$T/status"
	grep -q "^verbs: devices .*post_send@" "$T/status" || fail "verbs source did not attach"
}
stop_dump() {
	sleep 0.5
	kill -INT $TRACER
	wait $TRACER || fail "rdmatrace-dump exited with $?: $(tail -3 "$T/status")"
	TRACER=
	grep -q " 0 lost" "$T/status" || fail "events lost: $(tail -2 "$T/status")"
}
