// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* blkparse-like text: one line per event, fixed columns, then a summary. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Lines are built by hand in a buffer and written with one fwrite: one
 * fprintf per field was ~10 calls into vfprintf per event (0.5 M events/s).
 * The output is byte for byte what the printf formats in the comments
 * produce.  Where the sink owns a buffer (s->iobuf: its own regular file,
 * not a live reader) lines are built straight in it and the FILE is
 * unbuffered, as the binary sink does: an fwrite per line was ~150
 * instructions per event.
 */
struct line {
	char *p;	/* next free byte */
	char *end;	/* room left for at least LINE_SLACK more bytes */
	char *base;	/* first byte not written yet */
	FILE *f;
	struct rdt_sink *s;	/* lines built in s->iobuf, else NULL */
};

struct text_priv {
	bool header;	/* written */
	char *buf;	/* s->iobuf, or NULL: one fwrite per line */
	size_t len;
	uint8_t type_len[RDT_EV_MAX + 1];	/* strnlen(name, 64), 0 if none */
};

/* Room for a line up to its fields; room() keeps LINE_SLACK free after. */
#define LINE_BUF 1024

/* The longest single append: a key (short literal) and a 64-bit number or
 * a name of at most 64 bytes. */
#define LINE_SLACK 192

static int text_ship(struct rdt_sink *s);

/* A line longer than the room left: out with what is built so far. */
static __attribute__((noinline)) void room_out(struct line *l)
{
	struct text_priv *t;

	if (!l->s) {
		fwrite(l->base, 1, (size_t)(l->p - l->base), l->f);
		l->p = l->base;
		return;
	}
	/* A failed write is reported by the next ship or flush. */
	t = l->s->priv;
	t->len = (size_t)(l->p - t->buf);
	text_ship(l->s);
	l->base = l->p = t->buf;
	l->end = t->buf + l->s->iobuf_len - LINE_SLACK;
}

static inline void room(struct line *l)
{
	if (l->p >= l->end)
		room_out(l);
}

/* Short copies of a length known only at run time (names, columns): two
 * overlapping moves, in bounds of both ends.  A plain memcpy of them was
 * inlined as "rep movsq", whose start-up cost was half of text_write. */
static inline __attribute__((always_inline)) void put(struct line *l,
						      const char *s, size_t n)
{
	char *d = l->p;
	uint64_t a, b;
	uint32_t c, e;

	l->p += n;
	if (n >= 8 && n <= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		memcpy(&c, s, 4);
		memcpy(&e, s + n - 4, 4);
		memcpy(d, &c, 4);
		memcpy(d + n - 4, &e, 4);
	} else if (n < 4) {
		if (n) {
			d[0] = s[0];
			d[n / 2] = s[n / 2];
			d[n - 1] = s[n - 1];
		}
	} else {
		memcpy(d, s, n);
	}
}

/* Numbers: rdt_ndec() and rdt_udec() (internal.h). */

/* Sixteen blanks, the widest padded column; lines keep LINE_SLACK free. */
static const char blanks[16] = "                ";

/* Pad a column of @n bytes to @w (<= 16) with one fixed-size copy. */
static inline void pad(struct line *l, size_t n, size_t w)
{
	if (n < w) {
		memcpy(l->p, blanks, sizeof(blanks));
		l->p += w - n;
	}
}

/* "%*" PRIu64: right-aligned in @w columns (0: no padding). */
static void putu_w(struct line *l, uint64_t v, int w)
{
	int n = rdt_ndec(v);

	pad(l, (size_t)n, (size_t)w);
	l->p += n;
	rdt_udec(l->p, v);
}

static void putu(struct line *l, uint64_t v)
{
	putu_w(l, v, 0);
}

static void putx(struct line *l, uint64_t v)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	char *p = l->p + n;

	l->p = p;
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
}

/* "%-*.*s": left-aligned in @w columns, at most @max bytes. */
static void puts_w(struct line *l, const char *s, int w, size_t max)
{
	size_t n = strnlen(s, max);

	put(l, s, n);
	pad(l, n, (size_t)w);
}

/* " key=" (@k, @n bytes with the blank and '='): @n is a constant at
 * every call (fields.inc), so the copy is a move or two. */
static inline __attribute__((always_inline)) void key(struct line *l,
						      const char *k, size_t n)
{
	room(l);
	memcpy(l->p, k, n);
	l->p += n;
}

static void puti(struct line *l, int64_t v)	/* "%" PRId64 */
{
	if (v < 0) {
		*l->p++ = '-';
		putu(l, -(uint64_t)v);
	} else {
		putu(l, (uint64_t)v);
	}
}

