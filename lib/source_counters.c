// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Port counters source: what the NIC counts and software never sees
 * (hardware retries, NAKs, out-of-sequence packets), sampled from
 * ROOT/class/infiniband/DEV/ports/N/{counters,hw_counters}/NAME when the
 * source is added, every period while a live reader runs and when it
 * stops.  Each counter that changed between two samples becomes one
 * RDT_EV_PORT_COUNTER record on the timeline, stamped with the sample's
 * time, so the merge puts it next to the verbs and collectives.
 *
 * Names come from the directory listing, never from a list of known
 * counters: any driver's counters work.  The tree is listed again at
 * every sample, so a device added during the run is picked up (its first
 * sample is its baseline) and one removed stops being read.  A file that
 * cannot be read or holds no number is skipped and counted; the first few
 * are named in the source's status.  sysfs has no device index: on the
 * real /sys it comes from RDMA netlink (devindex.c), so a counter joins
 * the module's events of its device; elsewhere it is RDT_NO_DEV.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "internal.h"

#define CTR_DEFAULT_PERIOD_MS	1000
#define CTR_NAMED_BAD		8	/* bad files named in the status */

struct ctr {
	char		*rel;		/* DEV/ports/N/DIR/NAME: the key */
	char		dev[RDT_NAME_LEN];
	char		name[RDT_CTR_NAME_LEN];
	uint32_t	port, kind;
	uint64_t	value;		/* the last one read */
	uint64_t	gen;		/* scan that last listed it */
	bool		have;		/* value was read since it was listed */
	bool		said;		/* counted as bad already */
};

struct ctr_priv {
	struct rdt_src	*s;
	char		*root;		/* ROOT/class/infiniband */
	uint64_t	period_ns, last;
	uint64_t	due;		/* the timer's next expiry */
	/* Live: fires every period, so the reader's poll wakes for a
	 * sample (its own wait is up to 100 ms); -1: the clock decides. */
	int		tfd;
	uint64_t	gen;
	struct ctr	*v;
	size_t		n, cap;
	uint32_t	*idx;		/* open addressing into v, +1; 0: free */
	size_t		idxcap;
	uint64_t	nbad;		/* distinct files found bad */
	/* The real /sys: device indexes from netlink, read at each sample
	 * (a device re-added has a new one).  A fake tree's names are not
	 * this host's devices. */
	bool		netlink;
	struct rdt_devindex *devs;
	size_t		ndevs;
	bool		said_none, said_summary;
	/* "\nDEV\n..." of devices said to have no counter files (siw):
	 * said once, so that no records is not mistaken for no traffic. */
	char		*said_empty;
	/* Each counter's first value is a record too (delta 0): a reader
	 * that exports every counter (--metrics) needs the quiet ones. */
	bool		first_values;
};

static uint64_t hash(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 0x100000001b3ull;
	return h;
}

static int reindex(struct ctr_priv *p, size_t cap)
{
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t j = 0; j < p->n; j++) {
		size_t i = hash(p->v[j].rel) & (cap - 1);

		while (t[i])
			i = (i + 1) & (cap - 1);
		t[i] = (uint32_t)j + 1;
	}
	free(p->idx);
	p->idx = t;
	p->idxcap = cap;
	return 0;
}

/* The counter at @rel, made (with *fresh set) on first sight; NULL: no
 * memory, the counter is not sampled. */
static struct ctr *lookup(struct ctr_priv *p, const char *rel, bool *fresh)
{
	struct ctr *c;
	size_t i;

	*fresh = false;
	if (2 * (p->n + 1) > p->idxcap &&
	    reindex(p, p->idxcap ? 2 * p->idxcap : 256) < 0)
		return NULL;
	for (i = hash(rel) & (p->idxcap - 1); p->idx[i];
	     i = (i + 1) & (p->idxcap - 1))
		if (!strcmp(p->v[p->idx[i] - 1].rel, rel))
			return &p->v[p->idx[i] - 1];
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct ctr *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		p->v = v;
		p->cap = cap;
	}
	c = &p->v[p->n];
	memset(c, 0, sizeof(*c));
	if (!(c->rel = strdup(rel)))
		return NULL;
	p->idx[i] = (uint32_t)++p->n;
	*fresh = true;
	return c;
}

