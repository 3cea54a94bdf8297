// SPDX-License-Identifier: GPL-2.0
/*
 * libnccl-double.so: a TEST DOUBLE of NCCL, not NCCL.  It exports the NCCL
 * API with NCCL's signatures, enum values and symbol layout (strong pncclX,
 * weak ncclX alias at the same address; ncclBcast calling ncclBroadcast
 * and ncclCommInitAll calling ncclGetUniqueId / ncclGroupStart /
 * ncclCommInitRank through the exported symbols, as NCCL does), checks
 * arguments like NCCL, and then, instead of moving data, sleeps
 * NCCL_DOUBLE_DELAY_US microseconds (default 0) and returns ncclSuccess.
 * Communicators initialise, so the success paths can be traced without a
 * GPU.  Its soname is libnccl.so.2 so that applications load it in place
 * of NCCL from a directory of its own.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "nccl_abi.h"

#define DOUBLE_MAGIC 0x6e63636c64626c65ULL	/* "ncclbdle" */

struct ncclComm {
	uint64_t magic;
	int rank, nranks;
	ncclUniqueId id;
};

/* pncclX is the definition; ncclX a weak alias, exactly as NCCL exports them. */
#define NCCL_API(ret, name, ...) \
	__attribute__((visibility("default"))) ret p##name(__VA_ARGS__); \
	extern __typeof(p##name) name \
		__attribute__((weak, alias("p" #name), visibility("default"))); \
	__attribute__((visibility("default"))) ret p##name(__VA_ARGS__)

static void delay(void)
{
	const char *s = getenv("NCCL_DOUBLE_DELAY_US");
	long us = s ? strtol(s, NULL, 10) : 0;
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us > 0)
		while (nanosleep(&ts, &ts))
			;
}

static int comm_ok(ncclComm_t c)
{
	return c && c->magic == DOUBLE_MAGIC;
}

static int type_ok(ncclDataType_t t)
{
	return (int)t >= 0 && (int)t < ncclNumTypes;
}

static int op_ok(ncclRedOp_t op)
{
	return (int)op >= 0 && (int)op < ncclNumOps;
}

static int group_depth;

NCCL_API(ncclResult_t, ncclGetVersion, int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = 22809;
	return ncclSuccess;
}

NCCL_API(const char *, ncclGetErrorString, ncclResult_t r)
{
	return r == ncclSuccess ? "no error (nccl test double)" : "error (nccl test double)";
}

NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId *id)
{
	if (!id)
		return ncclInvalidArgument;
	if (getrandom(id->internal, sizeof(id->internal), 0) != sizeof(id->internal))
		return ncclSystemError;
	delay();
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank)
{
	struct ncclComm *c;

	if (!comm || nranks < 1 || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	c->magic = DOUBLE_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	c->id = *id;
	delay();
	*comm = c;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t *comm, int nranks, ncclUniqueId commId,
	 int rank)
{
	return init_rank(comm, nranks, &commId, rank);
}

NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t *comm, int nranks,
	 ncclUniqueId commId, int rank, ncclConfig_t *config)
{
	if (config && config->magic != 0xcafebeef)
		return ncclInvalidArgument;
	return init_rank(comm, nranks, &commId, rank);
}

NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t *comms, int ndev, const int *devlist)
{
	ncclUniqueId id;
	ncclResult_t r;

	(void)devlist;
	if (!comms || ndev < 1)
		return ncclInvalidArgument;
	/* Through the exported symbols: tracers see these as nested calls. */
	r = ncclGetUniqueId(&id);
	if (r)
		return r;
	ncclGroupStart();
	for (int i = 0; i < ndev && !r; i++)
		r = ncclCommInitRank(&comms[i], ndev, id, i);
	ncclGroupEnd();
	return r;
}

NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
	 ncclConfig_t *config)
{
	ncclUniqueId id;

	(void)key;
	(void)config;
	if (!comm_ok(comm) || !newcomm)
		return ncclInvalidArgument;
	if (color == NCCL_SPLIT_NOCOLOR) {
		*newcomm = NULL;
		return ncclSuccess;
	}
	/* One process cannot learn the other members: a 1-rank comm. */
	memset(&id, 0, sizeof(id));
	return init_rank(newcomm, 1, &id, 0);
}

NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm)
{
	if (!comm_ok(comm))
		return ncclInvalidArgument;
	delay();
	return ncclSuccess;
}

static ncclResult_t comm_free(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;	/* NCCL accepts NULL here */
	if (!comm_ok(comm))
		return ncclInvalidArgument;
	comm->magic = 0;
	free(comm);
	delay();
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm)
{
	return comm_free(comm);
}

NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm)
{
	return comm_free(comm);
}

static ncclResult_t coll(ncclComm_t comm, ncclDataType_t t, int check_op, ncclRedOp_t op,
			 int check_root, int root)
{
	if (!comm_ok(comm) || !type_ok(t) || (check_op && !op_ok(op)) ||
	    (check_root && (root < 0 || root >= comm->nranks)))
		return ncclInvalidArgument;
	delay();
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclAllReduce, const void *sendbuff, void *recvbuff, size_t count,
	 ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return coll(comm, datatype, 1, op, 0, 0);
}

NCCL_API(ncclResult_t, ncclReduceScatter, const void *sendbuff, void *recvbuff,
	 size_t recvcount, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
	 cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)recvcount, (void)stream;
	return coll(comm, datatype, 1, op, 0, 0);
}

NCCL_API(ncclResult_t, ncclBroadcast, const void *sendbuff, void *recvbuff, size_t count,
	 ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return coll(comm, datatype, 0, 0, 1, root);
}

NCCL_API(ncclResult_t, ncclBcast, void *buff, size_t count, ncclDataType_t datatype, int root,
	 ncclComm_t comm, cudaStream_t stream)
{
	/* As in NCCL: the in-place broadcast, through the exported symbol. */
	return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

NCCL_API(ncclResult_t, ncclReduce, const void *sendbuff, void *recvbuff, size_t count,
	 ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return coll(comm, datatype, 1, op, 1, root);
}

NCCL_API(ncclResult_t, ncclAllGather, const void *sendbuff, void *recvbuff, size_t sendcount,
	 ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)sendcount, (void)stream;
	return coll(comm, datatype, 0, 0, 0, 0);
}

NCCL_API(ncclResult_t, ncclAlltoAll, const void *sendbuff, void *recvbuff, size_t count,
	 ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)recvbuff, (void)count, (void)stream;
	return coll(comm, datatype, 0, 0, 0, 0);
}

NCCL_API(ncclResult_t, ncclSend, const void *sendbuff, size_t count, ncclDataType_t datatype,
	 int peer, ncclComm_t comm, cudaStream_t stream)
{
	(void)sendbuff, (void)count, (void)stream;
	return coll(comm, datatype, 0, 0, 1, peer);
}

NCCL_API(ncclResult_t, ncclRecv, void *recvbuff, size_t count, ncclDataType_t datatype,
	 int peer, ncclComm_t comm, cudaStream_t stream)
{
	(void)recvbuff, (void)count, (void)stream;
	return coll(comm, datatype, 0, 0, 1, peer);
}

NCCL_API(ncclResult_t, ncclGroupStart, void)
{
	group_depth++;
	return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGroupEnd, void)
{
	if (group_depth == 0)
		return ncclInvalidUsage;
	group_depth--;
	delay();
	return ncclSuccess;
}
