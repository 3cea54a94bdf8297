// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The pipeline a caller hangs off a reader: its sinks, each event to each
 * in the order added.  The end of the data flow: the reader knows nothing
 * of it and a sink nothing of the others; a live reader's waits reach the
 * sinks through the pipeline's one idle hook (their buffers go to their
 * files, so that a file stays close to what was traced).  The analyses
 * (statistics, --stuck, --metrics) take the same events from the caller.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

struct rdt_pipeline {
	struct rdt_reader *r;
	struct rdt_sink **sinks;
	unsigned int nsinks;
	struct rdt_sink *only;		/* the one sink, where there is one */
	const struct rdt_sink *failed;	/* the last write that failed */
	bool idle;			/* its hook is on the reader */
};

static void pipeline_idle(void *arg)
{
	struct rdt_pipeline *p = arg;

	for (unsigned int i = 0; i < p->nsinks; i++)
		rdt_sink_flush(p->sinks[i]);
}

RDT_EXPORT struct rdt_pipeline *rdt_pipeline_new(struct rdt_reader *r)
{
	struct rdt_pipeline *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->r = r;
	if (r && rdt_reader_live(r)) {
		if (rdt_reader_add_idle(r, pipeline_idle, p) < 0) {
			free(p);
			return NULL;
		}
		p->idle = true;
	}
	return p;
}

RDT_EXPORT int rdt_pipeline_add_sink(struct rdt_pipeline *p, struct rdt_sink *s)
{
	struct rdt_sink **v;

	if (!s)
		return -EINVAL;
	v = realloc(p->sinks, (p->nsinks + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->sinks = v;
	v[p->nsinks++] = s;
	p->only = p->nsinks == 1 ? s : NULL;
	return 0;
}

/* Each sink in turn, up to the first that fails: @ev whole, or with its
 * record at @ref (rdt_pipeline_write_ref()), which a sink that needs the
 * whole event refuses. */
static __attribute__((noinline)) int write_all(struct rdt_pipeline *p,
					       const struct rdt_event *ev,
					       const struct rdt_rec_ref *ref)
{
	for (unsigned int i = 0; i < p->nsinks; i++) {
		struct rdt_sink *s = p->sinks[i];
		int ret;

		if (!ref) {
			ret = rdt_sink_write_one(s, ev);
		} else if (s->ops->write_ref) {
			ret = rdt_sink_write_one_ref(s, ev, ref);
		} else {
			rdt_sink_set_error(s, "%s: this format needs whole events, not record references",
					   s->path);
			ret = -EINVAL;
		}
		if (__builtin_expect(ret < 0, 0)) {
			p->failed = s;
			return ret;
		}
	}
	return 0;
}

/*
 * The usual pipeline costs nothing per event: one sink (-o, or a format)
 * is a jump to its write, none (-q) a return.  A frame of four saved
 * registers around a loop that ran once was ~20 instructions an event
 * (callgrind), 4 % of a whole binary-to-binary merge.
 */
RDT_EXPORT int rdt_pipeline_write(struct rdt_pipeline *p,
				  const struct rdt_event *ev)
{
	if (p->only)
		return rdt_sink_write_one(p->only, ev);	/* rdt_pipeline_error(): it */
	return p->nsinks ? write_all(p, ev, NULL) : 0;
}

RDT_EXPORT bool rdt_pipeline_takes_refs(const struct rdt_pipeline *p)
{
	for (unsigned int i = 0; i < p->nsinks; i++)
		if (!p->sinks[i]->ops->write_ref)
			return false;
	return true;
}

/* As rdt_pipeline_write(); a sink that needs ev->rec fails the call
 * (the caller asks rdt_pipeline_takes_refs() first). */
RDT_EXPORT int rdt_pipeline_write_ref(struct rdt_pipeline *p,
				      const struct rdt_event *ev,
				      const struct rdt_rec_ref *ref)
{
	if (p->only && p->only->ops->write_ref)
		return rdt_sink_write_one_ref(p->only, ev, ref);
	return p->nsinks ? write_all(p, ev, ref) : 0;
}

RDT_EXPORT int rdt_pipeline_write_sinks(struct rdt_pipeline *p,
					const struct rdt_event *ev)
{
	int ret = 0;

	/* Every sink gets it, even after one failed: the others' files
	 * lose nothing by that one. */
	for (unsigned int i = 0; i < p->nsinks; i++) {
		int r = rdt_sink_write_one(p->sinks[i], ev);

		if (r < 0 && !ret) {
			p->failed = p->sinks[i];
			ret = r;
		}
	}
	return ret;
}

/* The sink that failed; with a single sink (which keeps no record of
 * its failure here) that one. */
RDT_EXPORT const char *rdt_pipeline_error(const struct rdt_pipeline *p)
{
	const struct rdt_sink *s = p->failed ? p->failed : p->only;

	return s ? rdt_sink_error(s) : "";
}

RDT_EXPORT void rdt_pipeline_free(struct rdt_pipeline *p)
{
	if (!p)
		return;
	if (p->idle)
		rdt_reader_del_idle(p->r, p);
	free(p->sinks);
	free(p);
}
