// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic trace generator for the library tests.  Every parameter that
 * a test asserts on (counts, latencies, bandwidths) follows from the
 * command line, so tests compute expectations independently of the code
 * under test.
 *
 *   rdt-gen [opts] OUT
 *   -q QPS      queue pairs (qpn 100.., default 2)
 *   -n WRS      sends per QP, each completed (default 10)
 *   -l NS       base latency; WR i completes after NS + (i % 10) * 100
 *   -t NS       first timestamp (default 1000000)
 *   -s NS       spacing between posts on a QP (default 1000)
 *   -c CPUS     records spread over CPUs (cpu = i % CPUS)
 *   -b BOOTID   boot id (default "boot-a"); -o NS realtime offset
 *   -H HOST     host name
 *   -L N        lost events announced by a SUBBUF on cpu 1
 *   -G N        then a SUBBUF on cpu 1 whose seq says N sub-buffers were
 *               skipped unread (relay's overwrite branch)
 *   -u N        records of an unknown type (RDT_EV_MAX: never assigned)
 *   -N N        ncclAllReduce calls (4 MiB float, 4 ranks, 1 ms each)
 *   -T N        TCP retransmits inside the first collective
 *   -P N        port counter samples (rxe0 port 1): N of rcvd_seq_err, delta
 *               1 each, inside the first collective; one of sent_pkts,
 *               delta 5, between the first two collectives (in none)
 *   -A MAJOR    file header ABI major (to test refusal)
 *   -V MAJOR    record header version
 *   -p PID      pid (default 4242)
 *   -F N        per QP, after its sends, N failed posts of two WRs (wr_id
 *               1000+j posted and completed, 2000+j not: POST_FAIL with
 *               bad_index 1), each reposted alone 500 ns later and
 *               completed; every completion comes NS (-l) after its post
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdmatrace/wire.h>

static union {
	struct rdt_hdr h;
	unsigned char b[256];
} *recs;
static size_t nrec, caprec;
static unsigned int ncpus = 1, version = RDT_ABI_MAJOR;
static uint32_t pid = 4242;

static void *rec(unsigned int type, size_t size, uint64_t ts, uint32_t dev)
{
	struct rdt_hdr *h;

	if (nrec == caprec) {
		caprec = caprec ? caprec * 2 : 1024;
		recs = realloc(recs, caprec * sizeof(*recs));
		if (!recs)
			exit(1);
	}
	memset(&recs[nrec], 0, sizeof(recs[nrec]));
	h = &recs[nrec].h;
	h->magic = RDT_REC_MAGIC;
	h->version = (__u8)version;
	h->source = type >= 128 ? RDT_SRC_BPF : RDT_SRC_KMOD;
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = pid;
	h->cpu = (uint32_t)(nrec % ncpus);
	h->dev = dev;
	nrec++;
	return h;
}

/* Stable: equal timestamps keep generation order. */
/* A send WR at @t; if @done, its completion @lat later. */
static void post(uint32_t qpn, uint64_t wr_id, uint16_t index, uint64_t t,
		 bool done, uint64_t lat)
{
	struct rdt_ev_post_send *p = rec(RDT_EV_POST_SEND, sizeof(*p), t, 0);
	struct rdt_ev_poll_cq_wc *w;

	p->qpn = qpn;
	p->wr_id = wr_id;
	p->index = index;
	p->opcode = 2;	/* SEND */
	p->total_len = 4096;
	p->num_sge = 1;
	p->send_flags = 2;
	if (!done)
		return;
	w = rec(RDT_EV_POLL_CQ_WC, sizeof(*w), t + lat, 0);
	w->qpn = qpn;
	w->wr_id = wr_id;
	w->byte_len = 4096;
	w->cq_id = 1;
}

static int cmp(const void *a, const void *b)
{
	const struct rdt_hdr *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
	unsigned long qps = 2, wrs = 10, lat = 5000, start = 1000000, spacing = 1000;
	unsigned long lost = 0, gap = 0, unknown = 0, nccl = 0, tcp = 0, fails = 0, ctrs = 0, abi = RDT_ABI_MAJOR;
	const char *boot = "boot-a", *host = "gen-host";
	long long offset = 1700000000000000000ll;
	struct rdt_file_hdr fh;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "q:n:l:t:s:c:b:o:H:L:G:u:N:T:A:V:p:F:P:")) != -1) {
		switch (c) {
		case 'q': qps = strtoul(optarg, NULL, 0); break;
		case 'n': wrs = strtoul(optarg, NULL, 0); break;
		case 'l': lat = strtoul(optarg, NULL, 0); break;
		case 't': start = strtoul(optarg, NULL, 0); break;
		case 's': spacing = strtoul(optarg, NULL, 0); break;
		case 'c': ncpus = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'b': boot = optarg; break;
		case 'o': offset = strtoll(optarg, NULL, 0); break;
		case 'H': host = optarg; break;
		case 'L': lost = strtoul(optarg, NULL, 0); break;
		case 'G': gap = strtoul(optarg, NULL, 0); break;
		case 'u': unknown = strtoul(optarg, NULL, 0); break;
		case 'N': nccl = strtoul(optarg, NULL, 0); break;
		case 'T': tcp = strtoul(optarg, NULL, 0); break;
		case 'A': abi = strtoul(optarg, NULL, 0); break;
		case 'V': version = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'p': pid = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'F': fails = strtoul(optarg, NULL, 0); break;
		case 'P': ctrs = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (optind != argc - 1 || !ncpus)
		return 2;

	{
		struct rdt_ev_comm *cm = rec(RDT_EV_COMM, sizeof(*cm), start - 2, RDT_NO_DEV);
		struct rdt_ev_device *d = rec(RDT_EV_DEVICE_ADD, sizeof(*d), start - 1, 0);

		snprintf(cm->comm, sizeof(cm->comm), "gen");
		snprintf(d->name, sizeof(d->name), "rxe0");
	}
	for (unsigned long q = 0; q < qps; q++) {
		uint32_t qpn = 100 + (uint32_t)q;
		struct rdt_ev_qp_create *qc = rec(RDT_EV_QP_CREATE, sizeof(*qc), start + q, 0);

		qc->qpn = qpn;
		qc->qp_type = 2;
		for (int s = 0; s < 3; s++) {
			struct rdt_ev_qp_modify *m =
				rec(RDT_EV_QP_MODIFY, sizeof(*m), start + 10 + q * 3 + (unsigned)s, 0);

			m->qpn = qpn;
			m->old_state = (__u8)s;
			m->new_state = m->cur_state = (__u8)(s + 1);
			m->attr_mask = 1;
		}
		for (unsigned long i = 0; i < wrs; i++)
			post(qpn, i, 0, start + 1000 + i * spacing + q, true,
			     lat + (i % 10) * 100);
		for (unsigned long j = 0; j < fails; j++) {
			uint64_t t = start + 1000 + wrs * spacing + 100000 + j * 10000 + q;

			post(qpn, 1000 + j, 0, t, true, lat);
			post(qpn, 2000 + j, 1, t, false, 0);
			struct rdt_ev_post_fail *f = rec(RDT_EV_POST_FAIL, sizeof(*f), t + 1, 0);

			f->qpn = qpn;
			f->ret = -12;
			f->post_type = RDT_EV_POST_SEND;
			f->nr_wr = 2;
			f->bad_index = 1;
			post(qpn, 2000 + j, 0, t + 500, true, lat);
		}
	}
	for (unsigned long i = 0; i < nccl; i++) {
		uint64_t t = start + 2000000 + i * 3000000;
		struct rdt_ev_nccl_call *n = rec(RDT_EV_NCCL_CALL, sizeof(*n), t, RDT_NO_DEV);

		n->fn = RDT_NCCL_ALL_REDUCE;
		n->count = 1 << 20;
		n->datatype = 7;	/* ncclFloat32 */
		n->op = 0;
		n->root = -1;
		n->rank = 0;
		n->nranks = 4;
		n->comm = 0x5000;
		n->comm_hash = 0xabcdef0123456789ull;
		n->seq = i;
		n->duration_ns = 1000000;
	}
	for (unsigned long i = 0; i < tcp; i++) {
		struct rdt_ev_tcp_retransmit *t =
			rec(RDT_EV_TCP_RETRANSMIT, sizeof(*t), start + 2000000 + 10 + i, RDT_NO_DEV);

		t->family = 2;
		t->saddr[0] = 127; t->saddr[3] = 1;
		t->daddr[0] = 127; t->daddr[3] = 1;
		t->sport = 5000;
		t->dport = 6000;
	}
	for (unsigned long i = 0; i <= ctrs && ctrs; i++) {
		/* i < ctrs: inside collective 0 (start + 2 ms .. + 3 ms);
		 * i == ctrs: between collectives 0 and 1 */
		uint64_t t = i < ctrs ? start + 2000000 + 100 + i * 100 :
				start + 4000000;
		struct rdt_ev_port_counter *p =
			rec(RDT_EV_PORT_COUNTER, sizeof(*p), t, 0);

		p->hdr.source = RDT_SRC_USER;
		memcpy(p->devname, "rxe0", 5);
		p->port = 1;
		p->kind = RDT_CTR_HW_COUNTERS;
		if (i < ctrs) {
			memcpy(p->name, "rcvd_seq_err", 13);
			p->delta = 1;
			p->value = 10 + i + 1;
		} else {
			memcpy(p->name, "sent_pkts", 10);
			p->delta = 5;
			p->value = 105;
		}
	}
	for (unsigned long i = 0; i < unknown; i++) {
		struct rdt_hdr *h = rec(RDT_EV_MAX, 40, start + 500 + i, RDT_NO_DEV);

		(void)h;
	}
	if (lost || gap) {
		struct rdt_ev_subbuf *s0 = rec(RDT_EV_SUBBUF, sizeof(*s0), start + 600, RDT_NO_DEV);
		struct rdt_ev_subbuf *s1 = rec(RDT_EV_SUBBUF, sizeof(*s1), start + 700, RDT_NO_DEV);

		s0->hdr.cpu = 1;
		s0->seq = 0;
		s1->hdr.cpu = 1;
		s1->seq = 1;
		s1->lost_total = lost;
	}
	if (gap) {
		struct rdt_ev_subbuf *s2 = rec(RDT_EV_SUBBUF, sizeof(*s2), start + 800, RDT_NO_DEV);

		s2->hdr.cpu = 1;
		s2->seq = 2 + gap;
		s2->lost_total = lost;
	}
	qsort(recs, nrec, sizeof(*recs), cmp);

	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, RDT_FILE_MAGIC, sizeof(fh.magic));
	fh.abi_major = (__u16)abi;
	fh.abi_minor = 0;
	fh.hdr_size = sizeof(fh) + 16;
	fh.realtime_offset_ns = offset;
	fh.ncpus = ncpus;
	snprintf(fh.host, sizeof(fh.host), "%s", host);
	snprintf(fh.kernel, sizeof(fh.kernel), "6.1.0-gen");
	snprintf(fh.boot_id, sizeof(fh.boot_id), "%s", boot);
	f = fopen(argv[optind], "wb");
	if (!f)
		return 1;
	fwrite(&fh, sizeof(fh), 1, f);
	fwrite("NCCL_ALGO=Ring\n\0", 16, 1, f);
	for (size_t i = 0; i < nrec; i++)
		fwrite(&recs[i], recs[i].h.size, 1, f);
	printf("%zu\n", nrec);
	return fclose(f) ? 1 : 0;
}
