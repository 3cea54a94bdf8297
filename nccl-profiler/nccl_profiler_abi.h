/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * NCCL's profiler plugin ABI, v4 and v5, as NCCL 2.28.9 calls it: the
 * project's own declarations, written from the facts in DESIGN.md ("NCCL
 * profiler plugin ABI", read from NCCL's ext-profiler/ headers).  Only the
 * layout matters to NCCL; the names follow NCCL's so that a reader can put
 * this file beside profiler_v5.h.
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

/* ncclProfilerEventState_v5_t (v4 is the same numbering, without 23/24). */
enum {
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

#endif
