// SPDX-License-Identifier: GPL-2.0
/* The pipelined ring allreduce over verbs, see allreduce.h and ring.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/sdt.h>

#include "allreduce.h"
#include "common.h"
#include "profiler.h"

#define RRA_OP_ALLREDUCE 1

static float *buf_of(struct rdma_ctx *c, enum ring_buf b)
{
	return b == RING_SENDBUF ? c->sendbuf : b == RING_RECVBUF ? c->recvbuf : c->scratch;
}

static int post_send(struct rdma_ctx *c, const struct ring *rg, int rank,
		     const struct rdma_info *right, uint64_t seq, uint32_t s, uint32_t k)
{
	struct ring_xfer x;
	uint64_t raddr;
	uint32_t rkey;

	ring_send_xfer(rg, rank, s, k, &x);
	if (x.dst == RING_SCRATCH) {
		raddr = right->scratch_addr + x.dst_off * sizeof(float);
		rkey = right->scratch_rkey;
	} else {
		raddr = right->recv_addr + x.dst_off * sizeof(float);
		rkey = right->recv_rkey;
	}
	/* Before the post, as NCCL's IB plugin does: on rxe the WR can
	 * complete inside ibv_post_send's doorbell. */
	prof_wr_post(c->prof, (uint64_t)s * rg->K + k, ((uint64_t)s << 32) | k,
		     c->qp_send->qp_num, x.len * sizeof(float));
	return rdma_post_write_imm(c, buf_of(c, x.src) + x.src_off, x.len * sizeof(float),
				   raddr, rkey, ring_imm(seq, s, k), ((uint64_t)s << 32) | k);
}

/*
 * Chunk k of step s came in from the left. In the reduce-scatter it sits in
 * our scratch slot and is added to our own input into the output buffer; in
 * the all-gather it already landed in place.
 */
static void consume(struct rdma_ctx *c, const struct ring *rg, int rank, uint32_t s, uint32_t k)
{
	struct ring_xfer x;
	int left = (rank + rg->n - 1) % rg->n;

	if (s >= (uint32_t)rg->n - 1)
		return;
	ring_send_xfer(rg, left, s, k, &x);
	{
		const float *in = c->sendbuf + x.src_off;
		const float *tmp = c->scratch + x.dst_off;
		float *out = c->recvbuf + x.src_off;

		for (size_t i = 0; i < x.len; i++)
			out[i] = in[i] + tmp[i];
	}
}

static const char *wc_side(struct rdma_ctx *c, uint32_t qpn)
{
	return qpn == c->qp_send->qp_num ? "send QP (to right)" : "receive QP (from left)";
}

