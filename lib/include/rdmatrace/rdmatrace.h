/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * librdmatrace: read rdmatrace sources (live relay, live BPF, trace files),
 * merge them into one timeline, decode, filter, format and store them.
 *
 * Typical use:
 *	r = rdt_reader_new(NULL);
 *	rdt_reader_add_file(r, "a.rdt");
 *	s = rdt_sink_open(RDT_FMT_TEXT, "-", r, err, sizeof(err));
 *	while ((n = rdt_reader_next(r, &ev, -1)) > 0)
 *		rdt_sink_write(s, &ev);
 *	rdt_sink_close(s, r);
 *	if (n < 0) fprintf(stderr, "%s\n", rdt_reader_error(r));
 *
 * A live reader (follow) flushes the sinks hung off an rdt_pipeline
 * whenever it waits; see "the pipeline" below.
 */
#ifndef RDMATRACE_RDMATRACE_H
#define RDMATRACE_RDMATRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <rdmatrace/wire.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RDT_LIB_VERSION		"0.1.0"

/* ---- decoding ------------------------------------------------------------ */

/* Every record type of the wire format, for an aligned typed copy. */
/* schema/gen.py: union rdt_record */
union rdt_record {
	struct rdt_hdr			hdr;
	struct rdt_ev_subbuf		subbuf;
	struct rdt_ev_comm		comm;
	struct rdt_ev_clock		clock;
	struct rdt_ev_lost		lost;
	struct rdt_ev_port_counter	port_counter;
	struct rdt_ev_stuck		stuck;
	struct rdt_ev_device		device;
	struct rdt_ev_pd		pd;
	struct rdt_ev_cq		cq;
	struct rdt_ev_qp_create		qp_create;
	struct rdt_ev_qp_modify		qp_modify;
	struct rdt_ev_qp_destroy	qp_destroy;
	struct rdt_ev_mr		mr;
	struct rdt_ev_post_send		post_send;
	struct rdt_ev_post_send_db	post_send_db;
	struct rdt_ev_post_recv		post_recv;
	struct rdt_ev_post_fail		post_fail;
	struct rdt_ev_poll_cq_wc	wc;
	struct rdt_ev_poll_cq		poll_cq;
	struct rdt_ev_req_notify_cq	req_notify;
	struct rdt_ev_nccl_call		nccl_call;
	struct rdt_ev_nccl_comm		nccl_comm;
	struct rdt_ev_rxe_cqe		rxe_cqe;
	struct rdt_ev_rxe_rcv		rxe_rcv;
	struct rdt_ev_rxe_xmit		rxe_xmit;
	struct rdt_ev_rxe_retry		rxe_retry;
	struct rdt_ev_tcp_retransmit	tcp;
	struct rdt_ev_coll_mark		coll_mark;
	struct rdt_ev_coll_step		coll_step;
	struct rdt_ev_np_comm		np_comm;
	struct rdt_ev_np_group		np_group;
	struct rdt_ev_np_api		np_api;
	struct rdt_ev_np_kernel_launch	np_kernel_launch;
	struct rdt_ev_np_coll		np_coll;
	struct rdt_ev_np_p2p		np_p2p;
	struct rdt_ev_np_proxy_op	np_proxy_op;
	struct rdt_ev_np_proxy_step	np_proxy_step;
	struct rdt_ev_np_proxy_ctrl	np_proxy_ctrl;
	struct rdt_ev_np_kernel_ch	np_kernel_ch;
	struct rdt_ev_np_net_ib		np_net_ib;
	struct rdt_ev_np_net_sock	np_net_sock;
	struct rdt_ev_np_net		np_net;
	struct rdt_ev_np_state		np_state;
	struct rdt_ev_np_stop		np_stop;
	struct rdt_ev_np_skip		np_skip;
	struct rdt_ev_np_coll_old	np_coll_old;
	/* Its size is the ABI: a new type fits in it (schema/records.py). */
	uint8_t				raw[184];
};
/* schema/gen.py: end */

