// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace-dump: print, store or summarise rdmatrace traces, live (relay
 * + BPF) or from trace files, like blkparse does for blktrace.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>
#include "metrics_http.h"
#ifdef RDT_HAVE_BPF
#include "rdt_bpf.h"
#endif

#define DEFAULT_RELAY "/sys/kernel/debug/rdmatrace"

static volatile sig_atomic_t stop_requested, picture_requested;
/*
 * --stuck: the trace time at which the next check is due, which SIGUSR1
 * sets to 0, so that the main loop tests one value per event, not that
 * and a flag.  A lock-free atomic may be written by a handler (C11
 * 7.14.1.1); relaxed: it is only ever a hint to call stuck_tick().
 */
static _Atomic uint64_t stuck_due;
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "stuck_due must be lock-free");

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	picture_requested = 1;
	atomic_store_explicit(&stuck_due, 0, memory_order_relaxed);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rdmatrace-dump [OPTIONS]\n"
"Print, store or summarise the rdmatrace timeline (RDMA verbs, rxe internals,\n"
"NCCL calls, TCP retransmits), live or from trace files.\n"
"\n"
"Input (default: live, what the relay buffers and BPF hold now):\n"
"  -i, --input FILE      read a trace file; repeat to merge (e.g. several hosts)\n"
"  -f, --follow          live until Ctrl-C/SIGTERM, then flush and report drops\n"
"  -d, --relay-dir DIR   relay directory (default " DEFAULT_RELAY "),\n"
"                        or a capture saved by rdmatrace-record\n"
"      --no-relay        live without rdmatrace.ko (BPF sources only)\n"
"      --no-bpf          live without the BPF sources\n"
"      --no-nccl-plugin  live without the NCCL profiler plugin's rings\n"
"                        (libnccl-profiler-rdmatrace.so; default: read the\n"
"                        rings of every process that loaded it, in\n"
"                        $RDMATRACE_NCCL_DIR or /dev/shm)\n"
"      --counters[=MS]   every RDMA device's port counters (sysfs counters/ and\n"
"                        hw_counters/), sampled every MS ms (default 1000),\n"
"                        at the start and at the end: a port_counter event\n"
"                        per counter that moved (default with --follow;\n"
"                        $RDT_SYSFS_ROOT replaces /sys); with --metrics also\n"
"                        one per counter at its first sample (delta 0)\n"
"      --no-counters     live without the port counters\n"
"      --nccl[=PATH|PID] NCCL uprobes (default target: every libnccl.so.2 found)\n"
"      --rxe[=packets]   rdma_rxe completions and retries, each completion with\n"
"                        its QP's packets and bytes since the last (counted);\n"
"                        =packets: a record per packet too (rxe_xmit,\n"
"                        rxe_rcv), which --clock-align needs\n"
"      --tcp             TCP retransmits\n"
"      --usdt=BIN        rdmatrace:coll_begin/coll_end USDT marks in BIN\n"
"                        (e.g. rdma-ring-allreduce; only when asked for)\n"
"      --verbs[=PID]     every userspace verbs application's work requests and\n"
"                        completions (mlx5's too), by uprobes on the providers'\n"
"                        post_send, post_recv, post_srq_recv and poll_cq; a\n"
"                        uprobe costs microseconds a call: only when asked for,\n"
"                        PID: that process only\n"
"                        (no --nccl/--rxe/--tcp: all that are available)\n"
"      --no-enable       do not switch the module's tracing on for --follow\n"
"      --window MS       reorder window of live sources and saved captures\n"
"                        (default 100, at most 60000)\n"
"      --clock-align=MODE  -i files of several hosts: auto (default) aligns\n"
"                        their clocks from rxe packets traced on both sides\n"
"                        (--rxe=packets)\n"
"                        where there are some, else keeps\n"
"                        each header's realtime offset; header (or off): the\n"
"                        header offsets only\n"
"\n"
"Output:\n"
"  -o, --output FILE     write a binary trace file\n"
"  -F, --format FMT      text (default), json (JSON Lines), perfetto, sqlite\n"
"  -w, --write FILE      formatted output to FILE (default stdout; sqlite needs one)\n"
"  -q, --quiet           no per-event output\n"
"  -s, --stats           per-QP counts, WR latency, collective bandwidth, drops\n"
"      --stuck=SECONDS   report to stderr what has waited SECONDS: QPs with a send\n"
"                        WR not completed or a peer gone, ranks in a collective\n"
"                        (live: when it happens, and again when it changes;\n"
"                        files: every episode and the end); kill -USR1 prints\n"
"                        the picture at once\n"
"      --metrics=[ADDR:]PORT  serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                        (default ADDR 127.0.0.1) while it reads: per QP, per\n"
"                        collective, port counters, sources' losses, --stuck's\n"
"                        gauges; with -i or without -f it goes on serving the\n"
"                        final figures after the input ends, until Ctrl-C\n"
"\n"
"Filters (comma-separated lists; loss and bookkeeping records always pass):\n"
"      --dev LIST        device names or indexes\n"
"      --qpn LIST        queue pair numbers\n"
"      --pid LIST        process ids\n"
"      --type LIST       event types (post_send, poll_cq_wc, nccl_call, ...)\n"
"\n"
"      --strict          exit 1 when an input was given up on: a ring file\n"
"                        detached while read (truncated or rewritten by its\n"
"                        writer) or not read as not to be trusted (another\n"
"                        user's, a link, a lying header)\n"
"  -h, --help            this text\n"
"  -V, --version         versions of the tool and the wire format\n"
"\n"
"Exit status: 0 success, 1 bad input or runtime error (every event before it\n"
"is still output; with --strict, also an input given up on), 2 usage error.\n");
}

