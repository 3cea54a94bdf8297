// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* One description of every record's fields, shared by text and JSON. */
#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>

#include "internal.h"

#define U(k, val) v->u(c, k, (uint64_t)(val))
#define I(k, val) v->i(c, k, (int64_t)(val))
#define X(k, val) v->x(c, k, (uint64_t)(val))
#define S(k, val) v->s(c, k, val, sizeof(val))
#define SC(k, val) v->s(c, k, val, 64)

void rdt_tcp_addr(const struct rdt_ev_tcp_retransmit *t, const __u8 *a,
		  char *buf, size_t len)
{
	if (!inet_ntop(t->family == AF_INET6 ? AF_INET6 : AF_INET, a, buf,
		       (socklen_t)len))
		snprintf(buf, len, "?");
}

void rdt_fields(const union rdt_record *r, const struct rdt_fieldv *v, void *c)
{
#include "fields.inc"
}
