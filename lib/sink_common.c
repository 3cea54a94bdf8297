// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What every output format uses: its error, its output buffer and JSON
 * strings.  The formats (sink_*.c) call these and nothing of sink.c, which
 * opens them: the arrows run one way, dispatch -> formats -> this.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void rdt_sink_set_error(struct rdt_sink *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
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

int rdt_sink_write_error(struct rdt_sink *s, int errnum)
{
	rdt_sink_set_error(s, "%s: write error: %s", s->path, strerror(errnum));
	return -EIO;
}

int rdt_sink_ship(struct rdt_sink *s, size_t len)
{
	int e = rdt_sink_writer_ship(s, len);

	return e ? rdt_sink_write_error(s, -e) : 0;
}

int rdt_sink_drain(struct rdt_sink *s)
{
	int e = rdt_sink_writer_drain(s);

	return e ? rdt_sink_write_error(s, -e) : 0;
}

int rdt_ob_init(struct rdt_ob *o, struct rdt_sink *s)
{
	o->f = s->f;
	o->s = NULL;
	o->len = 0;
	o->err = false;
	if (s->iobuf) {
		/* Nothing was written yet: the FILE may still change its
		 * buffering, and its buffer becomes ours. */
		o->buf = s->iobuf;
		o->cap = s->iobuf_len;
		o->s = s;
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

int rdt_ob_ship(struct rdt_ob *o)
{
	if (o->s) {
		if (rdt_sink_ship(o->s, o->len) < 0)
			o->err = true;
		o->buf = o->s->iobuf;
	} else if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) {
		o->err = true;
	}
	o->len = 0;
	if (ferror(o->f))
		o->err = true;
	return o->err ? -EIO : 0;
}

int rdt_ob_flush(struct rdt_ob *o)
{
	rdt_ob_ship(o);
	if (o->s && rdt_sink_drain(o->s) < 0)
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

/*
 * Whether a word holds a byte that JSON escapes here: below 0x20 (NUL
 * too), '"', '\\', or 0x7f and above.  Each test is exact as an "any":
 * a borrow or carry leaves a byte only from a byte that is itself one of
 * those (below 0x20, or 0xff), so the word is reported rightly either way.
 */
static inline uint64_t json_word_special(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull;
	const uint64_t high = 0x8080808080808080ull;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	return (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
		((b - ones) & ~b) | (w + ones) | w) & high;
}

static inline uint64_t json_load8(const char *s)
{
	uint64_t w;

	memcpy(&w, s, sizeof(w));
	return w;
}

/* Whether s[0..n) needs no escape: 8 bytes a test, every load inside
 * the string (the last word overlaps; short ones are padded with
 * spaces). */
static bool json_plain(const char *s, size_t n)
{
	uint32_t a, b;
	size_t i;

	if (n >= 8) {
		for (i = 0; i + 8 < n; i += 8)
			if (json_word_special(json_load8(s + i)))
				return false;
		return !json_word_special(json_load8(s + n - 8));
	}
	if (n >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		return !json_word_special(a | (uint64_t)b << 32);
	}
	if (!n)
		return true;
	return !json_word_special(0x2020202020000000ull |
				  (uint64_t)(unsigned char)s[0] |
				  (uint64_t)(unsigned char)s[n / 2] << 8 |
				  (uint64_t)(unsigned char)s[n - 1] << 16);
}

void rdt_ob_json_str(struct rdt_ob *o, const char *s, size_t maxlen)
{
	size_t i = 0, n = strnlen(s, maxlen);

	/* Names nearly always need no escape: checked a word at a time and
	 * copied whole, where the loop below costs ~7 instructions a byte. */
	if (n <= RDT_OB_MAX - 2 && json_plain(s, n)) {
		rdt_put_quoted(rdt_ob_room(o, n + 2), s, n);
		o->len += n + 2;
		return;
	}
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
