// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Chrome trace JSON as ui.perfetto.dev imports it: a process per RDMA device
 * with a thread (track) per QP, a process per NCCL communicator with a
 * thread per rank, collectives as complete ("X") slices (NCCL calls) or
 * begin/end slices (USDT marks, a thread per rank process) and every
 * matched WR post -> completion as a flow; the NCCL profiler plugin's
 * events as slices on per-rank lanes of their communicator, with a flow
 * from each collective to each of its work requests.  Timestamps are microseconds
 * relative to the first event so doubles keep nanosecond precision; the
 * absolute base is in otherData.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DEV_PID_BASE	1000
#define NCCL_PID_BASE	100000
#define MISC_PID	99
#define COLL_PID	98
#define CTR_PID_BASE	200000	/* + host: its port counters */
#define CTRL_TID	0
/* Several hosts: host h's own processes at pid + h * HOST_PID_STRIDE */
#define HOST_PID_STRIDE	1000000
#define MAX_SEEN	65536
#define PTT_SLOTS	256
#define PTT_LEN		80	/* longest kept; a longer one is written each time */
#define CAT_NONE	0xffff	/* a flow's: no "cat" */
#define DTK_SLOTS	64

/* An NCCL profiler plugin event between its start and its stop. */
struct np_open {
	struct rdt_np_open_ent o;	/* a Coll or P2p is a root */
	int32_t		channel;	/* -1: none */
	uint64_t	gpu_stop;
	struct {			/* a v1, v2 Coll's np_coll_old */
		char	op[RDT_NP_STR];
		uint64_t traffic_bytes;
		uint8_t	is_collnet, is_nvls, has;
	} old;
	struct rdt_event start;
};

/* A process's GPU globaltimer offset so far: host - GPU, smallest seen. */
struct np_gpu {
	uint32_t	host, pid;
	int64_t		min_diff;
};

struct pf {
	struct rdt_wrmatch *m;
	struct np_gpu	*gpu;
	size_t		ngpu;
	struct rdt_np_open np;		/* of struct np_open */
	/* Tracks whose names went out, by (pid << 32 | tid) + 1: an open
	 * addressing set, 0 free (a scan of a list per event grew with the
	 * QPs); seen_last: the key UINT64_MAX, which + 1 would make 0. */
	uint64_t *seen;
	size_t nseen, capseen;
	bool seen_last;
	uint64_t *comms;	/* comm_hash per NCCL process index */
	size_t ncomms;
	const char *sep;
	size_t seplen;
	struct rdt_ob o;	/* everything goes out through it */
	/* ,"cat":"<type>","pid":P,"tid":T,"ts": as it went out last for a
	 * track and type (or ,"pid":P,"tid":T,"ts": for CAT_NONE): one copy
	 * per event where formatting it was ~190 instructions. */
	struct ptt {
		uint64_t	key;	/* pid << 32 | tid */
		uint16_t	type;
		uint8_t		len;	/* 0: empty */
		char		s[PTT_LEN];
	} ptt[PTT_SLOTS];
	/* The last microsecond ts() wrote, as digits: a flow has its
	 * slice's, and a busy trace many events a microsecond. */
	uint64_t	ts_us;
	size_t		ts_n;	/* 0: none yet */
	char		ts_txt[24];
	/* dev_track()'s answers, once the track's names went out: most
	 * events are a few QPs', and finding them named was 2 lookups. */
	struct dtk {
		uint32_t	host, dev, qpn, pid, tid;
		uint8_t		has_qpn, multi, used;
	} dtk[DTK_SLOTS];
};

static size_t seen_slot(const uint64_t *v, size_t cap, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);

	while (v[i] && v[i] != k)
		i = (i + 1) & (cap - 1);
	return i;
}

static bool seen_has(const struct pf *p, uint64_t key)
{
	if (key == UINT64_MAX)
		return p->seen_last;
	return p->capseen && p->seen[seen_slot(p->seen, p->capseen, key + 1)];
}

/* Whether @key was seen; it is from now on.  Past MAX_SEEN tracks every
 * key reads as seen: only names are lost. */
static bool seen(struct pf *p, uint64_t key)
{
	size_t i;

	if (seen_has(p, key))
		return true;
	if (p->nseen >= MAX_SEEN)
		return true;
	if (key == UINT64_MAX) {
		p->seen_last = true;
		p->nseen++;
		return false;
	}
	if (2 * (p->nseen + 1) > p->capseen) {
		size_t cap = p->capseen ? p->capseen * 2 : 128;
		uint64_t *v = calloc(cap, sizeof(*v));

		if (!v)
			return true;
		for (i = 0; i < p->capseen; i++)
			if (p->seen[i])
				v[seen_slot(v, cap, p->seen[i])] = p->seen[i];
		free(p->seen);
		p->seen = v;
		p->capseen = cap;
	}
	p->seen[seen_slot(p->seen, p->capseen, key + 1)] = key + 1;
	p->nseen++;
	return false;
}

/* @a " " @b into @buf, as snprintf's "%s %s" would (NULL: "(null)", cut
 * to @len - 1 bytes), without its format parsing: a slice's name per
 * event. */
static size_t put_cut(char *buf, size_t n, size_t len, const char *s)
{
	size_t m = strlen(s ? s : "(null)");

	if (m > len - 1 - n)
		m = len - 1 - n;
	memcpy(buf + n, s ? s : "(null)", m);
	return n + m;
}

static const char *cat2(char *buf, size_t len, const char *a, const char *b)
{
	size_t n = put_cut(buf, 0, len, a);

	if (n < len - 1)
		buf[n++] = ' ';
	n = put_cut(buf, n, len, b);
	buf[n] = 0;
	return buf;
}

