// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * --stuck: where is it stuck.  Per QP (host, dev, qpn), the send work
 * requests posted and not yet completed, from every source that sees them
 * (the module's posts and polls, --verbs' userspace posts and polls,
 * rxe's CQEs), with what explains a wait: the QP's state and peer, its
 * last completion, the rxe retries since, a completion with an error.
 *
 * A send, read or write without completion for longer than the limit is
 * a hang; receive WRs waiting for traffic are not, by themselves, and are
 * only counted.  The report is printed when the set of stuck QPs or the
 * oldest WR of one changes, and once more ("moving") when none is stuck.
 *
 * Completion order: a QP's send queue completes in post order, so a send
 * completion retires its WR and every older one (unsignaled WRs never
 * complete on their own).  A completion whose wr_id is not outstanding is
 * a second view of one already retired (rxe's CQE, then the poll that
 * returns it), or of a post made before tracing began.
 *
 * A collective begun and not ended for longer than the limit is stuck
 * too: rdma-ring-allreduce's USDT coll_begin/coll_end marks, or NCCL's
 * through its profiler plugin.  NCCL stops a Coll event once it is
 * enqueued; the collective runs until its children (kernel channels and
 * proxy ops, whose parent is the Coll) stop, so a Coll is waiting from
 * its first child's start to its last child's stop, and done once it
 * stopped with every child stopped.  One that stopped without children
 * yet is enqueued, not begun.  The events between start and stop, and a
 * stopped Coll's open children, are np_open.c's table, as for --stats
 * and Perfetto; each rank's view of it is made at report time (a scan of
 * the table per NCCL rank).  A waiting collective names
 * its job's ranks: those waiting in it, those that never began it, and
 * how long each process has traced nothing.  A rank stopped (SIGSTOP) or
 * busy outside RDMA leaves its peers' receives waiting with no send
 * outstanding anywhere, and silence does not single it out (its peers,
 * asleep on their completion channels, trace nothing either): what does
 * is the completions rxe made on its QPs that it has not polled.
 *
 * NCCL's own WRs, as its profiler plugin sees them (np_net_ib, whose
 * STOP is the request's completion), are tracked per QP like the others,
 * keyed by NCCL's device index (not the kernel's: np_qp_dev()); a QP that
 * --verbs sees too is reported once, in the verbs' view (collect()).
 *
 * What the port saw while a QP waits: the error counters of its device
 * that moved since its oldest WR was posted (ctr_history.c), beside rxe's
 * retries, NAKs and RNRs.
 *
 * Memory is bounded: RDT_STUCK_MAX_QPS QPs and RDT_STUCK_MAX_WRS
 * outstanding sends per QP.  A post beyond either is not kept and is
 * counted (dropped_qp_events, dropped_wrs); the report says so, and so does the
 * summary at the end (rdt_stuck_print_summary()) when nothing was stuck.  A QP whose
 * queue overflowed retires everything at its next send completion that
 * matches nothing kept, since that completion is newer than all of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RDT_STUCK_MAX_QPS	65536
#define RDT_STUCK_MAX_WRS	4096
#define RDT_STUCK_MAX_RANKS	4096
/* Plugin events open at once (a hostile ring could start and never stop). */
#define RDT_STUCK_MAX_NP	(1u << 20)
#define NS			1000000000ull

struct swr {
	uint64_t ts, wr_id, len;
	uint8_t opcode;
};

struct sqp {
	bool used, dead;	/* dead: destroyed, skipped until a rehash */
	uint32_t host, dev, qpn, pid;
	char comm[16], devname[RDT_NAME_LEN + 1];
	/* Both names known, or the reader's name strings qp_who() last
	 * looked at (interned: the same pointer, nothing new to learn):
	 * post_send_fast() tests these, not two names' bytes. */
	bool named;
	const char *who_comm, *who_dev;
	uint8_t state;		/* enum ib_qp_state; 0xff: not seen */
	uint32_t dest_qpn;
	/* Its starting PSNs, as modify_qp set them (random 24 bits): a QP's
	 * send PSN is its peer's receive PSN, which tells its peer apart
	 * where QPNs repeat (every host of a merged trace numbers its own). */
	uint32_t sq_psn, rq_psn;
	uint8_t psns;		/* bit 0: sq_psn set, bit 1: rq_psn set */
	/* Its path's GIDs (ABI 1.12, RoCE): its peer's and its own, a pair
	 * that crosses its peer's; gids as rdt_ev_qp_modify.gids. */
	uint8_t dgid[16], sgid[16];
	uint8_t gids;
	struct swr *q;		/* ring of outstanding sends; cap a power of 2 */
	uint32_t head, n, cap;
	bool overflowed;
	/* Receives posted and not polled (not a hang by themselves). */
	uint64_t recvs;
	uint64_t last_cqe;	/* last completion of any kind, 0: none */
	/*
	 * rxe's CQEs not yet polled: the device completed them, the process
	 * has not taken them.  Counted only once a poll of the QP was seen
	 * (a trace without the polls would count forever).
	 */
	uint64_t unpolled, unpolled_since;
	bool polls_seen;
	/* Its peer QP (same trace) was destroyed: when, by which pid on which
	 * host, and the peer's first error completion before (0: none). */
	uint64_t peer_gone;
	uint32_t peer_gone_pid, peer_gone_host, peer_gone_status;
	uint64_t peer_gone_wr;
	/* rxe's retries since the last send completion: transport (timer,
	 * NAK; naks: those of NAKs alone) and RNR (the receiver had no
	 * receive posted). */
	uint64_t retries, rnr, naks;
	uint64_t dropped_wrs;
	struct {
		uint64_t ts, wr_id;
		uint32_t status, vendor_err;
	} err;			/* first completion with an error; ts 0: none */
	bool reported;		/* in the last report */
	uint64_t reported_wr_ts;
	/* Slot + 1 of the next QP with a QPN of the same qpn_head bucket
	 * (dead ones included, until a rehash), for finding a QP's peer
	 * without a scan of the table; 0: the last. */
	uint32_t qpn_next;
	/* refresh()'s: slot + 1 of the next QP of its process; 0: the last */
	uint32_t proc_next;
};

/*
 * A plugin event between its start and stop, in np_open.c's table (which
 * keeps a stopped Coll or P2p while its children run, and counts them):
 * a Coll or P2p, a kernel channel, a proxy op, a proxy step.  A proxy op
 * keeps the last state one of its steps entered: where it waits (for the
 * GPU, the peer's credit, the network).
 */
struct stnp {
	struct rdt_np_open_ent o;
	uint16_t type;
	uint64_t ts;		/* its start */
	uint64_t comm_id;
	/* Coll, P2p */
	uint64_t seq;
	uint64_t first;		/* its first child's start; 0: none yet */
	bool p2p;
	char func[RDT_NP_STR];
	/* P2p, proxy op: the peer; proxy op */
	int32_t peer;
	bool is_send;
	uint32_t state;		/* NCCL's; 0: none seen */
	int32_t step;
	uint64_t state_ts;
	/* proxy step: its op */
	uint64_t op;
	/* NCCL's own WR (np_net_ib): the QP it went to, NCCL's device */
	uint64_t wr_id;
	uint32_t qpn;
	int32_t ibdev;
};

/*
 * One rank of a job: a process that marks collectives (USDT), or, for
 * NCCL, a process's rank in one communicator (comm_id: NCCL's commHash,
 * the same in every rank of it): a process with several communicators
 * (tensor, pipeline and data parallel groups) has one entry for each.
 */
struct srank {
	uint32_t host, pid;
	uint64_t comm_id;	/* NCCL's; 0: USDT marks */
	int32_t rank, nranks;
	char comm[16];
	uint32_t op;
	char func[RDT_NP_STR];	/* plugin: NCCL's name of the collective */
	int32_t p2p_peer;	/* plugin: waiting in a P2p with it; -1: not */
	/* plugin, as of the last np_refresh(): what is open in its colls */
	uint32_t kch, ops;
	char peers[80];
	uint64_t oldest_open;
	const struct stnp *waits;	/* the op longest in its state; valid
					 * until the next event moves entries */
	uint64_t last_ev;	/* its last event of any kind */
	uint64_t proc_last;	/* its process's (all its ranks), as of
				 * the last refresh() */
	uint64_t proc_start;	/* /proc's starttime, first seen; 0: none */
	/* refresh()'s scratch: the collective it waits in, its peers */
	const struct stnp *w;
	uint8_t npeers;
	struct { int32_t peer; bool send; } peer_seen[8];
	uint64_t seq, begun;	/* the open collective; begun 0: none */
	/* USDT: the step it last began in it (coll_step, ABI 1.14) */
	uint32_t step, steps;
	bool stepped;
	uint64_t last_seq;	/* the last one ended, +1 (0: none yet) */
	bool reported;
	uint64_t reported_seq;
	char pstate;		/* abandon_exited()'s scratch */
	/* refresh()'s, for the report: its process's first rank (whose
	 * p_* fields hold the process's QPs), NULL when none */
	struct srank *proc;
	uint64_t p_sends, p_unpolled, p_unpolled_since;
	const struct sqp *p_oldest;	/* its oldest send outstanding */
	uint32_t p_qp_first;		/* slot + 1 of its first QP; 0: none */
};

struct rdt_stuck {
	uint64_t limit;
	struct srank *ranks;
	size_t nranks, capranks, hint;	/* hint: the last rank found */
	uint64_t dropped_ranks;
	struct sqp *qps;	/* open addressing by (host, dev, qpn) */
	size_t cap, n;		/* n: used slots, dead ones included */
	size_t live;		/* used slots of live QPs */
	uint32_t *qpn_head;	/* cap buckets by QPN: slot + 1, 0: none */
	/* The last QP seen in each of QCACHE slots (by qpn): most events are
	 * a few QPs' posts and completions, and a hit skips the hash probe
	 * (the tracker's cost per event is make bench's figure 3).  Cleared
	 * at each rehash, which moves the entries. */
	struct sqp *qcache[256];
	uint64_t dropped_qps;
	uint64_t dropped_wrs;	/* every QP's, destroyed ones' too */
	struct rdt_ctr_history *ctrs;	/* NULL: no memory, none kept */
	struct rdt_np_open np;	/* plugin events open, of struct stnp */
	uint64_t dropped_np;	/* plugin events not kept (RDT_STUCK_MAX_NP) */
	bool procs;		/* host 0's ranks are this machine's processes */
	bool stuck;		/* the last check found something stuck */
	rdt_stuck_record_fn emit;	/* reports as records, if set */
	void *emit_ctx;
	uint64_t since;		/* when it was first seen stuck */
	uint64_t episodes;
	size_t exited;		/* ranks abandoned since the last report */
};

RDT_EXPORT struct rdt_stuck *rdt_stuck_new(uint64_t limit_ns)
{
	struct rdt_stuck *s = calloc(1, sizeof(*s));

	if (s) {
		s->limit = limit_ns ? limit_ns : 1;
		s->ctrs = rdt_ctr_history_new();
		rdt_np_open_init(&s->np, sizeof(struct stnp), NULL, NULL);
	}
	return s;
}

