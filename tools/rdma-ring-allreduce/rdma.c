// SPDX-License-Identifier: GPL-2.0
/* Verbs setup and the thin post/poll layer, see rdma.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "rdma.h"

static int gid_is_zero(const union ibv_gid *g)
{
	static const union ibv_gid zero;

	return !memcmp(g, &zero, sizeof(zero));
}

static int gid_is_v4mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

static const char *gid_type_str(uint32_t t)
{
	return t == IBV_GID_TYPE_ROCE_V2 ? "RoCEv2" : t == IBV_GID_TYPE_ROCE_V1 ? "RoCEv1" : "IB";
}

/* The valid indices as text, for an error message that says what would work. */
static void valid_gids(struct rdma_ctx *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < c->port_attr.gid_tbl_len && used + 16 < len; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(c->ctx, (uint32_t)c->port, (uint32_t)i, &e, 0) ||
		    gid_is_zero(&e.gid))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%d(%s)", used ? " " : "",
					 i, gid_type_str(e.gid_type));
	}
	if (!used)
		snprintf(buf, len, "none");
}

/*
 * No -g: on RoCE prefer a RoCEv2 IPv4-mapped GID (what rdma-core's own tools
 * and NCCL pick, and routable through the rxe netdev), else the first valid
 * entry; on InfiniBand go without GRH, by LID.
 */
static int pick_gid(struct rdma_ctx *c, int want)
{
	char valid[256];
	int best = -1, best_score = -1;

	if (want >= 0) {
		struct ibv_gid_entry e;

		if (want >= c->port_attr.gid_tbl_len ||
		    ibv_query_gid_ex(c->ctx, (uint32_t)c->port, (uint32_t)want, &e, 0) ||
		    gid_is_zero(&e.gid)) {
			valid_gids(c, valid, sizeof(valid));
			rra_err("GID index %d is not valid on %s port %d (table size %d; valid: %s)",
				want, c->devname, c->port, c->port_attr.gid_tbl_len, valid);
			return -1;
		}
		c->gid_idx = want;
		c->gid = e.gid;
		c->use_grh = 1;
		return 0;
	}
	if (c->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
		c->gid_idx = -1;
		c->use_grh = 0;
		return 0;
	}
	for (int i = 0; i < c->port_attr.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		int score;

		if (ibv_query_gid_ex(c->ctx, (uint32_t)c->port, (uint32_t)i, &e, 0) ||
		    gid_is_zero(&e.gid))
			continue;
		score = (e.gid_type == IBV_GID_TYPE_ROCE_V2) * 2 + gid_is_v4mapped(&e.gid);
		if (score > best_score) {
			best = i;
			best_score = score;
			c->gid = e.gid;
		}
	}
	if (best < 0) {
		rra_err("%s port %d has no valid GID (no IP address on its netdev?)",
			c->devname, c->port);
		return -1;
	}
	c->gid_idx = best;
	c->use_grh = 1;
	return 0;
}