enum {
	OPT_DEV = 256, OPT_QPN, OPT_PID, OPT_TYPE, OPT_NO_RELAY, OPT_NO_BPF,
	OPT_NCCL, OPT_RXE, OPT_TCP, OPT_NO_ENABLE, OPT_WINDOW, OPT_USDT, OPT_VERBS, OPT_STUCK,
	OPT_NO_NCCL_PLUGIN, OPT_COUNTERS, OPT_NO_COUNTERS, OPT_CLOCK_ALIGN,
	OPT_STRICT, OPT_METRICS,
};

static const struct option longopts[] = {
	{ "input", required_argument, NULL, 'i' },
	{ "follow", no_argument, NULL, 'f' },
	{ "relay-dir", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, 'F' },
	{ "write", required_argument, NULL, 'w' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "stats", no_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "qpn", required_argument, NULL, OPT_QPN },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "type", required_argument, NULL, OPT_TYPE },
	{ "no-relay", no_argument, NULL, OPT_NO_RELAY },
	{ "no-bpf", no_argument, NULL, OPT_NO_BPF },
	{ "nccl", optional_argument, NULL, OPT_NCCL },
	{ "rxe", optional_argument, NULL, OPT_RXE },
	{ "tcp", no_argument, NULL, OPT_TCP },
	{ "no-enable", no_argument, NULL, OPT_NO_ENABLE },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "usdt", required_argument, NULL, OPT_USDT },
	{ "verbs", optional_argument, NULL, OPT_VERBS },
	{ "stuck", required_argument, NULL, OPT_STUCK },
	{ "no-nccl-plugin", no_argument, NULL, OPT_NO_NCCL_PLUGIN },
	{ "counters", optional_argument, NULL, OPT_COUNTERS },
	{ "no-counters", no_argument, NULL, OPT_NO_COUNTERS },
	{ "clock-align", required_argument, NULL, OPT_CLOCK_ALIGN },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ NULL, 0, NULL, 0 },
};

struct args {
	const char **inputs;
	int ninputs;
	bool follow, no_relay, no_bpf, no_enable, quiet, stats, no_np;
	bool want_nccl, want_rxe, want_tcp, want_verbs;
	bool rxe_packets;	/* --rxe=packets */
	int verbs_pid;
	bool want_counters, no_counters;
	unsigned long counters_ms;
	const char *nccl_target, *usdt_target, *relay_dir, *output, *write_path;
	int format;
	bool format_given;
	unsigned long window_ms;
	int clock_align;	/* enum rdt_clock_align */
	uint64_t stuck_ns;	/* --stuck, 0: off */
	const char *metrics;	/* --metrics=[ADDR:]PORT, NULL: off */
	bool strict;
};

/* One run: the reader, where its events go, and what the loop keeps. */
struct run {
	struct rdt_reader *r;
	struct rdt_filter *flt;
	struct rdt_sink *bin, *out;	/* -o's trace, the output */
	struct rdt_pipeline *pipe;	/* bin, then out */
	bool stuck_err;		/* a --stuck report record not written */
	struct rdt_stats *st;
	struct rdt_stuck *stuck;
	struct rdt_metrics *metrics;
	struct mhttp *mh;
	uint64_t next_check;		/* --stuck's */
	uint64_t events;		/* past the filters */
	/* The NCCL plugin source attaches to processes as they start, the
	 * counters source finds devices and bad files as it samples: what
	 * they say after start-up is printed too, from where it stopped. */
	int np_idx, ctr_idx, relay_idx;
	size_t np_said, ctr_said, relay_said;
	bool enabled;			/* we switched tracing on */
	bool given_up;			/* an input detached or not read */
};

/* Switch tracing on for the run and back off afterwards (blktrace's
 * start/stop); returns 1 if we switched it, 0 if there was nothing to
 * switch (a saved capture has no `enable` file), or -errno, said. */
static int set_enable(const char *dir, bool on)
{
	int ret = rdt_relay_set_enable(dir, on);

	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		fprintf(stderr, "rdmatrace-dump: %s/enable: %s%s\n", dir,
			strerror(-ret), !on ? "" : ret == -ENOMEM ?
			" (rdmatrace.ko could not allocate its relay buffers: "
			"the kernel log says why)" : ret == -EPERM ?
			" (kernel lockdown? the kernel log says why)" : "");
	return ret;
}