RDT_EXPORT void rdt_stuck_watch_procs(struct rdt_stuck *s, bool on)
{
	s->procs = on;
}

RDT_EXPORT void rdt_stuck_free(struct rdt_stuck *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++)
		free(s->qps[i].q);
	free(s->qps);
	free(s->qpn_head);
	rdt_ctr_history_free(s->ctrs);
	rdt_np_open_free(&s->np);
	free(s->ranks);
	free(s);
}

static size_t qhash(uint32_t host, uint32_t dev, uint32_t qpn)
{
	uint64_t h = ((uint64_t)host << 48 ^ (uint64_t)dev << 32 ^ qpn) *
		     0x9e3779b97f4a7c15ull;

	return h ^ h >> 29;
}

static size_t qpn_bucket(uint32_t qpn, size_t cap)
{
	return (size_t)(qpn * 0x9e3779b1u) & (cap - 1);
}

/* Link slot @i into its QPN's bucket. */
static void qpn_link(struct rdt_stuck *s, size_t i)
{
	uint32_t *h = &s->qpn_head[qpn_bucket(s->qps[i].qpn, s->cap)];

	s->qps[i].qpn_next = *h;
	*h = (uint32_t)i + 1;
}

/* Rehash the live QPs into a table of @cap slots. */
static bool rehash(struct rdt_stuck *s, size_t cap)
{
	struct sqp *t = calloc(cap, sizeof(*t));
	uint32_t *heads = calloc(cap, sizeof(*heads));
	size_t n = 0;

	if (!t || !heads) {
		free(t);
		free(heads);
		return false;
	}
	for (size_t j = 0; j < s->cap; j++) {
		struct sqp *q = &s->qps[j];
		size_t i;

		if (!q->used)
			continue;
		if (q->dead) {
			free(q->q);
			continue;
		}
		i = qhash(q->host, q->dev, q->qpn) & (cap - 1);
		while (t[i].used)
			i = (i + 1) & (cap - 1);
		t[i] = *q;
		n++;
	}
	free(s->qps);
	free(s->qpn_head);
	s->qps = t;
	s->qpn_head = heads;
	s->cap = cap;
	s->n = n;
	for (size_t i = 0; i < cap; i++)
		if (t[i].used)
			qpn_link(s, i);
	memset(s->qcache, 0, sizeof(s->qcache));
	return true;
}

/* The QP cache's slot of (host, dev, qpn). */
static inline struct sqp **qslot(struct rdt_stuck *s, uint32_t host,
				 uint32_t dev, uint32_t qpn)
{
	return &s->qcache[(qpn ^ dev ^ host) & 255];
}

/* The QP of the QP cache's slot, if it is the live (host, dev, qpn). */
static inline struct sqp *qp_cached(struct rdt_stuck *s, uint32_t host,
				    uint32_t dev, uint32_t qpn)
{
	struct sqp *q = *qslot(s, host, dev, qpn);

	/* A QP is taken out of the cache when it dies (QP_DESTROY). */
	return q && q->qpn == qpn && q->dev == dev && q->host == host ?
	       q : NULL;
}

/* The live QP of (host, dev, qpn); made when @make; NULL when full. */
static struct sqp *qp_find_slow(struct rdt_stuck *s, uint32_t host,
				uint32_t dev, uint32_t qpn, bool make);

static inline struct sqp *qp_find(struct rdt_stuck *s, uint32_t host,
				  uint32_t dev, uint32_t qpn, bool make)
{
	struct sqp *q = qp_cached(s, host, dev, qpn);

	if (q)
		return q;
	q = qp_find_slow(s, host, dev, qpn, make);
	if (q)
		*qslot(s, host, dev, qpn) = q;
	return q;
}

/* The slot of the live (host, dev, qpn), else the free slot it would
 * take; the table always has a free slot (at most half is used). */
static size_t qp_probe(const struct rdt_stuck *s, uint32_t host, uint32_t dev,
		       uint32_t qpn)
{
	size_t i, mask = s->cap - 1;

	for (i = qhash(host, dev, qpn) & mask;; i = (i + 1) & mask) {
		const struct sqp *q = &s->qps[i];

		if (!q->used || (!q->dead && q->host == host &&
				 q->dev == dev && q->qpn == qpn))
			return i;
	}
}

/*
 * Found first, made only if missing: a full table still tracks the QPs it
 * has, and only a QP it cannot take is counted (each of that QP's posts
 * and changes).  The live count makes the full case one probe, not a
 * scan of the table per event.
 */
static struct sqp *qp_find_slow(struct rdt_stuck *s, uint32_t host,
				uint32_t dev, uint32_t qpn, bool make)
{
	size_t i = 0;

	if (s->cap) {
		i = qp_probe(s, host, dev, qpn);
		if (s->qps[i].used)
			return &s->qps[i];
	}
	if (!make)
		return NULL;
	if ((s->n + 1) * 2 > s->cap) {
		size_t cap = !s->cap ? 256 : s->live * 4 > s->cap ?
			     s->cap * 2 : s->cap;

		if (s->live >= RDT_STUCK_MAX_QPS || !rehash(s, cap)) {
			s->dropped_qps++;
			return NULL;
		}
		i = qp_probe(s, host, dev, qpn);
	}
	s->qps[i] = (struct sqp){ .used = true, .host = host, .dev = dev,
				  .qpn = qpn, .state = 0xff };
	qpn_link(s, i);
	s->n++;
	s->live++;
	return &s->qps[i];
}

/* Who owns the QP.  On every post: the names are copied only when the pid
 * changes or a name still unknown is given (two snprintf()s a post were
 * most of the tracker's cost; a trace without device names made them
 * again on every post). */
static inline __attribute__((always_inline)) void qp_who(struct sqp *q, const struct rdt_event *ev)
{
	if (q->pid != ev->rec.hdr.pid ||
	    (!q->comm[0] && ev->comm && *ev->comm) ||
	    (!q->devname[0] && ev->devname && *ev->devname)) {
		q->pid = ev->rec.hdr.pid;
		if (ev->comm && *ev->comm)
			snprintf(q->comm, sizeof(q->comm), "%s", ev->comm);
		if (ev->devname && *ev->devname)
			snprintf(q->devname, sizeof(q->devname), "%s",
				 ev->devname);
		q->named = q->comm[0] && q->devname[0];
	}
	q->who_comm = ev->comm;
	q->who_dev = ev->devname;
}

static void wr_push(struct rdt_stuck *s, struct sqp *q, uint64_t ts,
		    uint64_t wr_id, uint64_t len, uint8_t opcode);

static inline __attribute__((always_inline)) void post_send(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_ev_post_send *p = &ev->rec.post_send;
	struct sqp *q;

	if (p->ret || p->bad)
		return;
	q = qp_find(s, ev->host, p->hdr.dev, p->qpn, true);
	if (!q)
		return;
	qp_who(q, ev);
	wr_push(s, q, ev->ts, p->wr_id, p->total_len, p->opcode);
}

/* A send WR posted on @q: the newest of its queue. */
static void wr_push(struct rdt_stuck *s, struct sqp *q, uint64_t ts,
		    uint64_t wr_id, uint64_t len, uint8_t opcode)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 8;
		struct swr *n;

		if (q->cap >= RDT_STUCK_MAX_WRS ||
		    !(n = malloc(cap * sizeof(*n)))) {
			q->dropped_wrs++;
			s->dropped_wrs++;
			q->overflowed = true;
			return;
		}
		for (uint32_t i = 0; i < q->n; i++)
			n[i] = q->q[(q->head + i) & (q->cap - 1)];
		free(q->q);
		q->q = n;
		q->head = 0;
		q->cap = cap;
	}
	if (!q->n)
		q->retries = q->rnr = q->naks = 0;
	q->q[(q->head + q->n) & (q->cap - 1)] = (struct swr){ ts, wr_id, len,
		opcode };
	q->n++;
}

/*
 * A failed post's WRs from bad_index on were not posted: they were kept
 * as the newest of the queue, stamped with the call's time; take back the
 * newest (nr_wr - bad_index) of that stamp.
 */
static void post_fail(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_ev_post_fail *f = &ev->rec.post_fail;
	struct sqp *q;
	uint32_t undo;

	if ((f->post_type != RDT_EV_POST_SEND &&
	     f->post_type != RDT_EV_VERBS_POST_SEND) ||
	    f->bad_index == RDT_BAD_INDEX_UNKNOWN || f->bad_index >= f->nr_wr)
		return;
	q = qp_find(s, ev->host, f->hdr.dev, f->qpn, false);
	if (!q)
		return;
	undo = f->nr_wr - f->bad_index;
	while (undo-- && q->n &&
	       q->q[(q->head + q->n - 1) & (q->cap - 1)].ts <= ev->ts)
		q->n--;
}

static inline void send_done(struct sqp *q, uint64_t wr_id)
{
	uint32_t i;

	for (i = 0; i < q->n; i++)
		if (q->q[(q->head + i) & (q->cap - 1)].wr_id == wr_id)
			break;
	if (i == q->n) {
		if (!q->overflowed)
			return;		/* a second view, or before tracing */
		i = q->n - 1;		/* newer than all kept */
		q->overflowed = false;
	}
	q->head = (q->head + i + 1) & (q->cap - 1);
	q->n -= i + 1;
	q->retries = q->rnr = q->naks = 0;
}

static inline __attribute__((always_inline)) void completion(struct rdt_stuck *s, const struct rdt_event *ev,
		       uint32_t qpn, uint64_t wr_id, uint32_t status,
		       uint32_t opcode, uint32_t vendor_err)
{
	struct sqp *q = qp_find(s, ev->host, ev->rec.hdr.dev, qpn, false);

	if (!q)
		return;
	if (ev->rec.hdr.type == RDT_EV_RXE_CQE) {
		if (!q->unpolled++)
			q->unpolled_since = ev->ts;
	} else {
		q->polls_seen = true;
		if (q->unpolled && !--q->unpolled)
			q->unpolled_since = 0;
	}
	q->last_cqe = ev->ts;
	if (status && !q->err.ts) {
		q->err.ts = ev->ts;
		q->err.wr_id = wr_id;
		q->err.status = status;
		q->err.vendor_err = vendor_err;
	}
	if (opcode & 128) {		/* IB_WC_RECV*: a receive */
		/* Counted down by the poll that takes it, not by rxe's CQE
		 * too: the posts come from the same sources as the polls. */
		if (ev->rec.hdr.type != RDT_EV_RXE_CQE && q->recvs)
			q->recvs--;
		return;
	}
	if (q->n)
		send_done(q, wr_id);
}

/* The live QP whose peer is @q and @q's: on another host of a merged
 * trace, or another device of this one. */
