// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* SQLite output; the schema is documented in lib/SCHEMA.md. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static const char schema[] =
"PRAGMA journal_mode=OFF;\n"
"PRAGMA synchronous=OFF;\n"
/* A bulk load: a cache that keeps the tables' last pages and the index
 * builds off the file (2 MiB was re-reading pages for each CREATE INDEX).
 * No temp_store=MEMORY: with it the index builds' sorter malloc'd every
 * key (~1 k instructions an event); without it the sorter packs keys in
 * its own buffer, in memory up to the cache's size, then in temp files. */
"PRAGMA cache_size=-32768;\n"
"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);\n"
"CREATE TABLE sources(src INTEGER PRIMARY KEY, name TEXT, kind TEXT, host TEXT,"
" kernel TEXT, module_version TEXT, boot_id TEXT, realtime_offset_ns INTEGER,"
" ncpus INTEGER, metadata TEXT, records INTEGER, lost INTEGER, unknown INTEGER,"
" late INTEGER, error TEXT, subbufs_skipped INTEGER, corrupt_bytes INTEGER,"
" resyncs INTEGER, detached INTEGER, skipped_files INTEGER);\n"
"CREATE TABLE devices(ts_ns INTEGER, host INTEGER, dev INTEGER, event TEXT,"
" name TEXT, old_name TEXT, node_guid TEXT, node_type INTEGER, ports INTEGER,"
" driver_id INTEGER);\n"
"CREATE TABLE comms(host INTEGER, pid INTEGER, tid INTEGER, comm TEXT,"
" ts_ns INTEGER);\n"
"CREATE TABLE verbs(id INTEGER PRIMARY KEY, ts_ns INTEGER, host INTEGER,"
" cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT, dev INTEGER, devname TEXT,"
" verb TEXT, qpn INTEGER, cq_id INTEGER, pd_id INTEGER, wr_id INTEGER,"
" opcode TEXT, length INTEGER, num_sge INTEGER, flags INTEGER, lkey INTEGER,"
" rkey INTEGER, ret INTEGER, duration_ns INTEGER);\n"
"CREATE TABLE completions(id INTEGER PRIMARY KEY, ts_ns INTEGER, host INTEGER,"
" cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT, dev INTEGER, devname TEXT,"
" via TEXT, cq_id INTEGER, qpn INTEGER, wr_id INTEGER, status INTEGER,"
" status_name TEXT, opcode TEXT, byte_len INTEGER, src_qp INTEGER,"
" wc_flags INTEGER, is_recv INTEGER, post_ts_ns INTEGER, latency_ns INTEGER,"
" tx_pkts INTEGER, tx_bytes INTEGER, rx_pkts INTEGER, rx_bytes INTEGER);\n"
/* Kept during the load, unlike the others: rows come in time order, so
 * each key goes at the index's end (half the cost of a build after). */
"CREATE INDEX completions_ts ON completions(ts_ns);\n"
"CREATE TABLE qp_states(id INTEGER PRIMARY KEY, ts_ns INTEGER, host INTEGER,"
" cpu INTEGER, pid INTEGER, comm TEXT, dev INTEGER, devname TEXT, qpn INTEGER,"
" old_state TEXT, new_state TEXT, cur_state TEXT, attr_mask INTEGER,"
" dest_qpn INTEGER, sq_psn INTEGER, rq_psn INTEGER, path_mtu INTEGER,"
" timeout INTEGER, retry_cnt INTEGER, rnr_retry INTEGER, ret INTEGER,"
" duration_ns INTEGER, dgid TEXT, sgid TEXT);\n"
"CREATE TABLE nccl_calls(id INTEGER PRIMARY KEY, ts_ns INTEGER, end_ns INTEGER,"
" duration_ns INTEGER, host INTEGER, cpu INTEGER, pid INTEGER, tid INTEGER,"
" comm TEXT, fn TEXT, count INTEGER, datatype INTEGER, op INTEGER, root INTEGER,"
" comm_ptr TEXT, comm_hash TEXT, rank INTEGER, nranks INTEGER, seq INTEGER,"
" stream TEXT, ret INTEGER, bytes INTEGER, algbw_gbps REAL, busbw_gbps REAL);\n"
"CREATE TABLE nccl_comms(ts_ns INTEGER, host INTEGER, pid INTEGER, comm TEXT,"
" fn TEXT, comm_ptr TEXT, comm_hash TEXT, rank INTEGER, nranks INTEGER,"
" ret INTEGER);\n"
"CREATE TABLE tcp_events(ts_ns INTEGER, host INTEGER, cpu INTEGER, pid INTEGER,"
" comm TEXT, family INTEGER, saddr TEXT, sport INTEGER, daddr TEXT,"
" dport INTEGER, state INTEGER);\n"
"CREATE TABLE rxe_packets(ts_ns INTEGER, host INTEGER, dev INTEGER, qpn INTEGER,"
" psn INTEGER, bth_opcode INTEGER, length INTEGER);\n"
"CREATE TABLE rxe_xmits(ts_ns INTEGER, host INTEGER, dev INTEGER, qpn INTEGER,"
" psn INTEGER, bth_opcode INTEGER, length INTEGER, src_qpn INTEGER,"
" family INTEGER, saddr TEXT, daddr TEXT);\n"
"CREATE TABLE hosts(host INTEGER PRIMARY KEY, name TEXT, boot_id TEXT,"
" clock TEXT, ref_host INTEGER, clock_offset_ns INTEGER,"
" clock_error_ns INTEGER, clock_pairs INTEGER);\n"
"CREATE TABLE rxe_retries(ts_ns INTEGER, host INTEGER, dev INTEGER,"
" qpn INTEGER, psn INTEGER, kind TEXT);\n"
"CREATE TABLE coll_marks(ts_ns INTEGER, host INTEGER, pid INTEGER,"
" phase TEXT, op INTEGER, bytes INTEGER, seq INTEGER, rank INTEGER,"
" nranks INTEGER, step INTEGER, steps INTEGER);\n"
"CREATE TABLE lost_events(ts_ns INTEGER, src INTEGER, producer TEXT,"
" cpu INTEGER, count INTEGER);\n"
/* Live: events handed out after a later one (issue 38), one row each
 * beside its row in its own table. */
"CREATE TABLE late_events(ts_ns INTEGER, host INTEGER, src INTEGER,"
" pid INTEGER, tid INTEGER, type TEXT);\n"
"CREATE TABLE port_counters(ts_ns INTEGER, host INTEGER, dev INTEGER,"
" devname TEXT, port INTEGER, dir TEXT, name TEXT, delta INTEGER,"
" value INTEGER);\n"
"CREATE TABLE drops(src INTEGER, source TEXT, cpu INTEGER, lost INTEGER);\n"
/* A type no table above holds (one added to schema/records.py with no
 * code here): a row with its fields as JSON, the JSON sink's keys; a type
 * the schema describes gets a view of its own with a column per field
 * (records_view()).  The columns common() binds, then src, type, fields. */
"CREATE TABLE records(ts_ns INTEGER, host INTEGER, cpu INTEGER, pid INTEGER,"
" tid INTEGER, comm TEXT, dev INTEGER, devname TEXT, src INTEGER, type TEXT,"
" fields TEXT);\n"
/* --stuck's reports (ABI 1.11): a row per line, the episode's end too. */
"CREATE TABLE stuck(ts_ns INTEGER, host INTEGER, episode INTEGER, what TEXT,"
" kind TEXT, since_ns INTEGER, pid INTEGER, dev INTEGER, qpn INTEGER,"
" dest_qpn INTEGER, wr_id INTEGER, outstanding INTEGER, retries INTEGER,"
" rank INTEGER, nranks INTEGER, seq INTEGER, waits_ns INTEGER, text TEXT);\n"
/* NCCL profiler plugin: one row per record; the event's own fields as
 * JSON (the same keys as the JSON sink), the tree in ev_id / parent. */
