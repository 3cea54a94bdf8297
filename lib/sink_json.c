// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* JSON Lines: one object per event, a summary object last. */
#include <errno.h>
#include <inttypes.h>

#include "internal.h"


static int json_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;

	if (h->type == RDT_EV_SUBBUF)
		return 0;
	fprintf(s->f, "{\"ts_ns\":%" PRIu64 ",\"raw_ts_ns\":%" PRIu64
		",\"src\":%u,\"host\":%u,\"source\":\"%s\",\"type\":\"%s\""
		",\"cpu\":%" PRId64 ",\"pid\":%u,\"tid\":%u,\"comm\":",
		ev->ts, (uint64_t)h->ts_ns, ev->src, ev->host,
		rdt_source_name(h->source), rdt_type_name(h->type),
		h->cpu == UINT32_MAX ? (int64_t)-1 : (int64_t)h->cpu, h->pid, h->tid);
	rdt_json_str(s->f, ev->comm ? ev->comm : "", RDT_COMM_LEN);
	fprintf(s->f, ",\"dev\":%" PRId64 ",\"devname\":",
		h->dev == RDT_NO_DEV ? (int64_t)-1 : (int64_t)h->dev);
	rdt_json_str(s->f, ev->devname ? ev->devname : "", RDT_NAME_LEN);
	if (ev->flags & RDT_EVF_DERIVED)
		fprintf(s->f, ",\"derived\":true");
	rdt_fields(&ev->rec, &rdt_json_fields, s->f);
	fputs("}\n", s->f);
	return ferror(s->f) ? -EIO : 0;
}

static int json_close(struct rdt_sink *s, struct rdt_reader *r)
{
	fprintf(s->f, "{\"type\":\"summary\",\"time_base\":\"%s\",\"sources\":[",
		rdt_reader_time_base(r) == RDT_TIME_REALTIME ? "realtime" : "monotonic");
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		const struct rdt_file_hdr *h = rdt_reader_file_hdr(r, i);
		struct rdt_source_stats st;

		rdt_reader_source_stats(r, i, &st);
		fprintf(s->f, "%s{\"src\":%u,\"name\":", i ? "," : "", i);
		rdt_json_str(s->f, st.name, 4096);
		fprintf(s->f, ",\"host\":");
		rdt_json_str(s->f, h->host, sizeof(h->host));
		fprintf(s->f, ",\"kernel\":");
		rdt_json_str(s->f, h->kernel, sizeof(h->kernel));
		fprintf(s->f, ",\"module_version\":");
		rdt_json_str(s->f, h->module_version, sizeof(h->module_version));
		fprintf(s->f, ",\"records\":%" PRIu64 ",\"lost\":%" PRIu64
			",\"lost_kmod\":%" PRIu64 ",\"lost_bpf\":%" PRIu64
			",\"lost_nccl_plugin\":%" PRIu64
			",\"unknown\":%" PRIu64 ",\"late\":%" PRIu64
			",\"subbufs_skipped\":%" PRIu64 ",\"relay_repeats\":%" PRIu64
			",\"corrupt_bytes\":%" PRIu64 ",\"resyncs\":%" PRIu64
			",\"lost_cpu\":{",
			st.records, st.lost, st.lost_by[RDT_SRC_KMOD],
			st.lost_by[RDT_SRC_BPF], st.lost_by[RDT_SRC_NCCL_PLUGIN],
			st.unknown, st.late,
			st.subbufs_skipped, st.relay_repeats, st.corrupt_bytes,
			st.resyncs);
		for (uint32_t c = 0, first = 1; c < st.ncpus; c++)
			if (st.lost_cpu[c]) {
				fprintf(s->f, "%s\"%u\":%" PRIu64, first ? "" : ",",
					c, st.lost_cpu[c]);
				first = 0;
			}
		fprintf(s->f, "},\"error\":");
		rdt_json_str(s->f, st.error, 4096);
		fputc('}', s->f);
	}
	fprintf(s->f, "],\"lost\":%" PRIu64 ",\"unknown\":%" PRIu64 "}\n",
		rdt_reader_lost(r), rdt_reader_unknown(r));
	return 0;
}

static const struct rdt_sink_ops json_ops = { json_write, json_close };

int rdt_sink_json_init(struct rdt_sink *s)
{
	s->ops = &json_ops;
	return 0;
}
