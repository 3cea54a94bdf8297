// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fields of the layouts schema/records.py describes, as data: for a
 * sink that shows a type it has no code of its own for (SQLite's view of
 * a type in its records table).  The layouts' structs are checked here,
 * at compile time, against the offsets and sizes schema/gen.py computed.
 */
#include <stddef.h>

#include "internal.h"

#include "schema_fields.inc"

/* struct rdt_event embeds union rdt_record, whose size gen.py holds:
 * with it, the event's is librdmatrace0's ABI too. */
_Static_assert(sizeof(struct rdt_event) == 232,
	       "struct rdt_event: librdmatrace0's ABI (a new SONAME if it grows)");

const struct rdt_schema_field *rdt_schema_fields(unsigned int type, size_t *n)
{
	if (type > RDT_EV_MAX || !schema_of[type].f) {
		*n = 0;
		return NULL;
	}
	*n = schema_of[type].n;
	return schema_of[type].f;
}