"CREATE TABLE nccl_plugin(id INTEGER PRIMARY KEY, ts_ns INTEGER, host INTEGER,"
" cpu INTEGER, pid INTEGER, tid INTEGER, comm TEXT, type TEXT, event TEXT,"
" ev_id TEXT, parent TEXT, comm_id TEXT, rank INTEGER, fields TEXT,"
" qpn INTEGER, wr_id INTEGER);\n"
/* Each event as a span: its start record joined to its stop. */
"CREATE VIEW nccl_plugin_spans AS SELECT s.host, s.pid, s.tid, s.event,"
" s.type, s.ev_id, s.parent, s.comm_id, s.rank, s.ts_ns AS start_ns,"
" e.ts_ns AS end_ns, e.ts_ns - s.ts_ns AS duration_ns, s.fields, s.qpn,"
" s.wr_id"
" FROM nccl_plugin s LEFT JOIN nccl_plugin e ON e.type = 'np_stop'"
" AND e.host = s.host AND e.pid = s.pid AND e.ev_id = s.ev_id"
" WHERE s.type NOT IN ('np_stop', 'np_state', 'np_skip', 'np_comm_init',"
" 'np_comm_fini', 'np_coll_old');\n"
/* Every IB work request with its step, proxy op and collective. */
"CREATE VIEW nccl_plugin_wrs AS SELECT w.host, w.pid,"
" json_extract(w.fields, '$.device') AS ib_device,"
" w.qpn, w.wr_id,"
" json_extract(w.fields, '$.opcode') AS opcode,"
" json_extract(w.fields, '$.length') AS length,"
" w.start_ns AS post_ns, w.end_ns AS done_ns, w.duration_ns AS latency_ns,"
" w.ev_id, st.ev_id AS step_id, op.ev_id AS op_id, c.ev_id AS coll_id,"
" json_extract(c.fields, '$.func') AS func,"
" json_extract(c.fields, '$.seq') AS seq"
" FROM nccl_plugin_spans w"
" LEFT JOIN nccl_plugin_spans st ON st.host = w.host AND st.pid = w.pid"
" AND st.ev_id = w.parent"
" LEFT JOIN nccl_plugin_spans op ON op.host = st.host AND op.pid = st.pid"
" AND op.ev_id = st.parent"
" LEFT JOIN nccl_plugin_spans c ON c.host = op.host AND c.pid = op.pid"
" AND c.ev_id = op.parent AND c.type = 'np_coll'"
" WHERE w.type = 'np_net_ib';\n"
/* NCCL's own WRs where --verbs saw them too: the plugin's WR joined to
 * the uprobe's records of the same process, QP and wr_id (NCCL's wr_ids
 * repeat: they index its requests).  NCCL starts the WR's event just
 * before ibv_post_send() (net_ib's ncclIbMultiSend) and stops it after
 * the poll that returned its completion (ncclIbTest): the first post at
 * or after the start, the last completion at or before the stop. */
"CREATE VIEW nccl_plugin_wr_verbs AS SELECT w.*,"
" (SELECT min(v.ts_ns) FROM verbs v WHERE v.verb = 'verbs_post_send'"
" AND v.host = w.host AND v.pid = w.pid AND v.qpn = w.qpn"
" AND v.wr_id = w.wr_id AND v.ts_ns >= w.post_ns) AS verbs_post_ns,"
" (SELECT max(c.ts_ns) FROM completions c WHERE c.via = 'verbs'"
" AND c.host = w.host AND c.pid = w.pid AND c.qpn = w.qpn"
" AND c.wr_id = w.wr_id AND c.ts_ns <= w.done_ns) AS verbs_poll_ns"
" FROM nccl_plugin_wrs w;\n"
/* GPU globaltimer -> CLOCK_MONOTONIC: each KernelCh start and KernelChStop
 * state pairs a GPU stamp with the host time the plugin was told of it,
 * never earlier than the GPU wrote it: the smallest difference is the
 * offset, too large by the quickest report's delay (lib/SCHEMA.md). */
"CREATE VIEW nccl_plugin_gpu_clock AS SELECT host, pid,"
" min(ts_ns - gpu) AS offset_ns, count(*) AS pairs FROM ("
" SELECT host, pid, ts_ns, json_extract(fields, '$.gpu_start') AS gpu"
" FROM nccl_plugin WHERE type = 'np_kernel_ch' UNION ALL"
" SELECT host, pid, ts_ns, json_extract(fields, '$.arg') FROM nccl_plugin"
" WHERE type = 'np_state' AND json_extract(fields, '$.state_id') = 22)"
" WHERE gpu > 0 GROUP BY host, pid;\n"
"CREATE VIEW nccl_plugin_kernels AS SELECT k.host, k.pid, k.parent AS coll_id,"
" k.ev_id, json_extract(k.fields, '$.channel') AS channel,"
" json_extract(k.fields, '$.gpu_start') AS gpu_start, x.gpu_stop,"
" x.gpu_stop - json_extract(k.fields, '$.gpu_start') AS gpu_ns,"
" json_extract(k.fields, '$.gpu_start') + g.offset_ns AS start_ns,"
" x.gpu_stop + g.offset_ns AS end_ns"
" FROM nccl_plugin_spans k"
" LEFT JOIN (SELECT host, pid, ev_id, json_extract(fields, '$.arg') AS gpu_stop"
" FROM nccl_plugin WHERE type = 'np_state'"
" AND json_extract(fields, '$.state_id') = 22) x"
" ON x.host = k.host AND x.pid = k.pid AND x.ev_id = k.ev_id"
" LEFT JOIN nccl_plugin_gpu_clock g ON g.host = k.host AND g.pid = k.pid"
" WHERE k.type = 'np_kernel_ch';\n"
/* Per collective: enqueue (its Coll event) next to its GPU kernel time,
 * its WRs and its slowest proxy step; op .. is_nvls: NCCL 2.23 - 2.25's
 * (profiler v1, v2: np_coll_old), NULL where the version has no such. */
"CREATE VIEW nccl_plugin_colls AS SELECT c.host, c.pid, c.comm_id, c.rank,"
" c.ev_id, json_extract(c.fields, '$.func') AS func,"
" json_extract(c.fields, '$.seq') AS seq,"
" json_extract(c.fields, '$.count') AS count,"
" json_extract(c.fields, '$.datatype') AS datatype,"
" json_extract(c.fields, '$.algo') AS algo,"
" json_extract(c.fields, '$.proto') AS proto,"
" c.start_ns, c.end_ns, c.duration_ns,"
" (SELECT min(k.start_ns) FROM nccl_plugin_kernels k WHERE k.host = c.host"
" AND k.pid = c.pid AND k.coll_id = c.ev_id) AS gpu_start_ns,"
" (SELECT max(k.end_ns) - min(k.start_ns) FROM nccl_plugin_kernels k"
" WHERE k.host = c.host AND k.pid = c.pid AND k.coll_id = c.ev_id)"
" AS gpu_ns,"
" (SELECT count(*) FROM nccl_plugin_wrs w WHERE w.host = c.host"
" AND w.pid = c.pid AND w.coll_id = c.ev_id) AS wrs,"
" (SELECT sum(w.length) FROM nccl_plugin_wrs w WHERE w.host = c.host"
" AND w.pid = c.pid AND w.coll_id = c.ev_id) AS wr_bytes,"
" (SELECT max(st.duration_ns) FROM nccl_plugin_spans st"
" JOIN nccl_plugin_spans op ON op.host = st.host AND op.pid = st.pid"
" AND op.ev_id = st.parent WHERE st.type = 'np_proxy_step'"
" AND op.host = c.host AND op.pid = c.pid AND op.parent = c.ev_id)"
" AS slowest_step_ns,"
" json_extract(o.fields, '$.op') AS op,"
" json_extract(o.fields, '$.traffic_bytes') AS traffic_bytes,"
" json_extract(o.fields, '$.is_collnet') AS is_collnet,"
" json_extract(o.fields, '$.is_nvls') AS is_nvls"
" FROM nccl_plugin_spans c LEFT JOIN nccl_plugin o ON o.type = 'np_coll_old'"
" AND o.host = c.host AND o.pid = c.pid AND o.ev_id = c.ev_id"
" WHERE c.type = 'np_coll';\n";