int allreduce_run(struct rdma_ctx *c, const struct ring *rg, int rank,
		  const struct rdma_info *right, uint64_t seq, uint32_t depth,
		  int timeout_ms, struct coll_stats *st)
{
	const uint64_t total = ring_wrs_per_rank(rg), K = rg->K;
	const uint64_t bytes = rg->count * sizeof(float);
	uint64_t next = 0, sends_done = 0, recvs_done = 0;
	uint32_t inflight = 0;
	int n = rg->n, left = (rank + n - 1) % n, rright = (rank + 1) % n;

	struct ibv_wc polled[32], *wc, *tmp;
	int pending;

	DTRACE_PROBE5(rdmatrace, coll_begin, RRA_OP_ALLREDUCE, bytes, rank, n, seq);
	prof_coll_begin(c->prof, seq, rg->count, rright, left, rg->steps, rg->K,
			(uint32_t)(rg->maxseg * sizeof(float) / rg->K));
	/*
	 * Receives are taken in post order, and the last collective took as
	 * many as it had chunks: the rq_depth receives now posted (some
	 * perhaps taken already, c->stash) are chunks 0 .. rq_depth - 1 of
	 * this one; each repost below is the receive of chunk j + rq_depth.
	 */
	for (uint64_t j = 0; j < total && j < c->rq_depth; j++)
		prof_recv_post(c->prof, j, c->recv_base + j, c->qp_recv->qp_num);

	/* Completions for us that the last collective polled early come first. */
	pending = (int)c->nstash;
	tmp = c->pend;
	c->pend = c->stash;
	c->stash = tmp;
	c->nstash = 0;

	while (sends_done < total || recvs_done < total) {
		int got;

		/*
		 * Linear WR index j = s*K + k. Step 0 is ready at once; send j+K
		 * becomes ready when receive j was consumed (chunk k of step s+1
		 * is what arrived as chunk k of step s). Sends therefore go out in
		 * index order, so receives arrive in index order too.
		 */
		while (next < total && next < K + recvs_done && inflight < depth) {
			/* A step begins with its first send: where this rank
			 * is, for a tracer asking why a collective never ends. */
			if (next % K == 0)
				DTRACE_PROBE6(rdmatrace, coll_step, RRA_OP_ALLREDUCE, seq,
					      (uint32_t)(next / K), (uint32_t)rg->steps,
					      rank, n);
			if (post_send(c, rg, rank, right, seq, (uint32_t)(next / K),
				      (uint32_t)(next % K)))
				return -1;
			st->sends_posted++;
			next++;
			inflight++;
		}
		if (pending) {
			wc = c->pend;
			got = pending;
			pending = 0;
		} else {
			wc = polled;
			got = rdma_poll(c, wc, 32, timeout_ms);
		}
		if (got < 0)
			return -1;
		if (got == 0) {
			rra_err("collective %llu (%llu bytes): no completion for %d ms; "
				"sent %llu/%llu (to rank %d), received %llu/%llu (from rank %d): "
				"a neighbour died or hangs",
				(unsigned long long)seq, (unsigned long long)bytes, timeout_ms,
				(unsigned long long)sends_done, (unsigned long long)total, rright,
				(unsigned long long)recvs_done, (unsigned long long)total, left);
			return -1;
		}
		for (int i = 0; i < got; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				rra_err("collective %llu: work completion error on %s QP 0x%x: %s (vendor err 0x%x)%s",
					(unsigned long long)seq, wc_side(c, wc[i].qp_num),
					wc[i].qp_num, ibv_wc_status_str(wc[i].status),
					wc[i].vendor_err,
					wc[i].status == IBV_WC_RETRY_EXC_ERR ?
					": the right neighbour stopped answering (died?)" : "");
				return -1;
			}
			if (wc[i].opcode == IBV_WC_RDMA_WRITE) {
				prof_wr_done(c->prof, sends_done);
				inflight--;
				sends_done++;
				st->send_cqes++;
			} else if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
				uint32_t s, k, want, imm = ntohl(wc[i].imm_data);

				if (recvs_done == total) {
					/*
					 * The left neighbour finished this collective
					 * and started the next while we wait for our
					 * last ACKs: keep it for the next call. It
					 * used one of our rq_depth receives, so at
					 * most rq_depth can be early.
					 */
					if (c->nstash >= c->rq_depth) {
						rra_err("more early completions than receives posted");
						return -1;
					}
					c->stash[c->nstash++] = wc[i];
					continue;
				}
				s = (uint32_t)(recvs_done / K);
				k = (uint32_t)(recvs_done % K);
				want = ring_imm(seq, s, k);
				if (imm != want) {
					rra_err("collective %llu: from rank %d got chunk imm 0x%08x, expected 0x%08x (ranks out of step?)",
						(unsigned long long)seq, left, imm, want);
					return -1;
				}
				if (wc[i].wr_id != c->recv_base + recvs_done) {
					rra_err("collective %llu: chunk %llu arrived in receive WR %llu, expected %llu (receive queue not FIFO?)",
						(unsigned long long)seq,
						(unsigned long long)recvs_done,
						(unsigned long long)wc[i].wr_id,
						(unsigned long long)(c->recv_base + recvs_done));
					return -1;
				}
				st->recv_cqes++;
				consume(c, rg, rank, s, k);
				prof_recv_done(c->prof, recvs_done, wc[i].byte_len);
				prof_recv_post(c->prof, recvs_done + c->rq_depth,
					       c->recv_next_id, c->qp_recv->qp_num);
				if (rdma_post_recv(c))
					return -1;
				st->recvs_posted++;
				recvs_done++;
			} else {
				rra_err("unexpected completion opcode %d", wc[i].opcode);
				return -1;
			}
		}
	}

	c->recv_base += total;
	prof_coll_end(c->prof);
	DTRACE_PROBE5(rdmatrace, coll_end, RRA_OP_ALLREDUCE, bytes, rank, n, seq);
	return 0;
}
