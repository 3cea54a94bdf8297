// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-fail: run one kernel operation with the Nth fault-injection site of
 * this task failed (/proc/thread-self/fail-nth), and say whether the fault
 * was injected and how the operation ended.  Everything the operation needs
 * is opened before the fault is armed, so the sites counted are the
 * operation's own; the count is read back and disarmed right after it.
 *
 *   rdt-fail N load KO [PARAMS]           finit_module
 *   rdt-fail N newlink NAME TYPE NETDEV   rdma link add (RDMA_NLDEV_CMD_NEWLINK)
 *   rdt-fail N write FILE VALUE           one write(2) of VALUE
 *   rdt-fail N verbs DEV [GID_INDEX]      a self-connected RC QP: open, PD,
 *                                         MR, CQ, QP to RTS, recv, send, poll
 *
 * N = 0 runs the operation unarmed and prints how many sites it passed
 * (sites=), from a large fail-nth that it never reached.
 *
 * Output, one line: "injected=0|1 sites=S ret=R what=..." ; exit 0 when
 * the line was printed, 2 on a usage or set-up error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROBE_N 1000000u

static int nth_fd = -1;
/* The operation's file, socket or module, opened before arming. */
static int op_fd = -1;

static void die(const char *what)
{
	fprintf(stderr, "rdt-fail: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (pwrite(nth_fd, buf, len, 0) != len)
		die("arming /proc/thread-self/fail-nth");
}

/* What was left of the count; 0 means the fault was injected. */
static unsigned int disarm(void)
{
	char buf[16] = "";
	ssize_t r = pread(nth_fd, buf, sizeof(buf) - 1, 0);

	if (r <= 0)
		die("reading /proc/thread-self/fail-nth");
	buf[r] = '\0';
	if (pwrite(nth_fd, "0", 1, 0) != 1)
		die("disarming /proc/thread-self/fail-nth");
	return (unsigned int)strtoul(buf, NULL, 10);
}

static int op_load(char **av, int ac, const char **what)
{
	const char *params = ac > 1 ? av[1] : "";

	*what = "finit_module";
	if (syscall(SYS_finit_module, op_fd, params, 0))
		return -errno;
	return 0;
}

static void put_attr(char *buf, size_t *off, uint16_t type, const char *s)
{
	struct nlattr *a = (struct nlattr *)(buf + *off);
	size_t len = strlen(s) + 1;

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(buf + *off + NLA_HDRLEN, s, len);
	*off += NLA_ALIGN(a->nla_len);
}

/* The request `rdma link add NAME type TYPE netdev NETDEV` sends. */
static int op_newlink(char **av, int ac, const char **what)
{
	static char req[512] __attribute__((aligned(4)));
	static char ans[8192] __attribute__((aligned(4)));
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	struct nlmsgerr *e;
	size_t off = NLMSG_HDRLEN;
	int fd = op_fd;
	ssize_t r;

	(void)ac;
	put_attr(req, &off, RDMA_NLDEV_ATTR_DEV_NAME, av[0]);
	put_attr(req, &off, RDMA_NLDEV_ATTR_LINK_TYPE, av[1]);
	put_attr(req, &off, RDMA_NLDEV_ATTR_NDEV_NAME, av[2]);
	h->nlmsg_len = off;
	h->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = 1;

	*what = "sendmsg";
	if (sendto(fd, req, off, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	*what = "ack";
	r = recv(fd, ans, sizeof(ans), 0);
	if (r < 0)
		return -errno;
	h = (struct nlmsghdr *)ans;
	if (r < (ssize_t)NLMSG_HDRLEN || h->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	e = NLMSG_DATA(h);
	*what = "newlink";
	return e->error;
}

static int op_write(char **av, int ac, const char **what)
{
	size_t len = strlen(av[1]);

	(void)ac;
	*what = "write";
	if (write(op_fd, av[1], len) != (ssize_t)len)
		return -errno;
	return 0;
}

struct verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char buf[2][64];
};

static int to_rts(struct verbs *v, int gid_index)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr a;
	union ibv_gid gid;

	if (ibv_query_port(v->ctx, 1, &port) ||
	    ibv_query_gid(v->ctx, 1, gid_index, &gid))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = v->qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 6;
	a.rnr_retry = 6;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Both completions of a send to itself, within 5 s. */
static int poll_two(struct verbs *v)
{
	struct timespec t0, t;
	struct ibv_wc wc[2];
	int got = 0, n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < 2) {
		n = ibv_poll_cq(v->cq, 2 - got, wc);
		if (n < 0)
			return -EIO;
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				return -EIO;
		got += n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 5)
			return -ETIMEDOUT;
	}
	return 0;
}

static int verbs_run(struct verbs *v, const char *dev, int gid_index,
		     const char **what)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa;
	struct ibv_sge sge[2];
	struct ibv_recv_wr rwr = { 0 }, *rbad;
	struct ibv_send_wr swr = { 0 }, *sbad;
	int i, ret;

	if (!list)
		return -errno;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	*what = "open_device";
	if (list[i])
		v->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!v->ctx)
		return errno ? -errno : -ENODEV;
	*what = "alloc_pd";
	v->pd = ibv_alloc_pd(v->ctx);
	if (!v->pd)
		return -errno;
	*what = "reg_mr";
	v->mr = ibv_reg_mr(v->pd, v->buf, sizeof(v->buf),
			   IBV_ACCESS_LOCAL_WRITE);
	if (!v->mr)
		return -errno;
	*what = "create_cq";
	v->cq = ibv_create_cq(v->ctx, 4, NULL, NULL, 0);
	if (!v->cq)
		return -errno;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = v->cq;
	qa.recv_cq = v->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2;
	qa.cap.max_recv_wr = 2;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	*what = "create_qp";
	v->qp = ibv_create_qp(v->pd, &qa);
	if (!v->qp)
		return -errno;
	*what = "modify_qp";
	if (to_rts(v, gid_index))
		return errno ? -errno : -EINVAL;
	sge[0] = (struct ibv_sge){ (uintptr_t)v->buf[1], 64, v->mr->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)v->buf[0], 64, v->mr->lkey };
	rwr.wr_id = 1;
	rwr.sg_list = &sge[0];
	rwr.num_sge = 1;
	*what = "post_recv";
	ret = ibv_post_recv(v->qp, &rwr, &rbad);
	if (ret)
		return -ret;
	swr.wr_id = 2;
	swr.sg_list = &sge[1];
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	*what = "post_send";
	ret = ibv_post_send(v->qp, &swr, &sbad);
	if (ret)
		return -ret;
	*what = "poll_cq";
	return poll_two(v);
}