static const struct sqp *peer_of(const struct rdt_stuck *s,
				 const struct sqp *q)
{
	const struct sqp *any = NULL;

	if (!q->dest_qpn || !s->cap)
		return NULL;
	for (uint32_t i = s->qpn_head[qpn_bucket(q->dest_qpn, s->cap)]; i;
	     i = s->qps[i - 1].qpn_next) {
		const struct sqp *p = &s->qps[i - 1];

		if (!p->used || p->dead || p->qpn != q->dest_qpn ||
		    p->dest_qpn != q->qpn || p == q)
			continue;
		/* The GIDs, where both know them, decide: each QP's peer GID
		 * is the other's own (QPNs repeat on every host). */
		if (q->gids == 3 && p->gids == 3) {
			if (!memcmp(q->dgid, p->sgid, 16) &&
			    !memcmp(p->dgid, q->sgid, 16))
				return p;
			continue;
		}
		/* Else the PSNs, where both know them: they must cross. */
		if (q->psns == 3 && p->psns == 3) {
			if (q->sq_psn == p->rq_psn && q->rq_psn == p->sq_psn)
				return p;
			continue;
		}
		if (!any || p < any)	/* the table's first, as ever */
			any = p;
	}
	return any;
}

/* A rank entry of (host, pid) in communicator *@comm, or in any when
 * @comm is NULL.  Few (one per rank of the jobs in the trace): a linear
 * table, the last hit checked first. */
static struct srank *rank_lookup(struct rdt_stuck *s, uint32_t host,
				 uint32_t pid, const uint64_t *comm)
{
	struct srank *k;

	if (s->hint < s->nranks) {
		k = &s->ranks[s->hint];
		if (k->pid == pid && k->host == host && (!comm || k->comm_id == *comm))
			return k;
	}
	for (size_t i = 0; i < s->nranks; i++) {
		k = &s->ranks[i];
		if (k->pid == pid && k->host == host && (!comm || k->comm_id == *comm))
			return &s->ranks[s->hint = i];
	}
	return NULL;
}

/* The rank entry of (host, pid) in communicator @comm (0: a USDT rank);
 * made when @make. */
static struct srank *rank_get(struct rdt_stuck *s, uint32_t host,
			      uint32_t pid, uint64_t comm, bool make)
{
	struct srank *k = rank_lookup(s, host, pid, &comm);

	if (k || !make)
		return k;
	if (s->nranks == s->capranks) {
		size_t cap = s->capranks ? 2 * s->capranks : 16;

		if (cap > RDT_STUCK_MAX_RANKS ||
		    !(k = realloc(s->ranks, cap * sizeof(*k)))) {
			s->dropped_ranks++;
			return NULL;
		}
		s->ranks = k;
		s->capranks = cap;
	}
	k = &s->ranks[s->hint = s->nranks++];
	*k = (struct srank){ .host = host, .pid = pid, .comm_id = comm,
			     .p2p_peer = -1 };
	return k;
}

static void coll_mark(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_ev_coll_mark *m = &ev->rec.coll_mark;
	struct srank *k = rank_get(s, ev->host, m->hdr.pid, 0, true);

	if (!k)
		return;
	k->rank = m->rank;
	k->nranks = m->nranks;
	k->op = m->op;
	k->last_ev = ev->ts;
	if (ev->comm && *ev->comm)
		snprintf(k->comm, sizeof(k->comm), "%s", ev->comm);
	if (m->phase == 0) {
		k->seq = m->seq;
		k->begun = ev->ts ? ev->ts : 1;
		k->stepped = false;
	} else if (k->begun && k->seq == m->seq) {
		k->begun = 0;
		k->last_seq = m->seq + 1;
	}
}

/* ---- NCCL's collectives, through its profiler plugin -------------------- */

/* An NCCL rank's key: its commHash, 1 before the plugin knows it (v1..v3)
 * so that it stays apart from the USDT ranks' 0. */
/* A rank began a step of the collective it is in (USDT coll_step). */
static void coll_step(struct rdt_stuck *s, const struct rdt_event *ev)
{
	static const uint64_t usdt;	/* a USDT rank's comm_id */
	const struct rdt_ev_coll_step *m = &ev->rec.coll_step;
	struct srank *k = rank_lookup(s, ev->host, m->hdr.pid, &usdt);

	if (!k || !k->begun || k->seq != m->seq)
		return;
	k->step = m->step;
	k->steps = m->steps;
	k->stepped = true;
}

static uint64_t np_comm(uint64_t comm_id)
{
	return comm_id ? comm_id : 1;
}

/* The rank of a plugin record that names its communicator. */
static struct srank *np_rank(struct rdt_stuck *s, const struct rdt_event *ev,
			     uint64_t comm_id, bool make)
{
	struct srank *k = rank_get(s, ev->host, ev->rec.hdr.pid,
				   np_comm(comm_id), make);

	if (k && make && !*k->comm && ev->comm && *ev->comm)
		snprintf(k->comm, sizeof(k->comm), "%s", ev->comm);
	return k;
}

static struct stnp *np_find(const struct rdt_stuck *s, uint32_t host,
			    uint32_t pid, uint64_t id)
{
	return (struct stnp *)rdt_np_open_find(&s->np, host, pid, id);
}

/* A Coll or P2p with a child seen and none open: the rank is past it. */
static void np_done(struct rdt_stuck *s, const struct rdt_event *ev,
		    const struct stnp *c)
{
	struct srank *k;

	if (!c->o.stopped || c->o.open_kids || !c->first || c->p2p)
		return;
	k = np_rank(s, ev, c->comm_id, false);
	if (k && c->seq + 1 > k->last_seq)
		k->last_seq = c->seq + 1;
}

static void np_start(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	const struct rdt_np_ids *ids = &r->np_stop.ids;
	bool root = r->hdr.type == RDT_EV_NP_COLL || r->hdr.type == RDT_EV_NP_P2P;
	struct stnp *e, *c;

	if (s->np.n >= RDT_STUCK_MAX_NP) {
		s->dropped_np++;
		return;
	}
	e = (struct stnp *)rdt_np_open_start(&s->np, ev, root, NULL);
	if (!e) {
		s->dropped_np++;
		return;
	}
	e->type = r->hdr.type;
	e->ts = ev->ts;
	e->comm_id = ids->comm_id;
	e->peer = -1;
	switch (r->hdr.type) {
	case RDT_EV_NP_COLL:
		e->seq = r->np_coll.seq;
		memcpy(e->func, r->np_coll.func, sizeof(e->func));
		break;
	case RDT_EV_NP_P2P:
		e->p2p = true;
		e->peer = r->np_p2p.peer;
		memcpy(e->func, r->np_p2p.func, sizeof(e->func));
		break;
	case RDT_EV_NP_PROXY_OP:
		e->peer = r->np_proxy_op.peer;
		e->is_send = r->np_proxy_op.is_send;
		break;
	case RDT_EV_NP_PROXY_STEP:
		e->op = ids->parent;
		e->step = r->np_proxy_step.step;
		break;
	case RDT_EV_NP_NET_IB:
		e->wr_id = r->np_net_ib.wr_id;
		e->qpn = r->np_net_ib.qpn;
		e->ibdev = r->np_net_ib.device;
		break;
	default:
		break;
	}
	e->func[sizeof(e->func) - 1] = 0;
	if (root) {
		struct srank *k = np_rank(s, ev, ids->comm_id, true);

		if (k) {
			k->rank = ids->rank;
			k->op = 0;
			if (!k->begun)	/* its latest, until it waits in one */
				snprintf(k->func, sizeof(k->func), "%s", e->func);
		}
		return;
	}
	/* A collective's wait begins with its first child. */
	c = (struct stnp *)rdt_np_open_coll(&s->np, &e->o);
	if (c && !c->first)
		c->first = ev->ts ? ev->ts : 1;
}

/*
 * NCCL's WRs are keyed by NCCL's own device index, in a range of device
 * keys no kernel index takes; RDT_NO_DEV (NCCL's -1) stays its own.
 */
static uint32_t np_qp_dev(int32_t ibdev)
{
	return 0xffff0000u | ((uint32_t)ibdev & 0xffffu);
}

static bool is_np_qp_dev(uint32_t dev)
{
	return (dev & 0xffff0000u) == 0xffff0000u;
}

/* NCCL posted a WR (np_net_ib): on its QP's queue, as a verbs post. */
static void np_wr_post(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_ev_np_net_ib *ib = &ev->rec.np_net_ib;
	struct sqp *q = qp_find(s, ev->host, np_qp_dev(ib->device), ib->qpn,
				true);

	if (!q)
		return;
	qp_who(q, ev);
	if (!q->devname[0])
		snprintf(q->devname, sizeof(q->devname), "nccl-ib%d",
			 ib->device);
	q->named = q->comm[0] && q->devname[0];
	wr_push(s, q, ev->ts, ib->wr_id, ib->length, (uint8_t)ib->opcode);
}

/* A proxy step's state: its op's last state. */
static void np_state(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_ev_np_state *st = &ev->rec.np_state;
	struct stnp *step, *op;

	if (st->ids.ntype != RDT_NP_PROXY_STEP)
		return;
	step = np_find(s, ev->host, st->hdr.pid, st->ids.id);
	if (!step || step->type != RDT_EV_NP_PROXY_STEP ||
	    !(op = np_find(s, ev->host, st->hdr.pid, step->op)))
		return;
	op->state = st->state;
	op->step = step->step;
	op->state_ts = ev->ts ? ev->ts : 1;
}

static void np_stop(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const struct rdt_np_ids *ids = &ev->rec.np_stop.ids;
	uint32_t host = ev->host, pid = ev->rec.hdr.pid;
	struct stnp *e = np_find(s, host, pid, ids->id), *c;
	uint64_t coll;

	if (!e)
		return;
	if (e->type == RDT_EV_NP_NET_IB) {	/* NCCL saw it complete */
		struct sqp *q = qp_find(s, host, np_qp_dev(e->ibdev), e->qpn,
					false);

		if (q) {
			q->last_cqe = ev->ts;
			if (q->n)
				send_done(q, e->wr_id);
		}
	}
	coll = e->o.coll;
	rdt_np_open_stop(&s->np, &e->o, ev->ts);
	/* Entries move on a stop: the collective looked up again. */
	if (coll && (c = np_find(s, host, pid, coll)))
		np_done(s, ev, c);
}

/*
 * The ranks by (host, pid, comm_id), for refresh(): open addressing over
 * indexes into s->ranks, rebuilt at each report (ranks are few, the
 * table of open plugin events may be large: one pass over it, not one a
 * rank, so that a ring full of open events cannot stall the reader).
 */
struct rank_index {
	uint32_t *v;		/* rank index + 1; 0: free */
	size_t mask;
};

static size_t rank_hash(uint32_t host, uint32_t pid, uint64_t comm)
{
	uint64_t h = ((uint64_t)host << 32 | pid) * 0x9e3779b97f4a7c15ull ^
		     comm * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h ^ h >> 31);
}

