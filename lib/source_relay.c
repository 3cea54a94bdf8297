// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Live relay source: /sys/kernel/debug/rdmatrace/trace<cpu>, one stream per
 * CPU.  relay's poll wakes only on a sub-buffer switch, so the reader polls
 * with a timeout and then read()s every CPU: read returns the partial
 * current sub-buffer and skips relay's padding.
 *
 * The module writes its records in the relay form (<rdmatrace/wire.h>):
 * no CPU, the task only in COMM records, raw TSC stamps.  Each is made an
 * ABI 1 record in place, where it was read, before anything else looks
 * at it: the CPU is the file's, the task its CPU's last COMM's, the stamp
 * converted from the clock pairs (relay_clock.c) sampled after each read
 * (every record read is older than the pair after it), or saved beside a
 * capture by rdmatrace-record.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The most one read() of a CPU asks for: bytes read stay in its stream
 * until they are handed out, which may be a reorder window later. */
#define CPU_BUF (256 * 1024)

struct relay_cpu {
	int fd;
	unsigned int cpu;
	char name[16];		/* "cpu N", for messages */
	struct rdt_stream st;	/* what was read, its records in place */
	uint64_t off;		/* of st.buf[st.scan] in the CPU's stream */
	bool drained;		/* the last read found nothing more */
	uint64_t drained_at;	/* the reader's pass clock then */
	/* The sub-buffer being read, to drop what a read that raced a
	 * switch returned (kmod/emit.c, rdt_subbuf_start()). */
	bool have_seq;		/* seq is known */
	bool stale;		/* in an old header's sub-buffer: drop */
	uint64_t seq;
	uint64_t hdr_ts;	/* its header's stamp (checked: hdr_check) */
	uint64_t pos;		/* its bytes passed on, header included */
	uint64_t replay;	/* read again from its start: drop up to here */
	bool corrupt;		/* skipping corrupt bytes to a header */
	/* The relay form: the task of this CPU's last COMM record since its
	 * sub-buffer header, the stamp of its last record passed on (the
	 * converted stamps are kept in order), and the header's stamp as
	 * written (the raw TSC when it was, for relay_fresh()). */
	uint32_t pid, tid;
	uint64_t out_ts;
	uint64_t hdr_key;
	bool hdr_raw;
	bool hdr_check;		/* records are checked against hdr_ts */
	/* A saved capture's file: its latest record's ts, and its end. */
	uint64_t last_ts;
	bool eof;
};

struct relay_priv {
	char *dir;
	struct relay_cpu *cpus;
	unsigned int ncpus;
	uint64_t last_scan;
	uint64_t n_subbufs;	/* the module's, 0 if unknown */
	bool hdr_stamped;	/* headers carry their switch's stamp (ABI 1.9) */
	bool saved;		/* a capture rdmatrace-record saved */
	bool clock_said;	/* relay_clock_said() */
	struct rdt_tsc_map clk;	/* raw stamps to CLOCK_MONOTONIC */
};

static void relay_clock_rec(struct relay_priv *p, const unsigned char *rec,
			    const struct rdt_hdr *h);

/*
 * A record of the relay form, whole header in @rec: its version, CPU and
 * stamp as ABI 1's, in place (the task waits for relay_named(): only a
 * fresh record moves the CPU's task).  *@key is the stamp as written, for
 * relay_fresh()'s order test, *@raw whether it was the TSC.
 */
