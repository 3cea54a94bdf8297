// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* --stats: per-QP counts, WR latency, per-collective bandwidth, drops. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Latency samples, ns, in arrival order. */
struct lat {
	uint64_t *v;
	size_t n, cap;
};

struct qp_stat {
	uint32_t host, dev, qpn;
	char devname[RDT_NAME_LEN + 1];
	uint64_t sends, recvs, doorbells, wcs, wc_errors, rxe_cqes, modifies,
		 send_bytes, retries;
	uint32_t pid;			/* its last post's: the owner */
	/* The QP's first completion with an error, and the flushes of the
	 * same kind of record after it ("completion with error 12": which
	 * QP, which WR, when, and what went down with it). */
	struct {
		uint64_t ts, wr_id, flushed;
		uint32_t status, vendor_err;
		uint16_t type;		/* 0: none yet */
	} err;
	/* Its WRs' latencies, ns: the application's post -> its poll, and on
	 * rxe the same split at rxe's CQE (post -> CQE, CQE -> poll). */
	struct lat post_poll, post_cqe, cqe_poll;
	struct qp_stat *next;
};

struct coll_stat {
	uint32_t fn;
	int32_t nranks;
	uint64_t bytes, calls, total_ns, errors;
	struct coll_stat *next;
};

#define QP_BUCKETS 1024
#define HIST_BUCKETS 48

struct rdt_stats {
	struct qp_stat *qps[QP_BUCKETS];
	size_t nqps;
	struct coll_stat *colls;
	struct rdt_wrmatch *m;
	uint64_t *lat;
	size_t nlat, caplat;
	/* WRs rxe completed (CQE) and the process then polled: CQE -> poll */
	struct lat poll_lat;
	bool sorted;
	uint64_t hist[HIST_BUCKETS];	/* [i]: 2^i <= ns < 2^(i+1) */
	uint64_t unmatched;
	uint64_t types[RDT_EV_MAX + 1];
	struct rdt_np_stats *np;
	struct rdt_ctr_stats *ctr;
	struct rdt_slow *slow;
	/* rxe packets sent on one host and received on another */
	struct rdt_xpairs *xp;
	bool xp_failed;
};

RDT_EXPORT struct rdt_stats *rdt_stats_new(void)
{
	struct rdt_stats *st = calloc(1, sizeof(*st));

	if (st && (!(st->m = rdt_wrmatch_new()) ||
		   !(st->slow = rdt_slow_new()) ||
		   !(st->np = rdt_np_stats_new(st->slow)) ||
		   !(st->ctr = rdt_ctr_stats_new()))) {
		rdt_wrmatch_free(st->m);
		rdt_np_stats_free(st->np);
		rdt_ctr_stats_free(st->ctr);
		rdt_slow_free(st->slow);
		free(st);
		return NULL;
	}
	return st;
}

RDT_EXPORT void rdt_stats_free(struct rdt_stats *st)
{
	if (!st)
		return;
	for (int i = 0; i < QP_BUCKETS && st->nqps; i++)
		while (st->qps[i]) {
			struct qp_stat *n = st->qps[i]->next;

			free(st->qps[i]->post_poll.v);
			free(st->qps[i]->post_cqe.v);
			free(st->qps[i]->cqe_poll.v);
			free(st->qps[i]);
			st->qps[i] = n;
			st->nqps--;
		}
	while (st->colls) {
		struct coll_stat *n = st->colls->next;

		free(st->colls);
		st->colls = n;
	}
	rdt_wrmatch_free(st->m);
	rdt_np_stats_free(st->np);
	rdt_ctr_stats_free(st->ctr);
	rdt_slow_free(st->slow);
	rdt_xpairs_free(st->xp);
	free(st->lat);
	free(st->poll_lat.v);
	free(st);
}