static void putsn(struct line *l, const char *v, size_t max)	/* "%.*s" */
{
	size_t n = strnlen(v, max);

	/* Names are at most 64 bytes; anything longer goes out in pieces. */
	while (n > LINE_SLACK / 2) {
		put(l, v, LINE_SLACK / 2);
		v += LINE_SLACK / 2;
		n -= LINE_SLACK / 2;
		room(l);
	}
	put(l, v, n);
}

/* " %s=%" PRIu64, " %s=%" PRId64, " %s=0x%" PRIx64, " %s=%.*s" */
static void text_fields(const union rdt_record *r, struct line *l)
{
#define K(k) key(l, " " k "=", sizeof(k) + 1)
#define U(k, val) (K(k), putu(l, (uint64_t)(val)))
#define I(k, val) (K(k), puti(l, (int64_t)(val)))
#define X(k, val) (key(l, " " k "=0x", sizeof(k) + 3), putx(l, (uint64_t)(val)))
#define S(k, val) (K(k), putsn(l, val, sizeof(val)))
#define SC(k, val) (K(k), putsn(l, val, 64))
#define E(k, val) SC(k, val)
#include "fields.inc"
#undef K
#undef U
#undef I
#undef X
#undef S
#undef SC
#undef E
}

static void header(struct rdt_sink *s)
{
	struct rdt_reader *r = s->r;

	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		const struct rdt_file_hdr *h = rdt_reader_file_hdr(r, i);
		struct rdt_source_stats st;

		rdt_reader_source_stats(r, i, &st);
		fprintf(s->f, "# source %u: %s host=%.64s kernel=%.64s module=%.32s "
			"abi=%u.%u ncpus=%u\n", i, st.name, h->host, h->kernel,
			h->module_version[0] ? h->module_version : "-",
			h->abi_major, h->abi_minor, h->ncpus);
	}
	fprintf(s->f, "# %14s %3s %7s %-16s %-8s %-14s %s\n", "time(s)", "cpu",
		"pid", "comm", "device", "event", "fields");
}

/* The buffer's lines to the file (rdt_sink_ship(): sink_writer.c); t->buf
 * is then the buffer to fill next. */
static int text_ship(struct rdt_sink *s)
{
	struct text_priv *t = s->priv;
	int ret = rdt_sink_ship(s, t->len);

	t->buf = s->iobuf;
	t->len = 0;
	return ret;
}

/* Everything in the file: a live reader's wait, and the close. */
static int text_flush(struct rdt_sink *s)
{
	struct text_priv *t = s->priv;
	int ret = t->buf ? text_ship(s) : 0;
	int d = rdt_sink_drain(s);

	return ret ? ret : d ? d : ferror(s->f) ? -EIO : 0;
}

