// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Raw TSC stamps to CLOCK_MONOTONIC: the relay form's clock
 * (<rdmatrace/wire.h>, RDT_TS_RAW).  The module stamps the TSC and no
 * more; the reader samples (TSC, CLOCK_MONOTONIC) pairs itself, around its
 * reads, and a stamp is interpolated between the pairs around it.  Between
 * two pairs the error is how far CLOCK_MONOTONIC strays from a straight
 * line against the TSC over that span (NTP slews its rate in small steps),
 * not tsc_khz's calibration error, which a writer that scales by tsc_khz
 * pays over every span.  Outside the pairs a stamp is extrapolated from
 * the nearest one at the module's tsc_khz (its `clock` file), or at the
 * rate of the nearest two pairs when that is unknown.
 *
 * A pair is sampled by reading the TSC on both sides of clock_gettime()
 * and keeping the narrowest of a few tries: the pair's TSC is their
 * midpoint, off the true one by at most half that width.  The kernel keeps
 * the TSC one clock across CPUs wherever the module stamps it (it stamps
 * ktime_get_ns() otherwise), so a pair sampled on any CPU serves every
 * CPU's stream.
 *
 * Pairs come from this process (the live module) or from a capture's
 * clock file, which rdmatrace-record wrote (capture_dir.c) and which is
 * checked as any input is: a line out of order is an error naming it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "internal.h"

/* The most pairs a live reader keeps: the oldest half goes when full (a
 * stamp older than every pair left, 10 minutes and more, is
 * extrapolated).  A capture's file is kept whole. */
#define MAP_MAX		(1u << 16)
/* Live pairs closer than this replace the last one rather than add. */
#define MAP_GAP_NS	10000000ull
/* A sample whose two TSC reads lie further apart was interrupted. */
#define SAMPLE_TRIES	5

bool rdt_tsc_sample(struct rdt_tsc_pair *p)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t best = UINT64_MAX;
	struct timespec ts;

	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t a, b;

		_mm_lfence();
		a = __rdtsc();
		_mm_lfence();
		if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
			return false;
		_mm_lfence();
		b = __rdtsc();
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		p->tsc = a + (b - a) / 2;
		p->ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	return best != UINT64_MAX;
#else
	(void)p;
	return false;	/* the module stamps raw only on x86 */
#endif
}

