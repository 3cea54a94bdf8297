// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The NCCL profiler plugin's events decoded once, for the readers that
 * follow collectives from their start to their stop (--stats' summary,
 * --metrics): a start record's fields into a struct rdt_np_span, a kernel
 * channel's GPU stop from its state record, and a finished kernel
 * channel's GPU span folded into its collective's.  Each reader's entry
 * in np_open.c's table begins with the span and adds what only it keeps.
 */
#include <string.h>

#include "internal.h"

struct rdt_np_span *rdt_np_span_start(struct rdt_np_open *t,
				      const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	struct rdt_np_span *e = (struct rdt_np_span *)rdt_np_open_start(t, ev,
				r->hdr.type == RDT_EV_NP_COLL, NULL);

	if (!e)
		return NULL;
	e->type = r->hdr.type;
	e->ts = ev->ts;
	switch (r->hdr.type) {
	case RDT_EV_NP_COLL:
		/* the record's names need not end in a NUL */
		memcpy(e->func, r->np_coll.func, RDT_NP_STR);
		e->func[RDT_NP_STR] = 0;
		memcpy(e->dtype, r->np_coll.datatype, RDT_NP_STR);
		e->dtype[RDT_NP_STR] = 0;
		e->seq = r->np_coll.seq;
		e->count = r->np_coll.count;
		e->comm_id = r->np_coll.ids.comm_id;
		e->rank = r->np_coll.ids.rank;
		break;
	case RDT_EV_NP_KERNEL_CH:
		e->gpu_start = r->np_kernel_ch.gpu_start;
		break;
	case RDT_EV_NP_NET_IB:
		e->device = r->np_net_ib.device;
		e->qpn = r->np_net_ib.qpn;
		e->length = r->np_net_ib.length;
		e->wr_id = r->np_net_ib.wr_id;
		e->opcode = r->np_net_ib.opcode;
		break;
	}
	return e;
}

struct rdt_np_span *rdt_np_span_state(const struct rdt_np_open *t,
				      const struct rdt_event *ev)
{
	struct rdt_np_span *e = (struct rdt_np_span *)rdt_np_open_find(t,
				ev->host, ev->rec.hdr.pid, ev->rec.np_state.ids.id);

	if (!e || e->type != RDT_EV_NP_KERNEL_CH ||
	    ev->rec.np_state.state != RDT_NP_STATE_KERNEL_CH_STOP)
		return NULL;
	e->gpu_stop = ev->rec.np_state.arg;
	return e;
}

void rdt_np_span_kernel_done(const struct rdt_np_open *t,
			     const struct rdt_np_span *e)
{
	struct rdt_np_span *c = (struct rdt_np_span *)rdt_np_open_coll(t, &e->o);

	if (!c || !e->gpu_start || e->gpu_stop < e->gpu_start)
		return;
	if (!c->gpu_start || e->gpu_start < c->gpu_start)
		c->gpu_start = e->gpu_start;
	if (e->gpu_stop > c->gpu_stop)
		c->gpu_stop = e->gpu_stop;
}
