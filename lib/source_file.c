// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Trace file source: rdt_file_hdr, metadata text, then records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Large reads: few syscalls per record.  Bounded, so memory stays bounded
 * whatever the trace's length; never below the largest record (size is
 * u16), and no larger than a small file needs (the fuzzer opens ~1000
 * small files a second, and page faults on a fresh 256 KiB dominated). */
#define BUF_SZ (256 * 1024)
#define BUF_MIN (68 * 1024)

/* A file's records, cut from large reads: the stream's (stdio, which
 * read the header; the source's priv) or a second look's (pread() from
 * @rd_off, which moves neither the stream's position nor its buffer). */
struct file_buf {
	FILE *f;
	int fd;			/* >= 0: pread() from @rd_off, not @f */
	uint64_t rd_off;
	unsigned char *buf;
	size_t cap;		/* size of buf */
	size_t len, pos;	/* valid bytes in buf, next record in buf */
	uint64_t off;		/* file offset of buf[pos] */
	bool at_eof;
};

static int refill(struct file_buf *b)
{
	size_t n;

	memmove(b->buf, b->buf + b->pos, b->len - b->pos);
	b->len -= b->pos;
	b->pos = 0;
	if (b->fd >= 0) {
		ssize_t r = pread(b->fd, b->buf + b->len, b->cap - b->len,
				  (off_t)b->rd_off);

		if (r < 0)
			return -errno;
		n = (size_t)r;
		b->rd_off += n;
	} else {
		n = fread(b->buf + b->len, 1, b->cap - b->len, b->f);
		if (n == 0 && ferror(b->f))
			return -EIO;
	}
	b->len += n;
	if (n == 0)
		b->at_eof = true;
	return 0;
}

/*
 * The record at b->pos, its header in @h: 1 with all h->size bytes in buf,
 * or with a header that is not a record's (bad magic, a size below the
 * header's: for the caller to name); 0 at the file's end; -EBADMSG for a
 * record the file ends inside; or -errno for a read error.
 */
static inline __attribute__((always_inline)) int
next_record(struct file_buf *b, struct rdt_hdr *h)
{
	int ret;

	for (;;) {
		size_t avail = b->len - b->pos;

		if (__builtin_expect(avail >= sizeof(*h), 1)) {
			memcpy(h, b->buf + b->pos, sizeof(*h));
			/* Sizes above the buffer are impossible for this ABI
			 * (u16, under BUF_MIN): a refill always makes room. */
			if (__builtin_expect(h->magic == RDT_REC_MAGIC &&
					     h->size <= avail, 1))
				return 1;
			if (h->magic != RDT_REC_MAGIC || h->size < sizeof(*h))
				return 1;
		}
		if (b->at_eof)
			return avail ? -EBADMSG : 0;
		if ((ret = refill(b)) < 0)
			return ret;
	}
}

static int file_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct file_buf *b = s->priv;
	const unsigned char *rec;
	struct rdt_hdr h;
	uint64_t off;
	size_t len;
	int ret;

	(void)pass;	/* a file is in order: it reads on, whatever the pass */
	ret = next_record(b, &h);
	if (__builtin_expect(ret <= 0, 0)) {
		if (ret == 0) {
			s->eof = true;
		} else if (ret == -EBADMSG) {
			rdt_src_set_error(s, "%s: truncated record at offset %llu "
					  "(%zu bytes left, file ends)", s->name,
					  (unsigned long long)b->off,
					  b->len - b->pos);
		} else {
			rdt_src_set_error(s, "%s: read error: %s", s->name,
					  strerror(-ret));
		}
		return ret;
	}
	/* The record stays in buf as the stream's head: the next refill()
	 * (which moves buf) comes only with the next fill, after its emit.
	 * A header that is not a record's: rdt_src_push names it, and the
	 * stream stops there.  The position moves first, so that the push
	 * is the fill's last call (a tail call: no frame kept around it,
	 * ~5 instructions an event). */
	rec = b->buf + b->pos;
	len = b->len - b->pos;
	off = b->off;
	b->pos += h.size;
	b->off += h.size;
	return rdt_src_push_head(s, rec, len, off);
}

/*
 * Every record again, from the first, through the file already open:
 * clock alignment's look before the merge, which must not open the path
 * again (it may name another file by now, or a FIFO that never ends).
 * Stops, with 0, at the first header that is not a record's or a record
 * the file ends inside (the merge names those when it gets there), and
 * where @fn returns < 0.  Standard input and pipes cannot be read twice:
 * -ESPIPE.
 */