static void relay_unform(struct relay_priv *p, const struct relay_cpu *c,
			 unsigned char *rec, size_t avail, uint64_t *key,
			 bool *raw)
{
	struct rdt_hdr h, n;

	memcpy(&h, rec, sizeof(h));
	*key = h.ts_ns;
	*raw = false;
	if (h.magic != RDT_REC_MAGIC || h.version != RDT_RELAY_FORM)
		return;
	h.version = RDT_ABI_MAJOR;
	h.cpu = c->cpu;
	/* A sub-buffer's clock pair comes right after its header, which is
	 * stamped before it: taken first (again later: the same pair). */
	if (h.type == RDT_EV_SUBBUF && avail >= h.size + sizeof(n)) {
		memcpy(&n, rec + h.size, sizeof(n));
		if (n.magic == RDT_REC_MAGIC && n.version == RDT_RELAY_FORM &&
		    n.type == RDT_EV_CLOCK && n.size == sizeof(struct rdt_ev_clock) &&
		    avail >= h.size + n.size)
			relay_clock_rec(p, rec + h.size, &n);
	}
	if (h.ts_ns & RDT_TS_RAW) {
		*raw = true;
		*key = h.ts_ns & ~RDT_TS_RAW;
		h.ts_ns = rdt_tsc_map_ns(&p->clk, *key);
	}
	memcpy(rec, &h, sizeof(h));
}

/*
 * A fresh record (relay_fresh()) of the relay form: named by its CPU's
 * task, stamped no earlier than the CPU's last record (stamps converted
 * with pairs sampled since may step back by a few ns), and the CPU's task
 * moved by a COMM record or a sub-buffer header.  False for a COMM record
 * of no task (tid 0: interrupt context), which only says so to this
 * stream and is not passed on (ABI 1's stream had none).
 */
static bool relay_named(struct relay_cpu *c, unsigned char *rec,
			struct rdt_hdr *h, bool form)
{
	if (h->type == RDT_EV_SUBBUF) {
		c->pid = 0;
		c->tid = 0;
	} else if (h->type == RDT_EV_COMM) {
		c->pid = h->pid;
		c->tid = h->tid;
	}
	if (form) {
		h->pid = c->pid;
		h->tid = c->tid;
		if (h->ts_ns < c->out_ts)
			h->ts_ns = c->out_ts;
		memcpy(rec, h, sizeof(*h));
	}
	c->out_ts = h->ts_ns;
	return !form || h->type != RDT_EV_COMM || h->tid;
}

/* A stream's clock pair, among the others (it is not passed on). */
static void relay_clock_rec(struct relay_priv *p, const unsigned char *rec,
			    const struct rdt_hdr *h)
{
	struct rdt_ev_clock ev;

	if (h->size < sizeof(ev))
		return;		/* a record shorter than its type: checked */
	memcpy(&ev, rec, sizeof(ev));
	if (!p->clk.khz)
		p->clk.khz = ev.tsc_khz;
	rdt_tsc_map_insert(&p->clk, (struct rdt_tsc_pair){ ev.tsc, ev.mono_ns });
}

/* The live module: a clock pair after each read that got records, so
 * every record read has one after it. */
static void relay_pair(struct relay_priv *p)
{
	struct rdt_tsc_pair pair;

	if (rdt_tsc_sample(&pair))
		rdt_tsc_map_note(&p->clk, pair);
}

/*
 * The clock pairs raw stamps are converted with: a capture's saved ones,
 * or the live module's tsc_khz and a first pair now (a record already in
 * its buffers is extrapolated back from it at that rate).
 */
static int relay_clock_open(struct rdt_src *s, struct relay_priv *p,
			    const char *dir)
{
	char path[600], err[700];
	int ret;

	if (!p->saved) {
		p->clk.khz = rdt_relay_clock_khz(dir);
		relay_pair(p);
		return 0;
	}
	ret = rdt_capture_clock_path(dir, path, sizeof(path));
	if (!ret)
		ret = rdt_tsc_map_load(&p->clk, path, err, sizeof(err));
	if (ret == -ENOENT)
		return 0;	/* said at the end if a raw stamp needed it */
	if (ret < 0) {
		if (ret != -EINVAL)
			snprintf(err, sizeof(err), "%s: %s", path, strerror(-ret));
		rdt_src_set_error(s, "%s", err);
	}
	return ret;
}

