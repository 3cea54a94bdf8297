// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of rdma-ring-allreduce's pure parts: the ring schedule
 * (segments, chunks, K), the input/expected functions, busbw, and the whole
 * algorithm run in memory with randomly interleaved ranks and links, so the
 * scratch-slot reuse and the in-order pipeline are checked without RDMA.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "verify.h"

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
		}                                                            \
	} while (0)

/* Segments and chunks tile [0, count) exactly once. */
static void test_tiling(int n, size_t count, size_t chunk)
{
	struct ring rg;
	unsigned char *seen = calloc(count, 1);
	size_t expect_k;

	CHECK(ring_plan(&rg, n, count, chunk) == 0, "plan n=%d count=%zu", n, count);
	expect_k = (rg.maxseg * 4 + chunk - 1) / chunk;
	if (expect_k > RING_MAX_CHUNKS)
		expect_k = RING_MAX_CHUNKS;
	if (expect_k > rg.maxseg)
		expect_k = rg.maxseg;
	CHECK(rg.K == expect_k && rg.K >= 1, "K=%u want %zu", rg.K, expect_k);
	CHECK(rg.steps == 2u * (unsigned)(n - 1), "steps");
	for (int seg = 0; seg < n; seg++)
		for (uint32_t k = 0; k < rg.K; k++) {
			size_t off, len;

			ring_chunk(&rg, seg, k, &off, &len);
			CHECK(len * 4 <= chunk || rg.K == RING_MAX_CHUNKS, "chunk too big %zu", len);
			for (size_t i = off; i < off + len; i++) {
				CHECK(i < count, "off %zu", i);
				if (i < count)
					seen[i]++;
			}
		}
	for (size_t i = 0; i < count; i++)
		CHECK(seen[i] == 1, "n=%d count=%zu element %zu covered %d times", n, count, i, seen[i]);
	free(seen);
}

/* ---- the algorithm, simulated with random interleaving ----------------- */

struct msg { uint32_t s, k; uint64_t seq; };

struct simrank {
	float *sendbuf, *recvbuf, *scratch;
	uint64_t seq, next, recvs_done, sends_acked, sends_total;
	/* link to the right: posted, not yet delivered */
	struct msg *wire; size_t wire_head, wire_tail;
	/* from the left: delivered, not yet consumed */
	struct msg *inbox; size_t in_head, in_tail;
};

static float *bufp(struct simrank *r, enum ring_buf b)
{
	return b == RING_SENDBUF ? r->sendbuf : b == RING_RECVBUF ? r->recvbuf : r->scratch;
}

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(unsigned m)
{
	rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
	return (unsigned)(rng % m);
}

static void test_sim(int n, size_t count, size_t chunk, int ncoll, uint32_t depth)
{
	struct ring rg;
	struct simrank *R = calloc((size_t)n, sizeof(*R));
	uint64_t total;
	size_t cap;
	int done = 0;

	ring_plan(&rg, n, count, chunk);
	total = ring_wrs_per_rank(&rg);
	cap = total * (size_t)ncoll + 1;
	for (int r = 0; r < n; r++) {
		R[r].sendbuf = malloc(count * 4);
		R[r].recvbuf = malloc(count * 4);
		R[r].scratch = malloc(ring_scratch_elems(n, count) * 4 + 4);
		R[r].wire = malloc(cap * sizeof(struct msg));
		R[r].inbox = malloc(cap * sizeof(struct msg));
		verify_fill_input(R[r].sendbuf, count, r);
		verify_poison(R[r].recvbuf, count);
		verify_poison(R[r].scratch, ring_scratch_elems(n, count));
	}
	for (long guard = 0; done < n && guard < 100000000; guard++) {
		int r = (int)rnd((unsigned)n), right = (r + 1) % n;
		struct simrank *me = &R[r];

		switch (rnd(3)) {
		case 0: /* post a send, same readiness rule as allreduce.c */
			if (me->seq < (uint64_t)ncoll && me->next < total &&
			    me->next < rg.K + me->recvs_done &&
			    me->next - me->sends_acked < depth) {
				me->wire[me->wire_tail++] = (struct msg){ (uint32_t)(me->next / rg.K),
					(uint32_t)(me->next % rg.K), me->seq };
				me->next++;
			}
			break;
		case 1: /* the link delivers its oldest message; data read now */
			if (me->wire_head < me->wire_tail) {
				struct msg m = me->wire[me->wire_head++];
				struct ring_xfer x;

				ring_send_xfer(&rg, r, m.s, m.k, &x);
				memcpy(bufp(&R[right], x.dst) + x.dst_off, bufp(me, x.src) + x.src_off,
				       x.len * 4);
				R[right].inbox[R[right].in_tail++] = m;
				if (m.seq == me->seq)
					me->sends_acked++;
				else
					CHECK(0, "ack for an old collective");
			}
			break;
		case 2: /* consume the oldest arrival, if it is for this collective */
			if (me->in_head < me->in_tail && me->seq < (uint64_t)ncoll) {
				struct msg m = me->inbox[me->in_head];
				int left = (r + n - 1) % n;
				struct ring_xfer x;

				if (m.seq != me->seq)
					break; /* early: next collective, like the stash */
				CHECK(m.s == me->recvs_done / rg.K && m.k == me->recvs_done % rg.K,
				      "out of order arrival");
				me->in_head++;
				ring_send_xfer(&rg, left, m.s, m.k, &x);
				if (m.s < (uint32_t)n - 1)
					for (size_t i = 0; i < x.len; i++)
						me->recvbuf[x.src_off + i] = me->sendbuf[x.src_off + i] +
									     me->scratch[x.dst_off + i];
				me->recvs_done++;
			}
			break;
		}
		if (me->seq < (uint64_t)ncoll && me->recvs_done == total && me->sends_acked == total) {
			uint64_t wrong = verify_check(me->recvbuf, count, n);

			CHECK(wrong == 0, "n=%d count=%zu chunk=%zu rank %d coll %llu: %llu wrong",
			      n, count, chunk, r, (unsigned long long)me->seq,
			      (unsigned long long)wrong);
			CHECK(me->next == total, "sends %llu", (unsigned long long)me->next);
			me->seq++;
			me->next = me->recvs_done = me->sends_acked = 0;
			if (me->seq == (uint64_t)ncoll)
				done++;
		}
	}
	CHECK(done == n, "simulation stuck n=%d count=%zu (%d ranks done)", n, count, done);
	for (int r = 0; r < n; r++) {
		free(R[r].sendbuf); free(R[r].recvbuf); free(R[r].scratch);
		free(R[r].wire); free(R[r].inbox);
	}
	free(R);
}

