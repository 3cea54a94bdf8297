// SPDX-License-Identifier: GPL-2.0
/*
 * nccl-driver LIB: makes a fixed sequence of NCCL API calls into the
 * library at LIB (the real libnccl.so.2 or the test double) through
 * dlopen, and prints for every call the record the producers/bpf/ NCCL source must
 * produce, in rdt-bpf-selftest's format:
 *
 *   NCCL_CALL fn=.. ret=.. count=.. datatype=.. op=.. root=.. comm=0x..
 *             stream=0x.. hash=0x.. rank=.. nranks=.. seq=..
 *   NCCL_COMM fn=.. ret=.. comm=0x.. hash=0x.. rank=.. nranks=..
 *
 * The expected values come from the driver's own arguments, the library's
 * return values and the documented semantics (producers/bpf/README.md), computed
 * here without any code from producers/bpf/: comm hash = splitmix64 chain over the
 * 128-byte ncclUniqueId the driver holds, seq = collectives per comm.
 * Also prints "pid=N" first and "ID <hex>" for each unique id.  With
 * NCCL_DRIVER_GO=FILE set it waits (60 s at most) for FILE to exist
 * before the first call, so a tracer can attach by pid, and for
 * FILE.exit before it exits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../nccl-double/nccl_abi.h"

#define NCCL_IN_PROGRESS 7

/* ---- the reference model of what producers/bpf/ must report ------------ */

static uint64_t splitmix64(uint64_t x)
{
	uint64_t z = x + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t id_hash(const ncclUniqueId *id)
{
	uint64_t h = 0, w;

	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i += 8) {
		memcpy(&w, id->internal + i, 8);	/* little endian, as on x86-64 */
		h = splitmix64(h ^ w);
	}
	return h;
}

struct model {
	uintptr_t comm;
	uint64_t hash, seq;
	int rank, nranks;
};
static struct model comms[64];

static struct model *find(uintptr_t comm, int create)
{
	struct model *free_slot = NULL;

	for (int i = 0; i < 64; i++) {
		if (comms[i].comm == comm && comm)
			return &comms[i];
		if (!comms[i].comm && !free_slot)
			free_slot = &comms[i];
	}
	if (create && free_slot && comm)
		*free_slot = (struct model){ .comm = comm, .rank = -1 };
	return create ? free_slot : NULL;
}

static void set(uintptr_t comm, uint64_t hash, int rank, int nranks)
{
	struct model *m = find(comm, 1);

	if (m)
		*m = (struct model){ comm, hash, 0, rank, nranks };
}

static void forget(uintptr_t comm)
{
	struct model *m = find(comm, 0);

	if (m)
		memset(m, 0, sizeof(*m));
}

struct call {
	const char *fn;
	int ret;
	uint64_t count;
	int datatype, op, root;
	uintptr_t comm, stream;
	uint64_t hash, seq;
	int rank, nranks;
};

static void print_call(const struct call *c)
{
	printf("NCCL_CALL fn=%s ret=%d count=%" PRIu64 " datatype=%d op=%d root=%d comm=0x%" PRIxPTR
	       " stream=0x%" PRIxPTR " hash=0x%016" PRIx64 " rank=%d nranks=%d seq=%" PRIu64 "\n",
	       c->fn, c->ret, c->count, c->datatype, c->op, c->root, c->comm, c->stream, c->hash,
	       c->rank, c->nranks, c->seq);
}

static void print_comm(const char *fn, int ret, uintptr_t comm, uint64_t hash, int rank,
		       int nranks)
{
	printf("NCCL_COMM fn=%s ret=%d comm=0x%" PRIxPTR " hash=0x%016" PRIx64
	       " rank=%d nranks=%d\n", fn, ret, comm, hash, rank, nranks);
}

static struct call base(const char *fn, int ret)
{
	return (struct call){ .fn = fn, .ret = ret, .datatype = -1, .op = -1, .root = -1,
			      .rank = -1 };
}

/* A collective or p2p call on comm: state from the model, seq for collectives. */
static void op_call(struct call *c, int collective)
{
	struct model *m = c->comm ? find(c->comm, 1) : NULL;

	if (m) {
		if (collective)
			c->seq = ++m->seq;
		c->hash = m->hash;
		c->rank = m->rank;
		c->nranks = m->nranks;
	}
	print_call(c);
}

static void mgmt_call(struct call *c)
{
	struct model *m = find(c->comm, 0);

	if (m) {
		c->hash = m->hash;
		c->rank = m->rank;
		c->nranks = m->nranks;
	}
	print_call(c);
}

/* ---- the library under test ---------------------------------------------- */

static void *lib;

static void *sym(const char *name, int required)
{
	void *p = dlsym(lib, name);

	if (!p && required) {
		fprintf(stderr, "nccl-driver: %s: %s\n", name, dlerror());
		exit(2);
	}
	return p;
}
#define SYM(name) __typeof(name) *p_##name = sym(#name, 1)

static void print_id(const ncclUniqueId *id)
{
	printf("ID ");
	for (int i = 0; i < NCCL_UNIQUE_ID_BYTES; i++)
		printf("%02x", (unsigned char)id->internal[i]);
	printf("\n");
}