int rdma_open(struct rdma_ctx *c, const char *devname, int port, int gid_idx)
{
	struct ibv_device **list;
	struct ibv_device_attr dattr;
	int n = 0, found = -1;

	memset(c, 0, sizeof(*c));
	c->port = port;
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (devname)
			rra_err("RDMA device '%s' not found: no RDMA devices at all (is an RDMA driver loaded, e.g. rdma_rxe with 'rdma link add rxe0 type rxe netdev IF'?)",
				devname);
		else
			rra_err("no RDMA devices found (is an RDMA driver loaded, e.g. rdma_rxe with 'rdma link add rxe0 type rxe netdev IF'?)");
		if (list)
			ibv_free_device_list(list);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!devname || !strcmp(ibv_get_device_name(list[i]), devname)) {
			found = i;
			break;
		}
	if (found < 0) {
		char have[256];
		size_t used = 0;

		have[0] = '\0';
		for (int i = 0; i < n && used + 40 < sizeof(have); i++)
			used += (size_t)snprintf(have + used, sizeof(have) - used, "%s%s",
						 i ? ", " : "", ibv_get_device_name(list[i]));
		rra_err("RDMA device '%s' not found (available: %s)", devname, have);
		ibv_free_device_list(list);
		return -1;
	}
	c->devname = strdup(ibv_get_device_name(list[found]));
	c->ctx = ibv_open_device(list[found]);
	ibv_free_device_list(list);
	if (!c->ctx) {
		rra_err("cannot open RDMA device %s: %s", c->devname, strerror(errno));
		return -1;
	}
	if (ibv_query_device(c->ctx, &dattr)) {
		rra_err("ibv_query_device(%s): %s", c->devname, strerror(errno));
		return -1;
	}
	if (port < 1 || port > dattr.phys_port_cnt || ibv_query_port(c->ctx, (uint8_t)port, &c->port_attr)) {
		rra_err("port %d does not exist on %s (ports 1..%d)", port, c->devname,
			dattr.phys_port_cnt);
		return -1;
	}
	if (c->port_attr.state != IBV_PORT_ACTIVE) {
		rra_err("%s port %d is %s, not ACTIVE (netdev down?)", c->devname, port,
			ibv_port_state_str(c->port_attr.state));
		return -1;
	}
	c->max_msg = c->port_attr.max_msg_sz;
	return pick_gid(c, gid_idx);
}

static float *alloc_buf(size_t elems)
{
	void *p = NULL;
	size_t bytes = elems ? elems * sizeof(float) : sizeof(float);

	/* Page aligned: registration pins whole pages anyway. */
	if (posix_memalign(&p, 4096, bytes))
		return NULL;
	memset(p, 0, bytes);
	return p;
}

static struct ibv_mr *reg(struct rdma_ctx *c, void *buf, size_t elems, int access, const char *what)
{
	size_t bytes = elems ? elems * sizeof(float) : sizeof(float);
	struct ibv_mr *mr = ibv_reg_mr(c->pd, buf, bytes, access);

	if (!mr)
		rra_err("ibv_reg_mr(%s, %zu bytes) on %s: %s%s", what, bytes, c->devname,
			strerror(errno), errno == ENOMEM ? " (ulimit -l too low?)" : "");
	return mr;
}

