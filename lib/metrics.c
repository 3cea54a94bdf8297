// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Fleet metrics (rdmatrace-dump --metrics): the events folded into
 * Prometheus counters and histograms, per QP, per collective, per port
 * counter and per source, rendered as the Prometheus text format.
 *
 * The reader's thread owns all of it: rdt_metrics_add() per event and
 * rdt_metrics_render() when a scrape wants a fresh page, so nothing here
 * locks; the tool hands the rendered page to its HTTP server (which never
 * touches this state).  Per event the work is a lookup of the QP (a
 * direct-mapped cache by QPN before the hash table) and a few additions;
 * a post goes on its QP's ring of outstanding WRs and a completion takes
 * it off for the latency histogram.  Not wrmatch.c (--stats' exact
 * matcher): a hash table insert and delete per WR cost 5 times the 5 %
 * that make bench holds this to.  A queue completes in order (RC, UC,
 * UD, a QP's receive queue), so a completion's WR is the oldest of its
 * wr_id on the ring and those before it completed unsignaled; a QP whose
 * completions rxe's CQEs report (--rxe) takes its latencies from them
 * and its polls only count.  A ring holds RING WRs; older ones are
 * dropped (their completions have no latency), counted.
 *
 * Bounded whatever the workload: at most opts.max_qps QP series, then new
 * QPs count in one series per host, device and source with qpn="other";
 * a destroyed QP keeps its series qp_expire_ns (trace time), then its
 * counts move into "other" (a sum over QPs never goes back) and its slot
 * is free; at the cap the oldest destroyed QP goes first.  Collectives
 * and port counters have caps of their own (comm_hash="other", and
 * counters past the cap are counted, not kept).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Histogram upper bounds, ns: 1 us .. 10 s, then +Inf (the sentinel:
 * hist_add() needs no bounds check). */
static const uint64_t bounds[] = {
	1000, 5000, 10000, 50000, 100000, 500000, 1000000, 5000000,
	10000000, 50000000, 100000000, 500000000, 1000000000, 10000000000ull,
	UINT64_MAX,
};
#define NB (sizeof(bounds) / sizeof(bounds[0]) - 1)

struct hist {
	uint64_t b[NB + 1];	/* [NB]: +Inf */
	uint64_t sum_ns, n;
};

/* by_log2[k]: the first bucket whose bound is >= 2^k; a power of two's
 * range [2^k, 2^(k+1)) holds at most one bound (they are 2x and 5x
 * apart), so one compare finishes the search: no loop per completion. */
static uint8_t by_log2[64];

static __attribute__((constructor)) void hist_init(void)
{
	for (unsigned int k = 0; k < 64; k++) {
		unsigned int i = 0;

		while (i < NB && (k >= 63 || bounds[i] < 1ull << k))
			i++;
		by_log2[k] = (uint8_t)i;
	}
}

static inline void hist_add(struct hist *h, uint64_t ns)
{
	unsigned int i = by_log2[63 - __builtin_clzll(ns | 1)];

	i += ns > bounds[i];
	h->b[i]++;
	h->sum_ns += ns;
	h->n++;
}

static void hist_fold(struct hist *to, const struct hist *from)
{
	for (unsigned int i = 0; i <= NB; i++)
		to->b[i] += from->b[i];
	to->sum_ns += from->sum_ns;
	to->n += from->n;
}

/* Opcodes: enum ib_wr_opcode (0..15, REG_MR 0x20 folded to 16), a receive. */
#define OP_REG_MR	16
#define OP_RECV		17
#define OP_OTHER	18	/* an opcode not named above */
#define NOPS		19
#define NSTATUS		22	/* enum ib_wc_status; more: the last */
#define NSEEN		3	/* poll_cq_wc, verbs_wc, rxe_cqe */

enum { VIEW_VERBS = 0, VIEW_NP = 1 };	/* kernel device index, NCCL's */

/* A queue's posted WRs not completed yet, oldest first. */
#define RING		64
struct ring {
	uint32_t head, n;
	struct { uint64_t wr_id, ts; } v[RING];
};

struct mqp {
	struct mqp *next;		/* hash chain */
	struct mqp *dnext;		/* destroyed FIFO */
	uint32_t host, dev, qpn, pid;
	uint8_t view;
	bool other, destroyed;
	bool owned;			/* pid, comm and devname taken */
	uint64_t destroyed_ts;
	char comm[RDT_COMM_LEN + 1];
	char devname[RDT_NAME_LEN + 1];
	uint64_t wrs[NOPS], bytes[NOPS];
	uint64_t wcs, errors[NSEEN][NSTATUS];
	uint64_t retries[4];		/* enum rdt_rxe_retry_kind */
	/* rxe's packets and bytes, sent [0] and received [1], as its CQEs
	 * count them (ABI 1.15); rxe_counted: a CQE had counts */
	uint64_t rxe_pkts[2], rxe_bytes[2];
	bool rxe_counted;
	struct hist lat;
	bool cqes;			/* rxe's CQEs seen: they give latencies */
	struct ring *ring[2];		/* outstanding sends, receives */
};

#define QP_BUCKETS	4096
#define QCACHE		256



/* func as the plugin names it ("AllReduce"), or the uprobe's without
 * its "nccl", or the USDT mark's op. */
#define FUNC_LEN	RDT_NP_STR

enum { CS_PLUGIN = 0, CS_UPROBE = 1, CS_USDT = 2 };
static const char *const coll_source[] = { "nccl_plugin", "nccl_uprobe", "usdt" };

struct mcoll {
	struct mcoll *next;
	uint32_t host, pid;
	uint64_t comm_hash;
	int32_t rank;
	uint8_t source;
	bool other;
	char func[FUNC_LEN + 1];
	char comm[RDT_COMM_LEN + 1];
	uint64_t n, errors, bytes;
	struct hist enq, dur;
	/* USDT: the collective begun and not ended (seq, begin) */
	uint64_t open_seq, open_ts;
	bool open;
};

#define COLL_BUCKETS	1024

struct mctr {
	struct mctr *next;
	uint32_t host, port, kind;
	char dev[RDT_NAME_LEN + 1];
	char name[RDT_CTR_NAME_LEN + 1];
	uint64_t value;
};

#define CTR_BUCKETS	1024

/* A plugin event between start and stop (np_span.c's fields). */
struct mnp {
	struct rdt_np_span sp;
	bool gpu_counted;		/* Coll: its GPU time is in dur */
};

struct rdt_metrics {
	struct rdt_metrics_opts o;
	struct mqp *qps[QP_BUCKETS];
	size_t nqps;			/* QPs of their own (not "other") */
	/* By QPN and host: the last verbs QP seen there, under its key
	 * (qc_key(): one compare finds it). */
	struct {
		uint64_t key;
		struct mqp *q;
	} qcache[QCACHE];
	uint64_t ring_dropped;		/* WRs pushed off a full ring */
	struct mqp *dhead, *dtail;	/* destroyed, oldest first */
	uint64_t qps_expired;		/* destroyed QPs moved into "other" */
	uint64_t qp_other_events;	/* events of QPs past the cap */
	struct mcoll *colls[COLL_BUCKETS];
	size_t ncolls;
	uint64_t coll_other_events;	/* events of collectives past the cap */
	struct mctr *ctrs[CTR_BUCKETS];
	size_t nctrs;
	uint64_t ctrs_dropped;
	struct rdt_np_open np;
	uint64_t events;
	struct rdt_stuck *stuck;
};

#define DEF_MAX_QPS		1000
#define DEF_MAX_COLLS		1000
#define DEF_MAX_CTRS		4096
#define DEF_QP_EXPIRE_NS	(300ull * 1000000000ull)

static void np_retire(void *ctx, struct rdt_np_open_ent *o);

RDT_EXPORT struct rdt_metrics *rdt_metrics_new(const struct rdt_metrics_opts *opts)
{
	struct rdt_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opts)
		memcpy(&m->o, opts, opts->sz < sizeof(m->o) ? opts->sz : sizeof(m->o));
	if (!m->o.max_qps)
		m->o.max_qps = DEF_MAX_QPS;
	if (!m->o.max_colls)
		m->o.max_colls = DEF_MAX_COLLS;
	if (!m->o.max_port_counters)
		m->o.max_port_counters = DEF_MAX_CTRS;
	if (!m->o.qp_expire_ns)
		m->o.qp_expire_ns = DEF_QP_EXPIRE_NS;
	rdt_np_open_init(&m->np, sizeof(struct mnp), np_retire, m);
	return m;
}

