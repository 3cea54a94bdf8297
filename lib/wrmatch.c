// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Post -> completion matching by (host, dev, qpn, wr_id, send/recv).  A queue
 * per key because applications reuse wr_ids (ibv_rc_pingpong posts every
 * receive with the same one); a QP's queues complete in order, so the
 * oldest outstanding post is the one a completion belongs to.
 *
 * Memory follows the outstanding posts, not the trace: a key whose queue
 * empties leaves the table (a key with nothing pending and no key at all
 * answer the same).  The table is open addressing with linear probing,
 * grown at half full and with backward-shift deletion; a queue of one post,
 * the common case, lives in its entry.  (Fixed 4096 buckets of never-freed
 * entries were 42 % of a conversion to SQLite at 400 k events, and all of
 * the Perfetto sink's growth with trace length.)
 *
 * One WR may complete twice in a trace: rxe writes its CQE (RDT_EV_RXE_CQE,
 * --rxe) and the application polls it (the module's POLL_CQ_WC, --verbs'
 * VERBS_WC).  A post is matched by each kind, once: a CQE marks the oldest
 * post of its key it has not marked, a poll takes the oldest post.  A QP
 * that CQE_ONLY CQEs came for and no poll is one nothing polls in this
 * trace (a kernel consumer traced by --rxe alone): from then on its CQEs
 * take the posts they mark, and the marked ones before go then too.
 *
 * A failed post (POST_FAIL, ABI 1.4) follows its call's WR records, which
 * share the call's timestamp: the WRs from bad_index on were not posted
 * and never complete, and a repost of the same wr_id must not match them.
 * The last RECENT posts are kept to find them; a call longer than that
 * leaves its oldest unposted WRs pending (they only age out).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define MAX_PENDING 4096	/* per key: unsignaled sends never complete */
#define RECENT 256		/* posts remembered for a POST_FAIL */

struct pend {
	uint64_t ts, flow;
	uint64_t cqe;		/* its CQE's time; 0: none yet */
};

struct wkey {
	uint32_t host, dev, qpn, recv;
	uint64_t wr_id;
};

struct went {
	uint64_t h;		/* hash of k, never 0; 0: free slot */
	struct wkey k;
	uint32_t head, n, cap;	/* cap <= 1: the queue is @one */
	struct pend one;
	struct pend *q;
};

struct recent {
	struct wkey k;
	uint64_t ts, flow;	/* ts: the record's own, the call's */
	uint16_t index;
};

#define CQE_ONLY 64

/* Per QP (host, dev, qpn): polled, or how many CQEs came before a poll. */
struct qpst {
	uint64_t key;		/* 0: free */
	uint32_t cqes;
	bool polled;
};

struct qptab {
	struct qpst *v;		/* open addressing, power of two */
	size_t cap, n;
};

struct rdt_wrmatch {
	struct went *t;		/* power-of-two slots */
	size_t cap, n;
	uint64_t next_flow;
	struct recent r[RECENT];
	uint64_t nr;		/* posts ever put in r */
	struct qptab qps;
};

struct rdt_wrmatch *rdt_wrmatch_new(void)
{
	return calloc(1, sizeof(struct rdt_wrmatch));
}

void rdt_wrmatch_free(struct rdt_wrmatch *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		if (m->t[i].h && m->t[i].cap > 1)
			free(m->t[i].q);
	free(m->t);
	free(m->qps.v);
	free(m);
}

static inline uint64_t khash(const struct wkey *k)
{
	uint64_t h = k->wr_id * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)k->qpn << 20 | (uint64_t)k->dev << 8 | k->recv |
		      (uint64_t)k->host << 40);

	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	return h ? h : 1;
}

static inline bool keq(const struct wkey *a, const struct wkey *b)
{
	return a->wr_id == b->wr_id && a->qpn == b->qpn && a->dev == b->dev &&
	       a->host == b->host && a->recv == b->recv;
}

static struct went *find(struct rdt_wrmatch *m, const struct wkey *k,
			 uint64_t h)
{
	size_t mask = m->cap - 1;

	if (!m->cap)
		return NULL;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct went *e = &m->t[i];

		if (!e->h)
			return NULL;
		if (e->h == h && keq(&e->k, k))
			return e;
	}
}

static bool grow(struct rdt_wrmatch *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	struct went *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t j = 0; j < m->cap; j++) {
		size_t i;

		if (!m->t[j].h)
			continue;
		for (i = m->t[j].h & (cap - 1); t[i].h; i = (i + 1) & (cap - 1))
			;
		t[i] = m->t[j];
	}
	free(m->t);
	m->t = t;
	m->cap = cap;
	return true;
}

