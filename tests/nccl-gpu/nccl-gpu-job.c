// SPDX-License-Identifier: GPL-2.0
/*
 * nccl-gpu-job: a real NCCL job on a real GPU, for the profiler plugin's
 * end-to-end test (gpu.test).  It forks --ranks processes that build one
 * communicator and run AllReduce (sum, float32) of each --bytes size
 * --iters times, then one Broadcast, one AllGather and a ring of
 * Send/Recv in one group.  Every result is checked on the host.
 *
 * Several ranks may share one GPU: each process gets its own NCCL_HOSTID,
 * so NCCL's duplicate-GPU check sees different hosts and the ranks talk
 * through NCCL's network transport (sockets on lo unless the caller says
 * otherwise), with its proxy thread and proxy steps, as across nodes.
 *
 * libcudart and libnccl are opened with dlopen (RDT_CUDART, RDT_NCCL_LIB,
 * else the loader's search), so this builds where neither exists and the
 * test can skip at run time.  It prints one JSON line per collective it
 * timed, to stdout:
 *   {"rank":R,"pid":P,"func":"AllReduce","count":C,"bytes":B,"iter":I,
 *    "gpu_us":cudaEventElapsedTime,"enq_start_ns":..,"enq_end_ns":..}
 * (enqueue stamps: CLOCK_MONOTONIC around the NCCL call) and one
 * {"rank":R,"pid":P,"nccl_version":V,"done":1} line per rank at the end.
 * Exit 0 only if every rank's every result was right.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../nccl-double/nccl_abi.h"

/* The CUDA runtime calls the job makes (cuda_runtime_api.h, CUDA 13). */
typedef int cuda_err;
typedef struct CUevent_st *cuda_event;
typedef struct CUgraph_st *cuda_graph;
typedef struct CUgraphExec_st *cuda_graph_exec;
enum { H2D = 1, D2H = 2, CAPTURE_THREAD_LOCAL = 1 };

static struct {
	cuda_err (*set_device)(int);
	cuda_err (*get_device_count)(int *);
	cuda_err (*malloc)(void **, size_t);
	cuda_err (*free)(void *);
	cuda_err (*memcpy)(void *, const void *, size_t, int);
	cuda_err (*stream_create)(cudaStream_t *);
	cuda_err (*stream_sync)(cudaStream_t);
	cuda_err (*event_create)(cuda_event *);
	cuda_err (*event_record)(cuda_event, cudaStream_t);
	cuda_err (*event_sync)(cuda_event);
	cuda_err (*event_elapsed)(float *, cuda_event, cuda_event);
	const char *(*error_string)(cuda_err);
	cuda_err (*begin_capture)(cudaStream_t, int);
	cuda_err (*end_capture)(cudaStream_t, cuda_graph *);
	cuda_err (*graph_instantiate)(cuda_graph_exec *, cuda_graph,
				      unsigned long long);
	cuda_err (*graph_launch)(cuda_graph_exec, cudaStream_t);
	cuda_err (*graph_exec_destroy)(cuda_graph_exec);
	cuda_err (*graph_destroy)(cuda_graph);
} cu;

static struct {
	ncclResult_t (*get_version)(int *);
	ncclResult_t (*get_unique_id)(ncclUniqueId *);
	ncclResult_t (*init_rank)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*destroy)(ncclComm_t);
	ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t,
				   ncclRedOp_t, ncclComm_t, cudaStream_t);
	ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t,
				  int, ncclComm_t, cudaStream_t);
	ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t,
				   ncclComm_t, cudaStream_t);
	ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int,
			     ncclComm_t, cudaStream_t);
	ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t,
			     cudaStream_t);
	ncclResult_t (*group_start)(void);
	ncclResult_t (*group_end)(void);
	const char *(*error_string)(ncclResult_t);
} nc;

static int rank_ = -1;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "nccl-gpu-job: rank %d: %s: %s\n", rank_, what, why);
	exit(1);
}

#define CU(call) do {							\
	cuda_err e_ = (call);						\
	if (e_)								\
		die(#call, cu.error_string(e_));			\
} while (0)
#define NC(call) do {							\
	ncclResult_t r_ = (call);					\
	if (r_ != ncclSuccess)						\
		die(#call, nc.error_string(r_));			\
} while (0)

static void *sym(void *lib, const char *libname, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p) {
		fprintf(stderr, "nccl-gpu-job: %s has no %s\n", libname, name);
		exit(77);
	}
	return p;
}

static void *open_lib(const char *env, const char *const *names)
{
	const char *path = getenv(env);
	void *h;

	if (path && *path) {
		h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		if (!h) {
			fprintf(stderr, "nccl-gpu-job: %s=%s: %s\n", env, path,
				dlerror());
			exit(77);
		}
		return h;
	}
	for (; *names; names++) {
		h = dlopen(*names, RTLD_NOW | RTLD_GLOBAL);
		if (h)
			return h;
	}
	fprintf(stderr, "nccl-gpu-job: no %s (set %s)\n", names[-1], env);
	exit(77);
}

