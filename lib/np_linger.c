// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Stopped NCCL collectives kept for their children.  NCCL 2.27 and 2.28
 * stop a Coll (and a P2p) event when the call is enqueued; its ProxyOps,
 * steps, work requests and kernel channels start afterwards, on the proxy
 * thread, with the stopped event as parent (seen with NCCL 2.28.3 on an
 * H100: the kernel channel of a 4 KiB AllReduce starts 100 us after its
 * Coll stopped and ends 4.5 ms later).  A reader that forgot a Coll at
 * its stop would lose everything the collective did.
 *
 * So a reader keeps the stopped Coll and queues its id here; a queued id
 * comes back once the trace clock passes its due time, and the reader
 * then retires the Coll, or queues it again while children are open or
 * were seen recently.  Memory follows the collectives of the last
 * RDT_NP_LINGER_NS of trace, at most RDT_NP_LINGER_MAX of them (past that
 * the oldest is given back at once), not the length of the trace.
 */
#include <stdlib.h>

#include "internal.h"

int rdt_np_linger_push(struct rdt_np_linger *l, uint32_t host, uint32_t pid,
		       uint64_t id, uint64_t due)
{
	struct rdt_np_linger_ent *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct rdt_np_linger_ent *v = malloc(cap * sizeof(*v));

		if (!v)
			return -1;
		for (size_t i = 0; i < l->n; i++)
			v[i] = l->v[(l->head + i) % l->cap];
		free(l->v);
		l->v = v;
		l->cap = cap;
		l->head = 0;
	}
	e = &l->v[(l->head + l->n++) % l->cap];
	e->host = host;
	e->pid = pid;
	e->id = id;
	e->due = due;
	return 0;
}

bool rdt_np_linger_pop(struct rdt_np_linger *l, uint64_t now,
		       struct rdt_np_linger_ent *out, bool *forced)
{
	if (!l->n)
		return false;
	*forced = now == UINT64_MAX || l->n > RDT_NP_LINGER_MAX;
	if (!*forced && l->v[l->head].due > now)
		return false;
	*out = l->v[l->head];
	l->head = (l->head + 1) % l->cap;
	l->n--;
	return true;
}

void rdt_np_linger_run(struct rdt_np_linger *l, uint64_t now, void *ctx,
		       uint64_t (*check)(void *ctx,
					 const struct rdt_np_linger_ent *e,
					 bool forced, uint64_t now))
{
	struct rdt_np_linger_ent e;
	uint64_t due;
	bool forced;

	while (rdt_np_linger_pop(l, now, &e, &forced)) {
		due = check(ctx, &e, forced, now);
		/* Requeued only to a later time: this loop ends. */
		if (due > now && rdt_np_linger_push(l, e.host, e.pid, e.id, due))
			check(ctx, &e, true, now);
	}
}

/* When a kept collective may go: @open children, the last seen at @last. */
uint64_t rdt_np_linger_due(uint32_t open, uint64_t last, uint64_t now)
{
	uint64_t due = (open ? now : last) + RDT_NP_LINGER_NS;

	return due > now ? due : 0;
}

void rdt_np_linger_free(struct rdt_np_linger *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = l->head = 0;
}
