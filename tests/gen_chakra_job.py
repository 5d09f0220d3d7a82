#!/usr/bin/env python3
"""Writes a job of Chakra rank files PREFIX.0.et .. PREFIX.<N-1>.et (issue 42).

Every rank runs the same program: a compute node (1 us), then COLLS times an
all-reduce of 1000 bytes (recorded 2 us) followed by a compute node, each
node reading the one before it.  With --pg NAME every collective carries
pg_name NAME (give the group file yourself); without it each spans every
rank.  The protobuf records are encoded here by hand (workloads/importers/
chakra/et_def.proto), so the generator needs nothing installed.

    gen_chakra_job.py PREFIX RANKS COLLS [--pg NAME]
"""
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, wire, payload):
    return varint(num << 3 | wire) + payload


def string(num, s):
    b = s.encode()
    return field(num, 2, varint(len(b)) + b)


def attr_int(name, v):
    return string(1, name) + field(9, 0, varint(v))  # int64_val = 9


def attr_str(name, s):
    return string(1, name) + string(29, s)  # string_val = 29


def node(nid, name, ntype, deps, dur, attrs=()):
    b = field(1, 0, varint(nid)) + string(2, name) + field(3, 0, varint(ntype))
    if deps:
        packed = b"".join(varint(d) for d in deps)
        b += field(5, 2, varint(len(packed)) + packed)  # data_deps, packed
    b += field(7, 0, varint(dur))
    for a in attrs:
        b += field(10, 2, varint(len(a)) + a)
    return b


def record(b):
    return varint(len(b)) + b


COMP, COLL, ALL_REDUCE = 4, 7, 0


def rank_bytes(colls, pg):
    out = record(string(1, "0.0.4"))  # GlobalMetadata.version
    out += record(node(1, "c0", COMP, [], 1))
    for c in range(1, colls + 1):
        attrs = [attr_int("comm_type", ALL_REDUCE), attr_int("comm_size", 1000)]
        if pg is not None:
            attrs.append(attr_str("pg_name", pg))
        out += record(node(2 * c, "ar%d" % c, COLL, [2 * c - 1], 2, attrs))
        out += record(node(2 * c + 1, "c%d" % c, COMP, [2 * c], 1))
    return out


def main(argv):
    if len(argv) not in (4, 6) or (len(argv) == 6 and argv[4] != "--pg"):
        sys.exit(__doc__)
    prefix, ranks, colls = argv[1], int(argv[2]), int(argv[3])
    pg = argv[5] if len(argv) == 6 else None
    data = rank_bytes(colls, pg)
    for r in range(ranks):
        with open("%s.%d.et" % (prefix, r), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv)
