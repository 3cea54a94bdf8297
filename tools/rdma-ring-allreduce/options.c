// SPDX-License-Identifier: GPL-2.0
/* Command-line parsing and --help, see options.h. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "options.h"
#include "ring.h"

void options_usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " [-N NRANKS | --rank R --nranks N] [options]\n"
"\n"
"Ring allreduce (float32 sum) over RDMA verbs, one process per rank, RC QPs to\n"
"the ring neighbours, QP info exchanged over a local unix socket (or TCP). Prints\n"
"nccl-tests (all_reduce_perf) style lines and checks every element on every rank.\n"
"\n"
"Ranks:\n"
"  -N, --launch N      fork N local ranks (0..N-1) and wait for them\n"
"      --first-rank F --nranks T   with -N: the local ranks are F..F+N-1 of T\n"
"                      (the others run elsewhere, with the same --oob)\n"
"      --rank R --nranks N   run one rank; start all N with the same --oob\n"
"      --oob NAME      rendezvous socket: '@name' (abstract) or a path\n"
"                      (default @" PROG ".UID, -N: @" PROG ".PID), or\n"
"                      tcp:HOST:PORT for ranks on several hosts: rank 0\n"
"                      listens on HOST:PORT (its own address), the rest connect\n"
"Sweep (as all_reduce_perf; sizes in bytes, K/M/G suffixes, rounded down to\n"
"whole floats, at least one):\n"
"  -b MINBYTES (8)  -e MAXBYTES (1M)  -f FACTOR (2)  -i STEPBYTES (0: use -f)\n"
"  -n ITERS (20)  -w WARMUP_ITERS (5)\n"
"Verbs:\n"
"  -d DEVICE[,DEVICE...] (first device; a list: rank r opens the (r mod count)th)\n"
"  -p PORT (1)  -g GID_INDEX (RoCEv2 IPv4 if any)\n"
"  -C CHUNK_BYTES (256K)  -q SEND_DEPTH (64 WRs in flight)  -r RECV_DEPTH (256)\n"
"  -s SPIN_US (0): busy-poll the CQ this long before sleeping on its channel\n"
"  -t TIMEOUT_S (10): bound on every wait (CQ, socket); a dead peer fails the\n"
"                     run within it\n"
"  --qp-timeout N (14: 4.096 us * 2^N per try)  --retry-cnt N (6; 7 retries\n"
"                     for ever on rxe, as NCCL_IB_RETRY_CNT=7): the RC QPs'\n"
"                     transport retries, so that a lossy link can be ridden out\n"
"  -v  per-size WR counts of every rank      --die RANK:SEQ  test aid: that rank\n"
"                                            kills itself before collective SEQ\n"
"\n"
"Algorithm: reduce-scatter then all-gather, 2*(n-1) steps. Each segment\n"
"(count/n elements, the first count%%n one longer) is cut into K chunks,\n"
"  K = min(65535, maxseg, max(1, ceil(maxseg*4 / CHUNK_BYTES))), maxseg = ceil(count/n),\n"
"and each chunk is one RDMA WRITE WITH IMM to the right neighbour, pipelined:\n"
"chunk k of step s+1 leaves as soon as chunk k of step s arrived.\n"
"Expected work requests per rank per collective:\n"
"  RDMA WRITE WITH IMM posted = send completions = 2*(n-1)*K (on the send QP)\n"
"  receives consumed = receive completions = re-posted = 2*(n-1)*K (recv QP)\n"
"  (plus RECV_DEPTH receives posted once at setup, outside any collective)\n"
"USDT: rdmatrace:coll_begin / rdmatrace:coll_end (op=1 allreduce, bytes, rank,\n"
"nranks, seq); seq counts this rank's collectives from 0, warmup included.\n"
"rdmatrace:coll_step (op, seq, step, steps, rank, nranks) as a step begins\n"
"(its first send posted): steps 0..n-2 reduce-scatter, the rest allgather.\n"
"Exit: 0 ok, 1 runtime failure (timeout, dead peer), 2 usage/setup (missing\n"
"device, bad GID index), 3 wrong results.\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'G': case 'g': v *= 1024; /* fall through */
	case 'M': case 'm': v *= 1024; /* fall through */
	case 'K': case 'k': v *= 1024; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v = strtol(s, &end, 0);

	if (end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

const char *options_dev(const struct options *o, int rank)
{
	return o->ndevs ? o->devs[(rank < 0 ? 0 : rank) % o->ndevs] : o->dev;
}

int options_parse(struct options *o, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "launch", required_argument, NULL, 'N' },
		{ "rank", required_argument, NULL, 'R' },
		{ "nranks", required_argument, NULL, 'Z' },
		{ "oob", required_argument, NULL, 'O' },
		{ "first-rank", required_argument, NULL, 'F' },
		{ "die", required_argument, NULL, 'D' },
		{ "qp-timeout", required_argument, NULL, 'T' },
		{ "retry-cnt", required_argument, NULL, 'Y' },
		{ "help", no_argument, NULL, 'h' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 }
	};
	static char oobname[64];
	int c, v;

	memset(o, 0, sizeof(*o));
	o->minbytes = 8;
	o->maxbytes = 1 << 20;
	o->factor = 2;
	o->iters = 20;
	o->warmup = 5;
	o->gid_idx = -1;
	o->port = 1;
	o->timeout_s = 10;
	o->qp_timeout = 14;
	o->retry_cnt = 6;
	o->chunk_bytes = 256 << 10;
	o->depth = 64;
	o->rq_depth = 256;
	o->rank = -1;
	o->first_rank = -1;
	o->die_rank = -1;

	while ((c = getopt_long(argc, argv, "b:e:f:i:n:w:d:g:p:t:C:q:r:s:N:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'b': if (parse_size(optarg, &o->minbytes)) goto bad; break;
		case 'e': if (parse_size(optarg, &o->maxbytes)) goto bad; break;
		case 'i': if (parse_size(optarg, &o->stepbytes)) goto bad; break;
		case 'C': if (parse_size(optarg, &o->chunk_bytes)) goto bad; break;
		case 'f':
			o->factor = strtod(optarg, NULL);
			if (!(o->factor > 1))
				goto bad;
			break;
		case 'n': if (parse_int(optarg, 1, 1 << 30, &o->iters)) goto bad; break;
		case 'w': if (parse_int(optarg, 0, 1 << 30, &o->warmup)) goto bad; break;
		case 'd': {
			char *p, *save = NULL;

			if (strlen(optarg) >= sizeof(o->devlist)) {
				rra_err("-d: device list too long");
				return -1;
			}
			strcpy(o->devlist, optarg);
			o->ndevs = 0;
			for (p = strtok_r(o->devlist, ",", &save); p;
			     p = strtok_r(NULL, ",", &save)) {
				if (o->ndevs == (int)(sizeof(o->devs) / sizeof(o->devs[0]))) {
					rra_err("-d: at most %zu devices",
						sizeof(o->devs) / sizeof(o->devs[0]));
					return -1;
				}
				o->devs[o->ndevs++] = p;
			}
			if (!o->ndevs)
				goto bad;
			o->dev = o->devs[0];
			break;
		}
		case 'g': if (parse_int(optarg, 0, 1 << 16, &o->gid_idx)) goto bad; break;
		case 'p': if (parse_int(optarg, 1, 255, &o->port)) goto bad; break;
		case 't': if (parse_int(optarg, 1, 3600, &o->timeout_s)) goto bad; break;
		case 'q': if (parse_int(optarg, 1, 1 << 15, &v)) goto bad; o->depth = (uint32_t)v; break;
		case 's': if (parse_int(optarg, 0, 1000000, &v)) goto bad; o->spin_us = (uint32_t)v; break;
		case 'r': if (parse_int(optarg, 1, 1 << 15, &v)) goto bad; o->rq_depth = (uint32_t)v; break;
		case 'N': if (parse_int(optarg, 2, RING_MAX_RANKS, &o->launch)) goto bad; break;
		case 'R': if (parse_int(optarg, 0, RING_MAX_RANKS - 1, &o->rank)) goto bad; break;
		case 'Z': if (parse_int(optarg, 2, RING_MAX_RANKS, &o->nranks)) goto bad; break;
		case 'O': o->oob = optarg; break;
		case 'F': if (parse_int(optarg, 0, RING_MAX_RANKS - 1, &o->first_rank)) goto bad; break;
		case 'D': {
			unsigned long long seq;

			if (sscanf(optarg, "%d:%llu", &o->die_rank, &seq) != 2)
				goto bad;
			o->die_seq = seq;
			break;
		}
		case 'T': if (parse_int(optarg, 1, 31, &o->qp_timeout)) goto bad; break;
		case 'Y': if (parse_int(optarg, 0, 7, &o->retry_cnt)) goto bad; break;
		case 'v': o->verbose++; break;
		case 'h': options_usage(stdout); return 1;
		default: options_usage(stderr); return -1;
		}
	}
	if (optind != argc) {
		rra_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	o->minbytes -= o->minbytes % sizeof(float);
	o->maxbytes -= o->maxbytes % sizeof(float);
	o->chunk_bytes -= o->chunk_bytes % sizeof(float);
	if (o->minbytes < sizeof(float) || o->maxbytes < o->minbytes) {
		rra_err("need %zu <= -b <= -e (got -b %zu -e %zu)", sizeof(float), o->minbytes,
			o->maxbytes);
		return -1;
	}
	if (o->chunk_bytes < sizeof(float)) {
		rra_err("-C must be at least %zu bytes", sizeof(float));
		return -1;
	}
	if (o->launch && o->rank >= 0) {
		rra_err("-N and --rank exclude each other");
		return -1;
	}
	if (o->first_rank >= 0 && !o->launch) {
		rra_err("--first-rank goes with -N (one rank: --rank)");
		return -1;
	}
	if (o->launch && (o->first_rank >= 0 || o->nranks)) {
		/* Part of a ring whose other ranks run elsewhere. */
		if (o->first_rank < 0 || !o->nranks) {
			rra_err("-N with --nranks needs --first-rank, and --first-rank needs --nranks");
			return -1;
		}
		if (o->first_rank + o->launch > o->nranks) {
			rra_err("ranks %d..%d out of range for --nranks %d", o->first_rank,
				o->first_rank + o->launch - 1, o->nranks);
			return -1;
		}
		if (!o->oob) {
			rra_err("-N with --first-rank needs --oob (the ranks elsewhere must find rank 0)");
			return -1;
		}
	} else if (o->launch) {
		o->first_rank = 0;
		o->nranks = o->launch;
	}
	if (!o->launch) {
		if (o->rank < 0 || !o->nranks) {
			rra_err("give -N NRANKS, or --rank R and --nranks N (see --help)");
			return -1;
		}
		if (o->rank >= o->nranks) {
			rra_err("--rank %d out of range for --nranks %d", o->rank, o->nranks);
			return -1;
		}
	}
	if (!o->oob) {
		snprintf(oobname, sizeof(oobname), "@" PROG ".%ld",
			 o->launch ? (long)getpid() : (long)getuid());
		o->oob = oobname;
	}
	return 0;
bad:
	if (c == 'N' || c == 'Z')
		rra_err("bad rank count '%s': 2..%d ranks", optarg, RING_MAX_RANKS);
	else if (c == 'R' || c == 'D' || c == 'F' || c == 'T' || c == 'Y')
		rra_err("bad value '%s' for --%s (see --help)", optarg,
			c == 'R' ? "rank" : c == 'D' ? "die" : c == 'T' ? "qp-timeout" :
			c == 'Y' ? "retry-cnt" : "first-rank");
	else
		rra_err("bad value '%s' for -%c (see --help)", optarg, c);
	return -1;
}