/* @proc: keyed by (host, pid) only, each process's first rank. */
static bool rank_index_build(const struct rdt_stuck *s, struct rank_index *x,
			     bool proc)
{
	size_t cap = 16;

	while (cap < 2 * s->nranks)
		cap *= 2;
	x->v = calloc(cap, sizeof(*x->v));
	x->mask = cap - 1;
	if (!x->v)
		return false;
	for (size_t i = 0; i < s->nranks; i++) {
		const struct srank *k = &s->ranks[i];
		size_t j = rank_hash(k->host, k->pid, proc ? 0 : k->comm_id) & x->mask;
		bool dup = false;

		for (; x->v[j] && !dup; j = (j + 1) & x->mask) {
			const struct srank *o = &s->ranks[x->v[j] - 1];

			dup = proc && o->host == k->host && o->pid == k->pid;
		}
		if (!dup)
			x->v[j] = (uint32_t)i + 1;
	}
	return true;
}

static struct srank *rank_index_find(struct rdt_stuck *s,
				     const struct rank_index *x, uint32_t host,
				     uint32_t pid, uint64_t comm, bool proc)
{
	for (size_t j = rank_hash(host, pid, comm) & x->mask; x->v[j];
	     j = (j + 1) & x->mask) {
		struct srank *k = &s->ranks[x->v[j] - 1];

		if (k->host == host && k->pid == pid &&
		    (proc || k->comm_id == comm))
			return k;
	}
	return NULL;
}

/* One open plugin event into its rank's view: the oldest collective it
 * waits in, what is open under it, and by which peers. */
static void np_view_add(struct rdt_stuck *s, struct srank *k,
			const struct stnp *e)
{
	const struct stnp *c;
	size_t len, j;

	if (e->o.coll == e->o.id) {
		if (e->o.open_kids && e->first && (!k->w || e->first < k->w->first))
			k->w = e;
		return;
	}
	if (e->type != RDT_EV_NP_KERNEL_CH && e->type != RDT_EV_NP_PROXY_OP)
		return;
	c = (const struct stnp *)rdt_np_open_coll(&s->np, &e->o);
	if (!c)
		return;
	if (!k->oldest_open || e->ts < k->oldest_open)
		k->oldest_open = e->ts;
	if (e->type == RDT_EV_NP_KERNEL_CH) {
		k->kch++;
		return;
	}
	k->ops++;
	if (e->state && (!k->waits || e->state_ts < k->waits->state_ts))
		k->waits = e;
	for (j = 0; j < k->npeers; j++)
		if (k->peer_seen[j].peer == e->peer &&
		    k->peer_seen[j].send == e->is_send)
			return;
	if (k->npeers == sizeof(k->peer_seen) / sizeof(k->peer_seen[0]))
		return;
	k->peer_seen[k->npeers].peer = e->peer;
	k->peer_seen[k->npeers++].send = e->is_send;
	len = strlen(k->peers);
	snprintf(k->peers + len, sizeof(k->peers) - len, "%s%s%d",
		 len ? "," : "", e->is_send ? ">" : "<", e->peer);
}

/*
 * Each rank's process's QPs, for the report: one pass over the table into
 * the process's first rank (its sends, unpolled completions, oldest send,
 * and a list of its QPs in table order), so that the report's lines per
 * rank do not each scan the table.
 */
static void proc_qps(struct rdt_stuck *s, const struct rank_index *px)
{
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];

		k->proc = rank_index_find(s, px, k->host, k->pid, 0, true);
		k->p_sends = k->p_unpolled = k->p_unpolled_since = 0;
		k->p_oldest = NULL;
		k->p_qp_first = 0;
	}
	for (size_t i = s->cap; i-- > 0;) {	/* prepended: table order */
		struct sqp *q = &s->qps[i];
		struct srank *f;

		if (!q->used || q->dead)
			continue;
		f = rank_index_find(s, px, q->host, q->pid, 0, true);
		if (!f)
			continue;
		q->proc_next = f->p_qp_first;
		f->p_qp_first = (uint32_t)i + 1;
		f->p_sends += q->n;
		if (q->n && (!f->p_oldest ||
			     q->q[q->head].ts <= f->p_oldest->q[f->p_oldest->head].ts))
			f->p_oldest = q;
		if (q->polls_seen && q->unpolled) {
			f->p_unpolled += q->unpolled;
			if (!f->p_unpolled_since ||
			    q->unpolled_since < f->p_unpolled_since)
				f->p_unpolled_since = q->unpolled_since;
		}
	}
}

/*
 * At report time (@now, trace time): each rank's process's last event,
 * and each plugin rank's view of its open events, in one pass over the
 * ranks and one over the table (first the collectives done long ago
 * leave it).
 */
static void refresh(struct rdt_stuck *s, uint64_t now)
{
	struct rank_index x = { 0 }, px = { 0 };

	if (s->np.n)
		rdt_np_open_linger(&s->np, now);
	for (size_t i = 0; i < s->nranks; i++)
		s->ranks[i].proc = NULL;
	if (!s->nranks || !rank_index_build(s, &x, false) ||
	    !rank_index_build(s, &px, true)) {
		free(x.v);
		return;
	}
	proc_qps(s, &px);
	/* A process's last event is on one of its ranks (rdt_stuck_add):
	 * the maximum goes to its first rank in px, then back to each. */
	for (size_t i = 0; i < s->nranks; i++)
		s->ranks[i].proc_last = 0;
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		struct srank *f = rank_index_find(s, &px, k->host, k->pid, 0, true);

		if (f && k->last_ev > f->proc_last)
			f->proc_last = k->last_ev;
	}
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		struct srank *f = rank_index_find(s, &px, k->host, k->pid, 0, true);

		if (f)
			k->proc_last = f->proc_last;
		if (!k->comm_id)
			continue;
		k->kch = k->ops = 0;
		k->peers[0] = 0;
		k->oldest_open = 0;
		k->waits = NULL;
		k->w = NULL;
		k->npeers = 0;
	}
	for (size_t i = 0; s->np.n && i < s->np.cap; i++) {
		const struct stnp *e = (const struct stnp *)(s->np.v + i * s->np.esz);
		struct srank *k;

		if (!e->o.key)
			continue;
		k = rank_index_find(s, &x, e->o.host, e->o.pid,
				    np_comm(e->comm_id), false);
		if (k)
			np_view_add(s, k, e);
	}
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		const struct stnp *w = k->w;

		if (!k->comm_id)
			continue;
		k->begun = 0;
		k->p2p_peer = -1;
		if (!w)
			continue;
		k->begun = w->first;
		k->seq = w->p2p ? k->last_seq : w->seq;
		k->p2p_peer = w->p2p ? w->peer : -1;
		snprintf(k->func, sizeof(k->func), "%s", w->func);
	}
	free(x.v);
	free(px.v);
}

static __attribute__((noinline)) void stuck_add(struct rdt_stuck *s,
						 const struct rdt_event *ev);

/*
 * The common case of a send posted: a QP in the cache, the same process,
 * room in its ring.  False, having changed nothing, for anything else:
 * stuck_add() then takes the event.  No call on this path, so that
 * rdt_stuck_add() saves no register for it (make bench's figure 3).
 */
static inline __attribute__((always_inline)) bool post_send_fast(struct rdt_stuck *s,
								  const struct rdt_event *ev)
{
	const struct rdt_ev_post_send *p = &ev->rec.post_send;
	struct sqp *q;

	if (s->nranks)
		return false;
	if (p->ret || p->bad)
		return true;
	q = qp_cached(s, ev->host, p->hdr.dev, p->qpn);
	if (!q || q->pid != p->hdr.pid || q->n == q->cap ||
	    (!q->named && (q->who_comm != ev->comm || q->who_dev != ev->devname)))
		return false;
	if (!q->n)
		q->retries = q->rnr = q->naks = 0;
	q->q[(q->head + q->n) & (q->cap - 1)] = (struct swr){ ev->ts, p->wr_id,
		p->total_len, p->opcode };
	q->n++;
	return true;
}

/*
 * The common case of a completion polled: a QP in the cache, no error, a
 * receive or the oldest send outstanding.  False, having changed nothing,
 * for anything else (stuck_add() then takes it).
 */
static inline __attribute__((always_inline)) bool wc_fast(struct rdt_stuck *s,
							   const struct rdt_event *ev)
{
	const struct rdt_ev_poll_cq_wc *w = &ev->rec.wc;
	struct sqp *q;

	if (s->nranks)
		return false;
	q = qp_cached(s, ev->host, w->hdr.dev, w->qpn);
	if (!q || w->status)
		return false;
	if (w->opcode & 128) {		/* IB_WC_RECV*: a receive */
		if (q->recvs)
			q->recvs--;
	} else if (q->n) {
		if (q->q[q->head].wr_id != w->wr_id)
			return false;	/* not the oldest: send_done() */
		q->head = (q->head + 1) & (q->cap - 1);
		q->n--;
		q->retries = q->rnr = q->naks = 0;
	}
	q->polls_seen = true;
	if (q->unpolled && !--q->unpolled)
		q->unpolled_since = 0;
	q->last_cqe = ev->ts;
	return true;
}

/*
 * Per event: the two kinds that are most of a trace, a send posted and a
 * completion polled, on a short path (the tracker's cost is make bench's
 * figure 3); everything else, and every event once ranks are tracked
 * (their last event is kept), out of line.
 */
RDT_EXPORT void rdt_stuck_add(struct rdt_stuck *s, const struct rdt_event *ev)
{
	uint16_t t = ev->rec.hdr.type;

	/* nranks is tested inside the fast paths, where the compiler folds
	 * it into their other bail-outs. */
	if (t == RDT_EV_POST_SEND || t == RDT_EV_VERBS_POST_SEND) {
		if (post_send_fast(s, ev))
			return;
	} else if (t == RDT_EV_POLL_CQ_WC || t == RDT_EV_VERBS_WC) {
		if (wc_fast(s, ev))
			return;
	}
	stuck_add(s, ev);
}