static int file_rescan(struct rdt_src *s, rdt_rec_fn fn, void *ctx)
{
	const struct file_buf *sb = s->priv;
	struct file_buf b = { .fd = fileno(sb->f), .rd_off = s->fh.hdr_size,
			      .cap = sb->cap, .off = s->fh.hdr_size };
	struct rdt_hdr h;
	int ret;

	if (!(b.buf = malloc(b.cap)))
		return -ENOMEM;
	while ((ret = next_record(&b, &h)) == 1 && h.magic == RDT_REC_MAGIC &&
	       h.size >= sizeof(h) && fn(ctx, b.buf + b.pos, h.size) >= 0) {
		b.pos += h.size;
		b.off += h.size;
	}
	free(b.buf);
	return ret < 0 && ret != -EBADMSG ? ret : 0;
}

static void file_close(struct rdt_src *s)
{
	struct file_buf *p = s->priv;

	if (!p)
		return;
	if (p->f)
		fclose(p->f);
	free(p->buf);
	free(p);
	s->priv = NULL;
}

static const struct rdt_src_ops file_ops = {
	.fill = file_fill,
	.rescan = file_rescan,
	.close = file_close,
};

int rdt_src_read_file_hdr(struct rdt_src *s, FILE *f, const char *path)
{
	struct rdt_file_hdr *fh = &s->fh;
	size_t n, text;

	n = fread(fh, 1, sizeof(*fh), f);
	if (n < sizeof(fh->magic) ||
	    memcmp(fh->magic, RDT_FILE_MAGIC, sizeof(fh->magic))) {
		rdt_src_set_error(s, "%s: not an rdmatrace trace file (bad magic)",
				  path);
		return -EINVAL;
	}
	if (n < sizeof(*fh)) {
		rdt_src_set_error(s, "%s: truncated file header (%zu of %zu bytes)",
				  path, n, sizeof(*fh));
		return -EBADMSG;
	}
	if (fh->abi_major > RDT_ABI_MAJOR) {
		rdt_src_set_error(s, "%s: trace ABI %u.%u is newer than this "
				  "reader's %u.%u: upgrade rdmatrace", path,
				  fh->abi_major, fh->abi_minor, RDT_ABI_MAJOR,
				  RDT_ABI_MINOR);
		return -EPROTO;
	}
	if (fh->hdr_size < sizeof(*fh) || fh->hdr_size > (1u << 20)) {
		rdt_src_set_error(s, "%s: corrupt file header (hdr_size %u)",
				  path, fh->hdr_size);
		return -EBADMSG;
	}
	text = fh->hdr_size - sizeof(*fh);
	s->meta = calloc(1, text + 1);
	if (!s->meta)
		return -ENOMEM;
	if (fread(s->meta, 1, text, f) != text) {
		rdt_src_set_error(s, "%s: truncated file header (metadata)", path);
		return -EBADMSG;
	}
	/* The writer pads metadata with NULs to keep records aligned. */
	s->meta[strnlen(s->meta, text)] = 0;
	/* Fixed-size strings from a foreign writer may lack their NUL. */
	fh->host[sizeof(fh->host) - 1] = 0;
	fh->kernel[sizeof(fh->kernel) - 1] = 0;
	fh->module_version[sizeof(fh->module_version) - 1] = 0;
	fh->boot_id[sizeof(fh->boot_id) - 1] = 0;
	return 0;
}

static int src_file_open(struct rdt_src *s, const char *path)
{
	struct file_buf *p = calloc(1, sizeof(*p));
	struct stat st;
	int ret;

	if (!p)
		return -ENOMEM;
	s->priv = p;
	s->ops = &file_ops;
	p->fd = -1;
	p->f = strcmp(path, "-") ? fopen(path, "rb") : fdopen(dup(0), "rb");
	if (!p->f) {
		int e = errno;

		rdt_src_set_error(s, "%s: cannot open trace file: %s", path,
				  strerror(e));
		return -e;
	}
	/* Unbuffered: refill() asks for a whole buffer, which stdio's 4 KiB
	 * buffer split into two reads and a copy (a file merge's system time
	 * was 1.15x cat's with it); the header's few small reads are the
	 * price. */
	setvbuf(p->f, NULL, _IONBF, 0);
	p->cap = BUF_SZ;
	if (!fstat(fileno(p->f), &st) && S_ISREG(st.st_mode) &&
	    st.st_size < BUF_SZ)
		p->cap = st.st_size < BUF_MIN ? BUF_MIN : (size_t)st.st_size;
	p->buf = malloc(p->cap);
	if (!p->buf)
		return -ENOMEM;
	ret = rdt_src_read_file_hdr(s, p->f, path);
	if (ret < 0)
		return ret;
	p->off = s->fh.hdr_size;
	return 0;
}

RDT_EXPORT int rdt_reader_add_file(struct rdt_reader *r, const char *path)
{
	struct rdt_src *s = rdt_reader_new_src(r, RDT_SOURCE_FILE, path);

	if (!s)
		return -ENOMEM;
	return rdt_reader_finish_add(r, s, src_file_open(s, path));
}
