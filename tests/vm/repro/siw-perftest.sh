#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# siw-perftest.sh MODE N, in a guest (tests/vm/run --kernel K -- THIS none 40):
# N rounds of perftest ib_write_lat + ib_send_bw over siw (rdma_cm, -R) on
# loopback, each side under timeout 60; MODE none: rdmatrace not loaded;
# mod: loaded, tracing on; verbs: also rdmatrace-dump -f --verbs running
# (uprobes on libsiw), as in tests/bpf/verbs-perftest.test.  Counts the
# pairs that failed, and how (doc/DESIGN.md, "perftest over siw").
# A pair still running after 30 s is a stall: both processes' state, wait
# channel and kernel stack, siw's QPs and cm_ids, and (MODE verbs) each
# one's last verbs records are printed before the timeout kills them.
# MODE verbs also runs an rxe pair before each siw pair, as the test does.
MODE=${1:-none} N=${2:-20}
DUMP=$(cd "$(dirname "$0")/../../.." && pwd)/build/bin/rdmatrace-dump
# stalled PID...: what each process waits on, and siw's view.
stalled() {
	local p t
	echo "---- stall: $*"
	for p in "$@"; do
		kill -0 "$p" 2>/dev/null || { echo "pid $p: ended"; continue; }
		echo "pid $p: $(tr '\0' ' ' </proc/$p/cmdline) state $(awk '{print $3}' /proc/$p/stat)"
		for t in /proc/$p/task/*; do
			echo " tid ${t##*/} $(cat $t/comm) wchan=$(cat $t/wchan) state=$(awk '{print $3}' $t/stat)"
			sed 's/^/   /' $t/stack 2>/dev/null | head -12
		done
	done
	rdma res show qp; rdma res show cm_id
	[ "$MODE" != verbs ] || for p in "$@"; do
		echo "last verbs records of $p:"
		grep "\"pid\":$p," /tmp/trace.json | grep '"source":"verbs"' | tail -6 | cut -c1-300
	done
	dmesg | tail -8
}
rdt-rdma-up all >/dev/null || { echo rdma-up failed; exit 1; }
. /run/rdt-rdma.env
case $MODE in
mod) modprobe rdmatrace enable=1 || exit 1 ;;
verbs)
	modprobe rdmatrace || exit 1
	"$DUMP" -f --no-nccl-plugin --no-counters --verbs -F json \
		-w /tmp/trace.json 2>/tmp/status &
	for _ in $(seq 600); do grep -q "^verbs: " /tmp/status && break; sleep 0.1; done
	grep "^verbs: " /tmp/status | cut -c1-80 ;;
esac
fails=0 port=19000
for i in $(seq $N); do
	for t in "ib_write_lat -n 200 -s 64" "ib_send_bw -n 500 -s 4096"; do
		port=$((port + 1))
		if [ $MODE = verbs ]; then
			timeout 60 $t -d "$RXE_DEV" -x "$RXE_GID" -p $port >/dev/null 2>&1 &
			rs=$!
			rdt-wait-listen --tcp $port
			timeout 60 $t -d "$RXE_DEV" -x "$RXE_GID" -p $port 127.0.0.1 >/dev/null 2>&1
			wait $rs
			port=$((port + 1))
		fi
		timeout 60 $t -d "$SIW_DEV" -R -p $port >/tmp/s 2>&1 &
		s=$!
		rdt-wait-listen any $port && rdt-wait-listen --tcp $port || echo nolisten
		timeout 60 $t -d "$SIW_DEV" -R -p $port "$SIW_IP" >/tmp/c 2>&1 &
		cp=$!
		# By the clock: under a KASAN guest 300 short sleeps took past
		# the 60 s timeout, and the stall was never seen.
		end=$((SECONDS + 30))
		while [ $SECONDS -lt $end ] && kill -0 $cp 2>/dev/null; do sleep 0.5; done
		if kill -0 $cp 2>/dev/null; then
			stalled $(pgrep -f "^${t%% *} .*-p $port( |\$)")
		fi
		wait $cp
		c=$?
		# The client gone and the server still waiting 5 s later: what
		# the server waits on (seen: client "Bad wc status 5", server
		# waiting until killed).
		end=$((SECONDS + 5))
		while [ $SECONDS -lt $end ] && kill -0 $s 2>/dev/null; do sleep 0.5; done
		if kill -0 $s 2>/dev/null; then
			stalled $(pgrep -f "^${t%% *} .*-p $port\$")
		fi
		wait $s; sv=$?
		if [ $c != 0 ] && ! grep -q "Can't produce a report" /tmp/c || [ $sv != 0 ] && ! grep -q "Can't produce a report" /tmp/s; then
			fails=$((fails + 1)); echo "round $i ${t%% *}: client $c server $sv"; tail -3 /tmp/c; tail -3 /tmp/s
		fi
	done
done
echo "MODE=$MODE rounds=$N pairs=$((2 * N)) failed=$fails"
