// SPDX-License-Identifier: GPL-2.0
/* Out-of-band exchange over a unix socket with deadlines, see oob.h. */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"
#include "oob.h"

#define OOB_MAGIC 0x52524131u /* "RRA1" */

struct hello {
	uint32_t magic;
	int32_t rank;
	int32_t nranks;
};

static socklen_t mkaddr(struct sockaddr_un *sa, const char *name)
{
	size_t len = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (len >= sizeof(sa->sun_path))
		len = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path, name, len);
	if (name[0] == '@')
		sa->sun_path[0] = '\0';	/* abstract: no file left behind */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '@' ? 0 : 1));
}

static int ms_left(uint64_t deadline)
{
	uint64_t now = rra_now_ns();

	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

static int wait_fd(int fd, short ev, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };

	for (;;) {
		int rc = poll(&p, 1, ms_left(deadline));

		if (rc > 0)
			return 0;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

static const char *who(int peer)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "rank %d", peer);
	return buf;
}

static int xfer(struct oob *o, int fd, int peer, void *buf, size_t len, int wr)
{
	uint64_t deadline = rra_now_ns() + (uint64_t)o->timeout_ms * 1000000ull;
	char *p = buf;

	while (len) {
		ssize_t n;
		int rc = wait_fd(fd, wr ? POLLOUT : POLLIN, deadline);

		if (rc == -ETIMEDOUT) {
			rra_err("out-of-band %s %s timed out after %d ms (peer hung or dead?)",
				wr ? "send to" : "receive from", who(peer), o->timeout_ms);
			return -1;
		}
		if (rc) {
			rra_err("out-of-band poll: %s", strerror(-rc));
			return -1;
		}
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n == 0) {
			rra_err("out-of-band connection to %s closed: peer exited or died", who(peer));
			return -1;
		}
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			rra_err("out-of-band %s %s: %s", wr ? "send to" : "receive from",
				who(peer), strerror(errno));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int root_accept(struct oob *o, uint64_t deadline)
{
	int got = 0;

	while (got < o->n - 1) {
		struct hello h;
		int fd, rc = wait_fd(o->listen_fd, POLLIN, deadline);

		if (rc) {
			rra_err("waited %d ms for ranks to connect to '%s', %d of %d came",
				o->timeout_ms, o->name, got, o->n - 1);
			return -1;
		}
		fd = accept(o->listen_fd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			rra_err("accept: %s", strerror(errno));
			return -1;
		}
		if (xfer(o, fd, -1, &h, sizeof(h), 0)) {
			close(fd);
			return -1;
		}
		if (h.magic != OOB_MAGIC || h.nranks != o->n || h.rank <= 0 ||
		    h.rank >= o->n || o->peer_fd[h.rank] >= 0) {
			rra_err("bad hello on '%s' (rank %d of %d): another run using the same --oob name?",
				o->name, h.rank, h.nranks);
			close(fd);
			return -1;
		}
		o->peer_fd[h.rank] = fd;
		got++;
	}
	return 0;
}

int oob_open(struct oob *o, const char *name, int rank, int n, int timeout_ms)
{
	uint64_t deadline = rra_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct sockaddr_un sa;
	socklen_t salen = mkaddr(&sa, name);

	memset(o, 0, sizeof(*o));
	o->rank = rank;
	o->n = n;
	o->timeout_ms = timeout_ms;
	o->listen_fd = o->root_fd = -1;
	snprintf(o->name, sizeof(o->name), "%s", name);

	if (rank == 0) {
		o->peer_fd = malloc(sizeof(int) * (size_t)n);
		if (!o->peer_fd)
			return -1;
		for (int r = 0; r < n; r++)
			o->peer_fd[r] = -1;
		o->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (o->listen_fd < 0) {
			rra_err("socket: %s", strerror(errno));
			return -1;
		}
		if (name[0] != '@')
			unlink(name);
		if (bind(o->listen_fd, (struct sockaddr *)&sa, salen) ||
		    listen(o->listen_fd, n)) {
			rra_err("cannot listen on '%s': %s (another run using it? pick --oob)",
				name, strerror(errno));
			return -1;
		}
		if (root_accept(o, deadline))
			return -1;
		close(o->listen_fd);
		o->listen_fd = -1;
		if (name[0] != '@')
			unlink(name);
		return 0;
	}

	/* Rank 0 may start later than us: retry until the deadline. */
	for (;;) {
		struct hello h = { OOB_MAGIC, rank, n };

		o->root_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (o->root_fd < 0) {
			rra_err("socket: %s", strerror(errno));
			return -1;
		}
		if (connect(o->root_fd, (struct sockaddr *)&sa, salen) == 0)
			return xfer(o, o->root_fd, 0, &h, sizeof(h), 1);
		if (errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN && errno != EINTR) {
			rra_err("connect to rank 0 at '%s': %s", name, strerror(errno));
			return -1;
		}
		close(o->root_fd);
		o->root_fd = -1;
		if (!ms_left(deadline)) {
			rra_err("rank 0 did not listen on '%s' within %d ms", name, timeout_ms);
			return -1;
		}
		usleep(10000);
	}
}

int oob_allgather(struct oob *o, const void *mine, void *all, size_t sz)
{
	char *a = all;

	if (o->rank != 0) {
		if (xfer(o, o->root_fd, 0, (void *)mine, sz, 1))
			return -1;
		return xfer(o, o->root_fd, 0, all, sz * (size_t)o->n, 0);
	}
	memcpy(a, mine, sz);
	for (int r = 1; r < o->n; r++)
		if (xfer(o, o->peer_fd[r], r, a + sz * (size_t)r, sz, 0))
			return -1;
	for (int r = 1; r < o->n; r++)
		if (xfer(o, o->peer_fd[r], r, a, sz * (size_t)o->n, 1))
			return -1;
	return 0;
}

int oob_barrier(struct oob *o)
{
	int32_t me = o->rank, *all = calloc((size_t)o->n, sizeof(*all));
	int rc;

	if (!all)
		return -1;
	rc = oob_allgather(o, &me, all, sizeof(me));
	free(all);
	return rc;
}

void oob_close(struct oob *o)
{
	if (o->listen_fd >= 0)
		close(o->listen_fd);
	if (o->root_fd >= 0)
		close(o->root_fd);
	if (o->peer_fd) {
		for (int r = 1; r < o->n; r++)
			if (o->peer_fd[r] >= 0)
				close(o->peer_fd[r]);
		free(o->peer_fd);
	}
	o->peer_fd = NULL;
	o->listen_fd = o->root_fd = -1;
}
