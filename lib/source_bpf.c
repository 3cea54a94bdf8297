// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * BPF source: producers/bpf/'s librdtbpf behind struct rdt_source_ops.  Built only
 * when build/bpf/librdtbpf.a and bpf/rdt_bpf.h exist (RDT_HAVE_BPF), so the
 * library builds on machines without the BPF toolchain.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#ifdef RDT_HAVE_BPF
#include "rdt_bpf.h"

static int bpf_fd(void *ctx)
{
	return rdt_bpf_fd(ctx);
}

static int bpf_consume(void *ctx, int (*cb)(void *, const void *, size_t),
		       void *cbctx)
{
	return rdt_bpf_consume(ctx, cb, cbctx);
}

static uint64_t bpf_dropped(void *ctx)
{
	return rdt_bpf_dropped(ctx);
}

static uint64_t bpf_inflight(void *ctx)
{
	return rdt_bpf_inflight_min(ctx);
}

static void bpf_close(void *ctx)
{
	rdt_bpf_close(ctx);
}

static const struct rdt_source_ops bpf_ops = {
	.fd = bpf_fd,
	.consume = bpf_consume,
	.dropped = bpf_dropped,
	.close = bpf_close,
};

RDT_EXPORT bool rdt_have_bpf(void)
{
	return true;
}

/*
 * --nccl=PID: keep that process's NCCL_* settings with the trace (the
 * file header's metadata), or say in the source's status why not.
 */
static void nccl_pid_meta(struct rdt_src *s, const struct rdt_bpf_opts *o)
{
	const char *t = o->nccl ? o->nccl_target : NULL;
	char *st;
	int err;

	if (!t || !*t || t[strspn(t, "0123456789")])
		return;
	err = rdt_meta_add_pid(&s->meta, atoi(t));
	if (!err)
		return;
	if (asprintf(&st, "%snccl: pid %s: NCCL_* settings not recorded: %s\n",
		     s->status ? s->status : "", t, strerror(-err)) < 0)
		return;
	free(s->status);
	s->status = st;
}

RDT_EXPORT int rdt_reader_add_bpf(struct rdt_reader *r, const void *opts)
{
	char err[RDT_ERRLEN] = "";
	struct rdt_bpf *b = rdt_bpf_open(opts, err, sizeof(err));
	int ret;

	if (!b) {
		rdt_reader_set_error(r, "bpf: %s", err[0] ? err : "cannot open");
		return -EINVAL;
	}
	ret = rdt_reader_add_source(r, "bpf", &bpf_ops, b);
	if (ret >= 0) {
		struct rdt_src *s = rdt_reader_src(r, (unsigned int)ret);
		const char *st = rdt_bpf_status(b);

		s->kind = RDT_SOURCE_BPF;
		s->st.kind = RDT_SOURCE_BPF;
		rdt_src_custom_inflight(s, bpf_inflight);
		s->status = st ? strdup(st) : NULL;
		nccl_pid_meta(s, opts);
	}
	return ret;
}
#else
RDT_EXPORT bool rdt_have_bpf(void)
{
	return false;
}

RDT_EXPORT int rdt_reader_add_bpf(struct rdt_reader *r, const void *opts)
{
	(void)opts;
	rdt_reader_set_error(r, "bpf: librdmatrace was built without BPF "
			     "support (build/bpf/librdtbpf.a was absent)");
	return -ENOTSUP;
}
#endif