enum rdt_decode_result {
	RDT_DEC_OK		= 0,	/* *out holds the record */
	RDT_DEC_UNKNOWN		= 1,	/* valid header, type unknown: skip *consumed */
	RDT_DEC_NEED_MORE	= 2,	/* buffer ends inside the record */
	RDT_DEC_CORRUPT		= 3,	/* bad magic or impossible size */
	RDT_DEC_NEWER_ABI	= 4,	/* header version > RDT_ABI_MAJOR */
};

/*
 * Validate and copy one record from @buf.  *consumed is the record's size
 * for OK and UNKNOWN.  @why (may be NULL) gets a short reason for CORRUPT.
 */
enum rdt_decode_result rdt_decode(const void *buf, size_t len,
				  union rdt_record *out, size_t *consumed,
				  const char **why);

size_t rdt_record_size(unsigned int type);	/* 0: unknown type */
const char *rdt_type_name(unsigned int type);	/* "post_send", NULL if unknown */
int rdt_type_from_name(const char *name);	/* -1 if unknown */
const char *rdt_source_name(unsigned int source); /* "kmod", "bpf", "user" */
/* NCCL profiler plugin: an RDT_NP_* type bit ("Coll"), a v5 state. */
const char *rdt_np_type_name(unsigned int ntype);
const char *rdt_np_state_name(unsigned int state);
const char *rdt_qp_state_name(unsigned int state);
const char *rdt_wr_opcode_name(unsigned int opcode);
const char *rdt_wc_opcode_name(unsigned int opcode);
const char *rdt_wc_status_name(unsigned int status);
const char *rdt_nccl_fn_name(unsigned int fn);
int rdt_nccl_type_size(int datatype);		/* bytes, 0 if unknown */
/* QPN of a record that has one; false otherwise. */
bool rdt_record_qpn(const union rdt_record *rec, uint32_t *qpn);
/* A verb's time in its driver (ABI 1.9; ts_ns is when it returned); 0 for
 * records without one, or of an older module. */
uint64_t rdt_record_dur(const union rdt_record *rec);

/* ---- reader: sources + k-way merge ---------------------------------------- */

struct rdt_event {
	union rdt_record rec;	/* aligned, validated copy */
	uint64_t	ts;	/* on the reader's time base (rdt_reader_time_base) */
	uint64_t	seq;	/* arrival order within its source */
	uint32_t	src;	/* index of the source in the reader */
	uint32_t	flags;	/* RDT_EVF_* */
	uint32_t	host;	/* index of the distinct boot (host) it came from */
	const char	*comm;	/* task name from RDT_EV_COMM, "" if unknown */
	const char	*devname; /* from RDT_EV_DEVICE_*, "" if unknown */
};

/* Made by the reader from other records (e.g. a LOST from a SUBBUF's
 * cumulative count); binary writers skip it because re-reading the
 * original records makes it again. */
#define RDT_EVF_DERIVED		0x1
/* Live: handed out after a later event had gone out (its writer stalled
 * past what the reader waits for): out of place in the stream, counted in
 * rdt_source_stats.late; every sink marks it. */
#define RDT_EVF_LATE		0x2

enum rdt_time_base {
	RDT_TIME_MONOTONIC	= 0,	/* one boot: raw CLOCK_MONOTONIC ns */
	RDT_TIME_REALTIME	= 1,	/* several boots/hosts: ts + realtime offset */
};

enum rdt_source_kind {
	RDT_SOURCE_FILE		= 1,
	RDT_SOURCE_RELAY	= 2,
	RDT_SOURCE_BPF		= 3,
	RDT_SOURCE_CUSTOM	= 4,
	RDT_SOURCE_NCCL_PLUGIN	= 5,	/* libnccl-profiler-rdmatrace.so rings */
	RDT_SOURCE_COUNTERS	= 6,	/* port counters sampled from sysfs */
};

