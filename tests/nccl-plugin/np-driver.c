// SPDX-License-Identifier: GPL-2.0
/*
 * np-driver: NCCL 2.28's side of the profiler plugin ABI, without a GPU.
 * Loads the plugin as NCCL does (NCCL_PROFILER_PLUGIN=NAME ->
 * libnccl-profiler-NAME.so on the library path, or a path as it is), looks
 * up ncclProfiler_v5 (--abi N: ncclProfiler_vN, 1..5; --v4 is --abi 4) and
 * replays NCCL's calls, with that version's descriptors, state arguments
 * and events (v1..v3 as NCCL 2.23..2.26 make them: no KernelCh or net
 * events before v3, no GPU timer in v3, ProxyOp states with transSize and
 * steps, commHash in Coll and P2p, v1's enum values for names, v1's op,
 * trafficBytes, isCollnet, isNvls and v2's trafficBytes in Coll):
 * init per communicator, then per communicator an application thread
 * (GroupApi, CollApi, Group, KernelLaunch, Coll, P2pApi, P2p, KernelCh
 * with GPU timer stamps) and a proxy thread (ProxyCtrl, ProxyOp with
 * state changes, ProxySteps with transSize, net-IB QP events and a socket
 * event under the steps), concurrently, then finalize.
 *
 * --truth FILE writes one JSON line per call it made, with the handle the
 * plugin returned and every field it passed: the test compares that with
 * what rdmatrace-dump shows.  --bad adds descriptors the plugin must count
 * and skip.  Exit 0, or 1 with a message.
 *
 * Ranks as NCCL gives them: its descriptors of GroupApi, CollApi, P2pApi,
 * KernelLaunch, Group, ProxyCtrl and KernelCh say rank 0 whatever the
 * communicator's (profiler.cc zero-initializes them); the truth says the
 * rank the plugin must record, the communicator's (v1..v3: once a Coll or
 * P2p told it, as the comm id; -1 before).
 *
 * --stop-at events|fini|exit: the process stops itself (SIGSTOP) before
 * the first finalize, after the last, or before it exits, for a test to
 * look at its ring file while it lives; it goes on at SIGCONT.
 * --reinit: after the last finalize, a new communicator (rank 1) with one
 * GroupApi event, then its finalize, as a job that destroys its last
 * communicator and makes another.  --no-fini: exit() with the
 * communicators live, no finalize, as many jobs end.
 *
 * --stall-ms N (v5, issue 38): after the threads above, one thread writes
 * a Group event every millisecond while another is stopped for N ms
 * between the stamp of its one Group event and its publish (inside the
 * plugin: see sched_getcpu() below), as a preempted NCCL thread is; then
 * the writer goes on for 200 ms more.  Prints "stalled N ms tid T stamp
 * S chatter C" (T: the stopped thread, S: its event's stamp ns as the
 * plugin took it, within the clock reads around; C: the other's events).
 *
 * --hang (v5): an AllReduce whose children never stop, then SIGSTOP
 * (hang_run() below).
 *
 * --truncate-ring: a hostile process (issue 31): once a reader has
 * attached and taken every record, the process truncates its own ring file
 * under the reader, prints "truncated N" (N: records it made), waits a
 * second and exits without finalize (its own mapping is gone too).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../producers/nccl-profiler/nccl_profiler_abi.h"
#include "../../producers/nccl-profiler/np_ring.h"

static ncclProfiler_v5_t *p5;
/* --stall-ms: set on the thread to stop, cleared when it stopped */
static __thread int stall_me;
static atomic_int stall_over;
static ncclProfiler_v4_t *p4;
static ncclProfiler_v3_t *p3;
static ncclProfiler_v2_t *p2;
static ncclProfiler_v1_t *p1;
static ncclResult_t (*stop_fn)(void *), (*finalize_fn)(void *);
static int ncomms = 2, iters = 4, nch = 2, nsteps = 2, abi = 5, bad, hold_ms,
	   do_fork, crash, truncate_ring;
static const char *stop_at;
static int reinit, no_fini, stall_ms, hang;
static pthread_barrier_t start_bar, end_bar;
static FILE *truth;

struct comm {
	int idx;
	uint64_t id;
	int rank, nranks;
	void *ctx;
	void *_Atomic coll[1024];	/* app -> proxy: the coll handle of iter i */
	atomic_int hashed;		/* v1..v3: a Coll/P2p gave the plugin id */
	atomic_int proxied;		/* proxy -> app: iterations done */
	FILE *out;			/* this thread's truth lines */
	char *buf;
	size_t len;
};

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "np-driver: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* The GPU's globaltimer here: CLOCK_MONOTONIC + GPU_CLOCK_AHEAD, read
 * just before the plugin is told, as NCCL's proxy reads the stamp the
 * kernel wrote: the test checks the plugin's offset estimate finds it. */
#define GPU_CLOCK_AHEAD 1700000000000000000ull

static uint64_t gpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec +
	       GPU_CLOCK_AHEAD;
}

static unsigned long tid(void)
{
	return (unsigned long)syscall(SYS_gettid);
}

/* One truth line per plugin call; each thread writes its own stream. */
static void T(FILE *f, const char *fmt, ...)
{
	va_list ap;

	fprintf(f, "{\"tid\":%lu,", tid());
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputs("}\n", f);
}

#define H(p) ((unsigned long long)(uintptr_t)(p))

/* NCCL's enum values for the names v1 passes as numbers (NCCL 2.23's
 * ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*): the driver's
 * own table, so that the plugin's is checked against it. */
static uint8_t v1_enum(const char *name)
{
	static const struct { const char *n; uint8_t v; } t[] = {
		{ "Broadcast", 0 }, { "Reduce", 1 }, { "AllGather", 2 },
		{ "ReduceScatter", 3 }, { "AllReduce", 4 }, { "Send", 6 },
		{ "ncclInt8", 0 }, { "ncclFloat32", 7 }, { "ncclBfloat16", 9 },
		{ "TREE", 0 }, { "RING", 1 }, { "COLLNET_DIRECT", 2 },
		{ "LL", 0 }, { "LL128", 1 }, { "SIMPLE", 2 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].n, name))
			return t[i].v;
	die("no v1 enum value for %s", name);
	return 0;
}

