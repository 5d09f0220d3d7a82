#!/usr/bin/env python3
"""The `ready` policy against ASTRA-sim's issue rule, derived independently.

Decodes a Chakra .et by hand (varints and length-delimited records; no code
shared with harness/src/import/chakra.c) and replays it with the rule of
ASTRA-sim's workload layer and Chakra's ETFeeder (astra-sim/workload/
Workload.cc issue_dep_free_nodes; the feeder follows data_deps only):

  a node is issued once every node of its data_deps (those in the file) is
  done; among the issuable nodes the lowest id goes first; a rank runs at most
  one compute node and one collective at a time; a node of neither kind
  (metadata) is done when issued.  Compute nodes take duration_micros (the
  host side of a collective, is_cpu_op without a comm_type, is compute);
  collectives take duration_micros, which the importer keeps as comm_us.

Then reads the Chrome trace `schedbench run -s ready --trace-dir` wrote for
the same file and requires every compute node and every collective to begin
at the time the rule gives, in the same order.

Usage: chakra_feeder.py TRACE.et READY_TRACE.json EXPECT_NODES EXPECT_COLLS
Prints "N passed, M failed"."""
import heapq
import json
import sys

COMP, MEM_LOAD, MEM_STORE, SEND, RECV, COLL = 4, 2, 3, 5, 6, 7


def varint(b, i):
    v, s = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field number, wire type, value) of one message; value is an int or bytes."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def packed(v, w):
    if w == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def attribute(b):
    name, val = None, None
    for f, w, v in fields(b):
        if f == 1:
            name = v.decode()
        elif w == 0:
            val = v  # ints and bools
        elif f == 29:
            val = v.decode()
    return name, val


def nodes(path):
    data = open(path, "rb").read()
    i, k, out = 0, 0, []
    while i < len(data):
        n, i = varint(data, i)
        rec, i = data[i:i + n], i + n
        if k > 0:
            x = {"id": 0, "type": 0, "data": [], "ctrl": [], "dur": 0, "attr": {}}
            for f, w, v in fields(rec):
                if f == 1:
                    x["id"] = v
                elif f == 3:
                    x["type"] = v
                elif f == 4:
                    x["ctrl"] += packed(v, w)
                elif f == 5:
                    x["data"] += packed(v, w)
                elif f == 7:
                    x["dur"] = v
                elif f == 10:
                    a, val = attribute(v)
                    x["attr"][a] = val
            out.append(x)
        k += 1
    return out


def replay(ns):
    """Issue time of every node under the rule, and the two issue orders."""
    by_id = {x["id"]: x for x in ns}
    kind = {}
    for x in ns:
        host_side = x["attr"].get("is_cpu_op") and "comm_type" not in x["attr"]
        if x["type"] in (COMP, MEM_LOAD, MEM_STORE) or (x["type"] == COLL and host_side):
            kind[x["id"]] = "compute"
        elif x["type"] in (COLL, SEND, RECV):
            kind[x["id"]] = "comm"
        else:
            kind[x["id"]] = "none"
        if kind[x["id"]] == "compute" and not x["dur"] and (
                "num_ops" in x["attr"] or "tensor_size" in x["attr"]):
            sys.exit("node %d has no duration but a roofline: not modelled here" % x["id"])
    deps = {x["id"]: [d for d in set(x["data"]) if d in by_id and d != x["id"]] for x in ns}
    users = {x["id"]: [] for x in ns}
    for v, ds in deps.items():
        for d in ds:
            users[d].append(v)
    left = {v: len(ds) for v, ds in deps.items()}
    ready = {"compute": [], "comm": []}
    busy = {"compute": False, "comm": False}
    events, issued, order = [], {}, {"compute": [], "comm": []}

    def becomes_ready(v, t):
        if kind[v] == "none":
            issued[v] = t
            heapq.heappush(events, (t, v))
        else:
            heapq.heappush(ready[kind[v]], v)

    def issue(t):
        for r in ("compute", "comm"):
            if not busy[r] and ready[r]:
                v = heapq.heappop(ready[r])
                busy[r] = True
                issued[v] = t
                order[r].append(v)
                heapq.heappush(events, (t + by_id[v]["dur"], v))

    for v in deps:
        if not left[v]:
            becomes_ready(v, 0)
    issue(0)
    while events:
        t = events[0][0]
        while events and events[0][0] <= t:
            _, v = heapq.heappop(events)
            if kind[v] != "none":
                busy[kind[v]] = False
            for w in users[v]:
                left[w] -= 1
                if not left[w]:
                    becomes_ready(w, t)
        issue(t)
    return issued, order, kind


def main():
    et, trace, want_nodes, want_colls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL:", what)

    ns = nodes(et)
    issued, order, kind = replay(ns)
    colls = [x for x in ns if kind[x["id"]] == "comm"]
    check(len(ns) == want_nodes, "%d nodes in the trace, expected %d" % (len(ns), want_nodes))
    check(len(colls) == want_colls, "%d collectives, expected %d" % (len(colls), want_colls))
    check(len(issued) == len(ns), "the rule issued %d of %d nodes" % (len(issued), len(ns)))
    events = json.load(open(trace))["traceEvents"]
    got = {"compute": [], "comm": []}
    for e in events:
        if e.get("ph") != "X" or "#" not in e.get("name", ""):
            continue
        tid = int(e["name"].rsplit("#", 1)[1])
        r = "compute" if e.get("cat") == "compute" else "comm"
        got[r].append((e["ts"], tid))
    by_id = {x["id"]: x for x in ns}
    for r in ("compute", "comm"):
        # the trace draws no zero-length node, and those take no time
        mine = [(issued[v], v) for v in order[r] if by_id[v]["dur"] > 0]
        theirs = sorted(got[r], key=lambda p: p[0])  # stable: the trace's own order on ties
        check(len(mine) == len(theirs), "%s: %d issued by the rule, %d in the trace"
              % (r, len(mine), len(theirs)))
        bad = [(a, b) for a, b in zip(mine, theirs) if a[1] != b[1] or abs(a[0] - b[0]) > 1e-6]
        check(not bad, "%s: %d nodes differ, first: rule %s, ready %s"
              % (r, len(bad), bad[0][0] if bad else None, bad[0][1] if bad else None))
    print("chakra_feeder: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
