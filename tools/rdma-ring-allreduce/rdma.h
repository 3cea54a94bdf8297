/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Verbs setup for one rank: device, port and GID choice, buffers and memory
 * registrations, one CQ with a completion channel, and two RC QPs: one that
 * sends to the right neighbour, one that receives from the left. Using two
 * QPs (rather than one QP per neighbour carrying both directions) makes every
 * QP one-way, so a trace shows per QPN exactly one direction of the ring.
 */
#ifndef RRA_RDMA_H
#define RRA_RDMA_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/* What a rank publishes over the out-of-band socket. */
struct rdma_info {
	int32_t rank;
	int32_t pid;
	uint32_t qpn_send;	/* QP connected to the right neighbour */
	uint32_t qpn_recv;	/* QP connected to the left neighbour */
	uint32_t psn;
	uint16_t lid;
	uint16_t pad;
	uint8_t gid[16];
	uint64_t recv_addr;
	uint64_t scratch_addr;
	uint32_t recv_rkey;
	uint32_t scratch_rkey;
};

struct rdma_ctx {
	const char *devname;
	int port;
	int gid_idx;		/* -1: no GRH (InfiniBand link, no -g) */
	int use_grh;
	union ibv_gid gid;
	struct ibv_port_attr port_attr;
	uint32_t max_msg;

	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	int cq_armed;
	uint32_t spin_us;	/* busy-poll this long before sleeping */
	int qp_timeout, retry_cnt;	/* the RC QPs' (rdma_connect) */
	unsigned cq_unacked;
	struct ibv_qp *qp_send, *qp_recv;
	struct ibv_mr *mr_send, *mr_recv, *mr_scratch;

	uint32_t sq_depth, rq_depth;
	/*
	 * Receive WR ids: the receive queue is FIFO, so the n-th receive
	 * posted (wr_id n) is the n-th one consumed.  recv_base: receives the
	 * collectives before this one took (each takes exactly its chunks).
	 */
	uint64_t recv_next_id, recv_base;
	/* Completions that belong to the next collective (see allreduce.c). */
	struct ibv_wc *stash, *pend;	/* rq_depth each */
	uint32_t nstash;
	float *sendbuf, *recvbuf, *scratch;
	size_t count, scratch_elems;
	struct rra_prof *prof;	/* NCCL profiler plugin, NULL: none */
};

/*
 * Open devname (NULL: the first device) and check port and GID index
 * (gid_idx < 0: pick one). Returns 0, or -1 with a message naming what is
 * wrong (a missing device lists the ones that exist).
 */
int rdma_open(struct rdma_ctx *c, const char *devname, int port, int gid_idx);
/* Buffers for count elements, scratch_elems of scratch, CQ and both QPs. */
int rdma_alloc(struct rdma_ctx *c, size_t count, size_t scratch_elems,
	       uint32_t sq_depth, uint32_t rq_depth);
void rdma_local_info(const struct rdma_ctx *c, int rank, struct rdma_info *i);
/* Bring qp_send to RTS towards right's qpn_recv, qp_recv towards left's qpn_send. */
int rdma_connect(struct rdma_ctx *c, const struct rdma_info *me,
		 const struct rdma_info *left, const struct rdma_info *right);
int rdma_post_write_imm(struct rdma_ctx *c, const void *src, size_t len,
			uint64_t raddr, uint32_t rkey, uint32_t imm, uint64_t wr_id);
int rdma_post_recv(struct rdma_ctx *c);
/* Up to max completions; 0 when none came within timeout_ms, -1 on error. */
int rdma_poll(struct rdma_ctx *c, struct ibv_wc *wc, int max, int timeout_ms);
void rdma_close(struct rdma_ctx *c);

#endif
