// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * NCCL profiler plugin events between their start and stop, found by
 * (host, pid, id), for the readers that follow them (--stats, Perfetto).
 *
 * A stopped collective is kept for its children.  NCCL 2.27 and 2.28 stop
 * a Coll (and a P2p) event when the call is enqueued; its ProxyOps, steps,
 * work requests and kernel channels start afterwards, on the proxy thread,
 * with the stopped event as parent (seen with NCCL 2.28.3 on an H100: the
 * kernel channel of a 4 KiB AllReduce starts 100 us after its Coll stopped
 * and ends 4.5 ms later).  A reader that forgot a Coll at its stop would
 * lose everything the collective did.
 *
 * So its id is queued in a FIFO; a queued id comes back once the trace
 * clock passes its due time, and the collective is then retired, or
 * queued again while children are open or were seen recently.  Memory
 * follows the collectives of the last RDT_NP_LINGER_NS of trace, at most
 * RDT_NP_LINGER_MAX of them (past that the oldest is retired at once),
 * not the length of the trace.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct np_linger_ent {
	uint32_t	host, pid;
	uint64_t	id, due;
};

void rdt_np_open_init(struct rdt_np_open *t, size_t esz,
		      void (*retire)(void *ctx, struct rdt_np_open_ent *e),
		      void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->esz = esz;
	t->retire = retire;
	t->ctx = ctx;
}

void rdt_np_open_free(struct rdt_np_open *t)
{
	free(t->v);
	free(t->q);
	memset(t, 0, sizeof(*t));
}

static struct rdt_np_open_ent *at(const struct rdt_np_open *t, size_t i)
{
	return (struct rdt_np_open_ent *)(t->v + i * t->esz);
}

static uint64_t key(uint32_t host, uint32_t pid, uint64_t id)
{
	uint64_t k = (id ^ ((uint64_t)pid << 32 | host)) * 0x9e3779b97f4a7c15ull;

	return k ? k : 1;
}

struct rdt_np_open_ent *rdt_np_open_find(const struct rdt_np_open *t,
					 uint32_t host, uint32_t pid,
					 uint64_t id)
{
	uint64_t k = key(host, pid, id);

	if (!t->cap)
		return NULL;
	for (size_t i = k & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct rdt_np_open_ent *e = at(t, i);

		if (!e->key)
			return NULL;
		if (e->key == k && e->id == id && e->pid == pid && e->host == host)
			return e;
	}
}

/* The free slot where key @k goes (the table is at most half full). */
static struct rdt_np_open_ent *free_slot(const struct rdt_np_open *t,
					 uint64_t k)
{
	size_t i;

	for (i = k & (t->cap - 1); at(t, i)->key; i = (i + 1) & (t->cap - 1))
		;
	return at(t, i);
}

/* Open addressing, at most half full, power-of-two size. */
static int grow(struct rdt_np_open *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024;
	struct rdt_np_open old = *t;

	t->v = calloc(cap, t->esz);
	if (!t->v) {
		t->v = old.v;
		return -1;
	}
	t->cap = cap;
	for (size_t j = 0; j < old.cap; j++) {
		const struct rdt_np_open_ent *e = at(&old, j);

		if (e->key)
			memcpy(free_slot(t, e->key), e, t->esz);
	}
	free(old.v);
	return 0;
}

/* Backward-shift deletion keeps every probe chain whole. */
static void del(struct rdt_np_open *t, struct rdt_np_open_ent *e)
{
	size_t i = (size_t)((unsigned char *)e - t->v) / t->esz, j = i;
	size_t mask = t->cap - 1;

	for (;;) {
		j = (j + 1) & mask;
		if (!at(t, j)->key)
			break;
		size_t h = at(t, j)->key & mask;

		if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
			memcpy(at(t, i), at(t, j), t->esz);
			i = j;
		}
	}
	at(t, i)->key = 0;
	t->n--;
}

