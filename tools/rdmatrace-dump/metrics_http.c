// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace-dump --metrics: serve the page lib/metrics.c renders, through
 * libmicrohttpd (a thread per connection, its own; none of them ever
 * touches the reader's state).
 *
 * The reader must never wait on a client.  Pages are immutable,
 * reference-counted buffers: the reader renders one when a scrape asks
 * (mhttp_wanted(), one atomic load in its loop) and swaps it in under a
 * mutex held for the swap alone; a request takes a reference under the
 * same mutex and streams from its own page, however slowly its client
 * reads, and the last reference frees it.  A scrape waits (on a condition
 * variable, in its connection's thread) at most PAGE_WAIT_MS for a page
 * newer than its request, then takes what there is: a reader busy for
 * longer, or stopped, still gets answered.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "metrics_http.h"

#define PAGE_WAIT_MS	250
/* Connections at once (each a thread) and how long one may sit idle: a
 * dead scraper's socket goes after IDLE_S. */
#define MAX_CONNS	32
#define IDLE_S		10

struct page {
	atomic_uint ref;
	size_t len;
	char *buf;
};

struct mhttp {
	struct MHD_Daemon *d;
	int fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct page *cur;	/* under mu */
	uint64_t gen;		/* under mu: pages published */
	atomic_bool wanted;
	char where[80];
};

static void page_put(struct page *p)
{
	if (p && atomic_fetch_sub(&p->ref, 1) == 1) {
		free(p->buf);
		free(p);
	}
}

bool mhttp_wanted(struct mhttp *h)
{
	return atomic_load_explicit(&h->wanted, memory_order_relaxed);
}

void mhttp_publish(struct mhttp *h, char *buf, size_t len)
{
	struct page *p = calloc(1, sizeof(*p)), *old;

	atomic_store_explicit(&h->wanted, false, memory_order_relaxed);
	if (!p) {
		free(buf);
		return;
	}
	atomic_init(&p->ref, 1);
	p->buf = buf;
	p->len = len;
	pthread_mutex_lock(&h->mu);
	old = h->cur;
	h->cur = p;
	h->gen++;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	page_put(old);		/* outside the lock: free() may take a while */
}

/* A page newer than the request, or after PAGE_WAIT_MS what there is. */
static struct page *page_get(struct mhttp *h)
{
	struct timespec until;
	struct page *p;
	uint64_t gen;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += (PAGE_WAIT_MS % 1000) * 1000000L;
	until.tv_sec += PAGE_WAIT_MS / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&h->mu);
	gen = h->gen;
	atomic_store_explicit(&h->wanted, true, memory_order_relaxed);
	while (h->gen == gen &&
	       pthread_cond_timedwait(&h->cv, &h->mu, &until) != ETIMEDOUT)
		;
	p = h->cur;
	if (p)
		atomic_fetch_add(&p->ref, 1);
	pthread_mutex_unlock(&h->mu);
	return p;
}

static ssize_t page_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct page *p = cls;
	size_t n;

	if (pos >= p->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = p->len - (size_t)pos < max ? p->len - (size_t)pos : max;
	memcpy(buf, p->buf + pos, n);
	return (ssize_t)n;
}

static void page_done(void *cls)
{
	page_put(cls);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int code,
			     const char *text, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text),
					(void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_len, void **con_cls)
{
	struct mhttp *h = cls;
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct page *p;
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);

	(void)version;
	(void)upload;
	(void)con_cls;
	if (strcmp(url, "/metrics") && strcmp(url, "/"))
		return reply(c, MHD_HTTP_NOT_FOUND,
			     "not found: the metrics are at /metrics\n", NULL);
	if (!head && strcmp(method, MHD_HTTP_METHOD_GET)) {
		*upload_len = 0;	/* a body is not read */
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "method not allowed: GET or HEAD\n", "GET, HEAD");
	}
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK,
			     "rdmatrace-dump --metrics: see /metrics\n", NULL);
	if (!(p = page_get(h)))
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "no metrics yet\n", NULL);
	r = MHD_create_response_from_callback(p->len, 64 * 1024, page_read, p,
					      page_done);
	if (!r) {
		page_put(p);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* "[ADDR:]PORT": ADDR IPv4, or IPv6 in brackets. */
static int parse(const char *spec, struct sockaddr_storage *ss, socklen_t *sl,
		 char *err, size_t errlen)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	char addr[64] = "127.0.0.1";
	const char *port = spec, *colon = strrchr(spec, ':');
	unsigned long p;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (colon) {
		size_t n = (size_t)(colon - spec);

		if (n && spec[0] == '[' && spec[n - 1] == ']') {
			spec++;
			n -= 2;
		}
		if (!n || n >= sizeof(addr)) {
			snprintf(err, errlen, "no address before ':'");
			return -1;
		}
		memcpy(addr, spec, n);
		addr[n] = 0;
		port = colon + 1;
	}
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p < 1 || p > 65535 || *port == '-' ||
	    *port == '+') {
		snprintf(err, errlen, "'%s' is not a port (1 to 65535)", port);
		return -1;
	}
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*sl = sizeof(*a4);
	} else if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*sl = sizeof(*a6);
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 address or "
			 "[IPv6 address]", addr);
		return -1;
	}
	return 0;
}

