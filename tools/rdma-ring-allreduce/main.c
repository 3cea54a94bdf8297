// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-ring-allreduce: entry point and one rank's life: set up verbs,
 * exchange QP info, sweep the sizes, gather and print results, tear down.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "allreduce.h"
#include "common.h"
#include "launcher.h"
#include "oob.h"
#include "options.h"
#include "profiler.h"
#include "rdma.h"
#include "report.h"
#include "ring.h"
#include "verify.h"

int rra_log_rank = -1;

void rra_err(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* One write per line so ranks sharing a terminal do not interleave. */
	if (rra_log_rank >= 0)
		fprintf(stderr, PROG ": rank %d: %s\n", rra_log_rank, buf);
	else
		fprintf(stderr, PROG ": %s\n", buf);
}

/* What every rank reports to rank 0 after each size. */
struct size_result {
	double time_us;		/* average per timed collective */
	uint64_t wrong;
	uint64_t ncoll;		/* collectives run for this size */
	uint64_t bad_coll;	/* collectives whose WR counts were not 2(n-1)K */
	struct coll_stats st;	/* summed over this size's collectives */
};

struct rank_state {
	struct options *o;
	int rank, n, timeout_ms;
	struct rdma_ctx rd;
	struct oob oob;
	struct rdma_info *info;		/* all ranks */
	uint64_t seq;
	struct coll_stats total;
	uint64_t expected_total;
	uint64_t bad_coll;
};

static int run_coll(struct rank_state *s, const struct ring *rg, struct size_result *res)
{
	struct coll_stats before = res->st;
	uint64_t want = ring_wrs_per_rank(rg);

	if (s->o->die_rank == s->rank && s->o->die_seq == s->seq) {
		/* Test aid: die the way a crashed rank dies, mid-run, no cleanup. */
		fprintf(stderr, PROG ": rank %d: --die: killing myself before collective %llu\n",
			s->rank, (unsigned long long)s->seq);
		raise(SIGKILL);
	}
	if (allreduce_run(&s->rd, rg, s->rank, &s->info[(s->rank + 1) % s->n], s->seq,
			  s->o->depth, s->timeout_ms, &res->st))
		return -1;
	s->seq++;
	res->ncoll++;
	s->expected_total += want;
	if (res->st.sends_posted - before.sends_posted != want ||
	    res->st.recvs_posted - before.recvs_posted != want ||
	    res->st.send_cqes - before.send_cqes != want ||
	    res->st.recv_cqes - before.recv_cqes != want)
		res->bad_coll++;
	return 0;
}

static void add_stats(struct coll_stats *a, const struct coll_stats *b)
{
	a->sends_posted += b->sends_posted;
	a->recvs_posted += b->recvs_posted;
	a->send_cqes += b->send_cqes;
	a->recv_cqes += b->recv_cqes;
}

