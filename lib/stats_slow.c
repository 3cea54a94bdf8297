// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * --stats, slow not stuck: the collectives marked begin/end (the ring's
 * and USDT's RDT_EV_COLL_MARK) grouped across ranks by (op, seq, nranks),
 * and for the slowest of them what was going on inside: the WR that took
 * longest from post to completion, and its QP; the rxe retries of the
 * group's QPs; the port counters sampled inside; and the rank that began
 * last (a collective waits for its slowest arrival: the usual answer to
 * "why was this one slow" is "rank 3 was late", not the network).
 *
 * A group is open from its first begin until every rank that began it
 * has ended it (and, when the trace holds every rank, all nranks have);
 * its duration is first begin to last end.  Work requests, retries and
 * counter samples go to the group their process is in at the time.  The
 * open groups are bounded (the oldest is closed as it is), the durations
 * kept for the percentiles too, and only the SLOW_KEEP slowest groups
 * keep their details.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SLOW_KEEP	16		/* groups with details, the slowest */
#define SLOW_OPEN_MAX	4096		/* open groups */
#define SLOW_DUR_MAX	(1u << 21)	/* durations kept for percentiles */
#define SLOW_CTRS	8		/* counters a group keeps */
#define SLOW_PROCS_MAX	65536		/* processes seen with a mark */

struct slow_ctr {
	char dev[RDT_NAME_LEN + 1];
	char name[RDT_CTR_NAME_LEN + 1];
	uint32_t port, host;
	int64_t delta;
};

struct slow_group {
	char name[RDT_NP_STR];		/* "allreduce", NCCL's "AllReduce" */
	uint64_t comm;			/* NCCL's commHash; 0: a mark */
	uint64_t seq, bytes;
	int32_t nranks;
	uint64_t first_begin, last_begin, last_end;
	int32_t first_rank, last_rank;
	uint32_t last_host;
	uint32_t begun, ended;
	uint32_t inside;		/* processes whose ->in is this group */
	/* the slowest WR posted by one of its ranks while it was open */
	struct {
		uint64_t lat, wr_id, post_ts;
		uint32_t host, pid, dev, qpn;
	} wr;
	uint64_t retries, rnr;
	struct slow_ctr ctr[SLOW_CTRS];
	uint32_t nctr;
	bool ctr_more;			/* counters past SLOW_CTRS */
	bool cut;			/* closed early: SLOW_OPEN_MAX */
};

/* A process that marks collectives, and the group it is in now. */
struct slow_proc {
	uint64_t key;			/* host << 32 | pid; 0: free */
	struct slow_group *in;
};

/* A kind of collective: its name and size (a 512 KiB AllReduce is slow
 * only against others of 512 KiB). */
struct slow_op {
	char name[RDT_NP_STR];
	uint64_t size;			/* bytes (marks), elements (NCCL) */
	bool elements;
	uint64_t *dur;
	size_t n, cap;
	uint64_t not_kept;		/* past SLOW_DUR_MAX */
};

struct rdt_slow {
	struct slow_group **open;
	size_t nopen, capopen;
	struct slow_proc *procs;	/* open addressing, power of two */
	size_t nprocs, capprocs;
	struct slow_op *ops;
	size_t nops;
	struct slow_group keep[SLOW_KEEP];
	size_t nkeep;
	uint64_t groups, cut, procs_dropped;
};

struct rdt_slow *rdt_slow_new(void)
{
	return calloc(1, sizeof(struct rdt_slow));
}

void rdt_slow_free(struct rdt_slow *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nopen; i++)
		free(s->open[i]);
	free(s->open);
	free(s->procs);
	for (size_t i = 0; i < s->nops; i++)
		free(s->ops[i].dur);
	free(s->ops);
	free(s);
}

static uint64_t proc_key(uint32_t host, uint32_t pid)
{
	return (uint64_t)host << 32 | pid | 1ull << 63;	/* never 0 */
}