/* qpn first: host and dev are the same in nearly every row, and with them
 * first each compare of the build's sort went on past them (lib/SCHEMA.md). */
static const char indexes[] =
"CREATE INDEX verbs_qp ON verbs(qpn, host, dev, ts_ns);\n"
"CREATE INDEX verbs_wr ON verbs(wr_id);\n"
"CREATE INDEX completions_qp ON completions(qpn, host, dev, ts_ns);\n"
"CREATE INDEX qp_states_qp ON qp_states(host, dev, qpn, ts_ns);\n"
"CREATE INDEX nccl_calls_ts ON nccl_calls(ts_ns);\n"
"CREATE INDEX nccl_calls_comm ON nccl_calls(comm_hash, seq);\n"
"CREATE INDEX tcp_events_ts ON tcp_events(ts_ns);\n"
"CREATE INDEX rxe_retries_ts ON rxe_retries(ts_ns);\n"
"CREATE INDEX port_counters_ts ON port_counters(ts_ns);\n"
"CREATE INDEX nccl_plugin_ev ON nccl_plugin(host, pid, ev_id, type);\n"
"CREATE INDEX nccl_plugin_parent ON nccl_plugin(host, pid, parent);\n";

enum {
	ST_VERB, ST_WC, ST_QPS, ST_NCCL, ST_COMM_NCCL, ST_TCP, ST_RCV, ST_XMIT,
	ST_RETRY,
	ST_DEV, ST_COMMS, ST_LOST, ST_MARK, ST_NP, ST_CTR, ST_HOSTS, ST_SOURCES,
	ST_DROPS, ST_LATE, ST_STUCK, ST_REC, ST_MAX
};

