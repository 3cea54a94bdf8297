// SPDX-License-Identifier: GPL-2.0
/*
 * np-driver: NCCL 2.28's side of the profiler plugin ABI, without a GPU.
 * Loads the plugin as NCCL does (NCCL_PROFILER_PLUGIN=NAME ->
 * libnccl-profiler-NAME.so on the library path, or a path as it is), looks
 * up ncclProfiler_v5 (--v4: ncclProfiler_v4) and replays NCCL's calls:
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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../nccl-profiler/nccl_profiler_abi.h"

static ncclProfiler_v5_t *p5;
static ncclProfiler_v4_t *p4;
static int ncomms = 2, iters = 4, nch = 2, nsteps = 2, use_v4, bad, hold_ms,
	   do_fork;
static pthread_barrier_t start_bar, end_bar;
static FILE *truth;

struct comm {
	int idx;
	uint64_t id;
	int rank, nranks;
	void *ctx;
	void *_Atomic coll[1024];	/* app -> proxy: the coll handle of iter i */
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

static void *start(FILE *f, struct comm *c, ncclProfilerEventDescr_v5_t *d,
		   const char *type, const char *fields)
{
	void *h = (void *)1;

	if (use_v4) {
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
		case ncclProfileGroup:
		case ncclProfileProxyCtrl:
			break;
		default:
			return NULL;	/* v4 NCCL has no such event */
		}
		if (p4->startEvent(c->ctx, &h, &d4) != ncclSuccess)
			die("startEvent v4 failed");
	} else if (p5->startEvent(c->ctx, &h, d) != ncclSuccess) {
		die("startEvent failed");
	}
	if (!h)
		die("startEvent returned no handle for %s", type);
	T(f, "\"op\":\"start\",\"type\":\"%s\",\"id\":\"0x%llx\","
	  "\"parent\":\"0x%llx\",\"comm_id\":\"0x%llx\",\"rank\":%d,"
	  "\"fields\":{%s}", type, H(h), H(d->parentObj),
	  (unsigned long long)c->id, d->rank, fields);
	return h;
}

static void stop(FILE *f, void *h)
{
	if ((use_v4 ? p4->stopEvent(h) : p5->stopEvent(h)) != ncclSuccess)
		die("stopEvent failed");
	T(f, "\"op\":\"stop\",\"id\":\"0x%llx\"", H(h));
}

static void state(FILE *f, void *h, int st, ncclProfilerEventStateArgs_t *a,
		  unsigned long long arg)
{
	if ((use_v4 ? p4->recordEventState(h, st, a) :
		      p5->recordEventState(h, st, a)) != ncclSuccess)
		die("recordEventState failed");
	T(f, "\"op\":\"state\",\"id\":\"0x%llx\",\"state_id\":%d,\"arg\":%llu",
	  H(h), st, arg);
}

#define D(t, par) ncclProfilerEventDescr_v5_t d; memset(&d, 0, sizeof(d)); \
	d.type = (t); d.parentObj = (par); d.rank = c->rank
#define F(...) (snprintf(fb, sizeof(fb), __VA_ARGS__), fb)

static const char *const funcs[] = { "AllReduce", "AllGather", "ReduceScatter",
				     "Broadcast" };