/* rdmatrace-record saves the port counters beside the relay copies. */
static int add_saved_counters(struct rdt_reader *r, const char *dir)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/" RDT_SAVED_COUNTERS, dir);
	if (access(path, F_OK))
		return 0;
	if (rdt_reader_add_file(r, path) < 0) {
		fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(r));
		return -1;
	}
	return 0;
}

static void src_status(struct rdt_reader *r, int idx, size_t *said)
{
	const char *st;
	size_t n;

	if (idx < 0)
		return;
	st = rdt_reader_source_status(r, (unsigned int)idx);
	n = strlen(st);
	if (n > *said)
		fputs(st + *said, stderr);
	*said = n;
}

/* What the sources said since: the plugin's, the counters', the relay's
 * (a capture's stamps converted without clock pairs, at its end). */
static void np_status(struct run *x)
{
	src_status(x->r, x->np_idx, &x->np_said);
	src_status(x->r, x->ctr_idx, &x->ctr_said);
	src_status(x->r, x->relay_idx, &x->relay_said);
}

/* Port counters: on by default when following, else only when asked.
 * --metrics exports every counter, so it wants the first values too. */
static int add_counters(struct run *x, const struct args *a)
{
	struct rdt_counters_opts o = {
		.sz = sizeof(o), .period_ms = (unsigned int)a->counters_ms,
		.first_values = a->metrics != NULL,
	};
	int idx;

	if (a->no_counters || (!a->follow && !a->want_counters))
		return 0;
	idx = rdt_reader_add_counters_opts(x->r, &o);
	if (idx < 0) {
		fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(x->r));
		return -1;
	}
	x->ctr_idx = idx;
	np_status(x);
	return 0;
}

/* In-process NCCL events need neither the module nor BPF: the source is
 * there whenever live reading is, but for a one-shot read with no ring
 * file to read. */
static int add_nccl_plugin(struct run *x, const struct args *a)
{
	int idx;

	if (a->no_np || (!a->follow && !rdt_nccl_plugin_files(NULL)))
		return 0;
	idx = rdt_reader_add_nccl_plugin(x->r, NULL);
	if (idx < 0) {
		fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(x->r));
		return -1;
	}
	x->np_idx = idx;
	np_status(x);
	return 0;
}

static int add_live(struct run *x, const struct args *a)
{
	struct rdt_reader *r = x->r;

	if (add_counters(x, a) < 0)
		return -1;
	if (!a->no_relay) {
		int idx = rdt_reader_add_relay(r, a->relay_dir);

		if (idx < 0) {
			fprintf(stderr, "rdmatrace-dump: %s\n",
				rdt_reader_error(r));
			return -1;
		}
		x->relay_idx = idx;
		src_status(r, idx, &x->relay_said);
		if (rdt_capture_is_saved(a->relay_dir) &&
		    add_saved_counters(r, a->relay_dir) < 0)
			return -1;
	}
	if (a->no_bpf)
		return add_nccl_plugin(x, a);
#ifdef RDT_HAVE_BPF
	{
		bool any = a->want_nccl || a->want_rxe || a->want_tcp;
		struct rdt_bpf_opts o = {
			.nccl = !any || a->want_nccl,
			.rxe = !any || a->want_rxe,
			.rxe_packets = a->rxe_packets,
			.tcp = !any || a->want_tcp,
			.usdt = a->usdt_target != NULL,
			.verbs = a->want_verbs,
			.verbs_pid = a->verbs_pid,
			.nccl_target = a->nccl_target,
			.usdt_target = a->usdt_target,
		};
		int idx = rdt_reader_add_bpf(r, &o);

		if (idx < 0) {
			fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(r));
			/* Explicitly requested sources must not vanish quietly. */
			if (any || a->usdt_target || a->want_verbs || a->no_relay)
				return -1;
		} else {
			fprintf(stderr, "%s", rdt_reader_source_status(r, (unsigned int)idx));
		}
	}
#else
	if (a->want_nccl || a->want_rxe || a->want_tcp || a->usdt_target ||
	    a->want_verbs || (a->no_relay && a->no_np)) {
		fprintf(stderr, "rdmatrace-dump: built without BPF support: "
			"--nccl/--rxe/--tcp/--usdt/--verbs are unavailable\n");
		return -1;
	}
	fprintf(stderr, "rdmatrace-dump: BPF sources: not built in\n");
#endif
	return add_nccl_plugin(x, a);
}

/* Returns whether a source skipped corrupt data; *given_up: whether an
 * input was detached or not read (--strict). */
