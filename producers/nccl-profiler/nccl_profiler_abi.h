/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * NCCL's profiler plugin ABI, v1 to v5 (NCCL 2.23 to 2.28.9): the
 * project's own declarations, written from the facts in DESIGN.md ("NCCL
 * profiler plugin ABI", read from NCCL's ext-profiler/ headers).  Only the
 * layout matters to NCCL; the names follow NCCL's so that a reader can put
 * this file beside profiler_v1.h .. profiler_v5.h.  The offsets and sizes
 * asserted at the end are those of NCCL's own headers, compiled for LP64.
 */
#ifndef NCCL_PROFILER_ABI_H
#define NCCL_PROFILER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { ncclSuccess = 0, ncclInternalError = 3,
	       ncclInvalidArgument = 4 } ncclResult_t;

typedef void (*ncclDebugLogger_t)(int level, unsigned long flags,
				  const char *file, int line,
				  const char *fmt, ...);

/* Event types: the bits of the activation mask init sets. */
enum {
	ncclProfileGroup	= 1 << 0,
	ncclProfileColl		= 1 << 1,
	ncclProfileP2p		= 1 << 2,
	ncclProfileProxyOp	= 1 << 3,
	ncclProfileProxyStep	= 1 << 4,
	ncclProfileProxyCtrl	= 1 << 5,
	ncclProfileKernelCh	= 1 << 6,
	ncclProfileNetPlugin	= 1 << 7,
	ncclProfileGroupApi	= 1 << 8,	/* v5 */
	ncclProfileCollApi	= 1 << 9,	/* v5 */
	ncclProfileP2pApi	= 1 << 10,	/* v5 */
	ncclProfileKernelLaunch	= 1 << 11,	/* v5 */
};

/* ncclProfilerEventState_v5_t (v4 is the same numbering, without 23/24;
 * v1 to v3 stop at 18, and only they send the ProxyOp states 0 to 7). */
enum {
	ncclProfilerProxyOpSendPosted		= 0,
	ncclProfilerProxyOpRecvDone		= 7,
	ncclProfilerProxyStepSendGPUWait	= 8,
	ncclProfilerProxyStepSendWait		= 9,
	ncclProfilerProxyStepRecvWait		= 10,
	ncclProfilerProxyStepRecvFlushWait	= 11,
	ncclProfilerProxyStepRecvGPUWait	= 12,
	ncclProfilerProxyCtrlIdle		= 13,
	ncclProfilerProxyCtrlActive		= 14,
	ncclProfilerProxyCtrlSleep		= 15,
	ncclProfilerProxyCtrlWakeup		= 16,
	ncclProfilerProxyCtrlAppend		= 17,
	ncclProfilerProxyCtrlAppendEnd		= 18,
	ncclProfilerProxyOpInProgress_v4	= 19,
	ncclProfilerProxyStepSendPeerWait_v4	= 20,
	ncclProfilerNetPluginUpdate		= 21,
	ncclProfilerKernelChStop		= 22,
	ncclProfilerGroupStartApiStop		= 23,
	ncclProfilerEndGroupApiStart		= 24,
};
typedef int ncclProfilerEventState_t;

typedef union {
	struct { size_t transSize; } proxyStep;
	struct { int appendedProxyOps; } proxyCtrl;
	struct { void *data; } netPlugin;
	struct { uint64_t pTimer; } kernelCh;
} ncclProfilerEventStateArgs_t;

/* The union members v4 and v5 share, in the same layout. */
struct ncclProfilerProxyOpDescr {
	pid_t pid;
	uint8_t channelId;
	int peer;
	int nSteps;
	int chunkSize;
	int isSend;
};
struct ncclProfilerProxyStepDescr { int step; };
struct ncclProfilerKernelChDescr { uint8_t channelId; uint64_t pTimer; };
struct ncclProfilerNetPluginDescr { int64_t id; void *data; };

