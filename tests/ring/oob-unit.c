// SPDX-License-Identifier: GPL-2.0
/*
 * rdma-ring-allreduce's out-of-band exchange (oob.c) on the host, no RDMA:
 * 4 ranks as processes over the unix and the TCP rendezvous (rank 0 starting
 * last, so the others retry), allgather and barrier results, and the
 * deadlines: no rank 0, missing ranks, a peer that exits, a bad address.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "oob.h"

int rra_log_rank = -1;

void rra_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "  (expected or not) oob: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int failures;

#define CHECK(c, ...) do { if (!(c)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); putchar('\n'); } } while (0)

/* A TCP port nobody uses right now. */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		perror("free_port");
		exit(2);
	}
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* One rank: open, allgather rank*10+1, two barriers. Exit 0 if all is right. */
static int rank_life(const char *name, int r, int n)
{
	int32_t mine = r * 10 + 1, all[8];
	struct oob o;

	if (r == 0)
		usleep(300000);	/* the others come first and retry */
	if (oob_open(&o, name, r, n, 5000))
		return 10;
	if (oob_allgather(&o, &mine, all, sizeof(mine)))
		return 11;
	for (int i = 0; i < n; i++)
		if (all[i] != i * 10 + 1)
			return 12;
	if (oob_barrier(&o) || oob_barrier(&o))
		return 13;
	oob_close(&o);
	return 0;
}

static void ring_of(const char *name, int n)
{
	pid_t pid[8];
	int ok = 0;

	for (int r = 0; r < n; r++) {
		pid[r] = fork();
		if (pid[r] == 0)
			_exit(rank_life(name, r, n));
	}
	for (int r = 0; r < n; r++) {
		int st;

		waitpid(pid[r], &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
		else
			CHECK(0, "%s: rank %d exited %d", name, r, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	printf("%s: %d of %d ranks exchanged and met at the barriers\n", name, ok, n);
}

static double secs(uint64_t t0)
{
	return (double)(rra_now_ns() - t0) / 1e9;
}

int main(void)
{
	char name[64];
	struct oob o;
	uint64_t t0;
	double s;

	snprintf(name, sizeof(name), "@rra-oob-unit.%d", (int)getpid());
	ring_of(name, 4);
	snprintf(name, sizeof(name), "tcp:127.0.0.1:%d", free_port());
	ring_of(name, 4);
	snprintf(name, sizeof(name), "tcp:localhost:%d", free_port());
	ring_of(name, 3);

	/* No rank 0: a connecting rank gives up at its deadline. */
	snprintf(name, sizeof(name), "tcp:127.0.0.1:%d", free_port());
	t0 = rra_now_ns();
	CHECK(oob_open(&o, name, 1, 2, 500) == -1, "connect without rank 0 succeeded");
	s = secs(t0);
	oob_close(&o);
	printf("no rank 0: failed after %.2f s (deadline 0.5 s)\n", s);
	CHECK(s >= 0.45 && s < 2, "no-rank-0 deadline took %.2f s", s);

	/* Rank 0 alone: gives up waiting for the others at its deadline. */
	t0 = rra_now_ns();
	CHECK(oob_open(&o, name, 0, 3, 500) == -1, "rank 0 alone succeeded");
	s = secs(t0);
	oob_close(&o);
	printf("rank 0 alone: failed after %.2f s (deadline 0.5 s)\n", s);
	CHECK(s >= 0.45 && s < 2, "rank-0 deadline took %.2f s", s);

	/* A peer that exits after connecting: rank 0's allgather fails at once. */
	snprintf(name, sizeof(name), "tcp:127.0.0.1:%d", free_port());
	{
		pid_t p = fork();
		int32_t v = 0, all[2];

		if (p == 0) {
			struct oob c;

			_exit(oob_open(&c, name, 1, 2, 5000) ? 1 : 0);
		}
		CHECK(oob_open(&o, name, 0, 2, 5000) == 0, "rank 0 open failed");
		waitpid(p, NULL, 0);
		t0 = rra_now_ns();
		CHECK(oob_allgather(&o, &v, all, sizeof(v)) == -1, "allgather with a dead peer worked");
		s = secs(t0);
		printf("dead peer: allgather failed after %.3f s\n", s);
		CHECK(s < 1, "dead peer noticed after %.2f s", s);
		oob_close(&o);
	}

	/* Malformed and unresolvable addresses fail at once, named. */
	CHECK(oob_open(&o, "tcp:nohostport", 1, 2, 500) == -1, "tcp:nohostport accepted");
	oob_close(&o);
	CHECK(oob_open(&o, "tcp:127.0.0.1:", 0, 2, 500) == -1, "empty port accepted");
	oob_close(&o);

	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