static void stuck_add(struct rdt_stuck *s, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	struct sqp *q, **slot;

	if (s->nranks && r->hdr.type != RDT_EV_COLL_MARK) {
		/* The process's last event: on one of its ranks, the others
		 * read it at report time (quiet()). */
		struct srank *k = rank_lookup(s, ev->host, r->hdr.pid, NULL);

		if (k && ev->ts > k->last_ev)
			k->last_ev = ev->ts;
	}
	switch (r->hdr.type) {
	case RDT_EV_COLL_MARK:
		coll_mark(s, ev);
		break;
	case RDT_EV_COLL_STEP:
		coll_step(s, ev);
		break;
	case RDT_EV_NP_COMM_INIT: {
		struct srank *k = np_rank(s, ev, r->np_comm.ids.comm_id, true);

		if (k) {
			k->rank = r->np_comm.ids.rank;
			k->nranks = r->np_comm.nranks;
			k->last_ev = ev->ts;
		}
		break;
	}
	case RDT_EV_NP_COLL:
	case RDT_EV_NP_P2P:
	case RDT_EV_NP_KERNEL_CH:
	case RDT_EV_NP_PROXY_OP:
	case RDT_EV_NP_PROXY_STEP:
		np_start(s, ev);
		break;
	case RDT_EV_NP_NET_IB:
		np_start(s, ev);
		np_wr_post(s, ev);
		break;
	case RDT_EV_NP_STATE:
		np_state(s, ev);
		break;
	case RDT_EV_NP_STOP:
		np_stop(s, ev);
		break;
	case RDT_EV_POST_SEND:
	case RDT_EV_VERBS_POST_SEND:
		post_send(s, ev);
		break;
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_RECV:
		if (r->post_recv.ret || r->post_recv.bad)
			break;
		q = qp_find(s, ev->host, r->hdr.dev, r->post_recv.qpn, true);
		if (q) {
			qp_who(q, ev);
			q->recvs++;
		}
		break;
	case RDT_EV_POST_FAIL:
	case RDT_EV_VERBS_POST_FAIL:
		post_fail(s, ev);
		break;
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_VERBS_WC:
		completion(s, ev, r->wc.qpn, r->wc.wr_id, r->wc.status,
			   r->wc.opcode, r->wc.vendor_err);
		break;
	case RDT_EV_RXE_CQE:
		completion(s, ev, r->rxe_cqe.qpn, r->rxe_cqe.wr_id,
			   r->rxe_cqe.status, r->rxe_cqe.opcode, 0);
		break;
	case RDT_EV_QP_CREATE:
		if (r->qp_create.ret)
			break;
		q = qp_find(s, ev->host, r->hdr.dev, r->qp_create.qpn, true);
		if (q) {
			qp_who(q, ev);
			q->state = 0;	/* IB_QPS_RESET */
		}
		break;
	case RDT_EV_QP_MODIFY:
		if (r->qp_modify.ret)
			break;
		q = qp_find(s, ev->host, r->hdr.dev, r->qp_modify.qpn, true);
		if (!q)
			break;
		qp_who(q, ev);
		q->state = r->qp_modify.cur_state;
		if (r->qp_modify.attr_mask & (1u << 20))	/* IB_QP_DEST_QPN */
			q->dest_qpn = r->qp_modify.dest_qpn;
		if (r->qp_modify.attr_mask & (1u << 16)) {	/* IB_QP_SQ_PSN */
			q->sq_psn = r->qp_modify.sq_psn;
			q->psns |= 1;
		}
		if (r->qp_modify.attr_mask & (1u << 12)) {	/* IB_QP_RQ_PSN */
			q->rq_psn = r->qp_modify.rq_psn;
			q->psns |= 2;
		}
		if ((r->qp_modify.gids & (RDT_QP_DGID | RDT_QP_SGID)) ==
		    (RDT_QP_DGID | RDT_QP_SGID)) {
			memcpy(q->dgid, r->qp_modify.dgid, 16);
			memcpy(q->sgid, r->qp_modify.sgid, 16);
			q->gids = 3;
		}
		break;
	case RDT_EV_QP_DESTROY:
		q = qp_find(s, ev->host, r->hdr.dev, r->qp_destroy.qpn, false);
		if (q && !r->qp_destroy.ret) {
			struct sqp *p = (struct sqp *)peer_of(s, q);

			if (p) {
				p->peer_gone = ev->ts ? ev->ts : 1;
				p->peer_gone_pid = q->pid;
				p->peer_gone_host = q->host;
				p->peer_gone_status = q->err.ts ? q->err.status : 0;
				p->peer_gone_wr = q->err.wr_id;
			}
			free(q->q);
			q->q = NULL;
			q->n = q->cap = 0;
			q->dead = true;	/* its qpn may come back: a new QP */
			s->live--;
			slot = qslot(s, q->host, q->dev, q->qpn);
			if (*slot == q)
				*slot = NULL;
		}
		break;
	case RDT_EV_RXE_RETRY:
		q = qp_find(s, ev->host, r->hdr.dev, r->rxe_retry.qpn, false);
		if (q && q->n) {
			if (r->rxe_retry.kind == RDT_RXE_RNR)
				q->rnr++;
			else
				q->retries++;
			if (r->rxe_retry.kind == RDT_RXE_NAK_SEQ)
				q->naks++;
		}
		break;
	case RDT_EV_PORT_COUNTER:
		if (s->ctrs)
			rdt_ctr_history_add(s->ctrs, ev);
		break;
	default:
		break;
	}
}

/* ---- the report ------------------------------------------------------- */

/*
 * Since when the QP waits, 0 if it does not: its oldest send outstanding;
 * else, with receives posted, its peer's destruction (its process gone:
 * nothing will ever arrive).
 */
static uint64_t waits_since(const struct sqp *q)
{
	if (q->n)
		return q->q[q->head].ts;
	if (q->peer_gone && q->recvs && q->state == 3)	/* IB_QPS_RTS */
		return q->peer_gone;
	return 0;
}

struct hit {
	struct sqp *q;
	uint64_t age;		/* since waits_since() */
};

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	return x->age < y->age ? 1 : x->age > y->age ? -1 : 0;
}

/* A QP of NCCL's plugin view that a kernel device's view (--verbs, the
 * module) has too: same host, process and QPN. */
static bool seen_by_verbs(const struct rdt_stuck *s, const struct sqp *q)
{
	for (uint32_t i = s->qpn_head[qpn_bucket(q->qpn, s->cap)]; i;
	     i = s->qps[i - 1].qpn_next) {
		const struct sqp *p = &s->qps[i - 1];

		if (p->used && !p->dead && p->qpn == q->qpn &&
		    p->host == q->host && p->pid == q->pid &&
		    !is_np_qp_dev(p->dev))
			return true;
	}
	return false;
}

/* The QPs with a send outstanding for at least @min at @now, oldest
 * first; *n their number.  NULL with *n 0 when none (or no memory). */
static struct hit *collect(struct rdt_stuck *s, uint64_t now, uint64_t min,
			   size_t *n)
{
	struct hit *v = NULL;
	size_t k = 0, cap = 0;

	for (size_t i = 0; i < s->cap; i++) {
		struct sqp *q = &s->qps[i];
		uint64_t ts;

		if (!q->used || q->dead || !(ts = waits_since(q)))
			continue;
		if (now < ts || now - ts < min)
			continue;
		if (is_np_qp_dev(q->dev) && seen_by_verbs(s, q))
			continue;
		if (k == cap) {
			struct hit *t = realloc(v, (cap = cap ? 2 * cap : 16) *
						sizeof(*v));
			if (!t)
				break;
			v = t;
		}
		v[k++] = (struct hit){ q, now - ts };
	}
	if (k)
		qsort(v, k, sizeof(*v), hit_cmp);
	*n = k;
	return v;
}

static const char *host_of(const struct rdt_reader *r, uint32_t host,
			   char *buf, size_t len)
{
	return r ? rdt_reader_host_label(r, host, buf, len) : "-";
}

static double secs(uint64_t ns)
{
	return (double)ns / NS;
}

/* Seconds from @ts to @now, 0 for a @ts not before it. */
static double ago(uint64_t now, uint64_t ts)
{
	return secs(now > ts ? now - ts : 0);
}

static const char *coll_op(const struct srank *k)
{
	if (*k->func)
		return k->func;
	return k->op == 1 ? "allreduce" : "collective";
}

/*
 * The rank whose process owns a QP, if its collectives are traced: the
 * cause line ties the QP to the collective and step that wait on it.
 */
static void print_owner(const struct rdt_stuck *s, const struct sqp *q,
			FILE *o)
{
	for (size_t i = 0; i < s->nranks; i++) {
		const struct srank *k = &s->ranks[i];

		if (k->pid != q->pid || k->host != q->host)
			continue;
		fprintf(o, "; QP 0x%x is rank %d's", q->qpn, k->rank);
		if (k->begun) {
			fprintf(o, ", in %s seq %" PRIu64, coll_op(k), k->seq);
			if (k->stepped)
				fprintf(o, " step %u of %u", k->step, k->steps);
		}
		return;
	}
}

static void print_cause(const struct rdt_stuck *s, const struct rdt_reader *r,
			const struct hit *h, uint64_t now, FILE *o)
{
	char hq[80], hp[80];
	const struct sqp *q = h->q, *p = peer_of(s, q);
	const struct swr *w = &q->q[q->head];
	const char *op = q->n ? rdt_wr_opcode_name(w->opcode) : NULL;

	fprintf(o, "stuck: cause: ");
	if (q->peer_gone) {	/* whatever it waits for, nothing will come */
		bool far = q->peer_gone_host != q->host;

		fprintf(o, "qp=0x%x (pid %u) waits for its peer QP 0x%x, destroyed %.1f s ago by pid %u",
			q->qpn, q->pid, q->dest_qpn, ago(now, q->peer_gone),
			q->peer_gone_pid);
		if (far)
			fprintf(o, " on host %s",
				host_of(r, q->peer_gone_host, hp, sizeof(hp)));
		if (q->peer_gone_status)
			fprintf(o, " after its wr_id=0x%" PRIx64 " completed with %s",
				q->peer_gone_wr,
				rdt_wc_status_name(q->peer_gone_status));
		/* A process that holds both ends (a loopback test) destroyed
		 * the peer itself: nothing else of it is gone. */
		fprintf(o, "%s", !far && q->peer_gone_pid == q->pid ?
			": its own process destroyed the peer, which will not answer" :
			": the peer process is gone");
		/* An error on a QP whose peer is on another host, and the
		 * process gave up: what the link between them did. */
		if (far && q->peer_gone_status)
			fprintf(o, " (the link between %s and %s failed it)",
				host_of(r, q->peer_gone_host, hp, sizeof(hp)),
				host_of(r, q->host, hq, sizeof(hq)));
		fprintf(o, " (sends outstanding %u, receives posted %" PRIu64 ", rxe retries %" PRIu64 ")",
			q->n, q->recvs, q->retries);
	} else if (q->err.ts) {
		fprintf(o, "qp=0x%x completed wr_id=0x%" PRIx64 " with %s (vendor_err %u) %.1f s ago: the QP is in error, its %u outstanding send WRs will not complete",
			q->qpn, q->err.wr_id, rdt_wc_status_name(q->err.status),
			q->err.vendor_err, secs(now - q->err.ts), q->n);
	} else if (q->retries) {
		fprintf(o, "qp=0x%x's %s wr_id=0x%" PRIx64 " has waited %.1f s; rxe retried %" PRIu64 " times since: packets are lost, or the peer QP 0x%x",
			q->qpn, op ? op : "WR", w->wr_id, secs(h->age),
			q->retries, q->dest_qpn);
		if (p && p->host != q->host)
			fprintf(o, " (pid %u on host %s)", p->pid,
				host_of(r, p->host, hp, sizeof(hp)));
		else if (p)
			fprintf(o, " (pid %u)", p->pid);
		fprintf(o, " is gone");
		/* Both ends retrying, on two hosts: the wire between them. */
		if (p && p->host != q->host && p->n && p->retries)
			fprintf(o, "; its peer retries too (%" PRIu64 "): the link between %s and %s loses packets both ways",
				p->retries, host_of(r, q->host, hq, sizeof(hq)),
				host_of(r, p->host, hp, sizeof(hp)));
	} else if (q->rnr) {
		fprintf(o, "qp=0x%x's %s wr_id=0x%" PRIx64 " has waited %.1f s; the receiver answered RNR %" PRIu64 " times: its process posts no receives (stopped, or slow)",
			q->qpn, op ? op : "WR", w->wr_id, secs(h->age), q->rnr);
	} else if (q->state != 0xff && q->state != 3) {	/* IB_QPS_RTS */
		fprintf(o, "qp=0x%x is in state %s with %u send WRs outstanding for %.1f s",
			q->qpn, rdt_qp_state_name(q->state), q->n, secs(h->age));
	} else {
		struct rdt_ctr_move m[4];
		size_t k = 0, more = 0;

		if (s->ctrs)
			k = rdt_ctr_history_moved(s->ctrs, q->host, q->devname,
						  w->ts, m, 4, &more);
		fprintf(o, "qp=0x%x's %s wr_id=0x%" PRIx64 " has waited %.1f s with no completion and no retry traced (rxe's retries show with --rxe)",
			q->qpn, op ? op : "WR", w->wr_id, secs(h->age));
		/* Without rxe's hooks (mlx5, siw), the port's own error
		 * counters are what says the packets went missing. */
		for (size_t i = 0; i < k; i++)
			fprintf(o, "%s%s %+" PRId64 "%s", i ? ", " : "; the port's error counters moved since: ",
				m[i].name, m[i].delta, m[i].at_least ? " or more" : "");
		if (more)
			fprintf(o, " and %zu more", more);
	}
	print_owner(s, q, o);
	fputc('\n', o);
}