static int text_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;
	uint64_t rel = ev->ts - s->first_ts;
	struct text_priv *t = s->priv;
	char lbuf[LINE_BUF];
	const char *type;
	struct line l;
	uint64_t frac;

	if (!t->header) {
		header(s);
		t->header = true;
	}
	/* Bookkeeping the reader already applied (names, cumulative loss). */
	if (h->type == RDT_EV_SUBBUF || h->type == RDT_EV_COMM)
		return 0;
	l.f = s->f;
	l.s = NULL;
	if (t->buf) {
		if (s->iobuf_len - t->len < LINE_BUF && text_ship(s) < 0)
			return -EIO;
		l.s = s;
		l.base = t->buf;
		l.p = t->buf + t->len;
		l.end = t->buf + s->iobuf_len - LINE_SLACK;
	} else {
		l.base = l.p = lbuf;
		l.end = lbuf + sizeof(lbuf) - LINE_SLACK;
	}
	/* "%6" PRIu64 ".%09" PRIu64 */
	putu_w(&l, rel / 1000000000, 6);
	*l.p++ = '.';
	frac = rel % 1000000000;
	/* exactly 9 digits, zero-padded */
	for (int i = 8; i > 0; i -= 2, frac /= 100) {
		l.p[i] = rdt_digits2[frac % 100 * 2 + 1];
		l.p[i - 1] = rdt_digits2[frac % 100 * 2];
	}
	l.p[0] = (char)('0' + frac);
	l.p += 9;
	/* " %3s": the CPU or "-" */
	*l.p++ = ' ';
	if (h->cpu == UINT32_MAX)
		put(&l, "  -", 3);
	else
		putu_w(&l, h->cpu, 3);
	/* " %7u" */
	*l.p++ = ' ';
	putu_w(&l, h->pid, 7);
	/* " %-16.16s" */
	*l.p++ = ' ';
	puts_w(&l, ev->comm && *ev->comm ? ev->comm : "-", 16, 16);
	/* " %-8s": the device's name, "-" or "dev<index>" */
	*l.p++ = ' ';
	if (ev->devname && *ev->devname) {
		puts_w(&l, ev->devname, 8, RDT_NAME_LEN + 1);
	} else if (h->type == RDT_EV_PORT_COUNTER) {
		/* sysfs names the device, not its index */
		puts_w(&l, ev->rec.port_counter.devname, 8, RDT_NAME_LEN);
	} else if (h->dev == RDT_NO_DEV) {
		puts_w(&l, "-", 8, 1);
	} else {
		char *d = l.p;

		put(&l, "dev", 3);
		putu(&l, h->dev);
		pad(&l, (size_t)(l.p - d), 8);
	}
	/* " %-14s" */
	*l.p++ = ' ';
	/* type names are constants: their lengths were taken once */
	if (h->type <= RDT_EV_MAX && t->type_len[h->type]) {
		put(&l, rdt_types[h->type].name, t->type_len[h->type]);
		pad(&l, t->type_len[h->type], 14);
	} else {
		type = rdt_type_name(h->type);
		puts_w(&l, type ? type : "(null)", 14, 64);
	}
	text_fields(&ev->rec, &l);
	/* out of place in the stream: said, not hidden (issue 38) */
	if (ev->flags & RDT_EVF_LATE)
		put(&l, " LATE", 5);
	*l.p++ = '\n';
	if (t->buf) {
		/* room() may have written the buffer out: l.base again */
		t->len = (size_t)(l.p - t->buf);
		return 0;
	}
	fwrite(l.base, 1, (size_t)(l.p - l.base), s->f);
	return ferror(s->f) ? -EIO : 0;
}


static int text_close(struct rdt_sink *s, struct rdt_reader *r)
{
	struct text_priv *t = s->priv;
	int ret;

	if (!t->header)
		header(s);
	ret = text_flush(s);
	free(t);
	s->priv = NULL;
	fprintf(s->f, "# summary\n");
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats st;

		rdt_reader_source_stats(r, i, &st);
		fprintf(s->f, "# source %u %s: records %" PRIu64 " lost %" PRIu64
			" unknown-type %" PRIu64 " late %" PRIu64 "%s%s\n", i,
			st.name, st.records, st.lost, st.unknown, st.late,
			st.failed ? " error: " : "", st.failed ? st.error : "");
		if (st.subbufs_skipped)
			fprintf(s->f, "#   %" PRIu64 " relay sub-buffers skipped "
				"unread: their events are lost, count unknown\n",
				st.subbufs_skipped);
		if (st.resyncs)
			fprintf(s->f, "#   %" PRIu64 " corrupt bytes in %" PRIu64
				" %s skipped to the next sub-buffer, the "
				"first at %s: their events are lost, count "
				"unknown\n", st.corrupt_bytes, st.resyncs,
				st.resyncs == 1 ? "place" : "places",
				st.corrupt_first);
		if (st.detached)
			fprintf(s->f, "#   %" PRIu64 " %s detached while read, "
				"the first %s: the events still in %s are lost, "
				"count unknown\n", st.detached,
				st.detached == 1 ? "file" : "files",
				st.detached_first,
				st.detached == 1 ? "it" : "them");
		if (st.skipped_files)
			fprintf(s->f, "#   %" PRIu64 " %s not read, as not to be "
				"trusted\n", st.skipped_files,
				st.skipped_files == 1 ? "file" : "files");
		for (uint32_t c = 0; c < st.ncpus; c++)
			if (st.lost_cpu[c])
				fprintf(s->f, "#   cpu%u lost %" PRIu64 "\n", c,
					st.lost_cpu[c]);
	}
	return ret;
}

static const struct rdt_sink_ops text_ops = {
	.write = text_write, .close = text_close, .flush = text_flush,
};

int rdt_sink_text_init(struct rdt_sink *s)
{
	struct text_priv *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	s->ops = &text_ops;
	s->priv = t;
	for (unsigned int i = 0; i <= RDT_EV_MAX; i++)
		if (rdt_types[i].name)
			t->type_len[i] = (uint8_t)strnlen(rdt_types[i].name, 64);
	/* Nothing was written yet: the FILE may still change its buffering
	 * (sink.c gave it iobuf, which becomes ours). */
	if (s->iobuf) {
		t->buf = s->iobuf;
		setvbuf(s->f, NULL, _IONBF, 0);
	}
	return 0;
}
