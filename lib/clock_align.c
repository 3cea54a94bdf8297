// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Clocks of several hosts aligned from the RDMA traffic itself.
 *
 * A packet rxe sends (RDT_EV_RXE_XMIT, on host A) and the same packet
 * received (RDT_EV_RXE_RCV, on host B) are one message seen on both hosts:
 * it was received after it was sent.  With theta = clock(B) - clock(A)
 * (after each file header's realtime offset), an A->B message gives
 * theta <= t_recv(B) - t_send(A) and a B->A message
 * theta >= t_send(B) - t_recv(A).  For a constant offset the middle of
 * [max lower, min upper] is the estimate, half its width the error; with
 * drift, see below.
 *
 * Pairing: a host's addresses are the saddrs of its XMIT records; an XMIT
 * on A whose daddr is B's (B != A), of an RC opcode (BTH opcode < 0x20),
 * pairs with the RCV on B of the same (destination QPN, PSN, opcode) within
 * RDT_CLK_HORIZON_NS of it (PSNs wrap at 2^24, QPNs are reused), on the
 * device of B that sends from that address (QPNs are per device).  Of the
 * records of one key on one host, the earliest counts: a retransmit or a
 * duplicate is later than the first, so the bound stays valid.
 *
 * Memory stays bounded: a key is kept only if hash(key) mod M == 0; when
 * the table reaches its cap, M doubles and the keys it no longer takes are
 * evicted.  Both sides of a message have the same key, so the pairs of the
 * keys kept survive whole.
 *
 * Drift: a constant where one fits every bound (fit_const()), else a line
 * through the bounds (the slope that leaves the widest interval,
 * fit_line()), one over the whole trace where one fits
 * every bound, else one per window of RDT_CLK_WINDOW_NS of host B's clock,
 * joined linearly (constant before the first pair and after the last).
 *
 * Several hosts: each host is aligned to the first file's host (index 0)
 * through host pairs with bounds in both directions, breadth first.  A host
 * that no such path reaches keeps its header offset, and the report says so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RDT_CLK_HORIZON_NS	(10ull * 1000000000ull)
#define RDT_CLK_WINDOW_NS	(5000000000ull)
#define RDT_CLK_MIN_WINDOW_NS	(100000000ull)
#define RDT_CLK_MAX_ADDRS	4096
#define RDT_CLK_MAX_HOSTS	1024
#define NO_ADDR			UINT16_MAX
#define RCV			0x8000
#define RCV_ANY_DEV		0x7fff
#define NIL			UINT32_MAX

/* ---- the pair collector ------------------------------------------------- */

struct xent {
	uint64_t key;	/* qpn << 32 | psn << 8 | opcode */
	uint64_t ts;
	uint32_t next;
	uint16_t host;	/* the sender's (addr set) or the receiver's */
	/* sends: daddr's index; receives: RCV | the receiving device (its
	 * index, RCV_ANY_DEV past 15 bits) */
	uint16_t addr;
};

struct xaddr {
	uint8_t a[16];
	uint32_t family;
	uint32_t host;	/* UINT32_MAX: not yet known; AMBIG: two hosts */
	uint32_t dev;	/* the device that sends from it, as host */
};
#define AMBIG (UINT32_MAX - 1)

struct rdt_xpairs {
	struct xent *e;
	size_t n, cap;
	uint32_t *bucket;
	size_t nbucket;
	uint64_t m;		/* keep a key if (hash >> 32) % m == 0 */
	struct xaddr *addr;
	size_t naddr;
	uint16_t last_s, last_d;	/* cache of the last XMIT's addresses */
	bool have_last;
	uint64_t horizon;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

size_t rdt_xpairs_cap(void)
{
	const char *e = getenv("RDT_CLOCK_KEYS");
	unsigned long long v = e ? strtoull(e, NULL, 0) : 0;

	return v >= 1024 && v <= (1ull << 28) ? (size_t)v : RDT_XPAIRS_CAP;
}

struct rdt_xpairs *rdt_xpairs_new(size_t cap)
{
	struct rdt_xpairs *p = calloc(1, sizeof(*p));
	size_t nb = 1024;

	if (!p)
		return NULL;
	if (cap < 1024)
		cap = 1024;
	while (nb < cap)
		nb <<= 1;
	p->cap = cap;
	p->nbucket = nb;
	p->m = 1;
	p->horizon = RDT_CLK_HORIZON_NS;
	p->e = malloc(cap * sizeof(*p->e));
	p->bucket = malloc(nb * sizeof(*p->bucket));
	if (!p->e || !p->bucket) {
		rdt_xpairs_free(p);
		return NULL;
	}
	memset(p->bucket, 0xff, nb * sizeof(*p->bucket));
	return p;
}

void rdt_xpairs_free(struct rdt_xpairs *p)
{
	if (!p)
		return;
	free(p->e);
	free(p->bucket);
	free(p->addr);
	free(p);
}

uint64_t rdt_xpairs_sampling(const struct rdt_xpairs *p)
{
	return p->m;
}

static bool sampled(const struct rdt_xpairs *p, uint64_t h)
{
	return ((h >> 32) & (p->m - 1)) == 0;
}

/* M doubles; the entries it no longer takes go, the rest are rehashed. */
static void thin(struct rdt_xpairs *p)
{
	size_t j = 0;

	while (p->n >= p->cap * 3 / 4) {
		p->m <<= 1;
		j = 0;
		for (size_t i = 0; i < p->n; i++)
			if (sampled(p, mix(p->e[i].key)))
				p->e[j++] = p->e[i];
		p->n = j;
		if (p->m >= (1ull << 31))
			break;
	}
	memset(p->bucket, 0xff, p->nbucket * sizeof(*p->bucket));
	for (size_t i = 0; i < p->n; i++) {
		size_t b = mix(p->e[i].key) & (p->nbucket - 1);

		p->e[i].next = p->bucket[b];
		p->bucket[b] = (uint32_t)i;
	}
}

static uint16_t addr_index(struct rdt_xpairs *p, uint32_t family,
			   const uint8_t *a)
{
	size_t len = family == 10 /* AF_INET6 */ ? 16 : 4;
	struct xaddr *v;

	for (size_t i = 0; i < p->naddr; i++)
		if (p->addr[i].family == family && !memcmp(p->addr[i].a, a, len))
			return (uint16_t)i;
	if (p->naddr >= RDT_CLK_MAX_ADDRS)	/* < RCV */
		return NO_ADDR;
	v = realloc(p->addr, (p->naddr + 1) * sizeof(*v));
	if (!v)
		return NO_ADDR;
	p->addr = v;
	memset(&v[p->naddr], 0, sizeof(v[p->naddr]));
	memcpy(v[p->naddr].a, a, len);
	v[p->naddr].family = family;
	v[p->naddr].host = UINT32_MAX;
	v[p->naddr].dev = UINT32_MAX;
	return (uint16_t)p->naddr++;
}

static void add_entry(struct rdt_xpairs *p, uint64_t key, uint64_t ts,
		      uint32_t host, uint16_t addr)
{
	uint64_t h = mix(key);
	size_t b;

	if (!sampled(p, h))
		return;
	b = h & (p->nbucket - 1);
	for (uint32_t i = p->bucket[b]; i != NIL; i = p->e[i].next) {
		struct xent *e = &p->e[i];

		if (e->key != key || e->host != host || e->addr != addr)
			continue;
		if (ts + p->horizon > e->ts && e->ts + p->horizon > ts) {
			if (ts < e->ts)
				e->ts = ts;
			return;
		}
	}
	if (p->n == p->cap) {
		thin(p);
		if (p->n == p->cap || !sampled(p, h))
			return;
		b = h & (p->nbucket - 1);
	}
	p->e[p->n] = (struct xent){ key, ts, p->bucket[b], (uint16_t)host, addr };
	p->bucket[b] = (uint32_t)p->n++;
}

static uint64_t msg_key(uint32_t qpn, uint32_t psn, uint32_t opcode)
{
	return (uint64_t)(qpn & 0xffffff) << 32 | (uint64_t)(psn & 0xffffff) << 8 |
	       (opcode & 0xff);
}

void rdt_xpairs_add(struct rdt_xpairs *p, uint32_t host, uint64_t ts,
		    const union rdt_record *r)
{
	if (host >= RDT_CLK_MAX_HOSTS)
		return;
	if (r->hdr.type == RDT_EV_RXE_XMIT) {
		const struct rdt_ev_rxe_xmit *x = &r->rxe_xmit;
		uint16_t s, d;
		size_t len = x->family == 10 ? 16 : 4;

		if (p->have_last && !memcmp(p->addr[p->last_s].a, x->saddr, len) &&
		    !memcmp(p->addr[p->last_d].a, x->daddr, len) &&
		    p->addr[p->last_s].family == x->family &&
		    p->addr[p->last_s].host == host) {
			s = p->last_s;
			d = p->last_d;
		} else {
			s = addr_index(p, x->family, x->saddr);
			d = addr_index(p, x->family, x->daddr);
			if (s == NO_ADDR || d == NO_ADDR)
				return;
			if (p->addr[s].host == UINT32_MAX)
				p->addr[s].host = host;
			else if (p->addr[s].host != host)
				p->addr[s].host = AMBIG;
			if (p->addr[s].dev == UINT32_MAX)
				p->addr[s].dev = x->hdr.dev;
			else if (p->addr[s].dev != x->hdr.dev)
				p->addr[s].dev = AMBIG;
			p->last_s = s;
			p->last_d = d;
			p->have_last = true;
		}
		if (x->opcode >= 0x20)	/* not RC */
			return;
		add_entry(p, msg_key(x->qpn, x->psn, x->opcode), ts, host, d);
	} else if (r->hdr.type == RDT_EV_RXE_RCV) {
		const struct rdt_ev_rxe_rcv *x = &r->rxe_rcv;

		if (x->opcode >= 0x20)
			return;
		add_entry(p, msg_key(x->qpn, x->psn, x->opcode), ts, host,
			  RCV | (x->hdr.dev < RCV_ANY_DEV ? x->hdr.dev : RCV_ANY_DEV));
	}
}

/*
 * A file's rxe packets, as its source hands its records over again
 * (rdt_src_ops.rescan): in the order written, each on @realtime_offset +
 * its stamp (a single file's reader hands them out so).  An unknown type
 * is skipped; a bad record ends the pass over this file (the merge reports
 * it when it reaches it).
 */
int rdt_xpairs_add_raw(struct rdt_xpairs *p, uint32_t host,
		       int64_t realtime_offset, const void *raw, size_t len)
{
	union rdt_record rec;
	size_t used;
	enum rdt_decode_result d = rdt_decode(raw, len, &rec, &used, NULL);

	if (d != RDT_DEC_OK && d != RDT_DEC_UNKNOWN)
		return -EBADMSG;
	if (d == RDT_DEC_OK && (rec.hdr.type == RDT_EV_RXE_XMIT ||
				rec.hdr.type == RDT_EV_RXE_RCV))
		rdt_xpairs_add(p, host, rec.hdr.ts_ns + (uint64_t)realtime_offset,
			       &rec);
	return 0;
}

void rdt_xpairs_join(struct rdt_xpairs *p, rdt_xpair_fn fn, void *ctx)
{
	for (size_t b = 0; b < p->nbucket; b++)
		for (uint32_t i = p->bucket[b]; i != NIL; i = p->e[i].next) {
			const struct xent *s = &p->e[i];
			uint32_t to;

			uint32_t dev;

			if (s->addr & RCV)
				continue;
			to = p->addr[s->addr].host;
			if (to >= AMBIG || to == s->host)
				continue;
			/* a host's QPNs are per device: the receive on the
			 * device that sends from daddr, where that is known */
			dev = p->addr[s->addr].dev;
			dev = dev < RCV_ANY_DEV ? dev : RCV_ANY_DEV;
			for (uint32_t j = p->bucket[b]; j != NIL; j = p->e[j].next) {
				const struct xent *r = &p->e[j];

				if (!(r->addr & RCV) || r->key != s->key ||
				    r->host != to ||
				    (dev != RCV_ANY_DEV &&
				     (r->addr & RCV_ANY_DEV) != RCV_ANY_DEV &&
				     (r->addr & RCV_ANY_DEV) != dev) ||
				    r->ts >= s->ts + p->horizon ||
				    s->ts >= r->ts + p->horizon)
					continue;
				fn(ctx, s->host, to, s->ts, r->ts);
			}
		}
}

/* ---- the estimator ------------------------------------------------------ */

struct bound {
	uint64_t t;	/* on host hi's clock (header-aligned) */
	int64_t v;
	bool upper;
};

/* Bounds of theta = clock(hi) - clock(lo) for one host pair. */
struct hpair {
	struct bound *b;
	size_t n, cap;
	size_t nup, nlo;
};

struct knot {
	uint64_t t;
	int64_t v;
};

/* theta of a host pair as a function of one host's clock. */
struct clkfn {
	struct knot *k;
	size_t n;
};

struct rdt_clk_host {
	uint32_t parent;	/* UINT32_MAX: the reference, or not aligned */
	struct clkfn f;		/* clock(this) - clock(parent), at this clock */
	const struct rdt_clk_host *up;
	bool aligned;
	/* for the outputs: the pair that aligned it */
	int64_t offset_ns, error_ns;
	uint64_t pairs;
};

struct rdt_clock {
	uint32_t nhost;
	struct rdt_clk_host *h;
	struct hpair *pairs;	/* nhost * nhost, [lo * nhost + hi] */
	char *report;
	uint64_t sampling;
};

static void clkfn_free(struct clkfn *f)
{
	free(f->k);
	f->k = NULL;
	f->n = 0;
}

void rdt_clock_free(struct rdt_clock *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->nhost; i++)
		clkfn_free(&c->h[i].f);
	if (c->pairs)
		for (size_t i = 0; i < (size_t)c->nhost * c->nhost; i++)
			free(c->pairs[i].b);
	free(c->pairs);
	free(c->h);
	free(c->report);
	free(c);
}

static int64_t clkfn_at(const struct clkfn *f, uint64_t t)
{
	size_t lo = 0, hi;

	if (!f->n)
		return 0;
	if (f->n == 1 || t <= f->k[0].t)
		return f->k[0].v;
	if (t >= f->k[f->n - 1].t)
		return f->k[f->n - 1].v;
	hi = f->n - 1;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (f->k[mid].t <= t)
			lo = mid;
		else
			hi = mid;
	}
	return f->k[lo].v + (int64_t)((double)(f->k[hi].v - f->k[lo].v) *
				      (double)(t - f->k[lo].t) /
				      (double)(f->k[hi].t - f->k[lo].t));
}