/* Stamps converted with no pairs around them: said once, at the end. */
static void relay_clock_said(struct rdt_src *s, struct relay_priv *p)
{
	if (p->clock_said)
		return;
	if (p->clk.refused)
		rdt_src_add_status(s, "%s: %llu clock pairs disagree with the "
				   "pairs around them (a TSC not in step across "
				   "CPUs?): not used\n", p->dir,
				   (unsigned long long)p->clk.refused);
	p->clock_said = true;
	if (!p->clk.guessed)
		return;
	rdt_src_add_status(s, "%s: %llu raw TSC stamps converted without clock "
			   "pairs (no %s in the capture, or too few): their "
			   "times are approximate\n", p->dir,
			   (unsigned long long)p->clk.guessed, RDT_SAVED_CLOCK);
}

/*
 * Whether to pass on the record at @rec, @h its header.  relay's read()
 * races the writer's sub-buffer switch, and may return the header of a
 * sub-buffer it has not rewritten yet (a seq not above the current one,
 * or RDT_SUBBUF_SEQ_UNUSED), or the current sub-buffer again from its
 * start (the same seq again, then records already passed on).  Each
 * sub-buffer starts with a header, so the position in it says which
 * records were seen.  A lower seq further back than the buffer holds is a
 * new channel, not an old header.
 *
 * A read can also take the whole of the sub-buffer being started: it
 * loads buf->data (still the old one) before relay_switch_subbuf() sets
 * it and the new sub-buffer's padding (0) after it is cleared, and gets
 * the new header, the records written so far, then what the sub-buffer
 * held before: records of an earlier sub-buffer, up to its end.  relay
 * then reads the sub-buffer again from its start.  The old records are
 * told by their stamps: the module stamps a header (but the channel's
 * first, seq 0, at relay_open()) with the stamp of the record whose
 * reservation switched, and every later record of that CPU is stamped
 * no earlier (since ABI 1.9; not checked for an older module, or one
 * whose version is unknown).  So a record stamped before its header ends what the read
 * got of that sub-buffer; counted in pos, it made the read again drop
 * the records written after it as repeats, one sub-buffer's records
 * lost and counted as nothing (tests/kmod/record.test, about one overrun
 * run in seven on 6.1).
 */
static bool relay_fresh(const struct relay_priv *p, struct relay_cpu *c,
			const struct rdt_hdr *h, const unsigned char *rec,
			uint64_t key, bool raw, bool form)
{
	struct rdt_ev_subbuf sb;

	if (h->type == RDT_EV_SUBBUF && h->size == sizeof(sb)) {
		memcpy(&sb, rec, sizeof(sb));
		if (sb.seq == RDT_SUBBUF_SEQ_UNUSED)
			return false;
		if (c->have_seq && sb.seq == c->seq) {
			/* a repeat cut short, then read again: the furthest */
			if (c->pos > c->replay)
				c->replay = c->pos;
			c->pos = sizeof(sb);
			c->stale = false;
			return false;
		}
		if (c->have_seq && sb.seq < c->seq &&
		    (!p->n_subbufs || c->seq - sb.seq < p->n_subbufs)) {
			c->stale = true;
			return false;
		}
		c->have_seq = true;
		c->stale = false;
		c->seq = sb.seq;
		/* The relay form is stamped so whatever `version` said. */
		c->hdr_check = sb.seq && (p->hdr_stamped || form);
		c->hdr_ts = h->ts_ns;
		c->hdr_key = key;
		c->hdr_raw = raw;
		c->pos = sizeof(sb);
		c->replay = 0;
		return true;
	}
	if (c->stale)
		return false;
	/* Raw stamps against each other as written: converted ones may tie
	 * or step by a few ns where pairs were added between them. */
	if (c->hdr_check &&
	    (raw && c->hdr_raw ? key < c->hdr_key : h->ts_ns < c->hdr_ts)) {
		/* what the sub-buffer held before: the rest of this read */
		c->stale = true;
		return false;
	}
	if (c->replay) {
		if (c->pos + h->size <= c->replay) {
			c->pos += h->size;
			return false;
		}
		c->replay = 0;
	}
	c->pos += h->size;
	return true;
}

/* Whether the module's sub-buffer headers carry the stamp of the record
 * that switched (ABI 1.9, 3648cb4): "abi MAJOR.MINOR" in its version. */