static struct went *add(struct rdt_wrmatch *m, const struct wkey *k,
			uint64_t h)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap && !grow(m))
		return NULL;
	for (i = h & (m->cap - 1); m->t[i].h; i = (i + 1) & (m->cap - 1))
		;
	m->n++;
	m->t[i] = (struct went){ .h = h, .k = *k };
	return &m->t[i];
}

/* Backward-shift deletion keeps every probe chain whole. */
static void del(struct rdt_wrmatch *m, struct went *e)
{
	size_t i = (size_t)(e - m->t), j = i, mask = m->cap - 1;

	if (e->cap > 1)
		free(e->q);
	for (;;) {
		size_t b;

		j = (j + 1) & mask;
		if (!m->t[j].h)
			break;
		b = m->t[j].h & mask;
		if ((j > i && (b <= i || b > j)) || (j < i && (b <= i && b > j))) {
			m->t[i] = m->t[j];
			i = j;
		}
	}
	m->t[i].h = 0;
	m->n--;
}

static inline struct pend *qv(struct went *e)
{
	return e->cap > 1 ? e->q : &e->one;
}

static void enqueue(struct went *e, uint64_t ts, uint64_t flow)
{
	if (!e->cap)
		e->cap = 1;
	if (e->n == e->cap) {
		uint32_t cap = e->cap * 2 < 4 ? 4 : e->cap * 2;
		struct pend *q, *old = qv(e);

		if (e->n >= MAX_PENDING) {	/* forget the oldest */
			e->head = (e->head + 1) % e->cap;
			e->n--;
		} else if ((q = malloc(cap * sizeof(*q)))) {
			for (uint32_t i = 0; i < e->n; i++)
				q[i] = old[(e->head + i) % e->cap];
			if (e->cap > 1)
				free(e->q);
			e->q = q;
			e->head = 0;
			e->cap = cap;
		} else {
			return;
		}
	}
	qv(e)[(e->head + e->n) % e->cap] = (struct pend){ ts, flow, 0 };
	e->n++;
}

/* Take back @c's post if it is still the newest of its key's queue. */
static void unpost(struct rdt_wrmatch *m, struct recent *c)
{
	struct went *e = find(m, &c->k, khash(&c->k));
	struct pend *last;

	if (!e || !e->n)
		return;
	last = &qv(e)[(e->head + e->n - 1) % e->cap];
	if (last->flow != c->flow)
		return;
	c->flow = 0;
	if (!--e->n)
		del(m, e);
}

static void post_failed(struct rdt_wrmatch *m, const struct rdt_event *ev)
{
	const struct rdt_ev_post_fail *f = &ev->rec.post_fail;
	uint64_t call_ts = 0;
	bool found = false;

	bool recv = f->post_type == RDT_EV_POST_RECV ||
		    f->post_type == RDT_EV_VERBS_POST_RECV;

	if (f->bad_index == RDT_BAD_INDEX_UNKNOWN ||
	    (!recv && f->post_type != RDT_EV_POST_SEND &&
	     f->post_type != RDT_EV_VERBS_POST_SEND))
		return;
	for (uint64_t i = 0; i < m->nr && i < RECENT; i++) {
		struct recent *c = &m->r[(m->nr - 1 - i) % RECENT];

		if (c->k.host != ev->host || c->k.dev != f->hdr.dev ||
		    c->k.qpn != f->qpn ||
		    c->k.recv != recv)
			continue;
		if (!found) {
			if (c->ts > f->hdr.ts_ns)
				continue;	/* a later call, merged in before */
			call_ts = c->ts;
			found = true;
		}
		if (c->ts != call_ts)
			break;			/* an earlier call */
		if (c->index >= f->bad_index && c->flow)
			unpost(m, c);
	}
}

static uint64_t qp_key(const struct wkey *k)
{
	return ((uint64_t)k->host << 48 ^ (uint64_t)k->dev << 32 ^ k->qpn) + 1;
}

static size_t qp_slot(uint64_t key, size_t cap)
{
	return (size_t)(key * 0x9e3779b97f4a7c15ull >> 17) & (cap - 1);
}

/* The state of @k's QP; made if missing (NULL when out of memory). */
static struct qpst *qp_get(struct rdt_wrmatch *m, const struct wkey *k)
{
	struct qptab *t = &m->qps;
	uint64_t key = qp_key(k);
	size_t i;

	for (i = t->cap ? qp_slot(key, t->cap) : 0; t->cap && t->v[i].key;
	     i = (i + 1) & (t->cap - 1))
		if (t->v[i].key == key)
			return &t->v[i];
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct qpst *v = calloc(cap, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->v[j].key)
				continue;
			for (i = qp_slot(t->v[j].key, cap); v[i].key;
			     i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[j];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
		for (i = qp_slot(key, cap); v[i].key; i = (i + 1) & (cap - 1))
			;
	}
	t->v[i] = (struct qpst){ .key = key };
	t->n++;
	return &t->v[i];
}

