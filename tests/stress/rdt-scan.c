// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-scan: what must never be in a trace, checked on raw bytes.  Static,
 * for the guest (no compiler there); built by tests/stress/build.test and
 * scripts/stress.sh.
 *
 *   rdt-scan addr FILE...        every 64-bit field of every record: none may
 *                                hold a kernel address (>= 0xffff800000000000,
 *                                the kernel half on x86-64 4/5-level, arm64)
 *   rdt-scan run BYTE LEN FILE...  runs of LEN or more bytes equal to BYTE
 *   rdt-scan str STRING FILE...  occurrences of STRING
 *
 * FILE is a trace file (header skipped) or a copy of a relay trace<cpu>.
 * Prints what it found and a count; exit 1 if anything was found, 2 on a
 * malformed file.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/rdmatrace/wire.h"

#define KADDR_MIN	0xffff800000000000ULL

/* The 64-bit fields of each record type, hashes left out. */
#define F(st, m)	offsetof(struct st, m)
static const struct { unsigned int type; size_t off[6]; } u64s[] = {
	{ RDT_EV_SUBBUF, { F(rdt_ev_subbuf, seq), F(rdt_ev_subbuf, lost_total) } },
	{ RDT_EV_LOST, { F(rdt_ev_lost, count) } },
	{ RDT_EV_DEVICE_ADD, { F(rdt_ev_device, node_guid) } },
	{ RDT_EV_DEVICE_REMOVE, { F(rdt_ev_device, node_guid) } },
	{ RDT_EV_DEVICE_RENAME, { F(rdt_ev_device, node_guid) } },
	{ RDT_EV_DEVICE_STATE, { F(rdt_ev_device, node_guid) } },
	{ RDT_EV_MR_REG, { F(rdt_ev_mr, iova), F(rdt_ev_mr, length) } },
	{ RDT_EV_MR_DEREG, { F(rdt_ev_mr, iova), F(rdt_ev_mr, length) } },
	{ RDT_EV_POST_SEND, { F(rdt_ev_post_send, wr_id),
			      F(rdt_ev_post_send, remote_addr),
			      F(rdt_ev_post_send, total_len) } },
	{ RDT_EV_POST_RECV, { F(rdt_ev_post_recv, wr_id),
			      F(rdt_ev_post_recv, total_len) } },
	{ RDT_EV_POLL_CQ_WC, { F(rdt_ev_poll_cq_wc, wr_id) } },
	{ RDT_EV_NCCL_CALL, { F(rdt_ev_nccl_call, duration_ns),
			      F(rdt_ev_nccl_call, count), F(rdt_ev_nccl_call, comm),
			      F(rdt_ev_nccl_call, stream), F(rdt_ev_nccl_call, seq) } },
	{ RDT_EV_NCCL_COMM, { F(rdt_ev_nccl_comm, comm) } },
	{ RDT_EV_RXE_CQE, { F(rdt_ev_rxe_cqe, wr_id) } },
	{ RDT_EV_COLL_MARK, { F(rdt_ev_coll_mark, bytes), F(rdt_ev_coll_mark, seq) } },
};

static unsigned char *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t cap = 0, n;

	if (!f) {
		perror(path);
		exit(2);
	}
	*len = 0;
	do {
		if (*len == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			b = realloc(b, cap);
			if (!b)
				exit(2);
		}
		n = fread(b + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	fclose(f);
	return b;
}

static unsigned long long records, fields, found;

static void scan_addr(const char *path, const unsigned char *b, size_t len)
{
	size_t o = 0;

	if (len >= sizeof(struct rdt_file_hdr) && !memcmp(b, RDT_FILE_MAGIC, 8)) {
		const struct rdt_file_hdr *fh = (const void *)b;

		o = fh->hdr_size;
	}
	while (o + sizeof(struct rdt_hdr) <= len) {
		struct rdt_hdr h;

		memcpy(&h, b + o, sizeof(h));
		if (h.magic == 0 && h.size == 0) {	/* relay sub-buffer padding */
			o += 8;
			continue;
		}
		if (h.magic != RDT_REC_MAGIC || h.size < sizeof(h) || h.size % 8 ||
		    o + h.size > len) {
			fprintf(stderr, "rdt-scan: %s: bad record at offset %zu\n", path, o);
			exit(2);
		}
		records++;
		for (size_t t = 0; t < sizeof(u64s) / sizeof(*u64s); t++) {
			if (u64s[t].type != h.type)
				continue;
			for (int i = 0; i < 6 && u64s[t].off[i]; i++) {
				uint64_t v;

				if (u64s[t].off[i] + 8 > h.size)
					continue;
				memcpy(&v, b + o + u64s[t].off[i], 8);
				fields++;
				if (v >= KADDR_MIN) {
					found++;
					printf("%s: offset %zu type %u field +%zu: 0x%016" PRIx64 "\n",
					       path, o, h.type, u64s[t].off[i], v);
				}
			}
		}
		o += h.size;
	}
}

static void scan_run(const char *path, const unsigned char *b, size_t len,
		     unsigned int byte, size_t min)
{
	size_t run = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && b[i] == byte) {
			run++;
			continue;
		}
		if (run >= min) {
			found++;
			printf("%s: %zu bytes of 0x%02x at offset %zu\n", path, run,
			       byte, i - run);
		}
		run = 0;
	}
}

static void scan_str(const char *path, const unsigned char *b, size_t len,
		     const char *s)
{
	const unsigned char *p = b, *end = b + len;

	while ((p = memmem(p, (size_t)(end - p), s, strlen(s)))) {
		found++;
		printf("%s: \"%s\" at offset %zu\n", path, s, (size_t)(p - b));
		p++;
	}
}

int main(int argc, char **argv)
{
	int first;

	if (argc >= 3 && !strcmp(argv[1], "addr"))
		first = 2;
	else if (argc >= 5 && !strcmp(argv[1], "run"))
		first = 4;
	else if (argc >= 4 && !strcmp(argv[1], "str") && argv[2][0])
		first = 3;
	else {
		fprintf(stderr, "usage: rdt-scan addr FILE... | run BYTE LEN FILE... | str STRING FILE...\n");
		return 2;
	}
	for (int i = first; i < argc; i++) {
		size_t len;
		unsigned char *b = load(argv[i], &len);

		if (first == 2)
			scan_addr(argv[i], b, len);
		else if (first == 4)
			scan_run(argv[i], b, len, (unsigned int)strtoul(argv[2], NULL, 0),
				 strtoul(argv[3], NULL, 0));
		else
			scan_str(argv[i], b, len, argv[2]);
		free(b);
	}
	if (first == 2)
		printf("rdt-scan: %llu records, %llu 64-bit fields, %llu kernel addresses\n",
		       records, fields, found);
	else
		printf("rdt-scan: %llu found\n", found);
	return found ? 1 : 0;
}