/* v1's and v2's Coll fields that v5 lacks, from the v5 descriptor: known,
 * distinct values (op: every ncclRedOp_t in turn and a PreMulSum handle,
 * as nccl.h numbers them; the driver's own names, to check the plugin's). */
static const char *const ops_v1[] = { "ncclSum", "ncclProd", "ncclMax",
				      "ncclMin", "ncclAvg", "PreMulSum" };
#define OLD_OP(d)	((uint32_t)((d)->coll.seqNumber % 6))
#define OLD_TRAFFIC(d)	((d)->coll.count * 2 + 3)
#define OLD_COLLNET(d)	((int)((d)->coll.seqNumber % 2))
#define OLD_NVLS(d)	((int)((d)->coll.seqNumber % 3 == 1))

/* v1..v3: the v5 descriptor as that version has it; NULL: no such event. */
#define OLD_COMMON(o, d, c, FN, DT, AL, PR) do {			\
	(o).type = (uint8_t)(d)->type;					\
	(o).parentObj = (d)->parentObj;					\
	(o).rank = (d)->rank;						\
	if ((d)->type == ncclProfileColl) {				\
		(o).coll.name = "comm";					\
		(o).coll.commHash = (c)->id;				\
		(o).coll.seqNumber = (d)->coll.seqNumber;		\
		(o).coll.func = FN((d)->coll.func);			\
		(o).coll.sendBuff = (d)->coll.sendBuff;			\
		(o).coll.recvBuff = (d)->coll.recvBuff;			\
		(o).coll.count = (d)->coll.count;			\
		(o).coll.root = (d)->coll.root;				\
		(o).coll.datatype = DT((d)->coll.datatype);		\
		(o).coll.nMaxChannels = (d)->coll.nChannels;		\
		(o).coll.nWarps = (d)->coll.nWarps;			\
		(o).coll.algo = AL((d)->coll.algo);			\
		(o).coll.proto = PR((d)->coll.proto);			\
	} else if ((d)->type == ncclProfileP2p) {			\
		(o).p2p.name = "comm";					\
		(o).p2p.commHash = (c)->id;				\
		(o).p2p.func = FN((d)->p2p.func);			\
		(o).p2p.buff = (d)->p2p.buff;				\
		(o).p2p.datatype = DT((d)->p2p.datatype);		\
		(o).p2p.count = (d)->p2p.count;				\
		(o).p2p.peer = (d)->p2p.peer;				\
	} else if ((d)->type == ncclProfileProxyOp) {			\
		(o).proxyOp = (d)->proxyOp;				\
	} else if ((d)->type == ncclProfileProxyStep) {			\
		(o).proxyStep = (d)->proxyStep;				\
	}								\
} while (0)
#define AS_IS(v) (v)

static ncclResult_t start_old(struct comm *c, void **h,
			      ncclProfilerEventDescr_v5_t *d)
{
	switch (abi) {
	case 3: {
		ncclProfilerEventDescr_v3_t o;

		memset(&o, 0, sizeof(o));
		OLD_COMMON(o, d, c, AS_IS, AS_IS, AS_IS, AS_IS);
		if (d->type == ncclProfileKernelCh)
			o.kernelCh.channelId = d->kernelCh.channelId;
		if (d->type == ncclProfileNetPlugin)
			o.netPlugin = d->netPlugin;
		return p3->startEvent(c->ctx, h, &o);
	}
	case 2: {
		ncclProfilerEventDescr_v2_t o;

		memset(&o, 0, sizeof(o));
		OLD_COMMON(o, d, c, AS_IS, AS_IS, AS_IS, AS_IS);
		if (d->type == ncclProfileColl)
			o.coll.trafficBytes = OLD_TRAFFIC(d);
		return p2->startEvent(c->ctx, h, &o);
	}
	default: {
		ncclProfilerEventDescr_v1_t o;

		memset(&o, 0, sizeof(o));
		OLD_COMMON(o, d, c, v1_enum, v1_enum, v1_enum, v1_enum);
		if (d->type == ncclProfileColl) {
			o.coll.op = OLD_OP(d);
			o.coll.trafficBytes = OLD_TRAFFIC(d);
			o.coll.isCollnet = OLD_COLLNET(d);
			o.coll.isNvls = OLD_NVLS(d);
		}
		return p1->startEvent(c->ctx, h, &o);
	}
	}
}

/* NCCL (2.23 .. 2.28's profiler.cc) sets a descriptor's rank for these
 * types only. */
static int nccl_sets_rank(uint64_t type)
{
	return type == ncclProfileColl || type == ncclProfileP2p ||
	       type == ncclProfileProxyOp || type == ncclProfileProxyStep ||
	       type == ncclProfileNetPlugin;
}