RDT_EXPORT void rdt_metrics_free(struct rdt_metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < QP_BUCKETS; i++)
		while (m->qps[i]) {
			struct mqp *n = m->qps[i]->next;

			free(m->qps[i]->ring[0]);
			free(m->qps[i]->ring[1]);
			free(m->qps[i]);
			m->qps[i] = n;
		}
	for (size_t i = 0; i < COLL_BUCKETS; i++)
		while (m->colls[i]) {
			struct mcoll *n = m->colls[i]->next;

			free(m->colls[i]);
			m->colls[i] = n;
		}
	for (size_t i = 0; i < CTR_BUCKETS; i++)
		while (m->ctrs[i]) {
			struct mctr *n = m->ctrs[i]->next;

			free(m->ctrs[i]);
			m->ctrs[i] = n;
		}
	rdt_np_open_free(&m->np);
	free(m);
}

RDT_EXPORT void rdt_metrics_watch_stuck(struct rdt_metrics *m,
					struct rdt_stuck *s)
{
	m->stuck = s;
}

/* ---- QPs ------------------------------------------------------------------ */

static unsigned int qp_bucket(uint32_t host, uint32_t dev, uint32_t qpn,
			      uint8_t view, bool other)
{
	return ((qpn * 2654435761u) ^ (dev * 40503u) ^ (host * 97u) ^
		(view * 7919u) ^ (other ? 0x5bd1e995u : 0)) % QP_BUCKETS;
}

static struct mqp *qp_lookup(struct rdt_metrics *m, uint32_t host, uint32_t dev,
			     uint32_t qpn, uint8_t view, bool other)
{
	struct mqp *q;

	for (q = m->qps[qp_bucket(host, dev, qpn, view, other)]; q; q = q->next)
		if (q->qpn == qpn && q->dev == dev && q->host == host &&
		    q->view == view && q->other == other)
			return q;
	return NULL;
}

static struct mqp *qp_alloc(struct rdt_metrics *m, uint32_t host, uint32_t dev,
			    uint32_t qpn, uint8_t view, bool other)
{
	struct mqp *q = calloc(1, sizeof(*q));
	unsigned int b = qp_bucket(host, dev, qpn, view, other);

	if (!q)
		return NULL;
	q->host = host;
	q->dev = dev;
	q->qpn = other ? 0 : qpn;
	q->view = view;
	q->other = other;
	q->next = m->qps[b];
	m->qps[b] = q;
	return q;
}

static void qp_unlink(struct rdt_metrics *m, struct mqp *q)
{
	struct mqp **p = &m->qps[qp_bucket(q->host, q->dev, q->qpn, q->view,
					   q->other)];

	while (*p != q)
		p = &(*p)->next;
	*p = q->next;
	for (size_t i = 0; i < QCACHE; i++)	/* rare: an expiry */
		if (m->qcache[i].q == q) {
			m->qcache[i].q = NULL;
			m->qcache[i].key = 0;
		}
}

/* Its host's, device's and view's "other" series. */
static struct mqp *qp_other(struct rdt_metrics *m, const struct mqp *like,
			    uint32_t host, uint32_t dev, uint8_t view)
{
	struct mqp *o = qp_lookup(m, host, dev, 0, view, true);

	if (!o && (o = qp_alloc(m, host, dev, 0, view, true)) && like)
		memcpy(o->devname, like->devname, sizeof(o->devname));
	return o;
}

/* A destroyed QP's series ends: its counts go on in "other". */
static void qp_expire(struct rdt_metrics *m, struct mqp *q)
{
	struct mqp *o = qp_other(m, q, q->host, q->dev, q->view);

	if (o) {
		for (int i = 0; i < NOPS; i++) {
			o->wrs[i] += q->wrs[i];
			o->bytes[i] += q->bytes[i];
		}
		o->wcs += q->wcs;
		for (int s = 0; s < NSEEN; s++)
			for (int i = 0; i < NSTATUS; i++)
				o->errors[s][i] += q->errors[s][i];
		for (int i = 0; i < 4; i++)
			o->retries[i] += q->retries[i];
		for (int d = 0; d < 2; d++) {
			o->rxe_pkts[d] += q->rxe_pkts[d];
			o->rxe_bytes[d] += q->rxe_bytes[d];
		}
		o->rxe_counted |= q->rxe_counted;
		hist_fold(&o->lat, &q->lat);
	}
	qp_unlink(m, q);
	m->nqps--;
	m->qps_expired++;
	free(q->ring[0]);
	free(q->ring[1]);
	free(q);
}

/* The destroyed QPs whose time is up at @now (all of them: UINT64_MAX). */
static void expire_due(struct rdt_metrics *m, uint64_t now)
{
	while (m->dhead && (now == UINT64_MAX ||
	       (now > m->dhead->destroyed_ts &&
		now - m->dhead->destroyed_ts >= m->o.qp_expire_ns))) {
		struct mqp *q = m->dhead;

		m->dhead = q->dnext;
		if (!m->dhead)
			m->dtail = NULL;
		qp_expire(m, q);
	}
}

static inline unsigned int qc_slot(uint32_t host, uint32_t qpn)
{
	return (qpn ^ host) % QCACHE;
}

/* QPN, device and host in one word; devices and hosts past 16 bits (and
 * RDT_NO_DEV) are not cached: 0 never matches a key made here. */
static inline uint64_t qc_key(uint32_t host, uint32_t dev, uint32_t qpn)
{
	return (uint64_t)qpn | (uint64_t)(dev + 1) << 32 | (uint64_t)host << 48;
}

/* Only QPs whose owner is known are cached: the fast path then need not
 * look (a QP no post was seen on goes the full way). */
static void qc_put(struct rdt_metrics *m, struct mqp *q)
{
	if (q->view == VIEW_VERBS && !q->other && q->dev < 0xffff &&
	    q->host < 0xffff) {
		unsigned int i = qc_slot(q->host, q->qpn);

		m->qcache[i].key = qc_key(q->host, q->dev, q->qpn);
		m->qcache[i].q = q;
	}
}

