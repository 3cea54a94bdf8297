// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* One description of every record's fields, shared by text and JSON;
 * rdt_json_fields writes them as JSON members. */
#include <arpa/inet.h>
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

#define U(k, val) v->u(c, k, (uint64_t)(val))
#define I(k, val) v->i(c, k, (int64_t)(val))
#define X(k, val) v->x(c, k, (uint64_t)(val))
#define S(k, val) v->s(c, k, val, sizeof(val))
#define SC(k, val) v->s(c, k, val, 64)
#define E(k, val) SC(k, val)

void rdt_ip_addr(unsigned int family, const __u8 *a, char *buf, size_t len)
{
	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, buf,
		       (socklen_t)len))
		snprintf(buf, len, "?");
}

/* A GID as IPv6 text, as the kernel's sysfs and rdma-core print them. */
void rdt_gid_str(const __u8 *gid, char *buf, size_t len)
{
	rdt_ip_addr(AF_INET6, gid, buf, len);
}

void rdt_fields(const union rdt_record *r, const struct rdt_fieldv *v, void *c)
{
#include "fields.inc"
}

/* The same members as rdt_fields() with rdt_json_fields writes, straight
 * into a buffer: ,"key":123  ,"key":-1  ,"key":"0x1f"  ,"key":"text" */
#undef U
#undef I
#undef X
#undef S
#undef SC
#undef E
void rdt_ob_fields(const union rdt_record *r, struct rdt_ob *o)
{
#define K(k) rdt_ob_put(o, ",\"" k "\":", sizeof(k) + 3)
#define U(k, val) rdt_ob_ku(o, ",\"" k "\":", sizeof(k) + 3, (uint64_t)(val))
#define I(k, val) rdt_ob_ki(o, ",\"" k "\":", sizeof(k) + 3, (int64_t)(val))
#define X(k, val) rdt_ob_kx(o, ",\"" k "\":\"0x", sizeof(k) + 6, (uint64_t)(val))
#define S(k, val) (K(k), rdt_ob_json_str(o, val, sizeof(val)))
#define SC(k, val) (K(k), rdt_ob_json_str(o, val, 64))
#define E(k, val) rdt_ob_kname(o, ",\"" k "\":", sizeof(k) + 3, val)
#include "fields.inc"
#undef K
}

static void fu(void *c, const char *k, uint64_t v)
{
	fprintf(c, ",\"%s\":%" PRIu64, k, v);
}

static void fi(void *c, const char *k, int64_t v)
{
	fprintf(c, ",\"%s\":%" PRId64, k, v);
}

/* Hex as strings: 64-bit ids would lose bits in JavaScript numbers. */
static void fx(void *c, const char *k, uint64_t v)
{
	fprintf(c, ",\"%s\":\"0x%" PRIx64 "\"", k, v);
}

static void fs(void *c, const char *k, const char *v, size_t max)
{
	fprintf(c, ",\"%s\":", k);
	rdt_json_str(c, v, max);
}

/* Record fields as JSON members, for the JSON Lines and Perfetto sinks. */
const struct rdt_fieldv rdt_json_fields = { fu, fi, fx, fs };
