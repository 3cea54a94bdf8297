// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A sink's buffer to its file, written by a second thread while the sink
 * fills another buffer.
 *
 * Why: converting a file is the format's work plus the kernel's copy of
 * its output into the page cache, one after the other on one core: the
 * text sink's write(2)s were 0.5-0.9 s of a 2 s run over 8 M events (1.3
 * GB of text), the binary sink's 0.3 of 0.5 s.  With the write on a
 * second core, the run takes about the longer of the two.
 *
 * Only a sink's own regular file that is not a live reader's (s->async,
 * sink.c) and only once a buffer fills: a short output never starts the
 * thread, and a live reader's flush on idle stays a plain write, done
 * when it returns.  Two buffers: the sink fills s->iobuf while the thread
 * writes the other.  Nothing is dropped: a sink waits for the thread when
 * it fills its buffer before the last one is written, and everything
 * handed over is in the file when rdt_sink_writer_drain() returns.  The
 * first failed write's errno is returned by the next hand-over or drain
 * and by rdt_sink_writer_stop() (sink_common.c's rdt_sink_ship() and
 * rdt_sink_drain() make it the sink's error).
 */
#define _GNU_SOURCE	/* fwrite_unlocked */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct rdt_sink_writer {
	pthread_t	thread;
	pthread_mutex_t	lock;
	pthread_cond_t	cond;
	int		fd;
	char		*spare;	/* the buffer the sink is not filling */
	size_t		len;	/* bytes of spare to write; 0: idle */
	bool		stop;
	int		err;	/* errno of the first failed write */
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (!w)
			return EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void *writer_main(void *arg)
{
	struct rdt_sink_writer *w = arg;
	int e;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->len && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->len)
			break;
		pthread_mutex_unlock(&w->lock);
		/* After a failure the rest is not written: the file would
		 * have a hole where the failed buffer was.  (Only this
		 * thread writes err.) */
		e = w->err ? 0 : write_all(w->fd, w->spare, w->len);
		pthread_mutex_lock(&w->lock);
		if (e && !w->err)
			w->err = e;
		w->len = 0;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* The thread and its spare buffer; NULL where either cannot be had (the
 * caller then writes in its own thread, as before). */
static struct rdt_sink_writer *writer_start(struct rdt_sink *s)
{
	struct rdt_sink_writer *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int ret;

	if (!w)
		return NULL;
	w->spare = malloc(s->iobuf_len);
	w->fd = fileno(s->f);
	if (!w->spare || w->fd < 0)
		goto fail;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	/* Signals stay the caller's (SIGINT stops a reader). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ret)
		return w;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
fail:
	free(w->spare);
	free(w);
	return NULL;
}

int rdt_sink_writer_ship(struct rdt_sink *s, size_t len)
{
	struct rdt_sink_writer *w = s->writer;
	char *next;
	int e;

	if (!len)
		return 0;
	if (!w && s->async && !s->writer_off) {
		w = s->writer = writer_start(s);
		s->writer_off = !w;
	}
	if (!w) {
		if (fwrite_unlocked(s->iobuf, len, 1, s->f) != 1)
			return errno ? -errno : -EIO;
		return 0;
	}
	pthread_mutex_lock(&w->lock);
	while (w->len)
		pthread_cond_wait(&w->cond, &w->lock);
	e = w->err;
	if (!e) {
		next = w->spare;
		w->spare = s->iobuf;
		w->len = len;
		s->iobuf = next;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return -e;
}

int rdt_sink_writer_drain(struct rdt_sink *s)
{
	struct rdt_sink_writer *w = s->writer;
	int e;

	if (!w)
		return 0;
	pthread_mutex_lock(&w->lock);
	while (w->len)
		pthread_cond_wait(&w->cond, &w->lock);
	e = w->err;
	pthread_mutex_unlock(&w->lock);
	return -e;
}

int rdt_sink_writer_stop(struct rdt_sink *s)
{
	struct rdt_sink_writer *w = s->writer;
	int ret;

	if (!w)
		return 0;
	ret = rdt_sink_writer_drain(s);
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w->spare);
	free(w);
	s->writer = NULL;
	return ret;
}