static struct ibv_qp *mkqp(struct rdma_ctx *c)
{
	struct ibv_qp_init_attr a = {
		.send_cq = c->cq,
		.recv_cq = c->cq,
		.cap = {
			.max_send_wr = c->sq_depth,
			.max_recv_wr = c->rq_depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *qp = ibv_create_qp(c->pd, &a);

	if (!qp)
		rra_err("ibv_create_qp(RC, %u send / %u recv WRs) on %s: %s", c->sq_depth,
			c->rq_depth, c->devname, strerror(errno));
	return qp;
}

int rdma_alloc(struct rdma_ctx *c, size_t count, size_t scratch_elems,
	       uint32_t sq_depth, uint32_t rq_depth)
{
	int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	c->count = count;
	c->scratch_elems = scratch_elems;
	c->sq_depth = sq_depth;
	c->rq_depth = rq_depth;
	c->stash = calloc(rq_depth, sizeof(*c->stash));
	c->pend = calloc(rq_depth, sizeof(*c->pend));
	if (!c->stash || !c->pend)
		return -1;
	c->sendbuf = alloc_buf(count);
	c->recvbuf = alloc_buf(count);
	c->scratch = alloc_buf(scratch_elems);
	if (!c->sendbuf || !c->recvbuf || !c->scratch) {
		rra_err("out of memory for %zu-element buffers", count);
		return -1;
	}
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd) {
		rra_err("ibv_alloc_pd(%s): %s", c->devname, strerror(errno));
		return -1;
	}
	if (!(c->mr_send = reg(c, c->sendbuf, count, IBV_ACCESS_LOCAL_WRITE, "send buffer")) ||
	    !(c->mr_recv = reg(c, c->recvbuf, count, remote, "receive buffer")) ||
	    !(c->mr_scratch = reg(c, c->scratch, scratch_elems, remote, "scratch")))
		return -1;
	c->ch = ibv_create_comp_channel(c->ctx);
	if (!c->ch) {
		rra_err("ibv_create_comp_channel(%s): %s", c->devname, strerror(errno));
		return -1;
	}
	/* Room for every send and receive that can be outstanding at once. */
	c->cq = ibv_create_cq(c->ctx, (int)(2 * (sq_depth + rq_depth)), NULL, c->ch, 0);
	if (!c->cq) {
		rra_err("ibv_create_cq(%s): %s", c->devname, strerror(errno));
		return -1;
	}
	if (!(c->qp_send = mkqp(c)) || !(c->qp_recv = mkqp(c)))
		return -1;
	return 0;
}

void rdma_local_info(const struct rdma_ctx *c, int rank, struct rdma_info *i)
{
	memset(i, 0, sizeof(*i));
	i->rank = rank;
	i->pid = (int32_t)getpid();
	i->qpn_send = c->qp_send->qp_num;
	i->qpn_recv = c->qp_recv->qp_num;
	/* Per rank so a trace tells the streams apart; any 24-bit value works. */
	i->psn = (uint32_t)(0x1000 + rank * 0x100) & 0xffffff;
	i->lid = c->port_attr.lid;
	memcpy(i->gid, c->gid.raw, 16);
	i->recv_addr = (uintptr_t)c->recvbuf;
	i->scratch_addr = (uintptr_t)c->scratch;
	i->recv_rkey = c->mr_recv->rkey;
	i->scratch_rkey = c->mr_scratch->rkey;
}

static int to_rts(struct rdma_ctx *c, struct ibv_qp *qp, const struct rdma_info *me,
		  const struct rdma_info *peer, uint32_t dqpn, const char *what)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)c->port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			   IBV_QP_ACCESS_FLAGS);
	if (rc)
		goto fail;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = c->port_attr.active_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	/* RNR NAK timer 12 = 0.64 ms: short, receives are normally pre-posted. */
	a.min_rnr_timer = 12;
	a.ah_attr.port_num = (uint8_t)c->port;
	a.ah_attr.dlid = peer->lid;
	if (c->use_grh) {
		a.ah_attr.is_global = 1;
		memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
		a.ah_attr.grh.sgid_index = (uint8_t)c->gid_idx;
		a.ah_attr.grh.hop_limit = 64;
	}
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER);
	if (rc)
		goto fail;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	/*
	 * Transport timeout 14 (~67 ms) x 6 retries: a dead peer turns into
	 * RETRY_EXC_ERR in about half a second.  Not 7: rxe reads a
	 * retry_cnt of 7 as "retry forever" (rxe_comp.c never decrements it),
	 * which would leave only our CQ deadline to notice.  rnr_retry 7
	 * (infinite) because a receiver that is merely slow to re-post must
	 * not fail the run; a dead receiver is caught by the retry count or
	 * by our CQ deadline.  --qp-timeout and --retry-cnt change both, to
	 * ride out a lossy link (tests/bpf/stuck-ring.test: 7, for ever).
	 */
	a.timeout = (uint8_t)c->qp_timeout;
	a.retry_cnt = (uint8_t)c->retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc)
		goto fail;
	return 0;
fail:
	rra_err("connecting %s QP 0x%x to rank %d QP 0x%x failed: %s", what, qp->qp_num,
		peer->rank, dqpn, strerror(rc));
	return -1;
}

int rdma_connect(struct rdma_ctx *c, const struct rdma_info *me,
		 const struct rdma_info *left, const struct rdma_info *right)
{
	if (to_rts(c, c->qp_send, me, right, right->qpn_recv, "send"))
		return -1;
	return to_rts(c, c->qp_recv, me, left, left->qpn_send, "receive");
}

int rdma_post_write_imm(struct rdma_ctx *c, const void *src, size_t len,
			uint64_t raddr, uint32_t rkey, uint32_t imm, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src,
		.length = (uint32_t)len,
		.lkey = src >= (const void *)c->sendbuf &&
			src < (const void *)(c->sendbuf + c->count) ? c->mr_send->lkey
								    : c->mr_recv->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		/* count < nranks leaves some chunks empty: a 0-byte write still
		 * carries the immediate, keeping every step K WRs long. */
		.num_sge = len ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(c->qp_send, &wr, &bad);

	if (rc)
		rra_err("ibv_post_send(QP 0x%x): %s", c->qp_send->qp_num, strerror(rc));
	return rc ? -1 : 0;
}

