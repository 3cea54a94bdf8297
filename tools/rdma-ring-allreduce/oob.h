/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Out-of-band exchange between ranks over a local unix socket, or TCP for
 * ranks on several hosts: a star through rank 0 (rank 0 listens, the others
 * connect), enough for an allgather of QP info, barriers and gathering
 * results. Every read, write, accept and connect has a deadline, so a dead
 * peer is an error, never a hang.
 */
#ifndef RRA_OOB_H
#define RRA_OOB_H

#include <stddef.h>

struct oob {
	int rank, n;
	int timeout_ms;
	int listen_fd;		/* rank 0 until everyone connected, else -1 */
	int root_fd;		/* ranks > 0: connection to rank 0 */
	int *peer_fd;		/* rank 0: peer_fd[r] for r > 0 */
	char name[108];
};

/*
 * name: "@abstract-name" (Linux abstract namespace, nothing to clean up), a
 * filesystem path, or "tcp:HOST:PORT" (IPv6: "tcp:[ADDR]:PORT"): rank 0
 * listens on HOST:PORT, one of its own addresses, the others connect there,
 * retrying while nothing listens or the network is not up, until the
 * deadline. Returns 0 or -1 with the error printed.
 */
int oob_open(struct oob *o, const char *name, int rank, int n, int timeout_ms);
/* all gets n records of sz bytes, record r from rank r. */
int oob_allgather(struct oob *o, const void *mine, void *all, size_t sz);
int oob_barrier(struct oob *o);
void oob_close(struct oob *o);

#endif
