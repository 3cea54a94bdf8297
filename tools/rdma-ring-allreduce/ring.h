/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring schedule, with no verbs in it so a host test can run the whole
 * algorithm in memory.
 *
 * count elements are cut into nranks segments (the first count % nranks one
 * element longer) and every segment into K chunks, K the same for all
 * segments so every rank sends and receives exactly K work requests per step.
 * There are 2*(nranks-1) steps: steps 0..n-2 are the reduce-scatter, steps
 * n-1..2n-3 the all-gather. At step s rank r sends segment
 *   (r - s) mod n           for s <  n-1 (reduce-scatter)
 *   (r + 1 - (s-n+1)) mod n for s >= n-1 (all-gather)
 * to its right neighbour and receives the segment its left neighbour sends.
 * Chunk k of step s+1 is exactly chunk k of what arrived at step s, which is
 * what makes the pipeline: a chunk can move on as soon as it came in.
 */
#ifndef RRA_RING_H
#define RRA_RING_H

#include <stddef.h>
#include <stdint.h>

#define RING_MAX_RANKS	64	/* step fits in 8 bits of the immediate */
#define RING_MAX_CHUNKS	65535	/* chunk fits in 16 bits of the immediate */

struct ring {
	int n;			/* ranks */
	size_t count;		/* elements in the collective */
	size_t maxseg;		/* elements of the longest segment */
	uint32_t K;		/* chunks per segment */
	uint32_t steps;		/* 2*(n-1) */
};

/* Where a buffer access lands. */
enum ring_buf { RING_SENDBUF, RING_RECVBUF, RING_SCRATCH };

struct ring_xfer {
	enum ring_buf src;	/* on the sender */
	size_t src_off;		/* elements */
	enum ring_buf dst;	/* on the receiver */
	size_t dst_off;		/* elements */
	size_t len;		/* elements, may be 0 (count < nranks) */
};

/*
 * Plan one collective. chunk_bytes is the target chunk size; K is
 *   max(1, ceil(maxseg * 4 / chunk_bytes)), capped at RING_MAX_CHUNKS.
 * Returns 0, or -1 if n or count are out of range.
 */
int ring_plan(struct ring *rg, int n, size_t count, size_t chunk_bytes);

void ring_segment(const struct ring *rg, int seg, size_t *off, size_t *len);
void ring_chunk(const struct ring *rg, int seg, uint32_t k, size_t *off, size_t *len);

/* Segment rank r sends at step s (the receiver r+1 receives the same one). */
int ring_send_seg(const struct ring *rg, int r, uint32_t s);

/* What rank r sends at step s, chunk k, and where it lands on rank r+1. */
void ring_send_xfer(const struct ring *rg, int r, uint32_t s, uint32_t k,
		    struct ring_xfer *x);

/* Scratch elements a rank needs: one slot of maxseg per reduce-scatter step. */
size_t ring_scratch_elems(int n, size_t count);

/* Per rank per collective: RDMA WRITE WITH IMM sent = receives consumed. */
static inline uint64_t ring_wrs_per_rank(const struct ring *rg)
{
	return (uint64_t)rg->steps * rg->K;
}

/* Immediate data: seq (low 8 bits) | step | chunk, checked on arrival. */
static inline uint32_t ring_imm(uint64_t seq, uint32_t s, uint32_t k)
{
	return ((uint32_t)(seq & 0xff) << 24) | ((s & 0xff) << 16) | (k & 0xffff);
}

/* nccl-tests conventions: algbw = bytes/time, busbw = algbw * 2(n-1)/n. */
double ring_algbw(size_t bytes, double time_us);
double ring_busbw(size_t bytes, double time_us, int n);

#endif
