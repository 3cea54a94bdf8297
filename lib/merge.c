// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader: owns the sources and merges their records into one timeline
 * with a binary heap, as blkparse does over per-CPU files.  Every stream
 * keeps its head in the heap, so ordered streams (files, relay CPUs) merge
 * exactly; live mode additionally holds events for a reorder window because
 * a CPU or ring buffer read later may still carry older events.
 *
 * Speed (decode + merge of files is the bulk path): a file's head is not
 * copied into the heap but validated in place in the file's read buffer
 * (rdt_src_push_head) and copied once, into the caller's event; the heap
 * holds only sort keys; and the emitted head's slot stays at the top until
 * its stream's next record replaces it with one sift-down, so a stream that
 * stays the earliest is drained without heap pops or pushes.
 */
#define _GNU_SOURCE	/* asprintf */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

struct lq;

struct node {
	struct rdt_event ev;
	struct node *next_free;
	struct node *next;	/* in its run */
	struct lq *q;		/* the run it heads or is in, or NULL */
};

/*
 * A run: the queued events of one (source, CPU) in merge order.  Only its
 * head is in the heap; an event that sorts after the run's tail joins the
 * run, any other goes into the heap on its own.  The heap then holds the
 * runs' heads and the few events that came out of order, not every event
 * of the reorder window (37 k at 375 k events/s, sixteen levels deep),
 * and hands out the same order.
 */
struct lq {
	struct node *head, *tail;
	uint32_t src, cpu;
};

#define MAX_RUNS 1024
#define RUN_SLOTS 2048		/* open addressing, at most half full */

/* One heap entry: the merge order's key, and a queued copy (live sources,
 * bookkeeping), NULL for an ordered stream's in-place head, or a live
 * stream read in place (rdt_stream, tagged: stream_tag()) for its first
 * record. */
struct hent {
	uint64_t ts;
	uint64_t seq;
	uint32_t src;
	uint32_t cpu;
	struct node *n;
};

struct rdt_reader {
	struct rdt_reader_opts opts;
	struct rdt_src **srcs;
	unsigned int nsrc;
	struct hent *heap;
	size_t nheap, capheap;
	/* heap[0] was emitted but is kept until the next push replaces it */
	bool stale;
	/* no live source: only the stream emitted last can need a refill */
	bool ordered_only, primed;
	struct rdt_src *refill;
	struct node *free_nodes;
	struct lq **runs;	/* RUN_SLOTS slots by (source, CPU) */
	unsigned int nruns;
	size_t nqueued;		/* events in runs behind their heads */
	struct rdt_names names;	/* names.c */
	char (*boot_ids)[40];
	unsigned int nboot;
	char **host_names;	/* per boot: for reports and sinks */
	struct rdt_clock *clock;	/* several hosts aligned from messages */
	int clock_ret;
	bool started, live;
	/* Live: what every fill is told (its clock, read once a pass, and
	 * whether poll() ran since the pass before: a wakeup says which
	 * stream has news) */
	struct rdt_pass pass;
	unsigned int pass_reuse;	/* passes that reused pass.now */
	uint64_t horizon;	/* the least of the live sources' at the last pass */
	/* every live source's horizon was exact (rdt_src.exact), on one
	 * boot's clock: what is earlier than @horizon may go before it is
	 * due by the reorder window */
	bool exact;
	/* the least horizon of the live sources that hold (rdt_src.holds):
	 * nothing at or after it goes out but at the end or when full */
	uint64_t hold;
	enum rdt_time_base tb;
	uint64_t last_ts;
	bool have_last;
	struct rdt_idle *idle;	/* live: called before each wait */
	unsigned int nidle;
	char error[RDT_ERRLEN];
};

static void pass_init(struct rdt_reader *r);

/* Heap entries of in-place live streams: the pointer with its low bit set
 * (nodes and streams are malloc'd, so it is free). */
static inline struct node *stream_tag(struct rdt_stream *st)
{
	return (struct node *)((uintptr_t)st | 1);
}

static inline struct rdt_stream *tagged_stream(const struct node *n)
{
	return (uintptr_t)n & 1 ?
	       (struct rdt_stream *)((uintptr_t)n & ~(uintptr_t)1) : NULL;
}

RDT_EXPORT struct rdt_reader *rdt_reader_new(const struct rdt_reader_opts *o)
{
	struct rdt_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	if (o)
		memcpy(&r->opts, o, o->sz && o->sz < sizeof(*o) ? o->sz : sizeof(*o));
	r->opts.sz = sizeof(r->opts);
	if (!r->opts.reorder_window_ns)
		r->opts.reorder_window_ns = 100 * 1000000ull;
	if (!r->opts.max_buffered)
		r->opts.max_buffered = 1u << 20;
	r->hold = UINT64_MAX;
	r->live = r->opts.follow;
	pass_init(r);
	rdt_names_init(&r->names);
	return r;
}

void rdt_reader_drop_src(struct rdt_reader *r, struct rdt_src *s)
{
	if (s->ops && s->ops->close)
		s->ops->close(s);
	free(s->name);
	free(s->meta);
	free(s->status);
	free(s->subbuf_lost);
	free(s->subbuf_next);
	free(s->lost_cpu);
	if (r->nsrc && r->srcs[r->nsrc - 1] == s)
		r->nsrc--;
	free(s);
}

RDT_EXPORT void rdt_reader_free(struct rdt_reader *r)
{
	if (!r)
		return;
	while (r->nsrc)
		rdt_reader_drop_src(r, r->srcs[r->nsrc - 1]);
	free(r->srcs);
	for (size_t i = 0; i < r->nheap; i++) {
		struct node *n = r->heap[i].n;

		while (n && !tagged_stream(n)) {
			struct node *x = n->next;

			free(n);
			n = x;
		}
	}
	for (unsigned int i = 0; r->runs && i < RUN_SLOTS; i++)
		free(r->runs[i]);
	free(r->runs);
	free(r->heap);
	while (r->free_nodes) {
		struct node *n = r->free_nodes->next_free;

		free(r->free_nodes);
		r->free_nodes = n;
	}
	rdt_names_free(&r->names);
	free(r->boot_ids);
	for (unsigned int i = 0; r->host_names && i < r->nboot; i++)
		free(r->host_names[i]);
	free(r->host_names);
	rdt_clock_free(r->clock);
	free(r->idle);
	free(r);
}

