#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# siw-perftest.sh MODE N, in a guest (tests/vm/run --kernel K -- THIS none 40):
# N rounds of perftest ib_write_lat + ib_send_bw over siw (rdma_cm, -R) on
# loopback, each side under timeout 60; MODE none: rdmatrace not loaded;
# mod: loaded, tracing on; verbs: also rdmatrace-dump -f --verbs running
# (uprobes on libsiw), as in tests/bpf/verbs-perftest.test.  Counts the
# pairs that failed, and how (doc/DESIGN.md, "perftest over siw").
MODE=${1:-none} N=${2:-20}
rdt-rdma-up all >/dev/null || { echo rdma-up failed; exit 1; }
. /run/rdt-rdma.env
case $MODE in
mod) modprobe rdmatrace enable=1 || exit 1 ;;
verbs)
	modprobe rdmatrace || exit 1
	/work/main/build/bin/rdmatrace-dump -f --no-nccl-plugin --no-counters --verbs -F json \
		-w /tmp/trace.json 2>/tmp/status &
	for _ in $(seq 600); do grep -q "^verbs: " /tmp/status && break; sleep 0.1; done
	grep "^verbs: " /tmp/status | cut -c1-80 ;;
esac
fails=0 port=19000
for i in $(seq $N); do
	for t in "ib_write_lat -n 200 -s 64" "ib_send_bw -n 500 -s 4096"; do
		port=$((port + 1))
		timeout 60 $t -d "$SIW_DEV" -R -p $port >/tmp/s 2>&1 &
		s=$!
		rdt-wait-listen any $port && rdt-wait-listen --tcp $port || echo nolisten
		timeout 60 $t -d "$SIW_DEV" -R -p $port "$SIW_IP" >/tmp/c 2>&1
		c=$?
		wait $s; sv=$?
		if [ $c != 0 ] && ! grep -q "Can't produce a report" /tmp/c || [ $sv != 0 ] && ! grep -q "Can't produce a report" /tmp/s; then
			fails=$((fails + 1)); echo "round $i ${t%% *}: client $c server $sv"; tail -3 /tmp/c; tail -3 /tmp/s
		fi
	done
done
echo "MODE=$MODE rounds=$N pairs=$((2 * N)) failed=$fails"
