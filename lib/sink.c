// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Sink dispatch and the helpers every format shares. */
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

void rdt_sink_set_error(struct rdt_sink *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
}

RDT_EXPORT const char *rdt_sink_error(const struct rdt_sink *s)
{
	return s->error;
}

void rdt_json_str(FILE *f, const char *s, size_t maxlen)
{
	fputc('"', f);
	for (size_t i = 0; i < maxlen && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			/* Task and device names are bytes, not UTF-8. */
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

int rdt_ob_init(struct rdt_ob *o, struct rdt_sink *s)
{
	o->f = s->f;
	o->len = 0;
	o->err = false;
	if (s->iobuf) {
		/* Nothing was written yet: the FILE may still change its
		 * buffering, and its buffer becomes ours. */
		o->buf = s->iobuf;
		o->cap = s->iobuf_len;
		o->own = false;
		setvbuf(s->f, NULL, _IONBF, 0);
		return 0;
	}
	o->buf = malloc(RDT_OB_OWN);
	o->cap = RDT_OB_OWN;
	o->own = true;
	return o->buf ? 0 : -ENOMEM;
}

void rdt_ob_free(struct rdt_ob *o)
{
	if (o->own)
		free(o->buf);
	o->buf = NULL;
	o->cap = o->len = 0;
}

int rdt_ob_flush(struct rdt_ob *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = true;
	o->len = 0;
	if (ferror(o->f))
		o->err = true;
	return o->err ? -EIO : 0;
}

void rdt_ob_printf(struct rdt_ob *o, const char *fmt, ...)
{
	va_list ap;
	char *p = rdt_ob_room(o, RDT_OB_MAX);
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, o->cap - o->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < o->cap - o->len) {
		o->len += (size_t)n;
		return;
	}
	/* Longer than the room left: write it past the buffer. */
	rdt_ob_flush(o);
	va_start(ap, fmt);
	vfprintf(o->f, fmt, ap);
	va_end(ap);
}

/* 1: written as \c, 2: as \u00xx, 3: the end (NUL); 0: as itself. */
static const unsigned char json_esc[256] = {
	[0] = 3,
	[1 ... 0x1f] = 2, ['"'] = 1, ['\\'] = 1, [0x7f ... 0xff] = 2,
};

void rdt_ob_json_str(struct rdt_ob *o, const char *s, size_t maxlen)
{
	size_t i = 0;

	rdt_ob_c(o, '"');
	while (i < maxlen && s[i]) {
		/* 64 bytes at a time, each at most 6 out ("\u00xx") */
		char *p = rdt_ob_room(o, 64 * 6), *start = p;
		size_t lim = maxlen - i > 64 ? i + 64 : maxlen;

		for (; i < lim; i++) {
			unsigned char c = (unsigned char)s[i];
			unsigned char k = json_esc[c];

			if (__builtin_expect(!k, 1)) {	/* one table load a byte */
				*p++ = (char)c;
			} else if (k == 3) {
				break;
			} else if (k == 1) {
				*p++ = '\\';
				*p++ = (char)c;
			} else {
				memcpy(p, "\\u00", 4);
				p[4] = "0123456789abcdef"[c >> 4];
				p[5] = "0123456789abcdef"[c & 15];
				p += 6;
			}
		}
		o->len += (size_t)(p - start);
		if (i < lim)
			break;			/* its NUL */
	}
	rdt_ob_c(o, '"');
}

static void fu(void *c, const char *k, uint64_t v)
{
	fprintf(c, ",\"%s\":%" PRIu64, k, v);
}

static void fi(void *c, const char *k, int64_t v)
{
	fprintf(c, ",\"%s\":%" PRId64, k, v);
}

/* Hex as strings: 64-bit ids would lose bits in JavaScript numbers. */
static void fx(void *c, const char *k, uint64_t v)
{
	fprintf(c, ",\"%s\":\"0x%" PRIx64 "\"", k, v);
}

static void fs(void *c, const char *k, const char *v, size_t max)
{
	fprintf(c, ",\"%s\":", k);
	rdt_json_str(c, v, max);
}

/* Record fields as JSON members, for the JSON Lines and Perfetto sinks. */
const struct rdt_fieldv rdt_json_fields = { fu, fi, fx, fs };

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
			s->iobuf_len = r && rdt_reader_live(r) ?
				       RDT_SINK_LIVE_IOBUF : RDT_SINK_IOBUF;
			if (is_regular(s->f))
				s->iobuf = malloc(s->iobuf_len);
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
	if (!ret && r && rdt_reader_live(r) && s->f &&
	    rdt_reader_add_sink(r, s) < 0) {
		if (s->ops->close)
			s->ops->close(s, r);
		ret = -ENOMEM;
	}
	if (ret < 0) {
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

void rdt_sink_idle(struct rdt_sink *s)
{
	if (s->ops->flush)
		s->ops->flush(s);
	fflush(s->f);
}

RDT_EXPORT int rdt_sink_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	if (!s->have_first) {
		s->first_ts = ev->ts;
		s->have_first = true;
	}
	return s->ops->write(s, ev);
}

RDT_EXPORT int rdt_sink_close(struct rdt_sink *s, struct rdt_reader *r)
{
	int ret;

	if (!s)
		return 0;
	if (s->r)
		rdt_reader_del_sink(s->r, s);
	ret = s->ops->close(s, r ? r : s->r);
	if (s->f && fflush(s->f) && !ret) {
		rdt_sink_set_error(s, "%s: write error: %s", s->path, strerror(errno));
		ret = -EIO;
	}
	if (s->own_f && fclose(s->f) && !ret) {
		rdt_sink_set_error(s, "%s: write error: %s", s->path, strerror(errno));
		ret = -EIO;
	}
	if (ret && s->error[0])
		fprintf(stderr, "rdmatrace: %s\n", s->error);
	free(s->iobuf);
	free(s->path);
	free(s);
	return ret;
}