/* Drop the post at the head of @e's queue. */
static void take_head(struct rdt_wrmatch *m, struct went *e)
{
	e->head = (e->head + 1) % e->cap;
	if (!--e->n)
		del(m, e);
}

/* A CQE: the oldest post of its key without one. */
static uint64_t wc_cqe(struct rdt_wrmatch *m, const struct wkey *k,
		       uint64_t ts, uint64_t *post_ts)
{
	struct went *e = find(m, k, khash(k));
	struct qpst *q = qp_get(m, k);
	struct pend *p = NULL;
	uint64_t flow;
	uint32_t i;

	for (i = 0; e && i < e->n && !p; i++) {
		struct pend *c = &qv(e)[(e->head + i) % e->cap];

		if (!c->cqe)
			p = c;
	}
	if (!p)
		return 0;
	p->cqe = ts ? ts : 1;
	*post_ts = p->ts;
	flow = p->flow;
	/* Nothing polls it: its marked posts go (the head ones, in order). */
	if (!q || (!q->polled && ++q->cqes >= CQE_ONLY))
		while (e->n && qv(e)[e->head].cqe) {
			bool last = e->n == 1;

			take_head(m, e);
			if (last)
				break;
		}
	return flow;
}

/* A poll: the oldest post of its key, its CQE's time in *@cqe_ts (0 if
 * none). */
static uint64_t wc_poll(struct rdt_wrmatch *m, const struct wkey *k,
			uint64_t *post_ts, uint64_t *cqe_ts)
{
	struct went *e = find(m, k, khash(k));
	struct qpst *q = qp_get(m, k);
	struct pend p;

	if (q)
		q->polled = true;
	if (!e || !e->n)
		return 0;
	p = qv(e)[e->head];
	*post_ts = p.ts;
	*cqe_ts = p.cqe;
	take_head(m, e);
	return p.flow;
}

uint64_t rdt_wrmatch_event2(struct rdt_wrmatch *m, const struct rdt_event *ev,
			    uint64_t *post_ts, uint64_t *cqe_ts)
{
	const union rdt_record *r = &ev->rec;
	struct wkey k;
	struct went *e;
	uint64_t h;

	*cqe_ts = 0;

	k.host = ev->host;
	k.dev = r->hdr.dev;
	k.recv = 0;
	switch (r->hdr.type) {
	case RDT_EV_POST_SEND:
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_SEND:
	case RDT_EV_VERBS_POST_RECV:
		if (r->hdr.type == RDT_EV_POST_SEND ||
		    r->hdr.type == RDT_EV_VERBS_POST_SEND) {
			if (r->post_send.ret || r->post_send.bad)
				return 0;
			k.qpn = r->post_send.qpn;
			k.wr_id = r->post_send.wr_id;
		} else {
			if (r->post_recv.ret || r->post_recv.bad)
				return 0;
			k.qpn = r->post_recv.qpn;
			k.wr_id = r->post_recv.wr_id;
			k.recv = 1;
		}
		h = khash(&k);
		e = find(m, &k, h);
		if (!e && !(e = add(m, &k, h)))
			return 0;
		enqueue(e, ev->ts, ++m->next_flow);
		m->r[m->nr++ % RECENT] = (struct recent){ .k = k,
			.ts = r->hdr.ts_ns, .flow = m->next_flow,
			.index = k.recv ? r->post_recv.index : r->post_send.index };
		return m->next_flow;
	case RDT_EV_POST_FAIL:
	case RDT_EV_VERBS_POST_FAIL:
		post_failed(m, ev);
		return 0;
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_VERBS_WC:
		k.qpn = r->wc.qpn;
		k.wr_id = r->wc.wr_id;
		k.recv = !!(r->wc.opcode & 128);	/* IB_WC_RECV* */
		break;
	case RDT_EV_RXE_CQE:
		k.qpn = r->rxe_cqe.qpn;
		k.wr_id = r->rxe_cqe.wr_id;
		k.recv = !!(r->rxe_cqe.opcode & 128);
		break;
	default:
		return 0;
	}
	if (r->hdr.type == RDT_EV_RXE_CQE)
		return wc_cqe(m, &k, ev->ts, post_ts);
	return wc_poll(m, &k, post_ts, cqe_ts);
}

uint64_t rdt_wrmatch_event(struct rdt_wrmatch *m, const struct rdt_event *ev,
			   uint64_t *post_ts)
{
	uint64_t c;

	return rdt_wrmatch_event2(m, ev, post_ts, &c);
}