/* clock(host) - clock(reference) at @ts of this host's (header) clock. */
int64_t rdt_clock_corr(const struct rdt_clk_host *h, uint64_t ts)
{
	int64_t c = 0;

	while (h && h->up) {
		int64_t d = clkfn_at(&h->f, ts);

		c += d;
		ts -= (uint64_t)d;
		h = h->up;
	}
	return c;
}

const struct rdt_clk_host *rdt_clock_host(const struct rdt_clock *c,
					  uint32_t host)
{
	return c && host < c->nhost && c->h[host].aligned && c->h[host].up ?
	       &c->h[host] : NULL;
}

bool rdt_clock_host_info(const struct rdt_clock *c, uint32_t host,
			 uint32_t *ref, int64_t *offset_ns, int64_t *error_ns,
			 uint64_t *pairs)
{
	const struct rdt_clk_host *h;

	if (!c || host >= c->nhost || !c->h[host].aligned || !c->h[host].up)
		return false;
	h = &c->h[host];
	*ref = h->parent;
	*offset_ns = h->offset_ns;
	*error_ns = h->error_ns;
	*pairs = h->pairs;
	return true;
}

const char *rdt_clock_report(const struct rdt_clock *c)
{
	return c && c->report ? c->report : "";
}

static void say(struct rdt_clock *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(struct rdt_clock *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rdt_str_vappend(&c->report, "\n", fmt, ap);
	va_end(ap);
}

static void on_pair(void *ctx, uint32_t sh, uint32_t rh, uint64_t ts,
		    uint64_t tr)
{
	struct rdt_clock *c = ctx;
	uint32_t lo = sh < rh ? sh : rh, hi = sh < rh ? rh : sh;
	struct hpair *p;
	struct bound b;

	if (hi >= c->nhost)
		return;
	p = &c->pairs[(size_t)lo * c->nhost + hi];
	if (sh == lo) {		/* lo -> hi: theta <= t_recv(hi) - t_send(lo) */
		b = (struct bound){ tr, (int64_t)(tr - ts), true };
		p->nup++;
	} else {		/* hi -> lo: theta >= t_send(hi) - t_recv(lo) */
		b = (struct bound){ ts, (int64_t)(ts - tr), false };
		p->nlo++;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		struct bound *v = realloc(p->b, cap * sizeof(*v));

		if (!v)
			return;
		p->b = v;
		p->cap = cap;
	}
	p->b[p->n++] = b;
}

static int cmp_bound(const void *a, const void *b)
{
	const struct bound *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

static double us(int64_t ns)
{
	return (double)ns / 1000.0;
}

/*
 * A line theta(t) = alpha + beta (t - tc) through bounds: for a slope beta
 * the bounds leave alpha in [max(lower - beta dt), min(upper - beta dt)],
 * whose width is a concave function of beta.  The slope that leaves the
 * widest interval is the one the messages contradict least; alpha is the
 * middle of its interval, the error half its width (negative: the bounds
 * cross for every slope within RDT_CLK_MAX_PPM).
 */
#define RDT_CLK_MAX_PPM	500.0	/* NTP's limit on a clock's frequency error */

struct fit {
	uint64_t tc, t0, t1;
	double beta;
	int64_t alpha, half;
	size_t nlo, nup;
};

static double width(const struct bound *b, size_t n, uint64_t tc, double beta,
		    double *mid)
{
	double lo = -1e300, up = 1e300;

	for (size_t i = 0; i < n; i++) {
		double v = (double)b[i].v - beta * (double)(int64_t)(b[i].t - tc);

		if (b[i].upper) {
			if (v < up)
				up = v;
		} else if (v > lo) {
			lo = v;
		}
	}
	*mid = lo + (up - lo) / 2;
	return up - lo;
}

static void fit_line(const struct bound *b, size_t n, struct fit *f)
{
	double l = -RDT_CLK_MAX_PPM * 1e-6, h = RDT_CLK_MAX_PPM * 1e-6, mid;
	uint64_t sum = 0;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < n; i++) {
		sum += b[i].t - b[0].t;
		f->nup += b[i].upper;
		f->nlo += !b[i].upper;
	}
	f->t0 = b[0].t;
	f->t1 = b[n - 1].t;
	f->tc = b[0].t + sum / n;
	for (int it = 0; it < 100; it++) {
		double m1 = l + (h - l) / 3, m2 = h - (h - l) / 3;

		if (width(b, n, f->tc, m1, &mid) < width(b, n, f->tc, m2, &mid))
			l = m1;
		else
			h = m2;
	}
	f->beta = (l + h) / 2;
	f->half = (int64_t)(width(b, n, f->tc, f->beta, &mid) / 2);
	f->alpha = (int64_t)mid;
}

/*
 * The same bounds with no slope: where a constant fits them, it is the
 * offset taken.  Over seconds of noisy one-way delays (TCG: hundreds of
 * microseconds) the widest slope is anything the noise allows, up to
 * 150 ppm where the clocks drift by less than 1, and a wrong slope is
 * farthest off at the ends of the trace, beyond the interval of its
 * middle.  A slope is taken only when the bounds need one.
 */
static bool fit_const(const struct bound *b, size_t n, struct fit *f)
{
	double mid, w = width(b, n, f->tc, 0, &mid);

	if (w < 0)
		return false;
	f->beta = 0;
	f->half = (int64_t)(w / 2);
	f->alpha = (int64_t)mid;
	return true;
}

static int64_t fit_at(const struct fit *f, uint64_t t)
{
	return f->alpha + (int64_t)(f->beta * (double)(int64_t)(t - f->tc));
}

static void crossed(struct rdt_clock *c, const char *nlo, const char *nhi,
		    const struct fit *f, size_t n)
{
	say(c, "clock offset %s - %s: bounds cross (by %.3f us at best, from "
	    "%zu message pairs): a broken assumption (a clock step, or "
	    "messages paired wrongly); header offset kept", nhi, nlo,
	    us(-2 * f->half), n);
}

/* What the windows of one host pair found. */
struct wstate {
	size_t used, seen;
	int64_t maxerr;
	double sum, minppm, maxppm;
	struct fit bad;
};

/*
 * A line through the bounds of one window, its ends as two knots; a window
 * no line fits is halved (the drift changed inside it) down to
 * RDT_CLK_MIN_WINDOW_NS.  -1 where even that crosses (ws->bad), else 0.
 */
static int window(const struct bound *b, size_t n, struct clkfn *f,
		  struct wstate *ws)
{
	struct fit w;
	size_t h = 0;

	if (!n)
		return 0;
	fit_line(b, n, &w);
	if (!w.nlo || !w.nup) {
		ws->seen++;
		return 0;
	}
	if (w.half < 0) {
		uint64_t mid = b[0].t + (b[n - 1].t - b[0].t) / 2;

		if (b[n - 1].t - b[0].t < RDT_CLK_MIN_WINDOW_NS) {
			ws->bad = w;
			return -1;
		}
		while (h < n && b[h].t <= mid)
			h++;
		if (window(b, h, f, ws) < 0)
			return -1;
		return window(b + h, n - h, f, ws);
	}
	ws->seen++;
	f->k[f->n++] = (struct knot){ w.t0, fit_at(&w, w.t0) };
	if (w.t1 > w.t0)
		f->k[f->n++] = (struct knot){ w.t1, fit_at(&w, w.t1) };
	if (w.half > ws->maxerr)
		ws->maxerr = w.half;
	if (!ws->used || w.beta * 1e6 < ws->minppm)
		ws->minppm = w.beta * 1e6;
	if (!ws->used || w.beta * 1e6 > ws->maxppm)
		ws->maxppm = w.beta * 1e6;
	ws->sum += (double)w.alpha;
	ws->used++;
	return 0;
}

/*
 * The offset function of one host pair into *f (knots on hi's clock), its
 * mean offset and error; false (and a report line) if none.  One line
 * through every bound where one fits them all (a constant frequency
 * error); else one per window of RDT_CLK_WINDOW_NS, joined linearly.
 */
static bool estimate(struct rdt_clock *c, struct hpair *p, const char *nlo,
		     const char *nhi, struct clkfn *f, int64_t *mean,
		     int64_t *err)
{
	struct wstate ws = { 0 };
	struct fit g;
	size_t nwin = 0, nused = 0, i = 0;
	int64_t maxerr = 0;
	double sum = 0;

	if (!p->n)
		return false;
	if (!p->nlo || !p->nup) {
		say(c, "clock offset %s - %s: header offset kept: message pairs "
		    "in one direction only (%zu %s->%s, %zu %s->%s)", nhi, nlo,
		    p->nup, nlo, nhi, p->nlo, nhi, nlo);
		return false;
	}
	qsort(p->b, p->n, sizeof(*p->b), cmp_bound);
	fit_line(p->b, p->n, &g);
	f->k = calloc(2 * p->n + 2, sizeof(*f->k));
	if (!f->k)
		return false;
	if (g.half >= 0) {
		double slope = g.beta * 1e6;
		bool flat = fit_const(p->b, p->n, &g);

		f->k[0] = (struct knot){ g.t0, fit_at(&g, g.t0) };
		f->k[1] = (struct knot){ g.t1, fit_at(&g, g.t1) };
		f->n = g.t1 > g.t0 ? 2 : 1;
		*mean = g.alpha;
		*err = g.half;
		say(c, "clock offset %s - %s: %.3f us (± %.3f us, from %zu message "
		    "pairs)", nhi, nlo, us(*mean), us(*err), p->n);
		if (flat)
			say(c, "clock drift %s - %s: none taken: a constant "
			    "offset fits every bound over %.3f s (the widest "
			    "line's slope, %.3f ppm, is not needed)", nhi, nlo,
			    (double)(g.t1 - g.t0) / 1e9, slope);
		else
			say(c, "clock drift %s - %s: %.3f ppm, one line over "
			    "the whole trace (%.3f us at the first message "
			    "pair, %.3f us at the last, %.3f s later)", nhi,
			    nlo, g.beta * 1e6, us(f->k[0].v),
			    us(fit_at(&g, g.t1)), (double)(g.t1 - g.t0) / 1e9);
		return true;
	}
	while (i < p->n) {
		uint64_t end = p->b[i].t + RDT_CLK_WINDOW_NS;
		size_t j = i;
		int r;

		while (j < p->n && p->b[j].t < end)
			j++;
		r = window(p->b + i, j - i, f, &ws);
		i = j;
		if (r < 0) {
			crossed(c, nlo, nhi, &ws.bad, p->n);
			clkfn_free(f);
			return false;
		}
	}
	nused = ws.used;
	nwin = ws.seen;
	maxerr = ws.maxerr;
	sum = ws.sum;
	if (!nused) {
		crossed(c, nlo, nhi, &g, p->n);
		clkfn_free(f);
		return false;
	}
	*mean = (int64_t)(sum / (double)nused);
	*err = maxerr;
	say(c, "clock offset %s - %s: %.3f us (± %.3f us, from %zu message pairs)",
	    nhi, nlo, us(*mean), us(*err), p->n);
	say(c, "clock drift %s - %s: %.3f ppm: no one line fits, so a line per "
	    "window of up to %.0f s (%zu of %zu windows had pairs both ways; "
	    "slopes %.3f to %.3f ppm), joined (%.3f us at the first message "
	    "pair, %.3f us at the last, %.3f s later)", nhi, nlo,
	    f->n > 1 ? (double)(f->k[f->n - 1].v - f->k[0].v) * 1e6 /
		       (double)(f->k[f->n - 1].t - f->k[0].t) : 0.0,
	    (double)RDT_CLK_WINDOW_NS / 1e9, nused, nwin, ws.minppm, ws.maxppm,
	    us(f->k[0].v), us(f->k[f->n - 1].v),
	    (double)(f->k[f->n - 1].t - f->k[0].t) / 1e9);
	return true;
}

/* The same function, on the other host's clock and negated. */
static int reverse(const struct clkfn *f, struct clkfn *out)
{
	out->k = malloc(f->n * sizeof(*out->k));
	if (!out->k)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++)
		out->k[i] = (struct knot){ f->k[i].t - (uint64_t)f->k[i].v,
					   -f->k[i].v };
	out->n = f->n;
	return 0;
}