typedef struct {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct { int graphCaptured; int groupDepth; } groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct { void *stream; } kernelLaunch;
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct ncclProfilerProxyOpDescr proxyOp;
		struct ncclProfilerProxyStepDescr proxyStep;
		struct ncclProfilerKernelChDescr kernelCh;
		struct ncclProfilerNetPluginDescr netPlugin;
	};
} ncclProfilerEventDescr_v5_t;

/* v4: the v5 coll and p2p without parentGroup (NCCL profiler_v4.h); the
 * name and commHash that v3 had in them are gone (init has commHash). */
typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
		} p2p;
		struct ncclProfilerProxyOpDescr proxyOp;
		struct ncclProfilerProxyStepDescr proxyStep;
		struct ncclProfilerKernelChDescr kernelCh;
		struct ncclProfilerNetPluginDescr netPlugin;
	};
} ncclProfilerEventDescr_v4_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, uint64_t commId,
			     int *eActivationMask, const char *commName,
			     int nNodes, int nranks, int rank,
			     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle,
				   ncclProfilerEventDescr_v5_t *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle,
					 ncclProfilerEventState_t eState,
					 ncclProfilerEventStateArgs_t *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} ncclProfiler_v5_t;

typedef struct {
	const char *name;
	ncclResult_t (*init)(void **context, int *eActivationMask,
			     const char *commName, uint64_t commHash,
			     int nNodes, int nranks, int rank,
			     ncclDebugLogger_t logfn);
	ncclResult_t (*startEvent)(void *context, void **eHandle,
				   ncclProfilerEventDescr_v4_t *eDescr);
	ncclResult_t (*stopEvent)(void *eHandle);
	ncclResult_t (*recordEventState)(void *eHandle,
					 ncclProfilerEventState_t eState,
					 ncclProfilerEventStateArgs_t *eStateArgs);
	ncclResult_t (*finalize)(void *context);
} ncclProfiler_v4_t;

/* Net plugin event data (netPlugin.data), NCCL's profiler_net.h and
 * net_ib_v1.h / net_socket_v1.h: id = type | version. */
#define NCCL_PROFILER_NET_VER_BITS	16
#define NCCL_PROFILER_NET_VER_MASK	0xffff
#define NCCL_PROFILER_NET_TYPE_IB	(1 << 16)
#define NCCL_PROFILER_NET_TYPE_SOCK	(2 << 16)
#define NCCL_PROFILER_NET_IB_VER	1
#define NCCL_PROFILER_NET_SOCK_VER	1
#define ncclProfileQp			(1 << 0)
#define ncclProfileSocket		(1 << 0)

typedef struct {
	uint8_t type;
	union {
		struct {
			int device;
			uint64_t wr_id;
			int opcode;
			int qpNum;
			size_t length;
		} qp;
	};
} ncclProfilerNetIbDescr_v1_t;

typedef struct {
	uint8_t type;
	union {
		struct { int fd; int op; size_t length; } sock;
	};
} ncclProfilerNetSockDescr_v1_t;

/* ---- v1 to v3 (NCCL 2.23 .. 2.26) ---------------------------------------
 * init has neither the communicator's id nor its rank: Coll and P2p carry
 * the communicator's name and commHash.  v1 gives func, datatype, algo and
 * proto as NCCL's enum values (ncclFunc_t, ncclDataType_t, NCCL_ALGO_*,
 * NCCL_PROTO_*); v2 on, as NCCL's names.  v1 and v2 have no KernelCh and
 * no NetPlugin; v3's KernelCh has no GPU timer.  State args: the same
 * union in all three. */
typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			const char *name;
			uint64_t commHash;
			uint64_t seqNumber;
			uint8_t func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			uint8_t datatype;
			uint32_t op;
			size_t trafficBytes;
			uint8_t nMaxChannels;
			uint8_t nWarps;
			uint8_t algo;
			uint8_t proto;
			int isCollnet;
			int isNvls;
		} coll;
		struct {
			const char *name;
			uint64_t commHash;
			uint8_t func;
			void *buff;
			uint8_t datatype;
			size_t count;
			int peer;
		} p2p;
		struct ncclProfilerProxyOpDescr proxyOp;
		struct ncclProfilerProxyStepDescr proxyStep;
	};
} ncclProfilerEventDescr_v1_t;

