// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* --stats of the port counters (RDT_EV_PORT_COUNTER): per device and port,
 * each counter that moved, by how much and how often; and per collective
 * window (an NCCL call's entry to return, a USDT mark's begin to end), the
 * counters whose samples fell inside it. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct ctr_stat {
	uint32_t host, port, kind;
	char dev[RDT_NAME_LEN + 1];
	char name[RDT_CTR_NAME_LEN + 1];
	int64_t delta;			/* sum of the records' deltas */
	uint64_t first, last;		/* value before the first, after the last */
	uint64_t changes;
	uint64_t first_ts, last_ts;
};

/* A counter sample inside a collective's window. */
struct win_ctr {
	char dev[RDT_NAME_LEN + 1];
	char name[RDT_CTR_NAME_LEN + 1];
	uint32_t port;
	int64_t delta;
};

struct win {
	uint64_t start, end;		/* end UINT64_MAX: USDT begin seen only */
	uint64_t seq;
	uint32_t host, pid, fn;		/* fn 0: a USDT mark (allreduce) */
	int32_t rank;
	struct win_ctr *c;
	size_t nc;
};

/* Windows kept: the most recent ones, the oldest dropped beyond this. */
#define MAX_WINS 4096

struct rdt_ctr_stats {
	struct ctr_stat *v;
	size_t n, cap;
	struct win *w;
	size_t nw, capw;
	uint64_t wins_dropped;
};

struct rdt_ctr_stats *rdt_ctr_stats_new(void)
{
	return calloc(1, sizeof(struct rdt_ctr_stats));
}

void rdt_ctr_stats_free(struct rdt_ctr_stats *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nw; i++)
		free(s->w[i].c);
	free(s->w);
	free(s->v);
	free(s);
}

/* A linear search: a run has at most a few hundred counters that move,
 * and one record per counter per period. */
/* A collective window: an NCCL collective call, or a USDT begin/end. */
void rdt_ctr_stats_window(struct rdt_ctr_stats *s, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	struct win *w;

	if (r->hdr.type == RDT_EV_COLL_MARK && r->coll_mark.phase) {
		/* its begin's window ends here */
		for (size_t i = s->nw; i-- > 0;) {
			w = &s->w[i];
			if (!w->fn && w->end == UINT64_MAX && w->host == ev->host &&
			    w->pid == r->hdr.pid && w->seq == r->coll_mark.seq) {
				w->end = ev->ts;
				break;
			}
		}
		return;
	}
	if (s->nw == MAX_WINS) {
		/* Full: keep the windows still open or with samples inside,
		 * then at most half of them, the latest: amortised O(1). */
		size_t k = 0, drop;

		for (size_t i = 0; i < s->nw; i++) {
			if (s->w[i].nc || s->w[i].end >= ev->ts)
				s->w[k++] = s->w[i];
			else
				free(s->w[i].c);
		}
		drop = k > MAX_WINS / 2 ? k - MAX_WINS / 2 : 0;
		for (size_t i = 0; i < drop; i++)
			free(s->w[i].c);
		memmove(s->w, s->w + drop, (k - drop) * sizeof(*s->w));
		s->nw = k - drop;
		s->wins_dropped += drop;
	}
	if (s->nw == s->capw) {
		size_t cap = s->capw ? 2 * s->capw : 64;
		struct win *v = realloc(s->w, cap * sizeof(*v));

		if (!v)
			return;
		s->w = v;
		s->capw = cap;
	}
	w = &s->w[s->nw++];
	memset(w, 0, sizeof(*w));
	w->start = ev->ts;
	w->host = ev->host;
	w->pid = r->hdr.pid;
	if (r->hdr.type == RDT_EV_NCCL_CALL) {
		w->end = ev->ts + r->nccl_call.duration_ns;
		w->fn = r->nccl_call.fn;
		w->seq = r->nccl_call.seq;
		w->rank = r->nccl_call.rank;
	} else {
		w->end = UINT64_MAX;
		w->seq = r->coll_mark.seq;
		w->rank = r->coll_mark.rank;
	}
}

