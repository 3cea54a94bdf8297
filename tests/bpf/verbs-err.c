// SPDX-License-Identifier: GPL-2.0
/*
 * Error completions made on purpose, for tests/bpf/verbs-err.test: two RC
 * QPs of one process joined to each other on DEV's port 1, then on QP A a
 * send whose SGE names a bad lkey (the provider completes it with an
 * error and moves the QP to the error state) and a second, good send that
 * is flushed.  Prints what the application itself polled, one line a
 * completion: "qpn=N wr_id=N status=N vendor_err=0xN opcode=N" — the
 * truth the trace is held to.  With "cqex", the CQ is an ibv_cq_ex polled
 * through ibv_start_poll() / ibv_next_poll() / ibv_end_poll(), each
 * completion's fields read with ibv_wc_read_*(): the extended completion
 * API, which never calls the ops table's poll_cq.  With "deadpeer",
 * B is destroyed first and A sends to it: rxe drops each of A's
 * retransmissions for want of a QP until A's retries run out (a
 * completion with IBV_WC_RETRY_EXC_ERR), for tests/bpf/rxe-pingpong.test:
 * packets addressed to a QP that is gone must not be counted for it.
 *
 *   verbs-err DEV GID_INDEX [cqex|deadpeer]
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static long ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void die(const char *what)
{
	fprintf(stderr, "verbs-err: %s\n", what);
	exit(1);
}

/* Polls until @want completions in all, printing each; at most 10 s, a
 * poll every ms (each one a uprobe while traced). */
static int poll_until(struct ibv_cq *cq, int want, int got)
{
	for (int tries = 0; got < want && tries < 10000; tries++) {
		struct ibv_wc wc;

		if (ibv_poll_cq(cq, 1, &wc) != 1) {
			usleep(1000);
			continue;
		}
		printf("qpn=%u wr_id=%llu status=%d vendor_err=0x%x opcode=%d\n",
		       wc.qp_num, (unsigned long long)wc.wr_id, wc.status, wc.vendor_err,
		       wc.opcode);
		got++;
	}
	return got;
}

/* poll_until() through the extended completion API. */
static int poll_until_ex(struct ibv_cq_ex *cq, int want, int got)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };

	for (int tries = 0; got < want && tries < 10000; tries++) {
		if (ibv_start_poll(cq, &pa)) {
			usleep(1000);
			continue;
		}
		do {
			uint32_t qpn = ibv_wc_read_qp_num(cq);
			uint32_t ve = ibv_wc_read_vendor_err(cq);
			int op = ibv_wc_read_opcode(cq);

			printf("qpn=%u wr_id=%llu status=%d vendor_err=0x%x opcode=%d\n", qpn,
			       (unsigned long long)cq->wr_id, cq->status, ve, op);
			got++;
		} while (got < want && !ibv_next_poll(cq));
		ibv_end_poll(cq);
	}
	return got;
}

static void to_rts(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid, int sgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("modify to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.rq_psn = 1;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("modify to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 6;
	a.rnr_retry = 6;
	a.sq_psn = 1;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify to RTS");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
	};
	static char buf[4096];
	union ibv_gid gid;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx = NULL;
	struct ibv_cq *cq;
	int n, got;
	bool ex, dead;

	if (argc != 3 && (argc != 4 || (strcmp(argv[3], "cqex") && strcmp(argv[3], "deadpeer"))))
		die("usage: verbs-err DEV GID_INDEX [cqex|deadpeer]");
	ex = argc == 4 && !strcmp(argv[3], "cqex");
	dead = argc == 4 && !strcmp(argv[3], "deadpeer");
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no such device");
	if (ibv_query_gid(ctx, 1, atoi(argv[2]), &gid))
		die("query gid");
	pd = ibv_alloc_pd(ctx);
	if (ex) {
		struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };

		cqx = pd ? ibv_create_cq_ex(ctx, &ca) : NULL;
		cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	} else {
		cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	}
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!mr)
		die("pd, cq or mr");
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(pd, &ia);
	b = ibv_create_qp(pd, &ia);
	if (!a || !b)
		die("create qp");
	to_rts(a, b->qp_num, &gid, atoi(argv[2]));
	to_rts(b, a->qp_num, &gid, atoi(argv[2]));

	/* A receive for B, then A's send with a bad lkey, then a good one. */
	struct ibv_sge rs = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 100, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_sge bad_sge = { .addr = (uintptr_t)buf, .length = 64, .lkey = mr->lkey ^ 0x5a5a00 };
	struct ibv_sge good_sge = { .addr = (uintptr_t)buf + 64, .length = 64, .lkey = mr->lkey };
	struct ibv_send_wr s1 = { .wr_id = 1, .sg_list = &bad_sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr s2 = { .wr_id = 2, .sg_list = &good_sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *sbad;

	long t0 = ms();

	if (dead) {
		uint32_t qb = b->qp_num;

		if (ibv_destroy_qp(b) || ibv_post_send(a, &s2, &sbad))
			die("destroy B, post to it");
		/* timeout 14 (67 ms) times 1 + retry_cnt 6: about half a second */
		got = poll_until(cq, 1, 0);
		printf("qp_a=%u qp_b=%u (destroyed) completions=%d polled_ms=%ld\n", a->qp_num,
		       qb, got, ms() - t0);
		fflush(stdout);
		if (ibv_destroy_qp(a) || ibv_dereg_mr(mr) || ibv_destroy_cq(cq) ||
		    ibv_dealloc_pd(pd) || ibv_close_device(ctx))
			die("teardown");
		ibv_free_device_list(list);
		return got == 1 ? 0 : 1;
	}
	if (ibv_post_recv(b, &rwr, &rbad) || ibv_post_send(a, &s1, &sbad))
		die("post");
	/* the second after the first completed: the QP is in error by then */
	got = ex ? poll_until_ex(cqx, 1, 0) : poll_until(cq, 1, 0);
	if (ibv_post_send(a, &s2, &sbad))
		printf("post_send after the error: refused\n");
	got = ex ? poll_until_ex(cqx, 2, got) : poll_until(cq, 2, got);
	printf("qp_a=%u qp_b=%u completions=%d polled_ms=%ld\n", a->qp_num, b->qp_num,
	       got, ms() - t0);
	fflush(stdout);
	if (ibv_destroy_qp(a) || ibv_destroy_qp(b) || ibv_dereg_mr(mr) ||
	    ibv_destroy_cq(cq) || ibv_dealloc_pd(pd) || ibv_close_device(ctx))
		die("teardown");
	ibv_free_device_list(list);
	printf("done_ms=%ld\n", ms() - t0);
	return got >= 1 ? 0 : 1;
}