/* v2's and v3's P2p */
struct ncclProfilerP2pDescr_v2 {
	const char *name;
	uint64_t commHash;
	const char *func;
	void *buff;
	const char *datatype;
	size_t count;
	int peer;
};

typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			const char *name;
			uint64_t commHash;
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			size_t trafficBytes;
			uint8_t nMaxChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct ncclProfilerP2pDescr_v2 p2p;
		struct ncclProfilerProxyOpDescr proxyOp;
		struct ncclProfilerProxyStepDescr proxyStep;
	};
} ncclProfilerEventDescr_v2_t;

typedef struct {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			const char *name;
			uint64_t commHash;
			uint64_t seqNumber;
			const char *func;
			void const *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nMaxChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct ncclProfilerP2pDescr_v2 p2p;
		struct ncclProfilerProxyOpDescr proxyOp;
		struct ncclProfilerProxyStepDescr proxyStep;
		struct { uint8_t channelId; } kernelCh;
		struct ncclProfilerNetPluginDescr netPlugin;
	};
} ncclProfilerEventDescr_v3_t;

/* ncclProfilerEventStateArgs_v1_t .. _v3_t */
typedef union {
	struct { size_t transSize; int steps; } proxyOp;
	struct { int appendedProxyOps; } proxyCtrl;
} ncclProfilerEventStateArgs_v3_t;

#define NP_PROFILER_V123(N)						\
typedef struct {							\
	const char *name;						\
	ncclResult_t (*init)(void **context, int *eActivationMask);	\
	ncclResult_t (*startEvent)(void *context, void **eHandle,	\
				   ncclProfilerEventDescr_v##N##_t *eDescr); \
	ncclResult_t (*stopEvent)(void *eHandle);			\
	ncclResult_t (*recordEventState)(void *eHandle,			\
				ncclProfilerEventState_t eState,	\
				ncclProfilerEventStateArgs_v3_t *eStateArgs); \
	ncclResult_t (*finalize)(void *context);			\
} ncclProfiler_v##N##_t
NP_PROFILER_V123(1);
NP_PROFILER_V123(2);
NP_PROFILER_V123(3);

/* NCCL's enums as v1 passes them (NCCL 2.23's device.h, nccl.h). */
#define NP_V1_FUNCS { "Broadcast", "Reduce", "AllGather", "ReduceScatter", \
		      "AllReduce", "SendRecv", "Send", "Recv" }
#define NP_V1_DATATYPES { "ncclInt8", "ncclUint8", "ncclInt32",	\
			  "ncclUint32", "ncclInt64", "ncclUint64",	\
			  "ncclFloat16", "ncclFloat32", "ncclFloat64",	\
			  "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2" }
#define NP_V1_ALGOS { "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", \
		      "NVLS", "NVLS_TREE", "PAT" }
#define NP_V1_PROTOS { "LL", "LL128", "SIMPLE" }
/* v1's Coll op: ncclRedOp_t (nccl.h); ncclNumOps and above: a handle
 * ncclRedOpCreatePreMulSum made.  v2 on have no op. */
#define NP_V1_OPS { "ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg" }
#define NP_V1_OP_USER "PreMulSum"

