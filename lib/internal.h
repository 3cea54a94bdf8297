/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* librdmatrace internals shared between the reader, sources and sinks. */
#ifndef RDT_INTERNAL_H
#define RDT_INTERNAL_H

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <rdmatrace/rdmatrace.h>

#define RDT_EXPORT __attribute__((visibility("default")))
#define RDT_ERRLEN 512

struct rdt_src;

/* A record's bytes (@len: its hdr.size) to a consumer: < 0 stops. */
typedef int (*rdt_rec_fn)(void *ctx, const void *rec, size_t len);

/*
 * The merge's side of a source's fill, read-only: its horizon interface.
 * A live source learns from it the pass's clock and the merge's limits,
 * and answers with rdt_src.horizon (none of its unread records is earlier);
 * it reads nothing else of the merge, and the merge nothing of it but that.
 */
struct rdt_pass {
	uint64_t now;		/* this pass's clock (CLOCK_MONOTONIC ns) */
	uint64_t window_ns;	/* the reorder window */
	/* A stream read empty less than this ago may stay unread in this
	 * pass, unless the merge waited since (rdt_pass_may_skip()). */
	uint64_t skip_ns;
	/* How long a source that holds the merge back (rdt_src.holds) may
	 * wait for a record it knows is being written before it lets the
	 * merge go on (that record then comes out late, flagged). */
	uint64_t stall_ns;
	bool polled;		/* the merge waited in poll() since the last pass */
	bool stopping;		/* rdt_reader_stop(): read what is there, no more */
	/* Whether a live stream none of whose unread records is earlier
	 * than @ts (the reader's time base: rdt_src_ts()) may stay unread in
	 * this pass, as what the merge hands out next is due and earlier. */
	bool (*ahead)(const struct rdt_pass *p, uint64_t ts);
};

/* What the reader needs from each kind of source. */
struct rdt_src_ops {
	/* Push available records via rdt_src_push() / rdt_src_push_head().
	 * Files push one record per call (the k-way merge needs only each
	 * stream's head); live sources push all that is ready without
	 * blocking, guided by @p.  Returns 0, or -errno with src->error set;
	 * sets src->eof at the end. */
	int	(*fill)(struct rdt_src *s, const struct rdt_pass *p);
	/* Files: every record again from the first, to @fn, without moving
	 * the stream (clock alignment's first pass): 0 or -errno. */
	int	(*rescan)(struct rdt_src *s, rdt_rec_fn fn, void *ctx);
	/* Add pollfds for live waiting; returns how many. */
	int	(*pollfds)(struct rdt_src *s, struct pollfd *p, int max);
	/* Live sources: last chance to read and to account drops before
	 * the summary. */
	void	(*finish)(struct rdt_src *s, const struct rdt_pass *p);
	void	(*close)(struct rdt_src *s);
};

struct rdt_src {
	struct rdt_reader	*r;
	unsigned int		idx;
	enum rdt_source_kind	kind;
	const struct rdt_src_ops *ops;
	void			*priv;
	char			*name;
	struct rdt_file_hdr	fh;
	char			*meta;
	char			*status;	/* producer's own status lines */
	unsigned int		host;	/* index of distinct boot id */
	/* several hosts aligned from their messages: this host's correction
	 * (NULL: the header offset alone) */
	const struct rdt_clk_host *clk;
	/* its stamps go onto the realtime base (several boots merged) */
	bool			realtime;
	bool			live;
	/* Not live, yet not in order either: a saved relay capture, one
	 * stream per CPU.  The reader reads it on until @watermark (raw ts:
	 * no unread record of it is earlier, but for the reorder window)
	 * has passed the record it would emit next. */
	bool			windowed;
	uint64_t		watermark;
	bool			eof;
	/* Live: after its last fill, none of its unread records is earlier
	 * than this (the reader's time base); 0: unknown.  What is due and
	 * earlier than every source's goes out without a pass. */
	uint64_t		horizon;
	/* Live: @horizon is exact for concurrent writers (they announce a
	 * record before they stamp it), so the reader also holds back what
	 * is due by the window but not yet earlier than it (issue 38). */
	bool			holds;
	/* Live: @horizon allows for every delay its writers can have
	 * between a stamp and the record's publication, so that none of the
	 * records it hands over later is earlier.  Where every live source's
	 * does, what is earlier than all of them goes out without waiting
	 * out the reorder window as well (issue 36: relay's CPUs, each in
	 * stamp order, then hold a tenth of it, not all). */
	bool			exact;
	bool			failed;
	unsigned int		inheap;
	uint64_t		seq;
	/* Ordered streams: the head pushed by rdt_src_push_head(), validated
	 * but not copied; the source leaves these bytes alone until its next
	 * fill, which the reader calls only once the head was emitted. */
	const void		*head;
	size_t			head_len;	/* bytes of its type */
	/* cumulative lost per CPU from SUBBUF records, to derive deltas */
	uint64_t		*subbuf_lost;
	uint32_t		nsubbuf_lost;
	/* per CPU, the SUBBUF seq expected next plus one (0: none seen) */
	uint64_t		*subbuf_next;
	uint32_t		nsubbuf_next;
	struct rdt_source_stats	st;
	uint64_t		*lost_cpu;
	char			error[RDT_ERRLEN];
	char			corrupt_first[RDT_ERRLEN];
	char			detached_first[RDT_ERRLEN];
};

/* Position of a record for messages: "<where> offset <off>", just
 * "offset <off>" for an empty @where, just @where for RDT_NO_OFF.  Formatted
 * only when there is an error to report: this runs for every record. */
#define RDT_NO_OFF UINT64_MAX

/* Hand one raw record (as read) to the reader: validate, bookkeep, queue a
 * copy.  Returns 0, or -errno after setting s->error (the stream stops). */
int rdt_src_push(struct rdt_src *s, const void *rec, size_t len,
		 const char *where, uint64_t off);
/* Ordered streams (one record in the merge at a time, e.g. files): the
 * same, but an ordinary event is not copied: it stays at @rec, which must
 * stay unchanged until the source's next fill, as the source's head. */
int rdt_src_push_head(struct rdt_src *s, const void *rec, size_t len,
		      uint64_t off);
/*
 * A live stream read in place (relay's CPUs): its records stay in its read
 * buffer, in order, indexed, until they are handed out.  Only the first
 * is in the merge's heap; handing it out puts the next in its place (one
 * sift-down), with no copy into a queued node and no node at all, which
 * were most of a live reader's cost per event (issue 36).  The source
 * reads into buf[len..cap) after rdt_stream_room(), and looks at its bytes
 * from @scan on; the merge owns the index.  Offsets, not pointers: the
 * buffer moves when it is compacted or grows.
 */
struct rdt_stream_ent {
	uint32_t	off;	/* in buf */
	uint32_t	want;	/* bytes of its type (rdt_decode_check) */
	uint64_t	seq;
};

