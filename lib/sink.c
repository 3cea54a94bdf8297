// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Sink dispatch: a format by name, opened, written, flushed, closed. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "internal.h"

static bool is_regular(FILE *f)
{
	struct stat st;

	return !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
}

static const char *const fmt_names[] = {
	[RDT_FMT_TEXT] = "text", [RDT_FMT_JSON] = "json",
	[RDT_FMT_PERFETTO] = "perfetto", [RDT_FMT_SQLITE] = "sqlite",
	[RDT_FMT_BINARY] = "binary",
};

RDT_EXPORT int rdt_format_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(fmt_names) / sizeof(*fmt_names); i++)
		if (!strcasecmp(name, fmt_names[i]))
			return (int)i;
	if (!strcasecmp(name, "jsonl"))
		return RDT_FMT_JSON;
	if (!strcasecmp(name, "chrome"))
		return RDT_FMT_PERFETTO;
	return -1;
}

RDT_EXPORT const char *rdt_sink_error(const struct rdt_sink *s)
{
	return s->error;
}

/* A live reader's wait (rdt_pipeline): what the sink holds goes to its
 * file first. */
RDT_EXPORT int rdt_sink_flush(struct rdt_sink *s)
{
	int ret = s->ops->flush ? s->ops->flush(s) : 0;

	if (s->f && fflush(s->f) && !ret)
		ret = -errno;
	return ret;
}

RDT_EXPORT struct rdt_sink *rdt_sink_open(enum rdt_format fmt, const char *path,
					  struct rdt_reader *r, char *err,
					  size_t errlen)
{
	struct rdt_sink *s = calloc(1, sizeof(*s));
	int ret;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->fmt = fmt;
	s->r = r;
	s->path = strdup(path ? path : "-");
	if (fmt != RDT_FMT_SQLITE) {
		if (!strcmp(s->path, "-")) {
			s->f = stdout;
		} else {
			s->f = fopen(s->path, "wb");
			s->own_f = true;
			if (!s->f) {
				snprintf(err, errlen, "%s: cannot create: %s",
					 s->path, strerror(errno));
				free(s->path);
				free(s);
				return NULL;
			}
			/* stdio's default (st_blksize, 4 KiB) costs a write(2)
			 * per ~50 records; a fixed 1 MiB keeps memory bounded.
			 * Live readers: 64 KiB, flushed whenever the reader
			 * waits, keeps the file close to what was traced
			 * (kill -9, tail -f).  Not for pipes and devices
			 * (/dev/null).  glibc ignores the size unless given
			 * the buffer. */
			bool live = r && rdt_reader_live(r);

			s->iobuf_len = live ? RDT_SINK_LIVE_IOBUF : RDT_SINK_IOBUF;
			if (is_regular(s->f))
				s->iobuf = malloc(s->iobuf_len);
			/* A conversion's writes on a second core
			 * (sink_writer.c); a live reader's stay plain. */
			s->async = !live;
			if (s->iobuf)
				setvbuf(s->f, s->iobuf, _IOFBF, s->iobuf_len);
		}
	}
	switch (fmt) {
	case RDT_FMT_TEXT: ret = rdt_sink_text_init(s); break;
	case RDT_FMT_JSON: ret = rdt_sink_json_init(s); break;
	case RDT_FMT_PERFETTO: ret = rdt_sink_perfetto_init(s); break;
	case RDT_FMT_SQLITE: ret = rdt_sink_sqlite_init(s); break;
	case RDT_FMT_BINARY: ret = rdt_sink_binary_init(s); break;
	default:
		rdt_sink_set_error(s, "unknown output format %d", fmt);
		ret = -EINVAL;
	}
	if (ret < 0) {
		rdt_sink_writer_stop(s);
		snprintf(err, errlen, "%s", s->error[0] ? s->error : strerror(-ret));
		if (s->own_f)
			fclose(s->f);
		free(s->iobuf);
		free(s->path);
		free(s);
		return NULL;
	}
	return s;
}

RDT_EXPORT int rdt_sink_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	return rdt_sink_write_one(s, ev);
}

RDT_EXPORT int rdt_sink_close(struct rdt_sink *s, struct rdt_reader *r)
{
	/* An error a write returned was the caller's to report. */
	bool had = s && s->error[0];
	int ret, e;

	if (!s)
		return 0;
	ret = s->ops->close(s, r ? r : s->r);
	/* The format drained it before its last words; a write that
	 * failed there is this close's error too. */
	e = rdt_sink_writer_stop(s);
	if (e < 0 && !ret)
		ret = rdt_sink_write_error(s, -e);
	if (s->f && fflush(s->f) && !ret)
		ret = rdt_sink_write_error(s, errno);
	if (s->own_f && fclose(s->f) && !ret)
		ret = rdt_sink_write_error(s, errno);
	if (ret && s->error[0] && !had)
		fprintf(stderr, "rdmatrace: %s\n", s->error);
	free(s->iobuf);
	free(s->path);
	free(s);
	return ret;
}