static int run_size(struct rank_state *s, size_t bytes, uint64_t *wrong_out, double *busbw)
{
	struct options *o = s->o;
	size_t count = bytes / sizeof(float);
	struct size_result me = { 0 }, *all;
	struct ring rg;
	uint64_t t0, wrong = 0;
	double tmax = 0;

	if (ring_plan(&rg, s->n, count, o->chunk_bytes)) {
		rra_err("cannot plan %zu elements on %d ranks", count, s->n);
		return -1;
	}
	verify_poison(s->rd.recvbuf, count);
	if (oob_barrier(&s->oob))
		return -1;
	for (int i = 0; i < o->warmup; i++)
		if (run_coll(s, &rg, &me))
			return -1;
	/* Start the clock together, as all_reduce_perf does. */
	if (oob_barrier(&s->oob))
		return -1;
	t0 = rra_now_ns();
	for (int i = 0; i < o->iters; i++)
		if (run_coll(s, &rg, &me))
			return -1;
	me.time_us = (double)(rra_now_ns() - t0) / 1e3 / o->iters;
	/* Out of place with a constant input: the last result is checkable. */
	me.wrong = verify_check(s->rd.recvbuf, count, s->n);

	all = calloc((size_t)s->n, sizeof(*all));
	if (!all || oob_allgather(&s->oob, &me, all, sizeof(me))) {
		free(all);
		return -1;
	}
	add_stats(&s->total, &me.st);
	s->bad_coll += me.bad_coll;
	for (int r = 0; r < s->n; r++) {
		wrong += all[r].wrong;
		if (all[r].time_us > tmax)
			tmax = all[r].time_us; /* the collective is as slow as its slowest rank */
	}
	if (s->rank == 0) {
		report_line(stdout, bytes, tmax, s->n, wrong);
		if (o->verbose) {
			printf("#   K=%u chunks/segment, expected per rank per collective: 2*(%d-1)*%u = %llu WRITE_WITH_IMM and %llu receives\n",
			       rg.K, s->n, rg.K, (unsigned long long)ring_wrs_per_rank(&rg),
			       (unsigned long long)ring_wrs_per_rank(&rg));
			for (int r = 0; r < s->n; r++)
				printf("#   rank %d: %llu collectives, per collective %.2f sends posted, %.2f recvs posted, %.2f send CQEs, %.2f recv CQEs%s\n",
				       r, (unsigned long long)all[r].ncoll,
				       (double)all[r].st.sends_posted / (double)all[r].ncoll,
				       (double)all[r].st.recvs_posted / (double)all[r].ncoll,
				       (double)all[r].st.send_cqes / (double)all[r].ncoll,
				       (double)all[r].st.recv_cqes / (double)all[r].ncoll,
				       all[r].bad_coll ? " MISMATCH" : "");
		}
	}
	*wrong_out += wrong;
	*busbw += ring_busbw(bytes, tmax, s->n);
	free(all);
	return 0;
}

/* Per-rank totals, gathered so rank 0 prints them in rank order. */
struct rank_summary {
	int32_t pid;
	uint32_t pad;
	uint64_t ncoll, expected, bad_coll;
	struct coll_stats st;
};

static int summary(struct rank_state *s)
{
	struct rank_summary me = {
		.pid = (int32_t)getpid(), .ncoll = s->seq, .expected = s->expected_total,
		.bad_coll = s->bad_coll, .st = s->total,
	};
	struct rank_summary *all = calloc((size_t)s->n, sizeof(*all));
	int bad = 0;

	if (!all || oob_allgather(&s->oob, &me, all, sizeof(me))) {
		free(all);
		return -1;
	}
	for (int r = 0; r < s->n; r++) {
		const struct rank_summary *a = &all[r];
		const struct rdma_info *i = &s->info[r];
		int ok = !a->bad_coll && a->st.sends_posted == a->expected &&
			 a->st.recvs_posted == a->expected && a->st.send_cqes == a->expected &&
			 a->st.recv_cqes == a->expected;

		bad |= !ok;
		if (s->rank == 0)
			printf("# rank %d pid %d send QP 0x%x -> rank %d, recv QP 0x%x <- rank %d: "
			       "%llu collectives, WRITE_WITH_IMM posted %llu, send CQEs %llu, "
			       "recvs re-posted %llu (+%u at setup), recv CQEs %llu, "
			       "expected sum 2*(n-1)*K = %llu %s\n",
			       r, a->pid, i->qpn_send, (r + 1) % s->n, i->qpn_recv,
			       (r + s->n - 1) % s->n, (unsigned long long)a->ncoll,
			       (unsigned long long)a->st.sends_posted,
			       (unsigned long long)a->st.send_cqes,
			       (unsigned long long)a->st.recvs_posted, s->o->rq_depth,
			       (unsigned long long)a->st.recv_cqes,
			       (unsigned long long)a->expected, ok ? "OK" : "MISMATCH");
	}
	free(all);
	return bad ? -1 : 0;
}