void rdt_reader_set_error(struct rdt_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->error, sizeof(r->error), fmt, ap);
	va_end(ap);
}

void rdt_src_set_error(struct rdt_src *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->error, sizeof(s->error), fmt, ap);
	va_end(ap);
	s->failed = true;
	s->st.failed = true;
}

void rdt_src_add_status(struct rdt_src *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rdt_str_vappend(&s->status, "", fmt, ap);
	va_end(ap);
}

RDT_EXPORT const char *rdt_reader_error(const struct rdt_reader *r)
{
	return r->error;
}

struct rdt_src *rdt_reader_new_src(struct rdt_reader *r,
				   enum rdt_source_kind kind, const char *name)
{
	struct rdt_src **v, *s;

	if (r->started) {
		rdt_reader_set_error(r, "sources must be added before reading");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	v = realloc(r->srcs, (r->nsrc + 1) * sizeof(*v));
	if (!s || !v) {
		free(s);
		if (v)
			r->srcs = v;
		rdt_reader_set_error(r, "out of memory");
		return NULL;
	}
	r->srcs = v;
	s->r = r;
	s->idx = r->nsrc;
	s->kind = kind;
	s->name = strdup(name ? name : "?");
	s->live = r->live && kind != RDT_SOURCE_FILE;
	s->st.kind = kind;
	r->srcs[r->nsrc++] = s;
	return s;
}

struct rdt_src *rdt_reader_src(const struct rdt_reader *r, unsigned int i)
{
	return i < r->nsrc ? r->srcs[i] : NULL;
}

bool rdt_reader_live(const struct rdt_reader *r)
{
	return r->live;
}

/* Events a live reader holds before pass_ahead() lets a stream that is
 * behind wait: up to this many it still drains the relay buffers (7 x
 * 256 KiB a CPU by default, ~22 k events) ahead of its output, so that a
 * burst the sink cannot take at once waits in the reader, not in relay
 * buffers that would drop it.  More costs per event: draining a backlog
 * on the host took ~150 ns an event at 16 k, ~250 at 64 k (the nodes'
 * cache footprint), ~400 before runs with no limit but max_buffered. */
#define RDT_READ_AHEAD 16384

/*
 * rdt_pass.ahead: a live stream none of whose unread records is earlier
 * than @ts may stay unread in this pass when the heap's top is due and
 * earlier by more than RDT_STREAM_MARGIN_NS: the top goes out first
 * whatever the stream holds.  A reader that fell behind then reads as it
 * emits, about one read per CPU ahead, instead of reading every CPU for
 * each event it emits until max_buffered events sat in a heap twenty
 * levels deep (665 ns an event to drain a backlog on the host, 200 ns with
 * this; a file merge is ~60).  It reads the heap as it is while the
 * source pushes, not a snapshot taken at the pass's start.
 */
static bool pass_ahead(const struct rdt_pass *p, uint64_t ts)
{
	const struct rdt_reader *r = (const struct rdt_reader *)
		((const char *)p - offsetof(struct rdt_reader, pass));

	return !p->stopping && !r->stale &&
	       r->nheap + r->nqueued >= RDT_READ_AHEAD &&
	       r->heap[0].ts + p->window_ns <= p->now &&
	       r->heap[0].ts + RDT_STREAM_MARGIN_NS < ts;
}

/* A writer preempted between its stamp and its publish is waited for up
 * to this long: ten windows, at least a second.  Long enough for a thread
 * descheduled on a loaded host; bounded so that a stopped or dead writer
 * (SIGSTOP, a debugger, a thread killed mid-record) delays the stream by
 * that much, not for ever: its record then comes out late, flagged. */
#define RDT_STALL_MIN_NS (1000 * 1000000ull)

/* The merge's side of every fill: set once, as the options are fixed;
 * now, polled and stopping change as the reader runs.  The merge reads
 * the reorder window from here too, never from r->opts again: one copy,
 * the one the sources see. */
static void pass_init(struct rdt_reader *r)
{
	uint64_t w = r->opts.reorder_window_ns;

	r->pass.window_ns = w;
	r->pass.skip_ns = w / 16 < 1000000 ? w / 16 : 1000000;
	r->pass.stall_ns = 10 * w > RDT_STALL_MIN_NS ? 10 * w : RDT_STALL_MIN_NS;
	r->pass.ahead = pass_ahead;
}

/* Sources that failed to open leave only their message behind; one that
 * opened is the reader's source @s->idx.  Each source's own file adds it
 * (rdt_reader_add_file() in source_file.c, ...): the merge knows sources
 * by their ops alone. */
int rdt_reader_finish_add(struct rdt_reader *r, struct rdt_src *s, int ret)
{
	if (ret < 0) {
		rdt_reader_set_error(r, "%s", s->error);
		rdt_reader_drop_src(r, s);
		return ret;
	}
	return (int)s->idx;
}

/* ---- heap --------------------------------------------------------------- */

static inline bool before(const struct hent *a, const struct hent *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->src != b->src)
		return a->src < b->src;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu;
	return a->seq < b->seq;
}

