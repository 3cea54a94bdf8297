// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Post -> completion matching by (host, dev, qpn, wr_id, send/recv).  A queue
 * per key because applications reuse wr_ids (ibv_rc_pingpong posts every
 * receive with the same one); a QP's queues complete in order, so the
 * oldest outstanding post is the one a completion belongs to.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BUCKETS 4096
#define MAX_PENDING 4096	/* per key: unsignaled sends never complete */

struct pend {
	uint64_t ts, flow;
};

struct wkey {
	uint32_t host, dev, qpn, recv;
	uint64_t wr_id;
};

struct went {
	struct wkey k;
	struct went *next;
	struct went *all;	/* every entry, for free */
	struct pend *q;
	size_t head, n, cap;
};

struct rdt_wrmatch {
	struct went *b[BUCKETS];
	struct went *all;
	uint64_t next_flow;
};

struct rdt_wrmatch *rdt_wrmatch_new(void)
{
	return calloc(1, sizeof(struct rdt_wrmatch));
}

void rdt_wrmatch_free(struct rdt_wrmatch *m)
{
	if (!m)
		return;
	/* The list, not the buckets: cheap for the many small readers. */
	while (m->all) {
		struct went *n = m->all->all;

		free(m->all->q);
		free(m->all);
		m->all = n;
	}
	free(m);
}

static struct went *find(struct rdt_wrmatch *m, const struct wkey *k, bool add)
{
	uint64_t h = k->wr_id * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)k->qpn << 20 | (uint64_t)k->dev << 8 | k->recv |
		      (uint64_t)k->host << 40);
	unsigned int b = (unsigned int)((h * 0xff51afd7ed558ccdull) >> 52) % BUCKETS;
	struct went *e;

	for (e = m->b[b]; e; e = e->next)
		if (!memcmp(&e->k, k, sizeof(*k)))
			return e;
	if (!add || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->k = *k;
	e->next = m->b[b];
	m->b[b] = e;
	e->all = m->all;
	m->all = e;
	return e;
}

static void enqueue(struct went *e, uint64_t ts, uint64_t flow)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 4;
		struct pend *q;

		if (e->n >= MAX_PENDING) {	/* forget the oldest */
			e->head = (e->head + 1) % e->cap;
			e->n--;
		} else if ((q = malloc(cap * sizeof(*q)))) {
			for (size_t i = 0; i < e->n; i++)
				q[i] = e->q[(e->head + i) % e->cap];
			free(e->q);
			e->q = q;
			e->head = 0;
			e->cap = cap;
		} else {
			return;
		}
	}
	e->q[(e->head + e->n) % e->cap] = (struct pend){ ts, flow };
	e->n++;
}

uint64_t rdt_wrmatch_event(struct rdt_wrmatch *m, const struct rdt_event *ev,
			   uint64_t *post_ts)
{
	const union rdt_record *r = &ev->rec;
	struct wkey k;
	struct went *e;

	memset(&k, 0, sizeof(k));
	k.host = ev->host;
	k.dev = r->hdr.dev;
	switch (r->hdr.type) {
	case RDT_EV_POST_SEND:
	case RDT_EV_POST_RECV:
		if (r->hdr.type == RDT_EV_POST_SEND) {
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
		e = find(m, &k, true);
		if (!e)
			return 0;
		enqueue(e, ev->ts, ++m->next_flow);
		return m->next_flow;
	case RDT_EV_POLL_CQ_WC:
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
	e = find(m, &k, false);
	if (!e || !e->n)
		return 0;
	*post_ts = e->q[e->head].ts;
	{
		uint64_t flow = e->q[e->head].flow;

		e->head = (e->head + 1) % e->cap;
		e->n--;
		return flow;
	}
}