static void window_add(struct rdt_ctr_stats *s, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *r = &ev->rec.port_counter;

	for (size_t i = 0; i < s->nw; i++) {
		struct win *w = &s->w[i];
		struct win_ctr *c = NULL, *v;

		if (w->host != ev->host || ev->ts < w->start || ev->ts > w->end)
			continue;
		for (size_t j = 0; j < w->nc && !c; j++)
			if (w->c[j].port == r->port &&
			    !strncmp(w->c[j].dev, r->devname, sizeof(r->devname)) &&
			    !strncmp(w->c[j].name, r->name, sizeof(r->name)))
				c = &w->c[j];
		if (!c) {
			v = realloc(w->c, (w->nc + 1) * sizeof(*v));
			if (!v)
				continue;
			w->c = v;
			c = &w->c[w->nc++];
			memset(c, 0, sizeof(*c));
			memcpy(c->dev, r->devname, sizeof(r->devname));
			memcpy(c->name, r->name, sizeof(r->name));
			c->port = r->port;
		}
		c->delta += r->delta;
	}
}

void rdt_ctr_stats_add(struct rdt_ctr_stats *s, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *r = &ev->rec.port_counter;
	struct ctr_stat *c = NULL;

	for (size_t i = 0; i < s->n; i++) {
		c = &s->v[i];
		if (c->host == ev->host && c->port == r->port &&
		    c->kind == r->kind &&
		    !strncmp(c->dev, r->devname, sizeof(r->devname)) &&
		    !strncmp(c->name, r->name, sizeof(r->name)))
			break;
		c = NULL;
	}
	if (!c) {
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 32;
			struct ctr_stat *v = realloc(s->v, cap * sizeof(*v));

			if (!v)
				return;
			s->v = v;
			s->cap = cap;
		}
		c = &s->v[s->n++];
		memset(c, 0, sizeof(*c));
		c->host = ev->host;
		c->port = r->port;
		c->kind = r->kind;
		memcpy(c->dev, r->devname, sizeof(r->devname));
		memcpy(c->name, r->name, sizeof(r->name));
		c->first = r->value - (uint64_t)r->delta;
		c->first_ts = ev->ts;
	}
	c->delta += r->delta;
	c->last = r->value;
	c->last_ts = ev->ts;
	c->changes++;
	window_add(s, ev);
}