int rdma_post_recv(struct rdma_ctx *c)
{
	/* WRITE WITH IMM only consumes the WQE: no data lands in it. */
	struct ibv_recv_wr wr = { .wr_id = c->recv_next_id, .num_sge = 0 };
	struct ibv_recv_wr *bad;
	int rc = ibv_post_recv(c->qp_recv, &wr, &bad);

	if (rc)
		rra_err("ibv_post_recv(QP 0x%x): %s", c->qp_recv->qp_num, strerror(rc));
	else
		c->recv_next_id++;
	return rc ? -1 : 0;
}

/*
 * Completion-channel wait rather than a busy poll: under software RDMA the
 * kernel threads doing the transfer need the CPU a spinning rank would take,
 * and it gives a natural deadline through poll(2).
 */
int rdma_poll(struct rdma_ctx *c, struct ibv_wc *wc, int max, int timeout_ms)
{
	uint64_t start = rra_now_ns();
	uint64_t deadline = start + (uint64_t)timeout_ms * 1000000ull;
	uint64_t spin_end = start + (uint64_t)c->spin_us * 1000ull;

	/* Optional short spin first: a completion due within microseconds
	 * costs no wakeup (-s). */
	while (c->spin_us && rra_now_ns() < spin_end) {
		int n = ibv_poll_cq(c->cq, max, wc);

		if (n)
			return n < 0 ? (rra_err("ibv_poll_cq failed on %s", c->devname), -1) : n;
	}
	for (;;) {
		struct pollfd p = { .fd = c->ch->fd, .events = POLLIN };
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		uint64_t now;
		int n = ibv_poll_cq(c->cq, max, wc);

		if (n < 0) {
			rra_err("ibv_poll_cq failed on %s", c->devname);
			return -1;
		}
		if (n > 0)
			return n;
		if (!c->cq_armed) {
			if (ibv_req_notify_cq(c->cq, 0)) {
				rra_err("ibv_req_notify_cq failed on %s", c->devname);
				return -1;
			}
			c->cq_armed = 1;
			continue; /* a completion may have slipped in before arming */
		}
		now = rra_now_ns();
		if (now >= deadline)
			return 0;
		n = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (n < 0 && errno != EINTR) {
			rra_err("poll on completion channel: %s", strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		if (ibv_get_cq_event(c->ch, &ev_cq, &ev_ctx)) {
			rra_err("ibv_get_cq_event failed on %s", c->devname);
			return -1;
		}
		c->cq_armed = 0;
		/* Acking takes a lock: batch it. */
		if (++c->cq_unacked >= 64) {
			ibv_ack_cq_events(c->cq, c->cq_unacked);
			c->cq_unacked = 0;
		}
	}
}

void rdma_close(struct rdma_ctx *c)
{
	/* Reverse order of creation; each step tolerates a partial setup. */
	if (c->qp_send)
		ibv_destroy_qp(c->qp_send);
	if (c->qp_recv)
		ibv_destroy_qp(c->qp_recv);
	if (c->cq) {
		if (c->cq_unacked)
			ibv_ack_cq_events(c->cq, c->cq_unacked);
		ibv_destroy_cq(c->cq);
	}
	if (c->ch)
		ibv_destroy_comp_channel(c->ch);
	if (c->mr_scratch)
		ibv_dereg_mr(c->mr_scratch);
	if (c->mr_recv)
		ibv_dereg_mr(c->mr_recv);
	if (c->mr_send)
		ibv_dereg_mr(c->mr_send);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ctx)
		ibv_close_device(c->ctx);
	free(c->stash);
	free(c->pend);
	free(c->sendbuf);
	free(c->recvbuf);
	free(c->scratch);
	free((void *)c->devname);
	memset(c, 0, sizeof(*c));
}
