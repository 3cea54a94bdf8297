// SPDX-License-Identifier: GPL-2.0
/*
 * rdmatrace-record: save the module's relay buffers as they are, one file
 * per CPU, for rdmatrace-dump -d to decode later (blktrace -D, then
 * blkparse).  Nothing is decoded or merged while recording, so the cost per
 * event is a copy, not a parse: this keeps up with rates that the live
 * merge of rdmatrace-dump -f cannot.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rdmatrace/rdmatrace.h>

#define DEFAULT_RELAY "/sys/kernel/debug/rdmatrace"
#define CHUNK (1024 * 1024)
/* Per CPU and pass, so that one busy CPU cannot starve the others. */
#define CHUNKS_PER_PASS 8
/* After the stop: give up draining after this many chunks per CPU, should
 * a producer that was left enabled (--no-enable) outrun us. */
#define DRAIN_CHUNKS 1024
#define MAX_CPUS 4096
#define COUNTERS_FILE RDT_SAVED_COUNTERS

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct cpu {
	unsigned int cpu;
	int in, out;
	unsigned long long bytes;
};

/* The library's counters source, written as it samples. */
struct ctr {
	struct rdt_reader *rd;
	struct rdt_sink *sink;
	struct rdt_pipeline *pipe;	/* the sink, flushed as the reader waits */
	int idx;
	size_t said;
	unsigned long long records;
	char path[600];
};

struct rec {
	const char *relay, *outdir;
	struct cpu *cpus;
	unsigned int ncpus;
	unsigned char *buf;
	unsigned long long bytes;
	bool failed;
	struct ctr ctr;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: rdmatrace-record -D DIR [OPTIONS]\n"
"Save rdmatrace.ko's relay buffers to DIR as they are (one trace<cpu> file\n"
"per CPU, plus the module's version, drop counters and this host's facts),\n"
"until Ctrl-C/SIGTERM or -w.  Decode later, here or elsewhere, with\n"
"  rdmatrace-dump -d DIR [-o FILE] [-F FORMAT] ...\n"
"It copies and does not decode, so it keeps up with far higher event rates\n"
"than rdmatrace-dump -f; it records the module and the port counters (no\n"
"BPF sources).\n"
"\n"
"  -D, --output-dir DIR  where to save (created; must not hold a capture)\n"
"  -d, --relay-dir DIR   relay directory (default " DEFAULT_RELAY ")\n"
"  -w, --stop SECONDS    stop after SECONDS\n"
"      --counters=MS     sample every RDMA device's port counters every MS\n"
"                        ms (default 1000), at the start and at the end, into\n"
"                        DIR/" COUNTERS_FILE "\n"
"      --no-counters     record without the port counters\n"
"      --no-enable       do not switch the module's tracing on and off\n"
"  -h, --help            this text\n"
"  -V, --version         versions of the tool and the wire format\n"
"\n"
"Exit status: 0 success, 1 error (what was saved before it stays in DIR),\n"
"2 usage error.\n");
}

static const struct option longopts[] = {
	{ "output-dir", required_argument, NULL, 'D' },
	{ "relay-dir", required_argument, NULL, 'd' },
	{ "stop", required_argument, NULL, 'w' },
	{ "no-enable", no_argument, NULL, 'E' },
	{ "counters", required_argument, NULL, 'C' },
	{ "no-counters", no_argument, NULL, 'N' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Copy a small control file of the relay directory, if it has one. */
static int add_cpu(struct rec *r, unsigned int cpu)
{
	char path[600];
	struct cpu *v, *c;
	int in, out;

	for (unsigned int i = 0; i < r->ncpus; i++)
		if (r->cpus[i].cpu == cpu)
			return 0;
	snprintf(path, sizeof(path), "%s/trace%u", r->relay, cpu);
	in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "rdmatrace-record: %s: %s%s\n", path,
			strerror(errno), errno == EACCES || errno == EPERM ?
			" (the rdmatrace debugfs files are root-only)" : "");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/trace%u", r->outdir, cpu);
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		fprintf(stderr, "rdmatrace-record: %s: %s\n", path,
			strerror(errno));
		close(in);
		return -1;
	}
	v = realloc(r->cpus, (r->ncpus + 1) * sizeof(*v));
	if (!v) {
		close(in);
		close(out);
		return -1;
	}
	r->cpus = v;
	c = &r->cpus[r->ncpus++];
	c->cpu = cpu;
	c->in = in;
	c->out = out;
	c->bytes = 0;
	return 0;
}

