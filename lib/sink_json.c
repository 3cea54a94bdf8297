// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* JSON Lines: one object per event, a summary object last. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"


static int json_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;
	struct rdt_ob *o = s->priv;
	const char *type = rdt_type_name(h->type);

	if (h->type == RDT_EV_SUBBUF)
		return 0;
	/* {"ts_ns":%llu,"raw_ts_ns":%llu,"src":%u,"host":%u,"source":"%s",
	 * "type":"%s","cpu":%lld,"pid":%u,"tid":%u,"comm": */
	rdt_ob_lit(o, "{\"ts_ns\":");
	rdt_ob_u(o, ev->ts);
	rdt_ob_lit(o, ",\"raw_ts_ns\":");
	rdt_ob_u(o, h->ts_ns);
	rdt_ob_lit(o, ",\"src\":");
	rdt_ob_u(o, ev->src);
	rdt_ob_lit(o, ",\"host\":");
	rdt_ob_u(o, ev->host);
	rdt_ob_lit(o, ",\"source\":\"");
	rdt_ob_str(o, rdt_source_name(h->source));
	rdt_ob_lit(o, "\",\"type\":\"");
	rdt_ob_str(o, type ? type : "(null)");
	rdt_ob_lit(o, "\",\"cpu\":");
	rdt_ob_i(o, h->cpu == UINT32_MAX ? (int64_t)-1 : (int64_t)h->cpu);
	rdt_ob_lit(o, ",\"pid\":");
	rdt_ob_u(o, h->pid);
	rdt_ob_lit(o, ",\"tid\":");
	rdt_ob_u(o, h->tid);
	rdt_ob_lit(o, ",\"comm\":");
	rdt_ob_json_str(o, ev->comm ? ev->comm : "", RDT_COMM_LEN);
	rdt_ob_lit(o, ",\"dev\":");
	rdt_ob_i(o, h->dev == RDT_NO_DEV ? (int64_t)-1 : (int64_t)h->dev);
	rdt_ob_lit(o, ",\"devname\":");
	if (h->type == RDT_EV_PORT_COUNTER)	/* sysfs names it, no index */
		rdt_ob_json_str(o, ev->rec.port_counter.devname, RDT_NAME_LEN);
	else
		rdt_ob_json_str(o, ev->devname ? ev->devname : "", RDT_NAME_LEN);
	if (ev->flags & RDT_EVF_DERIVED)
		rdt_ob_lit(o, ",\"derived\":true");
	/* out of place in the stream: said, not hidden (issue 38) */
	if (ev->flags & RDT_EVF_LATE)
		rdt_ob_lit(o, ",\"late\":true");
	rdt_ob_fields(&ev->rec, o);
	rdt_ob_lit(o, "}\n");
	return rdt_ob_end(o);
}

static int json_close(struct rdt_sink *s, struct rdt_reader *r)
{
	struct rdt_ob *o = s->priv;
	int ret = rdt_ob_flush(o);

	/* The summary by stdio, after the buffer. */
	rdt_ob_free(o);
	free(o);
	s->priv = NULL;
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
			",\"detached\":%" PRIu64 ",\"skipped_files\":%" PRIu64
			",\"lost_cpu\":{",
			st.records, st.lost, st.lost_by[RDT_SRC_KMOD],
			st.lost_by[RDT_SRC_BPF], st.lost_by[RDT_SRC_NCCL_PLUGIN],
			st.unknown, st.late,
			st.subbufs_skipped, st.relay_repeats, st.corrupt_bytes,
			st.resyncs, st.detached, st.skipped_files);
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
	return ret;
}

static int json_flush(struct rdt_sink *s)
{
	return rdt_ob_flush(s->priv);
}

static const struct rdt_sink_ops json_ops = {
	.write = json_write, .close = json_close, .flush = json_flush,
};

int rdt_sink_json_init(struct rdt_sink *s)
{
	struct rdt_ob *o = calloc(1, sizeof(*o));

	if (!o || rdt_ob_init(o, s) < 0) {
		free(o);
		return -ENOMEM;
	}
	s->ops = &json_ops;
	s->priv = o;
	return 0;
}
