// SPDX-License-Identifier: GPL-2.0
/*
 * Figure 8 (--verbs): what the verbs source adds to a post_send and to a
 * poll_cq, on this host's CPU.  There is no RDMA device on the bench
 * host, so the two calls are this program's own functions with a
 * provider's signatures, over verbs.h's real structures (a context whose
 * device is "bench0", a QP, a CQ, a one-SGE SEND WR, a poll returning one
 * completion): the programs read exactly what they read on a provider.
 *
 *   verbs-bench offsets        the two functions' file offsets, for the
 *                              tracefs floor (host-verbs.sh)
 *   verbs-bench plain CALLS    untraced (or under tracefs probes: the floor)
 *   verbs-bench traced CALLS   verbs.bpf.c's post_send/post_ret and
 *                              poll_cq/poll_cq_ret on the two functions,
 *                              a thread consuming the ring buffer
 *
 * Prints "post_send_ns N", "poll_cq_ns N", and, traced, "records N" and
 * "dropped N" (records written, and drops counted: the ring is drained by
 * a consumer thread, as rdmatrace-dump's own).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rdt_bpf_int.h"
#include "verbs.skel.h"

/*
 * The "provider": two functions that start with a push, as providers'
 * functions do (librxe's post_send and poll_cq), which uprobes emulate;
 * a first instruction they must single-step out of line (what gcc makes
 * of a small leaf function) costs several times more in a VM.  So they
 * are written in assembly: post_send returns 0, poll_cq calls the C body
 * that fills one completion.
 */
int bench_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int bench_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

__attribute__((used)) int bench_poll_body(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)cq;
	if (n < 1)
		return 0;
	wc->wr_id = 7;
	wc->status = IBV_WC_SUCCESS;
	wc->opcode = IBV_WC_SEND;
	wc->byte_len = 64;
	wc->qp_num = 17;
	return 1;
}

__asm__(".text\n"
	".globl bench_post_send\n.type bench_post_send, @function\n"
	"bench_post_send:\n\tpush %rbp\n\tmov %rsp, %rbp\n\txor %eax, %eax\n"
	"\tpop %rbp\n\tret\n.size bench_post_send, .-bench_post_send\n"
	".globl bench_poll_cq\n.type bench_poll_cq, @function\n"
	"bench_poll_cq:\n\tpush %rbp\n\tmov %rsp, %rbp\n\tcall bench_poll_body\n"
	"\tpop %rbp\n\tret\n.size bench_poll_cq, .-bench_poll_cq\n");

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static atomic_bool done;
static atomic_ulong records;

static int on_rec(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	atomic_fetch_add(&records, 1);
	return 0;
}

static void *consumer(void *rb)
{
	while (!atomic_load(&done))
		ring_buffer__poll(rb, 50);
	ring_buffer__consume(rb);
	return NULL;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "verbs-bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct bpf_link *probe(struct bpf_program *p, bool ret, uintptr_t fn)
{
	char path[512];
	uint64_t off;
	struct bpf_link *l;

	if (!rdt_verbs_addr_to_file(fn, path, sizeof(path), &off))
		die("no file offset for a function", ENOENT);
	l = bpf_program__attach_uprobe(p, ret, 0, path, off);
	if (!l)
		die("attach", errno);
	return l;
}

int main(int argc, char **argv)
{
	static struct ibv_device dev = { .name = "bench0" };
	static struct ibv_context ctx = { .device = &dev };
	static struct ibv_qp qp = { .context = &ctx, .qp_num = 17 };
	static struct ibv_cq cq = { .context = &ctx, .handle = 3 };
	static char buf[64];
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = 1 };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct rdt_verbs *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link *links[4];
	struct ibv_wc wc;
	pthread_t th;
	long calls;
	bool traced;
	double t0;

	if (argc == 2 && !strcmp(argv[1], "offsets")) {
		char path[512];
		uint64_t a, b;

		if (!rdt_verbs_addr_to_file((uintptr_t)bench_post_send, path, sizeof(path), &a) ||
		    !rdt_verbs_addr_to_file((uintptr_t)bench_poll_cq, path, sizeof(path), &b))
			die("no file offsets", ENOENT);
		printf("%s 0x%llx 0x%llx\n", path, (unsigned long long)a, (unsigned long long)b);
		return 0;
	}
	if (argc != 3 || (strcmp(argv[1], "plain") && strcmp(argv[1], "traced")) ||
	    (calls = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: verbs-bench offsets | plain|traced CALLS\n");
		return 2;
	}
	traced = !strcmp(argv[1], "traced");
	if (traced) {
		uint64_t h = 0xcbf29ce484222325ull;
		uint32_t idx = 0;

		skel = rdt_verbs__open();
		if (!skel)
			die("open verbs.bpf.o", errno);
		rdt_verbs_rodata(skel);
		if (rdt_verbs__load(skel))
			die("load verbs.bpf.o (root?)", errno);
		for (const char *c = dev.name; *c; c++)
			h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
		bpf_map_update_elem(bpf_map__fd(skel->maps.verbs_devs), &h, &idx, BPF_ANY);
		links[0] = probe(skel->progs.verbs_post_send, false, (uintptr_t)bench_post_send);
		links[1] = probe(skel->progs.verbs_post_ret, true, (uintptr_t)bench_post_send);
		links[2] = probe(skel->progs.verbs_poll_cq, false, (uintptr_t)bench_poll_cq);
		links[3] = probe(skel->progs.verbs_poll_cq_ret, true, (uintptr_t)bench_poll_cq);
		rb = ring_buffer__new(bpf_map__fd(skel->maps.rdt_events), on_rec, NULL, NULL);
		if (!rb)
			die("ring buffer", errno);
		if (pthread_create(&th, NULL, consumer, rb))
			die("thread", EAGAIN);
	}
	for (long i = 0; i < calls / 10; i++)	/* warm up */
		bench_post_send(&qp, &wr, &bad);
	t0 = now_ns();
	for (long i = 0; i < calls; i++)
		bench_post_send(&qp, &wr, &bad);
	printf("post_send_ns %.1f\n", (now_ns() - t0) / calls);
	t0 = now_ns();
	for (long i = 0; i < calls; i++)
		bench_poll_cq(&cq, 1, &wc);
	printf("poll_cq_ns %.1f\n", (now_ns() - t0) / calls);
	if (traced) {
		int ncpu = libbpf_num_possible_cpus();
		uint64_t *v = calloc(ncpu > 0 ? ncpu : 1, sizeof(*v)), drops = 0;
		uint32_t zero = 0;

		atomic_store(&done, true);
		pthread_join(th, NULL);
		if (v && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.rdt_drops), &zero, v))
			for (int i = 0; i < ncpu; i++)
				drops += v[i];
		printf("records %lu\ndropped %llu\n", atomic_load(&records),
		       (unsigned long long)drops);
		free(v);
		for (int i = 0; i < 4; i++)
			bpf_link__destroy(links[i]);
		ring_buffer__free(rb);
		rdt_verbs__destroy(skel);
	}
	return 0;
}
