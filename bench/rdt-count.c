// SPDX-License-Identifier: GPL-2.0
/*
 * rdt-count FILE [TYPE]: count the records of a trace file written by
 * `rdmatrace-dump -o`, independently of librdmatrace (static, runs in the
 * guest).  Prints "records N type_T M lost L" where M counts records of
 * TYPE (number, default 80 = POLL_CQ) and L sums in-stream LOST counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <rdmatrace/wire.h>

int main(int argc, char **argv)
{
	unsigned long long recs = 0, typed = 0, lost = 0, lostmax_sub = 0;
	unsigned int want = argc > 2 ? (unsigned int)atoi(argv[2]) : RDT_EV_POLL_CQ;
	static unsigned char buf[4096];
	struct rdt_file_hdr fh;
	struct rdt_hdr h;
	FILE *f;

	if (argc < 2 || !(f = fopen(argv[1], "rb"))) {
		fprintf(stderr, "usage: rdt-count FILE [TYPE]\n");
		return 2;
	}
	if (fread(&fh, sizeof(fh), 1, f) != 1 || memcmp(fh.magic, RDT_FILE_MAGIC, 8) ||
	    fseek(f, fh.hdr_size, SEEK_SET)) {
		fprintf(stderr, "rdt-count: not a trace file\n");
		return 1;
	}
	while (fread(&h, sizeof(h), 1, f) == 1) {
		if (h.magic != RDT_REC_MAGIC || h.size < sizeof(h) || h.size > sizeof(buf)) {
			fprintf(stderr, "rdt-count: corrupt record %llu\n", recs);
			return 1;
		}
		memcpy(buf, &h, sizeof(h));
		if (fread(buf + sizeof(h), h.size - sizeof(h), 1, f) != 1 && h.size > sizeof(h))
			break;
		recs++;
		if (h.type == want)
			typed++;
		if (h.type == RDT_EV_LOST)
			lost += ((struct rdt_ev_lost *)buf)->count;
		if (h.type == RDT_EV_SUBBUF &&
		    ((struct rdt_ev_subbuf *)buf)->lost_total > lostmax_sub)
			lostmax_sub = ((struct rdt_ev_subbuf *)buf)->lost_total;
	}
	printf("records %llu type_%u %llu lost %llu subbuf_lost_max %llu\n",
	       recs, want, typed, lost, lostmax_sub);
	return 0;
}