static struct slow_proc *proc_get(struct rdt_slow *s, uint32_t host,
				  uint32_t pid, bool make)
{
	uint64_t key = proc_key(host, pid);
	size_t i, mask;

	if (make && 2 * (s->nprocs + 1) > s->capprocs) {
		size_t cap = s->capprocs ? 2 * s->capprocs : 64;
		struct slow_proc *n;

		if (s->nprocs >= SLOW_PROCS_MAX ||
		    !(n = calloc(cap, sizeof(*n)))) {
			s->procs_dropped++;
			return NULL;
		}
		for (size_t j = 0; j < s->capprocs; j++) {
			if (!s->procs[j].key)
				continue;
			for (i = s->procs[j].key * 0x9e3779b97f4a7c15ull >> 20 & (cap - 1);
			     n[i].key; i = (i + 1) & (cap - 1))
				;
			n[i] = s->procs[j];
		}
		free(s->procs);
		s->procs = n;
		s->capprocs = cap;
	}
	if (!s->capprocs)
		return NULL;
	mask = s->capprocs - 1;
	for (i = key * 0x9e3779b97f4a7c15ull >> 20 & mask; s->procs[i].key;
	     i = (i + 1) & mask)
		if (s->procs[i].key == key)
			return &s->procs[i];
	if (!make)
		return NULL;
	s->procs[i].key = key;
	s->procs[i].in = NULL;
	s->nprocs++;
	return &s->procs[i];
}

