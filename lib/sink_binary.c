// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Trace file writer (-o): rdt_file_hdr, metadata text, records. */
#define _GNU_SOURCE	/* fwrite_unlocked */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * Where the sink has a buffer of its own (s->iobuf: its own regular file,
 * not a live reader), records are appended to it here and the FILE is
 * unbuffered: one fwrite per record cost ~110 instructions per event, a
 * fifth of a file merge.  The file still grows by one write(2) per
 * s->iobuf_len bytes or less, as with the stdio buffer this replaces.
 */
struct bin_buf {
	char	*p;
	size_t	len;
};

/* The buffer's records to the file (rdt_sink_ship(): sink_writer.c); b->p
 * is then the buffer to fill next. */
static int bin_ship(struct rdt_sink *s)
{
	struct bin_buf *b = s->priv;
	int ret;

	if (!b || !b->len)
		return 0;
	ret = rdt_sink_ship(s, b->len);
	b->p = s->iobuf;
	b->len = 0;
	return ret;
}

/* Everything in the file: a live reader's wait, and the close. */
static int bin_flush(struct rdt_sink *s)
{
	int ret = bin_ship(s);
	int d = rdt_sink_drain(s);

	return ret ? ret : d;
}

static int bin_put(struct rdt_sink *s, const void *p, size_t n)
{
	struct bin_buf *b = s->priv;

	if (!b) {
		/* A FILE of our own is never shared with another thread:
		 * skip stdio's lock. */
		if ((s->own_f ? fwrite_unlocked(p, n, 1, s->f) :
				fwrite(p, n, 1, s->f)) != 1)
			return rdt_sink_write_error(s, errno);
		return 0;
	}
	while (n > s->iobuf_len - b->len) {
		size_t part = s->iobuf_len - b->len;

		memcpy(b->p + b->len, p, part);
		b->len += part;
		p = (const char *)p + part;
		n -= part;
		if (bin_ship(s) < 0)
			return -EIO;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* Without a buffer of our own, when it is full, or a record shorter than
 * its type (@len bytes of @size at @src, the rest zero). */
static __attribute__((noinline)) int bin_write_slow(struct rdt_sink *s,
						    const struct rdt_event *ev,
						    const void *src, size_t len,
						    size_t size)
{
	union rdt_record rec;

	if (!size)	/* what a zero-sized fwrite reported before */
		return rdt_sink_write_error(s, errno);
	/* The stored size is the type's; a merge of several boots is stored
	 * on its realtime base. */
	memset(&rec, 0, size);
	memcpy(&rec, src, len < size ? len : size);
	rec.hdr.size = (__u16)size;
	rec.hdr.ts_ns = ev->ts;
	return bin_put(s, &rec, size);
}

/* @n bytes of a record (a multiple of 8, at least a header's 32) in
 * 16-byte pieces, the last one overlapping: no call.  memcpy() of a size
 * it cannot see was ~30 instructions an event of a file merge's ~380
 * (callgrind).  The empty asm keeps GCC from making the loop a memcpy()
 * call again. */
static inline __attribute__((always_inline)) void
rec_copy(char *d, const char *s, size_t n)
{
	size_t i = 0;

	_Static_assert(sizeof(struct rdt_hdr) >= 16, "one piece fits");
	do {
		memcpy(d + i, s + i, 16);
		i += 16;
		__asm__("" : "+r"(i));
	} while (i + 16 < n);
	memcpy(d + n - 16, s + n - 16, 16);
}

/* The record at @src (@len bytes; @size, its type's, where it is whole;
 * 0 for a type this reader does not know) out with that size and @ev's
 * stamp. */
static inline __attribute__((always_inline)) int
bin_out(struct rdt_sink *s, const struct rdt_event *ev, const void *src,
	size_t len, size_t size)
{
	struct bin_buf *b = s->priv;
	__u16 sz16 = (__u16)size;
	char *out;

	/* Re-derived from SUBBUF records when the file is read back. */
	if (ev->flags & RDT_EVF_DERIVED)
		return 0;
	if (!b || !size || len != size || s->iobuf_len - b->len < size)
		return bin_write_slow(s, ev, src, len, size);
	/* Size and stamp as in bin_write_slow. */
	out = b->p + b->len;
	rec_copy(out, src, size);
	memcpy(out + offsetof(struct rdt_hdr, size), &sz16, sizeof(sz16));
	memcpy(out + offsetof(struct rdt_hdr, ts_ns), &ev->ts, sizeof(ev->ts));
	b->len += size;
	return 0;
}

static inline size_t type_size(unsigned int type)
{
	return type <= RDT_EV_MAX ? rdt_types[type].size : 0;
}

static int bin_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	size_t size = type_size(ev->rec.hdr.type);

	/* ev->rec holds the whole type, zero beyond what was read. */
	return bin_out(s, ev, &ev->rec, size, size);
}

static int bin_write_ref(struct rdt_sink *s, const struct rdt_event *ev,
			 const struct rdt_rec_ref *ref)
{
	__u16 type;

	memcpy(&type, (const char *)ref->rec + offsetof(struct rdt_hdr, type),
	       sizeof(type));
	return bin_out(s, ev, ref->rec, ref->len, type_size(type));
}

static int bin_close(struct rdt_sink *s, struct rdt_reader *r)
{
	int ret = bin_flush(s);

	(void)r;
	free(s->priv);
	s->priv = NULL;
	return ret;
}

static const struct rdt_sink_ops bin_ops = {
	.write = bin_write, .close = bin_close, .flush = bin_flush,
	.write_ref = bin_write_ref,
};

/*
 * Every source's metadata lines, each line once, in source order: a live
 * run's BPF source knows the traced processes' NCCL_* settings, and a
 * merge of several files keeps what each one held.
 */
static char *all_meta(struct rdt_reader *r)
{
	size_t len = 0;
	char *m = calloc(1, 1);

	for (unsigned int i = 0; m && r && i < rdt_reader_nsources(r); i++) {
		const char *p = rdt_reader_meta(r, i);

		while (*p) {
			size_t l = strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
			char *n;
			bool seen = false;

			for (const char *q = m; *q && !seen; q += strcspn(q, "\n") + 1)
				seen = !strncmp(q, p, l) &&
				       (p[l - 1] == '\n' || q[l] == '\n' ||
					!q[l]);
			if (!seen) {
				n = realloc(m, len + l + 2);
				if (!n)
					break;
				m = n;
				memcpy(m + len, p, l);
				len += l;
				if (m[len - 1] != '\n')
					m[len++] = '\n';
				m[len] = 0;
			}
			p += l;
		}
	}
	return m;
}

int rdt_sink_binary_init(struct rdt_sink *s)
{
	struct rdt_reader *r = s->r;
	const struct rdt_file_hdr *src = r ? rdt_reader_file_hdr(r, 0) : NULL;
	char *meta = all_meta(r);
	struct rdt_file_hdr h;
	size_t mlen, pad;
	static const char zeros[8];
	int ret = 0;

	if (!meta) {
		rdt_sink_set_error(s, "%s: out of memory", s->path);
		return -ENOMEM;
	}
	mlen = strlen(meta);

	s->ops = &bin_ops;
	/* Nothing was written yet: the FILE may still change its buffering
	 * (sink.c gave it iobuf, which becomes ours). */
	if (s->iobuf && (s->priv = calloc(1, sizeof(struct bin_buf)))) {
		((struct bin_buf *)s->priv)->p = s->iobuf;
		setvbuf(s->f, NULL, _IONBF, 0);
	}
	if (src)
		h = *src;
	else
		rdt_local_file_hdr(&h, NULL);
	memcpy(h.magic, RDT_FILE_MAGIC, sizeof(h.magic));
	h.abi_major = RDT_ABI_MAJOR;
	h.abi_minor = RDT_ABI_MINOR;
	if (r && rdt_reader_nsources(r) > 1) {
		/* Time base is only known once reading starts; a merge of
		 * several boots gets realtime stamps and a zero offset. */
		for (unsigned int i = 1; i < rdt_reader_nsources(r); i++)
			if (strncmp(rdt_reader_file_hdr(r, i)->boot_id, h.boot_id,
				    sizeof(h.boot_id))) {
				h.realtime_offset_ns = 0;
				snprintf(h.boot_id, sizeof(h.boot_id), "merged");
				snprintf(h.host, sizeof(h.host), "merged");
				break;
			}
	}
	pad = (8 - mlen % 8) % 8;
	h.hdr_size = (__u32)(sizeof(h) + mlen + pad);
	if (bin_put(s, &h, sizeof(h)) < 0 ||
	    (mlen && bin_put(s, meta, mlen) < 0) ||
	    (pad && bin_put(s, zeros, pad) < 0)) {
		free(s->priv);
		s->priv = NULL;
		ret = -EIO;
	}
	free(meta);
	return ret;
}