static __attribute__((noinline)) struct mqp *
qp_get_slow(struct rdt_metrics *m, const struct rdt_event *ev, uint32_t dev,
	    uint32_t qpn, uint8_t view)
{
	struct mqp *q = qp_lookup(m, ev->host, dev, qpn, view, false);

	if (!q) {
		/* At the cap: the oldest destroyed QP makes room, or this
		 * one counts in "other" (not cached: its next event looks
		 * again, and may find room then). */
		if (m->nqps >= m->o.max_qps && m->dhead) {
			struct mqp *d = m->dhead;

			m->dhead = d->dnext;
			if (!m->dhead)
				m->dtail = NULL;
			qp_expire(m, d);
		}
		if (m->nqps >= m->o.max_qps) {
			m->qp_other_events++;
			q = qp_other(m, NULL, ev->host, dev, view);
			if (q && !*q->devname && ev->devname && view == VIEW_VERBS)
				snprintf(q->devname, sizeof(q->devname), "%s",
					 ev->devname);
			return q;
		}
		if (!(q = qp_alloc(m, ev->host, dev, qpn, view, false)))
			return NULL;
		m->nqps++;
	}
	if (q->owned)
		qc_put(m, q);
	return q;
}

/* The QP's series: most events are a few QPs', found in the cache. */
static inline __attribute__((always_inline)) struct mqp *
qp_get(struct rdt_metrics *m, const struct rdt_event *ev, uint32_t dev,
       uint32_t qpn, uint8_t view)
{
	unsigned int i = qc_slot(ev->host, qpn);

	if (view == VIEW_VERBS && m->qcache[i].key == qc_key(ev->host, dev, qpn) &&
	    m->qcache[i].q)
		return m->qcache[i].q;
	return qp_get_slow(m, ev, dev, qpn, view);
}

/* Who owns it: its first post's process (a series keeps its labels). */
static __attribute__((noinline)) void qp_owner(struct mqp *q, const struct rdt_event *ev)
{
	q->owned = true;
	if (q->other)
		return;
	q->pid = ev->rec.hdr.pid;
	if (ev->comm)
		snprintf(q->comm, sizeof(q->comm), "%s", ev->comm);
	if (!*q->devname && ev->devname && q->view == VIEW_VERBS)
		snprintf(q->devname, sizeof(q->devname), "%s", ev->devname);
}

static void qp_destroyed(struct rdt_metrics *m, const struct rdt_event *ev)
{
	struct mqp *q = qp_lookup(m, ev->host, ev->rec.hdr.dev,
				  ev->rec.qp_destroy.qpn, VIEW_VERBS, false);

	if (!q || q->destroyed || ev->rec.qp_destroy.ret)
		return;
	q->destroyed = true;
	q->destroyed_ts = ev->ts;
	if (m->dtail)
		m->dtail->dnext = q;
	else
		m->dhead = q;
	m->dtail = q;
}

static unsigned int op_index(unsigned int op)
{
	return op < 16 ? op : op == 0x20 ? OP_REG_MR : OP_OTHER;
}

static unsigned int status_index(uint32_t s)
{
	return s < NSTATUS ? s : NSTATUS - 1;
}

/* A WR posted on @q's queue @dir (0: send, 1: receive) at @ts. */
static inline void ring_push(struct rdt_metrics *m, struct mqp *q, int dir,
			     uint64_t wr_id, uint64_t ts)
{
	struct ring *w = q->ring[dir];
	uint32_t i;

	if (__builtin_expect(!w, 0)) {
		if (q->other)
			return;	/* many QPs' queues in one: no order */
		if (!(w = q->ring[dir] = calloc(1, sizeof(*w))))
			return;
	}
	if (__builtin_expect(w->n == RING, 0)) {
		w->head = (w->head + 1) % RING;
		w->n--;
		m->ring_dropped++;
	}
	i = (w->head + w->n++) % RING;
	w->v[i].wr_id = wr_id;
	w->v[i].ts = ts;
}

/* The oldest WR of @wr_id on the ring, taken off with those before it
 * (completed unsignaled); its post time, or 0. */
static inline uint64_t ring_take(struct ring *w, uint64_t wr_id)
{
	if (!w || !w->n)
		return 0;
	if (w->v[w->head].wr_id == wr_id) {	/* in order: the common case */
		uint32_t k = w->head;

		w->head = (k + 1) % RING;
		w->n--;
		return w->v[k].ts;
	}
	for (uint32_t i = 1; i < w->n; i++) {
		uint32_t k = (w->head + i) % RING;

		if (w->v[k].wr_id == wr_id) {
			w->head = (k + 1) % RING;
			w->n -= i + 1;
			return w->v[k].ts;
		}
	}
	return 0;
}

/* A failed post: the WRs from bad_index on were not posted (the last ones
 * on the ring, which its WR records just put there). */
static void ring_unpost(struct rdt_metrics *m, const struct rdt_event *ev)
{
	const struct rdt_ev_post_fail *f = &ev->rec.post_fail;
	int dir = f->post_type == RDT_EV_POST_RECV ||
		  f->post_type == RDT_EV_VERBS_POST_RECV;
	struct mqp *q;
	struct ring *w;
	uint32_t k;

	if (f->srq || f->bad_index == RDT_BAD_INDEX_UNKNOWN ||
	    f->bad_index >= f->nr_wr ||
	    !(q = qp_lookup(m, ev->host, f->hdr.dev, f->qpn, VIEW_VERBS, false)))
		return;
	if (!(w = q->ring[dir]))
		return;
	k = (uint32_t)(f->nr_wr - f->bad_index);
	w->n -= k < w->n ? k : w->n;
}

/* A completion of @q seen by @seen (0: the module's poll, 1: --verbs',
 * 2: rxe's CQE), @recv: of its receive queue. */
static inline void qp_completion(struct mqp *q, const struct rdt_event *ev,
				 int seen, uint32_t status, uint64_t wr_id,
				 bool recv)
{
	uint64_t post_ts;

	if (seen != 2)
		q->wcs++;
	else
		q->cqes = true;
	if (status)
		q->errors[seen][status_index(status)]++;
	if ((seen == 2 || !q->cqes) &&
	    (post_ts = ring_take(q->ring[recv], wr_id)) && ev->ts >= post_ts)
		hist_add(&q->lat, ev->ts - post_ts);
}

/* ---- collectives ------------------------------------------------------------ */