/* "%" PRIu64 ".%03" PRIu64 of ns / 1000, ns % 1000 */
static void ts(struct pf *pf, uint64_t ns)
{
	struct rdt_ob *o = &pf->o;
	uint64_t us = ns / 1000;
	unsigned int f = (unsigned int)(ns - us * 1000);
	char *p = rdt_ob_room(o, 24);
	size_t n = pf->ts_n;

	if (us == pf->ts_us && n) {
		memcpy(p, pf->ts_txt, sizeof(pf->ts_txt) - 4);
	} else {
		n = (size_t)rdt_ndec(us);
		rdt_udec(p + n, us);
		memcpy(pf->ts_txt, p, sizeof(pf->ts_txt) - 4);
		pf->ts_us = us;
		pf->ts_n = n;
	}
	p[n] = '.';
	p[n + 1] = (char)('0' + f / 100);
	memcpy(p + n + 2, rdt_digits2 + (f % 100) * 2, 2);
	o->len += n + 4;
}

static struct rdt_ob *begin(struct rdt_sink *s)
{
	struct pf *p = s->priv;

	rdt_ob_put(&p->o, p->sep, p->seplen);
	p->sep = ",\n";
	p->seplen = 2;
	return &p->o;
}

static void meta(struct rdt_sink *s, uint32_t pid, uint32_t tid,
		 const char *what, const char *name)
{
	struct rdt_ob *o = begin(s);

	rdt_ob_lit(o, "{\"ph\":\"M\",\"name\":\"");
	rdt_ob_str(o, what);
	rdt_ob_lit(o, "\",\"pid\":");
	rdt_ob_u(o, pid);
	rdt_ob_lit(o, ",\"tid\":");
	rdt_ob_u(o, tid);
	rdt_ob_lit(o, ",\"args\":{\"name\":");
	rdt_ob_json_str(o, name, 128);
	rdt_ob_lit(o, "}}");
}

static void track(struct rdt_sink *s, uint32_t pid, uint32_t tid,
		  const char *pname, const char *tname)
{
	struct pf *p = s->priv;

	if (!seen(p, (uint64_t)pid << 32 | 0xffffffffu))
		meta(s, pid, 0, "process_name", pname);
	if (!seen(p, (uint64_t)pid << 32 | tid))
		meta(s, pid, tid, "thread_name", tname);
}

/*
 * Several hosts (files of several boots): each host's processes (devices,
 * USDT ranks, TCP, port counters) are a group: pids from
 * host * HOST_PID_STRIDE, names "HOST: ...", sorted by host.  One host:
 * the pids and names of a single-host trace.
 */
static bool multi_host(const struct rdt_sink *s)
{
	return s->r && rdt_reader_nhosts(s->r) > 1;
}

