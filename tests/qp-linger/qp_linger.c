// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for tests that drive ibv_rc_pingpong over a lossy link:
 * ibv_destroy_qp() waits RDT_QP_LINGER_MS (default 1000) before destroying.
 *
 * ibv_rc_pingpong has no closing handshake: a side that has everything it
 * needs destroys its QP at once.  If the ACK of the peer's last message is
 * then lost, the peer retransmits to a QP that no longer exists, and rxe
 * reads retry_cnt 7 (what ibv_rc_pingpong sets) as "retry forever"
 * (rxe_comp.c: "if (qp->comp.retry_cnt != 7) qp->comp.retry_cnt--"), so the
 * peer never finishes.  Lingering keeps the QP in RTS long enough for the
 * retransmission to be answered, as TCP's TIME_WAIT does for a lost final
 * ACK.  It changes no verb's arguments or results, so a trace of a run
 * under the shim is a trace of the real program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

typedef int (*destroy_qp_fn)(struct ibv_qp *qp);

static long linger_ms(void)
{
	const char *s = getenv("RDT_QP_LINGER_MS");
	char *end;
	long ms;

	if (!s || !*s)
		return 1000;
	ms = strtol(s, &end, 10);
	if (*end || ms < 0 || ms > 60000) {
		fprintf(stderr, "qp-linger: RDT_QP_LINGER_MS='%s' is not 0..60000\n",
			s);
		exit(2);
	}
	return ms;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	static destroy_qp_fn real;
	long ms = linger_ms();
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (!real) {
		real = (destroy_qp_fn)dlvsym(RTLD_NEXT, "ibv_destroy_qp",
					     "IBVERBS_1.1");
		if (!real) {
			fprintf(stderr, "qp-linger: no ibv_destroy_qp@IBVERBS_1.1: %s\n",
				dlerror());
			abort();
		}
	}
	while (nanosleep(&ts, &ts))
		;
	return real(qp);
}