/*
 * counters_moved=: the device's error counters that moved while the QP
 * waited ("none": sampled, none moved; left out when the trace has no
 * sample of that device).  A "+" after a delta: at least that much.
 */
static void print_counters(const struct rdt_stuck *s, const struct sqp *q,
			   FILE *o)
{
	struct rdt_ctr_move m[6];
	size_t n, more;

	if (!s->ctrs || !rdt_ctr_history_seen(s->ctrs, q->host, q->devname))
		return;
	n = rdt_ctr_history_moved(s->ctrs, q->host, q->devname,
				  waits_since(q), m, 6, &more);
	fprintf(o, " counters_moved=");
	if (!n)
		fprintf(o, "none");
	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s%u/%s%+" PRId64 "%s", i ? "," : "", m[i].port,
			m[i].name, m[i].delta, m[i].at_least ? "+" : "");
	if (more)
		fprintf(o, ",+%zu_more", more);
}

static void print_qp(const struct rdt_stuck *s, const struct rdt_reader *r,
		     const struct hit *h, uint64_t now, FILE *o)
{
	const struct sqp *q = h->q, *p = peer_of(s, q);
	const struct swr *w = q->n ? &q->q[q->head] : NULL;
	const char *op = w ? rdt_wr_opcode_name(w->opcode) : NULL;
	char hb[80], pb[80];

	fprintf(o, "stuck: qp host=%s pid=%u comm=%s dev=%s qpn=0x%x state=%s dest_qpn=0x%x",
		host_of(r, q->host, hb, sizeof(hb)), q->pid, *q->comm ? q->comm : "-",
		*q->devname ? q->devname : "-", q->qpn,
		q->state == 0xff ? "-" : rdt_qp_state_name(q->state),
		q->dest_qpn);
	if (q->gids) {
		char g[64];

		rdt_gid_str(q->dgid, g, sizeof(g));
		fprintf(o, " dgid=%s", g);
	}
	if (p)
		fprintf(o, " peer_host=%s peer_pid=%u",
			host_of(r, p->host, pb, sizeof(pb)), p->pid);
	else if (q->peer_gone)	/* its peer, destroyed: where it was */
		fprintf(o, " peer_host=%s peer_pid=%u",
			host_of(r, q->peer_gone_host, pb, sizeof(pb)),
			q->peer_gone_pid);
	fprintf(o, " outstanding=%u", q->n);
	if (w)
		fprintf(o, " oldest_wr_id=0x%" PRIx64 " opcode=%s length=%" PRIu64,
			w->wr_id, op ? op : "?", w->len);
	if (q->peer_gone)
		fprintf(o, " peer_gone=%.3f",
			ago(now, q->peer_gone));
	fprintf(o, " age=%.3f recv_outstanding=%" PRIu64, secs(h->age), q->recvs);
	if (q->last_cqe)
		fprintf(o, " last_completion_age=%.3f",
			ago(now, q->last_cqe));
	else
		fprintf(o, " last_completion_age=-");
	fprintf(o, " retries=%" PRIu64 " naks=%" PRIu64 " rnr=%" PRIu64,
		q->retries, q->naks, q->rnr);
	print_counters(s, q, o);
	if (q->polls_seen && q->unpolled)
		fprintf(o, " unpolled=%" PRIu64, q->unpolled);
	if (q->err.ts)
		fprintf(o, " error=%s", rdt_wc_status_name(q->err.status));
	if (q->dropped_wrs)
		fprintf(o, " dropped_wrs=%" PRIu64, q->dropped_wrs);
	fputc('\n', o);
}

/*
 * What /proc says of a rank's process (live, this machine): its state
 * letter (R, S, D, T stopped, t traced, Z), or 0 when it is gone: no
 * entry, or another process under its pid.  A pid reused is told by the
 * process's start time (field 22), kept from the first read; before one,
 * by a command name of another length or other letters (a thread may
 * rename itself, so names are only a fallback).  '?' when /proc could not
 * be read.  The file is read once, bounded, and parsed from the last ')'
 * (a command name may hold anything).
 */
static char proc_state(const struct rdt_stuck *s, struct srank *k)
{
	char path[32], buf[512], *open_, *close_, *f22;
	unsigned long long start = 0;
	bool other;
	size_t n;
	FILE *f;

	if (!s->procs || k->host != 0 || !k->pid)
		return '?';
	snprintf(path, sizeof(path), "/proc/%u/stat", k->pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_ || close_ < open_ || close_[1] != ' ' || !close_[2])
		return '?';
	/* fields 3.. follow ") ": the 22nd is the 20th of them */
	f22 = close_ + 2;
	for (int i = 0; i < 19 && f22; i++)
		f22 = strchr(f22, ' ') ? strchr(f22, ' ') + 1 : NULL;
	other = *k->comm && (size_t)(close_ - open_ - 1) == strlen(k->comm) &&
		strncmp(open_ + 1, k->comm, strlen(k->comm));
	if (f22 && sscanf(f22, "%llu", &start) == 1 && start) {
		if (k->proc_start)
			return k->proc_start == start ? close_[2] : 0;
		if (other)
			return 0;
		k->proc_start = start;
	} else if (other) {
		return 0;
	}
	return close_[2];
}

static const char *proc_word(char st)
{
	switch (st) {
	case 0: return "gone";
	case 'T': return "stopped";
	case 't': return "traced";
	case 'Z': return "zombie";
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk";
	default: return NULL;
	}
}

/* A rank waiting in a collective for at least @min at @now. */
static bool coll_waiting(const struct srank *k, uint64_t now, uint64_t min)
{
	return k->begun && now >= k->begun && now - k->begun >= min;
}

static size_t stuck_colls(const struct rdt_stuck *s, uint64_t now,
			  uint64_t min)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nranks; i++)
		n += coll_waiting(&s->ranks[i], now, min);
	return n;
}

/* The collective's name: NCCL's (plugin), else the USDT mark's op. */
/* Since the rank's process traced anything (any of its ranks' events,
 * as of the last refresh()). */
static uint64_t quiet(const struct rdt_stuck *s, const struct srank *k,
		      uint64_t now)
{
	uint64_t last = k->proc_last > k->last_ev ? k->proc_last : k->last_ev;

	(void)s;
	return now > last ? now - last : 0;
}

/* @k is of @w's job: the same NCCL communicator, or for USDT ranks the
 * same nranks. */
static bool same_job(const struct srank *k, const struct srank *w)
{
	return k->comm_id == w->comm_id &&
	       (w->comm_id || k->nranks == w->nranks);
}

/* The rank's QPs' completions rxe made and it has not polled: how many,
 * and since when (the oldest); 0 when none. */
static uint64_t rank_unpolled(const struct srank *k, uint64_t *since)
{
	*since = k->proc ? k->proc->p_unpolled_since : 0;
	return k->proc ? k->proc->p_unpolled : 0;
}

/* Where a rank is in its run of collectives: the one it is in, else the
 * next it will begin. */
/* The send WRs outstanding on a rank's process's QPs. */
static uint64_t rank_sends(const struct srank *k)
{
	return k->proc ? k->proc->p_sends : 0;
}

/* "; it waits for its send WR ... on QP ...": the oldest send outstanding
 * on a rank's process's QPs, if any, with rxe's retries of it.  False when
 * it has none. */
static bool print_oldest_send(const struct srank *k, uint64_t now, FILE *o)
{
	const struct sqp *old = k->proc ? k->proc->p_oldest : NULL;
	const char *op;

	if (!old)
		return false;
	op = rdt_wr_opcode_name(old->q[old->head].opcode);
	fprintf(o, "; it waits for its %s wr_id=0x%" PRIx64 " on QP 0x%x, posted %.1f s ago",
		op ? op : "WR", old->q[old->head].wr_id, old->qpn,
		ago(now, old->q[old->head].ts));
	if (old->retries || old->rnr)
		fprintf(o, ", rxe retried %" PRIu64 " times since", old->retries + old->rnr);
	return true;
}

static uint64_t position(const struct srank *k)
{
	return k->begun ? k->seq : k->last_seq;
}

/*
 * Why the oldest waiting rank's job is stuck, in order of how much each
 * sign says: a rank that has not polled what rxe completed for it (past
 * half the limit: it is not running), a rank behind the others (still in,
 * or not yet at, a collective they are past), a rank quiet past the
 * limit, else every rank waits in the same collective.  The job: the
 * ranks of the waiting rank's NCCL communicator, or (USDT) with its
 * nranks.
 */