static void *start(FILE *f, struct comm *c, ncclProfilerEventDescr_v5_t *d,
		   const char *type, const char *fields)
{
	void *h = (void *)1;
	/* v1..v3: events before the first Coll or P2p have no comm id */
	uint64_t comm_id = abi > 3 || d->type == ncclProfileColl ||
			   d->type == ncclProfileP2p ||
			   atomic_load(&c->hashed) ? c->id : 0;
	/* what the plugin must record: NCCL's rank where it gives one, else
	 * the communicator's (v1..v3: known with the comm id) */
	int rank = nccl_sets_rank(d->type) ? d->rank :
		   abi > 3 || atomic_load(&c->hashed) ? c->rank : -1;

	if (d->type > (abi == 5 ? ncclProfileKernelLaunch :
		       abi >= 3 ? ncclProfileNetPlugin : ncclProfileProxyCtrl))
		return NULL;	/* this NCCL has no such event */
	if (abi <= 3) {
		if (start_old(c, &h, d) != ncclSuccess)
			die("startEvent v%d failed", abi);
	} else if (abi == 4) {
		ncclProfilerEventDescr_v4_t d4;

		memset(&d4, 0, sizeof(d4));
		d4.type = (uint8_t)d->type;
		d4.parentObj = d->parentObj;
		d4.rank = d->rank;
		switch (d->type) {
		case ncclProfileColl:
			d4.coll.seqNumber = d->coll.seqNumber;
			d4.coll.func = d->coll.func;
			d4.coll.sendBuff = d->coll.sendBuff;
			d4.coll.recvBuff = d->coll.recvBuff;
			d4.coll.count = d->coll.count;
			d4.coll.root = d->coll.root;
			d4.coll.datatype = d->coll.datatype;
			d4.coll.nChannels = d->coll.nChannels;
			d4.coll.nWarps = d->coll.nWarps;
			d4.coll.algo = d->coll.algo;
			d4.coll.proto = d->coll.proto;
			break;
		case ncclProfileP2p:
			d4.p2p.func = d->p2p.func;
			d4.p2p.buff = d->p2p.buff;
			d4.p2p.datatype = d->p2p.datatype;
			d4.p2p.count = d->p2p.count;
			d4.p2p.peer = d->p2p.peer;
			d4.p2p.nChannels = d->p2p.nChannels;
			break;
		case ncclProfileProxyOp:
			d4.proxyOp = d->proxyOp;
			break;
		case ncclProfileProxyStep:
			d4.proxyStep = d->proxyStep;
			break;
		case ncclProfileKernelCh:
			d4.kernelCh = d->kernelCh;
			break;
		case ncclProfileNetPlugin:
			d4.netPlugin = d->netPlugin;
			break;
		}
		if (p4->startEvent(c->ctx, &h, &d4) != ncclSuccess)
			die("startEvent v4 failed");
	} else if (p5->startEvent(c->ctx, &h, d) != ncclSuccess) {
		die("startEvent failed");
	}
	if (!h)
		die("startEvent returned no handle for %s", type);
	if (d->type == ncclProfileColl || d->type == ncclProfileP2p)
		atomic_store(&c->hashed, 1);
	T(f, "\"op\":\"start\",\"type\":\"%s\",\"id\":\"0x%llx\","
	  "\"parent\":\"0x%llx\",\"comm_id\":\"0x%llx\",\"rank\":%d,"
	  "\"fields\":{%s}", type, H(h), H(d->parentObj),
	  (unsigned long long)comm_id, rank, fields);
	/* v1, v2: the Coll's np_coll_old record, its fields as the version
	 * has them (v2: trafficBytes only) */
	if (d->type == ncclProfileColl && abi <= 2) {
		char ob[128] = "";

		if (abi == 1)
			snprintf(ob, sizeof(ob), "\"op\":\"%s\",\"is_collnet\":%d,"
				 "\"is_nvls\":%d,", ops_v1[OLD_OP(d)],
				 OLD_COLLNET(d), OLD_NVLS(d));
		T(f, "\"op\":\"more\",\"type\":\"np_coll_old\",\"id\":"
		  "\"0x%llx\",\"parent\":\"0x%llx\",\"comm_id\":\"0x%llx\","
		  "\"rank\":%d,\"fields\":{%s\"traffic_bytes\":%zu}", H(h),
		  H(d->parentObj), (unsigned long long)comm_id, d->rank, ob,
		  OLD_TRAFFIC(d));
	}
	return h;
}

static void stop(FILE *f, void *h)
{
	if (stop_fn(h) != ncclSuccess)
		die("stopEvent failed");
	T(f, "\"op\":\"stop\",\"id\":\"0x%llx\"", H(h));
}

/* @a: this version's ncclProfilerEventStateArgs (v1..v3: _v3_t), or NULL;
 * @arg, @steps: what the plugin must record of it. */
static void state_steps(FILE *f, void *h, int st, void *a,
			unsigned long long arg, int steps)
{
	ncclResult_t r = abi == 5 ? p5->recordEventState(h, st, a) :
			 abi == 4 ? p4->recordEventState(h, st, a) :
			 abi == 3 ? p3->recordEventState(h, st, a) :
			 abi == 2 ? p2->recordEventState(h, st, a) :
				    p1->recordEventState(h, st, a);

	if (r != ncclSuccess)
		die("recordEventState failed");
	T(f, "\"op\":\"state\",\"id\":\"0x%llx\",\"state_id\":%d,\"arg\":%llu,"
	  "\"steps\":%d", H(h), st, arg, steps);
}

static void state(FILE *f, void *h, int st, void *a, unsigned long long arg)
{
	state_steps(f, h, st, a, arg, 0);
}

#define D(t, par) ncclProfilerEventDescr_v5_t d; memset(&d, 0, sizeof(d)); \
	d.type = (t); d.parentObj = (par);				\
	d.rank = nccl_sets_rank(t) ? c->rank : 0
#define F(...) (snprintf(fb, sizeof(fb), __VA_ARGS__), fb)

static const char *const funcs[] = { "AllReduce", "AllGather", "ReduceScatter",
				     "Broadcast" };
static const char *const algos[] = { "Ring", "Tree", "CollnetDirect" };
static const char *const protos[] = { "Simple", "LL", "LL128" };
/* v1..v3: the names NCCL 2.23..2.26 give (v1: as enum values) */
static const char *const algos_old[] = { "RING", "TREE", "COLLNET_DIRECT" };
static const char *const protos_old[] = { "SIMPLE", "LL", "LL128" };

/*
 * --stall-ms.  The plugin's emit path (producers/nccl-profiler/rings.c fill()) asks
 * for the CPU after it stamped a record and before the caller publishes
 * it; this definition, exported from the executable (Makefile), is the
 * one the plugin binds to, so the thread marked stall_me stops right
 * there, where a preempted writer would.  Any other call is glibc's.
 */