/* A counter file's value: 0, or a reason it has none. */
static const char *read_value(int dirfd, const char *name, uint64_t *v)
{
	char buf[64], *end;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return strerror(errno);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		const char *why = strerror(errno);

		close(fd);
		return why;
	}
	close(fd);
	buf[n] = 0;
	errno = 0;
	if (n == 0 || buf[0] < '0' || buf[0] > '9')
		return "not a number";
	*v = strtoull(buf, &end, 10);
	if (errno)
		return "number out of range";
	end += strspn(end, " \t\n");
	return *end ? "not a number" : NULL;
}

static void emit(struct ctr_priv *p, const struct ctr *c, uint64_t ts,
		 uint64_t value)
{
	struct rdt_ev_port_counter e;

	memset(&e, 0, sizeof(e));
	rdt_user_hdr(&e.hdr, RDT_EV_PORT_COUNTER, sizeof(e), ts, RDT_ANY_CPU,
		     RDT_NO_DEV);
	for (size_t i = 0; i < p->ndevs; i++)
		if (!strncmp(p->devs[i].name, c->dev, sizeof(c->dev))) {
			e.hdr.dev = p->devs[i].index;
			break;
		}
	memcpy(e.devname, c->dev, sizeof(e.devname));
	memcpy(e.name, c->name, sizeof(e.name));
	e.value = value;
	e.delta = (int64_t)(value - c->value);
	e.port = c->port;
	e.kind = c->kind;
	rdt_src_push(p->s, &e, sizeof(e), "counters", RDT_NO_OFF);
}

/* One counter: compare with the previous sample, remember this one. */
static void sample_one(struct ctr_priv *p, int dirfd, const char *dev,
		       uint32_t port, uint32_t kind, const char *name,
		       uint64_t ts)
{
	char rel[600];	/* two names of up to 255 bytes */
	struct ctr *c;
	const char *why;
	uint64_t v = 0;
	bool fresh, had;

	snprintf(rel, sizeof(rel), "%s/ports/%u/%s/%s", dev, port,
		 kind == RDT_CTR_HW_COUNTERS ? "hw_counters" : "counters", name);
	c = lookup(p, rel, &fresh);
	if (!c)
		return;
	if (fresh) {
		/* Longer names are cut to the record's arrays, NUL kept. */
		memcpy(c->dev, dev, strnlen(dev, sizeof(c->dev) - 1));
		memcpy(c->name, name, strnlen(name, sizeof(c->name) - 1));
		c->port = port;
		c->kind = kind;
	}
	/* Listed in every scan since a value was read: a delta from that
	 * value, even across reads that failed in between (the deltas
	 * still sum to last - first).  Otherwise (new, or gone for a
	 * while: a device removed and added again) this sample is its
	 * baseline. */
	if (fresh || c->gen + 1 != p->gen)
		c->have = false;
	c->gen = p->gen;
	had = c->have;
	why = read_value(dirfd, name, &v);
	if (why) {
		if (!c->said) {
			c->said = true;
			if (p->nbad++ < CTR_NAMED_BAD)
				rdt_src_add_status(p->s, "counters: %s/%s: %s: skipped\n",
					   p->root, rel, why);
		}
		return;
	}
	if (!had)
		c->value = v;	/* its baseline: no delta */
	if (v != c->value || (!had && p->first_values))
		emit(p, c, ts, v);
	c->value = v;
	c->have = true;
}

static int sort_names(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dot(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* The entries of @dir (relative to @at), sorted so that a sample's
 * records come out in the same order every time.  -1 if none. */
static int list(int at, const char *dir, struct dirent ***out, int *fd)
{
	int n;

	*fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0)
		return -1;
	n = scandirat(*fd, ".", out, not_dot, sort_names);
	if (n < 0) {
		close(*fd);
		*fd = -1;
	}
	return n;
}

static void free_list(struct dirent **v, int n, int fd)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	if (fd >= 0)
		close(fd);
}