static bool coll_cause(struct rdt_stuck *s, uint64_t now, bool strong,
		       FILE *o)
{
	const struct srank *w = NULL, *late = NULL, *q = NULL, *np = NULL;
	const struct srank *halted = NULL, *lag = NULL;
	uint32_t step_front = 0;
	char halted_st = '?';
	uint64_t np_n = 0, np_since = 0, front = 0;
	char waiting[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < s->nranks; i++)
		if (coll_waiting(&s->ranks[i], now, s->limit) &&
		    (!w || s->ranks[i].begun < w->begun))
			w = &s->ranks[i];
	if (!w)
		return false;
	for (size_t i = 0; i < s->nranks; i++)
		if (same_job(&s->ranks[i], w) &&
		    position(&s->ranks[i]) > front)
			front = position(&s->ranks[i]);
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		uint64_t since, un;

		if (!same_job(k, w))
			continue;
		if (!halted) {
			char st = proc_state(s, k);

			if (st == 0 || st == 'T' || st == 't' || st == 'Z') {
				halted = k;
				halted_st = st;
			}
		}
		un = rank_unpolled(k, &since);
		if (un && now >= since && now - since >= s->limit / 2 &&
		    (!np || since < np_since)) {
			np = k;
			np_n = un;
			np_since = since;
		}
		if (position(k) < front && (!late || position(k) < position(late)))
			late = k;
		/* Inside the oldest waiting collective: the rank at the
		 * lowest step, when another is further on. */
		if (k->begun && k->stepped && k->seq == w->seq) {
			if (k->step > step_front)
				step_front = k->step;
			if (!lag || k->step < lag->step)
				lag = k;
		}
		if (!q || quiet(s, k, now) > quiet(s, q, now))
			q = k;
		if (k->begun && len < sizeof(waiting) - 32)
			len += (size_t)snprintf(waiting + len, sizeof(waiting) - len,
						"%s%d(seq %" PRIu64 ")",
						len ? "," : "", k->rank, k->seq);
	}
	if (strong && !np && !halted)
		return false;
	fprintf(o, "stuck: cause: ");
	if (halted)
		fprintf(o, "rank %d (pid %u %s) is %s: %s",
			halted->rank, halted->pid,
			*halted->comm ? halted->comm : "-", proc_word(halted_st),
			halted_st == 'T' ? "stopped by a signal (SIGSTOP, SIGTSTP), its peers wait for it" :
			halted_st == 't' ? "held by a debugger or tracer, its peers wait for it" :
			halted_st == 'Z' ? "it exited and its peers wait for it" :
			"its process exited, and its peers wait for it");
	else if (np)
		fprintf(o, "rank %d (pid %u %s) has not polled %" PRIu64 " completions rxe made %.1f s ago: that process is stopped, or busy outside RDMA",
			np->rank, np->pid, *np->comm ? np->comm : "-", np_n,
			secs(now - np_since));
	else if (late) {
		fprintf(o, "rank %d (pid %u %s) is behind: %s %s seq %" PRIu64 " while another rank is at seq %" PRIu64,
			late->rank, late->pid, *late->comm ? late->comm : "-",
			late->begun ? "still in" : "has not begun",
			coll_op(w), position(late), front);
		/* Behind because its sends do not complete (a lossy link,
		 * its peer gone), or because it does not run. */
		if (!print_oldest_send(late, now, o))
			fprintf(o, "; it has traced nothing for %.1f s",
				secs(quiet(s, late, now)));
	}
	else if (lag && step_front > lag->step && rank_sends(lag))
		fprintf(o, "rank %d (pid %u %s) is furthest behind in %s seq %" PRIu64 ": at step %u of %u while another rank is at step %u; its step %u sends have not completed (SendWait): the link to its peer, or the peer, does not answer",
			lag->rank, lag->pid, *lag->comm ? lag->comm : "-",
			coll_op(w), w->seq, lag->step, lag->steps, step_front,
			lag->step);
	else if (lag && step_front > lag->step)
		fprintf(o, "no WR outstanding: rank %d (pid %u %s) never posted step %u of %s seq %" PRIu64 " (another rank is at step %u; it waits for step %u's data (RecvWait), or its process is stopped or slow; traced nothing for %.1f s)",
			lag->rank, lag->pid, *lag->comm ? lag->comm : "-",
			lag->step + 1, coll_op(w), w->seq, step_front, lag->step,
			secs(quiet(s, lag, now)));
	else if (q && quiet(s, q, now) >= s->limit)
		fprintf(o, "rank %d (pid %u %s) has traced nothing for %.1f s: that process is stopped, or busy outside RDMA",
			q->rank, q->pid, *q->comm ? q->comm : "-",
			secs(quiet(s, q, now)));
	else if (w->p2p_peer >= 0)
		fprintf(o, "rank %d waits in a %s with rank %d, none behind, none quiet past the limit",
			w->rank, coll_op(w), w->p2p_peer);
	else
		fprintf(o, "every rank waits in %s seq %" PRIu64 ", none behind, none quiet past the limit",
			coll_op(w), w->seq);
	fprintf(o, "; waiting: ranks %s, the oldest for %.1f s\n", waiting,
		secs(now - w->begun));
	return true;
}

/*
 * A plugin rank's open children (np_view()): its kernel channels still
 * running, and its proxy ops still moving data, by peer (send to, recv
 * from): the peers a rank stuck in a collective waits on; and the op
 * whose step has been longest in its state: where it waits.
 */
static void print_np_open(const struct srank *k, uint64_t now, FILE *o)
{
	const char *name;

	if (!k->comm_id || (!k->kch && !k->ops && !k->begun))
		return;
	fprintf(o, " kernel_channels=%u proxy_ops=%u", k->kch, k->ops);
	if (k->ops)
		fprintf(o, " peers=%s", k->peers);
	if (k->waits && (name = rdt_np_state_name(k->waits->state)))
		fprintf(o, " waits=%s%d:%s step=%d for=%.3f",
			k->waits->is_send ? ">" : "<", k->waits->peer, name,
			k->waits->step, ago(now, k->waits->state_ts));
	if (k->oldest_open)
		fprintf(o, " oldest_open=%.3f", ago(now, k->oldest_open));
}

/* Every rank of the trace's jobs: who waits, who does not, who is quiet. */
/*
 * Where a waiting rank is inside its collective (USDT coll_step): the
 * step it last began, and what it waits for there.  Its sends of that
 * step not completed: SendWait; none outstanding: RecvWait, the data it
 * needs to go on has not come.
 */
static const char *step_wait(const struct srank *k)
{
	return rank_sends(k) ? "SendWait" : "RecvWait";
}

/*
 * qps=: the QPs a rank's process waits on, those with sends outstanding
 * first, then those with receives posted: qpn(send=N,recv=M), four at
 * most and a count of the rest; "-" when none of its QPs is tracked.
 */
static void print_rank_qps(const struct rdt_stuck *s, const struct srank *k,
			   FILE *o)
{
	unsigned int shown = 0, more = 0;
	bool any = false;

	fprintf(o, " qps=");
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = k->proc ? k->proc->p_qp_first : 0; i;
		     i = s->qps[i - 1].proc_next) {
			const struct sqp *q = &s->qps[i - 1];

			any = true;
			if (pass == 0 ? !q->n : q->n || !q->recvs)
				continue;
			if (shown == 4) {
				more++;
				continue;
			}
			fprintf(o, "%s0x%x(send=%u,recv=%" PRIu64 ")",
				shown++ ? "," : "", q->qpn, q->n, q->recvs);
		}
	}
	if (more)
		fprintf(o, ",+%u_more", more);
	else if (!shown)
		fprintf(o, "%s", any ? "none" : "-");
}

static void print_colls(struct rdt_stuck *s, const struct rdt_reader *r,
			uint64_t now, FILE *o)
{
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		const char *proc = proc_word(proc_state(s, k));
		char hb[80];

		fprintf(o, "stuck: coll host=%s pid=%u comm=%s rank=%d nranks=%d op=%s",
			host_of(r, k->host, hb, sizeof(hb)), k->pid,
			*k->comm ? k->comm : "-", k->rank, k->nranks,
			coll_op(k));
		if (k->begun && k->p2p_peer >= 0)
			fprintf(o, " state=waiting peer=%d age=%.3f",
				k->p2p_peer, ago(now, k->begun));
		else if (k->begun)
			fprintf(o, " state=waiting seq=%" PRIu64 " age=%.3f",
				k->seq, ago(now, k->begun));
		if (k->begun && k->stepped)
			fprintf(o, " step=%u/%u wait=%s", k->step, k->steps,
				step_wait(k));
		else
			fprintf(o, " state=between last_seq=%s%" PRIu64,
				k->last_seq ? "" : "-",
				k->last_seq ? k->last_seq - 1 : 0);
		fprintf(o, " quiet=%.3f", secs(quiet(s, k, now)));
		{
			uint64_t since, un = rank_unpolled(k, &since);

			fprintf(o, " unpolled=%" PRIu64, un);
			if (un)
				fprintf(o, " unpolled_age=%.3f",
					ago(now, since));
		}
		print_rank_qps(s, k, o);
		print_np_open(k, now, o);
		if (k->comm_id > 1)
			fprintf(o, " nccl_comm=0x%" PRIx64, k->comm_id);
		if (proc)
			fprintf(o, " proc=%s", proc);
		fputc('\n', o);
	}
}

/* What the tracker did not keep, one line each, none when it kept all. */
static void print_drops(const struct rdt_stuck *s, FILE *o)
{
	uint64_t c = rdt_ctr_history_dropped(s->ctrs);

	if (s->dropped_qps)
		fprintf(o, "stuck: dropped_qp_events=%" PRIu64 " (posts and QP changes of QPs not tracked: over %d QPs, or no memory)\n",
			s->dropped_qps, RDT_STUCK_MAX_QPS);
	if (s->dropped_wrs)
		fprintf(o, "stuck: dropped_wrs=%" PRIu64 " (send WRs not tracked: over %d outstanding on a QP, or no memory)\n",
			s->dropped_wrs, RDT_STUCK_MAX_WRS);
	if (s->dropped_ranks)
		fprintf(o, "stuck: dropped_ranks=%" PRIu64 " (ranks not tracked: over %d, or no memory)\n",
			s->dropped_ranks, RDT_STUCK_MAX_RANKS);
	if (s->dropped_np)
		fprintf(o, "stuck: dropped_nccl_events=%" PRIu64 " (not tracked: over %u open, or no memory)\n",
			s->dropped_np, RDT_STUCK_MAX_NP);
	if (c || !s->ctrs)
		fprintf(o, "stuck: dropped_counters=%" PRIu64 "%s (port counters not tracked)\n",
			c, s->ctrs ? "" : "+");
}

static void print_report(struct rdt_stuck *s, const struct rdt_reader *r,
			 const struct hit *v, size_t n, uint64_t now,
			 const char *why, FILE *o)
{
	uint64_t min = strcmp(why, "asked") ? s->limit : 0;
	size_t nc = stuck_colls(s, now, min);

	fprintf(o, "stuck: report %s at %.3f: %zu QPs with a send WR outstanding, %zu ranks in a collective, over %.1f s",
		why, secs(now), n, nc, secs(min));
	if (s->stuck || strcmp(why, "asked"))
		fprintf(o, " (stuck since %.3f)", secs(s->since));
	fputc('\n', o);
	/* A rank not polling names the process behind every QP that waits
	 * on it: said first.  Else the oldest QP's cause, else the job's. */
	if (!(nc && coll_cause(s, now, true, o))) {
		if (n)
			print_cause(s, r, &v[0], now, o);
		else if (nc)
			coll_cause(s, now, false, o);
	}
	for (size_t i = 0; i < n; i++)
		print_qp(s, r, &v[i], now, o);
	if (nc)
		print_colls(s, r, now, o);
	print_drops(s, o);
	fflush(o);
}