/* How files of several boots (hosts) are put on one time base. */
enum rdt_clock_align {
	/* each file header's realtime offset, then, between hosts whose
	 * rxe packets were traced on both sides (RDT_EV_RXE_XMIT on one,
	 * RDT_EV_RXE_RCV on the other, both directions), the offset the
	 * messages bound */
	RDT_CLOCK_ALIGN_AUTO	= 0,
	RDT_CLOCK_ALIGN_HEADER	= 1,	/* the header offsets only */
};

struct rdt_reader_opts {
	size_t		sz;		/* sizeof(struct rdt_reader_opts) */
	/* Live mode: keep sources open and wait for data (--follow). */
	bool		follow;
	/* Live mode: hold events this long so late ones from other CPUs or
	 * sources still sort before them; 0 = default (100 ms). */
	uint64_t	reorder_window_ns;
	/* Live mode: emit early once this many events are buffered; 0 = 1M. */
	size_t		max_buffered;
	/* enum rdt_clock_align */
	int		clock_align;
};

/* Statistics of one source; every counter is since the source was added. */
struct rdt_source_stats {
	const char	*name;		/* path or description */
	enum rdt_source_kind kind;
	uint64_t	records;	/* records decoded */
	uint64_t	bytes;
	uint64_t	unknown;	/* records of unknown type, skipped */
	uint64_t	lost;		/* events the producers lost (all CPUs) */
	uint64_t	lost_by[8];	/* by enum rdt_source of the producer */
	uint64_t	late;		/* live: arrived after their window, out of order */
	uint32_t	ncpus;		/* entries in lost_cpu */
	const uint64_t	*lost_cpu;	/* lost per producer CPU */
	bool		failed;		/* stopped at an error (see error) */
	const char	*error;		/* "" if none */
	/* Relay sub-buffers that were never read (a gap in the SUBBUF
	 * sequence of a CPU): the events in them are lost, count unknown. */
	uint64_t	subbufs_skipped;
	/* Records a relay read() returned twice or stale, because it raced
	 * a sub-buffer switch: dropped, and not loss. */
	uint64_t	relay_repeats;
	/* Relay: corrupt bytes skipped to the next sub-buffer header (the
	 * kernel's buffer cannot be read again, so the reader resynchronises
	 * rather than stop); the events in them are lost, count unknown.
	 * resyncs is how often; corrupt_first where and why the first one
	 * was ("" if none). */
	uint64_t	corrupt_bytes;
	uint64_t	resyncs;
	const char	*corrupt_first;
	/* Live inputs another user writes (the NCCL plugin's ring files):
	 * detached is how many were given up on while read, because they
	 * changed under the reader (truncated, their indexes rewritten): the
	 * events still in them are lost, count unknown; detached_first says
	 * which and why ("" if none).  skipped_files: files not read at all,
	 * as not to be trusted (another user's, a link, a lying header). */
	uint64_t	detached;
	const char	*detached_first;
	uint64_t	skipped_files;
};

/* A pollable producer of wire records, e.g. the BPF ring buffer. */
struct rdt_source_ops {
	int	(*fd)(void *ctx);	/* pollable fd, or -1 */
	/* Deliver every available record to cb; return records or -errno. */
	int	(*consume)(void *ctx, int (*cb)(void *cbctx, const void *rec,
						 size_t len), void *cbctx);
	uint64_t (*dropped)(void *ctx);	/* cumulative records lost, may be NULL */
	void	(*close)(void *ctx);	/* may be NULL */
};

struct rdt_reader;

struct rdt_reader *rdt_reader_new(const struct rdt_reader_opts *opts);
void rdt_reader_free(struct rdt_reader *r);

/* Each returns the new source's index, or -errno with rdt_reader_error() set
 * to a one-line message naming the cause. */
int rdt_reader_add_file(struct rdt_reader *r, const char *path);
/* @dir: e.g. /sys/kernel/debug/rdmatrace (trace0..N, version, dropped). */
int rdt_reader_add_relay(struct rdt_reader *r, const char *dir);
int rdt_reader_add_source(struct rdt_reader *r, const char *name,
			  const struct rdt_source_ops *ops, void *ctx);
