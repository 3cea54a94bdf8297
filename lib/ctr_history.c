// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Port counters' recent history, for "what moved since T": --stuck asks,
 * for a QP that has waited since T, which of its device's error counters
 * moved in that time (retries and timeouts, sequence errors, NAKs, CNPs),
 * so a report can say whether the port saw the trouble too.
 *
 * The counters source emits a record only when a counter changed, with
 * the value and the delta since the previous sample.  Each counter keeps
 * its last RDT_CTR_HIST changes (time, value before); the value at T is
 * the value before the oldest change after T.  When older changes fell
 * out of the ring, the sum since T is at least that, and is said so.
 * Counters are kept per (host, device name, port, name), at most
 * RDT_CTR_MAX of them; one beyond is counted, not kept.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RDT_CTR_HIST	64
#define RDT_CTR_MAX	1024

struct ctr {
	uint32_t host, port;
	char dev[RDT_NAME_LEN], name[RDT_CTR_NAME_LEN];
	bool traffic;
	uint64_t value;
	struct { uint64_t ts, before; } h[RDT_CTR_HIST];
	uint32_t head, n;	/* ring: oldest at head */
	bool lost;		/* changes fell out of the ring */
};

struct rdt_ctr_history {
	struct ctr *v;
	size_t n, cap;
	uint64_t dropped;
};

struct rdt_ctr_history *rdt_ctr_history_new(void)
{
	return calloc(1, sizeof(struct rdt_ctr_history));
}

void rdt_ctr_history_free(struct rdt_ctr_history *h)
{
	if (h)
		free(h->v);
	free(h);
}

uint64_t rdt_ctr_history_dropped(const struct rdt_ctr_history *h)
{
	return h ? h->dropped : 0;
}

/*
 * Counters of traffic, not of trouble: they move on every healthy packet
 * (rxe's sent_pkts, mlx5's port_rcv_data, rdma_sends, ...), so their
 * moving says nothing about a stall.
 */
static bool is_traffic(const char *name)
{
	static const char *const words[] = { "pkts", "packets", "data",
		"bytes", "rdma_sends", "rdma_recvs", "ack_deferred",
		"unicast", "multicast" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(name, words[i]))
			return true;
	return false;
}

static bool same(const char *a, const char *b, size_t len)
{
	return !strncmp(a, b, len);
}

void rdt_ctr_history_add(struct rdt_ctr_history *h, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *r = &ev->rec.port_counter;
	struct ctr *c = NULL;

	for (size_t i = 0; i < h->n && !c; i++)
		if (h->v[i].host == ev->host && h->v[i].port == r->port &&
		    same(h->v[i].dev, r->devname, sizeof(r->devname)) &&
		    same(h->v[i].name, r->name, sizeof(r->name)))
			c = &h->v[i];
	if (!c) {
		if (h->n == h->cap) {
			size_t cap = h->cap ? 2 * h->cap : 16;
			struct ctr *v;

			if (h->cap >= RDT_CTR_MAX ||
			    !(v = realloc(h->v, cap * sizeof(*v)))) {
				h->dropped++;
				return;
			}
			h->v = v;
			h->cap = cap;
		}
		c = &h->v[h->n++];
		memset(c, 0, sizeof(*c));
		c->host = ev->host;
		c->port = r->port;
		memcpy(c->dev, r->devname, sizeof(c->dev));
		c->dev[sizeof(c->dev) - 1] = 0;
		memcpy(c->name, r->name, sizeof(c->name));
		c->name[sizeof(c->name) - 1] = 0;
		c->traffic = is_traffic(c->name);
		/* The first sample of a counter is its baseline, not a move
		 * (its delta counts from the source's first read). */
		c->value = r->value;
		if (!r->delta)
			return;
	}
	if (r->value == c->value && c->n)
		return;
	if (c->n == RDT_CTR_HIST) {
		c->head = (c->head + 1) % RDT_CTR_HIST;
		c->n--;
		c->lost = true;
	}
	c->h[(c->head + c->n) % RDT_CTR_HIST].ts = ev->ts;
	c->h[(c->head + c->n) % RDT_CTR_HIST].before =
		r->delta > 0 && (uint64_t)r->delta <= r->value ?
		r->value - (uint64_t)r->delta : c->value;
	c->n++;
	c->value = r->value;
}

bool rdt_ctr_history_seen(const struct rdt_ctr_history *h, uint32_t host,
			  const char *dev)
{
	for (size_t i = 0; h && i < h->n; i++)
		if (h->v[i].host == host && same(h->v[i].dev, dev, RDT_NAME_LEN))
			return true;
	return false;
}

size_t rdt_ctr_history_moved(const struct rdt_ctr_history *h, uint32_t host,
			     const char *dev, uint64_t since,
			     struct rdt_ctr_move *out, size_t max, size_t *more)
{
	size_t n = 0;

	*more = 0;
	for (size_t i = 0; h && i < h->n; i++) {
		const struct ctr *c = &h->v[i];
		uint32_t k;

		if (c->host != host || c->traffic || !c->n ||
		    !same(c->dev, dev, RDT_NAME_LEN))
			continue;
		/* The oldest change after @since. */
		for (k = 0; k < c->n; k++)
			if (c->h[(c->head + k) % RDT_CTR_HIST].ts > since)
				break;
		if (k == c->n)
			continue;
		if (n == max) {
			(*more)++;
			continue;
		}
		out[n].port = c->port;
		out[n].name = c->name;
		out[n].delta = (int64_t)(c->value -
					 c->h[(c->head + k) % RDT_CTR_HIST].before);
		out[n].at_least = k == 0 && c->lost;
		n++;
	}
	return n;
}