static struct qp_stat *qp_get(struct rdt_stats *st, const struct rdt_event *ev,
			      uint32_t qpn)
{
	uint32_t dev = ev->rec.hdr.dev;
	unsigned int b = (qpn * 2654435761u ^ dev * 40503u ^ ev->host) % QP_BUCKETS;
	struct qp_stat *q;

	for (q = st->qps[b]; q; q = q->next)
		if (q->qpn == qpn && q->dev == dev && q->host == ev->host)
			return q;
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->host = ev->host;
	q->dev = dev;
	q->qpn = qpn;
	q->next = st->qps[b];
	st->qps[b] = q;
	st->nqps++;
	return q;
}

#define WC_WR_FLUSH_ERR 5	/* enum ib_wc_status, ibv_wc_status */

static void qp_error(struct qp_stat *q, const struct rdt_event *ev, uint32_t status,
		     uint32_t vendor_err, uint64_t wr_id)
{
	if (!status)
		return;
	if (!q->err.type) {
		q->err.type = ev->rec.hdr.type;
		q->err.ts = ev->ts;
		q->err.status = status;
		q->err.vendor_err = vendor_err;
		q->err.wr_id = wr_id;
	} else if (q->err.type == ev->rec.hdr.type && status == WC_WR_FLUSH_ERR) {
		q->err.flushed++;
	}
}

/* Append @x to a growing array; false (and nothing kept) without memory. */
static bool push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		/* a QP's own start small: a trace can have thousands */
		size_t c = *cap ? *cap * 2 : 16;
		uint64_t *nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return false;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return true;
}

static void add_latency(struct rdt_stats *st, uint64_t ns)
{
	int b = 0;

	if (!push_u64(&st->lat, &st->nlat, &st->caplat, ns))
		return;
	st->sorted = false;
	while (b < HIST_BUCKETS - 1 && ns >> (b + 1))
		b++;
	st->hist[b]++;
}

