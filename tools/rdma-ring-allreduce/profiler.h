/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NCCL profiler plugin ABI, hosted as NCCL hosts it: with
 * NCCL_PROFILER_PLUGIN in the environment the ring loads that plugin (NCCL's
 * name rule) and reports each collective as NCCL does: a Coll event, one
 * ProxyOp for the ring's send side, a ProxyStep per ring step (transSize:
 * its bytes) and a net-IB QP event per RDMA WRITE WITH IMM from its post to
 * its completion (device, QPN, wr_id, opcode, length); and, as NCCL's
 * ncclIbIrecv reports them, a receive ProxyOp (isSend 0, the left
 * neighbour), its steps (RecvWait transSize: the bytes that came in) and a
 * QP event per receive WR (device, QPN, wr_id; no opcode or length) from its
 * post to the completion of the chunk it took.  Every function does nothing
 * when no plugin is loaded.
 */
#ifndef RRA_PROFILER_H
#define RRA_PROFILER_H

#include <stddef.h>
#include <stdint.h>

struct rra_prof;

/* NULL, and a message if the variable names a plugin that cannot load. */
struct rra_prof *prof_open(int rank, int nranks, const char *devname);
void prof_close(struct rra_prof *p);

void prof_coll_begin(struct rra_prof *p, uint64_t seq, size_t count,
		     int peer, int left, uint32_t steps, uint32_t K,
		     uint32_t chunk_bytes);
/* WR j (= step * K + chunk) of this collective was posted / completed;
 * sends complete in post order. */
void prof_wr_post(struct rra_prof *p, uint64_t j, uint64_t wr_id,
		  uint32_t qpn, size_t len);
void prof_wr_done(struct rra_prof *p, uint64_t j);
/* The receive WR that takes chunk j was posted (one posted before the
 * collective began: reported at its begin); chunk j came in, @bytes. */
void prof_recv_post(struct rra_prof *p, uint64_t j, uint64_t wr_id,
		    uint32_t qpn);
void prof_recv_done(struct rra_prof *p, uint64_t j, size_t bytes);
void prof_coll_end(struct rra_prof *p);

#endif
