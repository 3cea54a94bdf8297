// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* A pollable record producer behind struct rdt_source_ops (BPF ring buffer,
 * or an application's own). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct custom_priv {
	struct rdt_source_ops ops;
	void *ctx;
	uint64_t dropped;
	uint64_t dropped_at;	/* CLOCK_MONOTONIC of the last ->dropped() */
	struct rdt_src *s;
	int err;
	/* pid << 32 | tid already announced with an RDT_EV_COMM record;
	 * open addressing, 0 = free slot. */
	uint64_t *tids;
	size_t ntids, cap;
	/* BPF: the earliest stamp of records still being written (NCCL
	 * calls in flight), UINT64_MAX: none; NULL: not known */
	uint64_t (*inflight)(void *ctx);
};

static bool tid_seen(struct custom_priv *p, uint64_t key)
{
	size_t i;

	if (2 * (p->ntids + 1) > p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 256;
		uint64_t *n = calloc(ncap, sizeof(*n));

		if (!n)
			return true;	/* no memory: no comm, events still flow */
		for (size_t j = 0; j < p->cap; j++) {
			if (!p->tids[j])
				continue;
			for (i = p->tids[j] % ncap; n[i]; i = (i + 1) % ncap)
				;
			n[i] = p->tids[j];
		}
		free(p->tids);
		p->tids = n;
		p->cap = ncap;
	}
	for (i = key % p->cap; p->tids[i]; i = (i + 1) % p->cap)
		if (p->tids[i] == key)
			return true;
	p->tids[i] = key;
	p->ntids++;
	return false;
}

/*
 * BPF programs record pid and tid but no task name, and a process that
 * never enters a wrapped verb (an NCCL job on another transport) gets no
 * COMM record from the module: announce each new live task once from
 * /proc, as the module does, so every sink can name it.  Tasks gone
 * before their first record is read stay unnamed.
 */
static int announce_comm(struct custom_priv *p, const struct rdt_hdr *h)
{
	struct rdt_ev_comm c;
	char path[64];
	FILE *f;
	size_t n;

	/* A malformed record is left to rdt_src_push() to report. */
	if (h->magic != RDT_REC_MAGIC || !h->pid ||
	    tid_seen(p, (uint64_t)h->pid << 32 | h->tid))
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", h->pid, h->tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	memset(&c, 0, sizeof(c));
	n = fread(c.comm, 1, sizeof(c.comm), f);
	fclose(f);
	if (n && c.comm[n - 1] == '\n')
		c.comm[n - 1] = 0;
	if (!n || !c.comm[0])
		return 0;
	c.hdr = *h;
	c.hdr.type = RDT_EV_COMM;
	c.hdr.size = sizeof(c);
	c.hdr.dev = RDT_NO_DEV;
	return rdt_src_push(p->s, &c, sizeof(c), "ring buffer", RDT_NO_OFF);
}

static int push_cb(void *ctx, const void *rec, size_t len)
{
	struct custom_priv *p = ctx;

	if (p->err)
		return p->err;
	if (len >= sizeof(struct rdt_hdr))
		p->err = announce_comm(p, rec);
	if (!p->err)
		p->err = rdt_src_push(p->s, rec, len, "ring buffer",
				      RDT_NO_OFF);
	return p->err;
}

/*
 * ->dropped() may cost system calls (BPF: one map read per program set
 * and one per program's recursion count, 10-20 in all), and a live fill
 * pass can run for every few records: while live it is asked at most
 * every DROPPED_POLL_NS, which only delays when a loss is said; at the
 * end (finish, or a file-like source's one pass) it is asked at once, so
 * the count is exact.
 */
#define DROPPED_POLL_NS 100000000ull

