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

struct file_priv {
	FILE *f;
	unsigned char *buf;
	size_t cap;		/* size of buf */
	size_t len, pos;	/* valid bytes in buf, next record in buf */
	uint64_t off;		/* file offset of buf[pos] */
	bool at_eof;
};

static int refill(struct file_priv *p)
{
	size_t n;

	memmove(p->buf, p->buf + p->pos, p->len - p->pos);
	p->len -= p->pos;
	p->pos = 0;
	n = fread(p->buf + p->len, 1, p->cap - p->len, p->f);
	p->len += n;
	if (n == 0) {
		if (ferror(p->f))
			return -EIO;
		p->at_eof = true;
	}
	return 0;
}

static int file_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct file_priv *p = s->priv;
	struct rdt_hdr h;
	int ret;

	(void)pass;	/* a file is in order: it reads on, whatever the pass */
	for (;;) {
		size_t avail = p->len - p->pos;

		if (avail >= sizeof(h)) {
			memcpy(&h, p->buf + p->pos, sizeof(h));
			/* Sizes above the buffer are impossible for this ABI;
			 * reject here rather than wait for bytes forever. */
			if (h.magic == RDT_REC_MAGIC && h.size <= avail)
				break;
			if (h.magic != RDT_REC_MAGIC || h.size < sizeof(h))
				break;	/* rdt_src_push names the corruption */
		}
		if (p->at_eof) {
			if (!avail) {
				s->eof = true;
				return 0;
			}
			rdt_src_set_error(s, "%s: truncated record at offset %llu "
					  "(%zu bytes left, file ends)", s->name,
					  (unsigned long long)p->off, avail);
			return -EBADMSG;
		}
		if ((ret = refill(p)) < 0) {
			rdt_src_set_error(s, "%s: read error: %s", s->name,
					  strerror(-ret));
			return ret;
		}
	}
	/* The record stays in buf as the stream's head: the next refill()
	 * (which moves buf) comes only with the next fill, after its emit. */
	ret = rdt_src_push_head(s, p->buf + p->pos, p->len - p->pos, p->off);
	if (ret < 0)
		return ret;
	p->pos += h.size;
	p->off += h.size;
	return 0;
}

static void file_close(struct rdt_src *s)
{
	struct file_priv *p = s->priv;

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
	struct file_priv *p = calloc(1, sizeof(*p));
	struct stat st;
	int ret;

	if (!p)
		return -ENOMEM;
	s->priv = p;
	s->ops = &file_ops;
	p->f = strcmp(path, "-") ? fopen(path, "rb") : fdopen(dup(0), "rb");
	if (!p->f) {
		int e = errno;

		rdt_src_set_error(s, "%s: cannot open trace file: %s", path,
				  strerror(e));
		return -e;
	}
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