static void load(void)
{
	static const char *const cudart[] = { "libcudart.so.13",
					      "libcudart.so.12",
					      "libcudart.so", NULL };
	static const char *const nccl[] = { "libnccl.so.2", NULL };
	void *c = open_lib("RDT_CUDART", cudart);
	void *n = open_lib("RDT_NCCL_LIB", nccl);

#define C(f, s) (*(void **)&cu.f = sym(c, "libcudart", s))
#define N(f, s) (*(void **)&nc.f = sym(n, "libnccl", s))
	C(set_device, "cudaSetDevice");
	C(get_device_count, "cudaGetDeviceCount");
	C(malloc, "cudaMalloc");
	C(free, "cudaFree");
	C(memcpy, "cudaMemcpy");
	C(stream_create, "cudaStreamCreate");
	C(stream_sync, "cudaStreamSynchronize");
	C(event_create, "cudaEventCreate");
	C(event_record, "cudaEventRecord");
	C(event_sync, "cudaEventSynchronize");
	C(event_elapsed, "cudaEventElapsedTime");
	C(error_string, "cudaGetErrorString");
	C(begin_capture, "cudaStreamBeginCapture");
	C(end_capture, "cudaStreamEndCapture");
	C(graph_instantiate, "cudaGraphInstantiate");
	C(graph_launch, "cudaGraphLaunch");
	C(graph_exec_destroy, "cudaGraphExecDestroy");
	C(graph_destroy, "cudaGraphDestroy");
	N(get_version, "ncclGetVersion");
	N(get_unique_id, "ncclGetUniqueId");
	N(init_rank, "ncclCommInitRank");
	N(destroy, "ncclCommDestroy");
	N(all_reduce, "ncclAllReduce");
	N(broadcast, "ncclBroadcast");
	N(all_gather, "ncclAllGather");
	N(send, "ncclSend");
	N(recv, "ncclRecv");
	N(group_start, "ncclGroupStart");
	N(group_end, "ncclGroupEnd");
	N(error_string, "ncclGetErrorString");
#undef C
#undef N
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct job {
	int ranks, iters, nsizes, graph;
	size_t bytes[16];
	int device;
};

static void fill(float *h, size_t n, float v)
{
	for (size_t i = 0; i < n; i++)
		h[i] = v;
}

/* Every element equal to want, or the job fails naming the first that is not. */
static void expect(const float *h, size_t n, float want, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (h[i] != want) {
			char why[128];

			snprintf(why, sizeof(why), "element %zu is %g, not %g",
				 i, h[i], want);
			die(what, why);
		}
}

static void timed(const char *func, size_t count, size_t bytes, int iter,
		  cuda_event a, cuda_event b, uint64_t t0, uint64_t t1)
{
	float ms;

	CU(cu.event_sync(b));
	CU(cu.event_elapsed(&ms, a, b));
	printf("{\"rank\":%d,\"pid\":%d,\"func\":\"%s\",\"count\":%zu,"
	       "\"bytes\":%zu,\"iter\":%d,\"gpu_us\":%.3f,"
	       "\"enq_start_ns\":%llu,\"enq_end_ns\":%llu}\n",
	       rank_, (int)getpid(), func, count, bytes, iter, ms * 1000.0,
	       (unsigned long long)t0, (unsigned long long)t1);
}

static int run_rank(const struct job *j, int rank, int idfd_r, int idfd_w)
{
	ncclUniqueId id;
	ncclComm_t comm;
	cudaStream_t s;
	cuda_event a, b;
	size_t max = 0;
	float *hs, *hr, *ds, *dr;
	int version = 0, n = j->ranks;
	char host[64];

	rank_ = rank;
	if (n > 1) {
		/* One "host" per rank: NCCL's net transport, not P2P/SHM. */
		snprintf(host, sizeof(host), "rdt-gpu-job-host-%d", rank);
		setenv("NCCL_HOSTID", host, 1);
	}
	load();
	{
		int ndev = 0;

		if (cu.get_device_count(&ndev) || ndev <= j->device) {
			fprintf(stderr, "nccl-gpu-job: no CUDA device %d\n",
				j->device);
			exit(77);
		}
	}
	NC(nc.get_version(&version));
	if (rank == 0) {
		NC(nc.get_unique_id(&id));
		for (int i = 1; i < n; i++)
			if (write(idfd_w, &id, sizeof(id)) != sizeof(id))
				die("write id", strerror(errno));
	} else {
		/* Rank 0's death is an EOF here, not a hang. */
		close(idfd_w);
		if (read(idfd_r, &id, sizeof(id)) != sizeof(id))
			die("read id", "rank 0 sent no unique id");
	}
	close(idfd_r);
	close(idfd_w);

	CU(cu.set_device(j->device));
	CU(cu.stream_create(&s));
	CU(cu.event_create(&a));
	CU(cu.event_create(&b));
	NC(nc.init_rank(&comm, n, id, rank));

	for (int k = 0; k < j->nsizes; k++)
		if (j->bytes[k] > max)
			max = j->bytes[k];
	/* AllGather's output is n times the largest input. */
	hs = malloc(max * n);
	hr = malloc(max * n);
	if (!hs || !hr)
		die("malloc", "out of memory");
	CU(cu.malloc((void **)&ds, max));
	CU(cu.malloc((void **)&dr, max * n));

	for (int k = 0; k < j->nsizes; k++) {
		size_t cnt = j->bytes[k] / sizeof(float);
		float want = (float)n * (n + 1) / 2;

		fill(hs, cnt, (float)(rank + 1));
		CU(cu.memcpy(ds, hs, cnt * sizeof(float), H2D));
		for (int it = 0; it < j->iters; it++) {
			uint64_t t0, t1;

			CU(cu.event_record(a, s));
			t0 = mono_ns();
			NC(nc.all_reduce(ds, dr, cnt, ncclFloat32, ncclSum,
					 comm, s));
			t1 = mono_ns();
			CU(cu.event_record(b, s));
			timed("AllReduce", cnt, cnt * sizeof(float), it, a, b,
			      t0, t1);
			CU(cu.memcpy(hr, dr, cnt * sizeof(float), D2H));
			expect(hr, cnt, want, "AllReduce result");
		}
	}

	/* Broadcast from the last rank, AllGather, then one group of P2P. */
	{
		size_t cnt = max / sizeof(float);
		uint64_t t0, t1;
		int next = (rank + 1) % n, prev = (rank + n - 1) % n;

		fill(hs, cnt, (float)(100 + rank));
		CU(cu.memcpy(ds, hs, cnt * sizeof(float), H2D));
		CU(cu.event_record(a, s));
		t0 = mono_ns();
		NC(nc.broadcast(ds, dr, cnt, ncclFloat32, n - 1, comm, s));
		t1 = mono_ns();
		CU(cu.event_record(b, s));
		timed("Broadcast", cnt, cnt * sizeof(float), 0, a, b, t0, t1);
		CU(cu.memcpy(hr, dr, cnt * sizeof(float), D2H));
		expect(hr, cnt, (float)(100 + n - 1), "Broadcast result");

		CU(cu.event_record(a, s));
		t0 = mono_ns();
		NC(nc.all_gather(ds, dr, cnt, ncclFloat32, comm, s));
		t1 = mono_ns();
		CU(cu.event_record(b, s));
		timed("AllGather", cnt, cnt * sizeof(float), 0, a, b, t0, t1);
		CU(cu.memcpy(hr, dr, n * cnt * sizeof(float), D2H));
		for (int r = 0; r < n; r++)
			expect(hr + r * cnt, cnt, (float)(100 + r),
			       "AllGather result");

		if (n > 1) {
			CU(cu.event_record(a, s));
			t0 = mono_ns();
			NC(nc.group_start());
			NC(nc.send(ds, cnt, ncclFloat32, next, comm, s));
			NC(nc.recv(dr, cnt, ncclFloat32, prev, comm, s));
			NC(nc.group_end());
			t1 = mono_ns();
			CU(cu.event_record(b, s));
			timed("SendRecv", cnt, cnt * sizeof(float), 0, a, b,
			      t0, t1);
			CU(cu.memcpy(hr, dr, cnt * sizeof(float), D2H));
			expect(hr, cnt, (float)(100 + prev), "Recv result");
		}
	}
	/*
	 * --graph K: K AllReduces captured into a CUDA graph (their enqueue
	 * is timed, as "graph":1 lines), then the graph launched twice and
	 * checked each time.  NCCL enqueues while capturing; what it tells
	 * its profiler at a replay is NCCL's to say.
	 */
	if (j->graph) {
		size_t cnt = max / sizeof(float);
		float want = (float)n * (n + 1) / 2;
		cuda_graph g;
		cuda_graph_exec x;

		/* In place, K times: sum(r + 1) * n^(K-1) everywhere. */
		for (int k = 1; k < j->graph; k++)
			want *= (float)n;
		fill(hs, cnt, (float)(rank + 1));
		CU(cu.memcpy(ds, hs, cnt * sizeof(float), H2D));
		CU(cu.stream_sync(s));
		CU(cu.begin_capture(s, CAPTURE_THREAD_LOCAL));
		for (int k = 0; k < j->graph; k++) {
			uint64_t t0 = mono_ns(), t1;

			NC(nc.all_reduce(ds, ds, cnt, ncclFloat32, ncclSum,
					 comm, s));
			t1 = mono_ns();
			printf("{\"rank\":%d,\"pid\":%d,\"func\":\"AllReduce\","
			       "\"count\":%zu,\"bytes\":%zu,\"iter\":%d,"
			       "\"graph\":1,\"enq_start_ns\":%llu,"
			       "\"enq_end_ns\":%llu}\n", rank, (int)getpid(),
			       cnt, cnt * sizeof(float), k,
			       (unsigned long long)t0, (unsigned long long)t1);
		}
		CU(cu.end_capture(s, &g));
		CU(cu.graph_instantiate(&x, g, 0));
		for (int rep = 0; rep < 2; rep++) {
			float ms;

			/* in place: each replay starts from rank + 1 again */
			CU(cu.memcpy(ds, hs, cnt * sizeof(float), H2D));
			CU(cu.event_record(a, s));
			CU(cu.graph_launch(x, s));
			CU(cu.event_record(b, s));
			CU(cu.event_sync(b));
			CU(cu.event_elapsed(&ms, a, b));
			printf("{\"rank\":%d,\"pid\":%d,\"func\":\"GraphReplay\","
			       "\"count\":%zu,\"iter\":%d,\"gpu_us\":%.3f}\n",
			       rank, (int)getpid(), cnt, rep, ms * 1000.0);
			CU(cu.memcpy(hr, ds, cnt * sizeof(float), D2H));
			expect(hr, cnt, want, "graph replay result");
		}
		/* Before ncclCommDestroy: the graph holds NCCL's persistent
		 * work, and the destroy waits for it (it hung, with and
		 * without the plugin, on NCCL 2.28.3). */
		CU(cu.graph_exec_destroy(x));
		CU(cu.graph_destroy(g));
	}
	CU(cu.stream_sync(s));
	NC(nc.destroy(comm));
	CU(cu.free(ds));
	CU(cu.free(dr));
	free(hs);
	free(hr);
	printf("{\"rank\":%d,\"pid\":%d,\"nccl_version\":%d,\"done\":1}\n",
	       rank, (int)getpid(), version);
	fflush(stdout);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: nccl-gpu-job [--ranks N] [--iters K] [--bytes B[,B..]] [--device D]\n"
		"                    [--graph K]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct job j = { .ranks = 2, .iters = 10, .nsizes = 0, .device = 0 };
	int fds[2], failed = 0;
	pid_t pids[64];

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--ranks"))
			j.ranks = (int)strtol(v, &end, 10);
		else if (!strcmp(argv[i], "--iters"))
			j.iters = (int)strtol(v, &end, 10);
		else if (!strcmp(argv[i], "--device"))
			j.device = (int)strtol(v, &end, 10);
		else if (!strcmp(argv[i], "--graph"))
			j.graph = (int)strtol(v, &end, 10);
		else if (!strcmp(argv[i], "--bytes")) {
			const char *p = v;

			do {
				if (j.nsizes == 16)
					usage();
				j.bytes[j.nsizes++] = strtoull(p, &end, 0);
				p = end + 1;
			} while (*end == ',');
		} else {
			usage();
		}
		if (*end)
			usage();
		i++;
	}
	if (!j.nsizes)
		j.bytes[j.nsizes++] = 1 << 20;
	if (j.ranks < 1 || j.ranks > 64 || j.iters < 1 || j.graph < 0 ||
	    j.graph > 8)
		usage();
	for (int k = 0; k < j.nsizes; k++)
		if (j.bytes[k] < sizeof(float) || j.bytes[k] % sizeof(float))
			usage();

	/* No CUDA or NCCL before fork: neither survives one. */
	if (pipe(fds))
		die("pipe", strerror(errno));
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int r = 0; r < j.ranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			die("fork", strerror(errno));
		if (pids[r] == 0)
			exit(run_rank(&j, r, fds[0], fds[1]));
	}
	close(fds[0]);
	close(fds[1]);
	for (int r = 0; r < j.ranks; r++) {
		int st;

		if (waitpid(pids[r], &st, 0) < 0)
			die("waitpid", strerror(errno));
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "nccl-gpu-job: rank %d (pid %d) %s %d\n",
				r, (int)pids[r],
				WIFEXITED(st) ? "exited" : "killed by signal",
				WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			/* 77 (no library) from every rank is a skip. */
			failed |= WIFEXITED(st) && WEXITSTATUS(st) == 77 ?
				  77 : 1;
		}
	}
	return failed == 77 ? 77 : failed ? 1 : 0;
}