static void host_track(struct rdt_sink *s, uint32_t host, uint32_t pid,
		       uint32_t tid, const char *pname, const char *tname)
{
	char pn[192];

	if (!multi_host(s)) {
		track(s, pid, tid, pname, tname);
		return;
	}
	if (!seen(s->priv, (uint64_t)pid << 32 | 0xffffffffu)) {
		struct rdt_ob *o;

		snprintf(pn, sizeof(pn), "%s: %s",
			 rdt_reader_host_name(s->r, host), pname);
		meta(s, pid, 0, "process_name", pn);
		o = begin(s);
		rdt_ob_lit(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
		rdt_ob_u(o, pid);
		rdt_ob_lit(o, ",\"tid\":0,\"args\":{\"sort_index\":");
		rdt_ob_u(o, host);
		rdt_ob_lit(o, "}}");
	}
	if (tname && !seen(s->priv, (uint64_t)pid << 32 | tid))
		meta(s, pid, tid, "thread_name", tname);
}

static uint32_t host_pid(const struct rdt_sink *s, uint32_t host, uint32_t pid)
{
	return multi_host(s) ? pid + host * HOST_PID_STRIDE : pid;
}

static uint32_t dev_track_named(struct rdt_sink *s, const struct rdt_event *ev,
				uint32_t qpn, bool has_qpn, uint32_t *tid)
{
	const struct rdt_hdr *h = &ev->rec.hdr;
	uint32_t slot = h->dev == RDT_NO_DEV ? 4095 : h->dev % 4095;
	uint32_t pid = DEV_PID_BASE + ev->host * 4096 + slot;
	char pn[96], tn[48];

	*tid = has_qpn ? qpn + 1 : CTRL_TID;
	if (multi_host(s))
		pid = host_pid(s, ev->host, DEV_PID_BASE + slot);
	/* Named already (nearly every event): no names to format. */
	if (seen_has(s->priv, (uint64_t)pid << 32 | 0xffffffffu) &&
	    seen_has(s->priv, (uint64_t)pid << 32 | *tid))
		return pid;
	if (multi_host(s)) {
		if (ev->devname && *ev->devname)
			snprintf(pn, sizeof(pn), "%s", ev->devname);
		else if (h->dev == RDT_NO_DEV)
			snprintf(pn, sizeof(pn), "no device");
		else
			snprintf(pn, sizeof(pn), "dev%u", h->dev);
	} else if (ev->devname && *ev->devname)
		snprintf(pn, sizeof(pn), "%s (host %u)", ev->devname, ev->host);
	else if (h->dev == RDT_NO_DEV)
		snprintf(pn, sizeof(pn), "no device (host %u)", ev->host);
	else
		snprintf(pn, sizeof(pn), "dev%u (host %u)", h->dev, ev->host);
	if (has_qpn)
		snprintf(tn, sizeof(tn), "QP %u", qpn);
	else
		snprintf(tn, sizeof(tn), "control");
	host_track(s, ev->host, pid, *tid, pn, tn);
	return pid;
}

/* A device's process and a QP's (or its control) thread, named the first
 * time: pid, *tid. */
static uint32_t dev_track(struct rdt_sink *s, const struct rdt_event *ev,
			  uint32_t qpn, bool has_qpn, uint32_t *tid)
{
	struct pf *p = s->priv;
	uint32_t dev = ev->rec.hdr.dev;
	uint8_t mh = multi_host(s);
	struct dtk *d = &p->dtk[(qpn ^ dev * 31 ^ ev->host * 7) % DTK_SLOTS];

	if (d->used && d->qpn == qpn && d->dev == dev && d->host == ev->host &&
	    d->has_qpn == has_qpn && d->multi == mh) {
		*tid = d->tid;
		return d->pid;
	}
	d->pid = dev_track_named(s, ev, qpn, has_qpn, tid);
	d->tid = *tid;
	d->host = ev->host;
	d->dev = dev;
	d->qpn = qpn;
	d->has_qpn = has_qpn;
	d->multi = mh;
	d->used = 1;
	return d->pid;
}

static uint32_t nccl_track(struct rdt_sink *s, uint64_t hash, int rank,
			   uint32_t *tid)
{
	struct pf *p = s->priv;
	char pn[64], tn[32];
	size_t i;

	for (i = 0; i < p->ncomms; i++)
		if (p->comms[i] == hash)
			break;
	if (i == p->ncomms) {
		uint64_t *v = realloc(p->comms, (i + 1) * sizeof(*v));

		if (v) {
			p->comms = v;
			p->comms[p->ncomms++] = hash;
		} else {
			i = 0;
		}
	}
	snprintf(pn, sizeof(pn), "NCCL comm 0x%016" PRIx64, hash);
	*tid = rank >= 0 ? (uint32_t)rank + 1 : 0;
	if (rank >= 0)
		snprintf(tn, sizeof(tn), "rank %d", rank);
	else
		snprintf(tn, sizeof(tn), "rank ?");
	track(s, NCCL_PID_BASE + (uint32_t)i, *tid, pn, tn);
	return NCCL_PID_BASE + (uint32_t)i;
}

static void args(struct rdt_ob *o, const struct rdt_event *ev)
{
	rdt_ob_lit_u(o, ",\"args\":{\"pid\":", ev->rec.hdr.pid);
	rdt_ob_lit(o, ",\"comm\":");
	rdt_ob_json_str(o, ev->comm ? ev->comm : "", RDT_COMM_LEN);
	if (ev->flags & RDT_EVF_LATE)
		rdt_ob_lit(o, ",\"late\":true");
	rdt_ob_fields(&ev->rec, o);
	rdt_ob_c(o, '}');
}

static __attribute__((noinline)) void
cat_pid_tid_miss(struct pf *p, struct ptt *e, uint64_t key, unsigned int type,
		 uint32_t pid, uint32_t tid)
{
	struct rdt_ob *o = &p->o;
	const char *name;
	size_t start;

	rdt_ob_room(o, RDT_OB_MAX);	/* all of it in the buffer: no flush */
	start = o->len;
	if (type != CAT_NONE) {
		name = rdt_type_name(type);
		rdt_ob_lit(o, ",\"cat\":\"");
		rdt_ob_str(o, name ? name : "(null)");
		rdt_ob_c(o, '"');
	}
	rdt_ob_lit(o, ",\"pid\":");
	rdt_ob_u(o, pid);
	rdt_ob_lit(o, ",\"tid\":");
	rdt_ob_u(o, tid);
	rdt_ob_lit(o, ",\"ts\":");
	e->len = 0;
	if (o->len - start <= PTT_LEN) {
		memcpy(e->s, o->buf + start, o->len - start);
		e->len = (uint8_t)(o->len - start);
		e->key = key;
		e->type = (uint16_t)type;
	}
}

/* ,"cat":"<type>","pid":P,"tid":T,"ts": (type CAT_NONE: no "cat"),
 * from the cache when this track and type went out before. */
static inline __attribute__((always_inline)) void
cat_pid_tid(struct pf *p, unsigned int type, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct ptt *e = &p->ptt[(key * 0x9e3779b97f4a7c15ull ^
				 type * 0xc2b2ae3d27d4eb4full) >> 56];
	struct rdt_ob *o = &p->o;

	if (e->key == key && e->type == type && e->len) {
		memcpy(rdt_ob_room(o, PTT_LEN), e->s, PTT_LEN);
		o->len += e->len;
		return;
	}
	cat_pid_tid_miss(p, e, key, type, pid, tid);
}

/*
 * A slice's name: @name, or with @b the library's names @name " " @b
 * (rdt_ob_name(): no escape pass), as cat2() into 96 bytes would cut it.
 */
static void slice_name(struct rdt_ob *o, const char *name, const char *b)
{
	size_t na, nb;
	char buf[96], *p;

	if (!b) {
		rdt_ob_json_str(o, name, 128);
		return;
	}
	name = name ? name : "(null)";
	na = strnlen(name, 64);
	nb = strnlen(b, 64);
	if (na + 1 + nb >= sizeof(buf)) {
		rdt_ob_json_str(o, cat2(buf, sizeof(buf), name, b), 128);
		return;
	}
	p = rdt_ob_room(o, sizeof(buf) + 2);
	p[0] = '"';
	if (na <= 32 && nb <= 32) {	/* inline copies, not memcpy() calls */
		rdt_cpy32(p + 1, name, na);
		rdt_cpy32(p + na + 2, b, nb);
	} else {
		memcpy(p + 1, name, na);
		memcpy(p + na + 2, b, nb);
	}
	p[na + 1] = ' ';
	p[na + nb + 2] = '"';
	o->len += na + nb + 3;
}

/* 1 ns slices: flows bind to an enclosing slice, instants have none.
 * The name: see slice_name(). */
static void slice2(struct rdt_sink *s, const struct rdt_event *ev, uint32_t pid,
		   uint32_t tid, const char *name, const char *b,
		   uint64_t dur_ns)
{
	struct rdt_ob *o = begin(s);

	/* A verb stamped when its driver returned spans its time there. */
	uint64_t start = dur_ns && ev->ts - s->first_ts >= dur_ns ?
			 ev->ts - dur_ns : ev->ts;

	rdt_ob_lit(o, "{\"ph\":\"X\",\"name\":");
	slice_name(o, name, b);
	cat_pid_tid(s->priv, ev->rec.hdr.type, pid, tid);
	ts(s->priv, start - s->first_ts);
	if (dur_ns) {
		rdt_ob_lit(o, ",\"dur\":");
		ts(s->priv, dur_ns);
	} else {	/* ts(1), as nearly every slice has it */
		rdt_ob_lit(o, ",\"dur\":0.001");
	}
	args(o, ev);
	rdt_ob_c(o, '}');
}

static void slice(struct rdt_sink *s, const struct rdt_event *ev, uint32_t pid,
		  uint32_t tid, const char *name, uint64_t dur_ns)
{
	slice2(s, ev, pid, tid, name, NULL, dur_ns);
}

enum flow_kind { FLOW_START, FLOW_STEP, FLOW_END };

static void flow(struct rdt_sink *s, const struct rdt_event *ev, uint32_t pid,
		 uint32_t tid, uint64_t id, enum flow_kind k)
{
	struct rdt_ob *o = begin(s);

	if (k == FLOW_START)
		rdt_ob_lit(o, "{\"ph\":\"s\",\"name\":\"wr\",\"cat\":\"wr\",\"id\":");
	else if (k == FLOW_STEP)
		rdt_ob_lit(o, "{\"ph\":\"t\",\"name\":\"wr\",\"cat\":\"wr\",\"id\":");
	else
		rdt_ob_lit(o, "{\"ph\":\"f\",\"name\":\"wr\",\"cat\":\"wr\",\"id\":");
	rdt_ob_u(o, id);
	cat_pid_tid(s->priv, CAT_NONE, pid, tid);
	ts(s->priv, ev->ts - s->first_ts);
	if (k == FLOW_START)
		rdt_ob_c(o, '}');
	else	/* bound to the slice that encloses it: the completion's */
		rdt_ob_lit(o, ",\"bp\":\"e\"}");
}

/* The track of a USDT-marked rank, one per process: its pid, the
 * track's tid being the rank's process id. */
static uint32_t coll_track(struct rdt_sink *s, const struct rdt_event *ev,
			   int rank, int nranks)
{
	uint32_t pid = host_pid(s, ev->host, COLL_PID);
	char tn[64];

	snprintf(tn, sizeof(tn), "rank %d of %d (pid %u)", rank, nranks,
		 ev->rec.hdr.pid);
	host_track(s, ev->host, pid, ev->rec.hdr.pid, "collectives (USDT marks)", tn);
	return pid;
}

/* A named event of phase @ph on a rank's track: a slice's begin or an
 * instant, with the record's fields as args. */
static void coll_named(struct rdt_sink *s, const struct rdt_event *ev,
		       const char *ph, const char *name, size_t len,
		       uint32_t pid)
{
	struct rdt_ob *o = begin(s);

	rdt_ob_printf(o, "{%s,\"name\":", ph);
	rdt_ob_json_str(o, name, len);
	rdt_ob_printf(o, ",\"cat\":\"collective\",\"pid\":%u,\"tid\":%u,"
		"\"ts\":", pid, ev->rec.hdr.pid);
	ts(s->priv, ev->ts - s->first_ts);
	args(o, ev);
	rdt_ob_c(o, '}');
}

/*
 * A USDT-marked collective (rdma-ring-allreduce) as one slice from its
 * begin to its end mark, on a track per rank process: the marks come in
 * pairs per process, so B/E nest.  A begin whose end was not traced stays
 * open to the trace's end, which is what happened.
 */
static void coll_span(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_ev_coll_mark *m = &ev->rec.coll_mark;
	uint32_t tid = ev->rec.hdr.pid;
	uint32_t pid = coll_track(s, ev, m->rank, m->nranks);
	char name[80];

	if (m->phase) {
		struct rdt_ob *o = begin(s);

		rdt_ob_printf(o, "{\"ph\":\"E\",\"pid\":%u,\"tid\":%u,\"ts\":",
			pid, tid);
		ts(s->priv, ev->ts - s->first_ts);
		rdt_ob_c(o, '}');
		return;
	}
	snprintf(name, sizeof(name), "%s %" PRIu64 " B #%" PRIu64,
		 m->op == 1 ? "allreduce" : "collective", (uint64_t)m->bytes,
		 (uint64_t)m->seq);
	coll_named(s, ev, "\"ph\":\"B\"", name, sizeof(name), pid);
}

/* A rank's step mark (ABI 1.14): an instant inside its collective's slice. */
static void coll_step_mark(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_ev_coll_step *m = &ev->rec.coll_step;
	uint32_t pid = coll_track(s, ev, m->rank, m->nranks);
	char name[48];

	snprintf(name, sizeof(name), "step %u/%u", m->step, m->steps);
	coll_named(s, ev, "\"ph\":\"i\",\"s\":\"t\"", name, sizeof(name), pid);
}

/* ---- NCCL profiler plugin: nested slices per rank, flows coll -> WR ---- */

static struct np_open *np_find(struct pf *p, uint32_t host, uint32_t pid,
			       uint64_t id)
{
	return (struct np_open *)rdt_np_open_find(&p->np, host, pid, id);
}

/*
 * Lanes of a rank's track group (256 tids a rank): what runs where in NCCL.
 * API 0, collectives 1, kernel, proxy and net channels 64 each from 2, 66
 * and 130, proxy control 194, then the GPU's own channel spans.  The GPU
 * lanes start after proxy control: sharing its tid, a rank's GPU ch 0
 * slices went under whichever name came first.
 */
#define NP_LANE_CTRL	194
#define NP_LANE_GPU	(NP_LANE_CTRL + 1)
#define NP_GPU_LANES	(256 - NP_LANE_GPU)

static uint32_t np_lane(const struct np_open *e, char *name, size_t len,
			int rank)
{
	uint32_t ch = e->channel < 0 ? 0 : (uint32_t)e->channel % 64;

	switch (e->start.rec.hdr.type) {
	case RDT_EV_NP_GROUP_API:
	case RDT_EV_NP_COLL_API:
	case RDT_EV_NP_P2P_API:
	case RDT_EV_NP_KERNEL_LAUNCH:
	case RDT_EV_NP_GROUP:
		snprintf(name, len, "rank %d: API, groups", rank);
		return 0;
	case RDT_EV_NP_COLL:
	case RDT_EV_NP_P2P:
		snprintf(name, len, "rank %d: collectives, P2P", rank);
		return 1;
	case RDT_EV_NP_KERNEL_CH:
		snprintf(name, len, "rank %d: kernel ch %u", rank, ch);
		return 2 + ch;
	case RDT_EV_NP_PROXY_OP:
	case RDT_EV_NP_PROXY_STEP:
		snprintf(name, len, "rank %d: proxy ch %u", rank, ch);
		return 66 + ch;
	case RDT_EV_NP_NET_IB:
	case RDT_EV_NP_NET_SOCK:
	case RDT_EV_NP_NET:
		snprintf(name, len, "rank %d: net ch %u", rank, ch);
		return 130 + ch;
	}
	snprintf(name, len, "rank %d: proxy control", rank);
	return NP_LANE_CTRL;
}

static void np_slice_name(const union rdt_record *r, char *name, size_t len)
{
	switch (r->hdr.type) {
	case RDT_EV_NP_COLL:
		snprintf(name, len, "%.16s #%" PRIu64 " %.16s/%.8s", r->np_coll.func,
			 (uint64_t)r->np_coll.seq, r->np_coll.algo, r->np_coll.proto);
		break;
	case RDT_EV_NP_P2P:
		snprintf(name, len, "%.16s peer %d", r->np_p2p.func, r->np_p2p.peer);
		break;
	case RDT_EV_NP_COLL_API:
	case RDT_EV_NP_P2P_API:
		snprintf(name, len, "%.16s()", r->np_api.func);
		break;
	case RDT_EV_NP_PROXY_OP:
		snprintf(name, len, "%s peer %d", r->np_proxy_op.is_send ?
			 "send" : "recv", r->np_proxy_op.peer);
		break;
	case RDT_EV_NP_PROXY_STEP:
		snprintf(name, len, "step %d", r->np_proxy_step.step);
		break;
	case RDT_EV_NP_NET_IB:
		snprintf(name, len, "WR qpn %u %" PRIu64 " B", r->np_net_ib.qpn,
			 (uint64_t)r->np_net_ib.length);
		break;
	default:
		snprintf(name, len, "%s", rdt_np_type_name(r->np_stop.ids.ntype));
	}
}

static void np_start(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct pf *p = s->priv;
	struct rdt_np_open_ent *po;
	struct np_open *par, *e;

	e = (struct np_open *)rdt_np_open_start(&p->np, ev,
			ev->rec.hdr.type == RDT_EV_NP_COLL ||
			ev->rec.hdr.type == RDT_EV_NP_P2P, &po);
	if (!e)
		return;
	par = (struct np_open *)po;
	e->start = *ev;
	e->channel = ev->rec.hdr.type == RDT_EV_NP_PROXY_OP ?
		     (int32_t)ev->rec.np_proxy_op.channel :
		     ev->rec.hdr.type == RDT_EV_NP_KERNEL_CH ?
		     (int32_t)ev->rec.np_kernel_ch.channel :
		     par ? par->channel : -1;
	if (e->channel >= 0 && ev->rec.hdr.type != RDT_EV_NP_PROXY_OP &&
	    ev->rec.hdr.type != RDT_EV_NP_KERNEL_CH && !par)
		e->channel = -1;
}

/* The host learnt of GPU stamp @gpu at @ts: the process's offset so far
 * (NULL if it cannot be kept). */
static const struct np_gpu *np_gpu_pair(struct pf *p, uint32_t host,
					uint32_t pid, uint64_t ts, uint64_t gpu)
{
	int64_t d = (int64_t)(ts - gpu);
	struct np_gpu *g = NULL;

	for (size_t i = 0; i < p->ngpu; i++)
		if (p->gpu[i].host == host && p->gpu[i].pid == pid)
			g = &p->gpu[i];
	if (!g) {
		struct np_gpu *v = realloc(p->gpu, (p->ngpu + 1) * sizeof(*v));

		if (!v)
			return NULL;
		p->gpu = v;
		g = &v[p->ngpu++];
		g->host = host;
		g->pid = pid;
		g->min_diff = d;
	}
	if (d < g->min_diff)
		g->min_diff = d;
	return g;
}

/*
 * A kernel channel's GPU span on its own lane, on the trace clock: the
 * globaltimer plus the smallest host - GPU difference seen so far (a
 * streamed trace cannot wait for the last; --stats and SQLite use the
 * last, and the slice carries the offset it used).
 */
static void np_gpu_slice(struct rdt_sink *s, const struct np_open *e,
			 uint32_t pid, uint32_t tid_base, int rank)
{
	struct pf *p = s->priv;
	const struct rdt_event *st = &e->start;
	uint64_t g0 = st->rec.np_kernel_ch.gpu_start, at;
	uint32_t ch = (uint32_t)(e->channel < 0 ? 0 : e->channel);
	const struct np_gpu *g;
	struct rdt_ob *o;
	char tn[64];

	if (!g0 || e->gpu_stop < g0)
		return;
	g = np_gpu_pair(p, st->host, st->rec.hdr.pid, st->ts, g0);
	if (!g)
		return;
	at = g0 + (uint64_t)g->min_diff;
	if (at < s->first_ts)
		return;
	snprintf(tn, sizeof(tn), "rank %d: GPU ch %u (globaltimer)", rank, ch);
	track(s, pid, tid_base + NP_LANE_GPU + ch % NP_GPU_LANES, "", tn);
	o = begin(s);
	rdt_ob_printf(o, "{\"ph\":\"X\",\"name\":\"GPU ch %u\",\"cat\":"
		"\"nccl_gpu\",\"pid\":%u,\"tid\":%u,\"ts\":", ch, pid,
		tid_base + NP_LANE_GPU + ch % NP_GPU_LANES);
	ts(s->priv, at - s->first_ts);
	rdt_ob_printf(o, ",\"dur\":");
	ts(s->priv, e->gpu_stop > g0 ? e->gpu_stop - g0 : 1);
	rdt_ob_printf(o, ",\"args\":{\"pid\":%u,\"gpu_start\":%" PRIu64
		",\"gpu_stop\":%" PRIu64 ",\"gpu_offset_ns\":%" PRId64 "}}",
		st->rec.hdr.pid, g0, e->gpu_stop, g->min_diff);
}

/* A v1, v2 Coll's fields that v5 has no place for: kept for its slice. */
static void np_old_keep(struct pf *p, const struct rdt_event *ev)
{
	const struct rdt_ev_np_coll_old *x = &ev->rec.np_coll_old;
	struct np_open *e = np_find(p, ev->host, ev->rec.hdr.pid, x->ids.id);

	if (!e || e->start.rec.hdr.type != RDT_EV_NP_COLL)
		return;
	memcpy(e->old.op, x->op, sizeof(e->old.op));
	e->old.traffic_bytes = x->traffic_bytes;
	e->old.is_collnet = x->is_collnet;
	e->old.is_nvls = x->is_nvls;
	e->old.has = x->has;
}

/* ... and as the slice's args, as the JSON sink names them. */
static void np_old_args(struct rdt_ob *o, const struct np_open *e)
{
	if (e->old.has & RDT_NP_OLD_OP) {
		rdt_ob_lit(o, ",\"op\":");
		rdt_ob_json_str(o, e->old.op, sizeof(e->old.op));
	}
	if (e->old.has & RDT_NP_OLD_TRAFFIC) {
		rdt_ob_lit(o, ",\"traffic_bytes\":");
		rdt_ob_u(o, e->old.traffic_bytes);
	}
	if (e->old.has & RDT_NP_OLD_COLLNET) {
		rdt_ob_lit(o, ",\"is_collnet\":");
		rdt_ob_u(o, e->old.is_collnet);
	}
	if (e->old.has & RDT_NP_OLD_NVLS) {
		rdt_ob_lit(o, ",\"is_nvls\":");
		rdt_ob_u(o, e->old.is_nvls);
	}
}

/* At its stop, the event is one complete slice on its rank's lane, and a
 * WR gets a flow from its collective. */
static void np_stop(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct pf *p = s->priv;
	struct np_open *e = np_find(p, ev->host, ev->rec.hdr.pid,
				    ev->rec.np_stop.ids.id);
	const struct rdt_event *st;
	struct np_open *c;
	uint32_t pid, tid, lane;
	char tn[64], name[96];
	struct rdt_ob *o;

	if (!e || e->o.stopped)
		return;
	st = &e->start;
	pid = nccl_track(s, st->rec.np_stop.ids.comm_id, -1, &tid);
	lane = np_lane(e, tn, sizeof(tn), st->rec.np_stop.ids.rank);
	tid = 1000 + (uint32_t)(st->rec.np_stop.ids.rank < 0 ? 0 :
				st->rec.np_stop.ids.rank % 4096) * 256 + lane;
	track(s, pid, tid, "", tn);
	np_slice_name(&st->rec, name, sizeof(name));
	o = begin(s);
	rdt_ob_printf(o, "{\"ph\":\"X\",\"name\":");
	rdt_ob_json_str(o, name, sizeof(name));
	rdt_ob_printf(o, ",\"cat\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":",
		rdt_type_name(st->rec.hdr.type), pid, tid);
	ts(s->priv, st->ts - s->first_ts);
	rdt_ob_printf(o, ",\"dur\":");
	ts(s->priv, ev->ts > st->ts ? ev->ts - st->ts : 1);
	rdt_ob_printf(o, ",\"args\":{\"pid\":%u", st->rec.hdr.pid);
	/* the start or the stop came out of place (issue 38) */
	if ((st->flags | ev->flags) & RDT_EVF_LATE)
		rdt_ob_lit(o, ",\"late\":true");
	if (e->gpu_stop && st->rec.hdr.type == RDT_EV_NP_KERNEL_CH)
		rdt_ob_printf(o, ",\"gpu_ns\":%" PRIu64,
			(uint64_t)(e->gpu_stop - st->rec.np_kernel_ch.gpu_start));
	rdt_ob_fields(&st->rec, o);
	np_old_args(o, e);
	rdt_ob_lit(o, "}}");
	if (e->gpu_stop && st->rec.hdr.type == RDT_EV_NP_KERNEL_CH)
		np_gpu_slice(s, e, pid, tid - lane, st->rec.np_stop.ids.rank);
	c = (struct np_open *)rdt_np_open_coll(&p->np, &e->o);
	if (c && st->rec.hdr.type == RDT_EV_NP_NET_IB) {
		uint32_t ctid = 1000 + (uint32_t)(c->start.rec.np_stop.ids.rank < 0 ?
				0 : c->start.rec.np_stop.ids.rank % 4096) * 256 + 1;

		begin(s);
		rdt_ob_printf(o, "{\"ph\":\"s\",\"name\":\"coll->wr\",\"cat\":"
			"\"nccl\",\"id\":\"np%" PRIx64 "\",\"pid\":%u,\"tid\":%u,"
			"\"ts\":", (uint64_t)st->rec.np_stop.ids.id, pid, ctid);
		ts(s->priv, c->start.ts - s->first_ts);
		rdt_ob_c(o, '}');
		begin(s);
		rdt_ob_printf(o, "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"coll->wr\","
			"\"cat\":\"nccl\",\"id\":\"np%" PRIx64 "\",\"pid\":%u,"
			"\"tid\":%u,\"ts\":", (uint64_t)st->rec.np_stop.ids.id, pid, tid);
		ts(s->priv, st->ts - s->first_ts);
		rdt_ob_c(o, '}');
	}
	/* NCCL stops a Coll or P2p at enqueue, before its children start:
	 * np_open keeps it for their flows. */
	rdt_np_open_stop(&p->np, &e->o, ev->ts);
}

static void np_event(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct pf *p = s->priv;
	struct np_open *e;

	rdt_np_open_linger(&p->np, ev->ts);
	switch (ev->rec.hdr.type) {
	case RDT_EV_NP_STOP:
		np_stop(s, ev);
		return;
	case RDT_EV_NP_STATE:
		e = np_find(p, ev->host, ev->rec.hdr.pid, ev->rec.np_state.ids.id);
		if (e && ev->rec.np_state.state == RDT_NP_STATE_KERNEL_CH_STOP) {
			e->gpu_stop = ev->rec.np_state.arg;
			np_gpu_pair(p, ev->host, ev->rec.hdr.pid, ev->ts,
				    e->gpu_stop);
		}
		return;
	case RDT_EV_NP_COLL_OLD:	/* more of its Coll: no slice */
		np_old_keep(p, ev);
		return;
	case RDT_EV_NP_COMM_INIT:
	case RDT_EV_NP_COMM_FINI:
	case RDT_EV_NP_SKIP:
		return;
	}
	np_start(s, ev);
}

/*
 * A port counter: a counter track per (device, port, counter) in a
 * "port counters" process of its host, a point at each sample in which it
 * moved, with the value sysfs showed then (one series: Chrome's "C"
 * events draw every arg as one).
 */
static void counter(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_ev_port_counter *c = &ev->rec.port_counter;
	uint32_t pid = CTR_PID_BASE + ev->host;
	struct rdt_ob *o;
	char name[160];

	if (multi_host(s)) {
		pid = host_pid(s, ev->host, CTR_PID_BASE);
		host_track(s, ev->host, pid, 0, "port counters", NULL);
	} else if (!seen(s->priv, (uint64_t)pid << 32 | 0xffffffffu)) {
		snprintf(name, sizeof(name), "port counters (host %u)", ev->host);
		meta(s, pid, 0, "process_name", name);
	}
	snprintf(name, sizeof(name), "%.64s port %u %.64s", c->devname, c->port,
		 c->name);
	o = begin(s);
	rdt_ob_lit(o, "{\"ph\":\"C\",\"name\":");
	rdt_ob_json_str(o, name, sizeof(name));
	cat_pid_tid(s->priv, ev->rec.hdr.type, pid, 0);
	ts(s->priv, ev->ts - s->first_ts);
	rdt_ob_lit(o, ",\"args\":{\"value\":");
	rdt_ob_u(o, c->value);
	rdt_ob_c(o, '}');
	rdt_ob_c(o, '}');
}

static void pf_event(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct pf *p = s->priv;
	struct rdt_ob *o = &p->o;
	const union rdt_record *r = &ev->rec;
	uint64_t post_ts = 0, cqe_ts = 0, id;
	uint32_t qpn = 0, pid, tid;
	bool has_qpn;
	char name[96];

	switch (r->hdr.type) {
	case RDT_EV_SUBBUF:
	case RDT_EV_COMM:
		return;
	case RDT_EV_LOST:
		begin(s);
		rdt_ob_printf(o, "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"LOST %" PRIu64
			" events\",\"pid\":%u,\"tid\":0,\"ts\":", (uint64_t)r->lost.count,
			MISC_PID);
		ts(s->priv, ev->ts - s->first_ts);
		args(o, ev);
		rdt_ob_c(o, '}');
		return;
	case RDT_EV_NCCL_CALL:
		pid = nccl_track(s, r->nccl_call.comm_hash, r->nccl_call.rank, &tid);
		slice(s, ev, pid, tid, rdt_nccl_fn_name(r->nccl_call.fn),
		      r->nccl_call.duration_ns);
		return;
	case RDT_EV_NCCL_COMM:
		pid = nccl_track(s, r->nccl_comm.comm_hash, r->nccl_comm.rank, &tid);
		slice(s, ev, pid, tid, "comm init", 0);
		return;
	case RDT_EV_TCP_RETRANSMIT:
		pid = host_pid(s, ev->host, MISC_PID);
		host_track(s, ev->host, pid, 1, "host events", "tcp retransmits");
		slice(s, ev, pid, 1, "tcp_retransmit", 0);
		return;
	case RDT_EV_COLL_MARK:
		coll_span(s, ev);
		return;
	case RDT_EV_COLL_STEP:
		coll_step_mark(s, ev);
		return;
	case RDT_EV_STUCK:
	case RDT_EV_UNSTUCK: {
		/* --stuck's reports on their own track: each stuck item as
		 * long as it has waited, the cause as an instant, and the
		 * episode, at its end, as a span of its whole length. */
		const struct rdt_ev_stuck *k = &r->stuck;

		pid = host_pid(s, ev->host, MISC_PID);
		host_track(s, ev->host, pid, 2, "host events", "stuck");
		if (r->hdr.type == RDT_EV_UNSTUCK)
			snprintf(name, sizeof(name), "stuck (episode %u)", k->episode);
		else if (k->kind == RDT_STUCK_QP)
			snprintf(name, sizeof(name), "stuck qp 0x%x wr_id %llu",
				 k->qpn, (unsigned long long)k->wr_id);
		else if (k->kind == RDT_STUCK_COLL)
			snprintf(name, sizeof(name), "stuck %.40s rank %d seq %llu",
				 k->text, k->rank, (unsigned long long)k->seq);
		else
			snprintf(name, sizeof(name), "stuck: %.88s", k->text);
		slice(s, ev, pid, 2, name,
		      k->kind == RDT_STUCK_CAUSE && r->hdr.type == RDT_EV_STUCK ?
		      0 : k->waits_ns);
		return;
	}
	case RDT_EV_PORT_COUNTER:
		counter(s, ev);
		return;
	case RDT_NP_TYPE_FIRST ... RDT_NP_TYPE_LAST:
		np_event(s, ev);
		return;
	}
	has_qpn = rdt_record_qpn(r, &qpn);
	pid = dev_track(s, ev, qpn, has_qpn, &tid);
	if (r->hdr.type == RDT_EV_POST_SEND || r->hdr.type == RDT_EV_VERBS_POST_SEND) {
		slice2(s, ev, pid, tid, rdt_type_name(r->hdr.type),
		       rdt_wr_opcode_name(r->post_send.opcode), rdt_record_dur(r));
	} else if (rdt_is_completion(r)) {
		slice2(s, ev, pid, tid,
		       r->hdr.type == RDT_EV_RXE_CQE ? "cqe" :
		       r->hdr.type == RDT_EV_VERBS_WC ? "verbs_wc" : "wc",
		       rdt_wc_status_name(r->hdr.type == RDT_EV_RXE_CQE ?
					  r->rxe_cqe.status : r->wc.status),
		       rdt_record_dur(r));
	} else {
		if (r->hdr.type == RDT_EV_QP_MODIFY)
			snprintf(name, sizeof(name), "modify %s->%s",
				 rdt_qp_state_name(r->qp_modify.old_state),
				 rdt_qp_state_name(r->qp_modify.cur_state));
		else
			snprintf(name, sizeof(name), "%s", rdt_type_name(r->hdr.type));
		slice(s, ev, pid, tid, name, rdt_record_dur(r));
	}
	id = rdt_wrmatch_event2(p->m, ev, &post_ts, &cqe_ts);
	/* post -> rxe's CQE -> the poll: the CQE a step of the arrow where
	 * the QP is polled, its end where it is not */
	if (id)
		flow(s, ev, pid, tid, id,
		     !rdt_is_completion(r) ? FLOW_START :
		     r->hdr.type == RDT_EV_RXE_CQE ? FLOW_STEP : FLOW_END);
}

static int pf_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct pf *p = s->priv;

	pf_event(s, ev);
	return rdt_ob_end(&p->o);
}