static void check_dropped(struct rdt_src *s, struct custom_priv *p, bool now)
{
	uint64_t d, t;

	if (!p->ops.dropped)
		return;
	t = rdt_now_mono();
	if (!now && t - p->dropped_at < DROPPED_POLL_NS)
		return;
	p->dropped_at = t;
	d = p->ops.dropped(p->ctx);
	/* Not derivable from the records: written to trace files as is. */
	if (d > p->dropped)
		rdt_src_push_lost(s, RDT_SRC_BPF, UINT32_MAX, d - p->dropped,
				  t, false);
	p->dropped = d;
}

/*
 * A drained ring buffer's horizon: the reorder window (a program stamps a
 * record a few microseconds before it reserves and commits it), and, for
 * a source that knows them (->inflight), the records whose stamp was
 * taken long before they are written: BPF's NCCL calls, stamped at entry
 * and written at return (issue 38).  Such a call is waited for up to the
 * stall limit; one longer than that (a communicator's init) comes out
 * late, flagged.
 */
static uint64_t custom_horizon(const struct rdt_pass *pass, uint64_t infl)
{
	uint64_t h = rdt_pass_drained_horizon(pass, pass->now);

	if (infl < h && pass->now - infl <= pass->stall_ns)
		h = infl;
	return h;
}

static int custom_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct custom_priv *p = s->priv;
	/* before the consume: rdt_bpf_inflight_min() says why */
	uint64_t infl = p->inflight && s->live ? p->inflight(p->ctx) : UINT64_MAX;
	int ret = p->ops.consume(p->ctx, push_cb, p);

	if (p->err)
		return p->err;
	if (ret < 0)
		return ret;
	check_dropped(s, p, !s->live);
	if (!s->live)
		s->eof = true;
	else	/* consume() delivers every available record */
		s->horizon = custom_horizon(pass, infl);
	return 0;
}

static int custom_pollfds(struct rdt_src *s, struct pollfd *pfd, int max)
{
	struct custom_priv *p = s->priv;
	int fd = p->ops.fd ? p->ops.fd(p->ctx) : -1;

	if (fd < 0 || max < 1)
		return 0;
	pfd->fd = fd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

static void custom_finish(struct rdt_src *s, const struct rdt_pass *pass)
{
	(void)pass;
	check_dropped(s, s->priv, true);
}

static void custom_close(struct rdt_src *s)
{
	struct custom_priv *p = s->priv;

	if (!p)
		return;
	if (p->ops.close)
		p->ops.close(p->ctx);
	free(p->tids);
	free(p);
	s->priv = NULL;
}

static const struct rdt_src_ops custom_ops = {
	.fill = custom_fill,
	.pollfds = custom_pollfds,
	.finish = custom_finish,
	.close = custom_close,
};

void rdt_src_custom_inflight(struct rdt_src *s, uint64_t (*fn)(void *ctx))
{
	struct custom_priv *p = s->priv;

	p->inflight = fn;
	s->holds = fn != NULL;
}

static int src_custom_open(struct rdt_src *s, const struct rdt_source_ops *ops,
			   void *ctx)
{
	struct custom_priv *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	if (!ops || !ops->consume) {
		free(p);
		rdt_src_set_error(s, "%s: source without a consume operation",
				  s->name);
		return -EINVAL;
	}
	p->ops = *ops;
	p->ctx = ctx;
	p->s = s;
	s->priv = p;
	s->ops = &custom_ops;
	/* custom_horizon() waits out the reorder window for a drained ring */
	s->exact = true;
	rdt_local_file_hdr(&s->fh, NULL);
	s->meta = rdt_local_meta();
	if (ops->dropped) {
		p->dropped = ops->dropped(ctx);
		p->dropped_at = rdt_now_mono();
	}
	return 0;
}

RDT_EXPORT int rdt_reader_add_source(struct rdt_reader *r, const char *name,
				     const struct rdt_source_ops *ops, void *ctx)
{
	struct rdt_src *s = rdt_reader_new_src(r, RDT_SOURCE_CUSTOM, name);

	if (!s)
		return -ENOMEM;
	return rdt_reader_finish_add(r, s, src_custom_open(s, ops, ctx));
}