struct rdt_stream {
	unsigned char	*buf;
	size_t		cap, len;	/* bytes read */
	size_t		scan;	/* the first byte the source has not looked at */
	struct rdt_stream_ent *ent;
	size_t		head, n, ncap;	/* ent[head..n): not handed out */
	/* the merge key of the last record indexed */
	uint64_t	tail_ts;
	uint32_t	tail_cpu;
	size_t		*nqueued;	/* the merge's count of records behind heads */
};

/* At least @want bytes free at buf + len: the handed-out prefix dropped
 * or the buffer grown.  0, or -ENOMEM (nothing moved). */
int rdt_stream_room(struct rdt_stream *st, size_t want);
void rdt_stream_free(struct rdt_stream *st);
/* The record at st->buf + @off, already checked (RDT_DEC_OK, header @h,
 * @want bytes of its type): a plain event stays in place unless it sorts
 * before the last one indexed (then it is queued on its own, copied);
 * anything else takes rdt_src_push()'s path.  0 or -errno (s->error set). */
int rdt_src_push_stream_slow(struct rdt_src *s, struct rdt_stream *st,
			     size_t off, const struct rdt_hdr *h, size_t want,
			     const char *where, uint64_t where_off);
/* Queue an event the reader itself made (e.g. LOST for BPF drops). */
void rdt_src_push_lost(struct rdt_src *s, unsigned int producer,
		       unsigned int cpu, uint64_t count, uint64_t ts,
		       bool derived);