static const char *const sql[ST_MAX] = {
	[ST_VERB] = "INSERT INTO verbs(ts_ns,host,cpu,pid,tid,comm,dev,devname,verb,"
		"qpn,cq_id,pd_id,wr_id,opcode,length,num_sge,flags,lkey,rkey,ret,"
		"duration_ns) "
		"VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_WC] = "INSERT INTO completions(ts_ns,host,cpu,pid,tid,comm,dev,devname,"
		"via,cq_id,qpn,wr_id,status,status_name,opcode,byte_len,src_qp,"
		"wc_flags,is_recv,post_ts_ns,latency_ns,tx_pkts,tx_bytes,rx_pkts,"
		"rx_bytes) "
		"VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_QPS] = "INSERT INTO qp_states(ts_ns,host,cpu,pid,comm,dev,devname,qpn,"
		"old_state,new_state,cur_state,attr_mask,dest_qpn,sq_psn,rq_psn,"
		"path_mtu,timeout,retry_cnt,rnr_retry,ret,duration_ns,dgid,sgid) "
		"VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_NCCL] = "INSERT INTO nccl_calls(ts_ns,end_ns,duration_ns,host,cpu,pid,"
		"tid,comm,fn,count,datatype,op,root,comm_ptr,comm_hash,rank,nranks,"
		"seq,stream,ret,bytes,algbw_gbps,busbw_gbps) "
		"VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_COMM_NCCL] = "INSERT INTO nccl_comms(ts_ns,host,pid,comm,fn,comm_ptr,"
		"comm_hash,rank,nranks,ret) VALUES(?,?,?,?,?,?,?,?,?,?)",
	[ST_TCP] = "INSERT INTO tcp_events(ts_ns,host,cpu,pid,comm,family,saddr,"
		"sport,daddr,dport,state) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_RCV] = "INSERT INTO rxe_packets VALUES(?,?,?,?,?,?,?)",
	[ST_XMIT] = "INSERT INTO rxe_xmits VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_RETRY] = "INSERT INTO rxe_retries VALUES(?,?,?,?,?,?)",
	[ST_DEV] = "INSERT INTO devices VALUES(?,?,?,?,?,?,?,?,?,?)",
	[ST_COMMS] = "INSERT INTO comms VALUES(?,?,?,?,?)",
	[ST_LOST] = "INSERT INTO lost_events VALUES(?,?,?,?,?)",
	[ST_MARK] = "INSERT INTO coll_marks VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_CTR] = "INSERT INTO port_counters VALUES(?,?,?,?,?,?,?,?,?)",
	[ST_HOSTS] = "INSERT INTO hosts VALUES(?,?,?,?,?,?,?,?)",
	[ST_SOURCES] = "INSERT INTO sources VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_DROPS] = "INSERT INTO drops VALUES(?,?,?,?)",
	[ST_LATE] = "INSERT INTO late_events VALUES(?,?,?,?,?,?)",
	[ST_STUCK] = "INSERT INTO stuck VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_REC] = "INSERT INTO records VALUES(?,?,?,?,?,?,?,?,?,?,?)",
	[ST_NP] = "INSERT INTO nccl_plugin(ts_ns,host,cpu,pid,tid,comm,type,event,"
		"ev_id,parent,comm_id,rank,fields,qpn,wr_id) "
		"VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
};

/* Rows wait in a batch per table and go in with one multi-row INSERT of
 * up to BATCH rows: a statement's per-execution work (open the table and
 * its indexes' cursors, seek the table's end, halt and reset) was most of
 * a row's cost, one statement per row.  The values wait in cells, not in
 * the statement's bindings, so a short last batch can go in row by row;
 * strings are copied, as the event and the reader's name tables change
 * before the batch is written. */
#define BATCH 64

enum { C_UNSET, C_NULL, C_INT, C_DBL, C_TXT, C_STR };

struct cell {
	union {
		int64_t i;
		double d;
		size_t off;	/* C_TXT: in the table's txt */
		const char *p;	/* C_STR: a constant string */
	} v;
	int n;			/* C_TXT, C_STR: bytes */
	int t;
};

struct table {
	sqlite3_stmt *one, *many;	/* one row; batch rows */
	int ncols, nrows, batch;
	struct cell *cells;		/* batch * ncols */
	struct cell *bound;		/* what many holds, but C_TXT */
	char *txt;			/* the batch's strings */
	size_t txt_len, txt_cap;
	bool oom;
};

struct sq {
	sqlite3 *db;
	struct table t[ST_MAX];
	uint64_t viewed[(RDT_EV_MAX + 1) / 64];	/* records_view() made */
	struct rdt_wrmatch *m;
	uint64_t rows;
	bool live;	/* a live reader: commit now and then */
};

/* Appends positional values to the table's next row, in column order. */
struct binder {
	struct table *t;
	struct cell *c;
	int i;
};

static void bi(struct binder *b, int64_t v)
{
	b->c[b->i].t = C_INT;
	b->c[b->i++].v.i = v;
}

/* @max bounds fixed-size wire strings; noinline keeps GCC from checking
 * the bound against short literals it can see through. */
static __attribute__((noinline)) void bt(struct binder *b, const char *v, int max)
{
	struct table *t = b->t;
	size_t n = strnlen(v, (size_t)max);
	struct cell *c = &b->c[b->i++];

	if (t->txt_len + n > t->txt_cap) {
		size_t cap = t->txt_cap ? t->txt_cap : 4096;
		char *p;

		while (cap < t->txt_len + n)
			cap *= 2;
		p = realloc(t->txt, cap);
		if (!p) {
			t->oom = true;
			c->t = C_NULL;
			return;
		}
		t->txt = p;
		t->txt_cap = cap;
	}
	if (n)	/* an empty first text: no buffer yet, and memcpy(NULL) is UB */
		memcpy(t->txt + t->txt_len, v, n);
	c->t = C_TXT;
	c->v.off = t->txt_len;
	c->n = (int)n;
	t->txt_len += n;
}

/* A string that lives as long as the program (a name table's, a literal):
 * not copied, and not bound again where the batch before had it. */
static __attribute__((noinline)) void bs(struct binder *b, const char *v, int max)
{
	struct cell *c = &b->c[b->i++];

	c->t = C_STR;
	c->v.p = v;
	c->n = (int)strnlen(v, (size_t)max);
}

static void bnull(struct binder *b)
{
	b->c[b->i++].t = C_NULL;
}

static void bhex(struct binder *b, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
	bt(b, buf, sizeof(buf));
}

static void bdouble(struct binder *b, double v)
{
	b->c[b->i].t = C_DBL;
	b->c[b->i++].v.d = v;
}

static struct binder start(struct sq *q, int which)
{
	struct table *t = &q->t[which];

	return (struct binder){ t, t->cells + t->nrows * t->ncols, 0 };
}

static bool same(const struct cell *a, const struct cell *b)
{
	if (a->t != b->t)
		return false;
	switch (a->t) {
	case C_NULL:
		return true;
	case C_INT:
	case C_DBL:	/* the same bits */
		return a->v.i == b->v.i;
	case C_STR:
		return a->v.p == b->v.p && a->n == b->n;
	default:	/* C_TXT: its buffer is rewritten */
		return false;
	}
}

/* @prev: what @s holds from its last run (a binding outlives a reset):
 * a number or NULL that is already there is not bound again (host, pid,
 * the NULL columns of a verb: about half of a batch's values). */
static void bind_cells(sqlite3_stmt *s, const struct table *t,
		       const struct cell *c, int n, struct cell *prev)
{
	for (int j = 0; j < n; j++) {
		if (prev) {
			if (same(&c[j], &prev[j]))
				continue;
			prev[j] = c[j];
		}
		switch (c[j].t) {
		case C_INT:
			sqlite3_bind_int64(s, j + 1, c[j].v.i);
			break;
		case C_DBL:
			sqlite3_bind_double(s, j + 1, c[j].v.d);
			break;
		case C_TXT:
			sqlite3_bind_text(s, j + 1, t->txt + c[j].v.off, c[j].n,
					  SQLITE_STATIC);
			break;
		case C_STR:
			sqlite3_bind_text(s, j + 1, c[j].v.p, c[j].n,
					  SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(s, j + 1);
		}
	}
}

/* The one-row INSERT repeated: "... VALUES(?,..),(?,..),...". */
static char *many_sql(const char *one, int rows)
{
	const char *v = strstr(one, "VALUES");
	size_t head, tuple, len;
	char *s, *p;

	if (!v)
		return NULL;
	head = (size_t)(v - one) + 6;
	tuple = strlen(v + 6);
	len = head + (tuple + 1) * (size_t)rows;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	memcpy(s, one, head);
	p = s + head;
	for (int r = 0; r < rows; r++) {
		if (r)
			*p++ = ',';
		memcpy(p, v + 6, tuple);
		p += tuple;
	}
	*p = 0;
	return s;
}

static void flush(struct sq *q, struct table *t)
{
	if (!t->nrows)
		return;
	if (t->nrows == t->batch && !t->many && t->batch > 1) {
		char *s = many_sql(sqlite3_sql(t->one), t->batch);

		/* No multi-row statement: the rows go in one by one. */
		if (!s || sqlite3_prepare_v2(q->db, s, -1, &t->many,
					     NULL) != SQLITE_OK)
			t->batch = 1;
		free(s);
	}
	if (t->nrows == t->batch && t->many) {
		bind_cells(t->many, t, t->cells, t->nrows * t->ncols, t->bound);
		sqlite3_step(t->many);
		sqlite3_reset(t->many);
	} else {
		for (int r = 0; r < t->nrows; r++) {
			bind_cells(t->one, t, t->cells + r * t->ncols, t->ncols,
				   NULL);
			sqlite3_step(t->one);
			sqlite3_reset(t->one);
		}
	}
	t->nrows = 0;
	t->txt_len = 0;
}

static void flush_all(struct sq *q)
{
	for (int i = 0; i < ST_MAX; i++)
		flush(q, &q->t[i]);
}

/* The row is complete: columns not given are NULL. */
static void done(struct sq *q, struct binder *b)
{
	struct table *t = b->t;

	while (b->i < t->ncols)
		bnull(b);
	if (++t->nrows >= t->batch)
		flush(q, t);
}

/* Columns ts_ns, host, cpu, pid, tid, comm, dev, devname shared by most. */
static void common(struct binder *b, const struct rdt_event *ev, bool tid,
		   bool dev)
{
	const struct rdt_hdr *h = &ev->rec.hdr;

	bi(b, (int64_t)ev->ts);
	bi(b, ev->host);
	bi(b, h->cpu == UINT32_MAX ? -1 : (int64_t)h->cpu);
	bi(b, h->pid);
	if (tid)
		bi(b, h->tid);
	bt(b, ev->comm ? ev->comm : "", RDT_COMM_LEN);
	if (dev) {
		if (h->dev == RDT_NO_DEV)
			bnull(b);
		else
			bi(b, h->dev);
		bt(b, ev->devname ? ev->devname : "", RDT_NAME_LEN);
	}
}

/* verbs: (qpn, cq, pd, wr_id, opcode, length, num_sge, flags, lkey, rkey,
 * ret, duration_ns): dur 0 is NULL, a verb whose time is not known (a data
 * path record, or a record of a module older than ABI 1.9). */
struct vcols {
	int64_t qpn, cq, pd, wr_id, len, nsge, flags, lkey, rkey, ret;
	const char *op;
	bool has_wr;
};

static void bdur(struct binder *b, uint64_t dur)
{
	if (dur)
		bi(b, (int64_t)dur);
	else
		bnull(b);
}

static void verb(struct sq *q, const struct rdt_event *ev, struct vcols v)
{
	struct binder b = start(q, ST_VERB);

	common(&b, ev, true, true);
	bs(&b, rdt_type_name(ev->rec.hdr.type), 64);
#define OPT(x) do { if ((x) >= 0) bi(&b, x); else bnull(&b); } while (0)
	OPT(v.qpn);
	OPT(v.cq);
	OPT(v.pd);
	if (v.has_wr)
		bi(&b, v.wr_id);
	else
		bnull(&b);
	if (v.op)
		bs(&b, v.op, 64);
	else
		bnull(&b);
	OPT(v.len);
	OPT(v.nsge);
	OPT(v.flags);
	OPT(v.lkey);
	OPT(v.rkey);
#undef OPT
	bi(&b, v.ret);
	bdur(&b, rdt_record_dur(&ev->rec));
	done(q, &b);
}

/* NOV sets every optional column to NULL; each verb then overrides the
 * ones it has, which is exactly what override-init warns about. */
#pragma GCC diagnostic ignored "-Woverride-init"
#ifdef __clang__
#pragma clang diagnostic ignored "-Winitializer-overrides"
#endif
#define NOV .qpn = -1, .cq = -1, .pd = -1, .len = -1, .nsge = -1, .flags = -1, \
	    .lkey = -1, .rkey = -1

static double bus_factor(uint32_t fn, int n)
{
	if (n <= 0)
		return 1;
	if (fn == RDT_NCCL_ALL_REDUCE)
		return 2.0 * (n - 1) / n;
	if (fn == RDT_NCCL_ALL_GATHER || fn == RDT_NCCL_REDUCE_SCATTER ||
	    fn == RDT_NCCL_ALL_TO_ALL)
		return (double)(n - 1) / n;
	return 1;
}

static void nccl(struct sq *q, const struct rdt_event *ev)
{
	const struct rdt_ev_nccl_call *c = &ev->rec.nccl_call;
	struct binder b = start(q, ST_NCCL);
	uint64_t bytes = c->count * (uint64_t)rdt_nccl_type_size(c->datatype);
	double alg;

	if (c->fn == RDT_NCCL_ALL_GATHER || c->fn == RDT_NCCL_REDUCE_SCATTER ||
	    c->fn == RDT_NCCL_ALL_TO_ALL)
		bytes *= (uint64_t)(c->nranks > 0 ? c->nranks : 1);
	alg = c->duration_ns ? (double)bytes / (double)c->duration_ns : 0;
	bi(&b, (int64_t)ev->ts);
	bi(&b, (int64_t)(ev->ts + c->duration_ns));
	bi(&b, (int64_t)c->duration_ns);
	bi(&b, ev->host);
	bi(&b, ev->rec.hdr.cpu);
	bi(&b, ev->rec.hdr.pid);
	bi(&b, ev->rec.hdr.tid);
	bt(&b, ev->comm ? ev->comm : "", RDT_COMM_LEN);
	bs(&b, rdt_nccl_fn_name(c->fn), 64);
	bi(&b, (int64_t)c->count);
	bi(&b, c->datatype);
	bi(&b, c->op);
	bi(&b, c->root);
	bhex(&b, c->comm);
	bhex(&b, c->comm_hash);
	bi(&b, c->rank);
	bi(&b, c->nranks);
	bi(&b, (int64_t)c->seq);
	bhex(&b, c->stream);
	bi(&b, c->ret);
	bi(&b, (int64_t)bytes);
	bdouble(&b, alg);
	bdouble(&b, alg * bus_factor(c->fn, c->nranks));
	done(q, &b);
}

static void completion(struct sq *q, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	bool rxe = r->hdr.type == RDT_EV_RXE_CQE;
	uint32_t status = rxe ? r->rxe_cqe.status : r->wc.status;
	uint32_t opcode = rxe ? r->rxe_cqe.opcode : r->wc.opcode;
	struct binder b = start(q, ST_WC);
	uint64_t post_ts = 0;

	common(&b, ev, true, true);
	bs(&b, rxe ? "rxe" : r->hdr.type == RDT_EV_VERBS_WC ? "verbs" : "poll_cq", 16);
	bi(&b, rxe ? r->rxe_cqe.cq_id : r->wc.cq_id);
	bi(&b, rxe ? r->rxe_cqe.qpn : r->wc.qpn);
	bi(&b, (int64_t)(rxe ? r->rxe_cqe.wr_id : r->wc.wr_id));
	bi(&b, status);
	bs(&b, rdt_wc_status_name(status), 64);
	bs(&b, rdt_wc_opcode_name(opcode), 64);
	bi(&b, rxe ? r->rxe_cqe.byte_len : r->wc.byte_len);
	if (rxe) {
		bnull(&b);
		bnull(&b);
	} else {
		bi(&b, r->wc.src_qp);
		bi(&b, r->wc.wc_flags);
	}
	bi(&b, !!(opcode & 128));
	if (rdt_wrmatch_event(q->m, ev, &post_ts) && ev->ts >= post_ts) {
		bi(&b, (int64_t)post_ts);
		bi(&b, (int64_t)(ev->ts - post_ts));
	} else {
		bnull(&b);
		bnull(&b);
	}
	/* rxe's counts of the QP's packets since its last CQE (ABI 1.15) */
	if (rxe && r->rxe_cqe.counted) {
		bi(&b, r->rxe_cqe.tx_pkts);
		bi(&b, (int64_t)r->rxe_cqe.tx_bytes);
		bi(&b, r->rxe_cqe.rx_pkts);
		bi(&b, (int64_t)r->rxe_cqe.rx_bytes);
	} else {
		for (int i = 0; i < 4; i++)
			bnull(&b);
	}
	done(q, &b);
}

/* The record's fields as one JSON object, by the JSON sink's writer, in
 * a malloc'd string of *len bytes ("{}" for a record with no fields);
 * NULL without memory. */
static char *fields_json(const union rdt_record *r, size_t *len)
{
	char *json = NULL;
	FILE *f = open_memstream(&json, len);

	if (!f)
		return NULL;
	rdt_fields(r, &rdt_json_fields, f);
	fputc('}', f);
	if (fclose(f)) {
		free(json);
		return NULL;
	}
	if (json[0] == ',') {
		json[0] = '{';
		return json;
	}
	free(json);			/* "}": no fields */
	*len = 2;
	return strdup("{}");
}

static void nccl_plugin(struct sq *q, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	struct binder b = start(q, ST_NP);
	size_t len = 0;
	char *json = fields_json(r, &len);

	common(&b, ev, true, false);
	bs(&b, rdt_type_name(r->hdr.type), 64);
	bs(&b, rdt_np_type_name(r->np_stop.ids.ntype), 64);
	bhex(&b, r->np_stop.ids.id);
	bhex(&b, r->np_stop.ids.parent);
	bhex(&b, r->np_stop.ids.comm_id);
	bi(&b, r->np_stop.ids.rank);
	if (json)
		bt(&b, json, (int)len);
	else
		bnull(&b);
	if (r->hdr.type == RDT_EV_NP_NET_IB) {
		bi(&b, r->np_net_ib.qpn);
		bi(&b, (int64_t)r->np_net_ib.wr_id);
	}
	done(q, &b);
	free(json);
}

/*
 * The view of a type the schema describes, over its rows of records: a
 * column per field, named by its key, as the JSON has it.  Made at the
 * type's first row, so a database has the views of the types it holds.
 * A name some table already has keeps its rows in records alone.
 */
static void records_view(struct sq *q, unsigned int type)
{
	const struct rdt_schema_field *f;
	const char *name = rdt_type_name(type);
	char *ddl = NULL;
	size_t n, len = 0;
	FILE *m;

	if (q->viewed[type / 64] & (1ULL << (type % 64)))
		return;
	q->viewed[type / 64] |= 1ULL << (type % 64);
	f = rdt_schema_fields(type, &n);
	if (!f || !name || !(m = open_memstream(&ddl, &len)))
		return;
	fprintf(m, "CREATE VIEW IF NOT EXISTS \"%s\" AS SELECT ts_ns, host, src,"
		" cpu, pid, tid, comm, dev, devname", name);
	for (size_t i = 0; i < n; i++)
		fprintf(m, ", json_extract(fields, '$.%s') AS \"%s\"",
			f[i].key, f[i].key);
	fprintf(m, " FROM records WHERE type = '%s'", name);
	if (fclose(m) == 0)
		sqlite3_exec(q->db, ddl, NULL, NULL, NULL);
	free(ddl);
}

static void record_row(struct sq *q, const struct rdt_event *ev)
{
	const union rdt_record *r = &ev->rec;
	struct binder b = start(q, ST_REC);
	const char *name = rdt_type_name(r->hdr.type);
	size_t len = 0;
	char *json = fields_json(r, &len), num[16];

	common(&b, ev, true, true);
	bi(&b, ev->src);
	if (!name) {	/* rdt_sink_write() of an event of no known type */
		snprintf(num, sizeof(num), "%u", r->hdr.type);
		name = num;
	}
	bt(&b, name, 64);
	if (json)
		bt(&b, json, (int)len);
	else
		bnull(&b);
	done(q, &b);
	free(json);
	records_view(q, r->hdr.type);
}

static int sq_write(struct rdt_sink *s, const struct rdt_event *ev)
{
	struct sq *q = s->priv;
	const union rdt_record *r = &ev->rec;
	struct binder b;
	char buf[64];

	if ((ev->flags & RDT_EVF_LATE) && r->hdr.type != RDT_EV_SUBBUF) {
		b = start(q, ST_LATE);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, ev->src);
		bi(&b, r->hdr.pid);
		bi(&b, r->hdr.tid);
		bs(&b, rdt_type_name(r->hdr.type), 64);
		done(q, &b);
	}
	switch (r->hdr.type) {
	case RDT_EV_SUBBUF:
		return 0;
	case RDT_EV_COMM:
		b = start(q, ST_COMMS);
		bi(&b, ev->host);
		bi(&b, r->hdr.pid);
		bi(&b, r->hdr.tid);
		bt(&b, r->comm.comm, RDT_COMM_LEN);
		bi(&b, (int64_t)ev->ts);
		done(q, &b);
		break;
	case RDT_EV_LOST:
		b = start(q, ST_LOST);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->src);
		bs(&b, rdt_source_name(r->lost.lost_source), 16);
		if (r->lost.lost_cpu == UINT32_MAX)
			bnull(&b);
		else
			bi(&b, r->lost.lost_cpu);
		bi(&b, (int64_t)r->lost.count);
		done(q, &b);
		break;
	case RDT_EV_DEVICE_ADD:
	case RDT_EV_DEVICE_REMOVE:
	case RDT_EV_DEVICE_RENAME:
	case RDT_EV_DEVICE_STATE:
		b = start(q, ST_DEV);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.dev);
		bs(&b, rdt_type_name(r->hdr.type) + 7, 16);
		bt(&b, r->device.name, RDT_NAME_LEN);
		bt(&b, r->device.old_name, RDT_NAME_LEN);
		bhex(&b, be64toh(r->device.node_guid));
		bi(&b, r->device.node_type);
		bi(&b, r->device.phys_port_cnt);
		bi(&b, r->device.driver_id);
		done(q, &b);
		break;
	case RDT_EV_PD_ALLOC:
	case RDT_EV_PD_DEALLOC:
		verb(q, ev, (struct vcols){ NOV, .pd = r->pd.pd_id, .ret = r->pd.ret });
		break;
	case RDT_EV_CQ_CREATE:
	case RDT_EV_CQ_DESTROY:
		verb(q, ev, (struct vcols){ NOV, .cq = r->cq.cq_id, .len = r->cq.cqe,
					    .ret = r->cq.ret });
		break;
	case RDT_EV_QP_CREATE:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->qp_create.qpn,
					    .cq = r->qp_create.send_cq_id,
					    .pd = r->qp_create.pd_id,
					    .ret = r->qp_create.ret });
		break;
	case RDT_EV_QP_DESTROY:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->qp_destroy.qpn,
					    .ret = r->qp_destroy.ret });
		break;
	case RDT_EV_MR_REG:
	case RDT_EV_MR_DEREG:
		verb(q, ev, (struct vcols){ NOV, .pd = r->mr.pd_id,
					    .len = (int64_t)r->mr.length,
					    .flags = r->mr.access, .lkey = r->mr.lkey,
					    .rkey = r->mr.rkey, .ret = r->mr.ret });
		break;
	case RDT_EV_POST_SEND:
	case RDT_EV_VERBS_POST_SEND:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->post_send.qpn,
			.wr_id = (int64_t)r->post_send.wr_id, .has_wr = true,
			.op = rdt_wr_opcode_name(r->post_send.opcode),
			.len = (int64_t)r->post_send.total_len,
			.nsge = r->post_send.num_sge,
			.flags = r->post_send.send_flags,
			.rkey = r->post_send.rkey, .ret = r->post_send.ret });
		rdt_wrmatch_event(q->m, ev, &(uint64_t){ 0 });
		break;
	case RDT_EV_POST_SEND_DB:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->post_send_db.qpn,
					    .ret = r->post_send_db.ret });
		break;
	case RDT_EV_POST_RECV:
	case RDT_EV_VERBS_POST_RECV:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->post_recv.qpn,
			.wr_id = (int64_t)r->post_recv.wr_id, .has_wr = true,
			.len = (int64_t)r->post_recv.total_len,
			.nsge = r->post_recv.num_sge, .ret = r->post_recv.ret });
		rdt_wrmatch_event(q->m, ev, &(uint64_t){ 0 });
		break;
	case RDT_EV_POST_FAIL:	/* see SCHEMA.md: post_fail's columns */
	case RDT_EV_VERBS_POST_FAIL:
		verb(q, ev, (struct vcols){ NOV, .qpn = r->post_fail.qpn,
			.op = rdt_type_name(r->post_fail.post_type),
			.len = r->post_fail.nr_wr,
			.flags = r->post_fail.bad_index == RDT_BAD_INDEX_UNKNOWN ?
				 -1 : r->post_fail.bad_index,
			.ret = r->post_fail.ret });
		rdt_wrmatch_event(q->m, ev, &(uint64_t){ 0 });
		break;
	case RDT_EV_POLL_CQ:
		verb(q, ev, (struct vcols){ NOV, .cq = r->poll_cq.cq_id,
					    .len = r->poll_cq.requested,
					    .ret = r->poll_cq.ret });
		break;
	case RDT_EV_REQ_NOTIFY_CQ:
	case RDT_EV_VERBS_REQ_NOTIFY:
		verb(q, ev, (struct vcols){ NOV, .cq = r->req_notify.cq_id,
					    .flags = r->req_notify.flags,
					    .ret = r->req_notify.ret });
		break;
	case RDT_EV_POLL_CQ_WC:
	case RDT_EV_RXE_CQE:
	case RDT_EV_VERBS_WC:
		completion(q, ev);
		break;
	case RDT_EV_QP_MODIFY: {
		const struct rdt_ev_qp_modify *m = &r->qp_modify;

		b = start(q, ST_QPS);
		common(&b, ev, false, true);
		bi(&b, m->qpn);
		bs(&b, rdt_qp_state_name(m->old_state), 8);
		bs(&b, rdt_qp_state_name(m->new_state), 8);
		bs(&b, rdt_qp_state_name(m->cur_state), 8);
		bi(&b, m->attr_mask);
		bi(&b, m->dest_qpn);
		bi(&b, m->sq_psn);
		bi(&b, m->rq_psn);
		bi(&b, m->path_mtu);
		bi(&b, m->timeout);
		bi(&b, m->retry_cnt);
		bi(&b, m->rnr_retry);
		bi(&b, m->ret);
		bdur(&b, rdt_record_dur(r));
		for (int g = 0; g < 2; g++) {
			char gid[64];

			if (!(m->gids & (g ? RDT_QP_SGID : RDT_QP_DGID))) {
				bnull(&b);
				continue;
			}
			rdt_gid_str(g ? m->sgid : m->dgid, gid, sizeof(gid));
			bt(&b, gid, sizeof(gid));
		}
		done(q, &b);
		break;
	}
	case RDT_EV_NCCL_CALL:
		nccl(q, ev);
		break;
	case RDT_EV_NCCL_COMM:
		b = start(q, ST_COMM_NCCL);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.pid);
		bt(&b, ev->comm ? ev->comm : "", RDT_COMM_LEN);
		bs(&b, rdt_nccl_fn_name(r->nccl_comm.fn), 64);
		bhex(&b, r->nccl_comm.comm);
		bhex(&b, r->nccl_comm.comm_hash);
		bi(&b, r->nccl_comm.rank);
		bi(&b, r->nccl_comm.nranks);
		bi(&b, r->nccl_comm.ret);
		done(q, &b);
		break;
	case RDT_EV_TCP_RETRANSMIT:
		b = start(q, ST_TCP);
		common(&b, ev, false, false);
		bi(&b, r->tcp.family);
		if (!inet_ntop(r->tcp.family == AF_INET6 ? AF_INET6 : AF_INET,
			       r->tcp.saddr, buf, sizeof(buf)))
			buf[0] = 0;
		bt(&b, buf, sizeof(buf));
		bi(&b, r->tcp.sport);
		if (!inet_ntop(r->tcp.family == AF_INET6 ? AF_INET6 : AF_INET,
			       r->tcp.daddr, buf, sizeof(buf)))
			buf[0] = 0;
		bt(&b, buf, sizeof(buf));
		bi(&b, r->tcp.dport);
		bi(&b, r->tcp.state);
		done(q, &b);
		break;
	case RDT_EV_RXE_RCV:
		b = start(q, ST_RCV);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.dev);
		bi(&b, r->rxe_rcv.qpn);
		bi(&b, r->rxe_rcv.psn);
		bi(&b, r->rxe_rcv.opcode);
		bi(&b, r->rxe_rcv.length);
		done(q, &b);
		break;
	case RDT_EV_RXE_XMIT:
		b = start(q, ST_XMIT);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.dev);
		bi(&b, r->rxe_xmit.qpn);
		bi(&b, r->rxe_xmit.psn);
		bi(&b, r->rxe_xmit.opcode);
		bi(&b, r->rxe_xmit.length);
		bi(&b, r->rxe_xmit.src_qpn);
		bi(&b, r->rxe_xmit.family);
		rdt_ip_addr(r->rxe_xmit.family, r->rxe_xmit.saddr, buf, sizeof(buf));
		bt(&b, buf, sizeof(buf));
		rdt_ip_addr(r->rxe_xmit.family, r->rxe_xmit.daddr, buf, sizeof(buf));
		bt(&b, buf, sizeof(buf));
		done(q, &b);
		break;
	case RDT_EV_RXE_RETRY:
		b = start(q, ST_RETRY);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.dev);
		bi(&b, r->rxe_retry.qpn);
		bi(&b, r->rxe_retry.psn);
		bs(&b, r->rxe_retry.kind == RDT_RXE_RETRANSMIT ? "retransmit" :
		       r->rxe_retry.kind == RDT_RXE_RNR ? "rnr" :
		       r->rxe_retry.kind == RDT_RXE_NAK_SEQ ? "nak_seq" : "?", 16);
		done(q, &b);
		break;
	case RDT_EV_COLL_MARK:
		b = start(q, ST_MARK);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.pid);
		bs(&b, r->coll_mark.phase ? "end" : "begin", 8);
		bi(&b, r->coll_mark.op);
		bi(&b, (int64_t)r->coll_mark.bytes);
		bi(&b, (int64_t)r->coll_mark.seq);
		bi(&b, r->coll_mark.rank);
		bi(&b, r->coll_mark.nranks);
		bnull(&b);
		bnull(&b);
		done(q, &b);
		break;
	case RDT_EV_COLL_STEP:	/* a row of its own: phase 'step', no bytes */
		b = start(q, ST_MARK);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, r->hdr.pid);
		bs(&b, "step", 8);
		bi(&b, r->coll_step.op);
		bnull(&b);
		bi(&b, (int64_t)r->coll_step.seq);
		bi(&b, r->coll_step.rank);
		bi(&b, r->coll_step.nranks);
		bi(&b, r->coll_step.step);
		bi(&b, r->coll_step.steps);
		done(q, &b);
		break;
	case RDT_NP_TYPE_FIRST ... RDT_NP_TYPE_LAST:
		nccl_plugin(q, ev);
		break;
	case RDT_EV_STUCK:
	case RDT_EV_UNSTUCK: {
		const struct rdt_ev_stuck *k = &r->stuck;
		bool qp = k->kind == RDT_STUCK_QP, coll = k->kind == RDT_STUCK_COLL;

		b = start(q, ST_STUCK);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		bi(&b, k->episode);
		bs(&b, r->hdr.type == RDT_EV_STUCK ? "stuck" : "unstuck", 8);
		bs(&b, qp ? "qp" : coll ? "collective" : "cause", 16);
		bi(&b, (int64_t)k->since_ns);
		if (qp || coll)
			bi(&b, r->hdr.pid);
		else
			bnull(&b);
		if (qp && r->hdr.dev != RDT_NO_DEV)
			bi(&b, r->hdr.dev);
		else
			bnull(&b);
		if (qp) {
			bi(&b, k->qpn);
			bi(&b, k->dest_qpn);
			bi(&b, (int64_t)k->wr_id);
			bi(&b, k->outstanding);
			bi(&b, k->retries);
		} else {
			for (int i = 0; i < 5; i++)
				bnull(&b);
		}
		if (coll) {
			bi(&b, k->rank);
			bi(&b, k->nranks);
			bi(&b, (int64_t)k->seq);
		} else {
			for (int i = 0; i < 3; i++)
				bnull(&b);
		}
		bi(&b, (int64_t)k->waits_ns);
		bt(&b, k->text, sizeof(k->text));
		done(q, &b);
		break;
	}
	case RDT_EV_PORT_COUNTER:
		b = start(q, ST_CTR);
		bi(&b, (int64_t)ev->ts);
		bi(&b, ev->host);
		if (r->hdr.dev == RDT_NO_DEV)	/* sysfs has no index */
			bnull(&b);
		else
			bi(&b, r->hdr.dev);
		bt(&b, r->port_counter.devname, RDT_NAME_LEN);
		bi(&b, r->port_counter.port);
		bs(&b, r->port_counter.kind == RDT_CTR_HW_COUNTERS ?
		       "hw_counters" : "counters", 16);
		bt(&b, r->port_counter.name, RDT_CTR_NAME_LEN);
		bi(&b, r->port_counter.delta);
		bi(&b, (int64_t)r->port_counter.value);
		done(q, &b);
		break;
	default:
		record_row(q, ev);
	}
	/* Live runs: commit now and then so a crash keeps most rows.  A
	 * conversion is one transaction, and the indexes come after it. */
	if (q->live && ++q->rows % 100000 == 0) {
		flush_all(q);
		sqlite3_exec(q->db, "COMMIT; BEGIN", NULL, NULL, NULL);
	}
	return 0;
}

