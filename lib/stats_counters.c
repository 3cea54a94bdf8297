// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* --stats of the port counters (RDT_EV_PORT_COUNTER): per device and port,
 * each counter that moved, by how much and how often. */
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

struct rdt_ctr_stats {
	struct ctr_stat *v;
	size_t n, cap;
};

struct rdt_ctr_stats *rdt_ctr_stats_new(void)
{
	return calloc(1, sizeof(struct rdt_ctr_stats));
}

void rdt_ctr_stats_free(struct rdt_ctr_stats *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

/* A linear search: a run has at most a few hundred counters that move,
 * and one record per counter per period. */
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
	fprintf(o, "]");
}