/* ---- the report as records (ABI 1.11) ----------------------------------- */

RDT_EXPORT void rdt_stuck_on_record(struct rdt_stuck *s, rdt_stuck_record_fn fn,
				    void *ctx)
{
	s->emit = fn;
	s->emit_ctx = ctx;
}

/* Printable bytes only: the text comes from process and device names. */
static void put_text(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
	memset(dst + i, 0, size - i);
}

static void emit(struct rdt_stuck *s, uint16_t type, uint32_t kind,
		 uint32_t host, uint64_t now, struct rdt_ev_stuck *k)
{
	struct rdt_event ev;

	memset(&ev, 0, sizeof(ev));
	k->hdr.magic = RDT_REC_MAGIC;
	k->hdr.version = RDT_ABI_MAJOR;
	k->hdr.source = RDT_SRC_USER;
	k->hdr.type = type;
	k->hdr.size = sizeof(*k);
	k->hdr.ts_ns = now;
	k->episode = (uint32_t)s->episodes;
	k->kind = kind;
	k->since_ns = s->since;
	ev.rec.stuck = *k;
	ev.ts = now;
	ev.host = host;
	s->emit(s->emit_ctx, &ev);
}

/* A report's records: its cause line (from the printed report), then one
 * per stuck QP and per rank waiting in a collective. */
static void emit_report(struct rdt_stuck *s, const char *report,
			const struct hit *v, size_t n, uint64_t now)
{
	const char *c = report ? strstr(report, "stuck: cause: ") : NULL;
	struct rdt_ev_stuck k;

	memset(&k, 0, sizeof(k));
	k.hdr.dev = RDT_NO_DEV;
	if (c) {
		char line[sizeof(k.text)];
		const char *e;
		size_t len;

		c += strlen("stuck: cause: ");
		e = strchr(c, '\n');
		len = e ? (size_t)(e - c) : strlen(c);
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, c, len);
		line[len] = 0;
		put_text(k.text, sizeof(k.text), line);
	}
	emit(s, RDT_EV_STUCK, RDT_STUCK_CAUSE, 0, now, &k);
	for (size_t i = 0; i < n; i++) {
		const struct sqp *q = v[i].q;
		char t[sizeof(k.text)];

		memset(&k, 0, sizeof(k));
		k.hdr.pid = k.hdr.tid = q->pid;
		k.hdr.dev = q->dev;
		k.qpn = q->qpn;
		k.dest_qpn = q->dest_qpn;
		k.outstanding = q->n;
		k.wr_id = q->n ? q->q[q->head].wr_id : 0;
		k.retries = (uint32_t)(q->retries + q->rnr);
		k.waits_ns = now >= waits_since(q) ? now - waits_since(q) : 0;
		snprintf(t, sizeof(t), "%.16s %.64s", q->comm, q->devname);
		put_text(k.text, sizeof(k.text), t);
		emit(s, RDT_EV_STUCK, RDT_STUCK_QP, q->host, now, &k);
	}
	for (size_t i = 0; i < s->nranks; i++) {
		const struct srank *w = &s->ranks[i];

		if (!coll_waiting(w, now, s->limit))
			continue;
		memset(&k, 0, sizeof(k));
		k.hdr.pid = k.hdr.tid = w->pid;
		k.hdr.dev = RDT_NO_DEV;
		k.rank = w->rank;
		k.nranks = w->nranks;
		k.seq = w->seq;
		k.waits_ns = now - w->begun;
		put_text(k.text, sizeof(k.text), coll_op(w));
		emit(s, RDT_EV_STUCK, RDT_STUCK_COLL, w->host, now, &k);
	}
}

static void emit_moving(struct rdt_stuck *s, uint64_t now)
{
	struct rdt_ev_stuck k;

	memset(&k, 0, sizeof(k));
	k.hdr.dev = RDT_NO_DEV;
	k.waits_ns = now >= s->since ? now - s->since : 0;
	put_text(k.text, sizeof(k.text), "moving");
	emit(s, RDT_EV_UNSTUCK, RDT_STUCK_CAUSE, 0, now, &k);
}

/* A rank by its job, same_job()'s key: its communicator, or for USDT
 * ranks their number. */
struct job_key {
	uint64_t comm_id;
	int32_t nranks;
	uint32_t i;
};

static int job_cmp(const void *a, const void *b)
{
	const struct job_key *x = a, *y = b;

	if (x->comm_id != y->comm_id)
		return x->comm_id < y->comm_id ? -1 : 1;
	return (x->nranks > y->nranks) - (x->nranks < y->nranks);
}

/*
 * Live: a job whose every waiting rank's process has exited (/proc) waits
 * for nothing any more.  Its collectives are dropped once reported, so the
 * episode ends; while one of its ranks still waits, the exited ones stay
 * (they are why it waits).
 *
 * The ranks are grouped by job (sorted), and each group looked at once.
 */
static void abandon_exited(struct rdt_stuck *s, uint64_t now)
{
	struct job_key *v;

	if (!s->procs || !s->nranks)
		return;
	v = malloc(s->nranks * sizeof(*v));
	if (!v)
		return;		/* tried again at the next check */
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];

		k->pstate = coll_waiting(k, now, s->limit) && k->reported ?
			    proc_state(s, k) : '?';
		v[i] = (struct job_key){ k->comm_id,
					 k->comm_id ? 0 : k->nranks, (uint32_t)i };
	}
	qsort(v, s->nranks, sizeof(*v), job_cmp);
	for (size_t a = 0, b; a < s->nranks; a = b) {
		bool gone = false, alive = false;

		for (b = a; b < s->nranks && !job_cmp(&v[a], &v[b]); b++) {
			const struct srank *k = &s->ranks[v[b].i];

			gone |= k->pstate == 0;
			alive |= k->begun && k->pstate != 0;
		}
		if (!gone || alive)
			continue;
		for (size_t i = a; i < b; i++) {
			struct srank *w = &s->ranks[v[i].i];

			if (w->begun && w->pstate == 0) {
				w->begun = 0;
				w->stepped = false;
				w->pstate = '?';
				s->exited++;
			}
		}
	}
	free(v);
}

RDT_EXPORT int rdt_stuck_check(struct rdt_stuck *s, const struct rdt_reader *r,
			       uint64_t now, FILE *o)
{
	size_t n, nc = 0;
	struct hit *v;
	bool changed = false;

	refresh(s, now);
	abandon_exited(s, now);
	v = collect(s, now, s->limit, &n);

	/* The picture changed: a QP newly stuck, or its oldest WR another. */
	for (size_t i = 0; i < n; i++) {
		struct sqp *q = v[i].q;
		uint64_t ts = waits_since(q);

		if (!q->reported || q->reported_wr_ts != ts)
			changed = true;
	}
	for (size_t i = 0; i < s->cap; i++) {
		struct sqp *q = &s->qps[i];
		uint64_t since = q->used && !q->dead ? waits_since(q) : 0;

		if (q->reported && since && now >= since &&
		    now - since >= s->limit)
			continue;
		if (q->reported)
			changed = true;	/* it moved, or went */
		q->reported = false;
	}
	for (size_t i = 0; i < s->nranks; i++) {
		struct srank *k = &s->ranks[i];
		bool w = coll_waiting(k, now, s->limit);

		if (w && (!k->reported || k->reported_seq != k->seq))
			changed = true;
		if (!w && k->reported)
			changed = true;
		k->reported = w;
		k->reported_seq = k->seq;
		if (w)
			nc++;
	}
	if ((n || nc) && changed) {
		if (!s->stuck) {	/* since the oldest passed the limit */
			uint64_t t = UINT64_MAX;

			if (n)
				t = waits_since(v[0].q);
			for (size_t i = 0; i < s->nranks; i++)
				if (coll_waiting(&s->ranks[i], now, s->limit) &&
				    s->ranks[i].begun < t)
					t = s->ranks[i].begun;
			s->since = t + s->limit;
			s->episodes++;
		}
		if (s->emit) {
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);

			if (m) {
				print_report(s, r, v, n, now,
					     s->stuck ? "changed" : "new", m);
				fclose(m);
				fputs(buf, o);
				fflush(o);
			} else {
				print_report(s, r, v, n, now,
					     s->stuck ? "changed" : "new", o);
			}
			emit_report(s, buf, v, n, now);
			free(buf);
		} else {
			print_report(s, r, v, n, now,
				     s->stuck ? "changed" : "new", o);
		}
		for (size_t i = 0; i < n; i++) {
			v[i].q->reported = true;
			v[i].q->reported_wr_ts = waits_since(v[i].q);
		}
	} else if (!n && !nc && s->stuck) {
		fprintf(o, "stuck: moving at %.3f: no send WR outstanding and no collective open over %.1f s (stuck for %.1f s",
			secs(now), secs(s->limit), secs(now - s->since));
		if (s->exited)
			fprintf(o, "; the waiting ranks' %zu processes exited",
				s->exited);
		fprintf(o, ")\n");
		s->exited = 0;
		fflush(o);
		if (s->emit)
			emit_moving(s, now);
	}
	s->stuck = n || nc;
	free(v);
	return s->stuck;
}

RDT_EXPORT void rdt_stuck_print(struct rdt_stuck *s, const struct rdt_reader *r,
				uint64_t now, FILE *o)
{
	size_t n;
	struct hit *v;

	refresh(s, now);
	v = collect(s, now, 0, &n);
	print_report(s, r, v, n, now, "asked", o);
	free(v);
}

RDT_EXPORT uint64_t rdt_stuck_episodes(const struct rdt_stuck *s)
{
	return s->episodes;
}

RDT_EXPORT void rdt_stuck_print_summary(const struct rdt_stuck *s, FILE *o)
{
	fprintf(o, "stuck: episodes=%" PRIu64 "\n", s->episodes);
	print_drops(s, o);
	fflush(o);
}

/* --metrics' gauges: collect()'s and stuck_colls()'s counts at @now, with
 * nothing printed or changed (a scrape must not move the reports). */
RDT_EXPORT void rdt_stuck_gauges(const struct rdt_stuck *s, uint64_t now,
				 struct rdt_stuck_gauges *g)
{
	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < s->cap; i++) {
		const struct sqp *q = &s->qps[i];
		uint64_t ts;

		if (!q->used || q->dead || !(ts = waits_since(q)) || now < ts ||
		    now - ts < s->limit)
			continue;
		if (is_np_qp_dev(q->dev) && seen_by_verbs(s, q))
			continue;
		g->qps++;
		g->send_wrs += q->n;
		if (now - ts > g->oldest_ns)
			g->oldest_ns = now - ts;
	}
	g->collectives = stuck_colls(s, now, s->limit);
	g->episodes = s->episodes;
}