int sched_getcpu(void)
{
	unsigned int cpu = 0;

	if (stall_me) {
		stall_me = 0;
		usleep((useconds_t)stall_ms * 1000);
	}
	if (syscall(SYS_getcpu, &cpu, NULL, NULL) < 0)
		return -1;
	return (int)cpu;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *chatter_thread(void *arg)
{
	struct comm *c = arg;
	uint64_t n = 0, until = 0;

	for (;;) {
		ncclProfilerEventDescr_v5_t d;
		void *h = NULL;

		if (!until && atomic_load(&stall_over))
			until = mono_ns() + 200 * 1000000ull;
		if (until && mono_ns() >= until)
			break;
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileGroup;
		if (p5->startEvent(c->ctx, &h, &d) != ncclSuccess || !h ||
		    p5->stopEvent(h) != ncclSuccess)
			die("chatter: startEvent");
		n += 2;
		usleep(1000);
	}
	return (void *)(uintptr_t)n;
}

static void stall_run(struct comm *c)
{
	ncclProfilerEventDescr_v5_t d;
	pthread_t th;
	uint64_t t0, t1;
	void *h = NULL, *n;

	atomic_store(&stall_over, 0);
	if (pthread_create(&th, NULL, chatter_thread, c))
		die("pthread_create");
	usleep(50 * 1000);	/* the other writer is going */
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileGroup;
	stall_me = 1;
	t0 = mono_ns();
	if (p5->startEvent(c->ctx, &h, &d) != ncclSuccess || !h)
		die("stall: startEvent");
	t1 = mono_ns();
	if (stall_me)
		die("stall: the plugin did not call sched_getcpu() between "
		    "its stamp and its publish; this test needs another way "
		    "to stop it there");
	if (p5->stopEvent(h) != ncclSuccess)
		die("stall: stopEvent");
	atomic_store(&stall_over, 1);
	pthread_join(th, &n);
	/* The stamp was taken before the stop: t0 <= stamp < t1 - stall. */
	printf("stalled %d ms tid %ld stamp %llu..%llu chatter %llu\n",
	       stall_ms, (long)syscall(SYS_gettid), (unsigned long long)t0,
	       (unsigned long long)(t1 - (uint64_t)stall_ms * 1000000ull),
	       (unsigned long long)(uintptr_t)n);
	fflush(stdout);
}

/*
 * --hang (v5, issue 34): one more AllReduce (seq = --iters) whose kernel
 * channel 0 and send proxy op to the next rank start and do not stop, as
 * NCCL's are while a peer never answers (the op's step 0 sent, step 1 in
 * SendPeerWait: no credit from the peer); prints "hang pid P seq S", then
 * the process stops itself (SIGSTOP).  At SIGCONT the children stop and
 * the run goes on to its finalize.
 */
static void hang_run(struct comm *c)
{
	ncclProfilerEventDescr_v5_t d;
	void *coll = NULL, *k = NULL, *op = NULL, *st[2] = { NULL, NULL };
	int peer = (c->rank + 1) % c->nranks;

	memset(&d, 0, sizeof(d));
	d.type = ncclProfileColl;
	d.rank = c->rank;
	d.coll.seqNumber = (uint64_t)iters;
	d.coll.func = "AllReduce";
	d.coll.count = 1048576;
	d.coll.datatype = "ncclFloat32";
	d.coll.nChannels = 1;
	d.coll.nWarps = 8;
	d.coll.algo = "Ring";
	d.coll.proto = "Simple";
	if (p5->startEvent(c->ctx, &coll, &d) != ncclSuccess || !coll ||
	    p5->stopEvent(coll) != ncclSuccess)
		die("hang: Coll");
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileKernelCh;
	d.parentObj = coll;
	d.kernelCh.channelId = 0;
	d.kernelCh.pTimer = gpu_now();
	if (p5->startEvent(c->ctx, &k, &d) != ncclSuccess || !k)
		die("hang: KernelCh");
	memset(&d, 0, sizeof(d));
	d.type = ncclProfileProxyOp;
	d.parentObj = coll;
	d.proxyOp.pid = getpid();
	d.proxyOp.channelId = 0;
	d.proxyOp.peer = peer;
	d.proxyOp.nSteps = 4;
	d.proxyOp.chunkSize = 131072;
	d.proxyOp.isSend = 1;
	if (p5->startEvent(c->ctx, &op, &d) != ncclSuccess || !op)
		die("hang: ProxyOp");
	/* Its step 0 sent; step 1 waits for the peer's credit. */
	for (int i = 0; i < 2; i++) {
		memset(&d, 0, sizeof(d));
		d.type = ncclProfileProxyStep;
		d.parentObj = op;
		d.proxyStep.step = i;
		if (p5->startEvent(c->ctx, &st[i], &d) != ncclSuccess || !st[i] ||
		    p5->recordEventState(st[i], i ? ncclProfilerProxyStepSendPeerWait_v4 :
					 ncclProfilerProxyStepSendWait, NULL) != ncclSuccess)
			die("hang: ProxyStep");
	}
	if (p5->stopEvent(st[0]) != ncclSuccess)
		die("hang: stopEvent");
	printf("hang pid %d seq %d rank %d peer %d\n", (int)getpid(), iters,
	       c->rank, peer);
	fflush(stdout);
	raise(SIGSTOP);
	if (p5->stopEvent(st[1]) != ncclSuccess || p5->stopEvent(op) != ncclSuccess ||
	    p5->stopEvent(k) != ncclSuccess)
		die("hang: stopEvent");
}

static void *app_thread(void *arg)
{
	struct comm *c = arg;
	FILE *f = open_memstream(&c->buf, &c->len);
	char fb[1024];

	pthread_barrier_wait(&start_bar);
	for (int i = 0; i < iters; i++) {
		void *gapi = NULL, *capi = NULL, *grp, *coll, *p2papi = NULL,
		     *p2p = NULL, *kl = NULL;
		const char *fn = funcs[(i + c->idx) % 4];
		size_t count = 1024u * (size_t)(i + 1) + (size_t)c->idx;
		void *stream = (void *)(uintptr_t)(0x5000 + c->idx);

		if (abi == 5) {
			D(ncclProfileGroupApi, NULL);
			d.groupApi.graphCaptured = i % 3 == 1;
			d.groupApi.groupDepth = 1;
			gapi = start(f, c, &d, "np_group_api",
				     F("\"graph_captured\":%d,\"depth\":1",
				       i % 3 == 1));
			state(f, gapi, ncclProfilerGroupStartApiStop, NULL, 0);
		}
		if (abi == 5) {
			D(ncclProfileCollApi, gapi);
			d.collApi.func = fn;
			d.collApi.count = count;
			d.collApi.datatype = "ncclFloat32";
			d.collApi.root = i % 2;
			d.collApi.stream = stream;
			d.collApi.graphCaptured = false;
			capi = start(f, c, &d, "np_coll_api",
				     F("\"func\":\"%s\",\"count\":%zu,\"datatype\":"
				       "\"ncclFloat32\",\"root\":%d,\"stream\":"
				       "\"0x%llx\",\"graph_captured\":0", fn, count,
				       i % 2, H(stream)));
			stop(f, capi);
			state(f, gapi, ncclProfilerEndGroupApiStart, NULL, 0);
		}
		{
			D(ncclProfileGroup, gapi);
			grp = start(f, c, &d, "np_group", "");
		}
		if (abi == 5) {
			D(ncclProfileKernelLaunch, gapi);
			d.kernelLaunch.stream = stream;
			kl = start(f, c, &d, "np_kernel_launch",
				   F("\"stream\":\"0x%llx\"", H(stream)));
		}
		{
			D(ncclProfileColl, abi < 5 ? grp : capi);
			d.coll.seqNumber = (uint64_t)i;
			d.coll.func = fn;
			d.coll.sendBuff = (void *)(uintptr_t)(0x7f0000001000ull + (uint64_t)i);
			d.coll.recvBuff = (void *)(uintptr_t)(0x7f0000200000ull + (uint64_t)i);
			d.coll.count = count;
			d.coll.root = i % 2;
			d.coll.datatype = "ncclBfloat16";
			d.coll.nChannels = (uint8_t)nch;
			d.coll.nWarps = 8;
			d.coll.algo = (abi <= 3 ? algos_old : algos)[i % 3];
			d.coll.proto = (abi <= 3 ? protos_old : protos)[i % 3];
			d.coll.parentGroup = grp;
			coll = start(f, c, &d, "np_coll",
				     F("\"seq\":%d,\"func\":\"%s\",\"count\":%zu,"
				       "\"datatype\":\"ncclBfloat16\",\"root\":%d,"
				       "\"algo\":\"%s\",\"proto\":\"%s\","
				       "\"nchannels\":%d,\"nwarps\":8,"
				       "\"send_buff\":\"0x%llx\",\"recv_buff\":\"0x%llx\","
				       "\"parent_group\":\"0x%llx\"", i, fn, count,
				       i % 2, d.coll.algo, d.coll.proto, nch,
				       H(d.coll.sendBuff), H(d.coll.recvBuff),
				       H(grp)));
		}
		if (kl)
			stop(f, kl);
		if (i % 2) {
			int peer = (c->rank + 1) % c->nranks;

			if (abi == 5) {
				D(ncclProfileP2pApi, gapi);
				d.p2pApi.func = "Send";
				d.p2pApi.count = 77;
				d.p2pApi.datatype = "ncclInt8";
				d.p2pApi.stream = stream;
				d.p2pApi.graphCaptured = true;
				p2papi = start(f, c, &d, "np_p2p_api",
					       F("\"func\":\"Send\",\"count\":77,"
						 "\"datatype\":\"ncclInt8\",\"root\":-1,"
						 "\"stream\":\"0x%llx\",\"graph_captured\":1",
						 H(stream)));
			}
			D(ncclProfileP2p, abi < 5 ? grp : p2papi);
			d.p2p.func = "Send";
			d.p2p.buff = (void *)(uintptr_t)0x7f0000300000ull;
			d.p2p.datatype = "ncclInt8";
			d.p2p.count = 77;
			d.p2p.peer = peer;
			d.p2p.nChannels = 1;	/* v1..v3 have none */
			d.p2p.parentGroup = grp;
			p2p = start(f, c, &d, "np_p2p",
				    F("\"func\":\"Send\",\"count\":77,\"datatype\":"
				      "\"ncclInt8\",\"peer\":%d,\"nchannels\":%d,"
				      "\"buff\":\"0x7f0000300000\",\"parent_group\":"
				      "\"0x%llx\"", peer, abi >= 4, H(grp)));
		}
		/*
		 * As NCCL 2.27 and 2.28 do: the Coll and P2p events stop at
		 * enqueue, and the proxy thread starts their ProxyOps and
		 * KernelChs afterwards, with the stopped Coll as parent.
		 */
		atomic_store(&c->coll[i], coll);
		if (p2p)
			stop(f, p2p);
		if (p2papi)
			stop(f, p2papi);
		stop(f, coll);
		stop(f, grp);
		if (gapi)
			stop(f, gapi);
		while (atomic_load(&c->proxied) <= i)
			sched_yield();
	}
	fclose(f);
	pthread_barrier_wait(&end_bar);
	return NULL;
}

struct proxy_arg {
	struct comm *c;
	char *buf;
	size_t len;
};

static void *proxy_thread(void *arg)
{
	struct proxy_arg *pa = arg;
	struct comm *c = pa->c;
	FILE *f = open_memstream(&pa->buf, &pa->len);
	ncclProfilerEventStateArgs_t a;
	ncclProfilerEventStateArgs_v3_t a3;
	void *args = abi <= 3 ? (void *)&a3 : (void *)&a;
	char fb[1024];
	void *ctrl;

	pthread_barrier_wait(&start_bar);
	/* v1..v3: the plugin learns the comm id from the first Coll; start
	 * after it, so that the ids here are certain. */
	while (abi <= 3 && !atomic_load(&c->coll[0]))
		sched_yield();
	{
		D(ncclProfileProxyCtrl, NULL);
		ctrl = start(f, c, &d, "np_proxy_ctrl", "");
		state(f, ctrl, ncclProfilerProxyCtrlActive, NULL, 0);
	}
	for (int i = 0; i < iters; i++) {
		void *coll;

		while (!(coll = atomic_load(&c->coll[i])))
			sched_yield();
		a.proxyCtrl.appendedProxyOps = nch;
		a3.proxyCtrl.appendedProxyOps = nch;
		state(f, ctrl, ncclProfilerProxyCtrlAppendEnd, args,
		      (unsigned long long)nch);
		for (int ch = 0; ch < nch; ch++) {
			int peer = (c->rank + 1) % c->nranks;
			int chunk = 131072 + ch;
			void *op, *k = NULL;

			/* KernelCh: v3 on; with the GPU timer and its stop
			 * state: v4 on.  NCCL's proxy reports the channel's
			 * kernel as it sees it start, and stops it when the
			 * channel's work is done. */
			if (abi >= 3) {
				uint64_t t0 = abi >= 4 ? gpu_now() : 0;

				D(ncclProfileKernelCh, coll);
				d.kernelCh.channelId = (uint8_t)ch;
				d.kernelCh.pTimer = t0;
				k = start(f, c, &d, "np_kernel_ch",
					  F("\"channel\":%d,\"gpu_start\":%llu",
					    ch, (unsigned long long)t0));
			}

			D(ncclProfileProxyOp, coll);
			d.proxyOp.pid = getpid();
			d.proxyOp.channelId = (uint8_t)ch;
			d.proxyOp.peer = peer;
			d.proxyOp.nSteps = nsteps;
			d.proxyOp.chunkSize = chunk;
			d.proxyOp.isSend = ch % 2 == 0;
			op = start(f, c, &d, "np_proxy_op",
				   F("\"op_pid\":%d,\"channel\":%d,\"peer\":%d,"
				     "\"nsteps\":%d,\"chunk_size\":%d,\"is_send\":%d",
				     getpid(), ch, peer, nsteps, chunk, ch % 2 == 0));
			if (abi >= 4) {
				state(f, op, ncclProfilerProxyOpInProgress_v4,
				      NULL, 0);
			} else {
				/* v1..v3: SendPosted / RecvPosted (0 / 4),
				 * with steps (distinct per channel) */
				a3.proxyOp.transSize = (size_t)chunk * 3;
				a3.proxyOp.steps = nsteps + 10 * ch + 1;
				state_steps(f, op, ch % 2 == 0 ? 0 : 4, &a3,
					    (unsigned long long)chunk * 3,
					    nsteps + 10 * ch + 1);
			}
			for (int s = 0; s < nsteps; s++) {
				ncclProfilerNetIbDescr_v1_t ib;
				size_t trans = (size_t)chunk - (size_t)s;
				unsigned long long wr = (unsigned long long)c->idx << 32 |
					(unsigned long long)i << 16 | (unsigned)ch << 8 | (unsigned)s;
				void *st, *net;

				{
					D(ncclProfileProxyStep, op);
					d.proxyStep.step = s;
					st = start(f, c, &d, "np_proxy_step",
						   F("\"step\":%d", s));
				}
				/* v1..v3 NCCL gives steps no argument */
				a.proxyStep.transSize = 0;
				state(f, st, ncclProfilerProxyStepSendGPUWait,
				      abi >= 4 ? &a : NULL, 0);
				a.proxyStep.transSize = trans;
				state(f, st, ncclProfilerProxyStepSendWait,
				      abi >= 4 ? &a : NULL,
				      abi >= 4 ? (unsigned long long)trans : 0);
				memset(&ib, 0, sizeof(ib));
				ib.type = ncclProfileQp;
				ib.qp.device = c->idx % 2;
				ib.qp.wr_id = wr;
				ib.qp.opcode = 4;	/* IBV_WR_RDMA_WRITE_WITH_IMM */
				ib.qp.qpNum = 0x100 + c->idx * 16 + ch;
				ib.qp.length = trans;
				{
					D(ncclProfileNetPlugin, st);
					d.netPlugin.id = NCCL_PROFILER_NET_TYPE_IB |
							 NCCL_PROFILER_NET_IB_VER;
					d.netPlugin.data = &ib;
					net = start(f, c, &d, "np_net_ib",
						    F("\"device\":%d,\"qpn\":%d,"
						      "\"wr_id\":\"0x%llx\",\"opcode\":4,"
						      "\"length\":%zu,\"ib_type\":1",
						      c->idx % 2, ib.qp.qpNum, wr, trans));
				}
				if (net)
					stop(f, net);
				stop(f, st);
			}
			if (abi <= 3) {
				/* SendDone / RecvDone (3 / 7): all steps */
				a3.proxyOp.transSize = (size_t)chunk * (size_t)nsteps;
				a3.proxyOp.steps = nsteps + 100 * ch;
				state_steps(f, op, ch % 2 == 0 ? 3 : 7, &a3,
					    (unsigned long long)chunk *
					    (unsigned long long)nsteps,
					    nsteps + 100 * ch);
			}
			stop(f, op);
			if (abi >= 4) {
				uint64_t t1 = gpu_now();

				a.kernelCh.pTimer = t1;
				state(f, k, ncclProfilerKernelChStop, &a,
				      (unsigned long long)t1);
			}
			if (k)
				stop(f, k);
		}
		if (i == 0) {
			ncclProfilerNetSockDescr_v1_t so = { .type = ncclProfileSocket };
			void *sk;

			so.sock.fd = 33;
			so.sock.op = 1;
			so.sock.length = 4096;
			D(ncclProfileNetPlugin, NULL);
			d.netPlugin.id = NCCL_PROFILER_NET_TYPE_SOCK |
					 NCCL_PROFILER_NET_SOCK_VER;
			d.netPlugin.data = &so;
			sk = start(f, c, &d, "np_net_sock",
				   "\"fd\":33,\"op\":1,\"length\":4096");
			if (sk)
				stop(f, sk);
		}
		atomic_store(&c->proxied, i + 1);
	}
	state(f, ctrl, ncclProfilerProxyCtrlSleep, NULL, 0);
	stop(f, ctrl);
	fclose(f);
	pthread_barrier_wait(&end_bar);
	return NULL;
}

/* Descriptors NCCL must never send, and one it might (a newer type). */
static void bad_calls(struct comm *c)
{
	ncclProfilerEventDescr_v5_t d;
	void *h = (void *)1;
	int junk = 0;

	memset(&d, 0, sizeof(d));
	d.type = 1u << 20;
	p5->startEvent(c->ctx, &h, &d);
	if (h)
		die("unknown type got a handle");
	T(truth, "\"op\":\"skip\",\"raw_type\":%u,\"why\":1", 1u << 20);
	d.type = ncclProfileColl;
	p5->startEvent(&junk, &h, &d);
	if (h)
		die("bad context got a handle");
	T(truth, "\"op\":\"skip\",\"raw_type\":%d,\"why\":2", ncclProfileColl);
	p5->startEvent(c->ctx, &h, NULL);
	T(truth, "\"op\":\"skip\",\"raw_type\":0,\"why\":3");
	p5->stopEvent(NULL);
	p5->recordEventState(NULL, ncclProfilerKernelChStop, NULL);
}

/* v1, v2: a type their descriptor has no member for (KernelCh, v3's) */
static void bad_calls_old(struct comm *c)
{
	ncclProfilerEventDescr_v1_t d1;
	ncclProfilerEventDescr_v2_t d2;
	void *h = (void *)1;

	memset(&d1, 0, sizeof(d1));
	memset(&d2, 0, sizeof(d2));
	d1.type = d2.type = ncclProfileKernelCh;
	if (abi == 1)
		p1->startEvent(c->ctx, &h, &d1);
	else
		p2->startEvent(c->ctx, &h, &d2);
	if (h)
		die("v%d KernelCh got a handle", abi);
	T(truth, "\"op\":\"skip\",\"raw_type\":%d,\"why\":1",
	  ncclProfileKernelCh);
}

static void logfn(int level, unsigned long flags, const char *file, int line,
		  const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	fprintf(stderr, "NCCL log %d %s:%d: ", level, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *load(void)
{
	const char *name = getenv("NCCL_PROFILER_PLUGIN");
	char lib[4096];
	void *h;

	if (!name || !*name)
		die("NCCL_PROFILER_PLUGIN is not set");
	/* NCCL's rule: NAME -> libnccl-profiler-NAME.so; else as given. */
	snprintf(lib, sizeof(lib), "libnccl-profiler-%s.so", name);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die("cannot load the plugin %s: %s", name, dlerror());
	return h;
}

static uint64_t ring_u64(int fd, uint64_t off)
{
	uint64_t v = 0;

	if (pread(fd, &v, sizeof(v), (off_t)off) != (ssize_t)sizeof(v))
		die("ring file: short read at %llu", (unsigned long long)off);
	return v;
}

/* --truncate-ring: waits (10 s at most) until a reader attached and every
 * ring is drained, truncates the file, then holds it so: the reader's next
 * passes meet a file of 0 bytes. */
static void truncate_own_ring(void)
{
	const char *dir = getenv(RDT_NP_DIR_ENV);
	struct rdt_np_shm h;
	uint64_t made = 0;
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/" RDT_NP_PREFIX "%d",
		 dir && *dir ? dir : RDT_NP_DIR_DEFAULT, (int)getpid());
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	for (int waited = 0;; waited += 10) {
		uint64_t pending = 0;

		if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
			die("%s: short header", path);
		made = 0;
		for (uint32_t i = 0; i < h.nrings; i++) {
			uint64_t r = h.hdr_size + (uint64_t)i * h.ring_size;
			uint64_t head = ring_u64(fd, r + offsetof(struct rdt_np_ring, head));

			made += head;
			pending += head - ring_u64(fd, r + offsetof(struct rdt_np_ring, tail));
		}
		if (atomic_load(&h.reader_pid) && !pending)
			break;
		if (waited >= 10000)
			die("no reader drained %s in 10 s", path);
		usleep(10000);
	}
	if (ftruncate(fd, 0))
		die("ftruncate %s: %s", path, strerror(errno));
	printf("truncated %llu\n", (unsigned long long)made);
	fflush(stdout);
	usleep(1000 * 1000);
	_exit(0);
}

static void stop_point(const char *point)
{
	if (stop_at && !strcmp(stop_at, point)) {
		fflush(truth);
		raise(SIGSTOP);
	}
}

static void comm_init_truth(const struct comm *c, const char *name)
{
	T(truth, "\"op\":\"comm_init\",\"comm_id\":\"0x%llx\","
	  "\"rank\":%d,\"fields\":{\"name\":\"%s\",\"nnodes\":2,"
	  "\"nranks\":%d,\"abi\":%d}", (unsigned long long)c->id,
	  c->rank, name, c->nranks, abi);
}

/* --reinit (v5): a communicator made after the last one was finalized. */
static void reinit_comm(void)
{
	struct comm k = { .idx = 63, .id = 0xbeef00, .rank = 1, .nranks = 2 };
	struct comm *c = &k;
	char fb[64];
	void *h;
	int mask;

	if (p5->init(&k.ctx, k.id, &mask, "again", 2, k.nranks, k.rank,
		     logfn) != ncclSuccess || !k.ctx)
		die("init after the last finalize: no context");
	comm_init_truth(&k, "again");
	{
		D(ncclProfileGroupApi, NULL);
		d.groupApi.groupDepth = 1;
		h = start(truth, c, &d, "np_group_api",
			  F("\"graph_captured\":0,\"depth\":1"));
	}
	stop(truth, h);
	if (finalize_fn(k.ctx) != ncclSuccess)
		die("finalize failed");
	T(truth, "\"op\":\"comm_fini\",\"comm_id\":\"0x%llx\",\"rank\":%d",
	  (unsigned long long)k.id, k.rank);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "comms", required_argument, NULL, 'c' },
		{ "iters", required_argument, NULL, 'n' },
		{ "v4", no_argument, NULL, '4' },
		{ "abi", required_argument, NULL, 'a' },
		{ "bad", no_argument, NULL, 'b' },
		{ "truth", required_argument, NULL, 't' },
		{ "hold-ms", required_argument, NULL, 'h' },
		{ "fork", no_argument, NULL, 'f' },
		{ "crash", no_argument, NULL, 'k' },
		{ "stop-at", required_argument, NULL, 's' },
		{ "reinit", no_argument, NULL, 'r' },
		{ "no-fini", no_argument, NULL, 'N' },
		{ "truncate-ring", no_argument, NULL, 'T' },
		{ "stall-ms", required_argument, NULL, 'S' },
		{ "hang", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *truth_path = NULL;
	struct comm *cs;
	struct proxy_arg *pas;
	pthread_t *th;
	void *dl;
	int o, mask;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c': ncomms = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case '4': abi = 4; break;
		case 'a': abi = atoi(optarg); break;
		case 'b': bad = 1; break;
		case 't': truth_path = optarg; break;
		case 'h': hold_ms = atoi(optarg); break;
		case 'f': do_fork = 1; break;
		case 'k': crash = 1; break;
		case 's': stop_at = optarg; break;
		case 'r': reinit = 1; break;
		case 'N': no_fini = 1; break;
		case 'T': truncate_ring = 1; break;
		case 'S': stall_ms = atoi(optarg); break;
		case 'H': hang = 1; break;
		default: return 2;
		}
	}
	if (ncomms < 1 || ncomms > 62 || iters < 1 || iters > 1024 ||
	    abi < 1 || abi > 5 || (reinit && (abi != 5 || no_fini)) ||
	    (stop_at && strcmp(stop_at, "events") && strcmp(stop_at, "fini") &&
	     strcmp(stop_at, "exit")) || stall_ms < 0 || stall_ms > 60000 ||
	    (stall_ms && abi != 5) || (hang && abi != 5))
		die("--comms 1..62, --iters 1..1024, --abi 1..5, --reinit with "
		    "v5 and a finalize, --stop-at events|fini|exit, --stall-ms "
		    "0..60000 with v5, --hang with v5");
	truth = truth_path ? fopen(truth_path, "w") : fopen("/dev/null", "w");
	if (!truth)
		die("%s: %s", truth_path, strerror(errno));
	dl = load();
	{
		char sym[32];
		void *p;

		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", abi);
		p = dlsym(dl, sym);
		if (!p)
			die("no %s in the plugin", sym);
		p5 = abi == 5 ? p : NULL;
		p4 = abi == 4 ? p : NULL;
		p3 = abi == 3 ? p : NULL;
		p2 = abi == 2 ? p : NULL;
		p1 = abi == 1 ? p : NULL;
		/* stopEvent and finalize: the same in every version */
		stop_fn = p5 ? p5->stopEvent : p4 ? p4->stopEvent :
			  p3 ? p3->stopEvent : p2 ? p2->stopEvent : p1->stopEvent;
		finalize_fn = p5 ? p5->finalize : p4 ? p4->finalize :
			      p3 ? p3->finalize : p2 ? p2->finalize :
			      p1->finalize;
	}
	cs = calloc((size_t)ncomms, sizeof(*cs));
	pas = calloc((size_t)ncomms, sizeof(*pas));
	th = calloc(2 * (size_t)ncomms, sizeof(*th));
	for (int i = 0; i < ncomms; i++) {
		struct comm *c = &cs[i];
		char name[32];

		c->idx = i;
		c->id = 0xc0ffee0000ull + (uint64_t)i;
		c->rank = i;
		c->nranks = ncomms + 2;
		snprintf(name, sizeof(name), "comm%d", i);
		if ((abi == 5 ? p5->init(&c->ctx, c->id, &mask, name, 2,
					 c->nranks, c->rank, logfn) :
		     abi == 4 ? p4->init(&c->ctx, &mask, name, c->id, 2,
					 c->nranks, c->rank, logfn) :
		     abi == 3 ? p3->init(&c->ctx, &mask) :
		     abi == 2 ? p2->init(&c->ctx, &mask) :
				p1->init(&c->ctx, &mask)) != ncclSuccess)
			die("init failed");
		/* v5: all 12 types; v3, v4: 8; v1, v2: Group .. ProxyCtrl */
		if (!c->ctx || mask != (abi == 5 ? 0xfff : abi >= 3 ? 0xff : 0x3f))
			die("init: context %p, activation mask %#x", c->ctx, mask);
		/* v1..v3: init has no comm id, name, rank or sizes */
		if (abi >= 4)
			comm_init_truth(c, name);
		else
			T(truth, "\"op\":\"comm_init\",\"comm_id\":\"0x0\","
			  "\"rank\":-1,\"fields\":{\"name\":\"\",\"nnodes\":0,"
			  "\"nranks\":0,\"abi\":%d}", abi);
	}
	if (bad && abi == 5)
		bad_calls(&cs[0]);
	if (bad && abi <= 2)
		bad_calls_old(&cs[0]);
	/* --hold-ms: a live reader finds the process while it runs. */
	if (hold_ms)
		usleep((useconds_t)hold_ms * 1000);
	pthread_barrier_init(&start_bar, NULL, 2 * (unsigned)ncomms);
	pthread_barrier_init(&end_bar, NULL, 2 * (unsigned)ncomms);
	for (int i = 0; i < ncomms; i++) {
		pas[i].c = &cs[i];
		if (pthread_create(&th[2 * i], NULL, app_thread, &cs[i]) ||
		    pthread_create(&th[2 * i + 1], NULL, proxy_thread, &pas[i]))
			die("pthread_create");
	}
	for (int i = 0; i < 2 * ncomms; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < ncomms; i++) {
		fwrite(cs[i].buf, 1, cs[i].len, truth);
		fwrite(pas[i].buf, 1, pas[i].len, truth);
		free(cs[i].buf);
		free(pas[i].buf);
	}
	if (stall_ms)
		stall_run(&cs[0]);
	if (hang)
		hang_run(&cs[0]);
	if (truncate_ring) {
		fflush(truth);
		truncate_own_ring();
	}
	/* --crash: killed before any finalize or exit handler, as a hung job
	 * is by its scheduler, once the plugin's writer has had its time. */
	if (crash) {
		fflush(truth);
		usleep(300 * 1000);
		raise(SIGKILL);
	}
	/* --fork: a child (a data loader, say) that makes a communicator of
	 * its own while the parent's are live: one Group event, finalize.
	 * Its records are not in the truth; it prints its pid. */
	if (do_fork && abi == 5) {
		pid_t child = fork();
		int st;

		if (child < 0)
			die("fork: %s", strerror(errno));
		if (!child) {
			struct comm k = { .idx = 99, .id = 0xf0f0, .nranks = 1 };
			ncclProfilerEventDescr_v5_t d;
			void *h;

			if (p5->init(&k.ctx, k.id, &mask, "child", 1, 1, 0, logfn) ||
			    !k.ctx || mask != 0xfff)
				_exit(3);
			memset(&d, 0, sizeof(d));
			d.type = ncclProfileGroup;
			if (p5->startEvent(k.ctx, &h, &d) || !h ||
			    p5->stopEvent(h) || p5->finalize(k.ctx))
				_exit(4);
			_exit(0);
		}
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			die("forked child failed: status %#x", st);
		printf("child %d\n", (int)child);
		fflush(stdout);
	}
	stop_point("events");
	for (int i = 0; i < ncomms && !no_fini; i++) {
		if (finalize_fn(cs[i].ctx) != ncclSuccess)
			die("finalize failed");
		T(truth, "\"op\":\"comm_fini\",\"comm_id\":\"0x%llx\",\"rank\":%d",
		  (unsigned long long)cs[i].id, cs[i].rank);
	}
	stop_point("fini");
	if (reinit)
		reinit_comm();
	stop_point("exit");
	if (fclose(truth))
		die("truth file: write error");
	free(cs);
	free(pas);
	free(th);
	return 0;
}