/* CPUs that come online get a new trace<N> file: pick them up. */
static int scan(struct rec *r)
{
	DIR *d = opendir(r->relay);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return -1;
	while (!ret && (de = readdir(d))) {
		unsigned int cpu;
		char extra;

		if (sscanf(de->d_name, "trace%u%c", &cpu, &extra) == 1 &&
		    cpu < MAX_CPUS)
			ret = add_cpu(r, cpu);
	}
	closedir(d);
	return ret;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Up to @chunks reads of one CPU's relay file, each written out whole:
 * relay's read() returns what the module committed and skips its padding,
 * and rdmatrace-dump -d treats the saved bytes exactly as it would the
 * live file's.  Returns 1 if there may be more, 0 if drained, -1 on error.
 */
static int copy_cpu(struct rec *r, struct cpu *c, int chunks)
{
	for (int i = 0; i < chunks; i++) {
		ssize_t n = read(c->in, r->buf, CHUNK);
		int ret;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		if (n < 0) {
			fprintf(stderr, "rdmatrace-record: %s/trace%u: read: "
				"%s\n", r->relay, c->cpu, strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		ret = write_all(c->out, r->buf, (size_t)n);
		if (ret < 0) {
			fprintf(stderr, "rdmatrace-record: %s/trace%u: write: "
				"%s: %zd bytes read from the module are not "
				"saved, and recording stops\n", r->outdir,
				c->cpu, strerror(-ret), n);
			return -1;
		}
		c->bytes += (unsigned long long)n;
		r->bytes += (unsigned long long)n;
		if (n < CHUNK)
			return 0;
	}
	return 1;
}

/* One pass over every CPU; returns 1 if some CPU may hold more. */
static int copy_pass(struct rec *r, int chunks)
{
	int more = 0;

	for (unsigned int i = 0; i < r->ncpus; i++) {
		int ret = copy_cpu(r, &r->cpus[i], chunks);

		if (ret < 0) {
			r->failed = true;
			return -1;
		}
		more |= ret;
	}
	return more;
}

/* Refuse a directory that already holds a capture: no run may overwrite
 * another's data. */
static int make_outdir(const char *dir)
{
	char name[256];
	int found;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "rdmatrace-record: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	found = rdt_capture_find(dir, name, sizeof(name));
	if (found < 0) {
		fprintf(stderr, "rdmatrace-record: %s: %s\n", dir,
			strerror(-found));
		return -1;
	}
	if (found) {
		fprintf(stderr, "rdmatrace-record: %s already holds a "
			"capture (%s): choose another directory or "
			"remove it\n", dir, name);
		return -1;
	}
	return 0;
}

/* Setup failed before anything was recorded: take back what it made, so
 * that the same command can simply be run again. */
static void undo_setup(struct rec *r)
{
	char path[600];

	for (unsigned int i = 0; i < r->ncpus; i++) {
		close(r->cpus[i].in);
		close(r->cpus[i].out);
		snprintf(path, sizeof(path), "%s/trace%u", r->outdir,
			 r->cpus[i].cpu);
		unlink(path);
	}
	rdt_capture_undo(r->outdir);
	rmdir(r->outdir);	/* only if it is empty now */
	free(r->cpus);
	free(r->buf);
}

/* Print what the counters source said since last time (devices found,
 * files it could not read). */
static void ctr_status(struct ctr *c)
{
	const char *st = rdt_reader_source_status(c->rd, (unsigned int)c->idx);
	size_t n = strlen(st);

	if (n > c->said)
		fputs(st + c->said, stderr);
	c->said = n;
}

static int ctr_open(struct ctr *c, const char *outdir, unsigned int ms)
{
	struct rdt_reader_opts o = { .sz = sizeof(o), .follow = true };
	char err[256];

	c->rd = rdt_reader_new(&o);
	if (!c->rd) {
		fprintf(stderr, "rdmatrace-record: %s\n", strerror(ENOMEM));
		return -1;
	}
	c->idx = rdt_reader_add_counters(c->rd, NULL, ms);
	if (c->idx < 0) {
		fprintf(stderr, "rdmatrace-record: %s\n",
			rdt_reader_error(c->rd));
		goto fail;
	}
	snprintf(c->path, sizeof(c->path), "%s/" COUNTERS_FILE, outdir);
	c->sink = rdt_sink_open(RDT_FMT_BINARY, c->path, c->rd, err,
				sizeof(err));
	if (!c->sink) {
		fprintf(stderr, "rdmatrace-record: %s: %s\n", c->path, err);
		goto fail;
	}
	c->pipe = rdt_pipeline_new(c->rd);
	if (!c->pipe || rdt_pipeline_add_sink(c->pipe, c->sink) < 0) {
		fprintf(stderr, "rdmatrace-record: %s\n", strerror(ENOMEM));
		rdt_pipeline_free(c->pipe);
		c->pipe = NULL;
		rdt_sink_close(c->sink, c->rd);
		goto fail;
	}
	ctr_status(c);
	return 0;
fail:
	rdt_reader_free(c->rd);
	c->rd = NULL;
	return -1;
}

/* Write what the counters source has ready; @wait_ms -1 at the end. */
static int ctr_pump(struct ctr *c, int wait_ms)
{
	struct rdt_event ev;
	int ret;

	if (!c->rd)
		return 0;
	while ((ret = rdt_reader_next(c->rd, &ev, wait_ms)) == 1) {
		if (rdt_pipeline_write(c->pipe, &ev) < 0) {
			fprintf(stderr, "rdmatrace-record: %s: %s\n",
				c->path, rdt_pipeline_error(c->pipe));
			return -1;
		}
		c->records++;
	}
	ctr_status(c);
	if (ret < 0 && ret != -EAGAIN) {
		fprintf(stderr, "rdmatrace-record: port counters: %s\n",
			rdt_reader_error(c->rd));
		return -1;
	}
	return 0;
}

/* The last sample, then the file's summary. */
static int ctr_close(struct ctr *c)
{
	int ret, cret;

	if (!c->rd)
		return 0;
	rdt_reader_stop(c->rd);
	ret = ctr_pump(c, -1);
	rdt_pipeline_free(c->pipe);
	c->pipe = NULL;
	cret = rdt_sink_close(c->sink, c->rd);
	if (cret < 0) {
		fprintf(stderr, "rdmatrace-record: %s: %s\n", c->path,
			strerror(-cret));
		ret = -1;
	}
	fprintf(stderr, "rdmatrace-record: %llu port counter changes saved "
		"to %s\n", c->records, c->path);
	rdt_reader_free(c->rd);
	c->rd = NULL;
	return ret;
}

/* The module's drop counters over the capture, per CPU that lost any. */
static void report_drops(const struct rec *r)
{
	uint64_t *a = NULL, *b = NULL, total = 0;
	unsigned int na = 0, nb = 0;
	char path[600];

	snprintf(path, sizeof(path), "%s/" RDT_SAVED_DROPPED_START, r->outdir);
	rdt_relay_read_dropped(path, &a, &na);
	snprintf(path, sizeof(path), "%s/dropped", r->outdir);
	if (rdt_relay_read_dropped(path, &b, &nb) < 0) {
		fprintf(stderr, "rdmatrace-record: the module's drop count is "
			"unknown (%s unreadable)\n", path);
		free(a);
		return;
	}
	for (unsigned int cpu = 0; cpu < nb; cpu++) {
		uint64_t had = cpu < na ? a[cpu] : 0;

		if (b[cpu] > had) {
			fprintf(stderr, "  cpu%u dropped %llu\n", cpu,
				(unsigned long long)(b[cpu] - had));
			total += b[cpu] - had;
		}
	}
	fprintf(stderr, "rdmatrace-record: the module dropped %llu events "
		"during the capture%s\n", (unsigned long long)total,
		total ? " (rdmatrace-dump -d reports them where they were lost)" :
		"");
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	struct rec r = { .relay = DEFAULT_RELAY };
	double stop_after = 0, t0, secs;
	struct sigaction sa;
	struct pollfd *pfd = NULL;
	unsigned int npfd = 0;
	bool enabled = false, no_enable = false, counters = true;
	int enable_err = 0;
	unsigned long counters_ms = 1000;
	int c, ret, major, more;
	char vtext[128];
	double last_scan;
	uint64_t clock_ns;
	char *end;

	while ((c = getopt_long(argc, argv, "D:d:w:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'D': r.outdir = optarg; break;
		case 'd': r.relay = optarg; break;
		case 'w':
			errno = 0;
			stop_after = strtod(optarg, &end);
			if (errno || end == optarg || *end || stop_after <= 0) {
				fprintf(stderr, "rdmatrace-record: bad --stop "
					"'%s' (seconds > 0)\n", optarg);
				return 2;
			}
			break;
		case 'E': no_enable = true; break;
		case 'C':
			errno = 0;
			counters_ms = strtoul(optarg, &end, 10);
			if (errno || !*optarg || *end || !counters_ms ||
			    counters_ms > 3600000) {
				fprintf(stderr, "rdmatrace-record: bad "
					"--counters period '%s' (ms, 1 to "
					"3600000)\n", optarg);
				return 2;
			}
			counters = true;
			break;
		case 'N': counters = false; break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("rdmatrace-record %s (wire ABI %d.%d, module relay "
			       "ABI %d and %d)\n", RDT_LIB_VERSION, RDT_ABI_MAJOR,
			       RDT_ABI_MINOR, RDT_ABI_MAJOR, RDT_RELAY_ABI_MAJOR);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "rdmatrace-record: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!r.outdir) {
		fprintf(stderr, "rdmatrace-record: -D DIR is required (where "
			"to save the capture)\n");
		usage(stderr);
		return 2;
	}

	if (access(r.relay, F_OK)) {
		fprintf(stderr, "rdmatrace-record: %s: %s%s\n", r.relay,
			strerror(errno), errno == ENOENT ?
			": is rdmatrace.ko loaded? (modprobe rdmatrace)" : "");
		return 1;
	}
	major = rdt_relay_abi_major(r.relay, vtext, sizeof(vtext));
	if (major >= 0 && major != RDT_ABI_MAJOR &&
	    major != RDT_RELAY_ABI_MAJOR) {
		fprintf(stderr, "rdmatrace-record: %s: rdmatrace.ko speaks ABI "
			"%d, this tool speaks %d and %d: install matching "
			"versions\n", r.relay, major, RDT_ABI_MAJOR,
			RDT_RELAY_ABI_MAJOR);
		return 1;
	}
	if (make_outdir(r.outdir) < 0)
		return 1;
	ret = rdt_capture_begin(r.outdir, r.relay);
	if (ret) {
		fprintf(stderr, "rdmatrace-record: %s: saving the module's "
			"facts: %s\n", r.outdir, strerror(-ret));
		undo_setup(&r);
		return 1;
	}
	/* Handlers first: from the enable on, a signal must end in the
	 * switch back off.  The module makes its buffers, and their files,
	 * at the first enable: switch tracing on before looking for them. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!no_enable) {
		ret = rdt_relay_set_enable(r.relay, true);
		if (ret < 0 && ret != -ENOENT) {
			fprintf(stderr, "rdmatrace-record: %s/enable: %s\n",
				r.relay, strerror(-ret));
			enable_err = ret;
		}
		enabled = ret > 0;
	}
	r.buf = malloc(CHUNK);
	ret = r.buf ? scan(&r) : -1;
	if (ret < 0 || !r.ncpus) {
		if (r.buf && !r.ncpus)
			fprintf(stderr, "rdmatrace-record: %s: no trace<cpu> "
				"relay files (%s)\n", r.relay, no_enable ?
				"tracing was never switched on since the "
				"module was loaded, and --no-enable leaves it "
				"off" : enable_err ? "tracing could not be "
				"switched on: rdmatrace.ko could not allocate "
				"its relay buffers; the kernel log says why" :
				"not an rdmatrace relay directory");
		if (enabled)
			rdt_relay_set_enable(r.relay, false);
		undo_setup(&r);
		return 1;
	}

	if (counters && ctr_open(&r.ctr, r.outdir,
				 (unsigned int)counters_ms) < 0) {
		if (enabled)
			rdt_relay_set_enable(r.relay, false);
		undo_setup(&r);
		return 1;
	}
	fprintf(stderr, "rdmatrace-record: recording %u CPUs of %s to %s%s\n",
		r.ncpus, r.relay, r.outdir,
		stop_after ? "" : " until Ctrl-C");

	t0 = last_scan = now_s();
	clock_ns = 0;
	while (!stop_requested && !r.failed) {
		double t = now_s();
		unsigned int n = r.ncpus;

		if (stop_after && t - t0 >= stop_after)
			break;
		if (t - last_scan >= 1) {
			last_scan = t;
			if (scan(&r) < 0) {
				r.failed = true;
				break;
			}
		}
		if (ctr_pump(&r.ctr, 0) < 0) {
			r.failed = true;
			break;
		}
		more = copy_pass(&r, CHUNKS_PER_PASS);
		/* After the reads: a pair later than every record copied. */
		ret = rdt_capture_clock(r.outdir, &clock_ns, false);
		if (ret) {
			fprintf(stderr, "rdmatrace-record: %s/%s: %s\n",
				r.outdir, RDT_SAVED_CLOCK, strerror(-ret));
			r.failed = true;
			break;
		}
		if (more)
			continue;
		/* relay's poll wakes on a sub-buffer switch: the timeout
		 * picks up a partly filled one. */
		if (n != npfd) {
			struct pollfd *np = realloc(pfd, n * sizeof(*pfd));

			if (!np) {
				r.failed = true;
				break;
			}
			pfd = np;
			npfd = n;
		}
		for (unsigned int i = 0; i < n; i++) {
			pfd[i].fd = r.cpus[i].in;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		poll(pfd, n, 100);
	}
	if (enabled)
		rdt_relay_set_enable(r.relay, false);
	/* Everything written before the stop, then the final counts. */
	for (int i = 0; !r.failed && i < DRAIN_CHUNKS; i++)
		if (copy_pass(&r, 1) <= 0)
			break;
	secs = now_s() - t0;
	if (ctr_close(&r.ctr) < 0)
		r.failed = true;
	ret = rdt_capture_end(r.outdir, r.relay);
	if (ret)
		fprintf(stderr, "rdmatrace-record: %s/dropped: %s\n",
			r.outdir, strerror(-ret));
	for (unsigned int i = 0; i < r.ncpus; i++) {
		close(r.cpus[i].in);
		if (close(r.cpus[i].out) < 0 && !r.failed) {
			fprintf(stderr, "rdmatrace-record: %s/trace%u: %s\n",
				r.outdir, r.cpus[i].cpu, strerror(errno));
			r.failed = true;
		}
	}
	fprintf(stderr, "rdmatrace-record: %llu bytes from %u CPUs in %.1f s "
		"(%.1f MB/s) saved to %s; decode with: rdmatrace-dump -d %s\n",
		r.bytes, r.ncpus, secs, secs > 0 ? (double)r.bytes / secs / 1e6 : 0,
		r.outdir, r.outdir);
	report_drops(&r);
	free(pfd);
	free(r.cpus);
	free(r.buf);
	return r.failed || ret ? 1 : 0;
}
