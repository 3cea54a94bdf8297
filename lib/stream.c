// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A live stream read in place (struct rdt_stream, internal.h): the bytes a
 * source read, kept until the merge has handed out the records indexed in
 * them.  The source reads into it; the merge indexes and hands out
 * (rdt_src_push_stream(), merge.c); this file keeps its room.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A buffer never grows past this: offsets are 32-bit.  Far above what the
 * merge holds (max_buffered records of at most 64 KiB; a million of the
 * usual 64-80 bytes by default), so a stream that reaches it stops
 * reading, and its producer's loss is counted, rather than wrapping. */
#define STREAM_MAX ((size_t)1 << 31)

int rdt_stream_room(struct rdt_stream *st, size_t want)
{
	size_t first = st->head < st->n ? st->ent[st->head].off : st->scan;
	size_t cap;
	unsigned char *b;

	if (st->cap - st->len >= want)
		return 0;
	/* Drop the handed-out prefix where it is at least half of the
	 * buffer: each byte then moves about once, however long the stream
	 * stays ahead of the merge. */
	if (first && first >= st->cap / 2) {
		memmove(st->buf, st->buf + first, st->len - first);
		for (size_t i = st->head; i < st->n; i++)
			st->ent[i].off -= (uint32_t)first;
		st->len -= first;
		st->scan -= first;
		if (st->cap - st->len >= want)
			return 0;
	}
	cap = st->cap ? st->cap : want;
	while (cap - st->len < want)
		cap *= 2;
	if (cap > STREAM_MAX)
		return -ENOBUFS;
	b = realloc(st->buf, cap);
	if (!b)
		return -ENOMEM;
	st->buf = b;
	st->cap = cap;
	return 0;
}

void rdt_stream_free(struct rdt_stream *st)
{
	free(st->buf);
	free(st->ent);
	memset(st, 0, sizeof(*st));
}