static int pf_close(struct rdt_sink *s, struct rdt_reader *r)
{
	struct pf *p = s->priv;
	struct rdt_ob *o = &p->o;
	int ret;

	rdt_ob_printf(o, "\n],\"otherData\":{\"generator\":\"rdmatrace %s\","
		"\"ts_base_ns\":\"%" PRIu64 "\",\"time_base\":\"%s\","
		"\"nccl_times\":\"enqueue (uretprobe), not GPU execution\","
		"\"lost\":\"%" PRIu64 "\",\"unknown\":\"%" PRIu64 "\"",
		RDT_LIB_VERSION, s->first_ts,
		rdt_reader_time_base(r) == RDT_TIME_REALTIME ? "realtime" : "monotonic",
		rdt_reader_lost(r), rdt_reader_unknown(r));
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats st;
		char key[32];

		rdt_reader_source_stats(r, i, &st);
		snprintf(key, sizeof(key), "source%u", i);
		rdt_ob_printf(o, ",\"%s\":", key);
		rdt_ob_json_str(o, st.name, 4096);
		rdt_ob_printf(o, ",\"%s_lost\":\"%" PRIu64 "\"", key, st.lost);
		for (uint32_t c = 0; c < st.ncpus; c++)
			if (st.lost_cpu[c])
				rdt_ob_printf(o, ",\"%s_cpu%u_lost\":\"%" PRIu64 "\"",
					key, c, st.lost_cpu[c]);
	}
	rdt_ob_printf(o, "}}\n");
	ret = rdt_ob_flush(o);
	rdt_ob_free(o);
	rdt_wrmatch_free(p->m);
	rdt_np_open_free(&p->np);
	free(p->gpu);
	free(p->seen);
	free(p->comms);
	free(p);
	return ret;
}

static int pf_flush(struct rdt_sink *s)
{
	return rdt_ob_flush(&((struct pf *)s->priv)->o);
}

static const struct rdt_sink_ops pf_ops = {
	.write = pf_write, .close = pf_close, .flush = pf_flush,
};

int rdt_sink_perfetto_init(struct rdt_sink *s)
{
	struct pf *p = calloc(1, sizeof(*p));

	if (!p || !(p->m = rdt_wrmatch_new()) || rdt_ob_init(&p->o, s) < 0) {
		if (p)
			rdt_wrmatch_free(p->m);
		free(p);
		return -ENOMEM;
	}
	rdt_np_open_init(&p->np, sizeof(struct np_open), NULL, NULL);
	p->sep = "\n";
	p->seplen = 1;
	s->priv = p;
	s->ops = &pf_ops;
	rdt_ob_lit(&p->o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
	meta(s, MISC_PID, 0, "process_name", "rdmatrace");
	return rdt_ob_end(&p->o);
}
