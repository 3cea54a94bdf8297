// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-bpf-selftest: librdtbpf alone, without librdmatrace.  Prints every
 * record as one line of key=value pairs (stable, for tests to grep), the
 * status lines on stderr, and "dropped=N" at the end.
 *
 *   rdt-bpf-selftest [--nccl[=PATH[:PATH..]|PID]] [--rxe[=packets]] [--tcp] [--usdt=BIN]
 *                    [--duration=SEC] [--ready=FILE]
 *
 * --ready=FILE is created once everything is attached, so a test can
 * start its workload without sleeping on a guess.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "rdt_bpf.h"
#include <rdmatrace/wire.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void addr(char *buf, size_t len, const uint8_t *a, int family)
{
	if (!inet_ntop(family == 2 ? AF_INET : AF_INET6, a, buf, len))
		snprintf(buf, len, "?");
}

static int print_rec(void *ctx, const void *rec, size_t len)
{
	const struct rdt_hdr *h = rec;
	char s[64], d[64];

	(void)ctx;
	if (len < sizeof(*h) || h->size != len || h->magic != RDT_REC_MAGIC ||
	    h->source != RDT_SRC_BPF) {
		printf("BAD len=%zu\n", len);
		return 0;
	}
	printf("ts=%" PRIu64 " pid=%u tid=%u cpu=%u ", (uint64_t)h->ts_ns, h->pid, h->tid, h->cpu);
	switch (h->type) {
	case RDT_EV_NCCL_CALL: {
		const struct rdt_ev_nccl_call *e = rec;

		printf("NCCL_CALL fn=%s ret=%d count=%" PRIu64 " datatype=%d op=%d root=%d "
		       "comm=0x%" PRIx64 " stream=0x%" PRIx64 " hash=0x%016" PRIx64 " rank=%d "
		       "nranks=%d seq=%" PRIu64 " dur_ns=%" PRIu64 "\n",
		       rdt_bpf_nccl_fn_name(e->fn), e->ret, (uint64_t)e->count, e->datatype, e->op, e->root,
		       (uint64_t)e->comm, (uint64_t)e->stream, (uint64_t)e->comm_hash, e->rank,
		       e->nranks, (uint64_t)e->seq, (uint64_t)e->duration_ns);
		break;
	}
	case RDT_EV_NCCL_COMM: {
		const struct rdt_ev_nccl_comm *e = rec;

		printf("NCCL_COMM fn=%s ret=%d comm=0x%" PRIx64 " hash=0x%016" PRIx64
		       " rank=%d nranks=%d\n", rdt_bpf_nccl_fn_name(e->fn), e->ret, (uint64_t)e->comm,
		       (uint64_t)e->comm_hash, e->rank, e->nranks);
		break;
	}
	case RDT_EV_RXE_CQE: {
		const struct rdt_ev_rxe_cqe *e = rec;

		/* The QP's packets since its last CQE before the CQE's own
		 * fields, so that "user=N" stays last. */
		printf("RXE_CQE dev=%u qpn=%u cq=%u counted=%u tx_pkts=%u tx_bytes=%" PRIu64
		       " tx_psn_first=%u tx_psn_last=%u rx_pkts=%u rx_bytes=%" PRIu64
		       " rx_psn_first=%u rx_psn_last=%u wr_id=0x%" PRIx64 " status=%u opcode=%u "
		       "byte_len=%u user=%u\n", h->dev, e->qpn, e->cq_id, e->counted, e->tx_pkts,
		       (uint64_t)e->tx_bytes, e->tx_psn_first, e->tx_psn_last, e->rx_pkts,
		       (uint64_t)e->rx_bytes, e->rx_psn_first, e->rx_psn_last,
		       (uint64_t)e->wr_id, e->status, e->opcode, e->byte_len, e->user);
		break;
	}
	case RDT_EV_RXE_RCV: {
		const struct rdt_ev_rxe_rcv *e = rec;

		printf("RXE_RCV dev=%u qpn=%u psn=%u opcode=0x%02x length=%u\n", h->dev, e->qpn,
		       e->psn, e->opcode, e->length);
		break;
	}
	case RDT_EV_RXE_XMIT: {
		const struct rdt_ev_rxe_xmit *e = rec;

		addr(s, sizeof(s), e->saddr, e->family);
		addr(d, sizeof(d), e->daddr, e->family);
		printf("RXE_XMIT dev=%u src_qpn=%u qpn=%u psn=%u opcode=0x%02x length=%u "
		       "family=%u saddr=%s daddr=%s\n", h->dev, e->src_qpn, e->qpn, e->psn,
		       e->opcode, e->length, e->family, s, d);
		break;
	}
	case RDT_EV_RXE_RETRY: {
		const struct rdt_ev_rxe_retry *e = rec;
		static const char *const k[] = { "?", "retransmit", "rnr", "nak_seq" };

		printf("RXE_RETRY dev=%u qpn=%u psn=%u kind=%s\n", h->dev, e->qpn,
		       e->psn, e->kind < 4 ? k[e->kind] : "?");
		break;
	}
	case RDT_EV_TCP_RETRANSMIT: {
		const struct rdt_ev_tcp_retransmit *e = rec;

		addr(s, sizeof(s), e->saddr, e->family);
		addr(d, sizeof(d), e->daddr, e->family);
		printf("TCP_RETRANSMIT family=%u saddr=%s sport=%u daddr=%s dport=%u state=%u\n",
		       e->family, s, e->sport, d, e->dport, e->state);
		break;
	}
	case RDT_EV_COLL_MARK: {
		const struct rdt_ev_coll_mark *e = rec;

		printf("COLL_MARK phase=%s op=%u bytes=%" PRIu64 " rank=%d nranks=%d seq=%" PRIu64
		       "\n", e->phase ? "end" : "begin", e->op, (uint64_t)e->bytes, e->rank,
		       e->nranks, (uint64_t)e->seq);
		break;
	}
	case RDT_EV_COLL_STEP: {
		const struct rdt_ev_coll_step *e = rec;

		printf("COLL_STEP op=%u rank=%d nranks=%d seq=%" PRIu64 " step=%u steps=%u\n",
		       e->op, e->rank, e->nranks, (uint64_t)e->seq, e->step, e->steps);
		break;
	}
	default:
		printf("TYPE%u size=%u\n", h->type, h->size);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rdt_bpf_opts o = { 0 };
	const char *ready = NULL;
	double duration = 0;
	struct timespec t0, t;
	struct rdt_bpf *b;
	char err[4096];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strncmp(a, "--nccl", 6) && (!a[6] || a[6] == '=')) {
			o.nccl = true;
			o.nccl_target = a[6] ? a + 7 : NULL;
		} else if (!strcmp(a, "--rxe")) {
			o.rxe = true;
		} else if (!strcmp(a, "--rxe=packets")) {
			o.rxe = o.rxe_packets = true;
		} else if (!strcmp(a, "--tcp")) {
			o.tcp = true;
		} else if (!strncmp(a, "--usdt=", 7)) {
			o.usdt = true;
			o.usdt_target = a + 7;
		} else if (!strncmp(a, "--duration=", 11)) {
			duration = atof(a + 11);
		} else if (!strncmp(a, "--ready=", 8)) {
			ready = a + 8;
		} else {
			fprintf(stderr, "usage: %s [--nccl[=PATH|PID]] [--rxe[=packets]] [--tcp] [--usdt=BIN] "
				"[--duration=SEC] [--ready=FILE]\n", argv[0]);
			return 2;
		}
	}
	if (!o.nccl && !o.rxe && !o.tcp && !o.usdt)
		o.nccl = o.rxe = o.tcp = true;

	b = rdt_bpf_open(&o, err, sizeof(err));
	if (!b) {
		fprintf(stderr, "%s", err);
		return 1;
	}
	fprintf(stderr, "%s", rdt_bpf_status(b));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!stop) {
		struct pollfd p = { .fd = rdt_bpf_fd(b), .events = POLLIN };

		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			break;
		rdt_bpf_consume(b, print_rec, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (duration > 0 && (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= duration)
			break;
	}
	rdt_bpf_consume(b, print_rec, NULL);
	printf("dropped=%" PRIu64 "\n", rdt_bpf_dropped(b));
	rdt_bpf_close(b);
	return 0;
}