/* Room for one more pair: the oldest half goes when a live map is full. */
static int map_room(struct rdt_tsc_map *m)
{
	if (m->n == MAP_MAX && !m->keep_all) {
		memmove(m->v, m->v + MAP_MAX / 2,
			(MAP_MAX / 2) * sizeof(*m->v));
		m->n = MAP_MAX / 2;
		m->hint = 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct rdt_tsc_pair *v = realloc(m->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		m->cap = cap;
	}
	return 0;
}

int rdt_tsc_map_add(struct rdt_tsc_map *m, struct rdt_tsc_pair p)
{
	int ret;

	if (m->n) {
		const struct rdt_tsc_pair *l = &m->v[m->n - 1];

		if (p.tsc <= l->tsc || p.ns < l->ns) {
			m->refused++;
			return -EINVAL;
		}
	}
	ret = map_room(m);
	if (ret)
		return ret;
	m->v[m->n++] = p;
	return 0;
}

/*
 * Two pairs read by two readers a few hundred ns apart may disagree on
 * their order by that much (each is off by half its reads' width): not
 * a clock that went back, and not kept.
 */
#define PAIR_JITTER_NS	10000ull
/*
 * A pair between two closer than this adds nothing a reader would see
 * (the line between them is already good to a ppm), and inserting it
 * moves every later pair: a capture's pairs file holds one per 100 ms,
 * and its streams' pairs, one a second per CPU, would cost the reading
 * of a long capture a quadratic time.
 */
#define PAIR_GAP_NS	200000000ull

int rdt_tsc_map_insert(struct rdt_tsc_map *m, struct rdt_tsc_pair p)
{
	size_t lo = 0, hi = m->n, at;
	const struct rdt_tsc_pair *a, *b;
	int ret;

	if (!m->n || p.tsc > m->v[m->n - 1].tsc) {
		if (m->n && p.ns < m->v[m->n - 1].ns) {
			if (p.ns + PAIR_JITTER_NS < m->v[m->n - 1].ns)
				m->refused++;
			return -EINVAL;
		}
		return rdt_tsc_map_add(m, p);
	}
	while (lo < hi) {		/* the first pair at or after p */
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].tsc < p.tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	at = lo;
	a = at ? &m->v[at - 1] : NULL;
	b = &m->v[at];
	if (b->tsc == p.tsc)
		return b->ns == p.ns ? 0 : (m->refused++, -EINVAL);
	if (a && b->ns - a->ns < PAIR_GAP_NS && p.ns >= a->ns && p.ns <= b->ns)
		return 0;	/* nothing to add between them */
	if ((a && p.ns < a->ns) || p.ns > b->ns) {
		uint64_t off = a && p.ns < a->ns ? a->ns - p.ns : p.ns - b->ns;

		if (off > PAIR_JITTER_NS)
			m->refused++;
		return -EINVAL;
	}
	if (m->n == MAP_MAX && !m->keep_all && at < MAP_MAX / 2)
		return 0;	/* older than what thinning keeps: not kept */
	if (m->n == MAP_MAX && !m->keep_all)
		at -= MAP_MAX / 2;
	ret = map_room(m);
	if (ret)
		return ret;
	memmove(&m->v[at + 1], &m->v[at], (m->n - at) * sizeof(*m->v));
	m->v[at] = p;
	m->n++;
	m->hint = 0;
	return 0;
}

int rdt_tsc_map_note(struct rdt_tsc_map *m, struct rdt_tsc_pair p)
{
	/* Close to the last one: move it up, unless it is the only one (the
	 * first two make the first span). */
	if (m->n >= 2 && p.ns < m->v[m->n - 2].ns + MAP_GAP_NS &&
	    p.tsc > m->v[m->n - 1].tsc && p.ns >= m->v[m->n - 1].ns) {
		m->v[m->n - 1] = p;
		return 0;
	}
	return rdt_tsc_map_add(m, p);
}

/*
 * @a's time plus or minus @tsc's cycles from it at the best rate known,
 * @b the pair next to @a (NULL: none).  A stamp converted with no rate at
 * all is counted (guessed).  Saturated: pairs from a hostile stream may
 * make any rate, and a long double too large for a u64 is no u64.
 */
static uint64_t extrapolate(struct rdt_tsc_map *m,
			    const struct rdt_tsc_pair *a,
			    const struct rdt_tsc_pair *b, uint64_t tsc)
{
	long double per;	/* ns per cycle */
	long double d;

	/* The rate of pairs 100 ms apart is good to a ppm or so; tsc_khz is
	 * a calibration (0.4 % off in a TCG guest), better than pairs close
	 * together. */
	bool far = b && (b->ns > a->ns ? b->ns - a->ns : a->ns - b->ns) >=
		   100000000ull;
	long double measured = b && b->tsc != a->tsc ?
		((long double)b->ns - (long double)a->ns) /
		((long double)b->tsc - (long double)a->tsc) : 0;

	if (tsc == a->tsc)
		return a->ns;
	if (far || (!m->khz && b && b->tsc != a->tsc)) {
		per = measured;
	} else if (m->khz) {
		per = 1e6L / (long double)m->khz;
	} else {
		per = 1.0L;	/* one pair, no frequency */
		m->guessed++;
	}
	if (tsc > a->tsc) {
		d = (long double)(tsc - a->tsc) * per + 0.5L;
		return d >= (long double)(UINT64_MAX - a->ns) ? UINT64_MAX :
		       a->ns + (uint64_t)d;
	}
	d = (long double)(a->tsc - tsc) * per + 0.5L;
	return d >= (long double)a->ns ? 0 : a->ns - (uint64_t)d;
}

uint64_t rdt_tsc_interp_wide(const struct rdt_tsc_pair *a,
			     const struct rdt_tsc_pair *b, uint64_t tsc)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 x = (unsigned __int128)(tsc - a->tsc) *
			      (b->ns - a->ns);

	return a->ns + (uint64_t)(x / (b->tsc - a->tsc));
#else
	return a->ns + (uint64_t)((long double)(tsc - a->tsc) *
				  (long double)(b->ns - a->ns) /
				  (long double)(b->tsc - a->tsc));
#endif
}