/* Returns how many counter files the port has. */
static unsigned int sample_port(struct ctr_priv *p, int portsfd,
				const char *dev, const char *port, uint64_t ts)
{
	static const char *const dirs[] = { "counters", "hw_counters" };
	unsigned int files = 0;
	char *end;
	unsigned long pn = strtoul(port, &end, 10);

	if (*end || !*port || pn > UINT32_MAX)
		return 0;
	for (uint32_t k = 0; k < 2; k++) {
		char sub[300];
		struct dirent **e;
		int fd, n;

		snprintf(sub, sizeof(sub), "%s/%s", port, dirs[k]);
		n = list(portsfd, sub, &e, &fd);
		for (int i = 0; i < n; i++) {
			struct stat st;

			/* Counters are files; skip anything else quietly. */
			if (fstatat(fd, e[i]->d_name, &st, 0) < 0 ||
			    !S_ISREG(st.st_mode))
				continue;
			files++;
			sample_one(p, fd, dev, (uint32_t)pn, k, e[i]->d_name, ts);
		}
		if (n >= 0)
			free_list(e, n, fd);
	}
	return files;
}

static void say_empty(struct ctr_priv *p, const char *dev)
{
	size_t had = p->said_empty ? strlen(p->said_empty) : 0;
	char key[NAME_MAX + 3];
	char *v;

	snprintf(key, sizeof(key), "\n%s\n", dev);
	if (p->said_empty && strstr(p->said_empty, key))
		return;
	v = realloc(p->said_empty, had + strlen(key) + 1);
	if (!v)
		return;
	/* "\nA\n" + "B\n": each name between two newlines */
	strcpy(had ? v + had : v, had ? key + 1 : key);
	p->said_empty = v;
	rdt_src_add_status(p->s, "counters: %s has no port counter files "
			   "(its driver exposes none): nothing to sample\n",
			   dev);
}

static void sample(struct ctr_priv *p)
{
	uint64_t ts = rdt_now_mono();
	struct dirent **devs;
	int rootfd, ndev;

	p->gen++;
	p->last = ts;
	if (p->netlink) {
		free(p->devs);
		if (rdt_devindex_read(&p->devs, &p->ndevs) < 0) {
			p->devs = NULL;
			p->ndevs = 0;
		}
	}
	ndev = list(AT_FDCWD, p->root, &devs, &rootfd);
	if (ndev <= 0 && !p->said_none) {
		p->said_none = true;
		rdt_src_add_status(p->s, "counters: no RDMA device in %s%s\n", p->root,
			   p->s->live ? " yet: looking again at every sample" : "");
	}
	for (int d = 0; d < ndev; d++) {
		char sub[300];
		struct dirent **ports;
		int portsfd, np;

		unsigned int files = 0;

		snprintf(sub, sizeof(sub), "%s/ports", devs[d]->d_name);
		np = list(rootfd, sub, &ports, &portsfd);
		for (int i = 0; i < np; i++)
			files += sample_port(p, portsfd, devs[d]->d_name,
					     ports[i]->d_name, ts);
		if (np >= 0)
			free_list(ports, np, portsfd);
		if (!files)
			say_empty(p, devs[d]->d_name);
	}
	if (ndev >= 0)
		free_list(devs, ndev, rootfd);
}

static int ctr_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct ctr_priv *p = s->priv;

	if (!s->live) {
		/* One-shot: what moved between the add and the read. */
		sample(p);
		s->eof = true;
		return 0;
	}
	/* a sample is stamped when it is taken: none before the next one */
	s->horizon = p->tfd >= 0 ? p->due : p->last + p->period_ns;
	if (p->tfd >= 0) {
		uint64_t fired = 0;

		/* The timer is there to wake poll(); before it is due there
		 * is nothing to read (a read per pass was a syscall per event
		 * while following a backlog). */
		if (pass->now < p->due)
			return 0;
		if (read(p->tfd, &fired, sizeof(fired)) == sizeof(fired) &&
		    fired) {
			p->due += fired * p->period_ns;
			sample(p);
		}
		return 0;
	}
	/* The pass's clock may be a reading older than our last sample. */
	if (pass->now >= p->last && pass->now - p->last >= p->period_ns)
		sample(p);
	return 0;
}

