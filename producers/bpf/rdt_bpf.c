// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * librdtbpf lifecycle: make the shared ring buffer and drop counter, load
 * each source's skeleton against them, attach, report per source, read.
 * A source that cannot run here is a status line, never a failure of the
 * others.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "rdt_bpf.h"
#include "rdt_bpf_int.h"
#include "nccl.skel.h"
#include "rxe.skel.h"
#include "tcp.skel.h"
#include "usdt.skel.h"
#include "verbs.skel.h"

struct rdt_bpf {
	int events_fd, drops_fd;
	struct ring_buffer *rb;
	struct rdt_nccl *nccl;
	struct rdt_rxe *rxe;
	struct rdt_tcp *tcp;
	struct rdt_usdt *usdt;
	struct rdt_verbs *verbs;
	struct rdt_verbs_watch *verbs_watch;
	/* the rescan thread (verbs_rescan()): its own links, its stop flag */
	pthread_t verbs_thread;
	bool verbs_thread_on, verbs_stop;
	pthread_mutex_t verbs_mu;
	pthread_cond_t verbs_cv;
	struct rdt_links verbs_links;
	struct rdt_links links;
	bool rxe_packets;		/* rdt_bpf_opts.rxe_packets */
	int (*cb)(void *, const void *, size_t);
	void *cb_ctx;
	char status[4096];
};