static bool drop_report(struct rdt_reader *r, uint64_t events, bool *given_up)
{
	bool corrupt = false;

	fprintf(stderr, "rdmatrace-dump: %llu events, %llu lost, %llu of unknown type skipped\n",
		(unsigned long long)events, (unsigned long long)rdt_reader_lost(r),
		(unsigned long long)rdt_reader_unknown(r));
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats st;

		rdt_reader_source_stats(r, i, &st);
		if (st.subbufs_skipped)
			fprintf(stderr, "  %s: %llu relay sub-buffers skipped "
				"unread: the events in them are lost, count "
				"unknown\n", st.name,
				(unsigned long long)st.subbufs_skipped);
		if (st.relay_repeats)
			fprintf(stderr, "  %s: %llu records that relay returned "
				"twice or stale (a read raced a sub-buffer "
				"switch) were dropped\n", st.name,
				(unsigned long long)st.relay_repeats);
		if (st.resyncs) {
			fprintf(stderr, "  %s: corrupt data, %llu bytes in %llu "
				"%s, skipped to the next sub-buffer: the "
				"events in it are lost, count unknown; the first "
				"at %s\n", st.name,
				(unsigned long long)st.corrupt_bytes,
				(unsigned long long)st.resyncs,
				st.resyncs == 1 ? "place" : "places",
				st.corrupt_first);
			corrupt = true;
		}
		if (st.detached)
			fprintf(stderr, "  %s: %llu %s detached while read, the "
				"first %s: the events still in %s are lost, "
				"count unknown\n", st.name,
				(unsigned long long)st.detached,
				st.detached == 1 ? "file" : "files",
				st.detached_first,
				st.detached == 1 ? "it" : "them");
		if (st.skipped_files)
			fprintf(stderr, "  %s: %llu %s not read, as not to be "
				"trusted\n", st.name,
				(unsigned long long)st.skipped_files,
				st.skipped_files == 1 ? "file" : "files");
		if (st.detached || st.skipped_files)
			*given_up = true;
		if (!st.lost && !st.late)
			continue;
		fprintf(stderr, "  %s: lost %llu (kmod %llu, bpf %llu, "
			"nccl-plugin %llu), late %llu\n",
			st.name, (unsigned long long)st.lost,
			(unsigned long long)st.lost_by[RDT_SRC_KMOD],
			(unsigned long long)st.lost_by[RDT_SRC_BPF],
			(unsigned long long)st.lost_by[RDT_SRC_NCCL_PLUGIN],
			(unsigned long long)st.late);
		for (uint32_t c = 0; c < st.ncpus; c++)
			if (st.lost_cpu[c])
				fprintf(stderr, "    cpu%u lost %llu\n", c,
					(unsigned long long)st.lost_cpu[c]);
	}
	return corrupt;
}

/*
 * --stuck: the tracker's clock is the trace's.  Live, that is now on
 * CLOCK_MONOTONIC (a live trace is one host's); from files, the last
 * event's time, so that an episode is found where it happened.  Checked
 * at most every quarter of the limit (and each second at most), and at
 * once on SIGUSR1.  Called when a check may be due: per event only once
 * @last reached @next (the main loop's test, a few instructions), and on
 * each idle wake-up live (@idle: at most 200 ms apart; the clock goes on
 * when nothing is traced at all).  Returns when the next check is due.
 */
static __attribute__((noinline)) uint64_t stuck_tick(struct rdt_stuck *s,
						     struct rdt_reader *r,
						     const struct args *a, bool idle,
						     uint64_t next, uint64_t last)
{
	uint64_t now = last;

	if (a->follow && idle) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		now = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	}
	if (picture_requested) {
		picture_requested = 0;
		rdt_stuck_print(s, r, now, stderr);
	}
	if (now < next)
		return next;
	/* From files, the state between two events is the first one's: a
	 * check at the time one was due finds what moved when it did, not at
	 * the next event, which may come long after. */
	if (!a->follow && next && now > next)
		rdt_stuck_check(s, r, next, stderr);
	rdt_stuck_check(s, r, now, stderr);
	return now + (a->stuck_ns / 4 < 1000000000ull ? a->stuck_ns / 4 :
		      1000000000ull);
}

/* The next check's time, for the main loop's test; a SIGUSR1 that came
 * during the check is not lost (its 0 is written again). */
static uint64_t stuck_due_set(uint64_t next)
{
	atomic_store_explicit(&stuck_due, next, memory_order_relaxed);
	if (picture_requested)
		atomic_store_explicit(&stuck_due, 0, memory_order_relaxed);
	return next;
}

/* --stuck's reports as records, into the trace being made (-o) and the
 * output (text, JSON, SQLite, Perfetto), beside the events. */
static void stuck_record(void *ctx, const struct rdt_event *ev)
{
	struct run *x = ctx;

	if (rdt_pipeline_write_sinks(x->pipe, ev) < 0)
		x->stuck_err = true;
}

static void stuck_end(struct rdt_stuck *s, struct rdt_reader *r,
		      const struct args *a, uint64_t last)
{
	/* Live, the ticks made every report; a trace ends at its last event. */
	if (!a->follow && rdt_stuck_check(s, r, last, stderr))
		fprintf(stderr, "stuck: still stuck at the end of the trace (%.3f)\n",
			(double)last / 1e9);
	rdt_stuck_print_summary(s, stderr);
}

/* The clock of a page: live, now (CLOCK_MONOTONIC, the live time base),
 * so that what is due (a destroyed QP's expiry, a stuck wait) moves while
 * nothing is traced; from files, the last event's (0). */