/* CQE -> poll: how long rxe's completions waited to be polled. */
static void add_split(struct rdt_stats *st, uint64_t ns)
{
	push_u64(&st->poll_lat.v, &st->poll_lat.n, &st->poll_lat.cap, ns);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A matched completion of q's at ts: rxe's CQE, or the application's poll. */
static void qp_latency(struct qp_stat *q, bool cqe, uint64_t ts, uint64_t post_ts,
		       uint64_t cqe_ts)
{
	if (cqe) {
		push_u64(&q->post_cqe.v, &q->post_cqe.n, &q->post_cqe.cap, ts - post_ts);
		return;
	}
	push_u64(&q->post_poll.v, &q->post_poll.n, &q->post_poll.cap, ts - post_ts);
	if (cqe_ts && ts >= cqe_ts && cqe_ts >= post_ts)
		push_u64(&q->cqe_poll.v, &q->cqe_poll.n, &q->cqe_poll.cap, ts - cqe_ts);
}

/* p50, p99 and max of l into out[3], on a sorted copy; false if empty. */
static bool lat_quantiles(const struct lat *l, uint64_t out[3])
{
	static const double q[] = { 0.5, 0.99, 1.0 };
	uint64_t *v;

	if (!l->n || !(v = malloc(l->n * sizeof(*v))))
		return false;
	memcpy(v, l->v, l->n * sizeof(*v));
	qsort(v, l->n, sizeof(*v), u64_cmp);
	for (int i = 0; i < 3; i++)
		out[i] = v[(size_t)(q[i] * (double)(l->n - 1))];
	free(v);
	return true;
}

/* --stats: each QP's latencies, those it has. */
static void print_qp_latency(struct qp_stat **qv, FILE *o)
{
	bool any = false;

	for (size_t i = 0; qv && qv[i]; i++) {
		const struct qp_stat *q = qv[i];
		const struct lat *l[] = { &q->post_poll, &q->post_cqe, &q->cqe_poll };
		char dev[RDT_NAME_LEN + 16];

		if (!q->post_poll.n && !q->post_cqe.n)
			continue;
		if (!any)
			fprintf(o, "\n== per-QP WR latency, us: the application's post -> its poll; "
				"on rxe, post -> rxe's CQE and CQE -> poll ==\n%-4s %-10s %8s "
				"%8s %27s %8s %27s %27s\n", "host", "dev", "qpn",
				"polled", "post->poll p50/p99/max", "cqes",
				"post->cqe p50/p99/max", "cqe->poll p50/p99/max");
		any = true;
		if (*q->devname)
			snprintf(dev, sizeof(dev), "%s", q->devname);
		else
			snprintf(dev, sizeof(dev), "%u", q->dev);
		fprintf(o, "%-4u %-10s %8u", q->host, dev, q->qpn);
		for (int k = 0; k < 3; k++) {
			uint64_t v[3];
			char cell[64] = "-";

			if (k < 2)
				fprintf(o, " %8zu", l[k]->n);
			if (lat_quantiles(l[k], v))
				snprintf(cell, sizeof(cell), "%.2f/%.2f/%.2f", v[0] / 1e3,
					 v[1] / 1e3, v[2] / 1e3);
			fprintf(o, " %27s", cell);
		}
		fputc('\n', o);
	}
}

static void print_qp_latency_json(const struct qp_stat *q, FILE *o)
{
	static const char *const name[] = { "post_to_poll", "post_to_cqe", "cqe_to_poll" };
	const struct lat *l[] = { &q->post_poll, &q->post_cqe, &q->cqe_poll };
	const char *sep = "";

	if (!q->post_poll.n && !q->post_cqe.n)
		return;
	fputs(",\"latency\":{", o);
	for (int k = 0; k < 3; k++) {
		uint64_t v[3];

		if (!lat_quantiles(l[k], v))
			continue;
		fprintf(o, "%s\"%s\":{\"count\":%zu,\"p50_ns\":%" PRIu64 ",\"p99_ns\":%"
			PRIu64 ",\"max_ns\":%" PRIu64 "}", sep, name[k], l[k]->n, v[0], v[1],
			v[2]);
		sep = ",";
	}
	fputc('}', o);
}

/* The WRs seen completed twice, by rxe's CQE then by the poll: how long
 * their completions waited to be polled (the latency above is post ->
 * CQE for them).  On a sorted copy: printing leaves the stats as they are. */
static void split_print(const struct rdt_stats *st, FILE *o, bool json)
{
	static const char *const qn[] = { "p50", "p99", "max" };
	uint64_t v[3];

	if (!lat_quantiles(&st->poll_lat, v))
		return;
	if (json)
		fprintf(o, ",\"cqe_to_poll\":{\"count\":%zu", st->poll_lat.n);
	else
		fprintf(o, "  then polled (rxe's CQE -> the poll), %zu WRs:", st->poll_lat.n);
	for (size_t i = 0; i < 3; i++) {
		if (json)
			fprintf(o, ",\"%s_ns\":%" PRIu64, qn[i], v[i]);
		else
			fprintf(o, " %s %" PRIu64 " ns", qn[i], v[i]);
	}
	fputs(json ? "}" : "\n", o);
}

static bool is_collective(uint32_t fn)
{
	return fn >= RDT_NCCL_ALL_REDUCE && fn <= RDT_NCCL_RECV;
}

/* nccl-tests' size convention: the bytes of the whole buffer it reports. */
static uint64_t coll_bytes(const struct rdt_ev_nccl_call *c)
{
	uint64_t b = c->count * (uint64_t)rdt_nccl_type_size(c->datatype);

	switch (c->fn) {
	case RDT_NCCL_ALL_GATHER:
	case RDT_NCCL_REDUCE_SCATTER:
	case RDT_NCCL_ALL_TO_ALL:
		return b * (uint64_t)(c->nranks > 0 ? c->nranks : 1);
	}
	return b;
}

/* nccl-tests busbw factor (doc/PERFORMANCE.md). */
static double bus_factor(uint32_t fn, int n)
{
	if (n <= 0)
		return 1;
	switch (fn) {
	case RDT_NCCL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case RDT_NCCL_ALL_GATHER:
	case RDT_NCCL_REDUCE_SCATTER:
	case RDT_NCCL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	}
	return 1;
}

RDT_EXPORT void rdt_stats_add(struct rdt_stats *st, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	uint64_t post_ts = 0, cqe_ts = 0;
	struct qp_stat *q = NULL;
	uint32_t qpn;

	st->types[r->hdr.type <= RDT_EV_MAX ? r->hdr.type : 0]++;
	if (r->hdr.type >= RDT_NP_TYPE_FIRST && r->hdr.type <= RDT_NP_TYPE_LAST) {
		rdt_np_stats_add(st->np, ev);
		return;
	}
	if (r->hdr.type == RDT_EV_PORT_COUNTER) {
		rdt_ctr_stats_add(st->ctr, ev);
		rdt_slow_counter(st->slow, ev);
		return;
	}
	if (r->hdr.type == RDT_EV_COLL_MARK)
		rdt_slow_mark(st->slow, ev);
	if (r->hdr.type == RDT_EV_RXE_XMIT || r->hdr.type == RDT_EV_RXE_RCV) {
		if (!st->xp && !st->xp_failed &&
		    !(st->xp = rdt_xpairs_new(rdt_xpairs_cap())))
			st->xp_failed = true;
		if (st->xp)
			rdt_xpairs_add(st->xp, ev->host, ev->ts, r);
	}
	if (r->hdr.type == RDT_EV_COLL_MARK ||
	    (r->hdr.type == RDT_EV_NCCL_CALL && is_collective(r->nccl_call.fn)))
		rdt_ctr_stats_window(st->ctr, ev);
	if (rdt_record_qpn(r, &qpn)) {
		q = qp_get(st, ev, qpn);
		if (!q)
			return;
		if (ev->devname && *ev->devname)
			snprintf(q->devname, sizeof(q->devname), "%s", ev->devname);
	}
	switch (r->hdr.type) {
	case RDT_EV_POST_SEND:
	case RDT_EV_VERBS_POST_SEND:
		q->sends++;
		q->send_bytes += r->post_send.total_len;
		q->pid = r->hdr.pid;
		rdt_wrmatch_event(st->m, ev, &post_ts);
		break;
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_RECV:
		q->recvs++;
		q->pid = r->hdr.pid;
		rdt_wrmatch_event(st->m, ev, &post_ts);
		break;
	case RDT_EV_POST_SEND_DB:
		q->doorbells++;
		break;
	case RDT_EV_POST_FAIL:	/* its unposted WRs will not complete */
	case RDT_EV_VERBS_POST_FAIL:
		rdt_wrmatch_event(st->m, ev, &post_ts);
		break;
	case RDT_EV_QP_MODIFY:
		q->modifies++;
		break;
	case RDT_EV_RXE_RETRY:
		q->retries++;
		rdt_slow_retry(st->slow, ev->host, q->pid,
			       r->rxe_retry.kind == RDT_RXE_RNR);
		break;
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_RXE_CQE:
	case RDT_EV_VERBS_WC:
		if (r->hdr.type != RDT_EV_RXE_CQE) {
			q->wcs++;
			q->wc_errors += r->wc.status != 0;
			qp_error(q, ev, r->wc.status, r->wc.vendor_err, r->wc.wr_id);
		} else {
			q->rxe_cqes++;
			q->wc_errors += r->rxe_cqe.status != 0;
			qp_error(q, ev, r->rxe_cqe.status, 0, r->rxe_cqe.wr_id);
		}
		if (rdt_wrmatch_event2(st->m, ev, &post_ts, &cqe_ts) &&
		    ev->ts >= post_ts) {
			qp_latency(q, r->hdr.type == RDT_EV_RXE_CQE, ev->ts, post_ts, cqe_ts);
			/* A WR's first completion is its latency; a poll
			 * after rxe's CQE splits it (post -> CQE -> poll). */
			if (!cqe_ts) {
				add_latency(st, ev->ts - post_ts);
				rdt_slow_wr(st->slow, ev->host,
					    q->pid ? q->pid : r->hdr.pid, q->dev,
					    qpn, r->hdr.type == RDT_EV_RXE_CQE ?
					    r->rxe_cqe.wr_id : r->wc.wr_id,
					    post_ts, ev->ts);
			} else if (ev->ts >= cqe_ts && cqe_ts >= post_ts) {
				add_split(st, ev->ts - cqe_ts);
			}
		} else
			st->unmatched++;
		break;
	case RDT_EV_NCCL_CALL: {
		const struct rdt_ev_nccl_call *c = &r->nccl_call;
		uint64_t bytes = coll_bytes(c);
		struct coll_stat *cs;

		if (!is_collective(c->fn))
			break;
		for (cs = st->colls; cs; cs = cs->next)
			if (cs->fn == c->fn && cs->bytes == bytes &&
			    cs->nranks == c->nranks)
				break;
		if (!cs && (cs = calloc(1, sizeof(*cs)))) {
			cs->fn = c->fn;
			cs->bytes = bytes;
			cs->nranks = c->nranks;
			cs->next = st->colls;
			st->colls = cs;
		}
		if (!cs)
			break;
		cs->calls++;
		cs->total_ns += c->duration_ns;
		cs->errors += c->ret != 0;
		break;
	}
	}
}

/* --stats: each QP's first error completion, and what was flushed after. */
static void print_qp_errors(struct qp_stat **qv, FILE *o)
{
	bool any = false;

	for (size_t i = 0; qv && qv[i]; i++) {
		const struct qp_stat *q = qv[i];
		char dev[RDT_NAME_LEN + 16];

		if (!q->err.type)
			continue;
		if (!any)
			fprintf(o, "\n== completions with error, per QP: the first, and the "
				"flushes after it ==\n%-4s %-10s %8s %-16s %10s %18s %18s "
				"%8s %7s %-9s\n", "host", "dev", "qpn", "first_error",
				"vendor_err", "wr_id", "at_ns", "flushed", "errors",
				"seen_by");
		any = true;
		if (*q->devname)
			snprintf(dev, sizeof(dev), "%s", q->devname);
		else
			snprintf(dev, sizeof(dev), "%u", q->dev);
		fprintf(o, "%-4u %-10s %8u %-16s %#10x %#18" PRIx64 " %18" PRIu64
			" %8" PRIu64 " %7" PRIu64 " %-9s\n", q->host, dev, q->qpn,
			rdt_wc_status_name(q->err.status), q->err.vendor_err,
			q->err.wr_id, q->err.ts, q->err.flushed, q->wc_errors,
			rdt_type_name(q->err.type));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

RDT_EXPORT uint64_t rdt_stats_wr_matched(const struct rdt_stats *st)
{
	return st->nlat;
}

RDT_EXPORT uint64_t rdt_stats_wr_unmatched_completions(const struct rdt_stats *st)
{
	return st->unmatched;
}

/* Nearest-rank quantile: an observed value, easy to check independently. */
RDT_EXPORT int rdt_stats_wr_latency(const struct rdt_stats *cst, double q,
				    uint64_t *ns)
{
	struct rdt_stats *st = (struct rdt_stats *)cst;
	size_t i;

	if (!st->nlat)
		return -ENOENT;
	if (!st->sorted) {
		qsort(st->lat, st->nlat, sizeof(*st->lat), cmp_u64);
		st->sorted = true;
	}
	if (q <= 0)
		i = 0;
	else if (q >= 1)
		i = st->nlat - 1;
	else
		i = (size_t)ceil(q * (double)st->nlat) - 1;
	*ns = st->lat[i];
	return 0;
}

static int cmp_qp(const void *a, const void *b)
{
	const struct qp_stat *x = *(struct qp_stat *const *)a,
			     *y = *(struct qp_stat *const *)b;

	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->qpn < y->qpn ? -1 : x->qpn > y->qpn;
}

static struct qp_stat **sorted_qps(const struct rdt_stats *st)
{
	struct qp_stat **v = calloc(st->nqps + 1, sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (int i = 0; i < QP_BUCKETS; i++)
		for (struct qp_stat *q = st->qps[i]; q; q = q->next)
			v[n++] = q;
	qsort(v, n, sizeof(*v), cmp_qp);
	return v;
}

static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999, 1.0 };
static const char *const qnames[] = { "p50", "p90", "p99", "p99.9", "max" };

/* Messages seen on two hosts, and those whose receive is earlier than
 * their send on the merged timeline (0 once the clocks are aligned). */
struct xcheck {
	uint64_t matched, before;
};

static void xcheck_pair(void *ctx, uint32_t sh, uint32_t rh, uint64_t ts,
			uint64_t tr)
{
	struct xcheck *x = ctx;

	(void)sh;
	(void)rh;
	x->matched++;
	x->before += tr < ts;
}

/* false for a merge of one host: nothing to say. */
static bool xcheck(const struct rdt_stats *st, const struct rdt_reader *r,
		   struct xcheck *x)
{
	*x = (struct xcheck){ 0, 0 };
	if (!r || rdt_reader_nhosts(r) < 2)
		return false;
	if (st->xp)
		rdt_xpairs_join(st->xp, xcheck_pair, x);
	return true;
}

RDT_EXPORT void rdt_stats_print(const struct rdt_stats *st,
				const struct rdt_reader *r, FILE *o)
{
	struct qp_stat **qv = sorted_qps(st);
	uint64_t hmax = 0;

	fprintf(o, "\n== per-QP counts ==\n%-4s %-10s %8s %8s %8s %8s %8s %8s %6s %6s %12s\n",
		"host", "dev", "qpn", "sends", "recvs", "dbells", "wcs",
		"rxe_cqe", "errs", "modify", "send_bytes");
	for (size_t i = 0; qv && qv[i]; i++) {
		struct qp_stat *q = qv[i];
		char dev[RDT_NAME_LEN + 2];

		if (q->devname[0])
			snprintf(dev, sizeof(dev), "%s", q->devname);
		else
			snprintf(dev, sizeof(dev), "%u", q->dev);
		fprintf(o, "%-4u %-10s %8u %8" PRIu64 " %8" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %6" PRIu64 " %6" PRIu64
			" %12" PRIu64 "\n", q->host, dev, q->qpn, q->sends,
			q->recvs, q->doorbells, q->wcs, q->rxe_cqes,
			q->wc_errors, q->modifies, q->send_bytes);
	}
	print_qp_errors(qv, o);
	print_qp_latency(qv, o);
	free(qv);
	fprintf(o, "\n== WR latency (post -> completion) ==\nmatched %zu, "
		"completions without a traced post %" PRIu64 "\n", st->nlat,
		st->unmatched);
	for (size_t i = 0; st->nlat && i < sizeof(quantiles) / sizeof(*quantiles); i++) {
		uint64_t v = 0;

		rdt_stats_wr_latency(st, quantiles[i], &v);
		fprintf(o, "  %-6s %12" PRIu64 " ns\n", qnames[i], v);
	}
	split_print(st, o, false);
	for (int b = 0; b < HIST_BUCKETS; b++)
		if (st->hist[b] > hmax)
			hmax = st->hist[b];
	for (int b = 0; b < HIST_BUCKETS; b++) {
		char bar[41];
		int w;

		if (!st->hist[b])
			continue;
		w = (int)(st->hist[b] * 40 / hmax);
		memset(bar, '#', (size_t)w);
		bar[w] = 0;
		fprintf(o, "  [%12llu, %12llu) ns %8" PRIu64 " %s\n",
			b ? 1ull << b : 0ull, 1ull << (b + 1), st->hist[b], bar);
	}
	fprintf(o, "\n== NCCL collectives (enqueue time: uretprobe sees the "
		"host call, not GPU time) ==\n%-18s %6s %14s %8s %12s %10s %10s %6s\n",
		"function", "nranks", "bytes", "calls", "avg_us", "algbw_GB/s",
		"busbw_GB/s", "errors");
	for (struct coll_stat *c = st->colls; c; c = c->next) {
		double avg = c->calls ? (double)c->total_ns / (double)c->calls : 0;
		double alg = avg > 0 ? (double)c->bytes / avg : 0;	/* B/ns = GB/s */

		fprintf(o, "%-18s %6d %14" PRIu64 " %8" PRIu64 " %12.3f %10.3f %10.3f %6" PRIu64 "\n",
			rdt_nccl_fn_name(c->fn), c->nranks, c->bytes, c->calls,
			avg / 1000, alg, alg * bus_factor(c->fn, c->nranks), c->errors);
	}
	rdt_np_stats_print(st->np, o);
	rdt_ctr_stats_print(st->ctr, o);
	rdt_slow_print(st->slow, o);
	{
		struct xcheck x;

		if (xcheck(st, r, &x)) {
			fprintf(o, "\n== hosts ==\ncross-host messages: %" PRIu64
				" matched, %" PRIu64 " received before sent\n",
				x.matched, x.before);
			if (st->xp && rdt_xpairs_sampling(st->xp) > 1)
				fprintf(o, "  (1 in %" PRIu64 " message keys "
					"kept: memory cap)\n",
					rdt_xpairs_sampling(st->xp));
		}
	}
	fprintf(o, "\n== drops ==\n");
	for (unsigned int i = 0; r && i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats ss;

		rdt_reader_source_stats(r, i, &ss);
		fprintf(o, "%s: records %" PRIu64 " lost %" PRIu64
			" (kmod %" PRIu64 " bpf %" PRIu64 " user %" PRIu64
			" nccl-plugin %" PRIu64 ") unknown-type %" PRIu64
			" late %" PRIu64 "\n", ss.name,
			ss.records, ss.lost, ss.lost_by[RDT_SRC_KMOD],
			ss.lost_by[RDT_SRC_BPF], ss.lost_by[RDT_SRC_USER],
			ss.lost_by[RDT_SRC_NCCL_PLUGIN],
			ss.unknown, ss.late);
		for (uint32_t c = 0; c < ss.ncpus; c++)
			if (ss.lost_cpu[c])
				fprintf(o, "  cpu%u lost %" PRIu64 "\n", c, ss.lost_cpu[c]);
		/* Losses of unknown size: say so, as the dump's report does. */
		if (ss.subbufs_skipped)
			fprintf(o, "  relay sub-buffers skipped unread %" PRIu64
				" (events lost, count unknown)\n",
				ss.subbufs_skipped);
		if (ss.relay_repeats)
			fprintf(o, "  records relay returned twice, dropped %"
				PRIu64 "\n", ss.relay_repeats);
		if (ss.resyncs)
			fprintf(o, "  corrupt bytes %" PRIu64 " in %" PRIu64
				" %s (events lost, count unknown), the first "
				"at %s\n", ss.corrupt_bytes, ss.resyncs,
				ss.resyncs == 1 ? "place" : "places",
				ss.corrupt_first);
		if (ss.detached)
			fprintf(o, "  files detached while read %" PRIu64
				" (events lost, count unknown), the first %s\n",
				ss.detached, ss.detached_first);
		if (ss.skipped_files)
			fprintf(o, "  files not read, as not to be trusted %"
				PRIu64 "\n", ss.skipped_files);
	}
}

RDT_EXPORT void rdt_stats_print_json(const struct rdt_stats *st,
				     const struct rdt_reader *r, FILE *o)
{
	struct qp_stat **qv = sorted_qps(st);
	const char *sep = "";

	fprintf(o, "{\"type\":\"stats\",\"qps\":[");
	for (size_t i = 0; qv && qv[i]; i++) {
		struct qp_stat *q = qv[i];

		fprintf(o, "%s{\"host\":%u,\"dev\":%u,\"devname\":", sep, q->host, q->dev);
		rdt_json_str(o, q->devname, sizeof(q->devname));
		fprintf(o, ",\"qpn\":%u,\"sends\":%" PRIu64 ",\"recvs\":%" PRIu64
			",\"doorbells\":%" PRIu64 ",\"wcs\":%" PRIu64
			",\"rxe_cqes\":%" PRIu64 ",\"errors\":%" PRIu64
			",\"modifies\":%" PRIu64 ",\"send_bytes\":%" PRIu64
			",\"retries\":%" PRIu64, q->qpn, q->sends, q->recvs,
			q->doorbells, q->wcs, q->rxe_cqes, q->wc_errors,
			q->modifies, q->send_bytes, q->retries);
		if (q->err.type)
			fprintf(o, ",\"first_error\":{\"type\":\"%s\",\"ts_ns\":%" PRIu64
				",\"status\":\"%s\",\"vendor_err\":%u,\"wr_id\":%" PRIu64
				",\"flushed_after\":%" PRIu64 "}",
				rdt_type_name(q->err.type), q->err.ts,
				rdt_wc_status_name(q->err.status), q->err.vendor_err,
				q->err.wr_id, q->err.flushed);
		print_qp_latency_json(q, o);
		fputc('}', o);
		sep = ",";
	}
	free(qv);
	fprintf(o, "],\"wr_latency\":{\"matched\":%zu,\"unmatched_completions\":%"
		PRIu64, st->nlat, st->unmatched);
	for (size_t i = 0; st->nlat && i < sizeof(quantiles) / sizeof(*quantiles); i++) {
		uint64_t v = 0;

		rdt_stats_wr_latency(st, quantiles[i], &v);
		fprintf(o, ",\"%s_ns\":%" PRIu64, qnames[i], v);
	}
	split_print(st, o, true);
	fprintf(o, ",\"histogram\":[");
	sep = "";
	for (int b = 0; b < HIST_BUCKETS; b++)
		if (st->hist[b]) {
			fprintf(o, "%s{\"lo_ns\":%llu,\"hi_ns\":%llu,\"count\":%" PRIu64 "}",
				sep, b ? 1ull << b : 0ull, 1ull << (b + 1), st->hist[b]);
			sep = ",";
		}
	fprintf(o, "]},\"collectives\":[");
	sep = "";
	for (struct coll_stat *c = st->colls; c; c = c->next) {
		double avg = c->calls ? (double)c->total_ns / (double)c->calls : 0;
		double alg = avg > 0 ? (double)c->bytes / avg : 0;

		fprintf(o, "%s{\"fn\":\"%s\",\"nranks\":%d,\"bytes\":%" PRIu64
			",\"calls\":%" PRIu64 ",\"avg_ns\":%.1f,\"algbw_gbps\":%.6f,"
			"\"busbw_gbps\":%.6f,\"errors\":%" PRIu64 "}", sep,
			rdt_nccl_fn_name(c->fn), c->nranks, c->bytes, c->calls,
			avg, alg, alg * bus_factor(c->fn, c->nranks), c->errors);
		sep = ",";
	}
	fprintf(o, "]");
	rdt_np_stats_print_json(st->np, o);
	rdt_ctr_stats_print_json(st->ctr, o);
	rdt_slow_print_json(st->slow, o);
	{
		struct xcheck x;

		if (xcheck(st, r, &x))
			fprintf(o, ",\"cross_host\":{\"matched\":%" PRIu64
				",\"received_before_sent\":%" PRIu64
				",\"sampling\":%" PRIu64 "}", x.matched, x.before,
				st->xp ? rdt_xpairs_sampling(st->xp) : 1);
	}
	fprintf(o, ",\"sources\":[");
	sep = "";
	for (unsigned int i = 0; r && i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats ss;

		rdt_reader_source_stats(r, i, &ss);
		fprintf(o, "%s{\"name\":", sep);
		rdt_json_str(o, ss.name, 4096);
		fprintf(o, ",\"records\":%" PRIu64 ",\"lost\":%" PRIu64
			",\"unknown\":%" PRIu64 ",\"late\":%" PRIu64
			",\"subbufs_skipped\":%" PRIu64 ",\"relay_repeats\":%"
			PRIu64 ",\"corrupt_bytes\":%" PRIu64 ",\"resyncs\":%"
			PRIu64 ",\"detached\":%" PRIu64 ",\"skipped_files\":%"
			PRIu64 ",\"lost_cpu\":{", ss.records, ss.lost,
			ss.unknown, ss.late, ss.subbufs_skipped,
			ss.relay_repeats, ss.corrupt_bytes, ss.resyncs,
			ss.detached, ss.skipped_files);
		for (uint32_t c = 0, first = 1; c < ss.ncpus; c++)
			if (ss.lost_cpu[c]) {
				fprintf(o, "%s\"%u\":%" PRIu64, first ? "" : ",", c,
					ss.lost_cpu[c]);
				first = 0;
			}
		fprintf(o, "}}");
		sep = ",";
	}
	fprintf(o, "]}\n");
}
