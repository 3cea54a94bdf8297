// SPDX-License-Identifier: GPL-2.0
/* The ring schedule: pure arithmetic, see ring.h. */
#include "ring.h"

static int mod(long a, int n)
{
	long m = a % n;

	return (int)(m < 0 ? m + n : m);
}

/* Even split of len into parts: the first len % parts get one more. */
static void split(size_t len, size_t parts, size_t i, size_t *off, size_t *plen)
{
	size_t base = len / parts, rem = len % parts;

	*off = i * base + (i < rem ? i : rem);
	*plen = base + (i < rem ? 1 : 0);
}

int ring_plan(struct ring *rg, int n, size_t count, size_t chunk_bytes)
{
	size_t bytes, k;

	if (n < 2 || n > RING_MAX_RANKS || count == 0 || chunk_bytes < sizeof(float))
		return -1;
	rg->n = n;
	rg->count = count;
	rg->maxseg = (count + (size_t)n - 1) / (size_t)n;
	rg->steps = 2u * (uint32_t)(n - 1);
	bytes = rg->maxseg * sizeof(float);
	k = (bytes + chunk_bytes - 1) / chunk_bytes;
	if (k < 1)
		k = 1;
	if (k > RING_MAX_CHUNKS)
		k = RING_MAX_CHUNKS;
	/* More chunks than elements would only add empty WRs. */
	if (k > rg->maxseg)
		k = rg->maxseg;
	rg->K = (uint32_t)k;
	return 0;
}

void ring_segment(const struct ring *rg, int seg, size_t *off, size_t *len)
{
	split(rg->count, (size_t)rg->n, (size_t)seg, off, len);
}

/*
 * Chunks are cut from the longest segment's geometry, then clipped to this
 * segment: the chunk offset within a segment is then the same on every
 * segment, so one scratch layout serves all steps.
 */
void ring_chunk(const struct ring *rg, int seg, uint32_t k, size_t *off, size_t *len)
{
	size_t soff, slen, coff, clen;

	ring_segment(rg, seg, &soff, &slen);
	split(rg->maxseg, rg->K, k, &coff, &clen);
	if (coff >= slen)
		clen = 0;
	else if (coff + clen > slen)
		clen = slen - coff;
	*off = soff + coff;
	*len = clen;
}

int ring_send_seg(const struct ring *rg, int r, uint32_t s)
{
	uint32_t rs = (uint32_t)rg->n - 1;

	if (s < rs)
		return mod((long)r - (long)s, rg->n);
	return mod((long)r + 1 - (long)(s - rs), rg->n);
}

void ring_send_xfer(const struct ring *rg, int r, uint32_t s, uint32_t k,
		    struct ring_xfer *x)
{
	int seg = ring_send_seg(rg, r, s);
	size_t off, len, soff, slen;

	ring_chunk(rg, seg, k, &off, &len);
	ring_segment(rg, seg, &soff, &slen);
	/* Step 0 reads the input; later steps forward what arrived before. */
	x->src = s == 0 ? RING_SENDBUF : RING_RECVBUF;
	x->src_off = off;
	if (s < (uint32_t)rg->n - 1) {
		/* Reduce-scatter: a scratch slot per step, see ring_scratch_elems. */
		x->dst = RING_SCRATCH;
		x->dst_off = (size_t)s * rg->maxseg + (off - soff);
	} else {
		/* All-gather: final values go straight to their place. */
		x->dst = RING_RECVBUF;
		x->dst_off = off;
	}
	x->len = len;
}

/*
 * Why a slot per reduce-scatter step rather than a double buffer: without
 * credits, the left neighbour can run up to n-1 steps ahead of us (the only
 * thing holding it back is the data going once around the ring), so n-1 slots
 * are what makes overwriting an unconsumed chunk impossible. Costs
 * (n-1)/n * bytes of memory, saves a credit message per chunk.
 */
size_t ring_scratch_elems(int n, size_t count)
{
	size_t maxseg = (count + (size_t)n - 1) / (size_t)n;

	return (size_t)(n - 1) * maxseg;
}

double ring_algbw(size_t bytes, double time_us)
{
	return time_us > 0 ? (double)bytes / time_us / 1e3 : 0; /* GB/s */
}

double ring_busbw(size_t bytes, double time_us, int n)
{
	return ring_algbw(bytes, time_us) * 2.0 * (n - 1) / n;
}
