#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/lib/metrics.test's checks: what Prometheus scraped from
rdmatrace-dump --metrics, through PromQL on its HTTP API, against what the
trace itself holds (rdmatrace-dump -i TRACE -F json: counted here, not by
the code under test), and the HTTP side (bad requests, slow clients).

  metrics-check.py ports N                 N free TCP ports on 127.0.0.1
  metrics-check.py wait PROM JOB...        each job scraped up 3 times
  metrics-check.py file|nccl|live PROM JOB TRACE.json
  metrics-check.py churn PROM JOB TRACE.json CAP
  metrics-check.py dashboard PROM DASHBOARD.json
  metrics-check.py http PORT               404 / 405 / 400 / HEAD
  metrics-check.py upmin PROM JOB T0 T1     every scrape of JOB in [T0, T1] up
  metrics-check.py why PROM JOB            its scrapes and targets, for a failure
  metrics-check.py slow PORT SECONDS       clients that never read, read
                                           1 byte/s, or never send
Exit 0, or 1 with "FAIL: ..." naming what differed."""
import collections
import json
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def query(prom, expr, at=None):
    q = {"query": expr}
    if at is not None:
        q["time"] = "%.3f" % at
    url = "http://%s/api/v1/query?%s" % (prom, urllib.parse.urlencode(q))
    with urllib.request.urlopen(url, timeout=10) as r:
        d = json.load(r)
    if d.get("status") != "success":
        fail("query %s: %s" % (expr, d))
    return d["data"]["result"]


def by(prom, expr, labels, at=None):
    """{(label values...): float} of an instant vector (now, or at time
    @at).  Empty: asked again for 5 s, as a scrape that timed out (1 s
    interval, a loaded machine) leaves its target's series stale until the
    next one."""
    for _ in range(10):
        out = {}
        for s in query(prom, expr, at):
            out[tuple(s["metric"].get(l, "") for l in labels)] = float(s["value"][1])
        if out:
            break
        time.sleep(0.5)
    return out


def records(path):
    with open(path) as f:
        for line in f:
            d = json.loads(line)
            if d.get("type") != "summary":
                yield d
            else:
                records.summary = d


def same(what, got, want):
    want = {k: float(v) for k, v in want.items()}
    if got != want:
        keys = sorted(set(got) | set(want))
        diff = ["%s: metrics %s, trace %s" % (k, got.get(k), want.get(k))
                for k in keys if got.get(k) != want.get(k)]
        fail("%s differ: %s" % (what, "; ".join(diff[:10])))
    print("ok: %s: %d series as the trace counts them (%s)" %
          (what, len(want), ", ".join("%s=%g" % (k, v) for k, v in sorted(want.items())[:4])))


COLL_FNS = {"ncclAllReduce", "ncclBroadcast", "ncclBcast", "ncclReduce", "ncclAllGather",
            "ncclReduceScatter", "ncclAllToAll", "ncclSend", "ncclRecv"}
TYPE_SIZE = {0: 1, 1: 1, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2}


def losses_zero(prom, job, recs):
    lost = records.summary["lost"]
    got = by(prom, 'sum(rdmatrace_source_lost_total{job="%s"})' % job, [])
    if got != {(): float(lost)} or lost != 0:
        fail("losses: metrics %s, trace summary %s (want 0)" % (got, lost))
    print("ok: losses 0 in the metrics and in the trace")


def check_verbs(prom, job, recs):
    wrs, nbytes, wcs, errs, retries = (collections.Counter() for _ in range(5))
    pkts, pbytes = collections.Counter(), collections.Counter()
    for r in recs:
        t = r["type"]
        if t == "rxe_cqe" and "tx_pkts" in r:
            for d in ("tx", "rx"):
                pkts[(str(r["qpn"]), d)] += r[d + "_pkts"]
                pbytes[(str(r["qpn"]), d)] += r[d + "_bytes"]
        if t == "post_send":
            wrs[(str(r["qpn"]),)] += 1
            nbytes[(str(r["qpn"]),)] += r["len"]
        elif t == "poll_cq_wc":
            wcs[(str(r["qpn"]),)] += 1
            if r["status"] != "SUCCESS":
                errs[(str(r["qpn"]), r["status"])] += 1
        elif t == "rxe_retry":
            retries[(str(r["qpn"]), r["kind"])] += 1
    if not errs or not retries or not pkts:
        fail("the trace has no error completion, no retry or no rxe packet count to count")
    sel = '{job="%s",source="verbs"}' % job
    same("WRs per QP", by(prom, "sum by (qpn) (rdmatrace_qp_work_requests_total%s)" % sel, ["qpn"]), wrs)
    same("WR bytes per QP", by(prom, "sum by (qpn) (rdmatrace_qp_bytes_total%s)" % sel, ["qpn"]), nbytes)
    same("completions per QP", by(prom, "sum by (qpn) (rdmatrace_qp_completions_total%s)" % sel, ["qpn"]), wcs)
    same("WR latencies per QP (every completion matched its post)",
         by(prom, "sum by (qpn) (rdmatrace_qp_wr_latency_seconds_count%s)" % sel, ["qpn"]), wcs)
    same("completions with error per QP and status",
         by(prom, "sum by (qpn, status) (rdmatrace_qp_completion_errors_total%s)" % sel,
            ["qpn", "status"]), errs)
    same("retries per QP and kind",
         by(prom, "sum by (qpn, kind) (rdmatrace_qp_retries_total%s)" % sel, ["qpn", "kind"]),
         retries)
    same("rxe packets per QP and direction (its CQEs' counts)",
         by(prom, "sum by (qpn, dir) (rdmatrace_qp_rxe_packets_total%s)" % sel, ["qpn", "dir"]),
         pkts)
    same("rxe bytes per QP and direction",
         by(prom, "sum by (qpn, dir) (rdmatrace_qp_rxe_bytes_total%s)" % sel, ["qpn", "dir"]),
         pbytes)


def check_colls(prom, job, recs):
    n, nbytes = collections.Counter(), collections.Counter()
    begun = {}
    for r in recs:
        t = r["type"]
        if t == "nccl_call" and r["fn"] in COLL_FNS:
            k = (r["fn"][4:], "nccl_uprobe", str(r["rank"]))
            n[k] += 1
            b = r["count"] * TYPE_SIZE[r["datatype"]]
            if r["fn"] in ("ncclAllGather", "ncclReduceScatter", "ncclAllToAll"):
                b *= r["nranks"]
            nbytes[k] += b
        elif t == "coll_mark":
            key = (r["pid"], r["rank"])
            if r["phase"] == "begin":
                begun[key] = r["seq"]
            elif begun.pop(key, None) == r["seq"]:
                k = ("AllReduce" if r["op"] == 1 else "op%d" % r["op"], "usdt", str(r["rank"]))
                n[k] += 1
                nbytes[k] += r["bytes"]
    if not n:
        fail("the trace has no collective to count")
    sel = '{job="%s",source=~"nccl_uprobe|usdt"}' % job
    same("collectives per func, source and rank",
         by(prom, "sum by (func, source, rank) (rdmatrace_collectives_total%s)" % sel,
            ["func", "source", "rank"]), n)
    same("collective bytes per func, source and rank",
         by(prom, "sum by (func, source, rank) (rdmatrace_collective_bytes_total%s)" % sel,
            ["func", "source", "rank"]), nbytes)


def check_ctrs(prom, job, recs):
    last = {}
    for r in recs:
        if r["type"] == "port_counter":
            last[(r["devname"], str(r["port"]), r["name"])] = r["value"]
    if not last:
        fail("the trace has no port counter")
    same("port counters (last value)",
         by(prom, 'rdmatrace_port_counter_total{job="%s"}' % job, ["dev", "port", "counter"]),
         last)


def check_plugin(prom, job, recs, want_wrs):
    n, nbytes, wrs = collections.Counter(), collections.Counter(), collections.Counter()
    size = {"ncclInt8": 1, "ncclUint8": 1, "ncclInt32": 4, "ncclUint32": 4,
            "ncclInt64": 8, "ncclUint64": 8, "ncclFloat16": 2, "ncclFloat32": 4,
            "ncclFloat64": 8, "ncclBfloat16": 2}
    stopped = set()
    colls = {}
    for r in recs:
        t = r["type"]
        if t == "np_coll":
            colls[(r["pid"], r["id"])] = r
        elif t == "np_stop" and (r["pid"], r["id"]) in colls and (r["pid"], r["id"]) not in stopped:
            c = colls[(r["pid"], r["id"])]
            stopped.add((r["pid"], r["id"]))
            k = (c["func"], "%016x" % int(c["comm_id"], 16), str(c["rank"]))
            n[k] += 1
            nbytes[k] += c["count"] * size.get(c["datatype"], 0)
        elif t == "np_net_ib":
            wrs[(str(r["qpn"]), "nccl%d" % r["device"])] += 1
    if not n:
        fail("the trace has no plugin collective")
    sel = '{job="%s",source="nccl_plugin"}' % job
    same("plugin collectives per func, comm_hash and rank",
         by(prom, "sum by (func, comm_hash, rank) (rdmatrace_collectives_total%s)" % sel,
            ["func", "comm_hash", "rank"]), n)
    same("plugin collective bytes per func, comm_hash and rank",
         by(prom, "sum by (func, comm_hash, rank) (rdmatrace_collective_bytes_total%s)" % sel,
            ["func", "comm_hash", "rank"]), nbytes)
    if want_wrs:
        if not wrs:
            fail("the trace has no np_net_ib WR")
        same("NCCL's WRs per QP (np_net_ib)",
             by(prom, "sum by (qpn, dev) (rdmatrace_qp_work_requests_total%s)" % sel,
                ["qpn", "dev"]), wrs)
    return sum(n.values())


def check_gpu_prompt(prom, job, recs, end):
    """As Prometheus saw it 3 s after the driver's end (@end, s since the
    epoch): every collective whose kernel channels are done had its GPU
    time already, not RDT_NP_LINGER_NS (10 s) after its last child."""
    colls, kch, gstop, done = set(), {}, set(), set()
    for r in recs:
        k = (r.get("pid"), r.get("id"))
        t = r["type"]
        if t == "np_coll":
            colls.add(k)
        elif t == "np_kernel_ch":
            kch[k] = (r["pid"], r["parent"])
        elif t == "np_state" and r.get("state_id") == 22 and k in kch and r.get("arg"):
            gstop.add(k)
        elif t == "np_stop" and k in gstop:
            done.add(kch[k])
    want = len(done & colls)
    if not want:
        fail("the live trace has no collective with a finished kernel channel")
    got = by(prom, 'sum(rdmatrace_collective_duration_seconds_count{job="%s",source="nccl_plugin"})' % job,
             [], end + 3)
    if got != {(): float(want)}:
        fail("GPU times 3 s after the driver's end: %s, want %d (the collectives "
             "whose kernel channels are done)" % (got, want))
    print("ok: all %d collectives with finished kernel channels have their GPU time, "
          "3 s after the driver's end" % want)


def check_ctr_tree(prom, job, recs, root):
    """Every counter file of the (fake) sysfs tree is a series with the
    file's value, the ones that never moved too; the trace has each one's
    first value as a record with delta 0."""
    want = {}
    base = os.path.join(root, "class", "infiniband")
    for dev in sorted(os.listdir(base)):
        for port in sorted(os.listdir(os.path.join(base, dev, "ports"))):
            for d in ("counters", "hw_counters"):
                p = os.path.join(base, dev, "ports", port, d)
                for name in sorted(os.listdir(p)) if os.path.isdir(p) else []:
                    with open(os.path.join(p, name)) as f:
                        want[(dev, port, name)] = float(f.read().strip())
    if len(want) < 3:
        fail("the fake sysfs tree has %d counters" % len(want))
    same("every port counter, moved or not",
         by(prom, 'rdmatrace_port_counter_total{job="%s"}' % job, ["dev", "port", "counter"]),
         want)
    first = {(r["devname"], str(r["port"]), r["name"]) for r in recs
             if r["type"] == "port_counter" and r["delta"] == 0}
    if set(want) - first:
        fail("no first-value record (delta 0) for %s" % sorted(set(want) - first))
    print("ok: all %d port counters exported from their first sample, "
          "each first value in the trace" % len(want))


def wait(prom, jobs):
    end = time.time() + 90
    while time.time() < end:
        try:
            ok = all(by(prom, 'sum(count_over_time(up{job="%s"}[5m]))' % j, []).get((), 0) >= 3 and
                     by(prom, 'up{job="%s"}' % j, []).get((), 0) == 1 for j in jobs)
        except (urllib.error.URLError, ConnectionError, OSError):
            ok = False
        if ok:
            print("ok: prometheus scraped %s, up" % " ".join(jobs))
            return
        time.sleep(0.5)
    fail("prometheus did not scrape %s 3 times, up (targets: %s)" % (jobs, targets(prom)))


def targets(prom):
    try:
        with urllib.request.urlopen("http://%s/api/v1/targets" % prom, timeout=5) as r:
            return [(t["labels"].get("job"), t["health"], t.get("lastError"))
                    for t in json.load(r)["data"]["activeTargets"]]
    except OSError as e:
        return str(e)


def dashboard(prom, path):
    d = json.load(open(path))
    exprs = [t["expr"] for p in d["panels"] for t in p.get("targets", [])]
    var = d["templating"]["list"][1]["query"]["query"]
    exprs.append(var.replace("label_values(", "group by (host) (").replace(", host)", ")"))
    if len(exprs) < 10:
        fail("only %d expressions in %s" % (len(exprs), path))
    for e in exprs:
        q = e.replace("$host", ".*").replace("$__rate_interval", "30s")
        for _ in range(10):	# as by()
            res = query(prom, q)
            if res:
                break
            time.sleep(0.5)
        if not res:
            fail("dashboard expression returned no data: %s" % q)
    print("ok: each of the dashboard's %d expressions returns data" % len(exprs))


def http(port):
    def status(method, path, body=None):
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path),
                                     data=body, method=method)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.headers
        except urllib.error.HTTPError as e:
            return e.code, e.headers

    for method, path, body, want in (("GET", "/nope", None, 404),
                                     ("GET", "/metrics/x", None, 404),
                                     ("POST", "/metrics", b"x=1", 405),
                                     ("PUT", "/metrics", b"x", 405),
                                     ("DELETE", "/metrics", None, 405),
                                     ("HEAD", "/metrics", None, 200),
                                     ("GET", "/metrics", None, 200)):
        code, hdr = status(method, path, body)
        if code != want:
            fail("%s %s: HTTP %d, want %d" % (method, path, code, want))
        if want == 405 and "GET" not in (hdr.get("Allow") or ""):
            fail("%s %s: 405 without Allow: GET" % (method, path))
        if want == 200 and method == "GET" and "text/plain" not in hdr.get("Content-Type", ""):
            fail("GET /metrics: Content-Type %s" % hdr.get("Content-Type"))
    # Request lines libmicrohttpd cannot parse at all it closes without a
    # status line (0.9.75); what it can parse and refuse gets a 4xx/5xx.
    for raw, must_answer in ((b"GET /metrics HTTP/1.1\r\n\r\n", True),   # no Host
                             (b"GET /metrics HTTP/1.1\r\nHost: x\r\nBad line\r\n\r\n", True),
                             (b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n", True),
                             (b"BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n", True),
                             (b"GARBAGE\r\n\r\n", False), (b"GET\r\n\r\n", False),
                             (b"\x00\x01\x02 / HTTP/1.1\r\n\r\n", False)):
        s = socket.create_connection(("127.0.0.1", port), timeout=15)
        s.sendall(raw)
        got = b""
        try:
            while b"\r\n" not in got:
                b = s.recv(4096)
                if not b:
                    break
                got += b
        except socket.timeout:
            fail("%r: neither answered nor closed in 15 s" % raw)
        s.close()
        line = got.split(b"\r\n")[0]
        if line:
            if not line.startswith(b"HTTP/1.") or line.split()[1][:1] not in (b"4", b"5"):
                fail("%r: answered %r, want a 4xx or 5xx" % (raw, line))
        elif must_answer:
            fail("%r: closed without an answer, want a 4xx or 5xx" % raw)
        print("ok: %r -> %s" % (raw, line.decode(errors="replace") or "closed, no answer"))
    if status("GET", "/metrics")[0] != 200:
        fail("GET /metrics after the bad requests")
    print("ok: wrong path 404, POST/PUT/DELETE 405 with Allow, bad requests 4xx/5xx or closed, HEAD and GET 200")


def slow(port, seconds):
    """A client that asks and never reads, one that reads a byte a second,
    one that connects and says nothing (a dead scraper)."""
    socks = []
    never = socket.socket()
    never.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    never.connect(("127.0.0.1", port))
    never.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    socks.append(never)
    trickle = socket.socket()
    trickle.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    trickle.connect(("127.0.0.1", port))
    trickle.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    socks.append(trickle)
    mute = socket.create_connection(("127.0.0.1", port))
    socks.append(mute)
    half = socket.create_connection(("127.0.0.1", port))
    half.sendall(b"GET /metr")
    socks.append(half)
    got = 0
    end = time.time() + seconds
    while time.time() < end:
        try:
            trickle.settimeout(1)
            got += len(trickle.recv(1))
        except OSError:
            pass
        time.sleep(1)
    print("ok: slow clients held %d s (the trickle read %d bytes)" % (seconds, got))
    for s in socks:
        s.close()


def main():
    a = sys.argv[1:]
    if a[0] == "ports":
        socks = [socket.socket() for _ in range(int(a[1]))]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        print(" ".join(str(s.getsockname()[1]) for s in socks))
        return
    if a[0] == "wait":
        return wait(a[1], a[2:])
    if a[0] == "upmin":	# every scrape between two times up
        t0, t1 = int(a[3]), int(a[4])
        q = urllib.parse.urlencode({"query": 'up{job="%s"}[%ds]' % (a[2], t1 - t0 + 1),
                                    "time": t1 + 1})
        with urllib.request.urlopen("http://%s/api/v1/query?%s" % (a[1], q), timeout=10) as r:
            vals = [v for s in json.load(r)["data"]["result"] for t, v in s["values"]]
        # 1 s timeouts on a machine the suite loads (2 cores, ASan builds
        # beside) can fail a scrape now and then whatever the exporter
        # does; a reader held by a client fails them all from then on.
        up = sum(v == "1" for v in vals)
        if len(vals) < t1 - t0 - 2 or up < 0.8 * len(vals) or vals[-1] != "1":
            fail("scrapes of %s from %d to %d: %s" % (a[2], t0, t1, vals))
        print("ok: %d of %d scrapes of %s up while the slow clients held on" %
              (up, len(vals), a[2]))
        return
    if a[0] == "why":	# a failed scrape: when, and what Prometheus said
        q = urllib.parse.urlencode({"query": 'up{job="%s"}[3m]' % a[2]})
        with urllib.request.urlopen("http://%s/api/v1/query?%s" % (a[1], q), timeout=10) as r:
            for s in json.load(r)["data"]["result"]:
                print("up:", " ".join("%.1f=%s" % (t, v) for t, v in s["values"]))
        q = urllib.parse.urlencode({"query": 'scrape_duration_seconds{job="%s"}[3m]' % a[2]})
        with urllib.request.urlopen("http://%s/api/v1/query?%s" % (a[1], q), timeout=10) as r:
            for s in json.load(r)["data"]["result"]:
                print("scrape_duration_seconds:", " ".join("%.3f" % float(v) for t, v in s["values"]))
        print("targets:", targets(a[1]))
        return
    if a[0] == "dashboard":
        return dashboard(a[1], a[2])
    if a[0] == "http":
        return http(int(a[1]))
    if a[0] == "slow":
        return slow(int(a[1]), int(a[2]))
    prom, job = a[1], a[2]
    recs = list(records(a[3]))
    if a[0] == "file":
        check_verbs(prom, job, recs)
        check_colls(prom, job, recs)
        check_ctrs(prom, job, recs)
        losses_zero(prom, job, recs)
    elif a[0] == "nccl":
        ncoll = check_plugin(prom, job, recs, False)
        check_colls(prom, job, recs)
        # Every collective's GPU time, once the input ended (finish).
        g = by(prom, 'sum(rdmatrace_collective_duration_seconds_count{job="%s",source="nccl_plugin"})' % job, [])
        if not 0 < g.get((), 0) <= ncoll:
            fail("plugin GPU durations: %s for %d collectives" % (g, ncoll))
        print("ok: %d plugin collectives with a GPU time, of %d" % (g[()], ncoll))
        losses_zero(prom, job, recs)
    elif a[0] == "live":
        check_plugin(prom, job, recs, True)
        check_gpu_prompt(prom, job, recs, float(a[5]))
        check_ctr_tree(prom, job, recs, a[4])
        losses_zero(prom, job, recs)
        nev = len(recs)
        got = by(prom, 'rdmatrace_metrics_events_total{job="%s"}' % job, [])
        if got != {(): float(nev)}:
            fail("events: metrics %s, trace %d" % (got, nev))
        print("ok: the exporter counted the trace's %d events" % nev)
    elif a[0] == "churn":
        cap = int(a[4])
        wrs = sum(1 for r in recs if r["type"] == "post_send")
        qps = len({r["qpn"] for r in recs if r["type"] == "post_send"})
        sel = '{job="%s"}' % job
        n = by(prom, "count(count by (qpn) (rdmatrace_qp_work_requests_total%s))" % sel, [])
        if n.get((), 0) != cap + 1 or qps <= cap:
            fail("QP series: %s for %d QPs, want the cap %d + other" % (n, qps, cap))
        for m in ("rdmatrace_qp_work_requests_total", "rdmatrace_qp_wr_latency_seconds_count"):
            c = by(prom, "count(%s%s)" % (m, sel), [])[()]
            if c > cap + 1:
                fail("%s: %d series, over the cap %d + other" % (m, c, cap))
        s = by(prom, "sum(rdmatrace_qp_work_requests_total%s)" % sel, [])
        if s != {(): float(wrs)}:
            fail("churn: WRs in all series %s, trace %d" % (s, wrs))
        other = by(prom, 'sum(rdmatrace_qp_work_requests_total{job="%s",qpn="other"})' % job, [])
        print("ok: %d QPs in %d QP series (cap %d + other, which holds %g WRs); all %d WRs counted" %
              (qps, n[()], cap, other.get((), 0), wrs))
    else:
        fail("unknown command %s" % a[0])


if __name__ == "__main__":
    main()
