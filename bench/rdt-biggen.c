// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-biggen: stream a large synthetic trace file for the decode/merge
 * benchmark without holding it in memory (tests/lib/rdt-gen keeps every
 * record in RAM and sorts, fine for tests, not for 10^7 records).
 *
 *   rdt-biggen -n EVENTS [-c CPUS] [-q QPS] [-k SHARD -K SHARDS] OUT
 *
 * Records: the device's ADD and one COMM per CPU, as a live trace begins
 * (the module names each device it wraps), then POST_SEND / POLL_CQ_WC pairs (each WR
 * completes 2 us after its post) on QPS queue pairs, timestamps rising.
 * With -K SHARDS, file SHARD holds every SHARDS-th pair, offset in time,
 * so merging the shards interleaves them record by record (k-way merge
 * with real work).  Prints the number of records written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <rdmatrace/wire.h>

static void hdr(struct rdt_hdr *h, unsigned int type, size_t size, uint64_t ts,
		unsigned int cpu)
{
	h->magic = RDT_REC_MAGIC;
	h->version = RDT_ABI_MAJOR;
	h->source = RDT_SRC_KMOD;
	h->type = (__u16)type;
	h->size = (__u16)size;
	h->ts_ns = ts;
	h->pid = 4242;
	h->tid = 4242 + cpu;
	h->cpu = cpu;
	h->dev = 0;
}

int main(int argc, char **argv)
{
	unsigned long long n = 1000000, written = 0;
	unsigned int cpus = 2, qps = 8, shard = 0, shards = 1;
	struct rdt_file_hdr fh;
	uint64_t base = 1000000000ull;
	static char obuf[1 << 20];
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "n:c:q:k:K:")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'c': cpus = (unsigned int)atoi(optarg); break;
		case 'q': qps = (unsigned int)atoi(optarg); break;
		case 'k': shard = (unsigned int)atoi(optarg); break;
		case 'K': shards = (unsigned int)atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind + 1 != argc || !cpus || !qps || !shards || shard >= shards)
		goto usage;
	f = fopen(argv[optind], "wb");
	if (!f) {
		perror(argv[optind]);
		return 1;
	}
	setvbuf(f, obuf, _IOFBF, sizeof(obuf));
	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, RDT_FILE_MAGIC, sizeof(fh.magic));
	fh.abi_major = RDT_ABI_MAJOR;
	fh.hdr_size = sizeof(fh);
	fh.ncpus = cpus;
	snprintf(fh.host, sizeof(fh.host), "bench");
	snprintf(fh.kernel, sizeof(fh.kernel), "bench");
	snprintf(fh.boot_id, sizeof(fh.boot_id), "bench-boot");
	fwrite(&fh, sizeof(fh), 1, f);
	{
		struct rdt_ev_device d;

		memset(&d, 0, sizeof(d));
		hdr(&d.hdr, RDT_EV_DEVICE_ADD, sizeof(d), base + shard, 0);
		snprintf(d.name, sizeof(d.name), "rxe0");
		fwrite(&d, sizeof(d), 1, f);
		written++;
	}
	for (unsigned int i = 0; i < cpus; i++) {
		struct rdt_ev_comm cm;

		memset(&cm, 0, sizeof(cm));
		hdr(&cm.hdr, RDT_EV_COMM, sizeof(cm), base + shard, i);
		snprintf(cm.comm, sizeof(cm.comm), "bench%u", i);
		fwrite(&cm, sizeof(cm), 1, f);
		written++;
	}
	/* Pair k: POST_SEND at base + 100k, its completion 2 us later; the
	 * two are written in timestamp order through a one-pair lag. */
	for (unsigned long long k = shard; written < n; k += shards) {
		struct rdt_ev_post_send ps;
		struct rdt_ev_poll_cq_wc wc;
		uint64_t ts = base + 1000 + 100 * k;
		unsigned int cpu = (unsigned int)(k % cpus);
		unsigned int qpn = 100 + (unsigned int)(k % qps);

		memset(&ps, 0, sizeof(ps));
		hdr(&ps.hdr, RDT_EV_POST_SEND, sizeof(ps), ts, cpu);
		ps.wr_id = k;
		ps.total_len = 4096;
		ps.qpn = qpn;
		ps.opcode = 0;
		ps.send_flags = 2;
		ps.num_sge = 1;
		fwrite(&ps, sizeof(ps), 1, f);
		written++;
		if (written >= n)
			break;
		/* The completion of pair k-20*shards (2 us earlier in time
		 * steps of 100 ns) keeps the file sorted. */
		if (k >= 20ull * shards + shard) {
			unsigned long long j = k - 20ull * shards;

			memset(&wc, 0, sizeof(wc));
			hdr(&wc.hdr, RDT_EV_POLL_CQ_WC, sizeof(wc), ts + 1,
			    (unsigned int)(j % cpus));
			wc.wr_id = j;
			wc.qpn = 100 + (unsigned int)(j % qps);
			wc.byte_len = 4096;
			wc.opcode = 0;
			fwrite(&wc, sizeof(wc), 1, f);
			written++;
		}
	}
	if (fclose(f)) {
		perror("close");
		return 1;
	}
	printf("%llu\n", written);
	return 0;
usage:
	fprintf(stderr, "usage: rdt-biggen -n EVENTS [-c CPUS] [-q QPS] [-k SHARD -K SHARDS] OUT\n");
	return 2;
}