/* BPF programs of producers/bpf/ (NCCL, rxe, TCP).  @bpf_opts is a
 * struct rdt_bpf_opts * from producers/bpf/rdt_bpf.h; -ENOTSUP if built without. */
int rdt_reader_add_bpf(struct rdt_reader *r, const void *bpf_opts);
bool rdt_have_bpf(void);
/* NCCL profiler plugin rings in @dir (NULL: $RDMATRACE_NCCL_DIR, else
 * /dev/shm), one file per process; live readers pick up new processes. */
int rdt_reader_add_nccl_plugin(struct rdt_reader *r, const char *dir);
/* How many processes' ring files are in @dir now (NULL: as above). */
unsigned int rdt_nccl_plugin_files(const char *dir);
/*
 * Port counters of every RDMA device, from @sysfs_root/class/infiniband/
 * (@sysfs_root NULL: $RDT_SYSFS_ROOT, else /sys): sampled when added,
 * every @period_ms while a live reader runs (0: 1000) and when it stops;
 * one RDT_EV_PORT_COUNTER per counter that changed between two samples.
 * A one-shot reader samples once more at its first read.  Files that
 * cannot be read or parsed are skipped, counted and named in the
 * source's status (rdt_reader_source_status).
 */
int rdt_reader_add_counters(struct rdt_reader *r, const char *sysfs_root,
			    unsigned int period_ms);
/* The same, with options; @sz first so that the struct can grow. */
struct rdt_counters_opts {
	size_t		sz;		/* sizeof(struct rdt_counters_opts) */
	const char	*sysfs_root;	/* NULL: as above */
	unsigned int	period_ms;	/* 0: 1000 */
	/* Also each counter's first value (at the add's sample, or when it
	 * appears later), as a record with delta 0: every counter is then
	 * in the trace, the ones that never move too (--metrics). */
	bool		first_values;
};
int rdt_reader_add_counters_opts(struct rdt_reader *r,
				 const struct rdt_counters_opts *opts);

/*
 * Next event in timestamp order; ties are broken by source index, then
 * CPU, then arrival order, so the output is deterministic.
 * Returns 1 (event), 0 (end of input, or stopped and drained), -EAGAIN
 * (live: nothing ready within @timeout_ms; -1 waits) or another -errno
 * once every event before the failure has been returned.
 */
int rdt_reader_next(struct rdt_reader *r, struct rdt_event *ev, int timeout_ms);
/*
 * rdt_reader_next() for a consumer that keeps records as they are (a
 * trace file writer, a counter): the record is not copied.  ref->rec
 * points at its validated bytes, ref->len of them (its type's size, or
 * less for an older ABI minor's shorter record), valid until the next
 * call on @r.  @ev gets ts, seq, src, flags and host; ev->rec is not
 * written, and comm and devname are "" (no names are looked up).
 */
struct rdt_rec_ref {
	const void	*rec;
	size_t		len;
};
int rdt_reader_next_ref(struct rdt_reader *r, struct rdt_event *ev,
			struct rdt_rec_ref *ref, int timeout_ms);
/*
 * The event @ev, @ref of rdt_reader_next_ref() whole, as rdt_reader_next()
 * would have given it: the record copied into ev->rec and the names looked
 * up.  For the few events a by-reference consumer needs whole; valid until
 * the next call on @r.
 */
void rdt_reader_ref_event(struct rdt_reader *r, struct rdt_event *ev,
			  const struct rdt_rec_ref *ref);
/* Live: stop reading; next() drains what is buffered, then returns 0. */
void rdt_reader_stop(struct rdt_reader *r);

const char *rdt_reader_error(const struct rdt_reader *r);
/*
 * Files of several boots, RDT_CLOCK_ALIGN_AUTO: align their clocks now, in
 * a first pass over the files (else the first rdt_reader_next() does), so
 * that the report is there before the events.  Call it once every source
 * was added.  Returns 0, or -errno where the pass could not read a file
 * (the header offsets are then kept).
 */