/* libbpf's own warnings go to stderr only when asked: status says enough. */
static char last_libbpf_msg[256];

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	static int verbose = -1;
	va_list aq;

	if (verbose < 0)
		verbose = getenv("RDT_BPF_DEBUG") != NULL;
	if (lvl == LIBBPF_WARN) {
		va_copy(aq, ap);
		vsnprintf(last_libbpf_msg, sizeof(last_libbpf_msg), fmt, aq);
		va_end(aq);
		last_libbpf_msg[strcspn(last_libbpf_msg, "\n")] = 0;
	}
	if (verbose && lvl != LIBBPF_DEBUG)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static void status(struct rdt_bpf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void status(struct rdt_bpf *b, const char *fmt, ...)
{
	size_t used = strlen(b->status);
	va_list ap;

	if (used + 2 >= sizeof(b->status))
		return;
	va_start(ap, fmt);
	vsnprintf(b->status + used, sizeof(b->status) - used - 1, fmt, ap);
	va_end(ap);
	strcat(b->status, "\n");
}

/* Every skeleton writes into the maps rdt_bpf_open made. */
static int share_maps(struct rdt_bpf *b, struct bpf_map *events, struct bpf_map *drops)
{
	int err = bpf_map__reuse_fd(events, b->events_fd);

	return err ? err : bpf_map__reuse_fd(drops, b->drops_fd);
}

static int add_link(struct rdt_bpf *b, struct bpf_link *l)
{
	if (!l)
		return -errno;
	if (rdt_links_add(&b->links, l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	return 0;
}

static bool open_nccl(struct rdt_bpf *b, const char *target)
{
	char msg[2048];
	int err, n;

	b->nccl = rdt_nccl__open();
	if (!b->nccl || share_maps(b, b->nccl->maps.rdt_events, b->nccl->maps.rdt_drops) ||
	    (err = rdt_nccl__load(b->nccl))) {
		status(b, "nccl: load failed: %s", last_libbpf_msg);
		return false;
	}
	n = rdt_nccl_attach(b->nccl->progs.nccl_enter, b->nccl->progs.nccl_exit, target,
			    &b->links, msg, sizeof(msg));
	status(b, "nccl: %s", msg);
	return n > 0;
}

/*
 * The rxe hooks: the kernel function, its fentry-family program and its
 * kprobe-family one (kp2: a second, the kretprobe of a QP's end).  The
 * first is the point of it all; a missing other is reported and skipped.
 * rxe_rcv records packets and does nothing else: hooked for
 * --rxe=packets only.
 */
struct rxe_hook {
	const char *func;
	struct bpf_program *fe, *kp, *kp2;
	bool packets_only;
};

#define RXE_NHOOKS 8

static void rxe_hooks(struct rdt_rxe *s, struct rxe_hook h[RXE_NHOOKS])
{
#define H(f, e, k, ...) { .func = f, .fe = s->progs.e, .kp = s->progs.k, __VA_ARGS__ }
	const struct rxe_hook v[RXE_NHOOKS] = {
		H("rxe_cq_post", fentry_cq_post, kprobe_cq_post),
		H("rxe_resp_queue_pkt", fentry_resp_queue_pkt, kprobe_resp_queue_pkt),
		H("rxe_comp_queue_pkt", fentry_comp_queue_pkt, kprobe_comp_queue_pkt),
		H("rxe_xmit_packet", fentry_xmit_packet, kprobe_xmit_packet),
		H("retransmit_timer", fentry_retransmit_timer, kprobe_retransmit_timer),
		H("rnr_nak_timer", fentry_rnr_nak_timer, kprobe_rnr_nak_timer),
		H("rxe_destroy_qp", fexit_destroy_qp, kprobe_destroy_qp,
		  .kp2 = s->progs.kretprobe_destroy_qp),
		H("rxe_rcv", fentry_rcv, kprobe_rcv, .packets_only = true),
	};
#undef H

	memcpy(h, v, sizeof(v));
}

static void destroy_links_from(struct rdt_bpf *b, size_t n)
{
	while (b->links.n > n)
		bpf_link__destroy(b->links.v[--b->links.n]);
}

/*
 * fentry first: cheaper, and it proves the module's BTF matches.  Kernels
 * without BPF trampolines (the build host) refuse it at load or attach:
 * then the same bodies as kprobes.  @why gets the reason of a failure, or
 * on success the list of functions hooked and those that were not.
 */
static bool open_rxe_family(struct rdt_bpf *b, bool fentry, char *why, size_t whylen)
{
	struct rxe_hook h[RXE_NHOOKS];
	char hooked[256] = "", missing[512] = "";
	size_t nlinks = b->links.n;
	int ok = 0;

	rxe_hooks(b->rxe, h);
	for (size_t i = 0; i < RXE_NHOOKS; i++) {
		bool use = b->rxe_packets || !h[i].packets_only;

		bpf_program__set_autoload(h[i].fe, use && fentry);
		bpf_program__set_autoload(h[i].kp, use && !fentry);
		if (h[i].kp2)
			bpf_program__set_autoload(h[i].kp2, use && !fentry);
	}
	b->rxe->rodata->rxe_packets = b->rxe_packets;
	if (share_maps(b, b->rxe->maps.rdt_events, b->rxe->maps.rdt_drops) ||
	    rdt_rxe__load(b->rxe)) {
		snprintf(why, whylen, "load: %s", last_libbpf_msg);
		return false;
	}
	for (size_t i = 0; i < RXE_NHOOKS; i++) {
		size_t before = b->links.n;
		int err;

		if (!b->rxe_packets && h[i].packets_only)
			continue;
		/* The kretprobe before its kprobe: an entry never kept for nothing. */
		err = !fentry && h[i].kp2 ? add_link(b, bpf_program__attach(h[i].kp2)) : 0;
		if (!err)
			err = add_link(b, bpf_program__attach(fentry ? h[i].fe : h[i].kp));
		if (err) {
			destroy_links_from(b, before);
			if (i == 0) {
				snprintf(why, whylen, "attach %s: %s", h[i].func, strerror(-err));
				destroy_links_from(b, nlinks);
				return false;
			}
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 " (%s not hooked: %s)", h[i].func, strerror(-err));
		} else {
			snprintf(hooked + strlen(hooked), sizeof(hooked) - strlen(hooked),
				 "%s%s", ok ? " " : "", h[i].func);
			ok++;
		}
	}
	snprintf(why, whylen, "%s%s", hooked, missing);
	return ok > 0;
}

/* rxe built into the kernel: its first hook is a function of vmlinux's BTF. */
static bool rxe_in_vmlinux(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool found;

	if (!vmlinux)
		return false;
	found = btf__find_by_name_kind(vmlinux, "rxe_cq_post", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return found;
}

/*
 * A kernel that preempts tasks anywhere: PREEMPT_RT, PREEMPT, or
 * PREEMPT_DYNAMIC in full or lazy mode.  There an fentry program runs
 * preemptible (migrate_disable only), and a second task on the CPU skips
 * it (a recursion miss): rxe's workers lost completions that way on the
 * 7.2 debug kernel.  A kprobe's program runs with preemption off.
 */
static bool kernel_preempts(void)
{
	char mode[128] = "";
	struct utsname u;
	FILE *f;

	if (uname(&u))
		return false;
	if (strstr(u.version, "PREEMPT_RT"))
		return true;
	if (!strstr(u.version, "PREEMPT_DYNAMIC"))
		return strstr(u.version, "PREEMPT ") != NULL;
	/* "none voluntary (full) lazy": debugfs, where mounted. */
	f = fopen("/sys/kernel/debug/sched/preempt", "r");
	if (!f)
		return false;
	if (!fgets(mode, sizeof(mode), f))
		mode[0] = 0;
	fclose(f);
	return strstr(mode, "(full)") || strstr(mode, "(lazy)");
}

/* What the status line says of packets. */
#define RXE_PACKETS(b) ((b)->rxe_packets ? "recorded" : "counted per QP in its CQEs")

static bool open_rxe(struct rdt_bpf *b)
{
	char why_fe[512] = "open failed", why_kp[512] = "open failed";
	const char *force = getenv("RDT_BPF_RXE_KPROBE");
	bool builtin = false;

	if (access("/sys/module/rdma_rxe", F_OK)) {
		/*
		 * Built in (CONFIG_RDMA_RXE=y, as in the debug kernel): no
		 * /sys/module entry without parameters, and its types and
		 * functions are in vmlinux's BTF, where libbpf looks first.
		 */
		builtin = rxe_in_vmlinux();
		if (!builtin) {
			status(b, "rxe: rdma_rxe not loaded");
			return false;
		}
	}
	if (!builtin && access("/sys/kernel/btf/rdma_rxe", F_OK)) {
		/* The CO-RE types of rxe_core.h are relocated against module BTF. */
		status(b, "rxe: rdma_rxe has no BTF (/sys/kernel/btf/rdma_rxe)");
		return false;
	}
	/* RDT_BPF_RXE_KPROBE=1: the kprobe twins even where fentry works (tests). */
	if (force && strcmp(force, "0")) {
		snprintf(why_fe, sizeof(why_fe), "skipped: RDT_BPF_RXE_KPROBE set");
		b->rxe = NULL;
	} else if (!force && kernel_preempts()) {
		snprintf(why_fe, sizeof(why_fe),
			 "skipped: a preemptible kernel would skip its runs");
		b->rxe = NULL;
	} else {
		b->rxe = rdt_rxe__open();
	}
	if (b->rxe && open_rxe_family(b, true, why_fe, sizeof(why_fe))) {
		status(b, "rxe: attached (fentry) %s; packets %s", why_fe, RXE_PACKETS(b));
		return true;
	}
	rdt_rxe__destroy(b->rxe);
	b->rxe = rdt_rxe__open();
	if (b->rxe && open_rxe_family(b, false, why_kp, sizeof(why_kp))) {
		status(b, "rxe: attached (kprobe; fentry %s) %s; packets %s", why_fe, why_kp,
		       RXE_PACKETS(b));
		return true;
	}
	status(b, "rxe: not attached: fentry %s; kprobe %s", why_fe, why_kp);
	return false;
}

static bool open_tcp(struct rdt_bpf *b)
{
	b->tcp = rdt_tcp__open();
	if (!b->tcp || share_maps(b, b->tcp->maps.rdt_events, b->tcp->maps.rdt_drops) ||
	    rdt_tcp__load(b->tcp)) {
		status(b, "tcp: load failed: %s", last_libbpf_msg);
		return false;
	}
	if (add_link(b, bpf_program__attach(b->tcp->progs.tcp_retransmit))) {
		status(b, "tcp: attach raw tracepoint tcp_retransmit_skb: %s", strerror(errno));
		return false;
	}
	status(b, "tcp: attached raw tracepoint tcp_retransmit_skb");
	return true;
}

static bool open_usdt(struct rdt_bpf *b, const char *path)
{
	if (!path) {
		status(b, "usdt: no target binary given");
		return false;
	}
	if (access(path, R_OK)) {
		status(b, "usdt: %s: %s", path, strerror(errno));
		return false;
	}
	b->usdt = rdt_usdt__open();
	if (!b->usdt || share_maps(b, b->usdt->maps.rdt_events, b->usdt->maps.rdt_drops) ||
	    rdt_usdt__load(b->usdt)) {
		status(b, "usdt: load failed: %s", last_libbpf_msg);
		return false;
	}
	if (add_link(b, bpf_program__attach_usdt(b->usdt->progs.coll_begin, -1, path,
						 "rdmatrace", "coll_begin", NULL)) ||
	    add_link(b, bpf_program__attach_usdt(b->usdt->progs.coll_end, -1, path,
						 "rdmatrace", "coll_end", NULL))) {
		status(b, "usdt: %s: no rdmatrace:coll_begin/coll_end probes (%s)", path,
		       last_libbpf_msg);
		return false;
	}
	/* coll_step came later (ABI 1.14): a build without it still has
	 * its collectives marked, not where each rank is inside one. */
	if (add_link(b, bpf_program__attach_usdt(b->usdt->progs.coll_step, -1, path,
						 "rdmatrace", "coll_step", NULL))) {
		status(b, "usdt: attached rdmatrace:coll_begin,coll_end in %s (no coll_step probe: steps not traced)",
		       path);
		return true;
	}
	status(b, "usdt: attached rdmatrace:coll_begin,coll_end,coll_step in %s", path);
	return true;
}

/*
 * A copy of a provider file that a process maps after the attach (a
 * container started later): probed within about a second of the mapping
 * (every process's maps are read once a second), said on stderr as the
 * status lines are.  What it posted before is not seen.  In a thread of
 * its own: a walk of /proc with many processes, or one whose maps file is
 * huge, takes as long as it takes without holding up the reader; the
 * probes it places go into a list of its own, destroyed after it ends.
 */
#define VERBS_RESCAN_S	1

static void *verbs_rescan(void *arg)
{
	struct rdt_bpf *b = arg;
	struct timespec t;
	char msg[512];

	pthread_mutex_lock(&b->verbs_mu);
	while (!b->verbs_stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += VERBS_RESCAN_S;
		while (!b->verbs_stop &&
		       pthread_cond_timedwait(&b->verbs_cv, &b->verbs_mu, &t) != ETIMEDOUT)
			;
		if (b->verbs_stop)
			break;
		pthread_mutex_unlock(&b->verbs_mu);
		if (rdt_verbs_rescan(b->verbs_watch, &b->verbs_links, msg, sizeof(msg)))
			fprintf(stderr, "verbs: %s\n", msg);
		pthread_mutex_lock(&b->verbs_mu);
	}
	pthread_mutex_unlock(&b->verbs_mu);
	return NULL;
}

static void verbs_rescan_start(struct rdt_bpf *b)
{
	pthread_condattr_t ca;
	int e;

	pthread_mutex_init(&b->verbs_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&b->verbs_cv, &ca);
	pthread_condattr_destroy(&ca);
	e = pthread_create(&b->verbs_thread, NULL, verbs_rescan, b);
	if (e) {
		status(b, "verbs: no rescan thread (%s): copies of the provider mapped from now on are not probed",
		       strerror(e));
		pthread_cond_destroy(&b->verbs_cv);
		pthread_mutex_destroy(&b->verbs_mu);
		return;
	}
	b->verbs_thread_on = true;
}

static void verbs_rescan_stop(struct rdt_bpf *b)
{
	if (!b->verbs_thread_on)
		return;
	pthread_mutex_lock(&b->verbs_mu);
	b->verbs_stop = true;
	pthread_cond_signal(&b->verbs_cv);
	pthread_mutex_unlock(&b->verbs_mu);
	pthread_join(b->verbs_thread, NULL);
	pthread_cond_destroy(&b->verbs_cv);
	pthread_mutex_destroy(&b->verbs_mu);
	b->verbs_thread_on = false;
}

static bool open_verbs(struct rdt_bpf *b, int pid)
{
	char msg[2048];
	int n;

	b->verbs = rdt_verbs__open();
	if (!b->verbs) {
		status(b, "verbs: open failed: %s", last_libbpf_msg);
		return false;
	}
	rdt_verbs_rodata(b->verbs);
	if (share_maps(b, b->verbs->maps.rdt_events, b->verbs->maps.rdt_drops) ||
	    rdt_verbs__load(b->verbs)) {
		status(b, "verbs: load failed: %s", last_libbpf_msg);
		return false;
	}
	n = rdt_verbs_attach(&(struct rdt_verbs_progs){
				     .post_send = b->verbs->progs.verbs_post_send,
				     .post_recv = b->verbs->progs.verbs_post_recv,
				     .post_srq_recv = b->verbs->progs.verbs_post_srq_recv,
				     .post_ret = b->verbs->progs.verbs_post_ret,
				     .poll_cq = b->verbs->progs.verbs_poll_cq,
				     .poll_cq_ret = b->verbs->progs.verbs_poll_cq_ret,
				     .req_notify = b->verbs->progs.verbs_req_notify,
				     .req_notify_ret = b->verbs->progs.verbs_req_notify_ret,
				     .wr_start = b->verbs->progs.verbs_wr_start,
				     .wr_op = b->verbs->progs.verbs_wr_op,
				     .wr_sge = b->verbs->progs.verbs_wr_sge,
				     .wr_sge_list = b->verbs->progs.verbs_wr_sge_list,
				     .wr_inline = b->verbs->progs.verbs_wr_inline,
				     .wr_complete = b->verbs->progs.verbs_wr_complete,
				     .cqx_poll = b->verbs->progs.verbs_cqx_poll,
				     .cqx_poll_ret = b->verbs->progs.verbs_cqx_poll_ret,
				     .cqx_end = b->verbs->progs.verbs_cqx_end,
				     .cqx_read = b->verbs->progs.verbs_cqx_read },
			     bpf_map__fd(b->verbs->maps.verbs_devs), pid, &b->links,
			     &b->verbs_watch, msg, sizeof(msg));
	status(b, "verbs: %s", msg);
	if (b->verbs_watch)
		verbs_rescan_start(b);
	return n > 0;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct rdt_bpf *b = ctx;

	return b->cb(b->cb_ctx, data, size);
}

struct rdt_bpf *rdt_bpf_open(const struct rdt_bpf_opts *o, char *err, size_t errlen)
{
	size_t rb_bytes = o->ringbuf_bytes ? o->ringbuf_bytes : 4u << 20;
	struct rdt_bpf *b = calloc(1, sizeof(*b));
	int attached = 0;

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->events_fd = b->drops_fd = -1;
	libbpf_set_print(libbpf_print);
	b->events_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "rdt_events", 0, 0, rb_bytes, NULL);
	b->drops_fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "rdt_drops", sizeof(__u32),
				     sizeof(__u64), 1, NULL);
	if (b->events_fd < 0 || b->drops_fd < 0) {
		snprintf(err, errlen, "bpf: cannot create maps: %s%s", strerror(errno),
			 errno == EPERM ? " (needs root / CAP_BPF)" : "");
		goto fail;
	}
	b->rb = ring_buffer__new(b->events_fd, on_sample, b, NULL);
	if (!b->rb) {
		snprintf(err, errlen, "bpf: ring_buffer__new: %s", strerror(errno));
		goto fail;
	}

	if (o->nccl)
		attached += open_nccl(b, o->nccl_target);
	else
		status(b, "nccl: off");
	b->rxe_packets = o->rxe_packets;
	if (o->rxe)
		attached += open_rxe(b);
	else
		status(b, "rxe: off");
	if (o->tcp)
		attached += open_tcp(b);
	else
		status(b, "tcp: off");
	if (o->usdt)
		attached += open_usdt(b, o->usdt_target);
	else
		status(b, "usdt: off");
	if (o->verbs)
		attached += open_verbs(b, o->verbs_pid);
	else
		status(b, "verbs: off");

	if (!attached) {
		snprintf(err, errlen, "%s", b->status);
		goto fail;
	}
	return b;
fail:
	rdt_bpf_close(b);
	return NULL;
}

int rdt_bpf_fd(struct rdt_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

int rdt_bpf_consume(struct rdt_bpf *b, int (*cb)(void *ctx, const void *rec, size_t len),
		    void *ctx)
{
	b->cb = cb;
	b->cb_ctx = ctx;
	return ring_buffer__consume(b->rb);
}

/*
 * Runs of a loaded program the kernel skipped: a tracing program does not
 * nest on its CPU, and on a preemptible kernel (PREEMPT, PREEMPT_RT) a
 * task preempted inside one makes the next task's run of it a miss (the
 * 7.2 debug kernel's rxe workers lost one rxe_cq_post in ~1000 so).  Each
 * miss is an event never written: counted as lost, like a full ring.
 */
static uint64_t obj_missed(const struct bpf_object *obj)
{
	struct bpf_program *p;
	uint64_t sum = 0;

	if (!obj)
		return 0;
	bpf_object__for_each_program(p, obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

static uint64_t progs_missed(struct rdt_bpf *b)
{
	return obj_missed(b->nccl ? b->nccl->obj : NULL) +
	       obj_missed(b->rxe ? b->rxe->obj : NULL) +
	       obj_missed(b->tcp ? b->tcp->obj : NULL) +
	       obj_missed(b->usdt ? b->usdt->obj : NULL) +
	       obj_missed(b->verbs ? b->verbs->obj : NULL);
}

uint64_t rdt_bpf_dropped(struct rdt_bpf *b)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = progs_missed(b);
	__u32 zero = 0;
	__u64 *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(b->drops_fd, &zero, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

/* A hash map's keys can restart under deletes: a bound, not a loop for
 * ever (the map holds 16384 at most). */
#define INFLIGHT_MAX_STEPS 32768

uint64_t rdt_bpf_inflight_min(struct rdt_bpf *b)
{
	uint64_t min = UINT64_MAX;
	__u32 key = 0, next;
	unsigned char v[256];
	const struct bpf_map *m;
	int fd;

	if (!b->nccl)
		return min;
	/* No call in flight (nccl.bpf.c's calls_live): nothing to walk. */
	if (b->nccl->bss &&
	    (bpf_map__map_flags(b->nccl->maps.bss) & BPF_F_MMAPABLE) &&
	    !__atomic_load_n(&b->nccl->bss->calls_live, __ATOMIC_ACQUIRE))
		return min;
	m = b->nccl->maps.calls;
	fd = bpf_map__fd(m);
	/* struct call (nccl.bpf.c) starts with its __u64 ts */
	if (fd < 0 || bpf_map__value_size(m) > sizeof(v) ||
	    bpf_map__value_size(m) < sizeof(uint64_t))
		return min;
	for (int i = 0; i < INFLIGHT_MAX_STEPS &&
	     !bpf_map_get_next_key(fd, i ? &key : NULL, &next); i++) {
		uint64_t ts;

		if (!bpf_map_lookup_elem(fd, &next, v)) {
			memcpy(&ts, v, sizeof(ts));
			if (ts < min)
				min = ts;
		}
		key = next;
	}
	return min;
}

const char *rdt_bpf_status(struct rdt_bpf *b)
{
	return b->status;
}

void rdt_bpf_close(struct rdt_bpf *b)
{
	if (!b)
		return;
	verbs_rescan_stop(b);
	rdt_links_destroy(&b->verbs_links);
	rdt_links_destroy(&b->links);
	ring_buffer__free(b->rb);
	rdt_nccl__destroy(b->nccl);
	rdt_rxe__destroy(b->rxe);
	rdt_tcp__destroy(b->tcp);
	rdt_usdt__destroy(b->usdt);
	rdt_verbs_watch_free(b->verbs_watch);
	rdt_verbs__destroy(b->verbs);
	if (b->events_fd >= 0)
		close(b->events_fd);
	if (b->drops_fd >= 0)
		close(b->drops_fd);
	free(b);
}