struct mhttp *mhttp_start(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	struct mhttp *h;
	socklen_t sl;
	char e[160];
	int one = 1, saved;

	if (parse(spec, &ss, &sl, e, sizeof(e))) {
		snprintf(err, errlen, "--metrics=%s: %s ([ADDR:]PORT)", spec, e);
		errno = EINVAL;
		return NULL;
	}
	if (!(h = calloc(1, sizeof(*h)))) {
		snprintf(err, errlen, "--metrics: out of memory");
		return NULL;
	}
	/* Our own socket: bind's error ("Address already in use") is then
	 * what the user reads, not a start that failed for some reason. */
	h->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (h->fd < 0 ||
	    setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(h->fd, (struct sockaddr *)&ss, sl) || listen(h->fd, 64)) {
		snprintf(err, errlen, "--metrics=%s: cannot listen: %s", spec,
			 strerror(errno));
		errno = EADDRINUSE;	/* not EINVAL: not the value's fault */
		goto fail;
	}
	{
		char a[INET6_ADDRSTRLEN] = "?";
		bool v6 = ss.ss_family == AF_INET6;

		inet_ntop(ss.ss_family, v6 ?
			  (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr :
			  (void *)&((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
		snprintf(h->where, sizeof(h->where), v6 ? "[%s]:%u" : "%s:%u", a,
			 ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
			       ((struct sockaddr_in *)&ss)->sin_port));
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION |
				MHD_USE_INTERNAL_POLLING_THREAD |
				(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, handle, h,
				MHD_OPTION_LISTEN_SOCKET, h->fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MAX_CONNS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_S,
				/* HTTP/1.1 without Host and the like: 400 */
				MHD_OPTION_STRICT_FOR_CLIENT, (int)1,
				MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, errlen, "--metrics=%s: libmicrohttpd did not start",
			 spec);
		errno = EIO;
		pthread_cond_destroy(&h->cv);
		pthread_mutex_destroy(&h->mu);
		goto fail;
	}
	return h;
fail:
	saved = errno;
	if (h->fd >= 0)
		close(h->fd);
	free(h);
	errno = saved;
	return NULL;
}

const char *mhttp_where(const struct mhttp *h)
{
	return h->where;
}

void mhttp_stop(struct mhttp *h)
{
	if (!h)
		return;
	/* Waits for the connections' threads: each ends within IDLE_S. */
	MHD_stop_daemon(h->d);
	close(h->fd);
	page_put(h->cur);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
}
