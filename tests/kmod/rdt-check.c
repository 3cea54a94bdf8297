// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-check: a minimal, static reader of rdmatrace.ko relay output for the
 * guest tests (the guest has no python).  It validates every record
 * (magic, version, source, size, known kmod type, sub-buffer sequence) and
 * prints one line per record as "TYPE key=value ...", so tests can assert
 * with grep/awk.  Each file is one CPU's stream, whose stamps never go
 * back (ABI 1.9: stamped inside the reservation); a record stamped before
 * the one ahead of it is reported (ORDER on stderr) and fails the file,
 * except across a sub-buffer relay's read() gave twice (a repeated or
 * unused seq: see <rdmatrace/wire.h>), up to the next new one.
 * Exit 0 if every file was well formed and in order, 1 otherwise.
 *
 * Records of the module's relay form (<rdmatrace/wire.h>) are printed as
 * librdmatrace makes them: the CPU of the file's name (trace<cpu>), the
 * task of the CPU's last COMM since the sub-buffer header (a COMM of tid
 * 0, interrupt context, is not printed), raw TSC stamps as CLOCK_MONOTONIC
 * interpolated between the file's RDT_EV_CLOCK pairs and one this tool
 * samples when it starts (after the file was copied: later than every
 * record in it).  Written apart from the library, so that the guest tests
 * check the module's stream against a second reading of the format.
 *
 *   rdt-check FILE...      FILE is a copy of one trace<cpu> file
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "../../include/rdmatrace/wire.h"

static const char *const names[] = {
	[RDT_EV_SUBBUF] = "SUBBUF",
	[RDT_EV_COMM] = "COMM",
	[RDT_EV_CLOCK] = "CLOCK",
	[RDT_EV_LOST] = "LOST",
	[RDT_EV_DEVICE_ADD] = "DEVICE_ADD",
	[RDT_EV_DEVICE_REMOVE] = "DEVICE_REMOVE",
	[RDT_EV_DEVICE_RENAME] = "DEVICE_RENAME",
	[RDT_EV_DEVICE_STATE] = "DEVICE_STATE",
	[RDT_EV_PD_ALLOC] = "PD_ALLOC",
	[RDT_EV_PD_DEALLOC] = "PD_DEALLOC",
	[RDT_EV_CQ_CREATE] = "CQ_CREATE",
	[RDT_EV_CQ_DESTROY] = "CQ_DESTROY",
	[RDT_EV_QP_CREATE] = "QP_CREATE",
	[RDT_EV_QP_MODIFY] = "QP_MODIFY",
	[RDT_EV_QP_DESTROY] = "QP_DESTROY",
	[RDT_EV_MR_REG] = "MR_REG",
	[RDT_EV_MR_DEREG] = "MR_DEREG",
	[RDT_EV_POST_SEND] = "POST_SEND",
	[RDT_EV_POST_SEND_DB] = "POST_SEND_DB",
	[RDT_EV_POST_RECV] = "POST_RECV",
	[RDT_EV_POST_FAIL] = "POST_FAIL",
	[RDT_EV_POLL_CQ_WC] = "POLL_CQ_WC",
	[RDT_EV_POLL_CQ] = "POLL_CQ",
	[RDT_EV_REQ_NOTIFY_CQ] = "REQ_NOTIFY_CQ",
};

