// SPDX-License-Identifier: GPL-2.0
/* Out-of-band exchange over a unix or TCP socket with deadlines, see oob.h. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

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

/* "tcp:HOST:PORT" ("tcp:[V6ADDR]:PORT"): a TCP rendezvous, see oob.h. */
static int is_tcp(const char *name)
{
	return !strncmp(name, "tcp:", 4);
}

static int tcp_resolve(const char *name, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	char host[256];
	const char *h = name + 4, *port = strrchr(h, ':');
	size_t len;
	int rc;

	if (!port || port == h || !port[1]) {
		rra_err("--oob '%s': want tcp:HOST:PORT", name);
		return -1;
	}
	len = (size_t)(port - h);
	if (h[0] == '[' && len >= 2 && h[len - 1] == ']') {
		h++;
		len -= 2;
	}
	if (len >= sizeof(host)) {
		rra_err("--oob '%s': host name too long", name);
		return -1;
	}
	memcpy(host, h, len);
	host[len] = '\0';
	rc = getaddrinfo(host, port + 1, &hints, res);
	if (rc) {
		rra_err("--oob '%s': %s", name, gai_strerror(rc));
		return -1;
	}
	return 0;
}

static void tcp_nodelay(int fd)
{
	int one = 1;

	/* Small request/answer messages: no Nagle delay between them. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Rank 0 binds HOST:PORT, so HOST is one of its own addresses. */
static int tcp_listen(struct oob *o, const char *name, int n)
{
	struct addrinfo *ai;
	int one = 1, fd;

	if (tcp_resolve(name, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rra_err("socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	o->listen_fd = fd;
	/* A run right after another may find the port in TIME_WAIT. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, n)) {
		rra_err("cannot listen on '%s': %s (another run using it? pick --oob)",
			name, strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	return 0;
}

/*
 * A non-blocking connect bounded by the deadline: an unreachable host must
 * not hold a rank for the kernel's SYN retries (minutes).  Returns the
 * connected fd, -2 to try again (nobody listens yet, or the network is not
 * up yet), -1 on an error (printed).
 */
static int tcp_connect_once(const char *name, uint64_t deadline)
{
	struct addrinfo *ai;
	int fd, err = 0;
	socklen_t elen = sizeof(err);

	if (tcp_resolve(name, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rra_err("socket: %s", strerror(errno));
		freeaddrinfo(ai);
		return -1;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
		err = 0;
	} else if (errno == EINPROGRESS) {
		int rc = wait_fd(fd, POLLOUT, deadline);

		if (rc == -ETIMEDOUT)
			err = ETIMEDOUT;
		else if (rc)
			err = -rc;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen))
			err = errno;
	} else {
		err = errno;
	}
	freeaddrinfo(ai);
	if (!err) {
		tcp_nodelay(fd);
		return fd;
	}
	close(fd);
	switch (err) {
	case ECONNREFUSED: case ETIMEDOUT: case EHOSTUNREACH: case ENETUNREACH:
	case EADDRNOTAVAIL: case EINTR: case EAGAIN:
		return -2;
	}
	rra_err("connect to rank 0 at '%s': %s", name, strerror(err));
	return -1;
}

int oob_open(struct oob *o, const char *name, int rank, int n, int timeout_ms)
{
	uint64_t deadline = rra_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int tcp = is_tcp(name);
	struct sockaddr_un sa;
	socklen_t salen = tcp ? 0 : mkaddr(&sa, name);

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
		if (tcp) {
			if (tcp_listen(o, name, n) || root_accept(o, deadline))
				return -1;
			for (int r = 1; r < n; r++)
				tcp_nodelay(o->peer_fd[r]);
			close(o->listen_fd);
			o->listen_fd = -1;
			return 0;
		}
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
	while (tcp) {
		struct hello h = { OOB_MAGIC, rank, n };

		o->root_fd = tcp_connect_once(name, deadline);
		if (o->root_fd >= 0)
			return xfer(o, o->root_fd, 0, &h, sizeof(h), 1);
		if (o->root_fd == -1)
			return -1;
		o->root_fd = -1;
		if (!ms_left(deadline)) {
			rra_err("rank 0 did not listen on '%s' within %d ms", name, timeout_ms);
			return -1;
		}
		usleep(10000);
	}
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