static unsigned int coll_bucket(uint32_t host, uint32_t pid, uint64_t hash,
				int32_t rank, const char *func, uint8_t source)
{
	uint64_t h = hash * 0x9e3779b97f4a7c15ull ^ host ^ (uint64_t)pid << 20 ^
		     (uint64_t)(uint32_t)rank << 40 ^ source;

	for (const char *c = func; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
	return (unsigned int)(h % COLL_BUCKETS);
}

static struct mcoll *coll_get(struct rdt_metrics *m, uint32_t host,
			      uint32_t pid, const char *comm, uint64_t hash,
			      int32_t rank, const char *func, uint8_t source)
{
	char f[FUNC_LEN + 1];
	struct mcoll *c;
	unsigned int b;
	bool other = false;

	snprintf(f, sizeof(f), "%s", func);
	for (;;) {
		b = coll_bucket(host, pid, hash, rank, f, source);
		for (c = m->colls[b]; c; c = c->next)
			if (c->host == host && c->pid == pid &&
			    c->comm_hash == hash && c->rank == rank &&
			    c->source == source && c->other == other &&
			    !strcmp(c->func, f))
				return c;
		if (other || m->ncolls < m->o.max_colls)
			break;
		/* Past the cap: one series per host, function and source. */
		other = true;
		pid = 0;
		hash = 0;
		rank = -1;
		comm = "";
		m->coll_other_events++;
	}
	if (!(c = calloc(1, sizeof(*c))))
		return NULL;
	c->host = host;
	c->pid = pid;
	c->comm_hash = hash;
	c->rank = rank;
	c->source = source;
	c->other = other;
	memcpy(c->func, f, sizeof(c->func));
	snprintf(c->comm, sizeof(c->comm), "%s", comm ? comm : "");
	c->next = m->colls[b];
	m->colls[b] = c;
	if (!other)
		m->ncolls++;
	return c;
}

/* NCCL's datatype names (ncclDataType_t) as the plugin records them. */
static uint64_t np_type_size(const char *t)
{
	static const struct { const char *n; unsigned int sz; } v[] = {
		{ "ncclInt8", 1 }, { "ncclUint8", 1 }, { "ncclInt32", 4 },
		{ "ncclUint32", 4 }, { "ncclInt64", 8 }, { "ncclUint64", 8 },
		{ "ncclFloat16", 2 }, { "ncclFloat32", 4 }, { "ncclFloat64", 8 },
		{ "ncclBfloat16", 2 }, { "ncclFloat8e4m3", 1 },
		{ "ncclFloat8e5m2", 1 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		if (!strcmp(t, v[i].n))
			return v[i].sz;
	return 0;
}

static void uprobe_call(struct rdt_metrics *m, const struct rdt_event *ev)
{
	const struct rdt_ev_nccl_call *c = &ev->rec.nccl_call;
	const char *name;
	struct mcoll *k;
	uint64_t bytes;

	if (c->fn < RDT_NCCL_ALL_REDUCE || c->fn > RDT_NCCL_RECV)
		return;
	name = rdt_nccl_fn_name(c->fn);
	if (!name)
		return;
	if (!strncmp(name, "nccl", 4))
		name += 4;	/* the plugin's and NCCL Inspector's names */
	k = coll_get(m, ev->host, c->hdr.pid, ev->comm, c->comm_hash, c->rank,
		     name, CS_UPROBE);
	if (!k)
		return;
	/* nccl-tests' convention, as --stats: the whole buffer's bytes */
	bytes = c->count * (uint64_t)rdt_nccl_type_size(c->datatype);
	if ((c->fn == RDT_NCCL_ALL_GATHER || c->fn == RDT_NCCL_REDUCE_SCATTER ||
	     c->fn == RDT_NCCL_ALL_TO_ALL) && c->nranks > 0)
		bytes *= (uint64_t)c->nranks;
	k->n++;
	k->bytes += bytes;
	k->errors += c->ret != 0;
	hist_add(&k->enq, c->duration_ns);
}

static void usdt_mark(struct rdt_metrics *m, const struct rdt_event *ev)
{
	const struct rdt_ev_coll_mark *c = &ev->rec.coll_mark;
	char op[16];
	struct mcoll *k;

	if (c->op == 1)
		snprintf(op, sizeof(op), "AllReduce");
	else
		snprintf(op, sizeof(op), "op%u", c->op);
	k = coll_get(m, ev->host, c->hdr.pid, ev->comm, 0, c->rank, op, CS_USDT);
	if (!k)
		return;
	if (c->phase == 0) {
		k->open = true;
		k->open_seq = c->seq;
		k->open_ts = ev->ts;
		return;
	}
	if (!k->open || k->open_seq != c->seq)
		return;		/* its begin is not in the trace */
	k->open = false;
	k->n++;
	k->bytes += c->bytes;
	if (ev->ts >= k->open_ts)
		hist_add(&k->dur, ev->ts - k->open_ts);
}

/* ---- the NCCL profiler plugin ------------------------------------------------ */

/* @comm: its process's name where the event at hand has it (the series
 * keeps the name it was made with). */
static struct mcoll *np_coll(struct rdt_metrics *m, const struct mnp *e,
			     const char *comm)
{
	return coll_get(m, e->sp.o.host, e->sp.o.pid, comm, e->sp.comm_id,
			e->sp.rank, e->sp.func, CS_PLUGIN);
}

/* A collective's GPU time (its kernel channels' first start to last
 * stop), once: when it is stopped and nothing under it is open any more,
 * at least one kernel channel done (a scrape then sees it within the
 * moment, not RDT_NP_LINGER_NS later), or when it is retired. */
static void np_gpu_count(struct rdt_metrics *m, struct mnp *e)
{
	struct mcoll *k;

	if (e->sp.type != RDT_EV_NP_COLL || e->gpu_counted || !e->sp.gpu_stop ||
	    e->sp.gpu_stop < e->sp.gpu_start)
		return;
	e->gpu_counted = true;
	if ((k = np_coll(m, e, NULL)))
		hist_add(&k->dur, e->sp.gpu_stop - e->sp.gpu_start);
}

static void np_gpu_done(struct rdt_metrics *m, uint32_t host, uint32_t pid,
			uint64_t coll)
{
	struct mnp *c = coll ? (struct mnp *)rdt_np_open_find(&m->np, host, pid,
							      coll) : NULL;

	if (c && c->sp.o.stopped && !c->sp.o.open_kids)
		np_gpu_count(m, c);
}

/* A kept collective dropped: counted now if it was not. */
static void np_retire(void *ctx, struct rdt_np_open_ent *o)
{
	np_gpu_count(ctx, (struct mnp *)o);
}

static void np_start(struct rdt_metrics *m, const struct rdt_event *ev)
{
	struct mnp *e = (struct mnp *)rdt_np_span_start(&m->np, ev);
	struct mqp *q;

	if (!e || e->sp.type != RDT_EV_NP_NET_IB)
		return;
	q = qp_get(m, ev, (uint32_t)e->sp.device, e->sp.qpn, VIEW_NP);
	if (q) {
		unsigned int op = op_index((unsigned int)e->sp.opcode);

		if (!q->owned)
			qp_owner(q, ev);
		q->wrs[op]++;
		q->bytes[op] += e->sp.length;
	}
}

static void np_stop(struct rdt_metrics *m, const struct rdt_event *ev)
{
	struct mnp *e = (struct mnp *)rdt_np_open_find(&m->np, ev->host,
				ev->rec.hdr.pid, ev->rec.np_stop.ids.id);
	struct mcoll *k;
	struct mqp *q;
	uint32_t host, pid;
	uint64_t coll;

	if (!e)
		return;
	switch (e->sp.type) {
	case RDT_EV_NP_KERNEL_CH:
		rdt_np_span_kernel_done(&m->np, &e->sp);
		break;
	case RDT_EV_NP_NET_IB:
		q = qp_get(m, ev, (uint32_t)e->sp.device, e->sp.qpn, VIEW_NP);
		if (q) {
			q->wcs++;
			if (ev->ts >= e->sp.ts)
				hist_add(&q->lat, ev->ts - e->sp.ts);
		}
		break;
	case RDT_EV_NP_COLL:
		if (e->sp.o.stopped)
			return;		/* stopped twice: bad input */
		/* Counted at its stop (enqueue), NCCL's moment for it; its
		 * GPU time when nothing under it is open (np_gpu_done). */
		if ((k = np_coll(m, e, ev->comm))) {
			k->n++;
			k->bytes += e->sp.count * np_type_size(e->sp.dtype);
			hist_add(&k->enq, ev->ts >= e->sp.ts ? ev->ts - e->sp.ts : 0);
		}
		break;
	}
	host = e->sp.o.host;
	pid = e->sp.o.pid;
	coll = e->sp.o.coll;
	rdt_np_open_stop(&m->np, &e->sp.o, ev->ts);	/* entries move */
	np_gpu_done(m, host, pid, coll);
}

static void np_event(struct rdt_metrics *m, const struct rdt_event *ev)
{
	rdt_np_open_linger(&m->np, ev->ts);
	switch (ev->rec.hdr.type) {
	case RDT_EV_NP_STOP:
		np_stop(m, ev);
		return;
	case RDT_EV_NP_STATE:
		rdt_np_span_state(&m->np, ev);
		return;
	case RDT_EV_NP_COLL:
	case RDT_EV_NP_KERNEL_CH:
	case RDT_EV_NP_NET_IB:
	case RDT_EV_NP_P2P:
	case RDT_EV_NP_PROXY_OP:
	case RDT_EV_NP_PROXY_STEP:
		/* The tree from a collective down to its WRs and kernels. */
		np_start(m, ev);
		return;
	}
}

/* ---- port counters ------------------------------------------------------------- */

static void port_counter(struct rdt_metrics *m, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *p = &ev->rec.port_counter;
	char dev[RDT_NAME_LEN + 1], name[RDT_CTR_NAME_LEN + 1];
	uint64_t h = 0xcbf29ce484222325ull ^ ev->host ^ (uint64_t)p->port << 32 ^
		     p->kind;
	struct mctr *c;
	unsigned int b;

	memcpy(dev, p->devname, RDT_NAME_LEN);
	dev[RDT_NAME_LEN] = 0;
	memcpy(name, p->name, RDT_CTR_NAME_LEN);
	name[RDT_CTR_NAME_LEN] = 0;
	for (const char *s = dev; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	for (const char *s = name; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	b = (unsigned int)(h % CTR_BUCKETS);
	for (c = m->ctrs[b]; c; c = c->next)
		if (c->host == ev->host && c->port == p->port &&
		    c->kind == p->kind && !strcmp(c->dev, dev) &&
		    !strcmp(c->name, name))
			break;
	if (!c) {
		if (m->nctrs >= m->o.max_port_counters ||
		    !(c = calloc(1, sizeof(*c)))) {
			m->ctrs_dropped++;
			return;
		}
		c->host = ev->host;
		c->port = p->port;
		c->kind = p->kind;
		memcpy(c->dev, dev, sizeof(c->dev));
		memcpy(c->name, name, sizeof(c->name));
		c->next = m->ctrs[b];
		m->ctrs[b] = c;
		m->nctrs++;
	}
	c->value = p->value;
}

/* ---- per event ------------------------------------------------------------------ */

/* Any event, the whole way: what rdt_metrics_add()'s fast path does not
 * take (a QP not in the cache, a first post, a first WR on a queue, every
 * other type), out of line so that the fast path calls nothing but this,
 * as its last act: a leaf, it saves no registers. */
static __attribute__((noinline)) void add_event(struct rdt_metrics *m,
						const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	unsigned int type = r->hdr.type;
	struct mqp *q;

	switch (type) {
	case RDT_EV_POST_SEND:
	case RDT_EV_VERBS_POST_SEND: {
		unsigned int op = op_index(r->post_send.opcode);

		q = qp_get(m, ev, r->hdr.dev, r->post_send.qpn, VIEW_VERBS);
		if (!q)
			return;
		if (!q->owned) {
			qp_owner(q, ev);
			qc_put(m, q);
		}
		q->wrs[op]++;
		q->bytes[op] += r->post_send.total_len;
		ring_push(m, q, 0, r->post_send.wr_id, ev->ts);
		return;
	}
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_VERBS_WC:
		q = qp_get(m, ev, r->hdr.dev, r->wc.qpn, VIEW_VERBS);
		if (q)
			qp_completion(q, ev, type == RDT_EV_VERBS_WC, r->wc.status,
				      r->wc.wr_id, r->wc.opcode & 128);
		return;
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_RECV:
		if (r->post_recv.srq)	/* no QP until it completes */
			return;
		q = qp_get(m, ev, r->hdr.dev, r->post_recv.qpn, VIEW_VERBS);
		if (!q)
			return;
		if (!q->owned) {
			qp_owner(q, ev);
			qc_put(m, q);
		}
		q->wrs[OP_RECV]++;
		q->bytes[OP_RECV] += r->post_recv.total_len;
		ring_push(m, q, 1, r->post_recv.wr_id, ev->ts);
		return;
	case RDT_EV_POST_FAIL:		/* its unposted WRs will not complete */
	case RDT_EV_VERBS_POST_FAIL:
		ring_unpost(m, ev);
		return;
	case RDT_EV_RXE_CQE:
		q = qp_get(m, ev, r->hdr.dev, r->rxe_cqe.qpn, VIEW_VERBS);
		if (!q)
			return;
		qp_completion(q, ev, 2, r->rxe_cqe.status, r->rxe_cqe.wr_id,
			      r->rxe_cqe.opcode & 128);
		if (r->rxe_cqe.counted) {
			q->rxe_counted = true;
			q->rxe_pkts[0] += r->rxe_cqe.tx_pkts;
			q->rxe_pkts[1] += r->rxe_cqe.rx_pkts;
			q->rxe_bytes[0] += r->rxe_cqe.tx_bytes;
			q->rxe_bytes[1] += r->rxe_cqe.rx_bytes;
		}
		return;
	case RDT_EV_RXE_RETRY:
		q = qp_get(m, ev, r->hdr.dev, r->rxe_retry.qpn, VIEW_VERBS);
		if (q)
			q->retries[r->rxe_retry.kind < 4 ? r->rxe_retry.kind : 0]++;
		return;
	case RDT_EV_QP_DESTROY:
		qp_destroyed(m, ev);
		return;
	case RDT_EV_NCCL_CALL:
		uprobe_call(m, ev);
		return;
	case RDT_EV_COLL_MARK:
		usdt_mark(m, ev);
		return;
	case RDT_EV_PORT_COUNTER:
		port_counter(m, ev);
		return;
	}
	if (type >= RDT_NP_TYPE_FIRST && type <= RDT_NP_TYPE_LAST)
		np_event(m, ev);
}

/* The QP in the cache, or NULL (add_event() looks it up). */
static inline __attribute__((always_inline)) struct mqp *
qp_cached(const struct rdt_metrics *m, const struct rdt_event *ev, uint32_t dev,
	  uint32_t qpn)
{
	unsigned int i = qc_slot(ev->host, qpn);

	return m->qcache[i].key == qc_key(ev->host, dev, qpn) ?
	       m->qcache[i].q : NULL;
}

static inline __attribute__((always_inline)) bool
add_send(struct rdt_metrics *m, const struct rdt_event *ev,
	 const union rdt_record *r, size_t len)
{
	unsigned int op = r->post_send.opcode;	/* < 16: its own index */
	struct ring *w;
	struct mqp *q;
	uint32_t i;

	if (len < sizeof(r->post_send))
		return false;
	q = qp_cached(m, ev, r->hdr.dev, r->post_send.qpn);
	if (!q || !(w = q->ring[0]) || w->n == RING || op >= 16)
		return false;
	q->wrs[op]++;
	q->bytes[op] += r->post_send.total_len;
	i = (w->head + w->n++) % RING;
	w->v[i].wr_id = r->post_send.wr_id;
	w->v[i].ts = ev->ts;
	return true;
}

/* @seen: qp_completion()'s, a constant at each call. */
static inline __attribute__((always_inline)) bool
add_wc(struct rdt_metrics *m, const struct rdt_event *ev,
       const union rdt_record *r, size_t len, int seen)
{
	struct mqp *q;

	if (len < sizeof(r->wc))
		return false;
	q = qp_cached(m, ev, r->hdr.dev, r->wc.qpn);
	if (!q)
		return false;
	qp_completion(q, ev, seen, r->wc.status, r->wc.wr_id,
		      r->wc.opcode & 128);
	return true;
}

/*
 * Per event.  The fast path is a send or its completion on a QP in the
 * cache whose queue has its ring: what a busy trace is made of (make
 * bench holds --metrics to 5 % of the text output's cost per event).
 * @r is the event's record (ev->rec, or where the reader read it), @len
 * bytes of it (an older minor's shorter record goes the whole way):
 * false, nothing counted, where add_event() must count it.  The module's
 * two types are tested first, each once: a busy kernel trace is those.
 */
static inline __attribute__((always_inline)) bool
add_fast(struct rdt_metrics *m, const struct rdt_event *ev,
	 const union rdt_record *r, size_t len)
{
	unsigned int type = r->hdr.type;

	if (type == RDT_EV_POST_SEND)
		return add_send(m, ev, r, len);
	if (type == RDT_EV_POLL_CQ_WC)
		return add_wc(m, ev, r, len, 0);
	if (type == RDT_EV_VERBS_POST_SEND)
		return add_send(m, ev, r, len);
	if (type == RDT_EV_VERBS_WC)
		return add_wc(m, ev, r, len, 1);
	return false;
}

RDT_EXPORT void rdt_metrics_add(struct rdt_metrics *m, const struct rdt_event *ev)
{
	m->events++;
	if (!add_fast(m, ev, &ev->rec, sizeof(ev->rec)))
		add_event(m, ev);
}

RDT_EXPORT bool rdt_metrics_add_rec(struct rdt_metrics *m,
				    const struct rdt_event *ev, const void *rec,
				    size_t len)
{
	/* Read in place only where it is aligned as ev->rec. */
	if ((uintptr_t)rec % _Alignof(union rdt_record) ||
	    len < sizeof(struct rdt_hdr))
		return false;
	if (!add_fast(m, ev, rec, len))
		return false;
	m->events++;
	return true;
}

RDT_EXPORT void rdt_metrics_finish(struct rdt_metrics *m)
{
	rdt_np_open_linger(&m->np, UINT64_MAX);
}

RDT_EXPORT size_t rdt_metrics_qp_series(const struct rdt_metrics *m)
{
	return m->nqps;
}

/* ---- the page ----------------------------------------------------------------- */

/* A label value: backslash, double quote and newline escaped; bytes
 * that are not printable ASCII as '?' (names are bytes, not UTF-8). */
static void lv(FILE *o, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' || c == '"')
			fprintf(o, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", o);
		else
			fputc(c >= 0x20 && c < 0x7f ? c : '?', o);
	}
}

static void head(FILE *o, const char *name, const char *type, const char *help)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

struct hosts {
	const struct rdt_reader *r;
	char buf[8][128];
	uint32_t which[8];
	unsigned int n;
};

/* The host's label, cached (the reader builds it each time). */
static const char *host_label(struct hosts *h, uint32_t host)
{
	unsigned int i;

	for (i = 0; i < h->n; i++)
		if (h->which[i] == host)
			return h->buf[i];
	i = h->n < 8 ? h->n++ : host % 8;
	h->which[i] = host;
	if (h->r)
		rdt_reader_host_label(h->r, host, h->buf[i], sizeof(h->buf[i]));
	else
		snprintf(h->buf[i], sizeof(h->buf[i]), "%u", host);
	return h->buf[i];
}

static void qp_labels(FILE *o, struct hosts *h, const struct mqp *q)
{
	fputs("{host=\"", o);
	lv(o, host_label(h, q->host));
	fputs("\",dev=\"", o);
	if (q->view == VIEW_NP)
		fprintf(o, "nccl%u", q->dev);
	else if (*q->devname)
		lv(o, q->devname);
	else
		fprintf(o, "%u", q->dev);
	if (q->other)
		fputs("\",qpn=\"other\",pid=\"\",comm=\"", o);
	else
		fprintf(o, "\",qpn=\"%u\",pid=\"%u\",comm=\"", q->qpn, q->pid);
	lv(o, q->comm);
	fprintf(o, "\",source=\"%s\"", q->view == VIEW_NP ? "nccl_plugin" : "verbs");
}

static void coll_labels(FILE *o, struct hosts *h, const struct mcoll *c)
{
	fputs("{host=\"", o);
	lv(o, host_label(h, c->host));
	if (c->other)
		fputs("\",pid=\"\",comm=\"\",comm_hash=\"other\",rank=\"\",func=\"", o);
	else {
		fprintf(o, "\",pid=\"%u\",comm=\"", c->pid);
		lv(o, c->comm);
		if (c->comm_hash)
			fprintf(o, "\",comm_hash=\"%016" PRIx64 "\"", c->comm_hash);
		else
			fputs("\",comm_hash=\"\"", o);
		fprintf(o, ",rank=\"%d\",func=\"", c->rank);
	}
	lv(o, c->func);
	fprintf(o, "\",source=\"%s\"", coll_source[c->source]);
}

/* A histogram's lines: cumulative buckets in seconds, sum and count. */
static void hist_lines(FILE *o, const char *name, const char *labels,
		       const struct hist *hs)
{
	uint64_t cum = 0;

	for (unsigned int i = 0; i <= NB; i++) {
		cum += hs->b[i];
		if (i < NB)
			fprintf(o, "%s_bucket%s,le=\"%g\"} %" PRIu64 "\n", name,
				labels, (double)bounds[i] / 1e9, cum);
		else
			fprintf(o, "%s_bucket%s,le=\"+Inf\"} %" PRIu64 "\n", name,
				labels, cum);
	}
	fprintf(o, "%s_sum%s} %.9f\n%s_count%s} %" PRIu64 "\n", name, labels,
		(double)hs->sum_ns / 1e9, name, labels, hs->n);
}

/* Labels without their closing brace into a buffer, for several lines. */
static char *labels_of(char **buf, size_t *len, void (*fn)(FILE *, struct hosts *,
							  const void *),
		       struct hosts *h, const void *x)
{
	FILE *f = open_memstream(buf, len);

	if (!f)
		return NULL;
	fn(f, h, x);
	fclose(f);
	return *buf;
}

static void qp_labels_v(FILE *o, struct hosts *h, const void *x)
{
	qp_labels(o, h, x);
}

static void coll_labels_v(FILE *o, struct hosts *h, const void *x)
{
	coll_labels(o, h, x);
}

static const char *op_name(unsigned int i)
{
	return i == OP_RECV ? "RECV" : i == OP_OTHER ? "OTHER" :
	       rdt_wr_opcode_name(i == OP_REG_MR ? 0x20 : i);
}

static void render_qps(const struct rdt_metrics *m, struct hosts *h, FILE *o)
{
	static const char *const seen[NSEEN] = { "poll_cq_wc", "verbs_wc", "rxe_cqe" };
	static const char *const retry[4] = { "other", "retransmit", "rnr", "nak_seq" };
	char *lb = NULL;
	size_t ll = 0;

#define EACH_QP(q) for (size_t i_ = 0; i_ < QP_BUCKETS; i_++) \
	for (const struct mqp *q = m->qps[i_]; q; q = q->next)

	head(o, "rdmatrace_qp_work_requests_total", "counter",
	     "Work requests posted, by opcode (RECV: receives).");
	EACH_QP(q)
		for (unsigned int i = 0; i < NOPS; i++)
			if (q->wrs[i]) {
				fputs("rdmatrace_qp_work_requests_total", o);
				qp_labels(o, h, q);
				fprintf(o, ",opcode=\"%s\"} %" PRIu64 "\n",
					op_name(i), q->wrs[i]);
			}
	head(o, "rdmatrace_qp_bytes_total", "counter",
	     "Bytes of the work requests posted (their SGEs' lengths), by opcode.");
	EACH_QP(q)
		for (unsigned int i = 0; i < NOPS; i++)
			if (q->wrs[i]) {
				fputs("rdmatrace_qp_bytes_total", o);
				qp_labels(o, h, q);
				fprintf(o, ",opcode=\"%s\"} %" PRIu64 "\n",
					op_name(i), q->bytes[i]);
			}
	head(o, "rdmatrace_qp_completions_total", "counter",
	     "Completions the application polled (NCCL plugin: WRs completed).");
	EACH_QP(q) {
		fputs("rdmatrace_qp_completions_total", o);
		qp_labels(o, h, q);
		fprintf(o, "} %" PRIu64 "\n", q->wcs);
	}
	head(o, "rdmatrace_qp_completion_errors_total", "counter",
	     "Completions with an error, by ib_wc_status and by the record that saw it.");
	EACH_QP(q)
		for (int s = 0; s < NSEEN; s++)
			for (int i = 1; i < NSTATUS; i++)
				if (q->errors[s][i]) {
					fputs("rdmatrace_qp_completion_errors_total", o);
					qp_labels(o, h, q);
					fprintf(o, ",status=\"%s\",seen_by=\"%s\"} %"
						PRIu64 "\n", rdt_wc_status_name((unsigned)i),
						seen[s], q->errors[s][i]);
				}
	head(o, "rdmatrace_qp_retries_total", "counter",
	     "rxe's retries: retransmit timer, RNR NAK, NAK sequence error.");
	EACH_QP(q)
		for (int i = 0; i < 4; i++)
			if (q->retries[i]) {
				fputs("rdmatrace_qp_retries_total", o);
				qp_labels(o, h, q);
				fprintf(o, ",kind=\"%s\"} %" PRIu64 "\n", retry[i],
					q->retries[i]);
			}
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "rdmatrace_qp_rxe_bytes_total" :
				       "rdmatrace_qp_rxe_packets_total";

		head(o, name, "counter", k ? "Bytes of those packets (BTH to ICRC)." :
		     "Packets rxe sent (tx) and received (rx) on the QP, up to its last CQE.");
		EACH_QP(q)
			for (int d = 0; q->rxe_counted && d < 2; d++) {
				fputs(name, o);
				qp_labels(o, h, q);
				fprintf(o, ",dir=\"%s\"} %" PRIu64 "\n", d ? "rx" : "tx",
					k ? q->rxe_bytes[d] : q->rxe_pkts[d]);
			}
	}
	head(o, "rdmatrace_qp_wr_latency_seconds", "histogram",
	     "Work request post -> its first completion (rxe's CQE or the poll; plugin: NCCL's).");
	EACH_QP(q) {
		if (!q->lat.n || !labels_of(&lb, &ll, qp_labels_v, h, q))
			continue;
		hist_lines(o, "rdmatrace_qp_wr_latency_seconds", lb, &q->lat);
		free(lb);
		lb = NULL;
	}
#undef EACH_QP
}

static void render_colls(const struct rdt_metrics *m, struct hosts *h, FILE *o)
{
	char *lb = NULL;
	size_t ll = 0;

#define EACH_COLL(c) for (size_t i_ = 0; i_ < COLL_BUCKETS; i_++) \
	for (const struct mcoll *c = m->colls[i_]; c; c = c->next)

	head(o, "rdmatrace_collectives_total", "counter",
	     "Collectives (NCCL plugin: enqueued; uprobes: calls; USDT: ended).");
	EACH_COLL(c) {
		fputs("rdmatrace_collectives_total", o);
		coll_labels(o, h, c);
		fprintf(o, "} %" PRIu64 "\n", c->n);
	}
	head(o, "rdmatrace_collective_bytes_total", "counter",
	     "Collectives' message bytes (count x datatype size; nccl-tests' size).");
	EACH_COLL(c) {
		fputs("rdmatrace_collective_bytes_total", o);
		coll_labels(o, h, c);
		fprintf(o, "} %" PRIu64 "\n", c->bytes);
	}
	head(o, "rdmatrace_collective_errors_total", "counter",
	     "NCCL calls that returned an error (uprobes).");
	EACH_COLL(c)
		if (c->source == CS_UPROBE) {
			fputs("rdmatrace_collective_errors_total", o);
			coll_labels(o, h, c);
			fprintf(o, "} %" PRIu64 "\n", c->errors);
		}
	head(o, "rdmatrace_collective_enqueue_seconds", "histogram",
	     "Time to enqueue a collective (the host's side of the call).");
	EACH_COLL(c) {
		if (!c->enq.n || !labels_of(&lb, &ll, coll_labels_v, h, c))
			continue;
		hist_lines(o, "rdmatrace_collective_enqueue_seconds", lb, &c->enq);
		free(lb);
		lb = NULL;
	}
	head(o, "rdmatrace_collective_duration_seconds", "histogram",
	     "A collective's run: its GPU kernels' span (NCCL plugin), begin -> end (USDT).");
	EACH_COLL(c) {
		if (!c->dur.n || !labels_of(&lb, &ll, coll_labels_v, h, c))
			continue;
		hist_lines(o, "rdmatrace_collective_duration_seconds", lb, &c->dur);
		free(lb);
		lb = NULL;
	}
#undef EACH_COLL
}

static void render_ctrs(const struct rdt_metrics *m, struct hosts *h, FILE *o)
{
	head(o, "rdmatrace_port_counter_total", "counter",
	     "Port counters (sysfs counters/ and hw_counters/), as last sampled.");
	for (size_t i = 0; i < CTR_BUCKETS; i++)
		for (const struct mctr *c = m->ctrs[i]; c; c = c->next) {
			fputs("rdmatrace_port_counter_total{host=\"", o);
			lv(o, host_label(h, c->host));
			fputs("\",dev=\"", o);
			lv(o, c->dev);
			fprintf(o, "\",port=\"%u\",kind=\"%s\",counter=\"", c->port,
				c->kind == RDT_CTR_HW_COUNTERS ? "hw_counters" :
				"counters");
			lv(o, c->name);
			fprintf(o, "\"} %" PRIu64 "\n", c->value);
		}
}

static void src_line(FILE *o, const char *name, const char *host,
		     const struct rdt_source_stats *st, const char *extra,
		     uint64_t v)
{
	fprintf(o, "%s{host=\"", name);
	lv(o, host);
	fputs("\",source=\"", o);
	lv(o, st->name ? st->name : "");
	fprintf(o, "\"%s} %" PRIu64 "\n", extra, v);
}

static void render_sources(const struct rdt_reader *r, struct hosts *h, FILE *o)
{
	static const char *const kinds[] = {
		[RDT_SOURCE_FILE] = "file", [RDT_SOURCE_RELAY] = "relay",
		[RDT_SOURCE_BPF] = "bpf", [RDT_SOURCE_CUSTOM] = "custom",
		[RDT_SOURCE_NCCL_PLUGIN] = "nccl_plugin",
		[RDT_SOURCE_COUNTERS] = "counters",
	};
	unsigned int n = r ? rdt_reader_nsources(r) : 0;
	const char *host = host_label(h, 0);
	struct rdt_source_stats st;
	char extra[64];

	head(o, "rdmatrace_source_records_total", "counter",
	     "Records each source decoded.");
	for (unsigned int i = 0; i < n; i++)
		if (!rdt_reader_source_stats(r, i, &st)) {
			snprintf(extra, sizeof(extra), ",kind=\"%s\"",
				 (unsigned)st.kind < sizeof(kinds) / sizeof(*kinds) &&
				 kinds[st.kind] ? kinds[st.kind] : "?");
			src_line(o, "rdmatrace_source_records_total", host, &st,
				 extra, st.records);
		}
	head(o, "rdmatrace_source_lost_total", "counter",
	     "Events the producers lost (buffers full), by producer.");
	for (unsigned int i = 0; i < n; i++) {
		if (rdt_reader_source_stats(r, i, &st))
			continue;
		for (unsigned int p = 0; p < 8; p++)
			if (st.lost_by[p] || (p == 0 && !st.lost)) {
				snprintf(extra, sizeof(extra), ",producer=\"%s\"",
					 p ? rdt_source_name(p) : "any");
				src_line(o, "rdmatrace_source_lost_total", host,
					 &st, extra, st.lost_by[p]);
			}
	}
	head(o, "rdmatrace_source_late_total", "counter",
	     "Live events that came after their reorder window (out of order).");
	for (unsigned int i = 0; i < n; i++)
		if (!rdt_reader_source_stats(r, i, &st))
			src_line(o, "rdmatrace_source_late_total", host, &st, "",
				 st.late);
	head(o, "rdmatrace_source_unknown_total", "counter",
	     "Records of an unknown type, skipped.");
	for (unsigned int i = 0; i < n; i++)
		if (!rdt_reader_source_stats(r, i, &st))
			src_line(o, "rdmatrace_source_unknown_total", host, &st, "",
				 st.unknown);
	head(o, "rdmatrace_source_gaps_total", "counter",
	     "Places events were lost, count unknown: relay sub-buffers skipped, corrupt data skipped, ring files detached or not read.");
	for (unsigned int i = 0; i < n; i++) {
		if (rdt_reader_source_stats(r, i, &st))
			continue;
		src_line(o, "rdmatrace_source_gaps_total", host, &st,
			 ",why=\"subbuf_skipped\"", st.subbufs_skipped);
		src_line(o, "rdmatrace_source_gaps_total", host, &st,
			 ",why=\"corrupt\"", st.resyncs);
		src_line(o, "rdmatrace_source_gaps_total", host, &st,
			 ",why=\"detached\"", st.detached);
		src_line(o, "rdmatrace_source_gaps_total", host, &st,
			 ",why=\"skipped_file\"", st.skipped_files);
	}
	head(o, "rdmatrace_source_failed", "gauge",
	     "1: the source stopped at an error.");
	for (unsigned int i = 0; i < n; i++)
		if (!rdt_reader_source_stats(r, i, &st))
			src_line(o, "rdmatrace_source_failed", host, &st, "",
				 st.failed);
}

static void render_stuck(const struct rdt_metrics *m, struct hosts *h,
			 uint64_t now, FILE *o)
{
	struct rdt_stuck_gauges g;
	const char *host = host_label(h, 0);

	rdt_stuck_gauges(m->stuck, now, &g);
#define G(name, type, help, v) do { head(o, name, type, help); \
	fprintf(o, "%s{host=\"", name); lv(o, host); \
	fprintf(o, "\"} %" PRIu64 "\n", (uint64_t)(v)); } while (0)
	G("rdmatrace_stuck_qps", "gauge",
	  "QPs whose oldest send WR has waited --stuck's limit or more.", g.qps);
	G("rdmatrace_stuck_send_wrs", "gauge",
	  "Send WRs outstanding on the stuck QPs.", g.send_wrs);
	G("rdmatrace_stuck_collectives", "gauge",
	  "Ranks waiting in a collective for --stuck's limit or more.",
	  g.collectives);
	G("rdmatrace_stuck_episodes_total", "counter",
	  "Times something became stuck.", g.episodes);
#undef G
	head(o, "rdmatrace_stuck_oldest_seconds", "gauge",
	     "The longest a stuck QP's oldest send WR has waited.");
	fputs("rdmatrace_stuck_oldest_seconds{host=\"", o);
	lv(o, host);
	fprintf(o, "\"} %.9f\n", (double)g.oldest_ns / 1e9);
}

static void capped(FILE *o, struct hosts *h, const char *what, uint64_t v)
{
	fputs("rdmatrace_metrics_capped_total{host=\"", o);
	lv(o, host_label(h, 0));
	fprintf(o, "\",what=\"%s\"} %" PRIu64 "\n", what, v);
}

RDT_EXPORT int rdt_metrics_render(struct rdt_metrics *m,
				  const struct rdt_reader *r, uint64_t now,
				  char **buf, size_t *len)
{
	struct hosts h = { .r = r };
	FILE *o;

	*buf = NULL;
	*len = 0;
	if (!now && r)
		now = rdt_reader_last_ts(r);
	/* Live: what is due goes even when no event comes to push it. */
	rdt_np_open_linger(&m->np, now);
	expire_due(m, now);
	o = open_memstream(buf, len);
	if (!o)
		return -ENOMEM;
	render_qps(m, &h, o);
	render_colls(m, &h, o);
	render_ctrs(m, &h, o);
	render_sources(r, &h, o);
	if (m->stuck)
		render_stuck(m, &h, now, o);
	head(o, "rdmatrace_metrics_events_total", "counter",
	     "Events the exporter counted.");
	fprintf(o, "rdmatrace_metrics_events_total{host=\"");
	lv(o, host_label(&h, 0));
	fprintf(o, "\"} %" PRIu64 "\n", m->events);
	head(o, "rdmatrace_metrics_qp_series", "gauge",
	     "QPs with series of their own (the cap: rdmatrace_metrics_qp_series_max).");
	fprintf(o, "rdmatrace_metrics_qp_series{host=\"");
	lv(o, host_label(&h, 0));
	fprintf(o, "\"} %zu\n", m->nqps);
	head(o, "rdmatrace_metrics_qp_series_max", "gauge",
	     "The cap on QPs with series of their own; the rest count in qpn=\"other\".");
	fprintf(o, "rdmatrace_metrics_qp_series_max{host=\"");
	lv(o, host_label(&h, 0));
	fprintf(o, "\"} %u\n", m->o.max_qps);
	head(o, "rdmatrace_metrics_capped_total", "counter",
	     "What the caps kept out: events counted in qpn=\"other\" or comm_hash=\"other\", destroyed QPs moved into qpn=\"other\", port counter samples not kept, WRs whose latency was not kept (over 64 outstanding on a queue).");
	capped(o, &h, "qp_events", m->qp_other_events);
	capped(o, &h, "collective_events", m->coll_other_events);
	capped(o, &h, "qps_expired", m->qps_expired);
	capped(o, &h, "port_counter_samples", m->ctrs_dropped);
	capped(o, &h, "wr_latencies", m->ring_dropped);
	if (fclose(o)) {
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	return 0;
}