void rdt_src_set_error(struct rdt_src *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The header of a record librdmatrace makes itself (RDT_SRC_USER). */
static inline void rdt_user_hdr(struct rdt_hdr *h, uint16_t type,
				uint16_t size, uint64_t ts, uint32_t cpu,
				uint32_t dev)
{
	memset(h, 0, sizeof(*h));
	h->magic = RDT_REC_MAGIC;
	h->version = RDT_ABI_MAJOR;
	h->source = RDT_SRC_USER;
	h->type = type;
	h->size = size;
	h->ts_ns = ts;
	h->cpu = cpu;
	h->dev = dev;
}

/* Append printf output and @end to a malloc'd string (*buf NULL: empty);
 * on no memory it stays as it was (strbuf.c). */
void rdt_str_vappend(char **buf, const char *end, const char *fmt, va_list ap);
/* Append a line to the source's status (what --stats and the end say). */
void rdt_src_add_status(struct rdt_src *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rdt_reader_set_error(struct rdt_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct rdt_src *rdt_reader_new_src(struct rdt_reader *r,
				   enum rdt_source_kind kind, const char *name);
void rdt_reader_drop_src(struct rdt_reader *r, struct rdt_src *s);
/* After a source's open(): @ret < 0 drops @s, with its error as the
 * reader's; else the source's index. */
int rdt_reader_finish_add(struct rdt_reader *r, struct rdt_src *s, int ret);
struct rdt_src *rdt_reader_src(const struct rdt_reader *r, unsigned int i);
bool rdt_reader_live(const struct rdt_reader *r);	/* opts.follow */

/* ---- the horizon interface (struct rdt_pass), source side ----------------- */

/* A live stream that read empty at @drained_at may stay unread in this
 * pass while the merge has not waited since and less than skip_ns (a 16th
 * of the reorder window, at most 1 ms) has passed: a record it misses is
 * read long before anything newer can be emitted ahead of it, and the emit
 * loop stops paying a read() per CPU for every event it hands out. */
static inline bool rdt_pass_may_skip(const struct rdt_pass *p,
				     uint64_t drained_at)
{
	return !p->polled && !p->stopping && p->now >= drained_at &&
	       p->now - drained_at < p->skip_ns;
}

/* The horizon of a stream read to its end at pass clock @at: what comes
 * later is later than @at less the reorder window. */
static inline uint64_t rdt_pass_drained_horizon(const struct rdt_pass *p,
						uint64_t at)
{
	return at > p->window_ns ? at - p->window_ns : 0;
}

/* The horizon of a stream read to its end at pass clock @at whose writers
 * stamp a record with interrupts off until it is published (the module's
 * relay CPUs): what is still being written was stamped just before @at.
 * A tenth of the reorder window allows for a vCPU its hypervisor stopped
 * inside that section; a record later than this comes out late, flagged. */
static inline uint64_t rdt_pass_ordered_horizon(const struct rdt_pass *p,
						uint64_t at)
{
	uint64_t m = p->window_ns / 10;

	return at > m ? at - m : 0;
}

/* clock_align.c: clock(host) - clock(host 0) at @ts of host @h's clock */
int64_t rdt_clock_corr(const struct rdt_clk_host *h, uint64_t ts);

/* A source's stamp @ts in the reader's time base: as it is, or on the
 * first host's realtime clock where several hosts merge (rdt_src.realtime,
 * set as the reader starts). */
static inline uint64_t rdt_src_ts(const struct rdt_src *s, uint64_t ts)
{
	if (!s->realtime)
		return ts;
	ts += (uint64_t)s->fh.realtime_offset_ns;
	if (s->clk)	/* onto the first host's clock */
		ts -= (uint64_t)rdt_clock_corr(s->clk, ts);
	return ts;
}

/* A CPU's records are in order but for an interrupt's nesting
 * (microseconds): a margin against that. */
#define RDT_STREAM_MARGIN_NS 20000

/* The horizon of an ordered stream whose latest record read is @raw_ts
 * (its own clock). */
static inline uint64_t rdt_src_stream_horizon(const struct rdt_src *s,
					      uint64_t raw_ts)
{
	uint64_t ts = rdt_src_ts(s, raw_ts);

	return ts > RDT_STREAM_MARGIN_NS ? ts - RDT_STREAM_MARGIN_NS : 0;
}

/* BPF: the earliest stamp of records still being written (custom_fill()) */
void rdt_src_custom_inflight(struct rdt_src *s, uint64_t (*fn)(void *ctx));

/* ---- names (names.c): task and device names by (host, id) ---------------- */

struct name_ent {
	uint64_t key;
	struct name_ent *next;
	struct name_ent *all;	/* every entry of both tables, for free */
	char name[RDT_NAME_LEN + 1];
};

#define RDT_NAME_BUCKETS 1024

/* Names of recent (host, tid, pid, dev) tuples: three hash walks per event
 * were ~5 % of a file merge.  An entry is valid for one generation of the
 * tables; every set starts a new one. */
#define RDT_NCACHE 64

struct rdt_name_cache {
	uint64_t gen;
	uint32_t host, tid, pid, dev;
	const char *comm, *devname;
};

struct rdt_names {
	struct name_ent *comms[RDT_NAME_BUCKETS];
	struct name_ent *devs[RDT_NAME_BUCKETS];
	struct name_ent *all;	/* list through ->all */
	uint64_t gen;
	struct rdt_name_cache cache[RDT_NCACHE];
};

void rdt_names_init(struct rdt_names *n);
void rdt_names_free(struct rdt_names *n);
void rdt_names_set_comm(struct rdt_names *n, uint32_t host, uint32_t id,
			const char *name, size_t len);
bool rdt_names_has_comm(struct rdt_names *n, uint32_t host, uint32_t id);
void rdt_names_set_dev(struct rdt_names *n, uint32_t host, uint32_t dev,
		       const char *name, size_t len);
void rdt_names_fill(struct rdt_names *n, uint32_t host, struct rdt_event *ev,
		    struct rdt_name_cache *c);

/* @ev's comm and devname on @host: inline, as it runs for every event
 * handed out; the tables only on a cache miss. */
static inline void rdt_names_of(struct rdt_names *n, uint32_t host,
				struct rdt_event *ev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;
	uint64_t k = ((uint64_t)h->tid << 32 | h->pid) ^
		     ((uint64_t)h->dev << 20 | host);
	struct rdt_name_cache *c = &n->cache[(k * 0x9e3779b97f4a7c15ull) >> 58];

	if (c->gen == n->gen && c->tid == h->tid && c->pid == h->pid &&
	    c->dev == h->dev && c->host == host) {
		ev->comm = c->comm;
		ev->devname = c->devname;
		return;
	}
	rdt_names_fill(n, host, ev, c);
}

/* ---- ingest (ingest.c): what a record means as it comes in -------------- */

/* The LOST record of @count events @producer lost on @cpu, counted in
 * @s's stats, into @rec. */
void rdt_ingest_lost(struct rdt_src *s, unsigned int producer, unsigned int cpu,
		     uint64_t count, uint64_t ts, union rdt_record *rec);
/* A bookkeeping record (rdt_is_bookkeeping()): its names and loss taken;
 * true if it makes a record to follow it (a SUBBUF's grown loss), in
 * @more. */
bool rdt_ingest_bookkeeping(struct rdt_names *n, struct rdt_src *s,
			    const union rdt_record *rec, union rdt_record *more);
/* The POLL_CQ summary of the poll whose last completion is at @buf. */
void rdt_ingest_poll_summary(const void *buf, union rdt_record *rec);

/* A kernel completion that ends a poll (ABI 1.8: it carries the poll's
 * num_entries), whose POLL_CQ summary the reader makes back. */
static inline bool rdt_wc_ends_poll(const struct rdt_hdr *h, const void *buf)
{
	uint16_t req;

	if (h->type != RDT_EV_POLL_CQ_WC || h->source != RDT_SRC_KMOD)
		return false;
	memcpy(&req, (const char *)buf +
	       offsetof(struct rdt_ev_poll_cq_wc, poll_requested), sizeof(req));
	return req;
}

/* Name and size of every type this reader knows (size 0: unknown). */
struct rdt_type_info {
	const char	*name;
	size_t		size;
	/* A record written by an older ABI minor that was shorter (fields
	 * appended since): taken, the missing fields 0.  0: size. */
	size_t		min;
};
extern const struct rdt_type_info rdt_types[RDT_EV_MAX + 1];
/* Names of wire enums that the schema's "E:" fields show (decode.c). */
const char *rdt_rxe_retry_kind_name(unsigned int kind);
const char *rdt_coll_phase_name(unsigned int phase);
const char *rdt_ctr_kind_name(unsigned int kind);	/* sysfs's directory */
const char *rdt_post_type_name(unsigned int type);	/* "send", "recv" */

/* A shown field of a layout schema/records.py describes (schema.c). */
struct rdt_schema_field {
	const char	*key;
	char		show;		/* 'U', 'I', 'X', 'S' (char array), 'E' (a name) */
	uint16_t	off, size;	/* in the record, header included */
};

struct rdt_schema_layout {
	const struct rdt_schema_field *f;
	size_t		n;
};

/* @type's fields in the order the outputs show them; NULL (*n 0) for a
 * type whose fields lib/fields.inc's code shows (C in the schema). */
const struct rdt_schema_field *rdt_schema_fields(unsigned int type, size_t *n);

/* Records the reader applies itself (names, loss).  Ranges, not a call
 * and seven compares: this runs several times per record. */
static inline bool rdt_is_bookkeeping(unsigned int type)
{
	return (type >= RDT_EV_SUBBUF && type <= RDT_EV_LOST) ||
	       (type >= RDT_EV_DEVICE_ADD && type <= RDT_EV_DEVICE_RENAME) ||
	       type == RDT_EV_DEVICE_STATE;
}

/* rdt_decode without the copy: *h is the header, *want the type's size.
 * Inline: the file reader's per-record path calls it for every record. */
static inline enum rdt_decode_result rdt_decode_check(const void *buf,
		size_t len, struct rdt_hdr *h, size_t *want, const char **why)
{
	*why = "";
	if (len < sizeof(*h))
		return RDT_DEC_NEED_MORE;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != RDT_REC_MAGIC) {
		*why = "bad record magic";
		return RDT_DEC_CORRUPT;
	}
	if (h->version > RDT_ABI_MAJOR)
		return RDT_DEC_NEWER_ABI;
	/* Producers keep every record 8-byte sized so relay and files stay
	 * aligned; anything else means we are out of step with the stream. */
	if (h->size < sizeof(*h) || h->size % 8) {
		*why = "bad record size";
		return RDT_DEC_CORRUPT;
	}
	*want = h->type <= RDT_EV_MAX ? rdt_types[h->type].size : 0;
	if (*want && h->size < *want) {
		if (!rdt_types[h->type].min ||
		    h->size < rdt_types[h->type].min) {
			*why = "record shorter than its type";
			return RDT_DEC_CORRUPT;
		}
		*want = h->size;	/* an older minor's: zero-filled */
	}
	if (len < h->size)
		return RDT_DEC_NEED_MORE;
	return *want ? RDT_DEC_OK : RDT_DEC_UNKNOWN;
}
/* Per type, the size of a record that may stay where it was read: a
 * plain event (not bookkeeping) of this ABI minor; 0 for bookkeeping and
 * unknown types.  Filled from rdt_types[] before main (decode.c). */
extern uint16_t rdt_keep_size[RDT_EV_MAX + 1];

/* rdt_decode_check() and !rdt_is_bookkeeping() of the usual record in one
 * test of its size against the table: a plain event, whole in @len bytes,
 * its header in *h.  False sends it to the full check (any other record:
 * bookkeeping, a record shorter or longer than this minor's, unknown or
 * corrupt).  ~40 instructions less an event on the readers' per-record
 * paths (callgrind). */
static inline __attribute__((always_inline)) bool
rdt_rec_plain(const void *buf, size_t len, struct rdt_hdr *h)
{
	if (__builtin_expect(len < sizeof(*h), 0))
		return false;
	memcpy(h, buf, sizeof(*h));
	return h->magic == RDT_REC_MAGIC && h->version <= RDT_ABI_MAJOR &&
	       h->type <= RDT_EV_MAX && rdt_keep_size[h->type] &&
	       h->size == rdt_keep_size[h->type] && len >= h->size;
}

/* Whether the checked record at st->buf + @off (merge key @ts) stays in
 * place: a plain event, not a poll's last completion (its derived summary
 * follows it), and not before the one indexed ahead of it (the index
 * holds the heap's order, so its first is the least of it). */
static inline bool rdt_stream_keeps(const struct rdt_stream *st, size_t off,
				    const struct rdt_hdr *h, uint64_t ts)
{
	return !rdt_is_bookkeeping(h->type) &&
	       !rdt_wc_ends_poll(h, st->buf + off) &&
	       (st->head == st->n || ts > st->tail_ts ||
		(ts == st->tail_ts && h->cpu >= st->tail_cpu));
}

/* Index the record rdt_stream_keeps() kept (room for it made). */
static inline void rdt_stream_index(struct rdt_src *s, struct rdt_stream *st,
				    size_t off, const struct rdt_hdr *h,
				    size_t want, uint64_t ts)
{
	s->st.records++;
	s->st.bytes += h->size;
	st->ent[st->n++] = (struct rdt_stream_ent){ (uint32_t)off,
						    (uint32_t)want, s->seq++ };
	st->tail_ts = ts;
	st->tail_cpu = h->cpu;
	s->inheap++;
}

/* rdt_src_push_stream()'s usual case inline, in the source's read loop:
 * a plain event behind its stream's first, in order, with room in the
 * index (~40 instructions an event less than the call). */
static inline int rdt_src_push_stream(struct rdt_src *s, struct rdt_stream *st,
				      size_t off, const struct rdt_hdr *h,
				      size_t want, const char *where,
				      uint64_t where_off)
{
	uint64_t ts = rdt_src_ts(s, h->ts_ns);

	if (__builtin_expect(st->head < st->n && st->n < st->ncap &&
			     rdt_stream_keeps(st, off, h, ts), 1)) {
		rdt_stream_index(s, st, off, h, want, ts);
		(*st->nqueued)++;
		return 0;
	}
	return rdt_src_push_stream_slow(s, st, off, h, want, where, where_off);
}

bool rdt_is_completion(const union rdt_record *rec);
/* A clock in ns; CLOCK_MONOTONIC is the records' own. */
static inline uint64_t rdt_clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline uint64_t rdt_now_mono(void)
{
	return rdt_clock_ns(CLOCK_MONOTONIC);
}
char *rdt_local_meta(void);

#define RDT_RELAY_MAX_CPUS 4096
/* Read a trace file header and its metadata text from @f into s->fh and
 * s->meta; @path names the file in errors.  0 or -errno with s->error. */
int rdt_src_read_file_hdr(struct rdt_src *s, FILE *f, const char *path);
int rdt_meta_add_pid(char **meta, int pid);

/* Tiny JSON writer: no library in Debian fits JSON Lines streaming well. */
void rdt_json_str(FILE *f, const char *s, size_t maxlen);

/*
 * A JSON writer into a byte buffer, for the JSON and Perfetto sinks: the
 * bytes fprintf made, without its format parsing (vfprintf and stdio's
 * per-call locking were ~70 % of the Perfetto sink).  The buffer is the
 * sink's 1 MiB s->iobuf where it has one (its own regular file; the FILE
 * then goes unbuffered), else a small one of its own handed to stdio at
 * the end of each event, so a live reader's output reaches its file as
 * soon as it did.  Every append first makes room for what it may write.
 */
struct rdt_ob {
	char	*buf;
	size_t	len, cap;
	FILE	*f;
	struct rdt_sink *s;	/* buf is s->iobuf, or NULL */
	bool	own;	/* buf is ours: malloc'd, flushed after each event */
	bool	err;	/* a write failed */
};

#define RDT_OB_OWN	(64 << 10)
#define RDT_OB_MAX	512	/* the most one rdt_ob_room() may ask for */

int rdt_ob_init(struct rdt_ob *o, struct rdt_sink *s);
void rdt_ob_free(struct rdt_ob *o);
/* What is buffered to the file, written when this returns (not fflush):
 * -EIO on a write error, this one's or an earlier one's. */
int rdt_ob_flush(struct rdt_ob *o);
/* The same, but a full s->iobuf may still be in the writer's hands
 * (sink_writer.c): the buffer to fill next is o->buf. */
int rdt_ob_ship(struct rdt_ob *o);

/* After each event: 0, or -EIO once a write failed. */
static inline int rdt_ob_end(struct rdt_ob *o)
{
	if (o->own)
		return rdt_ob_flush(o);
	return o->err ? -EIO : 0;
}

static inline char *rdt_ob_room(struct rdt_ob *o, size_t n)
{
	if (o->cap - o->len < n)
		rdt_ob_ship(o);
	return o->buf + o->len;
}

/* A copy of @n <= 32 bytes as two overlapping moves: GCC inlines a
 * memcpy of a small run-time length as "rep movsq", slow to start. */
static inline __attribute__((always_inline)) void rdt_cpy32(char *d,
		const char *s, size_t n)
{
	uint64_t a[2], b[2];
	uint32_t c, e;

	if (n >= 16) {
		memcpy(a, s, 16);
		memcpy(b, s + n - 16, 16);
		memcpy(d, a, 16);
		memcpy(d + n - 16, b, 16);
	} else if (n >= 8) {
		memcpy(a, s, 8);
		memcpy(b, s + n - 8, 8);
		memcpy(d, a, 8);
		memcpy(d + n - 8, b, 8);
	} else if (n >= 4) {
		memcpy(&c, s, 4);
		memcpy(&e, s + n - 4, 4);
		memcpy(d, &c, 4);
		memcpy(d + n - 4, &e, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

static inline void rdt_ob_put(struct rdt_ob *o, const char *s, size_t n)
{
	if (n > RDT_OB_MAX) {
		rdt_ob_flush(o);
		fwrite(s, 1, n, o->f);
		return;
	}
	if (n <= 32)
		rdt_cpy32(rdt_ob_room(o, n), s, n);
	else
		memcpy(rdt_ob_room(o, n), s, n);
	o->len += n;
}

/* A string literal. */
#define rdt_ob_lit(o, lit) rdt_ob_put(o, lit, sizeof(lit) - 1)

static inline void rdt_ob_str(struct rdt_ob *o, const char *s)
{
	rdt_ob_put(o, s, strlen(s));
}

static inline void rdt_ob_c(struct rdt_ob *o, char c)
{
	*rdt_ob_room(o, 1) = c;
	o->len++;
}

/*
 * Decimal numbers without library calls (the text, JSON and Perfetto
 * writers): the length first, then the digits from the end, two at a
 * time, straight into the output.  (Digits built in a scratch buffer and
 * copied out with a wide load stall on store-to-load forwarding: that was
 * a quarter of the text sink's time.)
 */
static const char rdt_digits2[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t rdt_pow10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull,
};

/* Digits of @v (1 for 0): log10 from the bit length (1233 / 4096 ~
 * log10(2)) is exact or one short; one compare corrects it.  (A loop of
 * compares was ~18 instructions per number.)  v | 1 counts 0 as 1 and
 * changes no other count, as every power of ten above 1 is even. */
static inline int rdt_ndec(uint64_t v)
{
	int n = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;

	return n + ((v | 1) >= rdt_pow10[n]);
}

/* The rdt_ndec(@v) decimal digits of @v, ending at @end. */
static inline void rdt_udec(char *end, uint64_t v)
{
	while (v >= 100) {
		unsigned int i = (unsigned int)(v % 100) * 2;

		v /= 100;
		*--end = rdt_digits2[i + 1];
		*--end = rdt_digits2[i];
	}
	if (v >= 10) {
		*--end = rdt_digits2[v * 2 + 1];
		*--end = rdt_digits2[v * 2];
	} else {
		*--end = (char)('0' + v);
	}
}

static const char rdt_hex2[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* Hex digits of @v (1 for 0), from its bit length. */
static inline size_t rdt_nhex(uint64_t v)
{
	return (size_t)(67 - __builtin_clzll(v | 1)) / 4;
}

/* The rdt_nhex(@v) = @n hex digits of @v, ending at @end: two a byte from
 * the end (as rdt_udec()). */
static inline void rdt_xdec(char *end, uint64_t v, size_t n)
{
	for (; v >= 16; v >>= 8) {
		end -= 2;
		memcpy(end, rdt_hex2 + (v & 0xff) * 2, 2);
	}
	if (n & 1)
		end[-1] = "0123456789abcdef"[v];
}

/*
 * A key (a literal of @kn <= 32 bytes: the copy inlines) and its value in
 * one room check: a record's fields are mostly these, and each append's
 * own check reloads the buffer's length (any char store may alias it).
 */
static inline __attribute__((always_inline)) void
rdt_ob_ku(struct rdt_ob *o, const char *k, size_t kn, uint64_t v)
{
	char *p = rdt_ob_room(o, kn + 20);
	int n;

	memcpy(p, k, kn);
	if (v < 10) {
		p[kn] = (char)('0' + v);
		o->len += kn + 1;
		return;
	}
	n = rdt_ndec(v);
	rdt_udec(p + kn + (size_t)n, v);
	o->len += kn + (size_t)n;
}

static inline __attribute__((always_inline)) void
rdt_ob_ki(struct rdt_ob *o, const char *k, size_t kn, int64_t v)
{
	char *p;

	if (v >= 0) {
		rdt_ob_ku(o, k, kn, (uint64_t)v);
		return;
	}
	p = rdt_ob_room(o, kn + 1);
	memcpy(p, k, kn);
	p[kn] = '-';
	o->len += kn + 1;
	rdt_ob_ku(o, "", 0, -(uint64_t)v);
}

/* "%" PRIu64, "%" PRId64: no key */
static inline void rdt_ob_u(struct rdt_ob *o, uint64_t v)
{
	rdt_ob_ku(o, "", 0, v);
}

static inline void rdt_ob_i(struct rdt_ob *o, int64_t v)
{
	rdt_ob_ki(o, "", 0, v);
}

/* A string literal and a number after it. */
#define rdt_ob_lit_u(o, lit, v) rdt_ob_ku(o, lit, sizeof(lit) - 1, v)

/* '"', s[0..n) as it is, '"' at @p (room for n + 2). */
static inline __attribute__((always_inline)) void
rdt_put_quoted(char *p, const char *s, size_t n)
{
	p[0] = '"';
	if (n <= 32)
		rdt_cpy32(p + 1, s, n);
	else
		memcpy(p + 1, s, n);
	p[n + 1] = '"';
}

/* A name (see rdt_ob_name()) as @k's value. */
static inline __attribute__((always_inline)) void
rdt_ob_kname(struct rdt_ob *o, const char *k, size_t kn, const char *s)
{
	size_t n = strnlen(s, 64);
	char *p = rdt_ob_room(o, kn + 66);

	memcpy(p, k, kn);
	rdt_put_quoted(p + kn, s, n);
	o->len += kn + n + 2;
}

/*
 * A name the library made (an enum's, from a namer of namers.inc; a
 * record type's): printable ASCII with no '"' or '\\', at most 64 bytes,
 * as tests/lib/names-plain checks of each.  Written as a JSON string
 * without the escape pass that input strings take.
 */
static inline void rdt_ob_name(struct rdt_ob *o, const char *s)
{
	rdt_ob_kname(o, "", 0, s);
}

/* @k ends in "0x: then the digits and the closing quote. */
static inline __attribute__((always_inline)) void
rdt_ob_kx(struct rdt_ob *o, const char *k, size_t kn, uint64_t v)
{
	size_t n = rdt_nhex(v);
	char *p = rdt_ob_room(o, kn + 17);

	memcpy(p, k, kn);
	p[kn + n] = '"';
	rdt_xdec(p + kn + n, v, n);
	o->len += kn + n + 1;
}

/* "%" PRIx64 */
static inline void rdt_ob_x(struct rdt_ob *o, uint64_t v)
{
	size_t n = rdt_nhex(v);

	rdt_xdec(rdt_ob_room(o, 16) + n, v, n);
	o->len += n;
}

/* printf into the buffer, for the rare records and the ends of a file. */
void rdt_ob_printf(struct rdt_ob *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* rdt_json_str() into the buffer. */
void rdt_ob_json_str(struct rdt_ob *o, const char *s, size_t maxlen);
/* rdt_fields(r, &rdt_json_fields, f), into the buffer. */
void rdt_ob_fields(const union rdt_record *r, struct rdt_ob *o);

/* Typed fields of a record, for the text and JSON sinks. */
struct rdt_fieldv {
	void (*u)(void *ctx, const char *key, uint64_t v);
	void (*i)(void *ctx, const char *key, int64_t v);
	void (*x)(void *ctx, const char *key, uint64_t v);	/* hex */
	void (*s)(void *ctx, const char *key, const char *v, size_t maxlen);
};
void rdt_fields(const union rdt_record *r, const struct rdt_fieldv *v,
		void *ctx);
/* For fields.inc: a TCP or rxe_xmit record's address as text ("?" if
 * none); @family AF_INET6 or else IPv4 in the first 4 bytes. */
void rdt_ip_addr(unsigned int family, const __u8 *a, char *buf, size_t len);
void rdt_gid_str(const __u8 *gid, char *buf, size_t len);
extern const struct rdt_fieldv rdt_json_fields;	/* ctx: FILE * */

/* Sinks */
struct rdt_sink_ops {
	int (*write)(struct rdt_sink *s, const struct rdt_event *ev);
	int (*close)(struct rdt_sink *s, struct rdt_reader *r);
	/* Hand what the sink buffers itself to its FILE (optional). */
	int (*flush)(struct rdt_sink *s);
	/* @ev with its record at @ref, not in ev->rec (optional: a sink
	 * that keeps records as they are, rdt_reader_next_ref()). */
	int (*write_ref)(struct rdt_sink *s, const struct rdt_event *ev,
			 const struct rdt_rec_ref *ref);
};

/* The buffer of a sink's own regular file: 1 MiB, and 64 KiB for a live
 * reader, whose sinks are flushed whenever the reader waits for events
 * (rdt_sink_flush(), from the pipeline's idle hook): the file stays as
 * close to what was traced as with stdio's 4 KiB while a busy reader
 * writes 16 times less often. */
#define RDT_SINK_IOBUF (1 << 20)
#define RDT_SINK_LIVE_IOBUF (64 << 10)

struct rdt_sink {
	const struct rdt_sink_ops *ops;
	enum rdt_format	fmt;
	FILE		*f;
	bool		own_f;
	char		*iobuf;		/* own_f's buffer, iobuf_len bytes */
	size_t		iobuf_len;
	/* A format that fills iobuf itself hands it to the file with
	 * rdt_sink_ship(): a second thread's write where async. */
	bool		async;		/* not a live reader's: may use one */
	bool		writer_off;	/* it could not be started */
	struct rdt_sink_writer *writer;
	char		*path;
	struct rdt_reader *r;
	void		*priv;
	uint64_t	first_ts;
	bool		have_first;
	char		error[RDT_ERRLEN];
};

/*
 * sink_writer.c: s->iobuf's first @len bytes to the file, by the writer
 * thread where s->async (s->iobuf is then the other buffer, to fill next),
 * else at once.  0, or the -errno of a failed write, this one's or an
 * earlier one's.
 */
int rdt_sink_writer_ship(struct rdt_sink *s, size_t len);
/* Everything shipped is in the file: 0, or -errno as above. */
int rdt_sink_writer_drain(struct rdt_sink *s);
/* Drain, then end the thread (rdt_sink_close()). */
int rdt_sink_writer_stop(struct rdt_sink *s);
/* sink_common.c: the same for a format, a failure its error: -EIO. */
int rdt_sink_ship(struct rdt_sink *s, size_t len);
int rdt_sink_drain(struct rdt_sink *s);

/* rdt_sink_write()'s body, inline where it runs for every event and every
 * sink (pipeline.c): the first event's stamp, then the format's write. */
static inline void rdt_sink_first(struct rdt_sink *s,
				  const struct rdt_event *ev)
{
	if (__builtin_expect(!s->have_first, 0)) {
		s->first_ts = ev->ts;
		s->have_first = true;
	}
}

static inline int rdt_sink_write_one(struct rdt_sink *s,
				     const struct rdt_event *ev)
{
	rdt_sink_first(s, ev);
	return s->ops->write(s, ev);
}

/* The same, the record at @ref (the sink has a write_ref). */
static inline int rdt_sink_write_one_ref(struct rdt_sink *s,
					 const struct rdt_event *ev,
					 const struct rdt_rec_ref *ref)
{
	rdt_sink_first(s, ev);
	return s->ops->write_ref(s, ev, ref);
}

int rdt_sink_text_init(struct rdt_sink *s);
int rdt_sink_json_init(struct rdt_sink *s);
int rdt_sink_perfetto_init(struct rdt_sink *s);
int rdt_sink_sqlite_init(struct rdt_sink *s);
int rdt_sink_binary_init(struct rdt_sink *s);
void rdt_sink_set_error(struct rdt_sink *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "PATH: write error: strerror(@errnum)" as the sink's error: -EIO. */
int rdt_sink_write_error(struct rdt_sink *s, int errnum);
/* What a live reader calls before it waits for events (a sink's flush):
 * the reader knows the call, not the sink, so it links to no sink. */
struct rdt_idle {
	void	(*fn)(void *arg);
	void	*arg;
};
int rdt_reader_add_idle(struct rdt_reader *r, void (*fn)(void *arg), void *arg);
void rdt_reader_del_idle(struct rdt_reader *r, void *arg);

/* Post -> completion matcher shared by stats and the sqlite/perfetto sinks. */
struct rdt_wrmatch;
struct rdt_wrmatch *rdt_wrmatch_new(void);
void rdt_wrmatch_free(struct rdt_wrmatch *m);
/* On a post: remember it and return a flow id (>0).  On a completion:
 * return the matching post's flow id and *post_ts, or 0. */
uint64_t rdt_wrmatch_event(struct rdt_wrmatch *m, const struct rdt_event *ev,
			   uint64_t *post_ts);
/* The same; a poll's match also gives its WR's CQE time (0: none seen). */
uint64_t rdt_wrmatch_event2(struct rdt_wrmatch *m, const struct rdt_event *ev,
			    uint64_t *post_ts, uint64_t *cqe_ts);

/* --stats of the NCCL profiler plugin's events (stats_nccl_plugin.c). */
struct rdt_np_stats;
struct rdt_slow;
struct rdt_np_stats *rdt_np_stats_new(struct rdt_slow *slow);
void rdt_np_stats_free(struct rdt_np_stats *s);
void rdt_np_stats_add(struct rdt_np_stats *s, const struct rdt_event *ev);
/* Both retire every collective still kept for its children first. */
void rdt_np_stats_print(struct rdt_np_stats *s, FILE *o);
void rdt_np_stats_print_json(struct rdt_np_stats *s, FILE *o);

/* NCCL profiler plugin events between start and stop, and stopped
 * collectives kept for the children NCCL starts after the stop
 * (np_open.c).  A reader's entries begin with struct rdt_np_open_ent;
 * the table holds entries of the reader's size.  Entries move when one is
 * started or stopped: look them up again after either. */
#define RDT_NP_LINGER_NS	(10ull * 1000000000ull)
#define RDT_NP_LINGER_MAX	(1u << 20)
struct rdt_np_open_ent {
	uint64_t	key;		/* 0: free */
	uint64_t	id, coll;	/* coll: its collective's id, 0: none */
	uint32_t	host, pid;
	/* a stopped collective: its children still open, when one last
	 * started or stopped */
	uint64_t	last;
	uint32_t	open_kids;
	bool		stopped;
};
struct np_linger_ent;
struct rdt_np_open {
	unsigned char	*v;
	size_t		n, cap, esz;
	struct np_linger_ent *q;	/* FIFO of kept collectives */
	size_t		headq, nq, capq;
	void		(*retire)(void *ctx, struct rdt_np_open_ent *e);
	void		*ctx;
};
/* @retire (may be NULL) sees each kept collective before it is dropped. */
void rdt_np_open_init(struct rdt_np_open *t, size_t esz,
		      void (*retire)(void *ctx, struct rdt_np_open_ent *e),
		      void *ctx);
void rdt_np_open_free(struct rdt_np_open *t);
struct rdt_np_open_ent *rdt_np_open_find(const struct rdt_np_open *t,
					 uint32_t host, uint32_t pid,
					 uint64_t id);
/* A start event's entry, zeroed past its ids (an id started again starts
 * anew), or NULL without memory.  @root: it is a collective, the root of
 * what starts under it; *parent: the parent's entry, if open. */
struct rdt_np_open_ent *rdt_np_open_start(struct rdt_np_open *t,
					  const struct rdt_event *ev,
					  bool root,
					  struct rdt_np_open_ent **parent);
/* The open collective @e belongs to, not @e itself; or NULL. */
struct rdt_np_open_ent *rdt_np_open_coll(const struct rdt_np_open *t,
					 const struct rdt_np_open_ent *e);
/* @e stopped at @ts: a collective is kept (RDT_NP_LINGER_NS past its
 * last child), anything else is dropped. */
void rdt_np_open_stop(struct rdt_np_open *t, struct rdt_np_open_ent *e,
		      uint64_t ts);
/* Retire the kept collectives that are due at @now (UINT64_MAX: all). */
void rdt_np_open_linger(struct rdt_np_open *t, uint64_t now);

/* A capture directory's parts for the relay source (capture_dir.c):
 * its header opened (NULL, errno ENOENT: not a saved capture; @path gets
 * the file's name), the module's n_subbufs (0: unknown), the path of the
 * drop counters loss is counted from, and whether the recording finished
 * (its final `dropped` is there). */
FILE *rdt_capture_open_header(const char *dir, char *path, size_t len);
uint64_t rdt_capture_n_subbufs(const char *dir);
int rdt_capture_dropped_start(const char *dir, char *path, size_t len);
bool rdt_capture_finished(const char *dir);
/* The path of a capture's clock pairs (rdt_tsc_map_load()'s format). */
int rdt_capture_clock_path(const char *dir, char *path, size_t len);

/* Raw TSC stamps to CLOCK_MONOTONIC (relay_clock.c): the pairs a reader
 * sampled or a capture saved, in order, and the module's tsc_khz. */
struct rdt_tsc_pair {
	uint64_t	tsc;
	uint64_t	ns;		/* CLOCK_MONOTONIC */
};

struct rdt_tsc_map {
	struct rdt_tsc_pair *v;
	size_t		n, cap;
	size_t		hint;		/* the span the last stamp fell in */
	uint64_t	khz;		/* the module's tsc_khz, 0: unknown */
	bool		keep_all;	/* a capture's: never thinned */
	uint64_t	refused;	/* pairs out of order, not taken */
	uint64_t	guessed;	/* stamps converted with no rate known */
};

/* A pair sampled now; false where there is no TSC to read. */
bool rdt_tsc_sample(struct rdt_tsc_pair *p);
/* Append a pair after the last (-EINVAL, counted, if it is not). */
int rdt_tsc_map_add(struct rdt_tsc_map *m, struct rdt_tsc_pair p);
/* A pair anywhere among the others (a stream's RDT_EV_CLOCK): -EINVAL
 * if it disagrees with the pairs around it (counted in refused beyond a
 * few us: two readers' jitter is not a fault). */
int rdt_tsc_map_insert(struct rdt_tsc_map *m, struct rdt_tsc_pair p);
/* A live reader's pair: added, or the last moved up to it if close. */
int rdt_tsc_map_note(struct rdt_tsc_map *m, struct rdt_tsc_pair p);
uint64_t rdt_tsc_map_ns_slow(struct rdt_tsc_map *m, uint64_t tsc);
/* Between pairs @a and @b (@a->tsc <= @tsc < @b->tsc), exactly. */
uint64_t rdt_tsc_interp_wide(const struct rdt_tsc_pair *a,
			     const struct rdt_tsc_pair *b, uint64_t tsc);

static inline uint64_t rdt_tsc_interp(const struct rdt_tsc_pair *a,
				      const struct rdt_tsc_pair *b, uint64_t tsc)
{
	uint64_t p;

	/* Pairs a read apart (the live reader's) are milliseconds of
	 * cycles times milliseconds of ns: the product fits 64 bits, and
	 * one divide does (a 128-bit one is a libgcc call, ~20 of the ~50
	 * instructions a stamp cost). */
	if (!__builtin_mul_overflow(tsc - a->tsc, b->ns - a->ns, &p))
		return a->ns + p / (b->tsc - a->tsc);
	return rdt_tsc_interp_wide(a, b, tsc);
}

/* A raw stamp in CLOCK_MONOTONIC ns; once per record of the relay form,
 * so the span the last stamp fell in (stamps come in order per CPU) is
 * tried inline, without a call. */
static inline uint64_t rdt_tsc_map_ns(struct rdt_tsc_map *m, uint64_t tsc)
{
	size_t lo = m->hint;

	if (lo + 1 < m->n && m->v[lo].tsc <= tsc && tsc < m->v[lo + 1].tsc)
		return rdt_tsc_interp(&m->v[lo], &m->v[lo + 1], tsc);
	return rdt_tsc_map_ns_slow(m, tsc);
}
int rdt_tsc_map_load(struct rdt_tsc_map *m, const char *path, char *err,
		     size_t errlen);
void rdt_tsc_map_free(struct rdt_tsc_map *m);
/* The tsc_khz line of a relay directory's `clock` file; 0 if none. */
uint64_t rdt_relay_clock_khz(const char *relay_dir);

/* NCCL's ncclProfilerKernelChStop: a state record whose arg is a kernel
 * channel's GPU stop stamp (producers/nccl-profiler/nccl_profiler_abi.h). */
#define RDT_NP_STATE_KERNEL_CH_STOP	22

/* A plugin event between start and stop, its record's fields decoded
 * once (np_span.c), for --stats and --metrics: their entries begin with
 * it, and it begins with np_open's. */
struct rdt_np_span {
	struct rdt_np_open_ent o;
	uint16_t	type;		/* its start record's */
	uint64_t	ts;		/* its start */
	/* Coll */
	char		func[RDT_NP_STR + 1], dtype[RDT_NP_STR + 1];
	uint64_t	seq, count, comm_id;
	int32_t		rank;
	/* KernelCh: its GPU stamps; Coll: its kernel channels' first start
	 * and last stop (0: none done) */
	uint64_t	gpu_start, gpu_stop;
	/* NET_IB */
	int32_t		device, opcode;
	uint32_t	qpn;
	uint64_t	length, wr_id;
};
/* A start record's entry, its fields filled; NULL: no memory. */
struct rdt_np_span *rdt_np_span_start(struct rdt_np_open *t,
				      const struct rdt_event *ev);
/* A state record: the kernel channel whose GPU stop it gives, that stop
 * set; NULL for any other state. */
struct rdt_np_span *rdt_np_span_state(const struct rdt_np_open *t,
				      const struct rdt_event *ev);
/* Kernel channel @e stops: its GPU span widens its collective's. */
void rdt_np_span_kernel_done(const struct rdt_np_open *t,
			     const struct rdt_np_span *e);

/* Port counters' recent changes, for "what moved since T" (ctr_history.c):
 * error counters only (traffic counters are left out of the answer). */
struct rdt_ctr_history;
struct rdt_ctr_move {
	uint32_t	port;
	const char	*name;		/* valid until the next add */
	int64_t		delta;
	bool		at_least;	/* older changes fell out of the ring */
};
struct rdt_ctr_history *rdt_ctr_history_new(void);
void rdt_ctr_history_free(struct rdt_ctr_history *h);
void rdt_ctr_history_add(struct rdt_ctr_history *h, const struct rdt_event *ev);
/* Counters of @dev on @host were sampled at all. */
bool rdt_ctr_history_seen(const struct rdt_ctr_history *h, uint32_t host,
			  const char *dev);
/* Up to @max error counters of @dev that moved after @since, into @out;
 * *more: those past @max. */
size_t rdt_ctr_history_moved(const struct rdt_ctr_history *h, uint32_t host,
			     const char *dev, uint64_t since,
			     struct rdt_ctr_move *out, size_t max, size_t *more);
/* Counters not kept (over the cap, or no memory). */
uint64_t rdt_ctr_history_dropped(const struct rdt_ctr_history *h);

/* RDMA device names and their ib_device indexes, from RDMA netlink
 * (devindex.c): 0 with *v (free() it) and *n, or -errno. */
struct rdt_devindex {
	char		name[RDT_NAME_LEN + 1];
	uint32_t	index;
};
int rdt_devindex_read(struct rdt_devindex **v, size_t *n);

/*
 * Clocks of several hosts aligned from rxe's packets (clock_align.c): an
 * RDT_EV_RXE_XMIT on one host and the RDT_EV_RXE_RCV of the same packet on
 * another bound the offset between their clocks.
 *
 * The collector keeps, per message key (destination QPN, PSN, BTH opcode)
 * and host, the earliest send and receive; memory is bounded by @cap
 * entries (a key kept if hash mod M == 0, M doubling at the cap).
 */
struct rdt_xpairs;
struct rdt_xpairs *rdt_xpairs_new(size_t cap);
void rdt_xpairs_free(struct rdt_xpairs *p);
/* @rec of any type (only RXE_XMIT and RXE_RCV are kept); @ts on one time
 * base for every host (header-aligned realtime, or the merge's). */
void rdt_xpairs_add(struct rdt_xpairs *p, uint32_t host, uint64_t ts,
		    const union rdt_record *rec);
typedef void (*rdt_xpair_fn)(void *ctx, uint32_t send_host,
			     uint32_t recv_host, uint64_t t_send,
			     uint64_t t_recv);
/* One raw record of host @host's file (@len bytes), at @realtime_offset +
 * its stamp: kept if RXE_XMIT or RXE_RCV.  < 0 for a record rdt_decode()
 * refuses: the rest of that file is left alone. */
int rdt_xpairs_add_raw(struct rdt_xpairs *p, uint32_t host,
		       int64_t realtime_offset, const void *rec, size_t len);
/* Every (earliest send, earliest receive) pair of a key on two hosts. */
void rdt_xpairs_join(struct rdt_xpairs *p, rdt_xpair_fn fn, void *ctx);
uint64_t rdt_xpairs_sampling(const struct rdt_xpairs *p);	/* M */
#define RDT_XPAIRS_CAP	(1u << 19)
/* RDT_XPAIRS_CAP, or $RDT_CLOCK_KEYS (1024 or more: the tests' cap). */
size_t rdt_xpairs_cap(void);

/* The estimate: per host, clock(host) - clock(host 0) as a function of its
 * own header-aligned clock; @names[i] names host i in the report. */
struct rdt_clock;
struct rdt_clk_host;
struct rdt_clock *rdt_clock_estimate(struct rdt_xpairs *x, uint32_t nhost,
				     const char *const *names);
void rdt_clock_free(struct rdt_clock *c);
/* NULL for the reference host and hosts that keep the header offset. */
const struct rdt_clk_host *rdt_clock_host(const struct rdt_clock *c,
					  uint32_t host);
/* int64_t rdt_clock_corr(h, ts): declared with rdt_src_ts(), its user. */
/* The host pair that aligned @host: its reference, mean offset, error. */
bool rdt_clock_host_info(const struct rdt_clock *c, uint32_t host,
			 uint32_t *ref, int64_t *offset_ns, int64_t *error_ns,
			 uint64_t *pairs);
const char *rdt_clock_report(const struct rdt_clock *c);	/* lines */

/* Hosts of a started reader (distinct boot ids): how many, and a name for
 * each (the file header's host name, with the file's name when two hosts
 * share one). */
unsigned int rdt_reader_nhosts(const struct rdt_reader *r);
const char *rdt_reader_host_name(const struct rdt_reader *r, unsigned int host);
const char *rdt_reader_host_label(const struct rdt_reader *r, unsigned int host,
				  char *buf, size_t len);
const struct rdt_clock *rdt_reader_clock(const struct rdt_reader *r);

/* --stats of the port counters (stats_counters.c). */
struct rdt_ctr_stats;
struct rdt_ctr_stats *rdt_ctr_stats_new(void);
void rdt_ctr_stats_free(struct rdt_ctr_stats *s);
void rdt_ctr_stats_add(struct rdt_ctr_stats *s, const struct rdt_event *ev);
void rdt_ctr_stats_window(struct rdt_ctr_stats *s, const struct rdt_event *ev);
void rdt_ctr_stats_print(struct rdt_ctr_stats *s, FILE *o);
void rdt_ctr_stats_print_json(struct rdt_ctr_stats *s, FILE *o);
/* stats_slow.c: --stats' slow collectives (marked begin/end) */
struct rdt_slow;
struct rdt_slow *rdt_slow_new(void);
void rdt_slow_free(struct rdt_slow *s);
void rdt_slow_mark(struct rdt_slow *s, const struct rdt_event *ev);
void rdt_slow_wr(struct rdt_slow *s, uint32_t host, uint32_t pid,
		 uint32_t dev, uint32_t qpn, uint64_t wr_id, uint64_t post_ts,
		 uint64_t done_ts);
void rdt_slow_retry(struct rdt_slow *s, uint32_t host, uint32_t pid, bool rnr);
void rdt_slow_counter(struct rdt_slow *s, const struct rdt_event *ev);
/* One rank's whole span of a collective known only once it is over (NCCL's
 * through its profiler plugin: its kernel channels' GPU time). */
struct rdt_slow_span {
	const char *name;
	uint64_t comm, seq;		/* commHash, seqNumber */
	uint64_t count;			/* elements */
	int32_t rank, nranks;		/* nranks <= 0: not known */
	uint32_t host, pid;
	uint64_t begin, end;		/* trace clock */
	uint64_t wr_lat, wr_id, wr_post;	/* its slowest WR; lat 0: none */
	uint32_t wr_dev, wr_qpn;
};
void rdt_slow_span(struct rdt_slow *s, const struct rdt_slow_span *sp);
void rdt_slow_print(struct rdt_slow *s, FILE *o);
void rdt_slow_print_json(struct rdt_slow *s, FILE *o);

#endif