int rdt_reader_align_clocks(struct rdt_reader *r);
/* Lines on what the alignment found ("clock offset B - A: X us (± Y us,
 * from N message pairs)", or why a host keeps its header offset); "" if
 * it did not run. */
const char *rdt_reader_clock_report(const struct rdt_reader *r);
enum rdt_time_base rdt_reader_time_base(const struct rdt_reader *r);
unsigned int rdt_reader_nsources(const struct rdt_reader *r);
int rdt_reader_source_stats(const struct rdt_reader *r, unsigned int i,
			    struct rdt_source_stats *st);
/* The source's file header (synthesised from this host for live ones) and
 * its "KEY=VALUE\n" metadata text. */
const struct rdt_file_hdr *rdt_reader_file_hdr(const struct rdt_reader *r,
					       unsigned int i);
const char *rdt_reader_meta(const struct rdt_reader *r, unsigned int i);
/* Status lines a producer printed when it opened (e.g. which BPF
 * programs attached and why others did not); "" if none. */
const char *rdt_reader_source_status(const struct rdt_reader *r,
				     unsigned int i);
/* Totals over every source. */
uint64_t rdt_reader_lost(const struct rdt_reader *r);
uint64_t rdt_reader_unknown(const struct rdt_reader *r);
/* The latest event time rdt_reader_next() has returned (0: none yet): a
 * clock that follows the trace, for checks made against trace time. */
uint64_t rdt_reader_last_ts(const struct rdt_reader *r);

/* Fill @h for this host, as a live source or a trace file writer records
 * it (@relay_dir, may be NULL, supplies the module version). */
void rdt_local_file_hdr(struct rdt_file_hdr *h, const char *relay_dir);

/*
 * The module's relay directory (@dir, e.g. /sys/kernel/debug/rdmatrace).
 * Switch its tracing on or off: 1 if this changed it, 0 if it already was,
 * -errno (-ENOENT: no `enable` file there).
 */
int rdt_relay_set_enable(const char *dir, bool on);
/* The ABI major its `version` file names ("abi 1.2"), its first line into
 * @text; -1 if it names none (then the record headers decide). */
int rdt_relay_abi_major(const char *dir, char *text, size_t len);
/* A `dropped` file at @path ("cpuN COUNT" lines and "total COUNT"): the
 * per-CPU counts into (*v)[], grown as needed (free() it); returns the
 * total, or -1 if the file cannot be read. */
long long rdt_relay_read_dropped(const char *path, uint64_t **v,
				 unsigned int *nv);
/*
 * A capture directory (rdmatrace-record -D DIR, read back by
 * rdt_reader_add_relay(DIR)): the module's trace<cpu> files as relay gave
 * them, beside the module's facts when the recording began and ended.
 */
/* The recording host's header.  A relay directory holding it is a saved
 * capture, not the live module. */
#define RDT_SAVED_HEADER "header.rdt"
/* Its port counters, a trace file (rdmatrace-record --counters). */
#define RDT_SAVED_COUNTERS "counters.rdt"
/* The module's drop counters when the recording began (`dropped` holds
 * them at its end, written last). */
#define RDT_SAVED_DROPPED_START "dropped.start"
/* (TSC, CLOCK_MONOTONIC) pairs the recorder sampled around its reads, to
 * convert the module's raw TSC stamps (<rdmatrace/wire.h>, RDT_TS_RAW). */
#define RDT_SAVED_CLOCK "clock.pairs"
/* Whether @dir holds a saved capture. */
bool rdt_capture_is_saved(const char *dir);
/* Whether @dir holds a capture's file already: 1 (its name into @name,
 * may be NULL), 0, or -errno. */
int rdt_capture_find(const char *dir, char *name, size_t len);
/* A capture of @relay_dir begins in @dir: this host's header, the
 * module's version, n_subbufs and drop counters (none replaced).  0 or
 * -errno; rdt_capture_undo() takes back what it made. */