/*
 * Estimate from the pairs collected in @x for @nhost hosts, named by
 * @names; host 0 is the reference.  NULL only without memory.
 */
struct rdt_clock *rdt_clock_estimate(struct rdt_xpairs *x, uint32_t nhost,
				     const char *const *names)
{
	struct rdt_clock *c = calloc(1, sizeof(*c));
	struct clkfn *fn;
	int64_t *mean, *err;
	uint32_t *queue, qh = 0, qt = 0;
	bool *edge;

	if (!c)
		return NULL;
	if (nhost > RDT_CLK_MAX_HOSTS)
		nhost = RDT_CLK_MAX_HOSTS;
	c->nhost = nhost;
	c->sampling = x->m;
	c->h = calloc(nhost, sizeof(*c->h));
	c->pairs = calloc((size_t)nhost * nhost, sizeof(*c->pairs));
	fn = calloc((size_t)nhost * nhost, sizeof(*fn));
	mean = calloc((size_t)nhost * nhost, sizeof(*mean));
	err = calloc((size_t)nhost * nhost, sizeof(*err));
	edge = calloc((size_t)nhost * nhost, sizeof(*edge));
	queue = calloc(nhost ? nhost : 1, sizeof(*queue));
	if (!c->h || !c->pairs || !fn || !mean || !err || !edge || !queue) {
		rdt_clock_free(c);
		c = NULL;
		goto out;
	}
	rdt_xpairs_join(x, on_pair, c);
	for (uint32_t lo = 0; lo < nhost; lo++)
		for (uint32_t hi = lo + 1; hi < nhost; hi++) {
			size_t k = (size_t)lo * nhost + hi;

			edge[k] = estimate(c, &c->pairs[k], names[lo], names[hi],
					   &fn[k], &mean[k], &err[k]);
		}
	for (uint32_t i = 0; i < nhost; i++)
		c->h[i].parent = UINT32_MAX;
	if (nhost) {
		c->h[0].aligned = true;
		queue[qt++] = 0;
	}
	while (qh < qt) {
		uint32_t a = queue[qh++];

		for (uint32_t b = 0; b < nhost; b++) {
			uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
			size_t k = (size_t)lo * nhost + hi;
			struct rdt_clk_host *h = &c->h[b];

			if (b == a || h->aligned || !edge[k])
				continue;
			if (b == hi) {	/* clock(b) - clock(a) on b's clock */
				h->f = fn[k];
				fn[k] = (struct clkfn){ NULL, 0 };
				h->offset_ns = mean[k];
			} else {
				if (reverse(&fn[k], &h->f) < 0)
					continue;
				h->offset_ns = -mean[k];
			}
			h->error_ns = err[k];
			h->pairs = c->pairs[k].n;
			h->parent = a;
			h->up = &c->h[a];
			h->aligned = true;
			queue[qt++] = b;
		}
	}
	/* the bounds are done with: only the functions stay for the merge */
	for (size_t i = 0; i < (size_t)nhost * nhost; i++)
		free(c->pairs[i].b);
	free(c->pairs);
	c->pairs = NULL;
	for (uint32_t i = 0; i < nhost; i++) {
		struct clkfn *f = &c->h[i].f;
		struct knot *k = f->n ? realloc(f->k, f->n * sizeof(*k)) : NULL;

		if (k)
			f->k = k;
	}
	for (uint32_t i = 1; i < nhost; i++)
		if (!c->h[i].aligned)
			say(c, "clock offset %s: header offset kept: no host pair "
			    "with message pairs in both directions links it to %s",
			    names[i], names[0]);
	if (c->sampling > 1)
		say(c, "clock alignment: 1 in %" PRIu64 " message keys kept "
		    "(memory cap)", c->sampling);
out:
	if (fn)
		for (size_t i = 0; i < (size_t)nhost * nhost; i++)
			clkfn_free(&fn[i]);
	free(fn);
	free(mean);
	free(err);
	free(edge);
	free(queue);
	return c;
}
