// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What a record means to the reader as it comes in; the merge (merge.c)
 * only orders records.  Here: the names COMM and DEVICE_* records give,
 * the loss LOST records count, a SUBBUF's cumulative loss made a LOST
 * record where it grew, relay sub-buffers skipped unread, and the POLL_CQ
 * summary that a poll's last completion stands for (ABI 1.8).  The merge
 * queues what this makes; this queues nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* @want is 64-bit so that cpu + 1 for UINT32_MAX ("any CPU") cannot wrap. */
static int grow(uint64_t **v, uint32_t *n, uint64_t want)
{
	uint64_t *p;

	if (want > 65536)
		return -EINVAL;
	if (want <= *n)
		return 0;
	p = realloc(*v, want * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(p + *n, 0, (want - *n) * sizeof(*p));
	*v = p;
	*n = (uint32_t)want;
	return 0;
}

static void account_lost(struct rdt_src *s, unsigned int producer,
			 unsigned int cpu, uint64_t count)
{
	s->st.lost += count;
	s->st.lost_by[producer < 8 ? producer : 0] += count;
	if (!grow(&s->lost_cpu, &s->st.ncpus, (uint64_t)cpu + 1))
		s->lost_cpu[cpu] += count;
	s->st.lost_cpu = s->lost_cpu;
}

void rdt_ingest_lost(struct rdt_src *s, unsigned int producer, unsigned int cpu,
		     uint64_t count, uint64_t ts, union rdt_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	rdt_user_hdr(&rec->hdr, RDT_EV_LOST, sizeof(rec->lost), ts, cpu,
		     RDT_NO_DEV);
	rec->lost.count = count;
	rec->lost.lost_source = producer;
	rec->lost.lost_cpu = cpu;
	account_lost(s, producer, cpu, count);
}

/*
 * ABI 1.8: the module writes no POLL_CQ record for a poll that returned
 * completions; its last completion carries num_entries instead.  The
 * summary is made back, to follow it, so every sink sees one per poll as
 * before.  Derived: binary writers skip it, and reading their file makes
 * it again.
 */
void rdt_ingest_poll_summary(const void *buf, union rdt_record *rec)
{
	struct rdt_ev_poll_cq_wc wc;

	memcpy(&wc, buf, sizeof(wc));
	memset(rec, 0, sizeof(*rec));
	rec->hdr = wc.hdr;
	rec->hdr.type = RDT_EV_POLL_CQ;
	rec->hdr.size = sizeof(rec->poll_cq);
	rec->poll_cq.cq_id = wc.cq_id;
	rec->poll_cq.requested = wc.poll_requested;
	rec->poll_cq.ret = wc.index + 1;
}

bool rdt_ingest_bookkeeping(struct rdt_names *n, struct rdt_src *s,
			    const union rdt_record *rec, union rdt_record *more)
{
	bool made = false;

	switch (rec->hdr.type) {
	case RDT_EV_COMM:
		rdt_names_set_comm(n, s->host, rec->hdr.tid, rec->comm.comm,
				   RDT_COMM_LEN);
		if (rec->hdr.pid != rec->hdr.tid &&
		    !rdt_names_has_comm(n, s->host, rec->hdr.pid))
			rdt_names_set_comm(n, s->host, rec->hdr.pid,
					   rec->comm.comm, RDT_COMM_LEN);
		break;
	case RDT_EV_DEVICE_ADD:
	case RDT_EV_DEVICE_RENAME:
	case RDT_EV_DEVICE_STATE:
		rdt_names_set_dev(n, s->host, rec->hdr.dev, rec->device.name,
				  RDT_NAME_LEN);
		break;
	case RDT_EV_LOST:
		account_lost(s, rec->lost.lost_source, rec->lost.lost_cpu,
			     rec->lost.count);
		break;
	}
	/* SUBBUF carries a cumulative count: turn increases into explicit
	 * LOST events so every sink shows where loss happened. */
	if (rec->hdr.type == RDT_EV_SUBBUF) {
		uint32_t cpu = rec->hdr.cpu;

		if (!grow(&s->subbuf_lost, &s->nsubbuf_lost, (uint64_t)cpu + 1)) {
			uint64_t prev = s->subbuf_lost[cpu];

			if (rec->subbuf.lost_total > prev) {
				rdt_ingest_lost(s, rec->hdr.source, cpu,
						rec->subbuf.lost_total - prev,
						rec->hdr.ts_ns, more);
				made = true;
			}
			s->subbuf_lost[cpu] = rec->subbuf.lost_total;
		}
		/* The module numbers its sub-buffers; relay can still skip
		 * one unread (its overwrite branch), which no counter sees.
		 * A lower seq is a new channel, not a gap. */
		if (!grow(&s->subbuf_next, &s->nsubbuf_next, (uint64_t)cpu + 1)) {
			uint64_t next = s->subbuf_next[cpu];

			if (next && rec->subbuf.seq + 1 > next)
				s->st.subbufs_skipped += rec->subbuf.seq + 1 - next;
			s->subbuf_next[cpu] = rec->subbuf.seq + 2;
		}
	}
	return made;
}