struct rdt_np_open_ent *rdt_np_open_start(struct rdt_np_open *t,
					  const struct rdt_event *ev,
					  bool root,
					  struct rdt_np_open_ent **parent)
{
	const struct rdt_np_ids *ids = &ev->rec.np_stop.ids;
	uint32_t host = ev->host, pid = ev->rec.hdr.pid;
	struct rdt_np_open_ent *e = rdt_np_open_find(t, host, pid, ids->id);
	struct rdt_np_open_ent *par, *c;

	if (!e) {
		if (2 * (t->n + 1) > t->cap && grow(t))
			return NULL;
		e = free_slot(t, key(host, pid, ids->id));
		t->n++;
	}
	memset(e, 0, t->esz);
	e->key = key(host, pid, ids->id);
	e->id = ids->id;
	e->host = host;
	e->pid = pid;
	par = ids->parent ? rdt_np_open_find(t, host, pid, ids->parent) : NULL;
	e->coll = root ? ids->id : par ? par->coll : 0;
	c = rdt_np_open_coll(t, e);
	if (c) {
		c->open_kids++;
		c->last = ev->ts;
	}
	if (parent)
		*parent = par;
	return e;
}

struct rdt_np_open_ent *rdt_np_open_coll(const struct rdt_np_open *t,
					 const struct rdt_np_open_ent *e)
{
	if (!e->coll || e->coll == e->id)
		return NULL;
	return rdt_np_open_find(t, e->host, e->pid, e->coll);
}

static int push(struct rdt_np_open *t, uint32_t host, uint32_t pid,
		uint64_t id, uint64_t due)
{
	struct np_linger_ent *q;

	if (t->nq == t->capq) {
		size_t cap = t->capq ? 2 * t->capq : 256;
		struct np_linger_ent *v = malloc(cap * sizeof(*v));

		if (!v)
			return -1;
		for (size_t i = 0; i < t->nq; i++)
			v[i] = t->q[(t->headq + i) % t->capq];
		free(t->q);
		t->q = v;
		t->capq = cap;
		t->headq = 0;
	}
	q = &t->q[(t->headq + t->nq++) % t->capq];
	q->host = host;
	q->pid = pid;
	q->id = id;
	q->due = due;
	return 0;
}

static void retire(struct rdt_np_open *t, struct rdt_np_open_ent *e)
{
	if (t->retire)
		t->retire(t->ctx, e);
	del(t, e);
}

void rdt_np_open_stop(struct rdt_np_open *t, struct rdt_np_open_ent *e,
		      uint64_t ts)
{
	struct rdt_np_open_ent *c;

	if (e->coll && e->coll == e->id) {
		e->stopped = true;
		e->last = ts;
		if (push(t, e->host, e->pid, e->id, ts + RDT_NP_LINGER_NS))
			retire(t, e);	/* no memory: now */
		return;
	}
	c = rdt_np_open_coll(t, e);
	if (c) {
		if (c->open_kids)
			c->open_kids--;
		c->last = ts;
	}
	del(t, e);
}

/* A kept collective due at @now: retired if its children are done (or
 * @forced), else the trace time it is due again. */
static uint64_t check(struct rdt_np_open *t, const struct np_linger_ent *q,
		      bool forced, uint64_t now)
{
	struct rdt_np_open_ent *e = rdt_np_open_find(t, q->host, q->pid, q->id);
	uint64_t due;

	/* Gone, or started again under the same id: not this one. */
	if (!e || !e->stopped)
		return 0;
	due = (e->open_kids ? now : e->last) + RDT_NP_LINGER_NS;
	if (forced || due <= now) {
		retire(t, e);
		return 0;
	}
	return due;
}

void rdt_np_open_linger(struct rdt_np_open *t, uint64_t now)
{
	struct np_linger_ent q;
	uint64_t due;
	bool forced;

	while (t->nq) {
		forced = now == UINT64_MAX || t->nq > RDT_NP_LINGER_MAX;
		if (!forced && t->q[t->headq].due > now)
			return;
		q = t->q[t->headq];
		t->headq = (t->headq + 1) % t->capq;
		t->nq--;
		due = check(t, &q, forced, now);
		/* Requeued only to a later time: this loop ends. */
		if (due && push(t, q.host, q.pid, q.id, due))
			check(t, &q, true, now);
	}
}