static const char *kind_name(enum rdt_source_kind k)
{
	switch (k) {
	case RDT_SOURCE_FILE: return "file";
	case RDT_SOURCE_RELAY: return "relay";
	case RDT_SOURCE_BPF: return "bpf";
	case RDT_SOURCE_NCCL_PLUGIN: return "nccl-plugin";
	default: return "custom";
	}
}

/* One row per host (distinct boot): its name and how its clock was put on
 * the first host's. */
static void hosts(struct sq *q, struct rdt_reader *r)
{
	unsigned int n = rdt_reader_nhosts(r);

	for (unsigned int h = 0; h < (n ? n : 1); h++) {
		const struct rdt_file_hdr *fh = NULL;
		struct binder b;
		int64_t off, err;
		uint64_t pairs;
		uint32_t ref;

		for (unsigned int i = 0; i < rdt_reader_nsources(r) && !fh; i++)
			if (rdt_reader_src(r, i)->host == h)
				fh = rdt_reader_file_hdr(r, i);
		if (!fh)
			break;
		b = start(q, ST_HOSTS);
		bi(&b, h);
		if (n > 1)
			bt(&b, rdt_reader_host_name(r, h), 4096);
		else
			bt(&b, fh->host, sizeof(fh->host));
		bt(&b, fh->boot_id, sizeof(fh->boot_id));
		if (rdt_clock_host_info(rdt_reader_clock(r), h, &ref, &off,
					&err, &pairs)) {
			bs(&b, "messages", 16);
			bi(&b, ref);
			bi(&b, off);
			bi(&b, err);
			bi(&b, (int64_t)pairs);
		} else {
			bs(&b, n <= 1 ? "monotonic" : h ? "header" : "reference", 16);
			bnull(&b);
			bnull(&b);
			bnull(&b);
			bnull(&b);
		}
		done(q, &b);
	}
}