/* rdt_tsc_map_ns() past its inline test of the last span. */
uint64_t rdt_tsc_map_ns_slow(struct rdt_tsc_map *m, uint64_t tsc)
{
	size_t lo, hi, n = m->n;

	if (!n) {		/* the TSC from 0, near boot as the clock */
		m->guessed++;
		return m->khz ? (uint64_t)((long double)tsc * 1e6L /
					   (long double)m->khz) : tsc;
	}
	if (tsc <= m->v[0].tsc)
		return extrapolate(m, &m->v[0], n > 1 ? &m->v[1] : NULL, tsc);
	if (tsc >= m->v[n - 1].tsc)
		return extrapolate(m, &m->v[n - 1], n > 1 ? &m->v[n - 2] : NULL,
				   tsc);
	/* rdt_tsc_map_ns() has tried the last span (m->hint) already. */
	lo = 0;
	hi = n - 1;		/* v[lo].tsc < tsc < v[hi].tsc */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].tsc <= tsc)
			lo = mid;
		else
			hi = mid;
	}
	m->hint = lo;
	return rdt_tsc_interp(&m->v[lo], &m->v[lo + 1], tsc);
}

/*
 * A capture's clock file (capture_dir.c writes it): a first line
 * "rdmatrace clock pairs 1 tsc_khz N", then "TSC NS" lines, both
 * increasing.  0, -ENOENT (no file) or -EINVAL with @err naming the line.
 */
int rdt_tsc_map_load(struct rdt_tsc_map *m, const char *path, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[128];
	unsigned long long khz, a, b;
	unsigned int ver;
	int ret = 0;
	size_t no = 1;
	char extra;

	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "rdmatrace clock pairs %u tsc_khz %llu %c", &ver,
		   &khz, &extra) != 2 || ver != 1) {
		snprintf(err, errlen, "%s:1: not an rdmatrace clock pairs file "
			 "(version 1)", path);
		fclose(f);
		return -EINVAL;
	}
	m->khz = khz;
	m->keep_all = true;
	while (fgets(line, sizeof(line), f)) {
		no++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%zu: line too long", path, no);
			ret = -EINVAL;
			break;
		}
		if (sscanf(line, "%llu %llu %c", &a, &b, &extra) != 2 ||
		    line[0] < '0' || line[0] > '9') {
			snprintf(err, errlen, "%s:%zu: not \"TSC NS\"", path, no);
			ret = -EINVAL;
			break;
		}
		ret = rdt_tsc_map_add(m, (struct rdt_tsc_pair){ a, b });
		if (ret == -EINVAL)
			snprintf(err, errlen, "%s:%zu: pair %llu %llu is not "
				 "after the one before it", path, no, a, b);
		if (ret)
			break;
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: %s", path, strerror(EIO));
	}
	fclose(f);
	return ret;
}

void rdt_tsc_map_free(struct rdt_tsc_map *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

uint64_t rdt_relay_clock_khz(const char *relay_dir)
{
	unsigned long long khz = 0;
	char path[600], line[256];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/clock", relay_dir) >=
	    (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "tsc_khz %llu", &khz) == 1)
			break;
	fclose(f);
	return khz;
}
