// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader's names: (host, tid or pid) -> task name from COMM records,
 * (host, device index) -> device name from DEVICE_* records, and the
 * names of each event as it goes out (rdt_names_of(), cached).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* @n zeroed (in a calloc'd reader): only the generation is set, from 1,
 * so that a zeroed cache entry never matches. */
void rdt_names_init(struct rdt_names *n)
{
	n->gen = 1;
}

/* A walk of the list, not of the buckets: readers of small files are
 * made and freed at a high rate (the fuzzer, tests). */
void rdt_names_free(struct rdt_names *n)
{
	struct name_ent *e = n->all;

	while (e) {
		struct name_ent *next = e->all;

		free(e);
		e = next;
	}
	n->all = NULL;
}

static uint64_t hkey(uint32_t host, uint32_t id)
{
	return (uint64_t)host << 32 | id;
}

static struct name_ent *name_find(struct name_ent **t, struct name_ent **all,
				  uint64_t key)
{
	unsigned int b = (unsigned int)((key * 0x9e3779b97f4a7c15ull) >> 54) %
			 RDT_NAME_BUCKETS;
	struct name_ent *e;

	for (e = t[b]; e; e = e->next)
		if (e->key == key)
			return e;
	if (!all || !(e = calloc(1, sizeof(*e))))
		return NULL;
	e->key = key;
	e->next = t[b];
	t[b] = e;
	e->all = *all;
	*all = e;
	return e;
}

static void name_set(struct rdt_names *n, struct name_ent **t, uint64_t key,
		     const char *name, size_t len)
{
	struct name_ent *e = name_find(t, &n->all, key);

	n->gen++;
	if (!e)
		return;
	if (len > RDT_NAME_LEN)
		len = RDT_NAME_LEN;
	memcpy(e->name, name, len);
	e->name[len] = 0;
	e->name[strnlen(e->name, len)] = 0;
}

static const char *name_get(struct name_ent **t, uint64_t key)
{
	struct name_ent *e = name_find(t, NULL, key);

	return e ? e->name : "";
}

void rdt_names_set_comm(struct rdt_names *n, uint32_t host, uint32_t id,
			const char *name, size_t len)
{
	name_set(n, n->comms, hkey(host, id), name, len);
}

bool rdt_names_has_comm(struct rdt_names *n, uint32_t host, uint32_t id)
{
	return *name_get(n->comms, hkey(host, id));
}

void rdt_names_set_dev(struct rdt_names *n, uint32_t host, uint32_t dev,
		       const char *name, size_t len)
{
	name_set(n, n->devs, hkey(host, dev), name, len);
}

void rdt_names_fill(struct rdt_names *n, uint32_t host, struct rdt_event *ev,
		    struct rdt_name_cache *c)
{
	const struct rdt_hdr *h = &ev->rec.hdr;

	ev->comm = name_get(n->comms, hkey(host, h->tid));
	if (!*ev->comm)
		ev->comm = name_get(n->comms, hkey(host, h->pid));
	ev->devname = h->dev == RDT_NO_DEV ? "" :
		      name_get(n->devs, hkey(host, h->dev));
	*c = (struct rdt_name_cache){ n->gen, host, h->tid, h->pid, h->dev,
				      ev->comm, ev->devname };
}