static bool oom(const struct sq *q)
{
	for (int i = 0; i < ST_MAX; i++)
		if (q->t[i].oom)
			return true;
	return false;
}

static void free_tables(struct sq *q)
{
	for (int i = 0; i < ST_MAX; i++) {
		sqlite3_finalize(q->t[i].one);
		sqlite3_finalize(q->t[i].many);
		free(q->t[i].cells);
		free(q->t[i].bound);
		free(q->t[i].txt);
	}
}

static int sq_close(struct rdt_sink *s, struct rdt_reader *r)
{
	struct sq *q = s->priv;
	sqlite3_stmt *st = NULL;
	int ret = 0;

	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		const struct rdt_file_hdr *h = rdt_reader_file_hdr(r, i);
		struct rdt_source_stats ss;
		struct binder b = start(q, ST_SOURCES);

		rdt_reader_source_stats(r, i, &ss);
		bi(&b, i);
		bt(&b, ss.name, 4096);
		bs(&b, kind_name(ss.kind), 16);
		bt(&b, h->host, sizeof(h->host));
		bt(&b, h->kernel, sizeof(h->kernel));
		bt(&b, h->module_version, sizeof(h->module_version));
		bt(&b, h->boot_id, sizeof(h->boot_id));
		bi(&b, h->realtime_offset_ns);
		bi(&b, h->ncpus);
		bt(&b, rdt_reader_meta(r, i), 1 << 20);
		bi(&b, (int64_t)ss.records);
		bi(&b, (int64_t)ss.lost);
		bi(&b, (int64_t)ss.unknown);
		bi(&b, (int64_t)ss.late);
		bt(&b, ss.error, 4096);
		bi(&b, (int64_t)ss.subbufs_skipped);
		bi(&b, (int64_t)ss.corrupt_bytes);
		bi(&b, (int64_t)ss.resyncs);
		bi(&b, (int64_t)ss.detached);
		bi(&b, (int64_t)ss.skipped_files);
		done(q, &b);
	}
	for (unsigned int i = 0; i < rdt_reader_nsources(r); i++) {
		struct rdt_source_stats ss;

		rdt_reader_source_stats(r, i, &ss);
		/* One row per CPU that lost events plus a NULL-cpu total, so
		 * "SELECT sum(lost) FROM drops WHERE cpu IS NULL" never misses. */
		for (int64_t c = -1; c < (int64_t)ss.ncpus; c++) {
			struct binder b;

			if (c >= 0 && !ss.lost_cpu[c])
				continue;
			b = start(q, ST_DROPS);
			bi(&b, i);
			bt(&b, ss.name, 4096);
			if (c < 0)
				bnull(&b);
			else
				bi(&b, c);
			bi(&b, (int64_t)(c < 0 ? ss.lost : ss.lost_cpu[c]));
			done(q, &b);
		}
	}
	hosts(q, r);
	flush_all(q);
	{
		char v[64];

		snprintf(v, sizeof(v), "%s", rdt_reader_time_base(r) ==
			 RDT_TIME_REALTIME ? "realtime" : "monotonic");
		sqlite3_prepare_v2(q->db, "INSERT INTO meta VALUES('time_base',?),"
				   "('generator','rdmatrace " RDT_LIB_VERSION "')",
				   -1, &st, NULL);
		if (st) {
			sqlite3_bind_text(st, 1, v, -1, SQLITE_TRANSIENT);
			sqlite3_step(st);
			sqlite3_finalize(st);
		}
	}
	if (oom(q)) {	/* a string left out: no database rather than a wrong one */
		rdt_sink_set_error(s, "%s: sqlite: out of memory", s->path);
		ret = -ENOMEM;
	} else if (sqlite3_exec(q->db, indexes, NULL, NULL, NULL) != SQLITE_OK ||
		   sqlite3_exec(q->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		rdt_sink_set_error(s, "%s: sqlite: %s", s->path, sqlite3_errmsg(q->db));
		ret = -EIO;
	}
	free_tables(q);
	sqlite3_close(q->db);
	rdt_wrmatch_free(q->m);
	free(q);
	return ret;
}