static int ctr_pollfds(struct rdt_src *s, struct pollfd *pfd, int max)
{
	struct ctr_priv *p = s->priv;

	if (p->tfd < 0 || max < 1)
		return 0;
	pfd->fd = p->tfd;
	pfd->events = POLLIN;
	pfd->revents = 0;
	return 1;
}

/* The end of a live run: the last sample, and the count of bad files. */
static void ctr_finish(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct ctr_priv *p = s->priv;

	(void)pass;
	sample(p);
	if (p->nbad && !p->said_summary) {
		p->said_summary = true;
		rdt_src_add_status(s, "counters: %llu counter files skipped "
			   "(unreadable or not a number)\n",
			   (unsigned long long)p->nbad);
	}
}

static void ctr_close(struct rdt_src *s)
{
	struct ctr_priv *p = s->priv;

	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].rel);
	free(p->v);
	free(p->idx);
	free(p->devs);
	free(p->root);
	free(p->said_empty);
	if (p->tfd >= 0)
		close(p->tfd);
	free(p);
	s->priv = NULL;
}

static const struct rdt_src_ops ctr_ops = {
	.fill = ctr_fill,
	.pollfds = ctr_pollfds,
	.finish = ctr_finish,
	.close = ctr_close,
};

RDT_EXPORT int rdt_reader_add_counters_opts(struct rdt_reader *r,
					    const struct rdt_counters_opts *opts)
{
	struct rdt_counters_opts o = { .sz = sizeof(o) };
	const char *env = getenv("RDT_SYSFS_ROOT");
	const char *sysfs_root;
	unsigned int period_ms;
	struct rdt_src *s;
	struct ctr_priv *p;

	if (opts)	/* a caller built against an older, shorter struct */
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	sysfs_root = o.sysfs_root;
	period_ms = o.period_ms;

	if (!sysfs_root || !*sysfs_root)
		sysfs_root = env && *env ? env : "/sys";
	s = rdt_reader_new_src(r, RDT_SOURCE_COUNTERS, "counters");
	if (!s)
		return -ENOMEM;
	p = calloc(1, sizeof(*p));
	if (!p || asprintf(&p->root, "%s/class/infiniband", sysfs_root) < 0) {
		free(p);
		rdt_reader_set_error(r, "counters: out of memory");
		rdt_reader_drop_src(r, s);
		return -ENOMEM;
	}
	p->s = s;
	p->first_values = o.first_values;
	p->netlink = !strcmp(sysfs_root, "/sys");
	p->period_ns = (uint64_t)(period_ms ? period_ms : CTR_DEFAULT_PERIOD_MS) *
		       1000000ull;
	p->tfd = -1;
	if (s->live) {
		struct itimerspec it = {
			.it_interval = { (time_t)(p->period_ns / 1000000000),
					 (long)(p->period_ns % 1000000000) },
		};

		/* absolute, so that ctr_fill knows each expiry in advance */
		p->due = rdt_now_mono() + p->period_ns;
		it.it_value.tv_sec = (time_t)(p->due / 1000000000);
		it.it_value.tv_nsec = (long)(p->due % 1000000000);
		p->tfd = timerfd_create(CLOCK_MONOTONIC,
					TFD_NONBLOCK | TFD_CLOEXEC);
		if (p->tfd >= 0 &&
		    timerfd_settime(p->tfd, TFD_TIMER_ABSTIME, &it, NULL) < 0) {
			close(p->tfd);
			p->tfd = -1;
		}
	}
	s->priv = p;
	s->ops = &ctr_ops;
	/* a sample is stamped as it is taken: its horizon is the next */
	s->exact = true;
	rdt_local_file_hdr(&s->fh, NULL);
	s->meta = rdt_local_meta();
	sample(p);	/* the baseline */
	return (int)s->idx;
}

RDT_EXPORT int rdt_reader_add_counters(struct rdt_reader *r,
				       const char *sysfs_root,
				       unsigned int period_ms)
{
	struct rdt_counters_opts o = {
		.sz = sizeof(o), .sysfs_root = sysfs_root, .period_ms = period_ms,
	};

	return rdt_reader_add_counters_opts(r, &o);
}