/* ---- the layout of NCCL's headers (LP64) ------------------------------- */
#if defined(__LP64__)
#define NP_AT(T, f, off) _Static_assert(offsetof(T, f) == (off), #T "." #f)
#define NP_SIZE(T, n) _Static_assert(sizeof(T) == (n), "sizeof " #T)
NP_SIZE(ncclProfilerEventDescr_v5_t, 112);
NP_AT(ncclProfilerEventDescr_v5_t, parentObj, 8);
NP_AT(ncclProfilerEventDescr_v5_t, rank, 16);
NP_AT(ncclProfilerEventDescr_v5_t, groupApi.groupDepth, 28);
NP_AT(ncclProfilerEventDescr_v5_t, collApi.root, 48);
NP_AT(ncclProfilerEventDescr_v5_t, collApi.stream, 56);
NP_AT(ncclProfilerEventDescr_v5_t, collApi.graphCaptured, 64);
NP_AT(ncclProfilerEventDescr_v5_t, p2pApi.stream, 48);
NP_AT(ncclProfilerEventDescr_v5_t, p2pApi.graphCaptured, 56);
NP_AT(ncclProfilerEventDescr_v5_t, kernelLaunch.stream, 24);
NP_AT(ncclProfilerEventDescr_v5_t, coll.seqNumber, 24);
NP_AT(ncclProfilerEventDescr_v5_t, coll.root, 64);
NP_AT(ncclProfilerEventDescr_v5_t, coll.datatype, 72);
NP_AT(ncclProfilerEventDescr_v5_t, coll.nChannels, 80);
NP_AT(ncclProfilerEventDescr_v5_t, coll.nWarps, 81);
NP_AT(ncclProfilerEventDescr_v5_t, coll.algo, 88);
NP_AT(ncclProfilerEventDescr_v5_t, coll.proto, 96);
NP_AT(ncclProfilerEventDescr_v5_t, coll.parentGroup, 104);
NP_AT(ncclProfilerEventDescr_v5_t, p2p.count, 48);
NP_AT(ncclProfilerEventDescr_v5_t, p2p.peer, 56);
NP_AT(ncclProfilerEventDescr_v5_t, p2p.nChannels, 60);
NP_AT(ncclProfilerEventDescr_v5_t, p2p.parentGroup, 64);
NP_AT(ncclProfilerEventDescr_v5_t, proxyOp.channelId, 28);
NP_AT(ncclProfilerEventDescr_v5_t, proxyOp.isSend, 44);
NP_AT(ncclProfilerEventDescr_v5_t, kernelCh.pTimer, 32);
NP_AT(ncclProfilerEventDescr_v5_t, netPlugin.data, 32);
NP_SIZE(ncclProfilerEventStateArgs_t, 8);
NP_SIZE(ncclProfilerEventDescr_v4_t, 104);
NP_AT(ncclProfilerEventDescr_v4_t, coll.seqNumber, 24);
NP_AT(ncclProfilerEventDescr_v4_t, coll.root, 64);
NP_AT(ncclProfilerEventDescr_v4_t, coll.datatype, 72);
NP_AT(ncclProfilerEventDescr_v4_t, coll.nChannels, 80);
NP_AT(ncclProfilerEventDescr_v4_t, coll.proto, 96);
NP_AT(ncclProfilerEventDescr_v4_t, p2p.nChannels, 60);
NP_AT(ncclProfilerEventDescr_v4_t, proxyOp.isSend, 44);
NP_AT(ncclProfilerEventDescr_v4_t, kernelCh.pTimer, 32);
NP_AT(ncclProfilerEventDescr_v4_t, netPlugin.data, 32);
NP_SIZE(ncclProfilerEventDescr_v3_t, 120);
NP_AT(ncclProfilerEventDescr_v3_t, coll.commHash, 32);
NP_AT(ncclProfilerEventDescr_v3_t, coll.seqNumber, 40);
NP_AT(ncclProfilerEventDescr_v3_t, coll.func, 48);
NP_AT(ncclProfilerEventDescr_v3_t, coll.count, 72);
NP_AT(ncclProfilerEventDescr_v3_t, coll.root, 80);
NP_AT(ncclProfilerEventDescr_v3_t, coll.datatype, 88);
NP_AT(ncclProfilerEventDescr_v3_t, coll.nMaxChannels, 96);
NP_AT(ncclProfilerEventDescr_v3_t, coll.nWarps, 97);
NP_AT(ncclProfilerEventDescr_v3_t, coll.algo, 104);
NP_AT(ncclProfilerEventDescr_v3_t, coll.proto, 112);
NP_AT(ncclProfilerEventDescr_v3_t, p2p.func, 40);
NP_AT(ncclProfilerEventDescr_v3_t, p2p.datatype, 56);
NP_AT(ncclProfilerEventDescr_v3_t, p2p.count, 64);
NP_AT(ncclProfilerEventDescr_v3_t, p2p.peer, 72);
NP_AT(ncclProfilerEventDescr_v3_t, proxyOp.isSend, 44);
NP_AT(ncclProfilerEventDescr_v3_t, proxyStep.step, 24);
NP_AT(ncclProfilerEventDescr_v3_t, kernelCh.channelId, 24);
NP_AT(ncclProfilerEventDescr_v3_t, netPlugin.data, 32);
NP_SIZE(ncclProfilerEventDescr_v2_t, 128);
NP_AT(ncclProfilerEventDescr_v2_t, coll.datatype, 88);
NP_AT(ncclProfilerEventDescr_v2_t, coll.trafficBytes, 96);
NP_AT(ncclProfilerEventDescr_v2_t, coll.nMaxChannels, 104);
NP_AT(ncclProfilerEventDescr_v2_t, coll.nWarps, 105);
NP_AT(ncclProfilerEventDescr_v2_t, coll.algo, 112);
NP_AT(ncclProfilerEventDescr_v2_t, coll.proto, 120);
NP_AT(ncclProfilerEventDescr_v2_t, p2p.peer, 72);
NP_AT(ncclProfilerEventDescr_v2_t, proxyOp.isSend, 44);
NP_SIZE(ncclProfilerEventDescr_v1_t, 120);
NP_AT(ncclProfilerEventDescr_v1_t, coll.func, 48);
NP_AT(ncclProfilerEventDescr_v1_t, coll.sendBuff, 56);
NP_AT(ncclProfilerEventDescr_v1_t, coll.root, 80);
NP_AT(ncclProfilerEventDescr_v1_t, coll.datatype, 84);
NP_AT(ncclProfilerEventDescr_v1_t, coll.op, 88);
NP_AT(ncclProfilerEventDescr_v1_t, coll.trafficBytes, 96);
NP_AT(ncclProfilerEventDescr_v1_t, coll.nMaxChannels, 104);
NP_AT(ncclProfilerEventDescr_v1_t, coll.nWarps, 105);
NP_AT(ncclProfilerEventDescr_v1_t, coll.algo, 106);
NP_AT(ncclProfilerEventDescr_v1_t, coll.proto, 107);
NP_AT(ncclProfilerEventDescr_v1_t, coll.isNvls, 112);
NP_AT(ncclProfilerEventDescr_v1_t, p2p.func, 40);
NP_AT(ncclProfilerEventDescr_v1_t, p2p.buff, 48);
NP_AT(ncclProfilerEventDescr_v1_t, p2p.datatype, 56);
NP_AT(ncclProfilerEventDescr_v1_t, p2p.count, 64);
NP_AT(ncclProfilerEventDescr_v1_t, p2p.peer, 72);
NP_AT(ncclProfilerEventDescr_v1_t, proxyOp.isSend, 44);
NP_SIZE(ncclProfilerEventStateArgs_v3_t, 16);
NP_AT(ncclProfilerEventStateArgs_v3_t, proxyOp.steps, 8);
NP_SIZE(ncclProfiler_v1_t, 48);
NP_AT(ncclProfiler_v3_t, finalize, 40);
NP_SIZE(ncclProfilerNetIbDescr_v1_t, 40);
NP_AT(ncclProfilerNetIbDescr_v1_t, qp.qpNum, 28);
NP_AT(ncclProfilerNetIbDescr_v1_t, qp.length, 32);
#undef NP_AT
#undef NP_SIZE
#endif

#endif