static const struct rdt_sink_ops sq_ops = { .write = sq_write, .close = sq_close };

int rdt_sink_sqlite_init(struct rdt_sink *s)
{
	struct sq *q = calloc(1, sizeof(*q));
	int vars;

	if (!q || !(q->m = rdt_wrmatch_new())) {
		free(q);
		return -ENOMEM;
	}
	s->priv = q;
	s->ops = &sq_ops;
	q->live = s->r && rdt_reader_live(s->r);
	if (!strcmp(s->path, "-")) {
		rdt_sink_set_error(s, "sqlite output needs a file name (-w FILE)");
		goto fail;
	}
	/* A stale database would mix runs: start from an empty file. */
	unlink(s->path);
	/* One thread uses the handle: no mutex per bind and step. */
	if (sqlite3_open_v2(s->path, &q->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		rdt_sink_set_error(s, "%s: sqlite: %s", s->path,
				   q->db ? sqlite3_errmsg(q->db) : "cannot open");
		goto fail;
	}
	if (sqlite3_exec(q->db, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		rdt_sink_set_error(s, "%s: sqlite: %s", s->path, sqlite3_errmsg(q->db));
		goto fail;
	}
	vars = sqlite3_limit(q->db, SQLITE_LIMIT_VARIABLE_NUMBER, -1);
	for (int i = 0; i < ST_MAX; i++) {
		struct table *t = &q->t[i];

		if (sqlite3_prepare_v2(q->db, sql[i], -1, &t->one, NULL) != SQLITE_OK) {
			rdt_sink_set_error(s, "sqlite: %s", sqlite3_errmsg(q->db));
			goto fail;
		}
		t->ncols = sqlite3_bind_parameter_count(t->one);
		t->batch = vars / t->ncols < BATCH ? vars / t->ncols : BATCH;
		if (t->batch < 1)
			t->batch = 1;
		t->cells = calloc((size_t)(t->batch * t->ncols), sizeof(*t->cells));
		t->bound = calloc((size_t)(t->batch * t->ncols), sizeof(*t->bound));
		if (!t->cells || !t->bound) {
			rdt_sink_set_error(s, "sqlite: out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	free_tables(q);
	if (q->db)
		sqlite3_close(q->db);
	rdt_wrmatch_free(q->m);
	free(q);
	s->priv = NULL;
	return -EINVAL;
}
