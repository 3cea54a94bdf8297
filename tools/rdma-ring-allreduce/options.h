/* SPDX-License-Identifier: GPL-2.0 */
/* Command line: all_reduce_perf's sweep options plus the verbs and rank ones. */
#ifndef RRA_OPTIONS_H
#define RRA_OPTIONS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

struct options {
	size_t minbytes, maxbytes;	/* -b -e */
	double factor;			/* -f */
	size_t stepbytes;		/* -i (0: use -f) */
	int iters, warmup;		/* -n -w */
	const char *dev;		/* -d (NULL: first device) */
	/* -d A,B,...: rank r opens devs[r % ndevs] (ranks on two rxe
	 * devices of a veth pair: their packets cross a netdev) */
	char devlist[256];
	const char *devs[8];
	int ndevs;
	int gid_idx;			/* -g (-1: pick) */
	int port;			/* -p */
	int timeout_s;			/* -t */
	size_t chunk_bytes;		/* -C */
	uint32_t depth;			/* -q: send WRs in flight */
	uint32_t rq_depth;		/* receives kept posted */
	uint32_t spin_us;		/* -s: busy-poll before sleeping */
	int qp_timeout, retry_cnt;	/* --qp-timeout --retry-cnt */
	int launch;			/* -N: fork this many local ranks */
	int first_rank;			/* -N: the first local rank (--first-rank) */
	int rank, nranks;		/* --rank --nranks (-N: all ranks) */
	const char *oob;		/* --oob */
	int verbose;			/* -v */
	int die_rank;			/* --die RANK:SEQ (test aid) */
	uint64_t die_seq;
};

/* The device rank @rank opens (NULL: the first device). */
const char *options_dev(const struct options *o, int rank);

/* Returns 0, 1 for --help (printed), or -1 (message printed). */
int options_parse(struct options *o, int argc, char **argv);
void options_usage(FILE *f);

#endif