int rdt_capture_begin(const char *dir, const char *relay_dir);
/* A clock pair sampled now, appended to @dir's RDT_SAVED_CLOCK when
 * @force or 100 ms after *@last_ns (the last one's time, updated).  The
 * recorder calls it after each round of reads, so that every record it
 * saved has a pair after it.  0 or -errno. */
int rdt_capture_clock(const char *dir, uint64_t *last_ns, bool force);
/* It ends: a last clock pair, the module's drop counters now.  0 or
 * -errno. */
int rdt_capture_end(const char *dir, const char *relay_dir);
/* Remove the files rdt_capture_begin() and the port counters made (not
 * the trace<cpu> copies, which are the recorder's). */
void rdt_capture_undo(const char *dir);

/* A trace file header for this host and no records (@relay_dir, may be
 * NULL, supplies the module version): what rdmatrace-record saves as
 * DIR/header.rdt beside the raw trace<cpu> files, so that the relay source
 * reading DIR later reports the host the data came from.  0 or -errno. */
int rdt_write_local_header(FILE *f, const char *relay_dir);

/* ---- filters --------------------------------------------------------------- */

struct rdt_filter;
struct rdt_filter *rdt_filter_new(void);
void rdt_filter_free(struct rdt_filter *f);
/* Comma-separated lists; 0 or -EINVAL with *bad naming the bad item. */
int rdt_filter_add_dev(struct rdt_filter *f, const char *list);	/* names or indexes */
int rdt_filter_add_qpn(struct rdt_filter *f, const char *list);
int rdt_filter_add_pid(struct rdt_filter *f, const char *list);
int rdt_filter_add_type(struct rdt_filter *f, const char *list);	/* type names */
/* Bookkeeping records (SUBBUF, COMM, LOST, DEVICE_*) always match: loss
 * is never filtered away and names stay resolvable. */
bool rdt_filter_match(const struct rdt_filter *f, const struct rdt_event *ev);
/* Nothing added: every event matches (a caller may then skip the test,
 * and need not copy events for it: rdt_reader_next_ref()). */
bool rdt_filter_empty(const struct rdt_filter *f);

/* ---- sinks ------------------------------------------------------------------ */

enum rdt_format {
	RDT_FMT_TEXT = 0,	/* blkparse-like fixed columns */
	RDT_FMT_JSON,		/* JSON Lines */
	RDT_FMT_PERFETTO,	/* Chrome trace JSON for ui.perfetto.dev */
	RDT_FMT_SQLITE,		/* see lib/SCHEMA.md */
	RDT_FMT_BINARY,		/* trace file (rdt_file_hdr + records) */
};

int rdt_format_from_name(const char *name);	/* -1 if unknown */

struct rdt_sink;
/* @path "-" = stdout (not for sqlite).  The reader supplies source headers
 * and, at close, the drop statistics every format carries. */
struct rdt_sink *rdt_sink_open(enum rdt_format fmt, const char *path,
			       struct rdt_reader *r, char *err, size_t errlen);
int rdt_sink_write(struct rdt_sink *s, const struct rdt_event *ev);
/* Writes the end-of-run summary (drops); returns 0 or -errno. */
int rdt_sink_close(struct rdt_sink *s, struct rdt_reader *r);
const char *rdt_sink_error(const struct rdt_sink *s);
/* Hands what the sink holds to its file (a pipeline does it whenever a
 * live reader waits); 0 or -errno. */
int rdt_sink_flush(struct rdt_sink *s);

/* ---- statistics (--stats) ---------------------------------------------------- */

struct rdt_stats;
struct rdt_stats *rdt_stats_new(void);
void rdt_stats_free(struct rdt_stats *st);
void rdt_stats_add(struct rdt_stats *st, const struct rdt_event *ev);
/* Post -> completion latency of WRs matched by (dev, qpn, wr_id, send/recv). */
uint64_t rdt_stats_wr_matched(const struct rdt_stats *st);
uint64_t rdt_stats_wr_unmatched_completions(const struct rdt_stats *st);
/* Quantile q in [0,1] of matched latencies (ns, exact); -ENOENT if none. */
int rdt_stats_wr_latency(const struct rdt_stats *st, double q, uint64_t *ns);
void rdt_stats_print(const struct rdt_stats *st, const struct rdt_reader *r,
		     FILE *out);