static bool hdr_stamped(const char *version)
{
	const char *a = strstr(version, "abi");
	unsigned int major, minor;

	if (!a || sscanf(a, "abi %u.%u", &major, &minor) != 2)
		return false;
	return major > 1 || minor >= 9;
}

static bool lockdown_active(char *mode, size_t len)
{
	FILE *f = fopen("/sys/kernel/security/lockdown", "r");
	char line[128] = "", *a, *b;

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	a = strchr(line, '[');
	b = a ? strchr(a, ']') : NULL;
	if (!a || !b)
		return false;
	snprintf(mode, len, "%.*s", (int)(b - a - 1), a + 1);
	return strcmp(mode, "none") != 0;
}

static int open_cpu(struct rdt_src *s, struct relay_priv *p, unsigned int cpu)
{
	struct relay_cpu *c, *v;
	char path[600], mode[32];
	int fd;

	for (unsigned int i = 0; i < p->ncpus; i++)
		if (p->cpus[i].cpu == cpu)
			return 0;
	snprintf(path, sizeof(path), "%s/trace%u", p->dir, cpu);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if ((e == EPERM || e == EACCES) && lockdown_active(mode, sizeof(mode)))
			rdt_src_set_error(s, "%s: debugfs refuses relay files under "
					  "kernel lockdown (%s; Secure Boot?): "
					  "live tracing is impossible here",
					  path, mode);
		else if (e == EPERM || e == EACCES)
			rdt_src_set_error(s, "%s: permission denied (the rdmatrace "
					  "debugfs files are root-only)", path);
		else
			rdt_src_set_error(s, "%s: %s", path, strerror(e));
		return -e;
	}
	v = realloc(p->cpus, (p->ncpus + 1) * sizeof(*v));
	if (!v) {
		close(fd);
		return -ENOMEM;
	}
	p->cpus = v;
	c = &p->cpus[p->ncpus];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->cpu = cpu;
	snprintf(c->name, sizeof(c->name), "cpu %u", cpu);
	if (rdt_stream_room(&c->st, CPU_BUF) < 0) {
		close(fd);
		return -ENOMEM;
	}
	p->ncpus++;
	return 0;
}

