// SPDX-License-Identifier: GPL-2.0
/*
 * The least --metrics can do per event (issue 37's cost target), run over
 * the event mix of make bench's decode figures (a post and its completion,
 * QP after QP, 9 QPs): a direct-mapped lookup of the QP by QPN alone (one
 * host and device, always a hit), a WR and a byte counter by opcode, the
 * WR on the QP's ring of 64, and at its completion the ring's head taken
 * and the latency's log2 bucket counted.  No "other" series, no error
 * counts, no ring-full or opcode checks, no dispatch over other types:
 * lib/metrics.c does all of these.  host-decode.sh counts the
 * instructions inside floor_add() with callgrind (--toggle-collect), so
 * the figure is the floor's alone, the same on every run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { POST = 76, WC = 79, RING = 64 };

struct ev {
	uint16_t type;
	uint8_t op;
	uint32_t qpn;
	uint64_t len, wr_id, ts;
};

struct qp {
	uint32_t qpn, head, n;
	uint64_t wrs[16], bytes[16], wcs, hist[64], sum;
	struct { uint64_t wr_id, ts; } ring[RING];
};

static struct qp *cache[256];

__attribute__((noinline)) void floor_add(const struct ev *e);
__attribute__((noinline)) void floor_add(const struct ev *e)
{
	struct qp *q = cache[e->qpn & 255];
	uint32_t i;

	if (e->type == POST) {
		q->wrs[e->op]++;
		q->bytes[e->op] += e->len;
		i = (q->head + q->n++) & (RING - 1);
		q->ring[i].wr_id = e->wr_id;
		q->ring[i].ts = e->ts;
	} else if (q->n && q->ring[q->head].wr_id == e->wr_id) {
		uint64_t d = e->ts - q->ring[q->head].ts;

		q->wcs++;
		q->head = (q->head + 1) & (RING - 1);
		q->n--;
		q->hist[63 - __builtin_clzll(d | 1)]++;
		q->sum += d;
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;
	struct ev *v = calloc(n, sizeof(*v));
	uint64_t wcs = 0;

	if (!v)
		return 1;
	for (uint32_t k = 0; k < 9; k++)
		if (!(cache[100 + k] = calloc(1, sizeof(struct qp))))
			return 1;
	for (unsigned long i = 0; i < n; i++) {
		v[i].type = i % 2 ? WC : POST;
		v[i].qpn = 100 + (uint32_t)(i / 2 % 9);
		v[i].len = 4096;
		v[i].wr_id = i / 2;
		v[i].ts = 1000 * i;
	}
	for (unsigned long i = 0; i < n; i++)
		floor_add(&v[i]);
	for (uint32_t k = 0; k < 9; k++)
		wcs += cache[100 + k]->wcs;
	/* every completion found its post: the floor did the whole work */
	if (wcs != n / 2) {
		fprintf(stderr, "metrics-floor: %llu of %lu completions matched\n",
			(unsigned long long)wcs, n / 2);
		return 1;
	}
	printf("%lu events\n", n);
	return 0;
}