#define STREAM ((cudaStream_t)(uintptr_t)0x5eed0001)

/* Wait up to 60 s for the file PATH SUFFIX to exist. */
static int wait_file(const char *path, const char *suffix)
{
	char f[4096];

	snprintf(f, sizeof(f), "%s%s", path, suffix);
	for (int i = 0; access(f, F_OK); i++) {
		if (i == 600) {
			fprintf(stderr, "nccl-driver: no %s after 60 s\n", f);
			return -1;
		}
		usleep(100000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 3;

	if (argc < 2) {
		fprintf(stderr, "usage: nccl-driver LIBRARY [ROUNDS]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "nccl-driver: %s\n", dlerror());
		return 2;
	}
	SYM(ncclGetUniqueId); SYM(ncclCommInitRank); SYM(ncclCommInitRankConfig);
	SYM(ncclCommInitAll); SYM(ncclCommSplit); SYM(ncclCommFinalize); SYM(ncclCommDestroy);
	SYM(ncclCommAbort); SYM(ncclAllReduce); SYM(ncclBroadcast); SYM(ncclBcast);
	SYM(ncclReduce); SYM(ncclAllGather); SYM(ncclReduceScatter); SYM(ncclSend);
	SYM(ncclRecv); SYM(ncclGroupStart); SYM(ncclGroupEnd);
	__typeof(ncclAlltoAll) *p_ncclAlltoAll = sym("ncclAlltoAll", 0);

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pid=%d\n", getpid());
	/* A tracer attaching by pid needs the process (and the library
	 * mapped) before the first call: wait for its go file. */
	const char *go = getenv("NCCL_DRIVER_GO");

	if (go && wait_file(go, ""))
		return 2;

	ncclUniqueId id, id2;
	ncclComm_t comm = NULL, comm2 = NULL, split = NULL, all[2] = { NULL, NULL };
	struct call c;
	int r;
	float buf[64];

	/* Unique id: its hash is reported by GetUniqueId and the comms it makes. */
	memset(&id, 0, sizeof(id));
	r = p_ncclGetUniqueId(&id);
	print_id(&id);
	c = base("ncclGetUniqueId", r);
	c.hash = r == 0 ? id_hash(&id) : 0;
	print_call(&c);

	/* By-value id on the stack, rank in rdx: the classic mis-decode. */
	r = p_ncclCommInitRank(&comm, 4, id, 2);
	c = base("ncclCommInitRank", r);
	c.comm = (uintptr_t)comm;
	c.hash = id_hash(&id);
	c.rank = 2;
	c.nranks = 4;
	if (r == 0 || r == NCCL_IN_PROGRESS)
		set(c.comm, c.hash, 2, 4);
	print_call(&c);
	print_comm("ncclCommInitRank", r, c.comm, c.hash, 2, 4);

	for (int i = 0; i < rounds; i++) {
		r = p_ncclAllReduce(buf, buf, 1000 + i, ncclFloat32, ncclSum, comm, STREAM);
		c = base("ncclAllReduce", r);
		c.count = 1000 + i; c.datatype = ncclFloat32; c.op = ncclSum;
		c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
		op_call(&c, 1);
	}
	r = p_ncclBroadcast(buf, buf, 77, ncclInt64, 1, comm, STREAM);
	c = base("ncclBroadcast", r);
	c.count = 77; c.datatype = ncclInt64; c.root = 1;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	/* Calls ncclBroadcast inside the double (and NCCL): must appear once. */
	r = p_ncclBcast(buf, 55, ncclUint8, 3, comm, STREAM);
	c = base("ncclBcast", r);
	c.count = 55; c.datatype = ncclUint8; c.root = 3;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	/* comm and stream are the 7th and 8th arguments: both on the stack. */
	r = p_ncclReduce(buf, buf, 4242, ncclFloat64, ncclMax, 2, comm, STREAM);
	c = base("ncclReduce", r);
	c.count = 4242; c.datatype = ncclFloat64; c.op = ncclMax; c.root = 2;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	r = p_ncclAllGather(buf, buf, 333, ncclBfloat16, comm, STREAM);
	c = base("ncclAllGather", r);
	c.count = 333; c.datatype = ncclBfloat16;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	r = p_ncclReduceScatter(buf, buf, 444, ncclInt32, ncclProd, comm, STREAM);
	c = base("ncclReduceScatter", r);
	c.count = 444; c.datatype = ncclInt32; c.op = ncclProd;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	if (p_ncclAlltoAll) {
		r = p_ncclAlltoAll(buf, buf, 555, ncclUint64, comm, STREAM);
		c = base("ncclAlltoAll", r);
		c.count = 555; c.datatype = ncclUint64;
		c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
		op_call(&c, 1);
	}

	/* An argument error: datatype out of range. */
	r = p_ncclAllReduce(buf, buf, 9, (ncclDataType_t)99, ncclSum, comm, STREAM);
	c = base("ncclAllReduce", r);
	c.count = 9; c.datatype = 99; c.op = ncclSum;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	r = p_ncclGroupStart();
	c = base("ncclGroupStart", r);
	print_call(&c);
	r = p_ncclSend(buf, 66, ncclFloat16, 1, comm, STREAM);
	c = base("ncclSend", r);
	c.count = 66; c.datatype = ncclFloat16; c.root = 1;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 0);
	r = p_ncclRecv(buf, 67, ncclFloat16, 3, comm, STREAM);
	c = base("ncclRecv", r);
	c.count = 67; c.datatype = ncclFloat16; c.root = 3;
	c.comm = (uintptr_t)comm; c.stream = (uintptr_t)STREAM;
	op_call(&c, 0);
	r = p_ncclGroupEnd();
	c = base("ncclGroupEnd", r);
	print_call(&c);

	/* A second communicator from a second id, with a config. */
	memset(&id2, 0, sizeof(id2));
	r = p_ncclGetUniqueId(&id2);
	print_id(&id2);
	c = base("ncclGetUniqueId", r);
	c.hash = r == 0 ? id_hash(&id2) : 0;
	print_call(&c);
	{
		ncclConfig_t cfg = { .size = sizeof(ncclConfig_t), .magic = 0xcafebeef,
				     .version = 22809, .blocking = 1 };

		r = p_ncclCommInitRankConfig(&comm2, 2, id2, 1, &cfg);
	}
	c = base("ncclCommInitRankConfig", r);
	c.comm = (uintptr_t)comm2;
	c.hash = id_hash(&id2);
	c.rank = 1;
	c.nranks = 2;
	if (r == 0 || r == NCCL_IN_PROGRESS)
		set(c.comm, c.hash, 1, 2);
	print_call(&c);
	print_comm("ncclCommInitRankConfig", r, c.comm, c.hash, 1, 2);

	r = p_ncclAllReduce(buf, buf, 8, ncclInt8, ncclMin, comm2, STREAM);
	c = base("ncclAllReduce", r);
	c.count = 8; c.datatype = ncclInt8; c.op = ncclMin;
	c.comm = (uintptr_t)comm2; c.stream = (uintptr_t)STREAM;
	op_call(&c, 1);

	/* Split: root = color, op = key, stream = the new comm (producers/bpf/README.md). */
	r = p_ncclCommSplit(comm, 5, 9, &split, NULL);
	c = base("ncclCommSplit", r);
	c.comm = (uintptr_t)comm; c.root = 5; c.op = 9; c.stream = (uintptr_t)split;
	mgmt_call(&c);
	if ((r == 0 || r == NCCL_IN_PROGRESS) && split) {
		uint64_t h = splitmix64(c.hash ^ 5u);

		set((uintptr_t)split, h, -1, 0);
		print_comm("ncclCommSplit", r, (uintptr_t)split, h, -1, 0);
	}

	/* InitAll makes its id inside the library: hash 0, ranks 0..n-1. */
	r = p_ncclCommInitAll(all, 2, NULL);
	c = base("ncclCommInitAll", r);
	c.comm = (uintptr_t)all[0];
	c.nranks = 2;
	print_call(&c);
	for (int i = 0; i < 2; i++) {
		if (r == 0 || r == NCCL_IN_PROGRESS)
			set((uintptr_t)all[i], 0, i, 2);
		print_comm("ncclCommInitAll", r, (uintptr_t)all[i], 0, i, 2);
	}
	if (all[1]) {
		r = p_ncclAllReduce(buf, buf, 5, ncclFloat32, ncclAvg, all[1], STREAM);
		c = base("ncclAllReduce", r);
		c.count = 5; c.datatype = ncclFloat32; c.op = ncclAvg;
		c.comm = (uintptr_t)all[1]; c.stream = (uintptr_t)STREAM;
		op_call(&c, 1);
	}

	/* Teardown: Finalize keeps the comm, Destroy (ret 0) and Abort drop it. */
	r = p_ncclCommFinalize(comm);
	c = base("ncclCommFinalize", r);
	c.comm = (uintptr_t)comm;
	mgmt_call(&c);
	r = p_ncclCommDestroy(comm);
	c = base("ncclCommDestroy", r);
	c.comm = (uintptr_t)comm;
	mgmt_call(&c);
	if (r == 0)
		forget((uintptr_t)comm);
	r = p_ncclCommAbort(comm2);
	c = base("ncclCommAbort", r);
	c.comm = (uintptr_t)comm2;
	mgmt_call(&c);
	forget((uintptr_t)comm2);
	for (int i = 0; i < 2; i++) {
		if (!all[i])
			continue;
		r = p_ncclCommDestroy(all[i]);
		c = base("ncclCommDestroy", r);
		c.comm = (uintptr_t)all[i];
		mgmt_call(&c);
		if (r == 0)
			forget((uintptr_t)all[i]);
	}
	if (split) {
		r = p_ncclCommDestroy(split);
		c = base("ncclCommDestroy", r);
		c.comm = (uintptr_t)split;
		mgmt_call(&c);
	}
	printf("done\n");
	/* ... and lives on until FILE.exit, so the tracer still finds it. */
	if (go && wait_file(go, ".exit"))
		return 2;
	return 0;
}