static int rank_main(struct options *o)
{
	struct rank_state s = { .o = o, .rank = o->rank, .n = o->nranks,
				.timeout_ms = o->timeout_s * 1000 };
	struct rdma_info mine;
	uint64_t wrong = 0;
	double busbw = 0;
	int nsizes = 0, rc = RRA_EXIT_FAIL;
	size_t maxcount = o->maxbytes / sizeof(float);

	rra_log_rank = o->rank;
	if (rdma_open(&s.rd, options_dev(o, o->rank), o->port, o->gid_idx)) {
		rdma_close(&s.rd);
		return RRA_EXIT_USAGE;
	}
	if (o->chunk_bytes > s.rd.max_msg) {
		/* A chunk is one message; the device bounds its size (rxe: 8 MiB). */
		o->chunk_bytes = s.rd.max_msg - s.rd.max_msg % sizeof(float);
	}
	s.rd.spin_us = o->spin_us;
	s.rd.qp_timeout = o->qp_timeout;
	s.rd.retry_cnt = o->retry_cnt;
	if (oob_open(&s.oob, o->oob, s.rank, s.n, s.timeout_ms))
		goto out;
	if (rdma_alloc(&s.rd, maxcount, ring_scratch_elems(s.n, maxcount), o->depth, o->rq_depth))
		goto out;
	verify_fill_input(s.rd.sendbuf, maxcount, s.rank);

	s.info = calloc((size_t)s.n, sizeof(*s.info));
	if (!s.info)
		goto out;
	rdma_local_info(&s.rd, s.rank, &mine);
	if (oob_allgather(&s.oob, &mine, s.info, sizeof(mine)))
		goto out;
	if (rdma_connect(&s.rd, &mine, &s.info[(s.rank + s.n - 1) % s.n],
			 &s.info[(s.rank + 1) % s.n]))
		goto out;
	/* Receives before the barrier: nobody writes to a QP without them. */
	for (uint32_t i = 0; i < o->rq_depth; i++)
		if (rdma_post_recv(&s.rd))
			goto out;
	if (oob_barrier(&s.oob))
		goto out;
	s.rd.prof = prof_open(s.rank, s.n, s.rd.devname);

	if (s.rank == 0) {
		printf("# " PROG ": %d ranks on %s port %d, %s %d, MTU %d, chunk %zu B, send depth %u, recv depth %u, iters %d, warmup %d, timeout %d s\n",
		       s.n, s.rd.devname, s.rd.port, s.rd.use_grh ? "GID index" : "LID",
		       s.rd.use_grh ? s.rd.gid_idx : s.rd.port_attr.lid,
		       128 << s.rd.port_attr.active_mtu, o->chunk_bytes, o->depth, o->rq_depth,
		       o->iters, o->warmup, o->timeout_s);
		printf("# WRs per rank per collective: 2*(n-1)*K RDMA WRITE WITH IMM and as many receives, K = chunks per segment (-v prints it per size)\n");
		report_table_header(stdout);
		fflush(stdout);
	}
	for (size_t bytes = o->minbytes; bytes <= o->maxbytes;) {
		size_t next;

		if (run_size(&s, bytes, &wrong, &busbw))
			goto out;
		nsizes++;
		next = o->stepbytes ? bytes + o->stepbytes : (size_t)((double)bytes * o->factor);
		next -= next % sizeof(float);
		if (next <= bytes)
			next = bytes + sizeof(float);
		bytes = next;
	}
	if (s.rank == 0)
		report_footer(stdout, wrong, busbw, nsizes);
	rc = summary(&s) ? RRA_EXIT_FAIL : wrong ? RRA_EXIT_WRONG : RRA_EXIT_OK;
	if (rc == RRA_EXIT_FAIL && s.rank == 0)
		rra_err("work request counts differ from 2*(n-1)*K");
	/*
	 * Nobody tears down before everyone is done: a rank that destroyed its
	 * QPs early could swallow the ACK of a neighbour's last WRITE.
	 */
	if (oob_barrier(&s.oob) && rc == RRA_EXIT_OK)
		rc = RRA_EXIT_FAIL;
out:
	fflush(stdout);
	prof_close(s.rd.prof);
	oob_close(&s.oob);
	rdma_close(&s.rd);
	free(s.info);
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	int rc = options_parse(&o, argc, argv);

	if (rc)
		return rc > 0 ? RRA_EXIT_OK : RRA_EXIT_USAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!o.launch)
		return rank_main(&o);
	/* Check each device once here, so a missing one is one clear message. */
	for (int i = 0; i < (o.ndevs ? o.ndevs : 1); i++) {
		struct rdma_ctx c;

		rc = rdma_open(&c, options_dev(&o, i), o.port, o.gid_idx);
		rdma_close(&c);
		if (rc)
			return RRA_EXIT_USAGE;
	}
	return launcher_run(&o, rank_main);
}
