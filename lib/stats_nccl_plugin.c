// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * --stats for the NCCL profiler plugin's events: per collective function,
 * enqueue time next to GPU kernel time, work requests and the slowest
 * proxy step; per QP, the plugin's work requests with post -> completion
 * latency.  Events are followed from start to stop in one table of open
 * events; a collective collects what its kernel channels, steps and WRs
 * report as they stop; a Coll stops at enqueue, before its children start,
 * so it stays (np_open.c) until they are done.  Each process's GPU
 * globaltimer is mapped onto the trace clock by the smallest host - GPU
 * stamp difference seen (NCCL reports a stamp after the GPU wrote it), as
 * lib/SCHEMA.md says.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct np_ev {
	struct rdt_np_span sp;			/* np_span.c's fields */
	uint64_t	enq_ns;			/* a stopped Coll */
	uint64_t	wrs, wr_bytes, slowest_step;
	/* Coll: its slowest WR (NET_IB post -> stop) */
	uint64_t	wr_lat, wr_id, wr_post;
	uint32_t	wr_qpn;
	int32_t		wr_dev;
};

/* A communicator's size, from its COMM_INIT: a collective's ranks. */
struct np_comm {
	struct np_comm	*next;
	uint64_t	comm_id;
	int32_t		nranks;
};

struct np_func {
	struct np_func	*next;
	char		func[RDT_NP_STR];
	uint64_t	n, enqueue_ns, gpu_ns, gpu_n, gpu_max, wrs, wr_bytes,
			slowest_step;
};

struct np_qp {
	struct np_qp	*next;
	uint32_t	host, pid, qpn;
	int32_t		device;
	uint64_t	wrs, bytes, lat_sum, lat_max, open;
};

/* One NCCL process's GPU clock: (host time, GPU stamp) pairs. */
struct np_proc {
	struct np_proc	*next;
	uint32_t	host, pid;
	int64_t		min_diff;	/* host - GPU, smallest so far */
	uint64_t	pairs;
	/* enqueue -> first kernel channel's GPU start, in GPU - host
	 * differences relative to the first one (no overflow in the sum) */
	int64_t		launch_ref;
	double		launch_sum;
	uint64_t	launch_n;
};

struct rdt_np_stats {
	struct rdt_np_open open;	/* of struct np_ev */
	struct np_func	*funcs;
	struct np_qp	*qps;
	struct np_proc	*procs;
	struct np_comm	*comms;
	struct rdt_slow	*slow;		/* --stats' slow collectives */
	uint64_t	skipped;
};

static void retire(void *ctx, struct rdt_np_open_ent *o);

struct rdt_np_stats *rdt_np_stats_new(struct rdt_slow *slow)
{
	struct rdt_np_stats *s = calloc(1, sizeof(*s));

	if (s) {
		rdt_np_open_init(&s->open, sizeof(struct np_ev), retire, s);
		s->slow = slow;
	}
	return s;
}

void rdt_np_stats_free(struct rdt_np_stats *s)
{
	if (!s)
		return;
	while (s->funcs) {
		struct np_func *n = s->funcs->next;

		free(s->funcs);
		s->funcs = n;
	}
	while (s->qps) {
		struct np_qp *n = s->qps->next;

		free(s->qps);
		s->qps = n;
	}
	while (s->procs) {
		struct np_proc *n = s->procs->next;

		free(s->procs);
		s->procs = n;
	}
	while (s->comms) {
		struct np_comm *n = s->comms->next;

		free(s->comms);
		s->comms = n;
	}
	rdt_np_open_free(&s->open);
	free(s);
}

static struct np_ev *find(struct rdt_np_stats *s, uint32_t host, uint32_t pid,
			  uint64_t id)
{
	return (struct np_ev *)rdt_np_open_find(&s->open, host, pid, id);
}

static struct np_func *func_get(struct rdt_np_stats *s, const char *func)
{
	struct np_func *f;

	for (f = s->funcs; f; f = f->next)
		if (!strncmp(f->func, func, sizeof(f->func)))
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	memcpy(f->func, func, sizeof(f->func));
	f->func[sizeof(f->func) - 1] = 0;
	f->next = s->funcs;
	s->funcs = f;
	return f;
}

