/* SPDX-License-Identifier: GPL-2.0 */
/* rdmatrace-dump --metrics: the HTTP side (metrics_http.c). */
#ifndef RDT_METRICS_HTTP_H
#define RDT_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct mhttp;

/*
 * Serve GET /metrics at @spec, "[ADDR:]PORT" (ADDR an IPv4 address or
 * [IPv6]; default 127.0.0.1), from libmicrohttpd's own threads.  NULL with
 * @err naming the problem and errno EINVAL for a bad value, another for
 * a server that could not start (the port in use).
 */
struct mhttp *mhttp_start(const char *spec, char *err, size_t errlen);
/* A scrape waits for a newer page: render one and publish it.  One
 * atomic load: cheap enough for the reader's loop. */
bool mhttp_wanted(struct mhttp *h);
/* The new page (malloc'd; the server frees it once no response uses it).
 * Takes a mutex for a pointer swap only: never waits on a client. */
void mhttp_publish(struct mhttp *h, char *buf, size_t len);
/* "127.0.0.1:9464": where it listens, for messages. */
const char *mhttp_where(const struct mhttp *h);
void mhttp_stop(struct mhttp *h);

#endif
