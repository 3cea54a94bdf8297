# Sourced by the guest tests of tests/bpf: tracer start/stop around a workload.
RDT_ROOT=${RDT_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
RDT_BUILD=${RDT_BUILD:-$RDT_ROOT/build}
SELFTEST=$RDT_BUILD/bpf/rdt-bpf-selftest
DUMP=$RDT_BUILD/bin/rdmatrace-dump

fail() { echo "FAIL: $*"; [ -n "${T:-}" ] && [ -f "$T/status" ] && cat "$T/status"; exit 1; }

T=$(mktemp -d)
trap 'kill $TRACER 2>/dev/null; rm -rf "$T"' EXIT
TRACER=

[ -x "$SELFTEST" ] || fail "$SELFTEST not built (make -C bpf on the host)"

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

# rxe_veth_pair: rxe devices rxa and rxb on the two ends of a veth pair,
# rva (10.99.0.1) and rvb (10.99.0.2), their RoCE v2 GID indexes in $ga
# and $gb.  rxe short-circuits traffic between local GIDs, so policy
# routing sends their packets out through the veth (not lo), where netem
# can drop them.
rxe_veth_pair() {
	modprobe -q crc32_generic; modprobe -q rdma_rxe; modprobe -q ib_uverbs; modprobe -q veth
	modprobe -q sch_netem
	ip link add rva type veth peer name rvb || fail "veth"
	ip addr add 10.99.0.1/32 dev rva; ip addr add 10.99.0.2/32 dev rvb
	ip link set rva up; ip link set rvb up
	for d in all rva rvb; do
		sysctl -qw net.ipv4.conf.$d.accept_local=1 net.ipv4.conf.$d.rp_filter=0 || true
	done
	sysctl -qw net.ipv4.conf.default.rp_filter=0 || true
	# Locally generated packets (iif lo) between the two addresses leave
	# through the veth; packets arriving on the veth are delivered locally.
	ip route add 10.99.0.2/32 dev rva table 100
	ip route add 10.99.0.1/32 dev rvb table 101
	ip rule add pref 10 from 10.99.0.1 to 10.99.0.2 iif lo lookup 100
	ip rule add pref 11 from 10.99.0.2 to 10.99.0.1 iif lo lookup 101
	ip neigh replace 10.99.0.2 lladdr "$(cat /sys/class/net/rvb/address)" dev rva nud permanent
	ip neigh replace 10.99.0.1 lladdr "$(cat /sys/class/net/rva/address)" dev rvb nud permanent
	rdma link add rxa type rxe netdev rva || fail "rxe on rva"
	rdma link add rxb type rxe netdev rvb || fail "rxe on rvb"
	gid() { # the RoCE v2 GID index of IPv4 address $2 on $1
		hex=$(echo "$2" | awk -F. '{ printf "%02x%02x:%02x%02x", $1, $2, $3, $4 }')
		for _ in $(seq 20); do
			for i in $(seq 0 15); do
				[ "$(cat /sys/class/infiniband/$1/ports/1/gids/$i 2>/dev/null)" = \
				  "0000:0000:0000:0000:0000:ffff:$hex" ] &&
				[ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$i)" = "RoCE v2" ] &&
				{ echo $i; return; }
			done
			sleep 0.5
		done
		return 1
	}
	ga=$(gid rxa 10.99.0.1) || fail "no GID on rxa"
	gb=$(gid rxb 10.99.0.2) || fail "no GID on rxb"
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