static uint64_t metrics_now(const struct args *a)
{
	struct timespec t;

	if (!a->follow)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* --metrics: a scrape asked for a fresh page; render it in this (the
 * reader's) thread, which owns the figures, and hand it over. */
static void metrics_serve(struct mhttp *mh, struct rdt_metrics *m,
			  struct rdt_reader *r, const struct args *a)
{
	char *buf;
	size_t len;

	if (!mh || !mhttp_wanted(mh))
		return;
	if (rdt_metrics_render(m, r, metrics_now(a), &buf, &len) < 0) {
		fprintf(stderr, "rdmatrace-dump: --metrics: out of memory\n");
		return;
	}
	mhttp_publish(mh, buf, len);
}

/* A number option's value in [lo, hi], or a message and false. */
static bool num_arg(const char *opt, const char *v, double lo, double hi,
		    const char *what, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	if (*end || !*v || errno || !(*out >= lo) || *out > hi) {
		fprintf(stderr, "rdmatrace-dump: --%s=%s: %s\n", opt, v, what);
		return false;
	}
	return true;
}

/* Options into @a and @flt.  Returns -1 to go on, or the exit status
 * (0 after --help and --version, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct args *a,
		      struct rdt_filter *flt)
{
	double v;
	int c;

	while ((c = getopt_long(argc, argv, "i:fd:o:F:w:qshV", longopts, NULL)) != -1) {
		int e = 0;

		switch (c) {
		case 'i': a->inputs[a->ninputs++] = optarg; break;
		case 'f': a->follow = true; break;
		case 'd': a->relay_dir = optarg; break;
		case 'o': a->output = optarg; break;
		case 'w': a->write_path = optarg; break;
		case 'q': a->quiet = true; break;
		case 's': a->stats = true; break;
		case 'F':
			a->format = rdt_format_from_name(optarg);
			a->format_given = true;
			if (a->format < 0 || a->format == RDT_FMT_BINARY) {
				fprintf(stderr, "rdmatrace-dump: unknown format '%s' "
					"(text, json, perfetto, sqlite)\n", optarg);
				return 2;
			}
			break;
		case OPT_DEV: e = rdt_filter_add_dev(flt, optarg); break;
		case OPT_QPN: e = rdt_filter_add_qpn(flt, optarg); break;
		case OPT_PID: e = rdt_filter_add_pid(flt, optarg); break;
		case OPT_TYPE: e = rdt_filter_add_type(flt, optarg); break;
		case OPT_NO_RELAY: a->no_relay = true; break;
		case OPT_NO_BPF: a->no_bpf = true; break;
		case OPT_NCCL: a->want_nccl = true; a->nccl_target = optarg; break;
		case OPT_RXE:
			a->want_rxe = true;
			if (optarg && strcmp(optarg, "packets")) {
				fprintf(stderr, "rdmatrace-dump: --rxe=%s: unknown (--rxe, or "
					"--rxe=packets)\n", optarg);
				return 2;
			}
			a->rxe_packets = optarg != NULL;
			break;
		case OPT_TCP: a->want_tcp = true; break;
		case OPT_NO_ENABLE: a->no_enable = true; break;
		case OPT_WINDOW:
			if (!num_arg("window", optarg, 0, 60000,
				     "not a number of milliseconds (0 to 60000)", &v))
				return 2;
			a->window_ms = (unsigned long)v;
			break;
		case OPT_USDT: a->usdt_target = optarg; break;
		case OPT_VERBS:
			a->want_verbs = true;
			if (optarg) {
				char *end;
				long pid;

				errno = 0;
				pid = strtol(optarg, &end, 10);
				if (*end || !*optarg || errno || pid <= 0 || pid > INT_MAX) {
					fprintf(stderr, "rdmatrace-dump: --verbs=%s: not a "
						"process id\n", optarg);
					return 2;
				}
				a->verbs_pid = (int)pid;
			}
			break;
		case OPT_STUCK:
			if (!num_arg("stuck", optarg, 0, 86400,
				     "not a number of seconds (0 to 86400)", &v))
				return 2;
			if (!(v > 0)) {		/* 0 is not a limit */
				fprintf(stderr, "rdmatrace-dump: --stuck=%s: not a "
					"number of seconds (0 to 86400)\n", optarg);
				return 2;
			}
			a->stuck_ns = (uint64_t)(v * 1e9);
			break;
		case OPT_NO_NCCL_PLUGIN: a->no_np = true; break;
		case OPT_COUNTERS:
			a->want_counters = true;
			if (optarg) {
				char *end;

				a->counters_ms = strtoul(optarg, &end, 10);
				if (*end || !*optarg || !a->counters_ms ||
				    a->counters_ms > 3600000) {
					fprintf(stderr, "rdmatrace-dump: bad "
						"--counters period '%s' (ms, "
						"1 to 3600000)\n", optarg);
					return 2;
				}
			}
			break;
		case OPT_NO_COUNTERS: a->no_counters = true; break;
		case OPT_STRICT: a->strict = true; break;
		case OPT_METRICS: a->metrics = optarg; break;
		case OPT_CLOCK_ALIGN:
			if (!strcmp(optarg, "auto")) {
				a->clock_align = RDT_CLOCK_ALIGN_AUTO;
			} else if (!strcmp(optarg, "off") ||
				   !strcmp(optarg, "header")) {
				a->clock_align = RDT_CLOCK_ALIGN_HEADER;
			} else {
				fprintf(stderr, "rdmatrace-dump: bad --clock-align "
					"'%s' (auto, off, header)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rdmatrace-dump %s (wire ABI %d.%d, module relay ABI "
			       "%d and %d, BPF sources %s)\n",
			       RDT_LIB_VERSION, RDT_ABI_MAJOR, RDT_ABI_MINOR,
			       RDT_ABI_MAJOR, RDT_RELAY_ABI_MAJOR,
			       rdt_have_bpf() ? "built in" : "not built in");
			return 0;
		default:
			usage(stderr);
			return 2;
		}
		if (e) {
			fprintf(stderr, "rdmatrace-dump: bad filter list '%s' for --%s\n",
				optarg, longopts[c - OPT_DEV + 10].name);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rdmatrace-dump: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* What the options say together.  Returns -1 to go on, or 2. */
static int check_args(struct args *a)
{
	if (a->want_counters && (a->ninputs || a->no_counters)) {
		fprintf(stderr, "rdmatrace-dump: --counters samples this host "
			"live: not with -i files (their port_counter events "
			"are read as they are) or --no-counters\n");
		return 2;
	}
	if (a->follow && a->ninputs) {
		fprintf(stderr, "rdmatrace-dump: --follow reads live sources, not -i files\n");
		return 2;
	}
	if (!a->ninputs && !a->no_relay && rdt_capture_is_saved(a->relay_dir)) {
		/* Its events are the recording's: nothing live belongs with
		 * them. */
		if (a->follow || a->want_nccl || a->want_rxe || a->want_tcp ||
		    a->usdt_target || a->want_verbs || a->want_counters) {
			fprintf(stderr, "rdmatrace-dump: %s is a capture saved by "
				"rdmatrace-record: it is decoded as it is, "
				"without --follow or BPF sources\n",
				a->relay_dir);
			return 2;
		}
		a->no_bpf = true;
		a->no_np = true;
		a->no_counters = true;
	}
	if (a->format == RDT_FMT_SQLITE && !a->write_path) {
		fprintf(stderr, "rdmatrace-dump: --format sqlite needs -w FILE\n");
		return 2;
	}
	return -1;
}

/* --metrics' server, before the sources: a port in use is said at once.
 * Returns -1 to go on, or the exit status. */
static int start_metrics(struct run *x, const struct args *a)
{
	char err[512];

	x->mh = mhttp_start(a->metrics, err, sizeof(err));
	if (!x->mh) {
		fprintf(stderr, "rdmatrace-dump: %s\n", err);
		return errno == EINVAL ? 2 : 1;
	}
	x->metrics = rdt_metrics_new(NULL);
	if (!x->metrics)
		return 1;
	fprintf(stderr, "rdmatrace-dump: metrics at http://%s/metrics\n",
		mhttp_where(x->mh));
	return -1;
}

/* The reader and its sources: the files, or what is live here. */
static int open_reader(struct run *x, const struct args *a)
{
	x->r = rdt_reader_new(&(struct rdt_reader_opts){
		.sz = sizeof(struct rdt_reader_opts), .follow = a->follow,
		.reorder_window_ns = a->window_ms * 1000000ull,
		.clock_align = a->clock_align });
	if (!x->r)
		return -1;
	for (int i = 0; i < a->ninputs; i++)
		if (rdt_reader_add_file(x->r, a->inputs[i]) < 0) {
			fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(x->r));
			return -1;
		}
	if (!a->ninputs && add_live(x, a) < 0)
		return -1;
	/* Files of several hosts: their clocks aligned (a first pass over
	 * them) and said so before any event. */
	if (a->ninputs > 1) {
		int e = rdt_reader_align_clocks(x->r);

		fputs(rdt_reader_clock_report(x->r), stderr);
		if (e < 0)
			fprintf(stderr, "rdmatrace-dump: clock alignment: %s: "
				"header offsets kept\n", strerror(-e));
	}
	return 0;
}

/* Where the events go: -o's trace, the output, --stats, --stuck. */
static int open_consumers(struct run *x, const struct args *a,
			  struct sigaction *sa)
{
	char err[512];

	if (a->output && !(x->bin = rdt_sink_open(RDT_FMT_BINARY, a->output,
						  x->r, err, sizeof(err)))) {
		fprintf(stderr, "rdmatrace-dump: %s\n", err);
		return -1;
	}
	/* -o alone records quietly, as blktrace does. */
	if (!a->quiet && (!a->output || a->format_given || a->write_path) &&
	    !(x->out = rdt_sink_open((enum rdt_format)a->format,
				     a->write_path ? a->write_path : "-", x->r,
				     err, sizeof(err)))) {
		fprintf(stderr, "rdmatrace-dump: %s\n", err);
		return -1;
	}
	if (a->stats && !(x->st = rdt_stats_new()))
		return -1;
	if (a->stuck_ns) {
		x->stuck = rdt_stuck_new(a->stuck_ns);
		if (!x->stuck)
			return -1;
		/* Live with no saved trace: every rank is a process here. */
		rdt_stuck_watch_procs(x->stuck, a->follow && !a->ninputs);
		if (x->bin || x->out)
			rdt_stuck_on_record(x->stuck, stuck_record, x);
		sa->sa_handler = on_usr1;
		sigaction(SIGUSR1, sa, NULL);
		if (x->metrics)
			rdt_metrics_watch_stuck(x->metrics, x->stuck);
	}
	x->pipe = rdt_pipeline_new(x->r);
	if (!x->pipe ||
	    (x->bin && rdt_pipeline_add_sink(x->pipe, x->bin) < 0) ||
	    (x->out && rdt_pipeline_add_sink(x->pipe, x->out) < 0)) {
		fprintf(stderr, "rdmatrace-dump: %s\n", strerror(ENOMEM));
		return -1;
	}
	return 0;
}

/* One event past the filters, to each consumer. */
static int consume(struct run *x, const struct rdt_event *ev)
{
	x->events++;
	/* -q alone has no sink: no call */
	if ((x->bin || x->out) && rdt_pipeline_write(x->pipe, ev) < 0) {
		fprintf(stderr, "rdmatrace-dump: %s\n", rdt_pipeline_error(x->pipe));
		return -1;
	}
	if (x->st)
		rdt_stats_add(x->st, ev);
	if (x->stuck)
		rdt_stuck_add(x->stuck, ev);
	if (x->metrics)
		rdt_metrics_add(x->metrics, ev);
	return 0;
}

/* A first SIGINT/SIGTERM: the reader drains what it holds, then ends. */
static void stop_if_asked(struct run *x)
{
	if (stop_requested == 1) {
		rdt_reader_stop(x->r);
		stop_requested = 2;
	}
}

/* A live reader's wait (-EAGAIN): what runs while no event comes. */
static void on_wait(struct run *x, const struct args *a)
{
	if (x->stuck)
		x->next_check = stuck_due_set(stuck_tick(x->stuck, x->r, a,
				true, x->next_check, rdt_reader_last_ts(x->r)));
	np_status(x);
	metrics_serve(x->mh, x->metrics, x->r, a);
	fflush(stdout);
}

/* Every 256 events (@x->events a multiple of it): a scrape waiting for a
 * fresh page is served (at 100 events/s a page is at most 2.6 s old), and
 * every 4096 the plugin's status. */
static void every_256(struct run *x, const struct args *a)
{
	if (!(x->events & 4095))
		np_status(x);
	metrics_serve(x->mh, x->metrics, x->r, a);
}

/* read_loop() where nothing reads an event's fields but --metrics: no
 * filter, no other analysis, only sinks that keep records as they are
 * (-o FILE, -q).  The records are not copied out of the reader's buffers
 * (a copy in, a copy out and a name lookup were ~90 instructions of ~440
 * an event of a file merge); --metrics counts the common event where it
 * lies and asks for the few others whole. */
static int read_loop_ref(struct run *x, const struct args *a)
{
	struct rdt_event ev;
	struct rdt_rec_ref ref;
	int n;

	for (;;) {
		stop_if_asked(x);
		n = rdt_reader_next_ref(x->r, &ev, &ref, a->follow ? 200 : -1);
		if (n == -EAGAIN) {
			on_wait(x, a);
			continue;
		}
		if (n <= 0)
			return n;
		if (!(++x->events & 255))
			every_256(x, a);
		if (x->bin && rdt_pipeline_write_ref(x->pipe, &ev, &ref) < 0) {
			fprintf(stderr, "rdmatrace-dump: %s\n",
				rdt_pipeline_error(x->pipe));
			return 1;
		}
		if (x->metrics && !rdt_metrics_add_rec(x->metrics, &ev, ref.rec,
						       ref.len)) {
			rdt_reader_ref_event(x->r, &ev, &ref);
			rdt_metrics_add(x->metrics, &ev);
		}
	}
}

/* Until the input ends or a signal stops it.  Returns the last
 * rdt_reader_next(), or 1 after a write failed. */
static int read_loop(struct run *x, const struct args *a)
{
	struct rdt_event ev;
	int n;

	if (!x->out && !x->st && !x->stuck &&
	    rdt_filter_empty(x->flt) && rdt_pipeline_takes_refs(x->pipe))
		return read_loop_ref(x, a);
	for (;;) {
		stop_if_asked(x);
		n = rdt_reader_next(x->r, &ev, a->follow ? 200 : -1);
		if (n == -EAGAIN) {
			on_wait(x, a);
			continue;
		}
		if (n <= 0)
			return n;
		/* The clock is the reader's latest event time; an event
		 * out of order only makes a due check wait for the next. */
		if (x->stuck &&
		    ev.ts >= atomic_load_explicit(&stuck_due, memory_order_relaxed))
			x->next_check = stuck_due_set(stuck_tick(x->stuck, x->r,
					a, false, x->next_check,
					rdt_reader_last_ts(x->r)));
		if (!(x->events & 255))
			every_256(x, a);
		if (!rdt_filter_match(x->flt, &ev))
			continue;
		if (consume(x, &ev) < 0)
			return 1;
	}
}

/* After the loop: reports, the outputs closed, the summary, losses.
 * Returns 1 where the run must exit non-zero, else 0. */
static int finish(struct run *x, const struct args *a, int n)
{
	FILE *so;
	int ret = 0;

	np_status(x);
	if (x->stuck) {
		stuck_end(x->stuck, x->r, a, rdt_reader_last_ts(x->r));
		if (x->stuck_err) {
			fprintf(stderr, "rdmatrace-dump: --stuck: a report record could not be written: %s\n",
				rdt_pipeline_error(x->pipe));
			ret = 1;
		}
	}
	if (x->enabled)
		set_enable(a->relay_dir, false);
	/* --stats after the events, except where that would break a JSON
	 * document on stdout. */
	so = x->out && !a->write_path && a->format == RDT_FMT_PERFETTO ?
	     stderr : stdout;
	/* The pipeline first: its idle hook flushes the sinks. */
	rdt_pipeline_free(x->pipe);
	x->pipe = NULL;
	if (rdt_sink_close(x->out, x->r) < 0 || rdt_sink_close(x->bin, x->r) < 0)
		ret = 1;
	x->out = x->bin = NULL;
	if (x->st) {

		if (a->format == RDT_FMT_JSON)
			rdt_stats_print_json(x->st, x->r, so);
		else
			rdt_stats_print(x->st, x->r, so);
	}
	/* Everything readable was written; the exit still says it was not
	 * all there. */
	if (drop_report(x->r, x->events, &x->given_up))
		ret = 1;
	if (a->strict && x->given_up)
		ret = 1;
	if (n < 0) {
		fprintf(stderr, "rdmatrace-dump: %s\n", rdt_reader_error(x->r));
		ret = 1;
	}
	return ret;
}

/* The input ended before a signal stopped the run (-i, a one-shot read):
 * the final figures stay served until Ctrl-C/SIGTERM. */
static void serve_final(struct run *x, const struct args *a)
{
	rdt_metrics_finish(x->metrics);
	fprintf(stderr, "rdmatrace-dump: input ended; serving its metrics "
		"at http://%s/metrics until Ctrl-C\n", mhttp_where(x->mh));
	while (!stop_requested) {
		metrics_serve(x->mh, x->metrics, x->r, a);
		usleep(50000);
	}
}

static void run_free(struct run *x)
{
	rdt_pipeline_free(x->pipe);
	rdt_sink_close(x->out, x->r);
	rdt_sink_close(x->bin, x->r);
	rdt_stats_free(x->st);
	mhttp_stop(x->mh);
	rdt_metrics_free(x->metrics);
	rdt_stuck_free(x->stuck);
	rdt_reader_free(x->r);
	rdt_filter_free(x->flt);
}

int main(int argc, char **argv)
{
	struct args a = { .relay_dir = DEFAULT_RELAY, .format = RDT_FMT_TEXT,
			  .window_ms = 100 };
	struct run x = { .np_idx = -1, .ctr_idx = -1, .relay_idx = -1 };
	struct sigaction sa;
	int n, ret;

	a.inputs = calloc((size_t)argc, sizeof(*a.inputs));
	x.flt = rdt_filter_new();
	if (!x.flt || !a.inputs) {
		ret = 1;
		goto out;
	}
	if ((ret = parse_args(argc, argv, &a, x.flt)) >= 0 ||
	    (ret = check_args(&a)) >= 0 ||
	    (a.metrics && (ret = start_metrics(&x, &a)) >= 0))
		goto out;
	ret = 0;
	/* Before attaching: Ctrl-C while BPF programs load (seconds) must
	 * still end in a clean flush and drop report, not a dead process. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (open_reader(&x, &a) < 0 || open_consumers(&x, &a, &sa) < 0) {
		ret = 1;
		goto out;
	}
	if (a.follow && !a.no_relay && !a.no_enable) {
		int e = set_enable(a.relay_dir, true);

		/* The module's events were asked for and will not come: end
		 * the run through the usual stop, flush and report. */
		if (e < 0) {
			ret = 1;
			stop_requested = 1;
		}
		x.enabled = e > 0;
	}
	n = read_loop(&x, &a);
	if (n == 1) {
		ret = 1;
		n = 0;
	}
	if (finish(&x, &a, n))
		ret = 1;
	if (x.mh && !stop_requested)
		serve_final(&x, &a);
out:
	run_free(&x);
	free(a.inputs);
	return ret;
}