/* CPUs that come online get a new trace<N> file: pick them up. */
static int scan(struct rdt_src *s, struct relay_priv *p)
{
	DIR *d = opendir(p->dir);
	struct dirent *de;
	int ret = 0;

	p->last_scan = rdt_now_mono();
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		unsigned int cpu;
		char extra;

		if (sscanf(de->d_name, "trace%u%c", &cpu, &extra) != 1 ||
		    cpu >= RDT_RELAY_MAX_CPUS)
			continue;
		ret = open_cpu(s, p, cpu);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

/*
 * Where the next sub-buffer may start in @b after a corrupt record at 0:
 * records are 8-byte sized and every sub-buffer starts with a SUBBUF
 * header, so look at each 8-byte step for one.  Without one, all but a
 * last partial step can go: the header may start there.
 */
static size_t resync(const unsigned char *b, size_t len)
{
	size_t q;

	for (q = 8; q + 8 <= len; q += 8) {
		struct rdt_hdr h;

		memcpy(&h, b + q, 8);	/* magic to size */
		if (h.magic == RDT_REC_MAGIC && h.source == RDT_SRC_KMOD &&
		    h.type == RDT_EV_SUBBUF &&
		    h.size == sizeof(struct rdt_ev_subbuf) &&
		    (h.version <= RDT_ABI_MAJOR || h.version == RDT_RELAY_FORM))
			return q;
	}
	return q;
}

/* One count per corrupt stretch, however many reads it takes to find the
 * next header; the first one's place and cause are kept for the report. */
static void corrupt_at(struct rdt_src *s, struct relay_cpu *c,
		       const char *why)
{
	if (!c->corrupt && !s->st.resyncs++)
		snprintf(s->corrupt_first, sizeof(s->corrupt_first),
			 "%s offset %llu: %s", c->name,
			 (unsigned long long)c->off, why);
	c->corrupt = true;
}

static int read_cpu(struct rdt_src *s, struct relay_priv *p,
		    struct relay_cpu *c, const struct rdt_pass *pass, bool *got)
{
	struct rdt_stream *st = &c->st;
	size_t pos, want, skip;
	const char *why;
	ssize_t n;
	int ret;

	/* A stream grown to its limit with what the merge has not handed
	 * out reads no more: the producer's loss is counted. */
	ret = rdt_stream_room(st, CPU_BUF);
	if (ret < 0)
		return ret == -ENOBUFS ? 0 : ret;
	n = read(c->fd, st->buf + st->len, CPU_BUF);
	c->drained = n < (ssize_t)CPU_BUF;
	c->drained_at = pass->now;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 0;
	*got = true;
	st->len += (size_t)n;
	if (!p->saved)
		relay_pair(p);
	for (pos = st->scan; st->len - pos >= sizeof(struct rdt_hdr);
	     st->scan = pos) {
		unsigned char *rec = st->buf + pos;
		size_t avail = st->len - pos;
		enum rdt_decode_result d;
		struct rdt_hdr h;
		bool form = rec[offsetof(struct rdt_hdr, version)] == RDT_RELAY_FORM;
		bool raw = false, clock;
		uint64_t key = 0;

		if (form) {
			uint16_t size;

			/* Whole first: a record cut by the read's end is made
			 * ABI 1's once, when the rest is read. */
			memcpy(&size, rec + offsetof(struct rdt_hdr, size),
			       sizeof(size));
			if (size >= sizeof(h) && avail < size)
				goto out;
			relay_unform(p, c, rec, avail, &key, &raw);
		}

		/* The usual record: one test (rdt_rec_plain()). */
		if (__builtin_expect(rdt_rec_plain(rec, avail, &h), 1)) {
			d = RDT_DEC_OK;
			want = h.size;
		} else {
			d = rdt_decode_check(rec, avail, &h, &want, &why);
		}
		switch (d) {
		case RDT_DEC_NEED_MORE:
			goto out;	/* rest of the record is not written yet */
		case RDT_DEC_CORRUPT:
			corrupt_at(s, c, why);
			skip = resync(rec, avail);
			s->st.corrupt_bytes += skip;
			pos += skip;
			c->off += skip;
			c->pos += skip;
			continue;
		case RDT_DEC_NEWER_ABI:	/* rdt_src_push reports it */
			break;
		default:
			c->corrupt = false;
			if (!relay_fresh(p, c, &h, rec, key, raw, form)) {
				s->st.relay_repeats++;
				pos += h.size;
				c->off += h.size;
				continue;
			}
			clock = form && h.type == RDT_EV_CLOCK;
			if (clock)
				relay_clock_rec(p, rec, &h);
			/* a stream's clock pair or no-task COMM: not passed on */
			if (!relay_named(c, rec, &h, form) || clock) {
				pos += h.size;
				c->off += h.size;
				continue;
			}
		}
		/* Checked once: a plain event stays where it was read. */
		ret = d == RDT_DEC_OK ?
		      rdt_src_push_stream(s, st, pos, &h, want, c->name, c->off) :
		      rdt_src_push(s, rec, avail, c->name, c->off);
		if (ret < 0)
			return ret;
		if (h.ts_ns > c->last_ts)
			c->last_ts = h.ts_ns;
		pos += h.size;
		c->off += h.size;
	}
out:
	st->scan = pos;
	return 0;
}

/* At the end: records are published whole, so bytes left over are a
 * record cut short or the tail of a corrupt stretch, counted as corrupt
 * rather than dropped quietly. */
static void count_leftover(struct rdt_src *s, struct relay_priv *p)
{
	for (unsigned int i = 0; i < p->ncpus; i++) {
		struct relay_cpu *c = &p->cpus[i];
		size_t left = c->st.len - c->st.scan;

		if (!left || s->failed)
			continue;
		corrupt_at(s, c, "truncated record at the end");
		s->st.corrupt_bytes += left;
		c->off += left;
		c->st.scan = c->st.len;
	}
}

/*
 * The loss after the last sub-buffer switch shows only in `dropped`: what
 * it counts beyond the start and the SUBBUF headers seen.  @ts places it:
 * now for the live module, the end of a saved capture's records.
 */
static void account_dropped(struct rdt_src *s, struct relay_priv *p,
			    uint64_t ts)
{
	uint64_t *v = NULL, seen = 0;
	unsigned int nv = 0;
	char path[600];
	long long total;

	snprintf(path, sizeof(path), "%s/dropped", p->dir);
	total = rdt_relay_read_dropped(path, &v, &nv);
	for (unsigned int cpu = 0; cpu < nv; cpu++) {
		uint64_t had = cpu < s->nsubbuf_lost ? s->subbuf_lost[cpu] : 0;

		if (v[cpu] > had)
			rdt_src_push_lost(s, RDT_SRC_KMOD, cpu, v[cpu] - had,
					  ts, false);
		seen += v[cpu] > had ? v[cpu] : had;
	}
	if (!nv && total > 0) {
		for (unsigned int cpu = 0; cpu < s->nsubbuf_lost; cpu++)
			seen += s->subbuf_lost[cpu];
		if ((uint64_t)total > seen)
			rdt_src_push_lost(s, RDT_SRC_KMOD, UINT32_MAX,
					  (uint64_t)total - seen, ts, false);
	}
	free(v);
}

/*
 * A saved capture: one read of the CPU furthest behind, so that the CPUs'
 * streams advance together and the reader holds about one read per CPU
 * plus its reorder window, however long the capture.
 */
static int saved_fill(struct rdt_src *s, struct relay_priv *p,
		      const struct rdt_pass *pass)
{
	struct relay_cpu *lag = NULL;
	uint64_t wm = UINT64_MAX, end = 0;
	bool got = false;
	int ret;

	for (unsigned int i = 0; i < p->ncpus; i++)
		if (!p->cpus[i].eof &&
		    (!lag || p->cpus[i].last_ts < lag->last_ts))
			lag = &p->cpus[i];
	if (lag) {
		ret = read_cpu(s, p, lag, pass, &got);
		if (ret < 0) {
			if (!s->failed)
				rdt_src_set_error(s, "%s/trace%u: %s", p->dir,
						  lag->cpu, strerror(-ret));
			return ret;
		}
		lag->eof = !got;
	}
	for (unsigned int i = 0; i < p->ncpus; i++) {
		if (!p->cpus[i].eof && p->cpus[i].last_ts < wm)
			wm = p->cpus[i].last_ts;
		if (p->cpus[i].last_ts > end)
			end = p->cpus[i].last_ts;
	}
	s->watermark = wm;
	if (wm == UINT64_MAX) {
		count_leftover(s, p);
		account_dropped(s, p, end);
		relay_clock_said(s, p);
		s->eof = true;
	}
	return 0;
}

/* Live: one pass, then back to the merge so output flows; one-shot and
 * @force (the last fill of a live trace): drain what is there, but give
 * up after FORCE_PASSES chunks per CPU should a producer outrun us. */
#define FORCE_PASSES 1024

/* A live source's horizon: each CPU's stream is in stamp order (the
 * module stamps a record with interrupts off until it is published), read
 * to its end or up to its latest record.  Exact (rdt_src.exact): before
 * its files are there, the reorder window. */
static void relay_horizon(struct rdt_src *s, struct relay_priv *p,
			  const struct rdt_pass *pass)
{
	uint64_t h = p->ncpus ? UINT64_MAX :
		     rdt_pass_drained_horizon(pass, pass->now);

	for (unsigned int i = 0; i < p->ncpus; i++) {
		const struct relay_cpu *c = &p->cpus[i];
		uint64_t ch;

		if (c->drained)
			ch = rdt_pass_ordered_horizon(pass, c->drained_at);
		else
			ch = c->last_ts ? rdt_src_stream_horizon(s, c->last_ts) : 0;
		if (ch < h)
			h = ch;
	}
	s->horizon = h;
}

static int relay_fill_pass(struct rdt_src *s, const struct rdt_pass *pass,
			   bool force)
{
	struct relay_priv *p = s->priv;
	unsigned int passes = 0;
	bool got;
	int ret;

	if (s->windowed)
		return saved_fill(s, p, pass);

	/* No files yet: the module makes them when tracing is switched
	 * on, which the caller may do right after opening this source. */
	if (s->live && (!p->ncpus ||
			pass->now > p->last_scan + 1000000000ull))
		scan(s, p);
	do {
		got = false;
		for (unsigned int i = 0; i < p->ncpus; i++) {
			struct relay_cpu *c = &p->cpus[i];
			bool g = false;

			if (s->live && !force && c->drained &&
			    rdt_pass_may_skip(pass, c->drained_at))
				continue;
			/* Behind: what it has not read is later than the
			 * records the reader is handing out now. */
			if (s->live && !force && !c->drained &&
			    pass->ahead(pass, rdt_src_ts(s, c->last_ts)))
				continue;
			ret = read_cpu(s, p, c, pass, &g);
			if (ret < 0) {
				if (!s->failed)
					rdt_src_set_error(s, "%s/trace%u: %s", p->dir,
							  p->cpus[i].cpu,
							  strerror(-ret));
				return ret;
			}
			got |= g;
		}
	} while (got && (!s->live || (force && ++passes < FORCE_PASSES)));
	if (s->live)
		relay_horizon(s, p, pass);
	if (!s->live) {
		count_leftover(s, p);
		relay_clock_said(s, p);
		s->eof = true;
	}
	return force && got;	/* 1: stopped at FORCE_PASSES, not drained */
}

static int relay_fill(struct rdt_src *s, const struct rdt_pass *pass)
{
	return relay_fill_pass(s, pass, false);
}

static int relay_pollfds(struct rdt_src *s, struct pollfd *pfd, int max)
{
	struct relay_priv *p = s->priv;
	int n = 0;

	for (unsigned int i = 0; i < p->ncpus && n < max; i++, n++) {
		pfd[n].fd = p->cpus[i].fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
	}
	return n;
}

static void relay_finish(struct rdt_src *s, const struct rdt_pass *pass)
{
	struct relay_priv *p = s->priv;

	/* Every record written before the stop, then the loss after the
	 * last sub-buffer switch. */
	if (relay_fill_pass(s, pass, true) == 0)
		count_leftover(s, p);
	account_dropped(s, p, rdt_now_mono());
	relay_clock_said(s, p);
}

static void relay_close(struct rdt_src *s)
{
	struct relay_priv *p = s->priv;

	if (!p)
		return;
	for (unsigned int i = 0; i < p->ncpus; i++) {
		close(p->cpus[i].fd);
		rdt_stream_free(&p->cpus[i].st);
	}
	rdt_tsc_map_free(&p->clk);
	free(p->cpus);
	free(p->dir);
	free(p);
	s->priv = NULL;
}

/*
 * A capture saved by rdmatrace-record holds header.rdt, the header of the
 * host it was recorded on: take it rather than this host's.  Returns 1 if
 * there is one, 0 if not (the live module's directory), or -errno.
 */
static int saved_header(struct rdt_src *s, const char *dir)
{
	char path[600];
	FILE *f;
	int ret;

	f = rdt_capture_open_header(dir, path, sizeof(path));
	if (!f) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		rdt_src_set_error(s, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = rdt_src_read_file_hdr(s, f, path);
	fclose(f);
	return ret < 0 ? ret : 1;
}

static const struct rdt_src_ops relay_ops = {
	.fill = relay_fill,
	.pollfds = relay_pollfds,
	.finish = relay_finish,
	.close = relay_close,
};

static int src_relay_open(struct rdt_src *s, const char *dir)
{
	struct relay_priv *p = calloc(1, sizeof(*p));
	char vtext[128], path[600];
	struct stat st;
	uint64_t *v = NULL;
	unsigned int nv = 0;
	int major, ret;

	if (!p)
		return -ENOMEM;
	s->priv = p;
	s->ops = &relay_ops;
	s->exact = true;	/* relay_horizon() */
	p->dir = strdup(dir);
	if (stat(dir, &st) < 0) {
		int e = errno;
		struct stat m;

		if (e == EACCES || e == EPERM)
			rdt_src_set_error(s, "%s: permission denied (debugfs is "
					  "root-only: run as root)", dir);
		else if (e == ENOENT && !strncmp(dir, "/sys/kernel/debug", 17) &&
			 stat("/sys/kernel/debug/kernel", &m) < 0 &&
			 stat("/sys/kernel/debug/tracing", &m) < 0)
			rdt_src_set_error(s, "%s: missing: debugfs is not mounted "
					  "(mount -t debugfs none /sys/kernel/debug)",
					  dir);
		else if (e == ENOENT)
			rdt_src_set_error(s, "%s: missing relay directory: is "
					  "rdmatrace.ko loaded? (modprobe rdmatrace)",
					  dir);
		else
			rdt_src_set_error(s, "%s: %s", dir, strerror(e));
		return -e;
	}
	major = rdt_relay_abi_major(dir, vtext, sizeof(vtext));
	if (major >= 0 && major != RDT_ABI_MAJOR &&
	    major != RDT_RELAY_ABI_MAJOR) {
		rdt_src_set_error(s, "%s: rdmatrace.ko speaks ABI %d (version "
				  "\"%s\"), this reader speaks %d and %d: install "
				  "matching versions", dir, major, vtext,
				  RDT_ABI_MAJOR, RDT_RELAY_ABI_MAJOR);
		return -EPROTO;
	}
	p->hdr_stamped = hdr_stamped(vtext);
	ret = saved_header(s, dir);
	if (ret < 0)
		return ret;
	p->saved = ret > 0;
	ret = relay_clock_open(s, p, dir);
	if (ret < 0)
		return ret;
	s->windowed = p->saved && !s->live;
	if (p->saved && !rdt_capture_finished(dir)) {
		/* rdmatrace-record writes it last, on a clean stop. */
		static const char fmt[] = "%s: the recording did not finish "
			"(no `dropped` file): events lost after each CPU's "
			"last sub-buffer switch are not counted\n";
		size_t len = sizeof(fmt) + strlen(dir);

		s->status = malloc(len);
		if (s->status)
			snprintf(s->status, len, fmt, dir);
	}
	if (!p->saved) {
		rdt_local_file_hdr(&s->fh, dir);
		s->meta = rdt_local_meta();
	}
	ret = scan(s, p);
	if (ret < 0) {
		if (!s->failed)
			rdt_src_set_error(s, "%s: %s", dir, strerror(-ret));
		return ret;
	}
	snprintf(path, sizeof(path), "%s/enable", dir);
	if (!p->ncpus && !s->windowed && !access(path, F_OK)) {
		/* The module allocates its buffers, and their files, when
		 * tracing is first switched on. */
		if (!s->live) {
			rdt_src_set_error(s, "%s: no trace<cpu> relay files: "
					  "tracing was never switched on since "
					  "rdmatrace.ko was loaded (echo 1 > "
					  "%s/enable, or rdmatrace-dump -f)",
					  dir, dir);
			return -ENOENT;
		}
	} else if (!p->ncpus) {
		rdt_src_set_error(s, "%s: no trace<cpu> relay files (not an "
				  "rdmatrace relay directory, or another module "
				  "version)", dir);
		return -ENOENT;
	}
	p->n_subbufs = rdt_capture_n_subbufs(dir);
	/* Loss from before this reader started is not ours to report; a
	 * saved capture kept the count from when its recording started. */
	if (!rdt_capture_dropped_start(dir, path, sizeof(path)))
		rdt_relay_read_dropped(path, &v, &nv);
	s->subbuf_lost = v;
	s->nsubbuf_lost = nv;
	return 0;
}

RDT_EXPORT int rdt_reader_add_relay(struct rdt_reader *r, const char *dir)
{
	struct rdt_src *s = rdt_reader_new_src(r, RDT_SOURCE_RELAY, dir);

	if (!s)
		return -ENOMEM;
	return rdt_reader_finish_add(r, s, src_relay_open(s, dir));
}