void rdt_stats_print_json(const struct rdt_stats *st,
			  const struct rdt_reader *r, FILE *out);

/* ---- where is it stuck (--stuck) ---------------------------------------------- */

/*
 * Per QP, the send WRs posted and not completed, from every source; a QP
 * whose oldest has waited @limit_ns or more is stuck.  Times are on the
 * reader's time base (rdt_event.ts).  Report lines start with "stuck: "
 * and are key=value after the first word (README, "Where is it stuck").
 */
struct rdt_stuck;
struct rdt_stuck *rdt_stuck_new(uint64_t limit_ns);
void rdt_stuck_free(struct rdt_stuck *s);
void rdt_stuck_add(struct rdt_stuck *s, const struct rdt_event *ev);
/* Live: the ranks of host 0 are this machine's processes, and a report
 * says which is stopped (SIGSTOP, a debugger) or gone, from /proc. */
void rdt_stuck_watch_procs(struct rdt_stuck *s, bool on);
/* At @now: print a report to @out when what is stuck changed, and a
 * "moving" line once nothing is; returns 1 while something is stuck. */
int rdt_stuck_check(struct rdt_stuck *s, const struct rdt_reader *r,
		    uint64_t now, FILE *out);
/* The current picture, whatever the limit (SIGUSR1). */
void rdt_stuck_print(struct rdt_stuck *s, const struct rdt_reader *r,
		     uint64_t now, FILE *out);
/* How many times something became stuck. */
uint64_t rdt_stuck_episodes(const struct rdt_stuck *s);
/* "stuck: episodes=N", then one line for each kind of state not kept
 * (QPs, send WRs, ranks, NCCL events, port counters past their caps). */
void rdt_stuck_print_summary(const struct rdt_stuck *s, FILE *o);
/* Each report of rdt_stuck_check() also as records (RDT_EV_STUCK, one a
 * line: the cause, each stuck QP, each rank waiting in a collective), and
 * its end (RDT_EV_UNSTUCK), handed to @fn as they are made: a tool writes
 * them into the trace it makes (ABI 1.11). */
typedef void (*rdt_stuck_record_fn)(void *ctx, const struct rdt_event *ev);
void rdt_stuck_on_record(struct rdt_stuck *s, rdt_stuck_record_fn fn,
			 void *ctx);

/* What is stuck at @now against the tracker's limit, as numbers (for
 * gauges): cheap enough for each scrape, not for each event. */
struct rdt_stuck_gauges {
	uint64_t	qps;		/* QPs waiting the limit or more */
	uint64_t	send_wrs;	/* send WRs outstanding on them */
	uint64_t	collectives;	/* ranks waiting in a collective */
	uint64_t	oldest_ns;	/* the longest such QP wait */
	uint64_t	episodes;	/* rdt_stuck_episodes() */
};
void rdt_stuck_gauges(const struct rdt_stuck *s, uint64_t now,
		      struct rdt_stuck_gauges *g);

/* ---- fleet metrics (--metrics) -------------------------------------------------- */

/*
 * The events as Prometheus counters and histograms: per QP (WRs and bytes
 * by opcode, completions, completions with an error by status, rxe's
 * retries, post -> completion latency), per collective (count, bytes,
 * enqueue and run time; NCCL plugin, uprobes, USDT marks), every port
 * counter, each source's records and losses, --stuck's gauges.  Bounded:
 * past max_qps QPs (max_colls collectives) new ones count in one "other"
 * series; a destroyed QP's series moves into "other" after qp_expire_ns.
 * Not thread-safe: one thread adds and renders (the reader's); serve the
 * rendered page from another.  README, "Fleet metrics", lists the names.
 */