/* Torn down unarmed: a failed destroy is the kernel's fault, say so. */
static int verbs_free(struct verbs *v)
{
	int bad = 0;

	if (v->qp && ibv_destroy_qp(v->qp))
		bad = 1;
	if (v->cq && ibv_destroy_cq(v->cq))
		bad = 1;
	if (v->mr && ibv_dereg_mr(v->mr))
		bad = 1;
	if (v->pd && ibv_dealloc_pd(v->pd))
		bad = 1;
	if (v->ctx && ibv_close_device(v->ctx))
		bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	static struct verbs v;
	const char *what = "none";
	unsigned int n, left;
	char **av;
	int ac, ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: rdt-fail N load|newlink|write|verbs ARGS...\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	av = argv + 3;
	ac = argc - 3;
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		die("/proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION?)");
	if (!strcmp(argv[2], "verbs")) {
		/* The provider is loaded and the strings set up before arming. */
		struct ibv_device **l = ibv_get_device_list(NULL);

		if (l)
			ibv_free_device_list(l);
	}
	if ((!strcmp(argv[2], "load") || !strcmp(argv[2], "verbs")) && ac < 1) {
		fprintf(stderr, "rdt-fail: %s needs an argument\n", argv[2]);
		return 2;
	}
	if ((!strcmp(argv[2], "newlink") && ac != 3) ||
	    (!strcmp(argv[2], "write") && ac != 2)) {
		fprintf(stderr, "rdt-fail: newlink NAME TYPE NETDEV | write FILE VALUE\n");
		return 2;
	}
	if (!strcmp(argv[2], "load"))
		op_fd = open(av[0], O_RDONLY | O_CLOEXEC);
	else if (!strcmp(argv[2], "write"))
		op_fd = open(av[0], O_WRONLY | O_CLOEXEC);
	else if (!strcmp(argv[2], "newlink"))
		op_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
			       NETLINK_RDMA);
	else
		op_fd = 0;
	if (op_fd < 0)
		die(av[0]);

	arm(n ? n : PROBE_N);
	if (!strcmp(argv[2], "load"))
		ret = op_load(av, ac, &what);
	else if (!strcmp(argv[2], "newlink"))
		ret = op_newlink(av, ac, &what);
	else if (!strcmp(argv[2], "write"))
		ret = op_write(av, ac, &what);
	else if (!strcmp(argv[2], "verbs"))
		ret = verbs_run(&v, av[0], ac > 1 ? atoi(av[1]) : 1, &what);
	else {
		disarm();
		fprintf(stderr, "rdt-fail: unknown operation '%s'\n", argv[2]);
		return 2;
	}
	left = disarm();
	if (!strcmp(argv[2], "verbs") && verbs_free(&v))
		printf("teardown-failed ");
	printf("injected=%d sites=%u ret=%d pid=%d what=%s\n", n && !left,
	       (n ? n : PROBE_N) - left, ret, (int)getpid(),
	       ret ? what : "ok");
	return 0;
}