int main(void)
{
	static const size_t counts[] = { 1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4099 };
	static const size_t chunks[] = { 4, 12, 64, 1024, 256 << 10 };

	/* K and tiling, including a size that hits the 65535-chunk cap */
	for (int n = 2; n <= 9; n++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++)
			for (size_t h = 0; h < sizeof(chunks) / sizeof(chunks[0]); h++)
				test_tiling(n, counts[c], chunks[h]);
	test_tiling(2, 16u << 20, 256 << 10);		/* 64 MiB on 2 ranks */
	test_tiling(3, (16u << 20) + 1, 4);		/* K capped */
	{
		struct ring rg;

		CHECK(ring_plan(&rg, 2, (16u << 20), 256 << 10) == 0 && rg.K == 128,
		      "64 MiB / 2 ranks / 256 KiB chunks: K=%u", rg.K);
		CHECK(ring_wrs_per_rank(&rg) == 2 * 1 * 128, "wrs");
		CHECK(ring_plan(&rg, 1, 10, 4) == -1, "n=1 rejected");
		CHECK(ring_plan(&rg, 3, 0, 4) == -1, "count=0 rejected");
	}

	/* input/expected: exact, and distinguishes ranks */
	for (int n = 2; n <= RING_MAX_RANKS; n++)
		for (size_t i = 0; i < 5000; i += 7) {
			double sum = 0;

			for (int r = 0; r < n; r++)
				sum += verify_input(r, i);
			CHECK(sum == verify_expected(n, i) && sum < (1 << 24), "n=%d i=%zu", n, i);
		}
	CHECK(verify_input(0, 5) != verify_input(1, 5), "ranks differ");
	{
		float b[4];

		verify_poison(b, 4);
		CHECK(isnan(b[0]) && verify_check(b, 4, 3) == 4, "poison");
		for (int i = 0; i < 4; i++)
			b[i] = verify_expected(3, (size_t)i);
		CHECK(verify_check(b, 4, 3) == 0, "check ok");
		b[2] += 1;
		CHECK(verify_check(b, 4, 3) == 1, "one wrong");
	}

	/* nccl-tests bandwidth conventions */
	CHECK(fabs(ring_algbw(1000000000, 1e6) - 1.0) < 1e-12, "algbw");
	CHECK(fabs(ring_busbw(1000000000, 1e6, 4) - 1.5) < 1e-12, "busbw 4 ranks");
	CHECK(fabs(ring_busbw(1000000000, 1e6, 2) - 1.0) < 1e-12, "busbw 2 ranks");

	/* the whole algorithm, several collectives back to back, random order */
	for (int n = 2; n <= 8; n++)
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			test_sim(n, counts[c], 4, 3, 4);
			test_sim(n, counts[c], 64, 3, 64);
		}
	test_sim(3, 100000, 4096, 2, 8);

	if (failures) {
		fprintf(stderr, "ring-unit: %d failures\n", failures);
		return 1;
	}
	printf("ring-unit: ok\n");
	return 0;
}