struct rdt_metrics_opts {
	size_t		sz;		/* sizeof(struct rdt_metrics_opts) */
	unsigned int	max_qps;	/* 0: 1000 */
	unsigned int	max_colls;	/* 0: 1000 */
	unsigned int	max_port_counters; /* 0: 4096 */
	uint64_t	qp_expire_ns;	/* trace time; 0: 300 s */
};
struct rdt_metrics;
struct rdt_metrics *rdt_metrics_new(const struct rdt_metrics_opts *opts);
void rdt_metrics_free(struct rdt_metrics *m);
void rdt_metrics_add(struct rdt_metrics *m, const struct rdt_event *ev);
/*
 * The same for an event of rdt_reader_next_ref(), its record at @rec
 * (@len bytes: ref->rec, ref->len), where the common case allows (a send
 * or its completion on a QP already known): true.  False: nothing was
 * counted, and the caller passes the whole event (rdt_reader_ref_event())
 * to rdt_metrics_add().
 */
bool rdt_metrics_add_rec(struct rdt_metrics *m, const struct rdt_event *ev,
			 const void *rec, size_t len);
/* --stuck's tracker: its gauges in each page (it must outlive @m's use). */
void rdt_metrics_watch_stuck(struct rdt_metrics *m, struct rdt_stuck *s);
/* The input ended: what waits for later events (a collective's GPU time,
 * kept for its children) is counted now. */
void rdt_metrics_finish(struct rdt_metrics *m);
/* QPs with series of their own (at most max_qps). */
size_t rdt_metrics_qp_series(const struct rdt_metrics *m);
/*
 * The Prometheus text exposition (format 0.0.4) of everything so far into
 * *buf (malloc'd, *len bytes; free() it), as of @now on the reader's time
 * base (0: the last event's): @r (may be NULL) supplies host names and
 * the sources' statistics.  0 or -ENOMEM.
 */
int rdt_metrics_render(struct rdt_metrics *m, const struct rdt_reader *r,
		       uint64_t now, char **buf, size_t *len);

/* ---- the pipeline: the sinks a caller hangs off a reader -------------------- */

/*
 *	p = rdt_pipeline_new(r);
 *	rdt_pipeline_add_sink(p, s);		in the order they get events
 *	while (rdt_reader_next(r, &ev, ms) == 1)
 *		if (rdt_pipeline_write(p, &ev) < 0) ...rdt_pipeline_error(p)
 *	rdt_pipeline_free(p);			then close the sinks
 *
 * A live reader's pipeline flushes its sinks whenever the reader waits.
 * It owns none of them: free it, then close them.  The analyses
 * (rdt_stats_add(), rdt_stuck_add(), rdt_metrics_add()) take the same
 * events from the caller.
 */
struct rdt_pipeline;
struct rdt_pipeline *rdt_pipeline_new(struct rdt_reader *r);
int rdt_pipeline_add_sink(struct rdt_pipeline *p, struct rdt_sink *s);
/* 0, or the -errno of a sink's write that failed (it stops there). */
int rdt_pipeline_write(struct rdt_pipeline *p, const struct rdt_event *ev);
/* Whether every sink of @p takes an event of rdt_reader_next_ref() as it
 * is (the binary writer; none at all); then rdt_pipeline_write_ref()
 * writes one, else it fails with -EINVAL. */
bool rdt_pipeline_takes_refs(const struct rdt_pipeline *p);
int rdt_pipeline_write_ref(struct rdt_pipeline *p, const struct rdt_event *ev,
			   const struct rdt_rec_ref *ref);
/* The same, but every sink gets @ev even after one failed: records an
 * analysis makes (--stuck's reports). */
int rdt_pipeline_write_sinks(struct rdt_pipeline *p,
			     const struct rdt_event *ev);
const char *rdt_pipeline_error(const struct rdt_pipeline *p);
void rdt_pipeline_free(struct rdt_pipeline *p);

#ifdef __cplusplus
}
#endif
#endif /* RDMATRACE_RDMATRACE_H */
