/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by every file of rdma-ring-allreduce: error
 * reporting that names the rank (several ranks write to one terminal) and a
 * monotonic clock for deadlines and timing.
 */
#ifndef RRA_COMMON_H
#define RRA_COMMON_H

#include <stdint.h>
#include <time.h>

#define PROG "rdma-ring-allreduce"

/* Exit codes: distinct so a test can tell a setup error from a bad sum. */
enum {
	RRA_EXIT_OK = 0,
	RRA_EXIT_FAIL = 1,	/* runtime failure: timeout, dead peer, bad CQE */
	RRA_EXIT_USAGE = 2,	/* bad options, missing device, bad GID index */
	RRA_EXIT_WRONG = 3,	/* ran to the end but some sums were wrong */
};

/* The rank printed by rra_err(); -1 before a rank is known (launcher). */
extern int rra_log_rank;

void rra_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline uint64_t rra_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
