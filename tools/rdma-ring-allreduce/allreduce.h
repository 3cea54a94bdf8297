/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One ring allreduce (float32 sum, out of place: sendbuf -> recvbuf) over
 * RDMA WRITE WITH IMMEDIATE.
 *
 * Why WRITE WITH IMM rather than SEND/RECV: the data goes straight to its
 * final place (the neighbour's scratch slot in the reduce-scatter, its output
 * buffer in the all-gather) with no bounce copy, and the immediate both wakes
 * the receiver and names the chunk (seq, step, chunk), which is checked. The
 * receive WQEs carry no buffer, so they are cheap to keep pre-posted.
 */
#ifndef RRA_ALLREDUCE_H
#define RRA_ALLREDUCE_H

#include <stdint.h>

#include "rdma.h"
#include "ring.h"

struct coll_stats {
	uint64_t sends_posted;		/* RDMA WRITE WITH IMM posted */
	uint64_t recvs_posted;		/* receive WRs re-posted */
	uint64_t send_cqes, recv_cqes;	/* successful completions */
};

/*
 * Run collective number seq. Fires USDT rdmatrace:coll_begin/coll_end
 * (op=1, bytes, rank, nranks, seq), and rdmatrace:coll_step (op, seq,
 * step, steps, rank, nranks) as each step's first send is posted. Adds
 * this collective's counts to *st.
 * Every wait has timeout_ms: returns -1 with a message naming the neighbour
 * on a timeout or an error completion, 0 on success.
 */
int allreduce_run(struct rdma_ctx *c, const struct ring *rg, int rank,
		  const struct rdma_info *right, uint64_t seq, uint32_t depth,
		  int timeout_ms, struct coll_stats *st);

#endif