static struct np_qp *qp_get(struct rdt_np_stats *s, const struct np_ev *e)
{
	struct np_qp *q;

	for (q = s->qps; q; q = q->next)
		if (q->host == e->sp.o.host && q->pid == e->sp.o.pid &&
		    q->qpn == e->sp.qpn && q->device == e->sp.device)
			return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->host = e->sp.o.host;
	q->pid = e->sp.o.pid;
	q->qpn = e->sp.qpn;
	q->device = e->sp.device;
	q->next = s->qps;
	s->qps = q;
	return q;
}

static struct np_proc *proc_get(struct rdt_np_stats *s, uint32_t host,
				uint32_t pid)
{
	struct np_proc *p;

	for (p = s->procs; p; p = p->next)
		if (p->host == host && p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->host = host;
	p->pid = pid;
	p->next = s->procs;
	s->procs = p;
	return p;
}

/* The host learnt of GPU stamp @gpu at @ts. */
static void gpu_pair(struct rdt_np_stats *s, const struct rdt_event *ev,
		     uint64_t gpu)
{
	struct np_proc *p;
	int64_t d = (int64_t)(ev->ts - gpu);

	if (!gpu || !(p = proc_get(s, ev->host, ev->rec.hdr.pid)))
		return;
	if (!p->pairs || d < p->min_diff)
		p->min_diff = d;
	p->pairs++;
}

static void start(struct rdt_np_stats *s, const struct rdt_event *ev)
{
	struct rdt_np_span *e = rdt_np_span_start(&s->open, ev);

	if (e && e->type == RDT_EV_NP_KERNEL_CH)
		gpu_pair(s, ev, e->gpu_start);
}

/* A communicator's size, as its COMM_INIT said (several: the last). */
static void comm_size(struct rdt_np_stats *s, const struct rdt_ev_np_comm *c)
{
	struct np_comm *k;

	for (k = s->comms; k; k = k->next)
		if (k->comm_id == c->ids.comm_id)
			break;
	if (!k && (k = calloc(1, sizeof(*k)))) {
		k->comm_id = c->ids.comm_id;
		k->next = s->comms;
		s->comms = k;
	}
	if (k)
		k->nranks = c->nranks;
}

static int32_t comm_nranks(const struct rdt_np_stats *s, uint64_t comm_id)
{
	for (const struct np_comm *k = s->comms; k; k = k->next)
		if (k->comm_id == comm_id)
			return k->nranks;
	return 0;
}

/* Its GPU span, on the trace clock through the process's GPU clock
 * pairs, into the slow collectives (grouped across ranks). */
static void slow_span(struct rdt_np_stats *s, const struct np_ev *e,
		      const struct np_proc *p)
{
	struct rdt_slow_span sp = {
		.name = e->sp.func, .comm = e->sp.comm_id, .seq = e->sp.seq,
		.count = e->sp.count,
		.rank = e->sp.rank, .nranks = comm_nranks(s, e->sp.comm_id),
		.host = e->sp.o.host, .pid = e->sp.o.pid,
		.begin = (uint64_t)((int64_t)e->sp.gpu_start + p->min_diff),
		.end = (uint64_t)((int64_t)e->sp.gpu_stop + p->min_diff),
		.wr_lat = e->wr_lat, .wr_id = e->wr_id, .wr_post = e->wr_post,
		.wr_dev = (uint32_t)e->wr_dev, .wr_qpn = e->wr_qpn,
	};

	rdt_slow_span(s->slow, &sp);
}

/* A collective whose children are done: into its function's figures. */
static void retire(void *ctx, struct rdt_np_open_ent *o)
{
	struct rdt_np_stats *s = ctx;
	struct np_ev *e = (struct np_ev *)o;
	struct np_func *f = func_get(s, e->sp.func);

	if (f) {
		f->n++;
		f->enqueue_ns += e->enq_ns;
		if (e->sp.gpu_stop) {
			uint64_t g = e->sp.gpu_stop - e->sp.gpu_start;
			struct np_proc *p = proc_get(s, o->host, o->pid);

			if (p && p->pairs && s->slow)
				slow_span(s, e, p);

			f->gpu_ns += g;
			f->gpu_n++;
			if (g > f->gpu_max)
				f->gpu_max = g;
			if (p) {
				int64_t d = (int64_t)(e->sp.gpu_start - e->sp.ts);

				if (!p->launch_n)
					p->launch_ref = d;
				p->launch_sum += (double)(d - p->launch_ref);
				p->launch_n++;
			}
		}
		f->wrs += e->wrs;
		f->wr_bytes += e->wr_bytes;
		if (e->slowest_step > f->slowest_step)
			f->slowest_step = e->slowest_step;
	}
}

static void stop(struct rdt_np_stats *s, const struct rdt_event *ev)
{
	struct np_ev *e = find(s, ev->host, ev->rec.hdr.pid,
			       ev->rec.np_stop.ids.id);
	uint64_t dur;
	struct np_ev *c;
	struct np_qp *q;

	if (!e)
		return;
	dur = ev->ts > e->sp.ts ? ev->ts - e->sp.ts : 0;
	c = (struct np_ev *)rdt_np_open_coll(&s->open, &e->sp.o);
	switch (e->sp.type) {
	case RDT_EV_NP_KERNEL_CH:
		rdt_np_span_kernel_done(&s->open, &e->sp);
		break;
	case RDT_EV_NP_PROXY_STEP:
		if (c && dur > c->slowest_step)
			c->slowest_step = dur;
		break;
	case RDT_EV_NP_NET_IB:
		if (c) {
			c->wrs++;
			c->wr_bytes += e->sp.length;
			if (dur > c->wr_lat) {
				c->wr_lat = dur;
				c->wr_id = e->sp.wr_id;
				c->wr_post = e->sp.ts;
				c->wr_qpn = e->sp.qpn;
				c->wr_dev = e->sp.device;
			}
		}
		q = qp_get(s, e);
		if (q) {
			q->wrs++;
			q->bytes += e->sp.length;
			q->lat_sum += dur;
			if (dur > q->lat_max)
				q->lat_max = dur;
		}
		break;
	case RDT_EV_NP_COLL:
		/* Its children may not have started yet: np_open keeps it. */
		if (e->sp.o.stopped)
			return;		/* stopped twice: bad input */
		e->enq_ns = dur;
		break;
	}
	rdt_np_open_stop(&s->open, &e->sp.o, ev->ts);
}

void rdt_np_stats_add(struct rdt_np_stats *s, const struct rdt_event *ev)
{
	struct np_ev *e;

	rdt_np_open_linger(&s->open, ev->ts);
	switch (ev->rec.hdr.type) {
	case RDT_EV_NP_STOP:
		stop(s, ev);
		return;
	case RDT_EV_NP_STATE:
		e = (struct np_ev *)rdt_np_span_state(&s->open, ev);
		if (e)
			gpu_pair(s, ev, e->sp.gpu_stop);
		return;
	case RDT_EV_NP_SKIP:
		s->skipped++;
		return;
	case RDT_EV_NP_COMM_INIT:
		comm_size(s, &ev->rec.np_comm);
		return;
	case RDT_EV_NP_COMM_FINI:
	case RDT_EV_NP_COLL_OLD:	/* more fields of its Coll: no event */
		return;
	}
	start(s, ev);
}

static double avg(uint64_t sum, uint64_t n)
{
	return n ? (double)sum / (double)n : 0;
}

/* Mean enqueue -> GPU start on the trace clock, ns. */
static double launch_avg(const struct np_proc *p)
{
	if (!p->launch_n)
		return 0;
	return p->launch_sum / (double)p->launch_n +
	       (double)(p->launch_ref + p->min_diff);
}

void rdt_np_stats_print(struct rdt_np_stats *s, FILE *o)
{
	rdt_np_open_linger(&s->open, UINT64_MAX);
	if (!s->funcs && !s->qps && !s->skipped)
		return;
	fprintf(o, "\n== NCCL profiler plugin: collectives (enqueue = Coll "
		"event, GPU = its kernel channels' globaltimer span) ==\n"
		"%-16s %8s %14s %12s %12s %8s %14s %16s\n", "function", "count",
		"avg_enqueue_us", "avg_gpu_us", "max_gpu_us", "wrs", "wr_bytes",
		"slowest_step_us");
	for (const struct np_func *f = s->funcs; f; f = f->next)
		fprintf(o, "%-16.16s %8" PRIu64 " %14.3f %12.3f %12.3f %8" PRIu64
			" %14" PRIu64 " %16.3f\n", f->func, f->n,
			avg(f->enqueue_ns, f->n) / 1000, avg(f->gpu_ns, f->gpu_n) / 1000,
			(double)f->gpu_max / 1000, f->wrs, f->wr_bytes,
			(double)f->slowest_step / 1000);
	fprintf(o, "\n== NCCL profiler plugin: work requests per QP (post -> "
		"completion) ==\n%-4s %8s %6s %8s %8s %14s %12s %12s\n", "host",
		"pid", "ibdev", "qpn", "wrs", "bytes", "avg_ns", "max_ns");
	for (const struct np_qp *q = s->qps; q; q = q->next)
		fprintf(o, "%-4u %8u %6d %8u %8" PRIu64 " %14" PRIu64 " %12.1f %12"
			PRIu64 "\n", q->host, q->pid, q->device, q->qpn, q->wrs,
			q->bytes, avg(q->lat_sum, q->wrs), q->lat_max);
	if (s->procs)
		fprintf(o, "\n== NCCL profiler plugin: GPU clock per process "
			"(globaltimer + offset = trace clock; launch = enqueue "
			"-> first kernel channel's GPU start) ==\n"
			"%-4s %8s %8s %22s %10s %14s\n", "host", "pid", "pairs",
			"offset_ns", "launches", "avg_launch_us");
	for (const struct np_proc *p = s->procs; p; p = p->next)
		fprintf(o, "%-4u %8u %8" PRIu64 " %22" PRId64 " %10" PRIu64
			" %14.3f\n", p->host, p->pid, p->pairs, p->min_diff,
			p->launch_n, launch_avg(p) / 1000);
	if (s->skipped)
		fprintf(o, "descriptors the plugin skipped: %" PRIu64 "\n",
			s->skipped);
}

void rdt_np_stats_print_json(struct rdt_np_stats *s, FILE *o)
{
	const char *sep = "";

	rdt_np_open_linger(&s->open, UINT64_MAX);

	fprintf(o, ",\"nccl_plugin\":{\"skipped\":%" PRIu64 ",\"collectives\":[",
		s->skipped);
	for (const struct np_func *f = s->funcs; f; f = f->next) {
		fprintf(o, "%s{\"func\":", sep);
		rdt_json_str(o, f->func, sizeof(f->func));
		fprintf(o, ",\"count\":%" PRIu64 ",\"enqueue_ns\":%" PRIu64
			",\"gpu_ns\":%" PRIu64 ",\"gpu_count\":%" PRIu64
			",\"gpu_max_ns\":%" PRIu64 ",\"wrs\":%" PRIu64
			",\"wr_bytes\":%" PRIu64 ",\"slowest_step_ns\":%" PRIu64 "}",
			f->n, f->enqueue_ns, f->gpu_ns, f->gpu_n, f->gpu_max, f->wrs,
			f->wr_bytes, f->slowest_step);
		sep = ",";
	}
	fprintf(o, "],\"qps\":[");
	sep = "";
	for (const struct np_qp *q = s->qps; q; q = q->next) {
		fprintf(o, "%s{\"host\":%u,\"pid\":%u,\"device\":%d,\"qpn\":%u,"
			"\"wrs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"latency_sum_ns\":%"
			PRIu64 ",\"latency_max_ns\":%" PRIu64 "}", sep, q->host,
			q->pid, q->device, q->qpn, q->wrs, q->bytes, q->lat_sum,
			q->lat_max);
		sep = ",";
	}
	fprintf(o, "],\"gpu_clocks\":[");
	sep = "";
	for (const struct np_proc *p = s->procs; p; p = p->next) {
		fprintf(o, "%s{\"host\":%u,\"pid\":%u,\"pairs\":%" PRIu64
			",\"offset_ns\":%" PRId64 ",\"launches\":%" PRIu64
			",\"launch_avg_ns\":%.0f}", sep, p->host, p->pid, p->pairs,
			p->min_diff, p->launch_n, launch_avg(p));
		sep = ",";
	}
	fprintf(o, "]}");
}