/* Put @e at @i (a hole) and move it down to its place. */
static void sift_down(struct rdt_reader *r, size_t i, const struct hent *e)
{
	struct hent *h = r->heap;
	size_t n = r->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(&h[c + 1], &h[c]))
			c++;
		if (!before(&h[c], e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = *e;
}

/* *@e into @d field by field: @e was just built in pieces on the stack,
 * and a 16-byte load of two 8-byte stores waits for them to retire (a
 * store-forwarding stall: a fifth of a file merge's time in the push,
 * perf). */
static inline __attribute__((always_inline)) void
hent_put(struct hent *d, const struct hent *e)
{
	d->ts = e->ts;
	d->seq = e->seq;
	__asm__("" ::: "memory");	/* not one vector copy */
	d->src = e->src;
	d->cpu = e->cpu;
	d->n = e->n;
}

/* @e in place of the top: inline where it stays there (a stream that
 * stays the earliest, as one busy CPU's does) or where a child that is a
 * leaf comes up, else a sift-down. */
static inline __attribute__((always_inline)) void
replace_top(struct rdt_reader *r, const struct hent *e)
{
	struct hent *h = r->heap;
	size_t n = r->nheap;
	size_t c;

	if ((n < 2 || !before(&h[1], e)) && (n < 3 || !before(&h[2], e))) {
		hent_put(h, e);
		return;
	}
	/* A child comes up.  Where it is a leaf (a heap of two or three:
	 * two files, two CPUs), e takes its place with no call. */
	c = n < 3 || before(&h[1], &h[2]) ? 1 : 2;
	if (2 * c + 1 < n) {
		sift_down(r, 0, e);
		return;
	}
	h[0] = h[c];
	hent_put(&h[c], e);
}

/* Inline: it runs once per record, and for ordered streams it is mostly
 * the stale case, one sift-down. */
static inline __attribute__((always_inline)) int heap_push(struct rdt_reader *r,
							   const struct hent *e)
{
	size_t i;

	if (r->stale) {
		/* Replace the emitted top: one sift-down, and none at all
		 * while the same stream stays the earliest. */
		r->stale = false;
		replace_top(r, e);
		return 0;
	}
	if (r->nheap == r->capheap) {
		size_t cap = r->capheap ? r->capheap * 2 : 256;
		struct hent *h = realloc(r->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		r->heap = h;
		r->capheap = cap;
	}
	i = r->nheap++;
	while (i && before(e, &r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = *e;
	return 0;
}

static void heap_pop(struct rdt_reader *r)
{
	struct hent last = r->heap[--r->nheap];

	if (r->nheap)
		sift_down(r, 0, &last);
}

/* Drop an emitted top that no push has replaced. */
static void heap_settle(struct rdt_reader *r)
{
	if (r->stale) {
		r->stale = false;
		heap_pop(r);
	}
}

static struct node *node_get(struct rdt_reader *r)
{
	struct node *n = r->free_nodes;

	if (n) {
		r->free_nodes = n->next_free;
		return n;
	}
	return malloc(sizeof(*n));
}

/* The run of (@src, @cpu), made on first use; NULL past MAX_RUNS. */
static struct lq *find_run(struct rdt_reader *r, uint32_t src, uint32_t cpu)
{
	uint64_t k = ((uint64_t)src << 32 | cpu) * 0x9e3779b97f4a7c15ull;
	unsigned int i = (unsigned int)(k >> 53) % RUN_SLOTS;
	struct lq *q;

	if (!r->runs && !(r->runs = calloc(RUN_SLOTS, sizeof(*r->runs))))
		return NULL;
	for (; (q = r->runs[i]); i = (i + 1) % RUN_SLOTS)
		if (q->src == src && q->cpu == cpu)
			return q;
	if (r->nruns >= MAX_RUNS || !(q = calloc(1, sizeof(*q))))
		return NULL;
	q->src = src;
	q->cpu = cpu;
	r->runs[i] = q;
	r->nruns++;
	return q;
}

/* Into its run, or into the heap as a run's head or on its own. */
static int enqueue(struct rdt_reader *r, struct node *n)
{
	struct lq *q = find_run(r, n->ev.src, n->ev.rec.hdr.cpu);
	struct hent e;

	n->next = NULL;
	if (q && q->head) {
		/* same source and CPU, a later seq: a later key */
		if (n->ev.ts >= q->tail->ev.ts) {
			n->q = q;
			q->tail->next = n;
			q->tail = n;
			r->nqueued++;
			return 0;
		}
		q = NULL;
	}
	n->q = q;
	e = (struct hent){ n->ev.ts, n->ev.seq, n->ev.src, n->ev.rec.hdr.cpu, n };
	if (heap_push(r, &e) < 0)
		return -ENOMEM;
	if (q)
		q->head = q->tail = n;
	return 0;
}

static int queue(struct rdt_src *s, const union rdt_record *rec, bool derived)
{
	struct rdt_reader *r = s->r;
	struct node *n = node_get(r);

	if (!n)
		return -ENOMEM;
	memset(&n->ev, 0, sizeof(n->ev));
	n->ev.rec = *rec;
	n->ev.ts = rdt_src_ts(s, rec->hdr.ts_ns);
	n->ev.src = s->idx;
	n->ev.seq = s->seq++;
	n->ev.flags = derived ? RDT_EVF_DERIVED : 0;
	if (enqueue(r, n) < 0) {
		free(n);
		return -ENOMEM;
	}
	s->inheap++;
	return 0;
}

/* queue() of a validated record of @want bytes (its type's) at @buf. */
static int queue_raw(struct rdt_src *s, const void *buf, size_t want)
{
	struct rdt_reader *r = s->r;
	struct node *n = node_get(r);

	if (!n)
		return -ENOMEM;
	/* as rdt_decode leaves it: the union beyond the type zeroed (a
	 * fixed-size clear is a few vector stores, a variable one was a
	 * "rep stos") */
	memset(&n->ev.rec, 0, sizeof(n->ev.rec));
	memcpy(&n->ev.rec, buf, want);
	n->ev.ts = rdt_src_ts(s, n->ev.rec.hdr.ts_ns);
	n->ev.src = s->idx;
	n->ev.seq = s->seq++;
	n->ev.flags = 0;
	n->ev.host = 0;
	n->ev.comm = n->ev.devname = NULL;
	if (enqueue(r, n) < 0) {
		free(n);
		return -ENOMEM;
	}
	s->inheap++;
	return 0;
}

static int queue_poll_summary(struct rdt_src *s, const void *buf)
{
	union rdt_record rec;

	rdt_ingest_poll_summary(buf, &rec);
	return queue(s, &rec, true);
}

void rdt_src_push_lost(struct rdt_src *s, unsigned int producer,
		       unsigned int cpu, uint64_t count, uint64_t ts,
		       bool derived)
{
	union rdt_record rec;

	rdt_ingest_lost(s, producer, cpu, count, ts, &rec);
	queue(s, &rec, derived);
}

/* "cpu 3 offset 4096", "offset 4096" or "ring buffer" (RDT_NO_OFF). */
static const char *where_str(char *b, size_t n, const char *where, uint64_t off)
{
	if (off == RDT_NO_OFF)
		return where;
	snprintf(b, n, "%s%soffset %llu", where, *where ? " " : "",
		 (unsigned long long)off);
	return b;
}

int rdt_src_push(struct rdt_src *s, const void *buf, size_t len,
		 const char *wh, uint64_t off)
{
	union rdt_record rec, more;
	bool derived;
	size_t used = 0, want = 0;
	const char *why;
	struct rdt_hdr h;
	char wb[96];
	const char *where = "";

	switch (rdt_decode_check(buf, len, &h, &want, &why)) {
	case RDT_DEC_OK:
		used = h.size;
		break;
	case RDT_DEC_UNKNOWN:
		s->st.unknown++;
		s->st.bytes += h.size;
		return 0;
	case RDT_DEC_NEED_MORE:
		where = where_str(wb, sizeof(wb), wh, off);
		rdt_src_set_error(s, "%s: truncated record at %s", s->name, where);
		return -EBADMSG;
	case RDT_DEC_CORRUPT:
		where = where_str(wb, sizeof(wb), wh, off);
		rdt_src_set_error(s, "%s: corrupt record at %s: %s", s->name,
				  where, why);
		return -EBADMSG;
	case RDT_DEC_NEWER_ABI:
		memcpy(&h, buf, sizeof(h));
		where = where_str(wb, sizeof(wb), wh, off);
		rdt_src_set_error(s, "%s: record ABI major %u at %s is newer than "
				  "this reader's %u: upgrade rdmatrace", s->name,
				  h.version, where, RDT_ABI_MAJOR);
		return -EPROTO;
	}
	s->st.records++;
	s->st.bytes += used;
	/* A plain event goes straight into its node: one copy (the live
	 * sources' path; the copy to a record here and again into the node
	 * was ~10 % of following a backlog). */
	if (!rdt_is_bookkeeping(h.type)) {
		if (queue_raw(s, buf, want) < 0 ||
		    (rdt_wc_ends_poll(&h, buf) && queue_poll_summary(s, buf) < 0)) {
			rdt_src_set_error(s, "%s: out of memory", s->name);
			return -ENOMEM;
		}
		return 0;
	}
	memset(&rec, 0, sizeof(rec));
	memcpy(&rec, buf, want);
	derived = rdt_ingest_bookkeeping(&s->r->names, s, &rec, &more);
	if (queue(s, &rec, false) < 0) {
		rdt_src_set_error(s, "%s: out of memory", s->name);
		return -ENOMEM;
	}
	if (derived)
		queue(s, &more, true);
	return 0;
}

int rdt_src_push_head(struct rdt_src *s, const void *buf, size_t len,
		      uint64_t off)
{
	struct rdt_hdr h;
	size_t want;
	const char *why;
	struct hent e;

	/* Errors, skipped types, bookkeeping (names, loss, derived LOST
	 * events) and a poll's last completion (its derived summary follows)
	 * take the copying path; only plain events stay in place.  The usual
	 * record passes the one test of rdt_rec_plain(). */
	if (__builtin_expect(rdt_rec_plain(buf, len, &h), 1)) {
		want = h.size;
		if (__builtin_expect(rdt_wc_ends_poll(&h, buf), 0))
			return rdt_src_push(s, buf, len, "", off);
	} else if (rdt_decode_check(buf, len, &h, &want, &why) != RDT_DEC_OK ||
		   rdt_is_bookkeeping(h.type) || rdt_wc_ends_poll(&h, buf)) {
		return rdt_src_push(s, buf, len, "", off);
	}
	s->st.records++;
	s->st.bytes += h.size;
	s->head = buf;
	s->head_len = want;
	e = (struct hent){ rdt_src_ts(s, h.ts_ns), s->seq++, s->idx, h.cpu, NULL };
	if (heap_push(s->r, &e) < 0) {
		rdt_src_set_error(s, "%s: out of memory", s->name);
		return -ENOMEM;
	}
	s->inheap++;
	return 0;
}

/* ---- live streams read in place ----------------------------------------- */

/* Room for one more index entry: the handed-out ones dropped, or more. */
static int stream_ent_room(struct rdt_stream *st)
{
	struct rdt_stream_ent *e;
	size_t cap;

	if (st->n < st->ncap)
		return 0;
	if (st->head && st->head >= st->ncap / 2) {
		memmove(st->ent, st->ent + st->head,
			(st->n - st->head) * sizeof(*st->ent));
		st->n -= st->head;
		st->head = 0;
		return 0;
	}
	cap = st->ncap ? st->ncap * 2 : 4096;
	e = realloc(st->ent, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	st->ent = e;
	st->ncap = cap;
	return 0;
}

int rdt_src_push_stream_slow(struct rdt_src *s, struct rdt_stream *st,
			     size_t off, const struct rdt_hdr *h, size_t want,
			     const char *where, uint64_t where_off)
{
	uint64_t ts = rdt_src_ts(s, h->ts_ns);
	struct rdt_reader *r = s->r;
	bool queued = st->head < st->n;
	struct hent e;

	/* Names, loss, a poll's last completion and an event out of order
	 * take the copying path. */
	if (!rdt_stream_keeps(st, off, h, ts))
		return rdt_src_push(s, st->buf + off, st->len - off, where,
				    where_off);
	if (stream_ent_room(st) < 0) {
		rdt_src_set_error(s, "%s: out of memory", s->name);
		return -ENOMEM;
	}
	st->nqueued = &r->nqueued;
	e = (struct hent){ ts, s->seq, s->idx, h->cpu, stream_tag(st) };
	if (!queued && heap_push(r, &e) < 0) {
		rdt_src_set_error(s, "%s: out of memory", s->name);
		return -ENOMEM;
	}
	rdt_stream_index(s, st, off, h, want, ts);
	if (queued)
		r->nqueued++;
	return 0;
}

/* ---- time base ------------------------------------------------------------ */

/* The file header's host name, with the file's when two hosts share it. */
static void name_hosts(struct rdt_reader *r)
{
	r->host_names = calloc(r->nboot, sizeof(*r->host_names));
	if (!r->host_names)
		return;
	for (unsigned int h = 0; h < r->nboot; h++) {
		const struct rdt_src *s = NULL;
		bool dup = false;

		for (unsigned int i = 0; i < r->nsrc && !s; i++)
			if (r->srcs[i]->host == h)
				s = r->srcs[i];
		if (!s)
			continue;
		for (unsigned int i = 0; i < r->nsrc; i++)
			if (r->srcs[i]->host != h &&
			    !strncmp(r->srcs[i]->fh.host, s->fh.host,
				     sizeof(s->fh.host)))
				dup = true;
		if (asprintf(&r->host_names[h], dup ? "%.64s (%s)" : "%.64s",
			     *s->fh.host ? s->fh.host : "?", s->name) < 0)
			r->host_names[h] = NULL;
	}
}

unsigned int rdt_reader_nhosts(const struct rdt_reader *r)
{
	return r->nboot;
}

const char *rdt_reader_host_name(const struct rdt_reader *r, unsigned int host)
{
	return r->host_names && host < r->nboot && r->host_names[host] ?
	       r->host_names[host] : "";
}

/* The host's name even for a one-host run (no host_names): its first
 * source's header host, "-" where none says one.  The header's field is
 * 64 bytes, not always terminated: copied into @buf. */
const char *rdt_reader_host_label(const struct rdt_reader *r, unsigned int host,
				  char *buf, size_t len)
{
	const char *n = rdt_reader_host_name(r, host);

	snprintf(buf, len, "%s", *n ? n : "-");
	for (unsigned int i = 0; !*n && i < r->nsrc; i++)
		if (r->srcs[i]->host == host && *r->srcs[i]->fh.host) {
			snprintf(buf, len, "%.*s",
				 (int)sizeof(r->srcs[i]->fh.host),
				 r->srcs[i]->fh.host);
			break;
		}
	return buf;
}

const struct rdt_clock *rdt_reader_clock(const struct rdt_reader *r)
{
	return r->clock;
}

/*
 * The first pass of a merge of several hosts' files: each file's rxe
 * packets, as its source hands its records over again (ops->rescan(),
 * rdt_xpairs_add_raw()) in the order written, on
 * its header's realtime clock into one collector; then the estimate,
 * whose per-host correction rdt_src_ts() applies.  Live sources are one host.
 */
struct xpairs_ctx {
	struct rdt_xpairs *x;
	uint32_t host;
	int64_t realtime_offset;
};

static int xpairs_add(void *ctx, const void *rec, size_t len)
{
	struct xpairs_ctx *c = ctx;

	return rdt_xpairs_add_raw(c->x, c->host, c->realtime_offset, rec, len);
}

static void align_clocks(struct rdt_reader *r)
{
	struct rdt_xpairs *x;
	int ret = 0;

	for (unsigned int i = 0; i < r->nsrc; i++)
		if (r->srcs[i]->kind != RDT_SOURCE_FILE)
			return;
	if (!r->host_names || !(x = rdt_xpairs_new(rdt_xpairs_cap()))) {
		r->clock_ret = -ENOMEM;
		return;
	}
	for (unsigned int i = 0; i < r->nsrc && !ret; i++) {
		struct rdt_src *s = r->srcs[i];
		struct xpairs_ctx c = { x, s->host, s->fh.realtime_offset_ns };

		if (!s->ops->rescan || s->ops->rescan(s, xpairs_add, &c) < 0)
			ret = -EIO;
	}
	if (!ret) {
		r->clock = rdt_clock_estimate(x, r->nboot,
					      (const char *const *)r->host_names);
		if (!r->clock)
			ret = -ENOMEM;
		for (unsigned int i = 0; r->clock && i < r->nsrc; i++)
			r->srcs[i]->clk = rdt_clock_host(r->clock, r->srcs[i]->host);
	}
	rdt_xpairs_free(x);
	r->clock_ret = ret;
}

static void start(struct rdt_reader *r);

RDT_EXPORT int rdt_reader_align_clocks(struct rdt_reader *r)
{
	if (!r->started)
		start(r);
	return r->clock_ret;
}

RDT_EXPORT const char *rdt_reader_clock_report(const struct rdt_reader *r)
{
	return rdt_clock_report(r->clock);
}

static void start(struct rdt_reader *r)
{
	r->started = true;
	r->tb = RDT_TIME_MONOTONIC;
	for (unsigned int i = 0; i < r->nsrc; i++) {
		struct rdt_src *s = r->srcs[i];
		unsigned int h;

		for (h = 0; h < r->nboot; h++)
			if (!strncmp(r->boot_ids[h], s->fh.boot_id, 40))
				break;
		if (h == r->nboot) {
			char (*b)[40] = realloc(r->boot_ids, (h + 1) * 40);

			if (!b)
				continue;
			r->boot_ids = b;
			memcpy(b[h], s->fh.boot_id, 40);
			r->nboot++;
		}
		s->host = h;
	}
	/* Monotonic clocks of different boots share no origin: only then
	 * pay for the realtime offset (and its NTP error), and correct it
	 * from the messages between the hosts where they were traced. */
	if (r->nboot > 1) {
		r->tb = RDT_TIME_REALTIME;
		for (unsigned int i = 0; i < r->nsrc; i++)
			r->srcs[i]->realtime = true;
		name_hosts(r);
		if (r->opts.clock_align == RDT_CLOCK_ALIGN_AUTO)
			align_clocks(r);
	}
	r->ordered_only = true;
	for (unsigned int i = 0; i < r->nsrc; i++)
		if (r->srcs[i]->live || r->srcs[i]->windowed)
			r->ordered_only = false;
}

RDT_EXPORT enum rdt_time_base rdt_reader_time_base(const struct rdt_reader *r)
{
	return r->tb;
}

/* ---- iteration ------------------------------------------------------------ */

static bool src_active(const struct rdt_src *s)
{
	return !s->eof && !s->failed;
}

static inline int fill_src(struct rdt_reader *r, struct rdt_src *s)
{
	int ret = s->ops->fill(s, &r->pass);

	if (ret < 0 && !s->failed)
		rdt_src_set_error(s, "%s: %s", s->name, strerror(-ret));
	return ret;
}

/*
 * Read windowed sources on until each has passed the heap's top by the
 * reorder window (or ended): memory then holds about the window, not the
 * whole capture.  Returns whether it read any.
 */
static bool fill_windowed(struct rdt_reader *r)
{
	bool filled = false;

	for (unsigned int i = 0; i < r->nsrc; i++) {
		struct rdt_src *s = r->srcs[i];

		if (!s->windowed || !src_active(s))
			continue;
		if (r->nheap && s->watermark != UINT64_MAX &&
		    rdt_src_ts(s, s->watermark) >=
		    r->heap[0].ts + r->pass.window_ns)
			continue;
		fill_src(r, s);
		filled = true;
	}
	return filled;
}

static void finish_live(struct rdt_reader *r)
{
	for (unsigned int i = 0; i < r->nsrc; i++) {
		struct rdt_src *s = r->srcs[i];

		if (!s->live || !src_active(s))
			continue;
		fill_src(r, s);
		if (s->ops->finish)
			s->ops->finish(s, &r->pass);
		s->eof = true;
	}
}

static int end_result(struct rdt_reader *r)
{
	for (unsigned int i = 0; i < r->nsrc; i++)
		if (r->srcs[i]->failed) {
			rdt_reader_set_error(r, "%s", r->srcs[i]->error);
			return -EIO;
		}
	return 0;
}

/* @len bytes of a record into @ev, the union beyond them zero as
 * rdt_decode leaves it: a clear of the whole union is a dozen vector
 * stores, a clear of the rest a "rep stos" (~25 instructions an event). */
static inline __attribute__((always_inline)) void
copy_rec(struct rdt_event *ev, const void *rec, size_t len)
{
	/* Twelve vector stores.  GCC turns a memset() of the union, or a
	 * loop that stores a zero it can see, into a "rep stos"; a zero it
	 * cannot see (the empty asm) it stores as written. */
	typedef char v16 __attribute__((vector_size(16), aligned(1)));
	char *p = (char *)&ev->rec;
	v16 z = { 0 };
	size_t i;

	__asm__("" : "+x"(z));
#pragma GCC unroll 16
	for (i = 0; i + 16 <= sizeof(ev->rec); i += 16)
		*(v16 *)(p + i) = z;
	if (i < sizeof(ev->rec))
		*(v16 *)(p + sizeof(ev->rec) - 16) = z;
	memcpy(&ev->rec, rec, len);
}

/* Hand out the heap's top.  Inline in rdt_reader_next's two paths: the
 * call and its register saves were ~15 instructions per event.  With
 * @ref (rdt_reader_next_ref()) the record is not copied into ev->rec nor
 * its names looked up (@by_ref, a constant in each caller): @ref points
 * at it where it is. */
static inline __attribute__((always_inline)) void
emit(struct rdt_reader *r, struct rdt_event *ev, struct rdt_rec_ref *ref,
     const bool by_ref)
{
	const struct hent *t = &r->heap[0];
	struct rdt_src *s = r->srcs[t->src];
	struct node *n = t->n;

	if (tagged_stream(n)) {
		/* A live stream's first record: copied once, from where it
		 * was read, and its next takes its place. */
		struct rdt_stream *st = tagged_stream(n);
		const struct rdt_stream_ent *x = &st->ent[st->head];

		/* The buffer stays as it is until the next fill, which is
		 * the next call's: what the reference's lifetime is. */
		if (by_ref) {
			ref->rec = st->buf + x->off;
			ref->len = x->want;
		} else {
			copy_rec(ev, st->buf + x->off, x->want);
		}
		ev->ts = t->ts;
		ev->seq = t->seq;
		ev->src = t->src;
		ev->flags = 0;
		if (++st->head < st->n) {
			struct rdt_hdr h;
			struct hent e;

			x++;
			memcpy(&h, st->buf + x->off, sizeof(h));
			e = (struct hent){ rdt_src_ts(s, h.ts_ns), x->seq,
					   ev->src, h.cpu, n };
			r->nqueued--;
			replace_top(r, &e);
		} else {
			st->head = st->n = 0;
			heap_pop(r);
		}
	} else if (n) {
		struct lq *q = n->q;

		*ev = n->ev;
		if (by_ref) {
			ref->rec = &ev->rec;
			ref->len = rdt_types[ev->rec.hdr.type].size;
		}
		if (q && n->next) {
			/* its run's next event takes its place: one
			 * sift-down, no pop and push */
			struct node *x = n->next;
			struct hent e = { x->ev.ts, x->ev.seq, x->ev.src,
					  x->ev.rec.hdr.cpu, x };

			q->head = x;
			r->nqueued--;
			replace_top(r, &e);
		} else {
			if (q)
				q->head = q->tail = NULL;
			heap_pop(r);
		}
		n->next_free = r->free_nodes;
		r->free_nodes = n;
	} else {
		/* The one copy of an in-place head; the union beyond its
		 * type stays zero as rdt_decode leaves it.  A source's
		 * head stays where it is until its next fill. */
		if (by_ref) {
			ref->rec = s->head;
			ref->len = s->head_len;
		} else {
			copy_rec(ev, s->head, s->head_len);
		}
		ev->ts = t->ts;
		ev->seq = t->seq;
		ev->src = t->src;
		ev->flags = 0;
		r->stale = true;
	}
	r->refill = s;
	ev->host = s->host;
	s->inheap--;
	if (by_ref)
		ev->comm = ev->devname = "";
	else
		rdt_names_of(&r->names, s->host, ev);
	if (r->have_last && ev->ts < r->last_ts && (r->live || s->windowed)) {
		s->st.late++;
		ev->flags |= RDT_EVF_LATE;
	}
	if (!r->have_last || ev->ts > r->last_ts)
		r->last_ts = ev->ts;
	r->have_last = true;
}

/*
 * When the heap's top can go (live), on the clock of the last pass: when
 * the reorder window has passed it, or, all sources exact, when their
 * horizons have; and not before the holding sources' horizon passes it.
 * A drained source's horizon trails the clock by a fixed lag (relay's a
 * tenth of the window, a ring buffer's all of it: rdt_pass_*_horizon()),
 * so each is met that lag after the top's stamp.  Guessing relay's lag
 * for every source woke a reader of BPF alone every millisecond for 90 ms
 * after each record (its horizon trails by the whole window): a reader
 * pass per millisecond of traffic, a vCPU taken from the workload each.
 */
static uint64_t top_due(const struct rdt_reader *r)
{
	uint64_t ts = r->heap[0].ts, now = r->pass.now;
	uint64_t due = ts + r->pass.window_ns;

	if (r->exact && r->horizon <= now && ts + (now - r->horizon) < due)
		due = ts + (now - r->horizon);
	if (r->hold > now || ts < r->hold)
		return due;
	/* Held by a writer between its stamp and its publish (the hold
	 * trails by more than the window): only a look tells when it moves,
	 * next_pass() looks again in a millisecond. */
	if (now - r->hold > r->pass.window_ns + 1000000)
		return now;
	return ts + (now - r->hold) > due ? ts + (now - r->hold) : due;
}

/* The pass over the sources (rdt_reader_next()'s slow path): made once
 * for each of the two calls below, the test of @ref folded away in each. */
static inline __attribute__((always_inline)) int
next_pass(struct rdt_reader *r, struct rdt_event *ev, struct rdt_rec_ref *ref,
	  const bool by_ref, int timeout_ms)
{
	uint64_t deadline = 0;
	bool any_live = false;

	if (!r->started)
		start(r);
	for (;;) {
		uint64_t horizon = UINT64_MAX, hold = UINT64_MAX;
		bool active = false, exact = true;

		/* The clock once per pass; while the top is due anyway (a
		 * backlog) a pass may reuse the last reading, up to 64 of
		 * them: a clock_gettime per event was ~12 % of it. */
		if (r->live && (r->pass.polled || ++r->pass_reuse >= 64 || !r->nheap ||
				r->stale ||
				r->heap[0].ts + r->pass.window_ns >
				r->pass.now)) {
			r->pass.now = rdt_now_mono();
			r->pass_reuse = 0;
		}
		if (r->pass.stopping)
			finish_live(r);
		for (unsigned int i = 0; i < r->nsrc; i++) {
			struct rdt_src *s = r->srcs[i];

			if (s->live) {
				any_live = true;
				if (src_active(s)) {
					fill_src(r, s);
					if (src_active(s) && s->horizon < horizon)
						horizon = s->horizon;
					if (src_active(s) && s->holds &&
					    s->horizon < hold)
						hold = s->horizon;
					if (src_active(s) && !s->exact)
						exact = false;
				}
			} else {
				if (src_active(s))
					horizon = 0;
				/* Ordered stream: keep exactly its head in
				 * the heap (unknown records push nothing). */
				while (src_active(s) && !s->inheap)
					if (fill_src(r, s) < 0)
						break;
			}
			active |= src_active(s);
		}
		r->horizon = r->live ? horizon : 0;
		/* Horizons are on the local clock: one boot's time base. */
		r->hold = r->tb == RDT_TIME_MONOTONIC ? hold : UINT64_MAX;
		r->exact = exact && r->live && r->tb == RDT_TIME_MONOTONIC;
		heap_settle(r);
		if (fill_windowed(r))
			continue;
		r->refill = NULL;
		r->primed = true;
		r->pass.polled = false;
		if (r->nheap) {
			if (!any_live || r->pass.stopping ||
			    r->nheap + r->nqueued >= r->opts.max_buffered) {
				emit(r, ev, ref, by_ref);
				return 1;
			}
			/* Due, and no source that knows its writers can
			 * still hand over anything earlier; or earlier than
			 * every source's exact horizon. */
			if ((r->heap[0].ts + r->pass.window_ns <= r->pass.now ||
			     (r->exact && r->heap[0].ts < r->horizon)) &&
			    r->heap[0].ts < r->hold) {
				emit(r, ev, ref, by_ref);
				return 1;
			}
		} else if (!active) {
			return end_result(r);
		}
		if (!any_live)
			continue;
		{
			struct pollfd pfd[512];
			int n = 0, wait = 100;
			uint64_t now = rdt_now_mono();

			/* The timeout runs from the first wait of this call,
			 * not from its start: a clock read per event less. */
			if (timeout_ms >= 0 && !deadline)
				deadline = now + (uint64_t)timeout_ms * 1000000ull;
			if (timeout_ms >= 0) {
				if (now >= deadline)
					return -EAGAIN;
				if ((deadline - now) / 1000000 < (uint64_t)wait)
					wait = (int)((deadline - now) / 1000000) + 1;
			}
			if (r->nheap) {
				uint64_t due = top_due(r);
				/* An eighth of the window late: what falls due
				 * meanwhile goes in the same pass.  Records a few
				 * ms apart each woke the reader at their own time,
				 * a context switch taken from the traced workload
				 * for every one or two records. */
				int w = due > now ? (int)((due - now + r->pass.window_ns / 8) /
							 1000000) + 1 : 0;

				/* Due but held (a writer between its stamp
				 * and its publish): look again in a
				 * millisecond, not at once. */
				if (!w && r->heap[0].ts >= r->hold)
					w = 1;

				if (w < wait)
					wait = w;
			}
			for (unsigned int i = 0; i < r->nsrc && n < 512; i++)
				if (r->srcs[i]->live && src_active(r->srcs[i]) &&
				    r->srcs[i]->ops->pollfds)
					n += r->srcs[i]->ops->pollfds(r->srcs[i],
							pfd + n, 512 - n);
			/* relay wakes poll only on a sub-buffer switch: the
			 * timeout is what makes partial buffers appear. */
			r->pass.polled = true;
			/* Nothing to hand out now: what the sinks hold goes
			 * to their files before the wait. */
			if (wait > 0)
				for (unsigned int i = 0; i < r->nidle; i++)
					r->idle[i].fn(r->idle[i].arg);
			if (poll(pfd, (nfds_t)n, wait) < 0 && errno == EINTR)
				return -EAGAIN;
		}
	}
}

static __attribute__((noinline)) int next_pass_copy(struct rdt_reader *r,
		struct rdt_event *ev, int timeout_ms)
{
	return next_pass(r, ev, NULL, false, timeout_ms);
}

static __attribute__((noinline)) int next_pass_ref(struct rdt_reader *r,
		struct rdt_event *ev, struct rdt_rec_ref *ref, int timeout_ms)
{
	return next_pass(r, ev, ref, true, timeout_ms);
}

/*
 * The two ways an event goes out without a pass over the sources, apart
 * from the pass: the frame the pass needs (its registers saved and
 * restored) was ~20 instructions an event here.
 *  - An ordered merge (files): every other active stream has its head in
 *    the heap already, so only the one handed out last is filled; the
 *    same order as the pass, without it.
 *  - Live: the top is due and no source can still hold anything earlier
 *    (a fill call per source and a check per relay CPU for each event
 *    were half the cost of following a backlog).
 * Both imply a started reader.
 */
static inline __attribute__((always_inline)) int
next_event(struct rdt_reader *r, struct rdt_event *ev, struct rdt_rec_ref *ref,
	   const bool by_ref, int timeout_ms)
{
	if (r->ordered_only && r->primed) {
		struct rdt_src *s = r->refill;

		r->refill = NULL;
		while (s && src_active(s) && !s->inheap)
			if (fill_src(r, s) < 0)
				break;
		heap_settle(r);
		if (!r->nheap)
			return end_result(r);
		emit(r, ev, ref, by_ref);
		return 1;
	}
	if (r->nheap && r->heap[0].ts < r->horizon && !r->pass.stopping &&
	    (r->exact || r->heap[0].ts + r->pass.window_ns <= r->pass.now)) {
		emit(r, ev, ref, by_ref);
		return 1;
	}
	return by_ref ? next_pass_ref(r, ev, ref, timeout_ms) :
			next_pass_copy(r, ev, timeout_ms);
}

RDT_EXPORT int rdt_reader_next(struct rdt_reader *r, struct rdt_event *ev,
			       int timeout_ms)
{
	return next_event(r, ev, NULL, false, timeout_ms);
}

RDT_EXPORT int rdt_reader_next_ref(struct rdt_reader *r, struct rdt_event *ev,
				   struct rdt_rec_ref *ref, int timeout_ms)
{
	return next_event(r, ev, ref, true, timeout_ms);
}

RDT_EXPORT void rdt_reader_ref_event(struct rdt_reader *r, struct rdt_event *ev,
				     const struct rdt_rec_ref *ref)
{
	/* A queued event's reference is ev->rec already. */
	if (ref->rec != &ev->rec)
		copy_rec(ev, ref->rec, ref->len);
	rdt_names_of(&r->names, ev->host, ev);
}

int rdt_reader_add_idle(struct rdt_reader *r, void (*fn)(void *arg), void *arg)
{
	struct rdt_idle *v = realloc(r->idle, (r->nidle + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->idle = v;
	r->idle[r->nidle++] = (struct rdt_idle){ fn, arg };
	return 0;
}

void rdt_reader_del_idle(struct rdt_reader *r, void *arg)
{
	for (unsigned int i = 0; i < r->nidle; i++)
		if (r->idle[i].arg == arg) {
			r->idle[i] = r->idle[--r->nidle];
			return;
		}
}

RDT_EXPORT void rdt_reader_stop(struct rdt_reader *r)
{
	r->pass.stopping = true;
}

RDT_EXPORT unsigned int rdt_reader_nsources(const struct rdt_reader *r)
{
	return r->nsrc;
}

RDT_EXPORT int rdt_reader_source_stats(const struct rdt_reader *r,
				       unsigned int i, struct rdt_source_stats *st)
{
	struct rdt_src *s = rdt_reader_src(r, i);

	if (!s)
		return -ENOENT;
	*st = s->st;
	st->name = s->name;
	st->lost_cpu = s->lost_cpu;
	st->error = s->error;
	st->corrupt_first = s->corrupt_first;
	st->detached_first = s->detached_first;
	return 0;
}

RDT_EXPORT const struct rdt_file_hdr *rdt_reader_file_hdr(const struct rdt_reader *r,
							  unsigned int i)
{
	struct rdt_src *s = rdt_reader_src(r, i);

	return s ? &s->fh : NULL;
}

RDT_EXPORT const char *rdt_reader_meta(const struct rdt_reader *r, unsigned int i)
{
	struct rdt_src *s = rdt_reader_src(r, i);

	return s && s->meta ? s->meta : "";
}

RDT_EXPORT const char *rdt_reader_source_status(const struct rdt_reader *r,
					       unsigned int i)
{
	struct rdt_src *s = rdt_reader_src(r, i);

	return s && s->status ? s->status : "";
}

RDT_EXPORT uint64_t rdt_reader_lost(const struct rdt_reader *r)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < r->nsrc; i++)
		n += r->srcs[i]->st.lost;
	return n;
}

RDT_EXPORT uint64_t rdt_reader_last_ts(const struct rdt_reader *r)
{
	return r->have_last ? r->last_ts : 0;
}

RDT_EXPORT uint64_t rdt_reader_unknown(const struct rdt_reader *r)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < r->nsrc; i++)
		n += r->srcs[i]->st.unknown;
	return n;
}