static int cmp(const void *a, const void *b)
{
	const struct ctr_stat *x = a, *y = b;
	int d;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if ((d = strcmp(x->dev, y->dev)))
		return d;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Longest first, then in time order. */
static int cmp_win(const void *a, const void *b)
{
	const struct win *x = a, *y = b;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

#define PRINT_WINS 20

static void print_windows(struct rdt_ctr_stats *s, FILE *o)
{
	size_t shown = 0, with = 0;

	for (size_t i = 0; i < s->nw; i++)
		with += s->w[i].nc > 0 && s->w[i].end != UINT64_MAX;
	if (!with)
		return;
	qsort(s->w, s->nw, sizeof(*s->w), cmp_win);
	fprintf(o, "\n== port counters sampled inside collectives (%zu "
		"collectives%s) ==\n%-18s %6s %5s %12s  %s\n", with,
		with > PRINT_WINS ? ", the 20 longest" : "", "collective", "seq",
		"rank", "duration_us", "dev/port counter delta ...");
	for (size_t i = 0; i < s->nw && shown < PRINT_WINS; i++) {
		const struct win *w = &s->w[i];

		if (!w->nc || w->end == UINT64_MAX)
			continue;
		shown++;
		fprintf(o, "%-18s %6" PRIu64 " %5d %12.3f ",
			w->fn ? rdt_nccl_fn_name(w->fn) : "allreduce (usdt)",
			w->seq, w->rank, (double)(w->end - w->start) / 1000);
		for (size_t j = 0; j < w->nc; j++)
			fprintf(o, " %s/%u %s %+" PRId64, w->c[j].dev,
				w->c[j].port, w->c[j].name, w->c[j].delta);
		fputc('\n', o);
	}
	if (s->wins_dropped)
		fprintf(o, "(%" PRIu64 " older collective windows not kept)\n",
			s->wins_dropped);
}

static const char *dir_name(uint32_t kind)
{
	return kind == RDT_CTR_HW_COUNTERS ? "hw_counters" : "counters";
}

void rdt_ctr_stats_print(struct rdt_ctr_stats *s, FILE *o)
{
	if (!s->n)	/* no counters source, or nothing moved */
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp);
	fprintf(o, "\n== port counters that moved (sysfs; delta = last - first "
		"sample) ==\n%-4s %-10s %4s %-11s %-32s %14s %8s %14s\n",
		"host", "dev", "port", "dir", "counter", "delta", "changes",
		"value");
	for (size_t i = 0; i < s->n; i++) {
		const struct ctr_stat *c = &s->v[i];

		fprintf(o, "%-4u %-10s %4u %-11s %-32s %14" PRId64 " %8" PRIu64
			" %14" PRIu64 "\n", c->host, c->dev, c->port,
			dir_name(c->kind), c->name, c->delta, c->changes,
			c->last);
	}
	print_windows(s, o);
}

void rdt_ctr_stats_print_json(struct rdt_ctr_stats *s, FILE *o)
{
	if (s->n)	/* qsort of NULL is undefined, even of 0 entries */
		qsort(s->v, s->n, sizeof(*s->v), cmp);
	fprintf(o, ",\"port_counters\":[");
	for (size_t i = 0; i < s->n; i++) {
		const struct ctr_stat *c = &s->v[i];

		fprintf(o, "%s{\"host\":%u,\"devname\":", i ? "," : "", c->host);
		rdt_json_str(o, c->dev, sizeof(c->dev));
		fprintf(o, ",\"port\":%u,\"dir\":\"%s\",\"name\":", c->port,
			dir_name(c->kind));
		rdt_json_str(o, c->name, sizeof(c->name));
		fprintf(o, ",\"delta\":%" PRId64 ",\"changes\":%" PRIu64
			",\"first\":%" PRIu64 ",\"value\":%" PRIu64
			",\"first_ts\":%" PRIu64 ",\"last_ts\":%" PRIu64 "}",
			c->delta, c->changes, c->first, c->last, c->first_ts,
			c->last_ts);
	}
	/* Every collective window with samples inside, in time order. */
	fprintf(o, "],\"port_counters_in_collectives\":[");
	for (size_t i = 0, first = 1; i < s->nw; i++) {
		const struct win *w = &s->w[i];

		if (!w->nc || w->end == UINT64_MAX)
			continue;
		fprintf(o, "%s{\"host\":%u,\"pid\":%u,\"fn\":\"%s\",\"seq\":%"
			PRIu64 ",\"rank\":%d,\"ts_ns\":%" PRIu64
			",\"duration_ns\":%" PRIu64 ",\"counters\":[",
			first ? "" : ",", w->host, w->pid,
			w->fn ? rdt_nccl_fn_name(w->fn) : "allreduce (usdt)",
			w->seq, w->rank, w->start, w->end - w->start);
		for (size_t j = 0; j < w->nc; j++) {
			fprintf(o, "%s{\"devname\":", j ? "," : "");
			rdt_json_str(o, w->c[j].dev, sizeof(w->c[j].dev));
			fprintf(o, ",\"port\":%u,\"name\":", w->c[j].port);
			rdt_json_str(o, w->c[j].name, sizeof(w->c[j].name));
			fprintf(o, ",\"delta\":%" PRId64 "}", w->c[j].delta);
		}
		fprintf(o, "]}");
		first = 0;
	}
	fprintf(o, "]");
}