static const unsigned short sizes[] = {
	[RDT_EV_SUBBUF] = sizeof(struct rdt_ev_subbuf),
	[RDT_EV_COMM] = sizeof(struct rdt_ev_comm),
	[RDT_EV_CLOCK] = sizeof(struct rdt_ev_clock),
	[RDT_EV_DEVICE_ADD] = sizeof(struct rdt_ev_device),
	[RDT_EV_DEVICE_REMOVE] = sizeof(struct rdt_ev_device),
	[RDT_EV_DEVICE_RENAME] = sizeof(struct rdt_ev_device),
	[RDT_EV_DEVICE_STATE] = sizeof(struct rdt_ev_device),
	[RDT_EV_PD_ALLOC] = sizeof(struct rdt_ev_pd),
	[RDT_EV_PD_DEALLOC] = sizeof(struct rdt_ev_pd),
	[RDT_EV_CQ_CREATE] = sizeof(struct rdt_ev_cq),
	[RDT_EV_CQ_DESTROY] = sizeof(struct rdt_ev_cq),
	[RDT_EV_QP_CREATE] = sizeof(struct rdt_ev_qp_create),
	[RDT_EV_QP_MODIFY] = sizeof(struct rdt_ev_qp_modify),
	[RDT_EV_QP_DESTROY] = sizeof(struct rdt_ev_qp_destroy),
	[RDT_EV_MR_REG] = sizeof(struct rdt_ev_mr),
	[RDT_EV_MR_DEREG] = sizeof(struct rdt_ev_mr),
	[RDT_EV_POST_SEND] = sizeof(struct rdt_ev_post_send),
	[RDT_EV_POST_SEND_DB] = sizeof(struct rdt_ev_post_send_db),
	[RDT_EV_POST_RECV] = sizeof(struct rdt_ev_post_recv),
	[RDT_EV_POST_FAIL] = sizeof(struct rdt_ev_post_fail),
	[RDT_EV_POLL_CQ_WC] = sizeof(struct rdt_ev_poll_cq_wc),
	[RDT_EV_POLL_CQ] = sizeof(struct rdt_ev_poll_cq),
	[RDT_EV_REQ_NOTIFY_CQ] = sizeof(struct rdt_ev_req_notify_cq),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void body(const struct rdt_hdr *h)
{
	const void *p = h;

	switch (h->type) {
	case RDT_EV_SUBBUF: {
		const struct rdt_ev_subbuf *e = p;

		printf(" seq=%" PRIu64 " lost_total=%" PRIu64, (uint64_t)e->seq,
		       (uint64_t)e->lost_total);
		break;
	}
	case RDT_EV_COMM: {
		const struct rdt_ev_comm *e = p;

		printf(" comm=%.*s", RDT_COMM_LEN, e->comm);
		break;
	}
	case RDT_EV_CLOCK: {
		const struct rdt_ev_clock *e = p;

		printf(" tsc=%llu mono_ns=%llu", (unsigned long long)e->tsc,
		       (unsigned long long)e->mono_ns);
		break;
	}
	case RDT_EV_DEVICE_ADD:
	case RDT_EV_DEVICE_REMOVE:
	case RDT_EV_DEVICE_RENAME:
	case RDT_EV_DEVICE_STATE: {
		const struct rdt_ev_device *e = p;

		printf(" name=%.*s old_name=%.*s node_type=%u ports=%u driver_id=%u nr_wrapped=%u",
		       RDT_NAME_LEN, e->name, RDT_NAME_LEN, e->old_name,
		       e->node_type, e->phys_port_cnt, e->driver_id,
		       e->nr_wrapped);
		break;
	}
	case RDT_EV_PD_ALLOC:
	case RDT_EV_PD_DEALLOC: {
		const struct rdt_ev_pd *e = p;

		printf(" pd_id=%u ret=%d user=%u", e->pd_id, e->ret, e->user);
		break;
	}
	case RDT_EV_CQ_CREATE:
	case RDT_EV_CQ_DESTROY: {
		const struct rdt_ev_cq *e = p;

		printf(" cq_id=%u ret=%d cqe=%u comp_vector=%d user=%u",
		       e->cq_id, e->ret, e->cqe, e->comp_vector, e->user);
		break;
	}
	case RDT_EV_QP_CREATE: {
		const struct rdt_ev_qp_create *e = p;

		printf(" qpn=%u ret=%d qp_type=%u send_cq=%u recv_cq=%u max_send_wr=%u max_recv_wr=%u user=%u port=%u pd_id=%u",
		       e->qpn, e->ret, e->qp_type, e->send_cq_id,
		       e->recv_cq_id, e->max_send_wr, e->max_recv_wr, e->user,
		       e->port, e->pd_id);
		break;
	}
	case RDT_EV_QP_MODIFY: {
		const struct rdt_ev_qp_modify *e = p;

		printf(" qpn=%u ret=%d mask=0x%x old=%u new=%u cur=%u dest_qpn=%u sq_psn=%u rq_psn=%u mtu=%u timeout=%u retry=%u rnr_retry=%u",
		       e->qpn, e->ret, e->attr_mask, e->old_state,
		       e->new_state, e->cur_state, e->dest_qpn, e->sq_psn,
		       e->rq_psn, e->path_mtu, e->timeout, e->retry_cnt,
		       e->rnr_retry);
		if (e->gids & RDT_QP_DGID) {
			char g[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, e->dgid, g, sizeof(g));
			printf(" dgid=%s", g);
		}
		if (e->gids & RDT_QP_SGID) {
			char g[INET6_ADDRSTRLEN];

			inet_ntop(AF_INET6, e->sgid, g, sizeof(g));
			printf(" sgid=%s", g);
		}
		break;
	}
	case RDT_EV_QP_DESTROY: {
		const struct rdt_ev_qp_destroy *e = p;

		printf(" qpn=%u ret=%d qp_type=%u", e->qpn, e->ret, e->qp_type);
		break;
	}
	case RDT_EV_MR_REG:
	case RDT_EV_MR_DEREG: {
		const struct rdt_ev_mr *e = p;

		printf(" lkey=0x%x rkey=0x%x iova=0x%" PRIx64 " length=%" PRIu64 " ret=%d access=0x%x kind=%u",
		       e->lkey, e->rkey, (uint64_t)e->iova,
		       (uint64_t)e->length, e->ret, e->access, e->kind);
		break;
	}
	case RDT_EV_POST_SEND: {
		const struct rdt_ev_post_send *e = p;

		printf(" qpn=%u wr_id=0x%" PRIx64 " ret=%d opcode=%u flags=0x%x num_sge=%u len=%" PRIu64 " index=%u bad=%u remote_addr=0x%" PRIx64 " rkey=0x%x",
		       e->qpn, (uint64_t)e->wr_id, e->ret, e->opcode,
		       e->send_flags, e->num_sge, (uint64_t)e->total_len,
		       e->index, e->bad, (uint64_t)e->remote_addr, e->rkey);
		break;
	}
	case RDT_EV_POST_SEND_DB: {
		const struct rdt_ev_post_send_db *e = p;

		printf(" qpn=%u ret=%d", e->qpn, e->ret);
		break;
	}
	case RDT_EV_POST_RECV: {
		const struct rdt_ev_post_recv *e = p;

		printf(" qpn=%u wr_id=0x%" PRIx64 " ret=%d num_sge=%u len=%" PRIu64 " index=%u bad=%u srq=%u",
		       e->qpn, (uint64_t)e->wr_id, e->ret, e->num_sge,
		       (uint64_t)e->total_len, e->index, e->bad, e->srq);
		break;
	}
	case RDT_EV_POST_FAIL: {
		const struct rdt_ev_post_fail *e = p;

		printf(" qpn=%u srq_id=%u srq=%u post=%u ret=%d nr_wr=%u bad_index=%u",
		       e->qpn, e->srq_id, e->srq, e->post_type, e->ret,
		       e->nr_wr, e->bad_index);
		break;
	}
	case RDT_EV_POLL_CQ_WC: {
		const struct rdt_ev_poll_cq_wc *e = p;

		printf(" cq_id=%u qpn=%u wr_id=0x%" PRIx64 " status=%u opcode=%u byte_len=%u src_qp=%u wc_flags=0x%x index=%u poll_requested=%u",
		       e->cq_id, e->qpn, (uint64_t)e->wr_id, e->status,
		       e->opcode, e->byte_len, e->src_qp, e->wc_flags,
		       e->index, e->poll_requested);
		break;
	}
	case RDT_EV_POLL_CQ: {
		const struct rdt_ev_poll_cq *e = p;

		printf(" cq_id=%u requested=%d ret=%d", e->cq_id, e->requested,
		       e->ret);
		break;
	}
	case RDT_EV_REQ_NOTIFY_CQ: {
		const struct rdt_ev_req_notify_cq *e = p;

		printf(" cq_id=%u flags=0x%x ret=%d", e->cq_id, e->flags,
		       e->ret);
		break;
	}
	}
}

/* A verb's time in its driver (ABI 1.9), for the types that carry it. */
static int dur_of(const struct rdt_hdr *h, uint64_t *dur)
{
	switch (h->type) {
	case RDT_EV_PD_ALLOC: case RDT_EV_PD_DEALLOC:
		*dur = ((const struct rdt_ev_pd *)h)->dur_ns; return 1;
	case RDT_EV_CQ_CREATE: case RDT_EV_CQ_DESTROY:
		*dur = ((const struct rdt_ev_cq *)h)->dur_ns; return 1;
	case RDT_EV_QP_CREATE:
		*dur = ((const struct rdt_ev_qp_create *)h)->dur_ns; return 1;
	case RDT_EV_QP_MODIFY:
		*dur = ((const struct rdt_ev_qp_modify *)h)->dur_ns; return 1;
	case RDT_EV_QP_DESTROY:
		*dur = ((const struct rdt_ev_qp_destroy *)h)->dur_ns; return 1;
	case RDT_EV_MR_REG: case RDT_EV_MR_DEREG:
		*dur = ((const struct rdt_ev_mr *)h)->dur_ns; return 1;
	case RDT_EV_POST_SEND_DB:
		*dur = ((const struct rdt_ev_post_send_db *)h)->dur_ns; return 1;
	case RDT_EV_REQ_NOTIFY_CQ:
		*dur = ((const struct rdt_ev_req_notify_cq *)h)->dur_ns; return 1;
	}
	return 0;
}

/* The relay form's clock: (TSC, ns) pairs in TSC order. */
struct pair {
	uint64_t tsc, ns;
};

static struct pair *pairs;
static size_t npairs;

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/* A pair sampled now: the narrowest of a few rdtsc, clock_gettime, rdtsc. */
static int sample_pair(struct pair *p)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t best = UINT64_MAX, a, b;
	struct timespec ts;
	int i;

	for (i = 0; i < 5; i++) {
		_mm_lfence();
		a = __rdtsc();
		_mm_lfence();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		_mm_lfence();
		b = __rdtsc();
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		p->tsc = a + (b - a) / 2;
		p->ns = ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	return best != UINT64_MAX;
#else
	return 0;
#endif
}

/* A raw stamp in ns: between the pairs around it, else at the rate of
 * the nearest two. */
static uint64_t raw_ns(uint64_t tsc)
{
	size_t lo = 0, hi = npairs;
	const struct pair *a, *b;
	long double per;

	if (!npairs)
		return 0;
	while (lo < hi) {		/* the first pair at or after tsc */
		size_t mid = (lo + hi) / 2;

		if (pairs[mid].tsc < tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (npairs == 1)
		return pairs[0].ns;
	if (lo == 0)
		lo = 1;
	if (lo == npairs)
		lo = npairs - 1;
	a = &pairs[lo - 1];
	b = &pairs[lo];
	per = (long double)(b->ns - a->ns) / (long double)(b->tsc - a->tsc);
	return a->ns + (int64_t)((long double)((int64_t)(tsc - a->tsc)) * per);
}

/* The CPU of a trace<cpu> file's name; -1 if it has none. */
static long file_cpu(const char *path)
{
	const char *b = strrchr(path, '/');
	char *end;
	long cpu;

	b = b ? b + 1 : path;
	if (strncmp(b, "trace", 5))
		return -1;
	cpu = strtol(b + 5, &end, 10);
	return end == b + 5 || *end ? -1 : cpu;
}

static int check_file(const char *path)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0, off = 0, n;
	long long last_seq = -1, hi_seq = -1;
	uint64_t last_ts = 0, dur;
	int in_order = 1;	/* 0: inside a sub-buffer read twice */
	uint32_t pid = 0, tid = 0;	/* the relay form's current task */
	FILE *f = fopen(path, "rb");
	int bad = 0;

	if (!f) {
		fprintf(stderr, "rdt-check: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				return 1;
		}
		n = fread(buf + len, 1, cap - len, f);
		if (!n)
			break;
		len += n;
	}
	fclose(f);

	/* The file's clock pairs, then one of now, after all of them. */
	npairs = 0;
	for (off = 0; off + sizeof(struct rdt_ev_clock) <= len;) {
		const struct rdt_ev_clock *e = (const void *)(buf + off);

		if (e->hdr.magic != RDT_REC_MAGIC || e->hdr.size < 32 ||
		    e->hdr.size % 8)
			break;
		if (e->hdr.type == RDT_EV_CLOCK && e->hdr.size == sizeof(*e)) {
			pairs = realloc(pairs, (npairs + 2) * sizeof(*pairs));
			if (!pairs)
				return 1;
			pairs[npairs].tsc = e->tsc;
			pairs[npairs++].ns = e->mono_ns;
		}
		off += e->hdr.size;
	}
	pairs = realloc(pairs, (npairs + 1) * sizeof(*pairs));
	if (!pairs)
		return 1;
	if (sample_pair(&pairs[npairs]))
		npairs++;
	qsort(pairs, npairs, sizeof(*pairs), pair_cmp);
	off = 0;

	while (off + sizeof(struct rdt_hdr) <= len) {
		struct rdt_hdr *h = (void *)(buf + off);
		uint64_t key;

		if (h->version == RDT_RELAY_FORM && h->magic == RDT_REC_MAGIC) {
			long cpu = file_cpu(path);

			h->version = RDT_ABI_MAJOR;
			if (cpu >= 0)
				h->cpu = cpu;
			if (h->type == RDT_EV_SUBBUF) {
				pid = tid = 0;
			} else if (h->type == RDT_EV_COMM) {
				pid = h->pid;
				tid = h->tid;
			}
			h->pid = pid;
			h->tid = tid;
			if (h->type == RDT_EV_COMM && !tid) {
				off += h->size;		/* says "no task" */
				continue;
			}
		}
		key = h->ts_ns;
		if (h->ts_ns & RDT_TS_RAW)
			h->ts_ns = raw_ns(h->ts_ns & ~RDT_TS_RAW);

		if (h->magic != RDT_REC_MAGIC || h->version != RDT_ABI_MAJOR ||
		    h->source != RDT_SRC_KMOD || h->size < sizeof(*h) ||
		    h->size % 8 || off + h->size > len) {
			fprintf(stderr, "rdt-check: %s: bad record at offset %zu\n",
				path, off);
			bad = 1;
			break;
		}
		if (h->type >= N(sizes) || !sizes[h->type] ||
		    sizes[h->type] != h->size) {
			fprintf(stderr, "rdt-check: %s: type %u size %u unexpected at offset %zu\n",
				path, h->type, h->size, off);
			bad = 1;
		}
		if (h->type == RDT_EV_SUBBUF) {
			const struct rdt_ev_subbuf *e = (const void *)h;

			if (last_seq >= 0 && (long long)e->seq != last_seq + 1)
				printf("GAP file=%s from=%lld to=%llu\n", path,
				       last_seq, (unsigned long long)e->seq);
			last_seq = e->seq;
			if (e->seq == RDT_SUBBUF_SEQ_UNUSED ||
			    (long long)e->seq <= hi_seq) {
				in_order = 0;
			} else {
				hi_seq = e->seq;
				if (!in_order)
					last_ts = key;
				in_order = 1;
			}
		}
		/* In order as stamped (raw TSC against raw TSC). */
		if (in_order) {
			if (key < last_ts) {
				fprintf(stderr, "rdt-check: %s: ORDER: record at offset %zu (type %u) stamped %llu, before the one ahead of it (%llu)\n",
					path, off, h->type,
					(unsigned long long)key,
					(unsigned long long)last_ts);
				bad = 1;
			}
			last_ts = key;
		}
		printf("%s cpu=%u ts=%llu pid=%u tid=%u dev=%d",
		       h->type < N(names) && names[h->type] ? names[h->type] : "UNKNOWN",
		       h->cpu, (unsigned long long)h->ts_ns, h->pid, h->tid,
		       (int)h->dev);
		body(h);
		if (dur_of(h, &dur))
			printf(" dur_ns=%llu", (unsigned long long)dur);
		putchar('\n');
		off += h->size;
	}
	if (!bad && off != len) {
		fprintf(stderr, "rdt-check: %s: %zu trailing bytes\n", path,
			len - off);
		bad = 1;
	}
	free(buf);
	return bad;
}

int main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: rdt-check TRACEFILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++)
		bad |= check_file(argv[i]);
	return bad;
}
