// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* --dev --qpn --pid --type */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct idset {
	uint64_t *v;
	size_t n;
};

struct rdt_filter {
	struct idset devs, qpns, pids;
	char **devnames;
	size_t ndevnames;
	bool any_type;
	/* anything set at all: an empty filter (the default) costs one test
	 * per event instead of five */
	bool any;
	uint64_t types[(RDT_EV_MAX + 1) / 64];
};

RDT_EXPORT struct rdt_filter *rdt_filter_new(void)
{
	return calloc(1, sizeof(struct rdt_filter));
}

RDT_EXPORT void rdt_filter_free(struct rdt_filter *f)
{
	if (!f)
		return;
	free(f->devs.v);
	free(f->qpns.v);
	free(f->pids.v);
	for (size_t i = 0; i < f->ndevnames; i++)
		free(f->devnames[i]);
	free(f->devnames);
	free(f);
}

static int set_add(struct rdt_filter *f, struct idset *s, uint64_t v)
{
	uint64_t *n = realloc(s->v, (s->n + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->v = n;
	s->v[s->n++] = v;
	f->any = true;
	return 0;
}

static bool set_has(const struct idset *s, uint64_t v)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == v)
			return true;
	return false;
}

static bool parse_num(const char *t, uint64_t *v)
{
	char *end;

	if (!*t)
		return false;
	errno = 0;
	*v = strtoull(t, &end, 0);
	return !errno && !*end && *t != '-';
}

/* Calls add() on each comma-separated item. */
static int each(struct rdt_filter *f, const char *list,
		int (*add)(struct rdt_filter *, const char *))
{
	char *copy = strdup(list), *save = NULL, *t;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (t = strtok_r(copy, ",", &save); t && !ret; t = strtok_r(NULL, ",", &save))
		ret = add(f, t);
	free(copy);
	return ret;
}

static int add_dev(struct rdt_filter *f, const char *t)
{
	uint64_t v;
	char **n;

	if (parse_num(t, &v))
		return set_add(f, &f->devs, v);
	n = realloc(f->devnames, (f->ndevnames + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	f->devnames = n;
	/* Counted only once stored: matching compares every name. */
	f->devnames[f->ndevnames] = strdup(t);
	if (!f->devnames[f->ndevnames])
		return -ENOMEM;
	f->ndevnames++;
	f->any = true;
	return 0;
}

static int add_qpn(struct rdt_filter *f, const char *t)
{
	uint64_t v;

	return parse_num(t, &v) ? set_add(f, &f->qpns, v) : -EINVAL;
}

static int add_pid(struct rdt_filter *f, const char *t)
{
	uint64_t v;

	return parse_num(t, &v) ? set_add(f, &f->pids, v) : -EINVAL;
}

static int add_type(struct rdt_filter *f, const char *t)
{
	int type = rdt_type_from_name(t);
	uint64_t v;

	if (type < 0 && parse_num(t, &v) && v <= RDT_EV_MAX)
		type = (int)v;
	if (type < 0)
		return -EINVAL;
	f->types[type / 64] |= 1ull << (type % 64);
	f->any_type = true;
	f->any = true;
	return 0;
}

RDT_EXPORT int rdt_filter_add_dev(struct rdt_filter *f, const char *l)
{
	return each(f, l, add_dev);
}

RDT_EXPORT int rdt_filter_add_qpn(struct rdt_filter *f, const char *l)
{
	return each(f, l, add_qpn);
}

RDT_EXPORT int rdt_filter_add_pid(struct rdt_filter *f, const char *l)
{
	return each(f, l, add_pid);
}

RDT_EXPORT int rdt_filter_add_type(struct rdt_filter *f, const char *l)
{
	return each(f, l, add_type);
}

/* Apart from rdt_filter_match so that the test for no filter at all,
 * which runs for every event, pays for no register saves. */
static __attribute__((noinline)) bool match(const struct rdt_filter *f,
					    const struct rdt_event *ev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;
	uint32_t qpn;

	if (rdt_is_bookkeeping(h->type))
		return true;
	if (f->any_type && !(f->types[h->type / 64] & (1ull << (h->type % 64))))
		return false;
	if (f->pids.n && !set_has(&f->pids, h->pid))
		return false;
	if (f->qpns.n && (!rdt_record_qpn(&ev->rec, &qpn) ||
			  !set_has(&f->qpns, qpn)))
		return false;
	if (f->devs.n || f->ndevnames) {
		bool ok = h->dev != RDT_NO_DEV && set_has(&f->devs, h->dev);
		/* A port counter names its device itself (sysfs, no index). */
		bool pc = h->type == RDT_EV_PORT_COUNTER;

		for (size_t i = 0; !ok && i < f->ndevnames; i++)
			ok = pc ? !strncmp(ev->rec.port_counter.devname,
					   f->devnames[i], RDT_NAME_LEN) :
			     ev->devname && !strcmp(ev->devname, f->devnames[i]);
		if (!ok)
			return false;
	}
	return true;
}

RDT_EXPORT bool rdt_filter_empty(const struct rdt_filter *f)
{
	return !f || !f->any;
}

RDT_EXPORT bool rdt_filter_match(const struct rdt_filter *f,
				 const struct rdt_event *ev)
{
	return rdt_filter_empty(f) || match(f, ev);
}