static const char *const algos[] = { "Ring", "Tree", "CollnetDirect" };
static const char *const protos[] = { "Simple", "LL", "LL128" };

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
		ncclProfilerEventStateArgs_t a;

		if (!use_v4) {
			D(ncclProfileGroupApi, NULL);
			d.groupApi.graphCaptured = i % 3 == 1;
			d.groupApi.groupDepth = 1;
			gapi = start(f, c, &d, "np_group_api",
				     F("\"graph_captured\":%d,\"depth\":1",
				       i % 3 == 1));
			state(f, gapi, ncclProfilerGroupStartApiStop, NULL, 0);
		}
		if (!use_v4) {
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
		if (!use_v4) {
			D(ncclProfileKernelLaunch, gapi);
			d.kernelLaunch.stream = stream;
			kl = start(f, c, &d, "np_kernel_launch",
				   F("\"stream\":\"0x%llx\"", H(stream)));
		}
		{
			D(ncclProfileColl, use_v4 ? grp : capi);
			d.coll.seqNumber = (uint64_t)i;
			d.coll.func = fn;
			d.coll.sendBuff = (void *)(uintptr_t)(0x7f0000001000ull + (uint64_t)i);
			d.coll.recvBuff = (void *)(uintptr_t)(0x7f0000200000ull + (uint64_t)i);
			d.coll.count = count;
			d.coll.root = i % 2;
			d.coll.datatype = "ncclBfloat16";
			d.coll.nChannels = (uint8_t)nch;
			d.coll.nWarps = 8;
			d.coll.algo = algos[i % 3];
			d.coll.proto = protos[i % 3];
			d.coll.parentGroup = grp;
			coll = start(f, c, &d, "np_coll",
				     F("\"seq\":%d,\"func\":\"%s\",\"count\":%zu,"
				       "\"datatype\":\"ncclBfloat16\",\"root\":%d,"
				       "\"algo\":\"%s\",\"proto\":\"%s\","
				       "\"nchannels\":%d,\"nwarps\":8,"
				       "\"send_buff\":\"0x%llx\",\"recv_buff\":\"0x%llx\","
				       "\"parent_group\":\"0x%llx\"", i, fn, count,
				       i % 2, algos[i % 3], protos[i % 3], nch,
				       H(d.coll.sendBuff), H(d.coll.recvBuff),
				       H(grp)));
		}
		if (kl)
			stop(f, kl);
		if (i % 2) {
			int peer = (c->rank + 1) % c->nranks;

			if (!use_v4) {
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
			D(ncclProfileP2p, use_v4 ? grp : p2papi);
			d.p2p.func = "Send";
			d.p2p.buff = (void *)(uintptr_t)0x7f0000300000ull;
			d.p2p.datatype = "ncclInt8";
			d.p2p.count = 77;
			d.p2p.peer = peer;
			d.p2p.nChannels = 1;
			d.p2p.parentGroup = grp;
			p2p = start(f, c, &d, "np_p2p",
				    F("\"func\":\"Send\",\"count\":77,\"datatype\":"
				      "\"ncclInt8\",\"peer\":%d,\"nchannels\":1,"
				      "\"buff\":\"0x7f0000300000\",\"parent_group\":"
				      "\"0x%llx\"", peer, H(grp)));
		}
		for (int ch = 0; ch < nch; ch++) {
			uint64_t t0 = gpu_now(), t1;
			void *k;

			D(ncclProfileKernelCh, coll);
			d.kernelCh.channelId = (uint8_t)ch;
			d.kernelCh.pTimer = t0;
			k = start(f, c, &d, "np_kernel_ch",
				  F("\"channel\":%d,\"gpu_start\":%llu", ch,
				    (unsigned long long)t0));
			t1 = gpu_now();
			a.kernelCh.pTimer = t1;
			state(f, k, ncclProfilerKernelChStop, &a,
			      (unsigned long long)t1);
			stop(f, k);
		}
		/* The proxy thread works on this collective now. */
		atomic_store(&c->coll[i], coll);
		while (atomic_load(&c->proxied) <= i)
			sched_yield();
		if (p2p)
			stop(f, p2p);
		if (p2papi)
			stop(f, p2papi);
		stop(f, coll);
		stop(f, grp);
		if (gapi)
			stop(f, gapi);
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
	char fb[1024];
	void *ctrl;

	pthread_barrier_wait(&start_bar);
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
		state(f, ctrl, ncclProfilerProxyCtrlAppendEnd, &a,
		      (unsigned long long)nch);
		for (int ch = 0; ch < nch; ch++) {
			int peer = (c->rank + 1) % c->nranks;
			int chunk = 131072 + ch;
			void *op;

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
			state(f, op, ncclProfilerProxyOpInProgress_v4, NULL, 0);
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
				a.proxyStep.transSize = 0;
				state(f, st, ncclProfilerProxyStepSendGPUWait, &a, 0);
				a.proxyStep.transSize = trans;
				state(f, st, ncclProfilerProxyStepSendWait, &a,
				      (unsigned long long)trans);
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
				stop(f, net);
				stop(f, st);
			}
			stop(f, op);
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

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "comms", required_argument, NULL, 'c' },
		{ "iters", required_argument, NULL, 'n' },
		{ "v4", no_argument, NULL, '4' },
		{ "bad", no_argument, NULL, 'b' },
		{ "truth", required_argument, NULL, 't' },
		{ "hold-ms", required_argument, NULL, 'h' },
		{ "fork", no_argument, NULL, 'f' },
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
		case '4': use_v4 = 1; break;
		case 'b': bad = 1; break;
		case 't': truth_path = optarg; break;
		case 'h': hold_ms = atoi(optarg); break;
		case 'f': do_fork = 1; break;
		default: return 2;
		}
	}
	if (ncomms < 1 || ncomms > 64 || iters < 1 || iters > 1024)
		die("--comms 1..64, --iters 1..1024");
	truth = truth_path ? fopen(truth_path, "w") : fopen("/dev/null", "w");
	if (!truth)
		die("%s: %s", truth_path, strerror(errno));
	dl = load();
	if (use_v4)
		p4 = dlsym(dl, "ncclProfiler_v4");
	else
		p5 = dlsym(dl, "ncclProfiler_v5");
	if (!p4 && !p5)
		die("no ncclProfiler_v%d in the plugin", use_v4 ? 4 : 5);
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
		if ((use_v4 ? p4->init(&c->ctx, &mask, name, c->id, 2,
				       c->nranks, c->rank, logfn) :
			      p5->init(&c->ctx, c->id, &mask, name, 2,
				       c->nranks, c->rank, logfn)) != ncclSuccess)
			die("init failed");
		if (!c->ctx || mask != (use_v4 ? 0xff : 0xfff))
			die("init: context %p, activation mask %#x", c->ctx, mask);
		T(truth, "\"op\":\"comm_init\",\"comm_id\":\"0x%llx\",\"rank\":%d,"
		  "\"fields\":{\"name\":\"%s\",\"nnodes\":2,\"nranks\":%d,"
		  "\"abi\":%d}", (unsigned long long)c->id, c->rank, name,
		  c->nranks, use_v4 ? 4 : 5);
	}
	if (bad && !use_v4)
		bad_calls(&cs[0]);
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
	/* --fork: a child (a data loader, say) that makes a communicator of
	 * its own while the parent's are live: one Group event, finalize.
	 * Its records are not in the truth; it prints its pid. */
	if (do_fork && !use_v4) {
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
	for (int i = 0; i < ncomms; i++) {
		if ((use_v4 ? p4->finalize(cs[i].ctx) :
			      p5->finalize(cs[i].ctx)) != ncclSuccess)
			die("finalize failed");
		T(truth, "\"op\":\"comm_fini\",\"comm_id\":\"0x%llx\",\"rank\":%d",
		  (unsigned long long)cs[i].id, cs[i].rank);
	}
	if (fclose(truth))
		die("truth file: write error");
	free(cs);
	free(pas);
	free(th);
	return 0;
}
