// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic trace generator for the library tests.  Every parameter that
 * a test asserts on (counts, latencies, bandwidths) follows from the
 * command line, so tests compute expectations independently of the code
 * under test.
 *
 *   rdt-gen [opts] OUT
 *   -q QPS      queue pairs (qpn 100.., default 2)
 *   -n WRS      sends per QP, each completed (default 10)
 *   -l NS       base latency; WR i completes after NS + (i % 10) * 100
 *   -t NS       first timestamp (default 1000000)
 *   -s NS       spacing between posts on a QP (default 1000)
 *   -c CPUS     records spread over CPUs (cpu = i % CPUS)
 *   -b BOOTID   boot id (default "boot-a"); -o NS realtime offset
 *   -H HOST     host name
 *   -L N        lost events announced by a SUBBUF on cpu 1
 *   -G N        then a SUBBUF on cpu 1 whose seq says N sub-buffers were
 *               skipped unread (relay's overwrite branch)
 *   -u N        records of an unknown type (RDT_EV_MAX: never assigned)
 *   -N N        ncclAllReduce calls (4 MiB float, 4 ranks, 1 ms each)
 *   -T N        TCP retransmits inside the first collective
 *   -P N        port counter samples (rxe0 port 1): N of rcvd_seq_err, delta
 *               1 each, inside the first collective; one of sent_pkts,
 *               delta 5, between the first two collectives (in none)
 *   -W BYTES    each QP_MODIFY this many bytes shorter than ABI 1.11 wrote
 *               it (no GIDs): 8 is how a module older than 1.9 wrote it
 *               (no dur_ns); -W 0 as 1.11;
 *               without -W, the modify of state s (0..2) took 100 (s + 1) ns
 *               in its driver (dur_ns), its record stamped when it returned
 *   -A MAJOR    file header ABI major (to test refusal)
 *   -V MAJOR    record header version
 *   -p PID      pid (default 4242)
 *   -F N        per QP, after its sends, N failed posts of two WRs (wr_id
 *               1000+j posted and completed, 2000+j not: POST_FAIL with
 *               bad_index 1), each reposted alone 500 ns later and
 *               completed; every completion comes NS (-l) after its post
 *
 *   -I N        N of NCCL's own IB WRs, each seen twice: by the profiler
 *               plugin (an RDT_EV_NP_NET_IB event, qpn 300, wr_id
 *               0x9000 + i % 4 as NCCL reuses its request slots, 65536 bytes, RDMA_WRITE_WITH_IMM, its STOP the
 *               completion) and by --verbs (VERBS_POST_SEND 200 ns after
 *               the plugin's start, VERBS_WC 300 ns before its stop),
 *               every 10 us from start + 7 ms; WR i completes after
 *               5000 + (i % 10) * 100 ns (plugin start -> stop).
 *               -I N,s: the last WR never completes (no WC, no STOP), and
 *               the trace ends 3 s after it; -I N,p: the plugin's view
 *               only (no --verbs records); both: -I N,s,p
 *   -J N        rxe's CQEs too (the BPF --rxe source): each send's
 *               completion is also an RDT_EV_RXE_CQE half-way between its
 *               post and its poll, and every send of a QP has wr_id 7 (as
 *               ibv_rc_pingpong reuses its wr_ids); N 2: the last QP is
 *               never polled (its CQEs only)
 *   -k N        with -J, N 1: each CQE carries its QP's packets since its
 *               last (ABI 1.15): 4 of 1052 bytes sent, PSNs 4c..4c+3 for
 *               the QP's c-th CQE, and 1 ACK of 32 bytes received, PSN
 *               4c+3; N 2: the CQEs are 1.14 records, 48 bytes shorter
 *   -R N        N allreduce collectives marked begin/end (RDT_EV_COLL_MARK)
 *               by 4 ranks, pids 5000+k, seq 0..N-1, one every 1 ms from
 *               start + 50 ms: rank k begins 10 us * k in, posts a send
 *               on QP 200+k 5 us after its begin, completed 50 us later,
 *               and ends 100 us after its begin: each takes 130 us from
 *               the first begin to the last end
 *   -Z I        with -R: collective I is slow: rank 2 begins 5 ms in
 *               (last, 5 ms after rank 0), rank 1's send takes 4 ms and
 *               rank 1 ends 20 us after its completion; 3 rxe retries on
 *               QP 201 (the third a NAK sequence error) and one
 *               rcvd_seq_err sample (+2) inside: it takes 5.1 ms, and the
 *               next ones begin 5 ms later than above
 *   -z I        with -R: collective I is slow but not 3x: rank 1's send
 *               takes 170 us and rank 1 ends 20 us after its completion:
 *               it takes 205 us (the others 130 us)
 *   -U I[,s]    with -R: collective I never ends: each rank begins it as
 *               usual and marks steps (RDT_EV_COLL_STEP, 6 steps) 0..3,
 *               step s at begin + 4 us + s * 20 us, each with a send on
 *               its QP 1 us later, completed 10 us after; but rank 2
 *               stops after step 1: its step 1 send completes, or with
 *               ",s" never does.  No collective follows; the trace ends
 *               with a COMM record 3 s after the collective began
 *   -O          after every QP's sends, the QPs of even index (qpn 100,
 *               102, ...) are destroyed; then QP 101, whose peer with -g
 *               is QP 100, posts a send that never completes, and the
 *               trace ends with a COMM record 3 s later (the destroys of
 *               many QPs, each looking for its peer: -q 66000 -g 1,1 -O)
 *   -g OWN,PEER QPs pair up on the host (100 with 101, 102 with 103, ...:
 *               dest_qpn) and each QP_MODIFY carries GIDs (ABI 1.12): its
 *               own ::ffff:192.0.2.OWN and its peer's ::ffff:192.0.2.PEER.
 *               Two hosts' files made with -g 1,2 and -g 2,1 hold the same
 *               QPNs: QP 100 of the first is QP 101's of the second's peer,
 *               not its own host's QP 101 (which has the same numbers)
 *   -e N        every Nth polled send completion (in generation order) has
 *               status RETRY_EXC_ERR (12) instead of SUCCESS
 *   -K N        N poll_cq calls of 8 on cq 9 (qpn 300, cpu 0), 1 us apart:
 *               call k returns k % 4 completions.  None: a POLL_CQ record
 *               (ret 0).  Some: ABI 1.8, no POLL_CQ, the last completion's
 *               poll_requested 8; but when k % 8 == 3 as a 1.7 module
 *               wrote it (poll_requested 0, then POLL_CQ ret 3).  Then one
 *               failed call (POLL_CQ ret -22).
 *
 *   rdt-gen -M HOSTS [opts] PREFIX    several hosts' files, PREFIX.h0 ...:
 *               rxe packets between them (rxe_xmit on the sender, rxe_rcv
 *               on the receiver), links 0-1, 1-2, ... (and N-1 - 0 with
 *               -Y ring, N > 2).  True time t (ns from the first message);
 *               host k's CLOCK_MONOTONIC is base_k + t (1 + k D 1e-6) and
 *               its header's realtime offset is off by k S, so that
 *               clock(k) - clock(0) after the headers = k S + k D 1e-6 t.
 *   -S NS       per-host skew S (default 0)
 *   -D PPM      per-host drift D (default 0)
 *   -m N        messages per link and direction (default 1000)
 *   -s NS       between a link's messages (default 100000)
 *   -d NS       least one-way delay (default 5000), -j NS plus a random
 *               0..NS (default 20000)
 *   -1          one direction only: the higher host's packets to the lower
 *               one are sent (rxe_xmit) but not seen received
 *   -E          the drift turns around half way (t < T/2: D, then -D, T the
 *               last message's time): no one line fits
 *   -C NS       the first message of link 0-1 received NS before it was
 *               sent (a broken assumption: the bounds cross)
 *   -X          every RC packet also received, 1 ms earlier, by another
 *               device (7) of the receiving host, which sends nothing: its
 *               QPNs are another device's, not to be paired
 *   -r SEED     random seed (default 1)
 *   Every 10th message is also sent as a UD packet (ignored by the
 *   pairing) received 1 ms before it was sent, and every 25th is
 *   retransmitted 500 us later (a second send and receive).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmatrace/wire.h>

static union {
	struct rdt_hdr h;
	unsigned char b[256];
} *recs;
static size_t nrec, caprec;
static unsigned int ncpus = 1, version = RDT_ABI_MAJOR;
static uint32_t pid = 4242;
static long shorter = -1;	/* -W: -1 none */
static int gid_own, gid_peer;	/* -g */
static unsigned long cqes;	/* -J */
static unsigned long cqe_counts;	/* -k */
static uint32_t unpolled_qpn;	/* -J 2: this QP's sends are not polled */
static unsigned long ncclwrs;	/* -I */
static unsigned long errevery, npolled;	/* -e */

static void *rec(unsigned int type, size_t size, uint64_t ts, uint32_t dev)
{
	struct rdt_hdr *h;

	if (nrec == caprec) {
		caprec = caprec ? caprec * 2 : 1024;
		recs = realloc(recs, caprec * sizeof(*recs));
		if (!recs)
			exit(1);
	}
	memset(&recs[nrec], 0, sizeof(recs[nrec]));
	h = &recs[nrec].h;
	h->magic = RDT_REC_MAGIC;
	h->version = (__u8)version;
	h->source = type >= 128 ? RDT_SRC_BPF : RDT_SRC_KMOD;
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = pid;
	h->cpu = (uint32_t)(nrec % ncpus);
	h->dev = dev;
	nrec++;
	return h;
}

/* Stable: equal timestamps keep generation order. */
/* A send WR at @t; if @done, its completion @lat later. */
static void post(uint32_t qpn, uint64_t wr_id, uint16_t index, uint64_t t,
		 bool done, uint64_t lat)
{
	struct rdt_ev_post_send *p = rec(RDT_EV_POST_SEND, sizeof(*p), t, 0);
	struct rdt_ev_poll_cq_wc *w;

	p->qpn = qpn;
	p->wr_id = wr_id;
	p->index = index;
	p->opcode = 2;	/* SEND */
	p->total_len = 4096;
	p->num_sge = 1;
	p->send_flags = 2;
	if (cqes)
		p->wr_id = wr_id = 7;
	if (!done)
		return;
	if (cqes) {
		struct rdt_ev_rxe_cqe *c = rec(RDT_EV_RXE_CQE, cqe_counts == 2 ?
					       offsetof(struct rdt_ev_rxe_cqe, tx_bytes) :
					       sizeof(*c), t + lat / 2, 0);

		c->hdr.pid = c->hdr.tid = 0;	/* rxe's kworker */
		c->wr_id = wr_id;
		c->qpn = qpn;
		c->cq_id = 1;
		c->byte_len = 4096;
		c->user = 1;
		if (cqe_counts == 1) {
			/* the QP's n-th CQE */
			static uint32_t nth[1024];
			uint32_t n = nth[qpn % 1024]++;

			c->counted = 1;
			c->tx_pkts = 4;
			c->tx_bytes = 4 * 1052;
			c->tx_psn_first = 4 * n;
			c->tx_psn_last = 4 * n + 3;
			c->rx_pkts = 1;
			c->rx_bytes = 32;
			c->rx_psn_first = c->rx_psn_last = 4 * n + 3;
		}
		if (qpn == unpolled_qpn)
			return;
	}
	w = rec(RDT_EV_POLL_CQ_WC, sizeof(*w), t + lat, 0);
	w->qpn = qpn;
	w->wr_id = wr_id;
	w->byte_len = 4096;
	w->cq_id = 1;
	if (errevery && ++npolled % errevery == 0)
		w->status = 12;		/* IB_WC_RETRY_EXC_ERR */
}

/* -I: see the usage above. */
static void nccl_wrs(unsigned long n, uint64_t t0, bool last_hangs,
		     bool plugin_only)
{
	for (unsigned long i = 0; i < n; i++) {
		uint64_t t = t0 + i * 10000, lat = 5000 + (i % 10) * 100;
		bool hangs = last_hangs && i == n - 1;
		struct rdt_ev_np_net_ib *ib = rec(RDT_EV_NP_NET_IB, sizeof(*ib), t, RDT_NO_DEV);
		struct rdt_ev_np_stop *st;

		ib->hdr.source = RDT_SRC_NCCL_PLUGIN;
		ib->ids.id = 0x7000 + i;
		ib->ids.rank = 0;
		ib->ids.ntype = RDT_NP_NET_PLUGIN;
		ib->wr_id = 0x9000 + i % 4;
		ib->length = 65536;
		ib->qpn = 300;
		ib->opcode = 1;		/* IBV_WR_RDMA_WRITE_WITH_IMM */
		ib->ib_type = 1;
		if (!plugin_only) {
			struct rdt_ev_post_send *p =
				rec(RDT_EV_VERBS_POST_SEND, sizeof(*p), t + 200, 0);

			p->hdr.source = RDT_SRC_VERBS;
			p->qpn = 300;
			p->wr_id = 0x9000 + i % 4;
			p->opcode = 1;		/* IB_WR_RDMA_WRITE_WITH_IMM */
			p->total_len = 65536;
			p->num_sge = 1;
			p->send_flags = 2;
		}
		if (!plugin_only && !hangs) {
			struct rdt_ev_poll_cq_wc *w =
				rec(RDT_EV_VERBS_WC, sizeof(*w), t + lat - 300, 0);

			w->hdr.source = RDT_SRC_VERBS;
			w->qpn = 300;
			w->wr_id = 0x9000 + i % 4;
			w->cq_id = 3;
		}
		if (hangs) {	/* the trace goes on 3 s, the WR never done */
			struct rdt_ev_comm *cm = rec(RDT_EV_COMM, sizeof(*cm),
						     t + 3000000000ull, RDT_NO_DEV);

			snprintf(cm->comm, sizeof(cm->comm), "gen-end");
			break;
		}
		st = rec(RDT_EV_NP_STOP, sizeof(*st), t + lat, RDT_NO_DEV);
		st->hdr.source = RDT_SRC_NCCL_PLUGIN;
		st->ids.id = 0x7000 + i;
		st->ids.rank = -1;
		st->ids.ntype = RDT_NP_NET_PLUGIN;
	}
}

/* -R/-Z: see the usage above. */
static void mark(uint32_t rank, uint64_t seq, uint32_t phase, uint64_t t)
{
	struct rdt_ev_coll_mark *m = rec(RDT_EV_COLL_MARK, sizeof(*m), t,
					 RDT_NO_DEV);

	m->hdr.source = RDT_SRC_USER;
	m->hdr.pid = m->hdr.tid = 5000 + rank;
	m->bytes = 1 << 20;
	m->seq = seq;
	m->op = 1;
	m->rank = (__s32)rank;
	m->nranks = 4;
	m->phase = phase;
}

static void step_mark(uint32_t rank, uint64_t seq, uint32_t step, uint64_t t)
{
	struct rdt_ev_coll_step *m = rec(RDT_EV_COLL_STEP, sizeof(*m), t,
					 RDT_NO_DEV);

	m->hdr.source = RDT_SRC_BPF;
	m->hdr.pid = m->hdr.tid = 5000 + rank;
	m->seq = seq;
	m->op = 1;
	m->rank = (__s32)rank;
	m->nranks = 4;
	m->step = step;
	m->steps = 6;
}

/* -U: collective @i, in which rank 2 stops after its step 1. */
static void ring_stall(unsigned long i, uint64_t t, bool send_hangs)
{
	uint32_t saved = pid;

	for (uint32_t k = 0; k < 4; k++) {
		uint64_t b = t + 10000 * k;

		mark(k, i, 0, b);
		for (uint32_t st = 0; st <= (k == 2 ? 1u : 3u); st++) {
			step_mark(k, i, st, b + 4000 + st * 20000);
			pid = 5000 + k;
			post(200 + k, 100 * i + st, 0, b + 5000 + st * 20000,
			     !(send_hangs && k == 2 && st == 1), 10000);
			pid = saved;
		}
	}
	{
		struct rdt_ev_comm *cm = rec(RDT_EV_COMM, sizeof(*cm),
					     t + 3000000000ull, RDT_NO_DEV);

		snprintf(cm->comm, sizeof(cm->comm), "gen-end");
	}
}

static void ring_colls(unsigned long n, unsigned long slow, uint64_t t0,
		       unsigned long stall, bool send_hangs, unsigned long mild)
{
	uint32_t saved = pid;

	for (unsigned long i = 0; i < n; i++) {
		/* the ones after a slow one start once it is over */
		uint64_t t = t0 + i * 1000000 + (i > slow ? 5000000 : 0);

		if (i == stall) {
			ring_stall(i, t, send_hangs);
			return;
		}

		for (uint32_t k = 0; k < 4; k++) {
			uint64_t b = t + 10000 * k, lat = 50000, end = b + 100000;

			if (i == slow && k == 2) {
				b = t + 5000000;
				end = b + 100000;
			}
			if (i == slow && k == 1) {
				lat = 4000000;
				end = b + 5000 + lat + 20000;
			}
			if (i == mild && k == 1) {
				lat = 170000;
				end = b + 5000 + lat + 20000;
			}
			mark(k, i, 0, b);
			pid = 5000 + k;
			post(200 + k, i, 0, b + 5000, true, lat);
			pid = saved;
			mark(k, i, 1, end);
		}
		if (i != slow)
			continue;
		for (int r = 0; r < 3; r++) {
			struct rdt_ev_rxe_retry *x = rec(RDT_EV_RXE_RETRY,
							 sizeof(*x), t + 1000000 + r * 500000, 0);

			x->hdr.source = RDT_SRC_BPF;
			x->hdr.pid = x->hdr.tid = 77;	/* a kworker */
			x->qpn = 201;
			x->psn = 1000 + (uint32_t)r;
			x->kind = r == 2 ? RDT_RXE_NAK_SEQ : RDT_RXE_RETRANSMIT;
		}
		{
			struct rdt_ev_port_counter *p = rec(RDT_EV_PORT_COUNTER,
							    sizeof(*p), t + 2500000, 0);

			p->hdr.source = RDT_SRC_USER;
			memcpy(p->devname, "rxe0", 5);
			p->port = 1;
			p->kind = RDT_CTR_HW_COUNTERS;
			memcpy(p->name, "rcvd_seq_err", 13);
			p->delta = 2;
			p->value = 2;
		}
	}
}

static void poll_summary(uint64_t t, int ret)
{
	struct rdt_ev_poll_cq *p = rec(RDT_EV_POLL_CQ, sizeof(*p), t, 0);

	p->hdr.cpu = 0;
	p->cq_id = 9;
	p->requested = 8;
	p->ret = ret;
}

/* -K: see the usage above. */
static void polls(unsigned long n, uint64_t t0)
{
	for (unsigned long k = 0; k <= n; k++) {
		uint64_t t = t0 + k * 1000;
		unsigned int got = k < n ? k % 4 : 0;
		bool old = got && k % 8 == 3;

		if (k == n) {
			poll_summary(t, -22);
			break;
		}
		for (unsigned int i = 0; i < got; i++) {
			struct rdt_ev_poll_cq_wc *w =
				rec(RDT_EV_POLL_CQ_WC, sizeof(*w), t, 0);

			w->hdr.cpu = 0;
			w->cq_id = 9;
			w->qpn = 300;
			w->wr_id = k << 8 | i;
			w->opcode = 128;	/* RECV */
			w->index = (uint16_t)i;
			w->poll_requested = i == got - 1 && !old ? 8 : 0;
		}
		if (!got || old)
			poll_summary(t, (int)got);
	}
}

static uint64_t rnd_state = 1;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

struct mh {
	unsigned long hosts, msgs, spacing, delay, jitter, cross;
	long long skew;
	double drift;
	bool one_way, ring, tent, decoy;
	uint64_t span;
};

/* Host @k's CLOCK_MONOTONIC at true time @t. */
static uint64_t mono(const struct mh *m, unsigned long k, uint64_t t)
{
	double d = (double)t;

	if (m->tent && t > m->span / 2)
		d = (double)m->span - d;
	return 1000000000ull * (k + 1) + 12345 * k + t +
	       (uint64_t)(d * (double)k * m->drift * 1e-6);
}

static void addr(uint8_t *a, unsigned long k)
{
	a[0] = 192;
	a[1] = 0;
	a[2] = 2;
	a[3] = (uint8_t)(k + 1);
}

static void packet(const struct mh *m, unsigned long from, unsigned long to,
		   uint64_t t, int64_t delay, uint32_t psn, uint32_t opcode,
		   unsigned long rec_host)
{
	uint64_t tr = (uint64_t)((int64_t)t + delay);

	if (rec_host == from) {
		struct rdt_ev_rxe_xmit *x = rec(RDT_EV_RXE_XMIT, sizeof(*x),
						mono(m, from, t), 0);

		addr(x->saddr, from);
		addr(x->daddr, to);
		x->family = 2;	/* AF_INET */
		x->qpn = 0x100 + (uint32_t)(to * 64 + from);
		x->src_qpn = 0x100 + (uint32_t)(from * 64 + to);
		x->psn = psn & 0xffffff;
		x->opcode = opcode;
		x->length = 1024;
	} else if (rec_host == to && !(m->one_way && to < from)) {
		struct rdt_ev_rxe_rcv *r = rec(RDT_EV_RXE_RCV, sizeof(*r),
					       mono(m, to, tr), 0);

		r->qpn = 0x100 + (uint32_t)(to * 64 + from);
		r->psn = psn & 0xffffff;
		r->opcode = opcode;
		r->length = 1024;
		if (m->decoy && opcode < 0x20) {
			struct rdt_ev_rxe_rcv *o = rec(RDT_EV_RXE_RCV, sizeof(*o),
						       mono(m, to, tr) - 1000000, 7);

			o->qpn = r->qpn;
			o->psn = r->psn;
			o->opcode = opcode;
			o->length = 1024;
		}
	}
}

/* Every packet of one link and direction that host @h recorded. */
static void link_dir(const struct mh *m, unsigned long a, unsigned long b,
		     uint64_t shift, unsigned long h, bool first_link)
{
	uint64_t seed = rnd_state;

	/* the same delays whichever host's file is written */
	rnd_state = seed ^ (a * 1000003 + b * 7919 + 1);
	if (!rnd_state)
		rnd_state = 1;
	for (unsigned long i = 0; i < m->msgs; i++) {
		uint64_t t = i * m->spacing + shift;
		int64_t d = (int64_t)(m->delay + (m->jitter ? rnd() % m->jitter : 0));

		if (first_link && i == 0 && m->cross)
			d = -(int64_t)m->cross;
		packet(m, a, b, t, d, (uint32_t)i, 4 /* SEND_ONLY */, h);
		if (i % 10 == 0)	/* UD: not paired */
			packet(m, a, b, t, -1000000, (uint32_t)i, 0x64, h);
		if (i % 25 == 0)	/* retransmitted */
			packet(m, a, b, t + 500000, d, (uint32_t)i, 4, h);
	}
	rnd_state = seed;
}

static int cmp(const void *a, const void *b);

static int multihost(const struct mh *m, const char *prefix, uint64_t seed)
{
	unsigned long links = m->hosts == 2 || !m->ring ? m->hosts - 1 : m->hosts;

	for (unsigned long h = 0; h < m->hosts; h++) {
		struct rdt_file_hdr fh;
		char path[4096];
		FILE *f;

		nrec = 0;
		rnd_state = seed;
		{
			struct rdt_ev_comm *cm = rec(RDT_EV_COMM, sizeof(*cm),
						     mono(m, h, 0) - 2000002, RDT_NO_DEV);
			struct rdt_ev_device *d = rec(RDT_EV_DEVICE_ADD, sizeof(*d),
						      mono(m, h, 0) - 2000001, 0);

			snprintf(cm->comm, sizeof(cm->comm), "gen");
			snprintf(d->name, sizeof(d->name), "rxe0");
		}
		for (unsigned long l = 0; l < links; l++) {
			unsigned long a = l, b = (l + 1) % m->hosts;

			if (a > b) {
				a = b;
				b = l;
			}
			link_dir(m, a, b, 10000 + l * 1000, h, l == 0);
			link_dir(m, b, a, 10000 + l * 1000 + m->spacing / 2,
				 h, false);
		}
		qsort(recs, nrec, sizeof(*recs), cmp);
		memset(&fh, 0, sizeof(fh));
		memcpy(fh.magic, RDT_FILE_MAGIC, sizeof(fh.magic));
		fh.abi_major = RDT_ABI_MAJOR;
		fh.abi_minor = RDT_ABI_MINOR;
		fh.hdr_size = sizeof(fh);
		/* realtime at true time t: 1.7e18 + t (1 + k D) + k S */
		fh.realtime_offset_ns = 1700000000000000000ll -
			(long long)mono(m, h, 0) + (long long)h * m->skew;
		fh.ncpus = ncpus;
		snprintf(fh.host, sizeof(fh.host), "host%lu", h);
		snprintf(fh.kernel, sizeof(fh.kernel), "6.1.0-gen");
		snprintf(fh.boot_id, sizeof(fh.boot_id), "boot-h%lu", h);
		snprintf(path, sizeof(path), "%s.h%lu", prefix, h);
		f = fopen(path, "wb");
		if (!f)
			return 1;
		fwrite(&fh, sizeof(fh), 1, f);
		for (size_t i = 0; i < nrec; i++)
			fwrite(&recs[i], recs[i].h.size, 1, f);
		if (fclose(f))
			return 1;
		printf("%s host%lu records %zu offset_ns %lld drift_ppm %.3f\n",
		       path, h, nrec, (long long)h * m->skew,
		       (double)h * m->drift);
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	const struct rdt_hdr *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	unsigned long qps = 2, wrs = 10, lat = 5000, start = 1000000, spacing = 1000;
	unsigned long lost = 0, gap = 0, unknown = 0, nccl = 0, tcp = 0, fails = 0, ctrs = 0, npolls = 0, abi = RDT_ABI_MAJOR;
	unsigned long ring = 0, slow = ~0ul, stall = ~0ul, mild = ~0ul;
	bool orphan = false;
	bool stall_send = false, nccl_hang = false, nccl_plugin_only = false;
	const char *boot = "boot-a", *host = "gen-host";
	long long offset = 1700000000000000000ll;
	struct rdt_file_hdr fh;
	struct mh m = { .msgs = 1000, .spacing = 100000, .delay = 5000,
			.jitter = 20000 };
	uint64_t seed = 1;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "q:n:l:t:s:c:b:o:H:L:G:u:N:T:A:V:p:F:P:K:M:S:D:m:d:j:1C:r:Y:EXW:R:Z:J:k:g:I:U:z:Oe:")) != -1) {
		switch (c) {
		case 'q': qps = strtoul(optarg, NULL, 0); break;
		case 'n': wrs = strtoul(optarg, NULL, 0); break;
		case 'l': lat = strtoul(optarg, NULL, 0); break;
		case 't': start = strtoul(optarg, NULL, 0); break;
		case 's': spacing = m.spacing = strtoul(optarg, NULL, 0); break;
		case 'c': ncpus = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': boot = optarg; break;
		case 'o': offset = strtoll(optarg, NULL, 0); break;
		case 'H': host = optarg; break;
		case 'L': lost = strtoul(optarg, NULL, 0); break;
		case 'G': gap = strtoul(optarg, NULL, 0); break;
		case 'u': unknown = strtoul(optarg, NULL, 0); break;
		case 'N': nccl = strtoul(optarg, NULL, 0); break;
		case 'T': tcp = strtoul(optarg, NULL, 0); break;
		case 'A': abi = strtoul(optarg, NULL, 0); break;
		case 'V': version = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': pid = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'F': fails = strtoul(optarg, NULL, 0); break;
		case 'O': orphan = true; break;
		case 'e': errevery = strtoul(optarg, NULL, 0); break;
		case 'P': ctrs = strtoul(optarg, NULL, 0); break;
		case 'K': npolls = strtoul(optarg, NULL, 0); break;
		case 'M': m.hosts = strtoul(optarg, NULL, 0); break;
		case 'S': m.skew = strtoll(optarg, NULL, 0); break;
		case 'D': m.drift = strtod(optarg, NULL); break;
		case 'm': m.msgs = strtoul(optarg, NULL, 0); break;
		case 'd': m.delay = strtoul(optarg, NULL, 0); break;
		case 'j': m.jitter = strtoul(optarg, NULL, 0); break;
		case '1': m.one_way = true; break;
		case 'C': m.cross = strtoul(optarg, NULL, 0); break;
		case 'r': seed = strtoull(optarg, NULL, 0) ?: 1; break;
		case 'Y': m.ring = !strcmp(optarg, "ring"); break;
		case 'E': m.tent = true; break;
		case 'X': m.decoy = true; break;
		case 'W': shorter = strtol(optarg, NULL, 0); break;
		case 'g':
			if (sscanf(optarg, "%d,%d", &gid_own, &gid_peer) != 2) {
				fprintf(stderr, "rdt-gen: -g OWN,PEER\n");
				return 2;
			}
			break;
		case 'R': ring = strtoul(optarg, NULL, 0); break;
		case 'J': cqes = strtoul(optarg, NULL, 0); break;
		case 'k': cqe_counts = strtoul(optarg, NULL, 0); break;
		case 'I': {
			char *e;

			ncclwrs = strtoul(optarg, &e, 0);
			for (; *e; e += 2) {
				if (!strncmp(e, ",s", 2))
					nccl_hang = true;
				else if (!strncmp(e, ",p", 2))
					nccl_plugin_only = true;
				else
					return 2;
			}
			break;
		}
		case 'Z': slow = strtoul(optarg, NULL, 0); break;
		case 'z': mild = strtoul(optarg, NULL, 0); break;
		case 'U': {
			char *e;

			stall = strtoul(optarg, &e, 0);
			if (!strcmp(e, ",s"))
				stall_send = true;
			else if (*e)
				return 2;
			break;
		}
		default: return 2;
		}
	}
	if (optind != argc - 1 || !ncpus)
		return 2;
	if (m.hosts) {
		if (m.hosts < 2 || m.hosts > 60 || !m.spacing)
			return 2;
		m.span = 10000 + m.msgs * m.spacing;
		return multihost(&m, argv[optind], seed);
	}

	{
		struct rdt_ev_comm *cm = rec(RDT_EV_COMM, sizeof(*cm), start - 2, RDT_NO_DEV);
		struct rdt_ev_device *d = rec(RDT_EV_DEVICE_ADD, sizeof(*d), start - 1, 0);

		snprintf(cm->comm, sizeof(cm->comm), "gen");
		snprintf(d->name, sizeof(d->name), "rxe0");
	}
	if (cqes == 2 && qps)
		unpolled_qpn = 100 + (uint32_t)(qps - 1);
	for (unsigned long q = 0; q < qps; q++) {
		uint32_t qpn = 100 + (uint32_t)q;
		struct rdt_ev_qp_create *qc = rec(RDT_EV_QP_CREATE, sizeof(*qc), start + q, 0);

		qc->qpn = qpn;
		qc->qp_type = 2;
		for (int s = 0; s < 3; s++) {
			struct rdt_ev_qp_modify *m =
				rec(RDT_EV_QP_MODIFY, sizeof(*m), start + 10 + q * 3 + (unsigned)s, 0);

			if (shorter >= 0)
				m->hdr.size = (__u16)(offsetof(struct rdt_ev_qp_modify, dgid) -
						      (size_t)shorter);
			if (shorter <= 0)
				m->dur_ns = 100 * (unsigned)(s + 1);
			m->qpn = qpn;
			m->old_state = (__u8)s;
			m->new_state = m->cur_state = (__u8)(s + 1);
			m->attr_mask = 1;
			if (gid_own && s == 1) {	/* INIT -> RTR: the path */
				static const __u8 v4[12] = { [10] = 0xff, [11] = 0xff };

				m->attr_mask |= 1u << 7 | 1u << 20;	/* IB_QP_AV, DEST_QPN */
				m->dest_qpn = qpn ^ 1;
				memcpy(m->sgid, v4, 12);
				memcpy(m->dgid, v4, 12);
				m->sgid[12] = m->dgid[12] = 192;
				m->sgid[14] = m->dgid[14] = 2;
				m->sgid[15] = (__u8)gid_own;
				m->dgid[15] = (__u8)gid_peer;
				if (shorter < 0)
					m->gids = RDT_QP_DGID | RDT_QP_SGID;
			}
		}
		for (unsigned long i = 0; i < wrs; i++)
			post(qpn, i, 0, start + 1000 + i * spacing + q, true,
			     lat + (i % 10) * 100);
		for (unsigned long j = 0; j < fails; j++) {
			uint64_t t = start + 1000 + wrs * spacing + 100000 + j * 10000 + q;

			post(qpn, 1000 + j, 0, t, true, lat);
			post(qpn, 2000 + j, 1, t, false, 0);
			struct rdt_ev_post_fail *f = rec(RDT_EV_POST_FAIL, sizeof(*f), t + 1, 0);

			f->qpn = qpn;
			f->ret = -12;
			f->post_type = RDT_EV_POST_SEND;
			f->nr_wr = 2;
			f->bad_index = 1;
			post(qpn, 2000 + j, 0, t + 500, true, lat);
		}
	}
	if (orphan && qps >= 2) {
		uint64_t t = start + 1000 + wrs * spacing + 100000 + fails * 10000 + qps;

		for (unsigned long q = 0; q < qps; q += 2) {
			struct rdt_ev_qp_destroy *d = rec(RDT_EV_QP_DESTROY, sizeof(*d), t + q, 0);

			d->qpn = 100 + (uint32_t)q;
			d->qp_type = 2;
		}
		t += qps + 1000;
		post(101, 999999, 0, t, false, 0);
		snprintf(((struct rdt_ev_comm *)rec(RDT_EV_COMM, sizeof(struct rdt_ev_comm),
						    t + 3000000000ull, RDT_NO_DEV))->comm,
			 RDT_COMM_LEN, "gen");
	}
	for (unsigned long i = 0; i < nccl; i++) {
		uint64_t t = start + 2000000 + i * 3000000;
		struct rdt_ev_nccl_call *n = rec(RDT_EV_NCCL_CALL, sizeof(*n), t, RDT_NO_DEV);

		n->fn = RDT_NCCL_ALL_REDUCE;
		n->count = 1 << 20;
		n->datatype = 7;	/* ncclFloat32 */
		n->op = 0;
		n->root = -1;
		n->rank = 0;
		n->nranks = 4;
		n->comm = 0x5000;
		n->comm_hash = 0xabcdef0123456789ull;
		n->seq = i;
		n->duration_ns = 1000000;
	}
	for (unsigned long i = 0; i < tcp; i++) {
		struct rdt_ev_tcp_retransmit *t =
			rec(RDT_EV_TCP_RETRANSMIT, sizeof(*t), start + 2000000 + 10 + i, RDT_NO_DEV);

		t->family = 2;
		t->saddr[0] = 127; t->saddr[3] = 1;
		t->daddr[0] = 127; t->daddr[3] = 1;
		t->sport = 5000;
		t->dport = 6000;
	}
	for (unsigned long i = 0; i <= ctrs && ctrs; i++) {
		/* i < ctrs: inside collective 0 (start + 2 ms .. + 3 ms);
		 * i == ctrs: between collectives 0 and 1 */
		uint64_t t = i < ctrs ? start + 2000000 + 100 + i * 100 :
				start + 4000000;
		struct rdt_ev_port_counter *p =
			rec(RDT_EV_PORT_COUNTER, sizeof(*p), t, 0);

		p->hdr.source = RDT_SRC_USER;
		memcpy(p->devname, "rxe0", 5);
		p->port = 1;
		p->kind = RDT_CTR_HW_COUNTERS;
		if (i < ctrs) {
			memcpy(p->name, "rcvd_seq_err", 13);
			p->delta = 1;
			p->value = 10 + i + 1;
		} else {
			memcpy(p->name, "sent_pkts", 10);
			p->delta = 5;
			p->value = 105;
		}
	}
	if (npolls)
		polls(npolls, start + 5000000);
	if (ncclwrs)
		nccl_wrs(ncclwrs, start + 7000000, nccl_hang, nccl_plugin_only);
	if (ring)
		ring_colls(ring, slow, start + 50000000, stall, stall_send, mild);
	for (unsigned long i = 0; i < unknown; i++) {
		struct rdt_hdr *h = rec(RDT_EV_MAX, 40, start + 500 + i, RDT_NO_DEV);

		(void)h;
	}
	if (lost || gap) {
		struct rdt_ev_subbuf *s0 = rec(RDT_EV_SUBBUF, sizeof(*s0), start + 600, RDT_NO_DEV);
		struct rdt_ev_subbuf *s1 = rec(RDT_EV_SUBBUF, sizeof(*s1), start + 700, RDT_NO_DEV);

		s0->hdr.cpu = 1;
		s0->seq = 0;
		s1->hdr.cpu = 1;
		s1->seq = 1;
		s1->lost_total = lost;
	}
	if (gap) {
		struct rdt_ev_subbuf *s2 = rec(RDT_EV_SUBBUF, sizeof(*s2), start + 800, RDT_NO_DEV);

		s2->hdr.cpu = 1;
		s2->seq = 2 + gap;
		s2->lost_total = lost;
	}
	qsort(recs, nrec, sizeof(*recs), cmp);

	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, RDT_FILE_MAGIC, sizeof(fh.magic));
	fh.abi_major = (__u16)abi;
	fh.abi_minor = 0;
	fh.hdr_size = sizeof(fh) + 16;
	fh.realtime_offset_ns = offset;
	fh.ncpus = ncpus;
	snprintf(fh.host, sizeof(fh.host), "%s", host);
	snprintf(fh.kernel, sizeof(fh.kernel), "6.1.0-gen");
	snprintf(fh.boot_id, sizeof(fh.boot_id), "%s", boot);
	f = fopen(argv[optind], "wb");
	if (!f)
		return 1;
	fwrite(&fh, sizeof(fh), 1, f);
	fwrite("NCCL_ALGO=Ring\n\0", 16, 1, f);
	for (size_t i = 0; i < nrec; i++)
		fwrite(&recs[i], recs[i].h.size, 1, f);
	printf("%zu\n", nrec);
	return fclose(f) ? 1 : 0;
}