static struct slow_op *op_get(struct rdt_slow *s, const char *name,
			      uint64_t size, bool elements)
{
	struct slow_op *v;

	for (size_t i = 0; i < s->nops; i++)
		if (s->ops[i].size == size && s->ops[i].elements == elements &&
		    !strncmp(s->ops[i].name, name, sizeof(v->name) - 1))
			return &s->ops[i];
	v = realloc(s->ops, (s->nops + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->ops = v;
	v = &s->ops[s->nops++];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%.*s", (int)sizeof(v->name) - 1,
		 name);
	v->size = size;
	v->elements = elements;
	return v;
}

static uint64_t group_dur(const struct slow_group *g)
{
	return g->last_end > g->first_begin ? g->last_end - g->first_begin : 0;
}

/* A group done (or cut, or at the end): its duration counted, its
 * details kept if it is among the slowest; then freed. */
static void group_close(struct rdt_slow *s, size_t idx)
{
	struct slow_group *g = s->open[idx];
	struct slow_op *o = op_get(s, g->name, g->bytes, g->comm != 0);
	uint64_t d = group_dur(g);

	s->open[idx] = s->open[--s->nopen];
	/* Its processes are in no group now: only those that began it and
	 * never ended it (closed early, or at the end) still point here. */
	for (size_t i = 0; g->inside && i < s->capprocs; i++)
		if (s->procs[i].key && s->procs[i].in == g) {
			s->procs[i].in = NULL;
			g->inside--;
		}
	if (g->ended) {
		s->groups++;
		if (o && o->n == o->cap && o->cap < SLOW_DUR_MAX) {
			size_t cap = o->cap ? 2 * o->cap : 256;
			uint64_t *v = realloc(o->dur, cap * sizeof(*v));

			if (v) {
				o->dur = v;
				o->cap = cap;
			}
		}
		if (o && o->n < o->cap)
			o->dur[o->n++] = d;
		else if (o)
			o->not_kept++;
		if (s->nkeep < SLOW_KEEP) {
			s->keep[s->nkeep++] = *g;
		} else {
			size_t m = 0;

			for (size_t i = 1; i < SLOW_KEEP; i++)
				if (group_dur(&s->keep[i]) < group_dur(&s->keep[m]))
					m = i;
			if (d > group_dur(&s->keep[m]))
				s->keep[m] = *g;
		}
	}
	free(g);
}

static struct slow_group *group_find(struct rdt_slow *s, const char *name,
				     uint64_t comm, uint64_t seq,
				     int32_t nranks)
{
	for (size_t i = s->nopen; i-- > 0;) {
		struct slow_group *g = s->open[i];

		if (g->seq == seq && g->comm == comm && g->nranks == nranks &&
		    !strncmp(g->name, name, sizeof(g->name) - 1))
			return g;
	}
	return NULL;
}

static const char *mark_name(uint32_t op)
{
	return op == 1 ? "allreduce" : "collective";
}

/* A rank's begin at @ts into its group (made on its first). */
static void group_begin(struct slow_group *g, const char *name, uint64_t comm,
			uint64_t seq, int32_t nranks, uint64_t bytes,
			int32_t rank, uint32_t host, uint64_t ts)
{
	if (!g->begun) {
		/* NCCL's names fill their 16 bytes: at most 15 read */
		snprintf(g->name, sizeof(g->name), "%.*s",
			 (int)sizeof(g->name) - 1, name);
		g->comm = comm;
		g->seq = seq;
		g->nranks = nranks;
		g->bytes = bytes;
		g->first_begin = ts;
		g->first_rank = rank;
	}
	if (!g->begun || ts >= g->last_begin) {
		g->last_begin = ts;
		g->last_rank = rank;
		g->last_host = host;
	}
	if (ts < g->first_begin) {
		g->first_begin = ts;
		g->first_rank = rank;
	}
	g->begun++;
}

/* A rank's end: the group closes once every rank that began it ended it
 * (and all nranks, where known, began). */
static void group_end(struct rdt_slow *s, struct slow_group *g, uint64_t ts)
{
	g->ended++;
	if (ts > g->last_end)
		g->last_end = ts;
	if (g->ended < g->begun ||
	    (g->nranks > 0 && g->ended < (uint32_t)g->nranks))
		return;
	for (size_t i = 0; i < s->nopen; i++)
		if (s->open[i] == g) {
			group_close(s, i);
			return;
		}
}

static struct slow_group *group_new(struct rdt_slow *s)
{
	struct slow_group *g;

	if (s->nopen == SLOW_OPEN_MAX) {
		size_t old = 0;

		for (size_t i = 1; i < s->nopen; i++)
			if (s->open[i]->first_begin < s->open[old]->first_begin)
				old = i;
		s->open[old]->cut = true;
		s->cut++;
		group_close(s, old);
	}
	if (s->nopen == s->capopen) {
		size_t cap = s->capopen ? 2 * s->capopen : 16;
		struct slow_group **v = realloc(s->open, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->open = v;
		s->capopen = cap;
	}
	g = calloc(1, sizeof(*g));
	if (g)
		s->open[s->nopen++] = g;
	return g;
}

void rdt_slow_mark(struct rdt_slow *s, const struct rdt_event *ev)
{
	const struct rdt_ev_coll_mark *m = &ev->rec.coll_mark;
	struct slow_proc *p = proc_get(s, ev->host, m->hdr.pid, true);
	const char *name = mark_name(m->op);
	struct slow_group *g = group_find(s, name, 0, m->seq, m->nranks);

	if (!m->phase) {		/* begin */
		if (!g && !(g = group_new(s)))
			return;
		group_begin(g, name, 0, m->seq, m->nranks, m->bytes, m->rank,
			    ev->host, ev->ts);
		if (p && p->in != g) {
			if (p->in)
				p->in->inside--;
			p->in = g;
			g->inside++;
		}
		return;
	}
	if (!g)				/* its begin was not seen */
		return;
	if (p && p->in == g) {
		p->in = NULL;
		g->inside--;
	}
	group_end(s, g, ev->ts);
}

/* One rank's whole span of an NCCL collective (the profiler plugin's
 * GPU time, on the trace clock), with its slowest WR. */
void rdt_slow_span(struct rdt_slow *s, const struct rdt_slow_span *sp)
{
	struct slow_group *g = group_find(s, sp->name, sp->comm, sp->seq,
					  sp->nranks);

	if (!g && !(g = group_new(s)))
		return;
	group_begin(g, sp->name, sp->comm, sp->seq, sp->nranks, sp->count,
		    sp->rank, sp->host, sp->begin);
	if (sp->wr_lat > g->wr.lat) {
		g->wr.lat = sp->wr_lat;
		g->wr.wr_id = sp->wr_id;
		g->wr.post_ts = sp->wr_post;
		g->wr.host = sp->host;
		g->wr.pid = sp->pid;
		g->wr.dev = sp->wr_dev;
		g->wr.qpn = sp->wr_qpn;
	}
	group_end(s, g, sp->end);
}

static struct slow_group *proc_group(struct rdt_slow *s, uint32_t host,
				     uint32_t pid)
{
	struct slow_proc *p;

	if (!s->nprocs)
		return NULL;
	p = proc_get(s, host, pid, false);
	return p ? p->in : NULL;
}

void rdt_slow_wr(struct rdt_slow *s, uint32_t host, uint32_t pid,
		 uint32_t dev, uint32_t qpn, uint64_t wr_id, uint64_t post_ts,
		 uint64_t done_ts)
{
	struct slow_group *g = proc_group(s, host, pid);

	if (!g || done_ts < post_ts || post_ts < g->first_begin ||
	    done_ts - post_ts <= g->wr.lat)
		return;
	g->wr.lat = done_ts - post_ts;
	g->wr.wr_id = wr_id;
	g->wr.post_ts = post_ts;
	g->wr.host = host;
	g->wr.pid = pid;
	g->wr.dev = dev;
	g->wr.qpn = qpn;
}

void rdt_slow_retry(struct rdt_slow *s, uint32_t host, uint32_t pid, bool rnr)
{
	struct slow_group *g = proc_group(s, host, pid);

	if (!g)
		return;
	if (rnr)
		g->rnr++;
	else
		g->retries++;
}

/* A port counter sample: to every open group with a rank on its host. */
void rdt_slow_counter(struct rdt_slow *s, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *r = &ev->rec.port_counter;

	for (size_t i = 0; i < s->nopen; i++) {
		struct slow_group *g = s->open[i];
		struct slow_ctr *c = NULL;
		bool here = false;

		if (ev->ts < g->first_begin || !r->delta)
			continue;
		for (size_t j = 0; j < s->capprocs && !here; j++)
			here = s->procs[j].in == g &&
			       s->procs[j].key >> 32 == (proc_key(ev->host, 0) >> 32);
		if (!here)
			continue;
		for (uint32_t j = 0; j < g->nctr && !c; j++)
			if (g->ctr[j].host == ev->host && g->ctr[j].port == r->port &&
			    !strncmp(g->ctr[j].dev, r->devname, sizeof(r->devname)) &&
			    !strncmp(g->ctr[j].name, r->name, sizeof(r->name)))
				c = &g->ctr[j];
		if (!c) {
			if (g->nctr == SLOW_CTRS) {
				g->ctr_more = true;
				continue;
			}
			c = &g->ctr[g->nctr++];
			memcpy(c->dev, r->devname, sizeof(r->devname));
			c->dev[RDT_NAME_LEN] = 0;
			memcpy(c->name, r->name, sizeof(r->name));
			c->name[RDT_CTR_NAME_LEN] = 0;
			c->port = r->port;
			c->host = ev->host;
		}
		c->delta += r->delta;
	}
}

/* At the end: the groups still open whose ranks all ended count; the
 * others (a rank that never ended it: stuck, or the trace cut) do not. */
static void finish(struct rdt_slow *s)
{
	while (s->nopen)
		group_close(s, s->nopen - 1);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t quantile(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static int keep_cmp(const void *a, const void *b)
{
	uint64_t x = group_dur(a), y = group_dur(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

struct op_sum {
	uint64_t n, median, p99, max, over;
};

static bool op_sum(struct slow_op *o, struct op_sum *x)
{
	memset(x, 0, sizeof(*x));
	if (!o->n)
		return false;
	qsort(o->dur, o->n, sizeof(*o->dur), u64_cmp);
	x->n = o->n + o->not_kept;
	x->median = quantile(o->dur, o->n, 0.5);
	x->p99 = quantile(o->dur, o->n, 0.99);
	x->max = o->dur[o->n - 1];
	for (size_t i = o->n; i-- > 0 && o->dur[i] > 3 * x->median;)
		x->over++;
	return true;
}

/* Over 3x the median, or at the p99 (when that is above the median):
 * a tail that is slow but not 3x is still where a job loses its time. */
static bool slow_tail(const struct slow_group *g, const struct op_sum *x)
{
	return group_dur(g) >= x->p99 && group_dur(g) > x->median &&
	       group_dur(g) <= 3 * x->median;
}

static bool slow_one(const struct slow_group *g, const struct op_sum *x,
		     const struct slow_op *op)
{
	return !strncmp(g->name, op->name, sizeof(g->name)) &&
	       g->bytes == op->size && (g->comm != 0) == op->elements &&
	       x->median && (group_dur(g) > 3 * x->median || slow_tail(g, x));
}

void rdt_slow_print(struct rdt_slow *s, FILE *o)
{
	finish(s);
	if (!s->nops)
		return;
	qsort(s->keep, s->nkeep, sizeof(*s->keep), keep_cmp);
	fprintf(o, "\n== slow collectives (marked begin/end, or NCCL's GPU time through its profiler plugin; first begin to last end, across ranks) ==\n");
	for (size_t i = 0; i < s->nops; i++) {
		struct slow_op *op = &s->ops[i];
		struct op_sum x;
		size_t shown = 0;

		if (!op_sum(op, &x))
			continue;
		fprintf(o, "%s %" PRIu64 " %s: %" PRIu64 " collectives, median %.3f ms, p99 %.3f ms, max %.3f ms; over 3x the median: %" PRIu64 "%s\n",
			op->name, op->size, op->elements ? "elements" : "B",
			x.n, x.median / 1e6, x.p99 / 1e6,
			x.max / 1e6, x.over,
			op->not_kept ? " (of the durations kept)" : "");
		for (size_t k = 0; k < s->nkeep; k++) {
			const struct slow_group *g = &s->keep[k];

			if (!slow_one(g, &x, op))
				continue;
			shown++;
			fprintf(o, "  seq=%" PRIu64 " dur=%.3f ms (%.1fx median%s) ranks=%u/%d"
				" last_rank=%d (began %.3f ms after rank %d, host %u)",
				g->seq, group_dur(g) / 1e6,
				(double)group_dur(g) / (double)x.median,
				slow_tail(g, &x) ? ", at the p99" : "", g->begun,
				g->nranks, g->last_rank,
				(g->last_begin - g->first_begin) / 1e6,
				g->first_rank, g->last_host);
			if (g->comm)
				fprintf(o, " nccl_comm=0x%" PRIx64, g->comm);
			if (g->ended < g->begun)
				fprintf(o, " ended=%u", g->ended);
			fputc('\n', o);
			if (g->wr.lat)
				fprintf(o, "    slowest_wr: host=%u pid=%u dev=%u qpn=0x%x wr_id=%" PRIu64
					" %.3f ms post->completion\n", g->wr.host,
					g->wr.pid, g->wr.dev, g->wr.qpn,
					g->wr.wr_id, g->wr.lat / 1e6);
			else
				fprintf(o, "    slowest_wr: none traced\n");
			fprintf(o, "    retries=%" PRIu64 " rnr=%" PRIu64, g->retries, g->rnr);
			for (uint32_t c = 0; c < g->nctr; c++)
				fprintf(o, " %s/%u/%s%+" PRId64, g->ctr[c].dev,
					g->ctr[c].port, g->ctr[c].name, g->ctr[c].delta);
			if (g->ctr_more)
				fprintf(o, " (more counters moved)");
			fputc('\n', o);
		}
		if (x.over > shown)
			fprintf(o, "  (%" PRIu64 " more over 3x the median: details are kept for the %d slowest)\n",
				x.over - shown, SLOW_KEEP);
	}
	if (s->cut || s->procs_dropped)
		fprintf(o, "  (groups closed early, over %d open: %" PRIu64 "; processes not tracked: %" PRIu64 ")\n",
			SLOW_OPEN_MAX, s->cut, s->procs_dropped);
}

void rdt_slow_print_json(struct rdt_slow *s, FILE *o)
{
	const char *sep = "";

	finish(s);
	if (!s->nops)
		return;
	qsort(s->keep, s->nkeep, sizeof(*s->keep), keep_cmp);
	fprintf(o, ",\"slow_collectives\":[");
	for (size_t i = 0; i < s->nops; i++) {
		struct slow_op *op = &s->ops[i];
		const char *sep2 = "";
		struct op_sum x;

		if (!op_sum(op, &x))
			continue;
		fprintf(o, "%s{\"op\":\"%s\",\"%s\":%" PRIu64 ",\"count\":%" PRIu64 ",\"median_ns\":%" PRIu64
			",\"p99_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
			",\"over_3x_median\":%" PRIu64 ",\"slowest\":[", sep,
			op->name, op->elements ? "elements" : "bytes", op->size,
			x.n, x.median, x.p99, x.max, x.over);
		sep = ",";
		for (size_t k = 0; k < s->nkeep; k++) {
			const struct slow_group *g = &s->keep[k];

			if (!slow_one(g, &x, op))
				continue;
			fprintf(o, "%s{\"seq\":%" PRIu64 ",\"dur_ns\":%" PRIu64
				",\"why\":\"%s\""
				",\"ranks_begun\":%u,\"ranks_ended\":%u,\"nranks\":%d"
				",\"first_rank\":%d,\"last_rank\":%d,\"last_host\":%u,\"last_lag_ns\":%" PRIu64
				",\"nccl_comm\":%" PRIu64
				",\"retries\":%" PRIu64 ",\"rnr\":%" PRIu64, sep2, g->seq,
				group_dur(g), slow_tail(g, &x) ? "p99" : "over_3x_median",
				g->begun, g->ended, g->nranks,
				g->first_rank, g->last_rank, g->last_host,
				g->last_begin - g->first_begin, g->comm, g->retries, g->rnr);
			if (g->wr.lat)
				fprintf(o, ",\"slowest_wr\":{\"host\":%u,\"pid\":%u,\"dev\":%u,\"qpn\":%u,\"wr_id\":%" PRIu64
					",\"post_ts_ns\":%" PRIu64 ",\"latency_ns\":%" PRIu64 "}",
					g->wr.host, g->wr.pid, g->wr.dev, g->wr.qpn,
					g->wr.wr_id, g->wr.post_ts, g->wr.lat);
			fprintf(o, ",\"counters\":[");
			for (uint32_t c = 0; c < g->nctr; c++) {
				fprintf(o, "%s{\"host\":%u,\"dev\":", c ? "," : "", g->ctr[c].host);
				rdt_json_str(o, g->ctr[c].dev, sizeof(g->ctr[c].dev));
				fprintf(o, ",\"port\":%u,\"name\":", g->ctr[c].port);
				rdt_json_str(o, g->ctr[c].name, sizeof(g->ctr[c].name));
				fprintf(o, ",\"delta\":%" PRId64 "}", g->ctr[c].delta);
			}
			fprintf(o, "]}");
			sep2 = ",";
		}
		fprintf(o, "]}");
	}
	fprintf(o, "]");
}
