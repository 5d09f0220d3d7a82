#!/usr/bin/env python3
"""An independent count of what `schedbench validate` reports for an HLO module
(issue 21): collectives by type and dot FLOPs after the while loops run their
trip counts, and io_bytes, read from the text with regular expressions and
none of the harness's code.

Rules, kept deliberately simple and separate from harness/src/import:
- a computation is `[ENTRY] [%]name ... {` up to a line that is `}`;
- an instruction is `[ROOT] [%]name = SHAPE opcode(...)`; the opcode is the
  first lower-case word followed by `(` after a `]`, `}` or `)` that ends the
  shape;
- a dot costs 2 * (elements of its result) * (product of operand 0's
  lhs_contracting_dims); operand 0's shape comes from its definition;
- a while runs its body N times, N the constant its condition compares with
  (every loop in the corpus counts 0, 1, ... N-1); a call runs its to_apply
  once; fusions do not occur in the corpus.
- io_bytes (XLA's total_io_size in GetSchedulerMemoryLimit): every subshape
  of every ENTRY `parameter` line's shape and of the ROOT line's shape, a
  tuple as 8 bytes per element plus its elements, an array as elements times
  its type's bytes; less the own size of each result subshape the header's
  `input_output_alias` names by its `{output index}:`.

usage: hlo_count.py SCHEDBENCH DIR|MODULE.hlo...   (exit 0 when all agree; a
directory stands for its *.hlo, and one that does not exist is skipped)
"""
import glob
import os
import re
import subprocess
import sys

COLLS = {"all-gather": "all_gather", "all-reduce": "all_reduce",
         "reduce-scatter": "reduce_scatter", "all-to-all": "all_to_all",
         "collective-permute": "collective_permute"}
OPC = re.compile(r"[\]\})] ([a-z][a-z0-9\-]*)\(")
DEF = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(.*)$")
ARR = re.compile(r"^\(?\s*[a-z0-9]+\[([0-9,]*)\]")


def dims(shape_text):
    m = ARR.match(shape_text)
    if not m:
        return None
    return [int(d) for d in m.group(1).split(",") if d]


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
         "s32": 4, "u32": 4, "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8,
         "c128": 16, "token": 0}
ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^}]*\})?")


def read_shape(text, i=0):
    """(node, end): node is ("tuple", [nodes]) or ("array", bytes)."""
    while True:  # spaces and /*index=5*/ comments
        while i < len(text) and text[i] == " ":
            i += 1
        if not text.startswith("/*", i):
            break
        i = text.index("*/", i) + 2
    if text[i] == "(":
        kids, i = [], i + 1
        while text[i] != ")":
            kid, i = read_shape(text, i)
            kids.append(kid)
            i = i + 1 if text[i] == "," else i
        return ("tuple", kids), i + 1
    m = ARRAY.match(text, i)
    elems = prod(int(d) for d in m.group(2).split(",") if d)
    size = elems * (1 if m.group(1)[:2] in ("f8", "f4", "s4", "u4") else BYTES[m.group(1)])
    return ("array", size), m.end()


def own(node):
    return 8 * len(node[1]) if node[0] == "tuple" else node[1]


def every(node):
    return own(node) + (sum(every(k) for k in node[1]) if node[0] == "tuple" else 0)


def io_bytes(path, comps, entry):
    header = open(path).readline()
    lines = [DEF.match(s) for s in comps[entry]]
    lines = [m for m in lines if m]
    total = 0
    for m in lines:
        o = OPC.search(m.group(2))
        if o and o.group(1) == "parameter":
            total += every(read_shape(m.group(2)[:o.start() + 1])[0])
    root = [s for s in comps[entry] if s.strip().startswith("ROOT")]
    rest = DEF.match(root[0]).group(2)
    result = read_shape(rest[:OPC.search(rest).start() + 1])[0]
    total += every(result)
    alias = re.search(r"input_output_alias=\{(.*?)\}\s*(?:,\s*[a-z_]+=|$)", header)
    for out in re.findall(r"\{([0-9, ]*)\}:\s*\(", alias.group(1) if alias else ""):
        node = result
        for k in (int(x) for x in out.split(",") if x.strip()):
            node = node[1][k]
        total -= own(node)
    return total


def parse(path):
    comps, cur, entry = {}, None, None
    for line in open(path):
        s = line.rstrip("\n")
        if cur is None:
            m = re.match(r"^(ENTRY\s+)?%?([\w.\-]+).*\{\s*$", s)
            if m and not s.startswith("HloModule"):
                cur = m.group(2)
                comps[cur] = []
                if m.group(1):
                    entry = cur
            continue
        if s.strip() == "}":
            cur = None
            continue
        comps[cur].append(s)
    return comps, entry


def count(comps, name, memo):
    if name in memo:
        return memo[name]
    shapes, colls, flops = {}, {}, 0.0
    for s in comps[name]:
        m = DEF.match(s)
        if not m:
            continue
        iname, rest = m.group(1), m.group(2)
        shapes[iname] = dims(rest)
        o = OPC.search(rest)
        if not o:
            continue
        op = o.group(1)
        base = op[:-6] if op.endswith("-start") else op
        if base in COLLS:
            colls[COLLS[base]] = colls.get(COLLS[base], 0) + 1
        if op == "dot":
            args = rest[o.end():]
            # operands are "[shape] [%]name": drop the shapes, take the first name
            bare = re.sub(r"[a-z0-9]+\[[^\]]*\](\{[^}]*\})?", "", args)
            a0 = re.match(r"\s*%?([\w.\-]+)", bare).group(1)
            lcd = re.search(r"lhs_contracting_dims=\{([0-9,]*)\}", rest)
            red = prod(shapes[a0][int(d)] for d in lcd.group(1).split(",") if d) if lcd else 1
            flops += 2.0 * prod(shapes[iname]) * red
        sub = []
        if op == "while":
            cond = re.search(r"condition=%?([\w.\-]+)", rest).group(1)
            body = re.search(r"body=%?([\w.\-]+)", rest).group(1)
            limit = [int(x) for x in re.findall(r"constant\((\d+)\)", "\n".join(comps[cond]))]
            sub = [(body, limit[0])]
        elif op == "call":
            sub = [(re.search(r"to_apply=%?([\w.\-]+)", rest).group(1), 1)]
        for callee, times in sub:
            c2, f2 = count(comps, callee, memo)
            for k, v in c2.items():
                colls[k] = colls.get(k, 0) + times * v
            flops += times * f2
    memo[name] = (colls, flops)
    return memo[name]


def main():
    binary, files = sys.argv[1], []
    for a in sys.argv[2:]:
        if a.endswith(".hlo"):
            files.append(a)
        elif os.path.isdir(a):
            files += sorted(glob.glob(os.path.join(a, "*.hlo")))
        else:
            print("hlo_count: skipped, %s is absent" % a)
    bad = 0
    for f in files:
        comps, entry = parse(f)
        colls, flops = count(comps, entry, {})
        out = subprocess.run([binary, "validate", f], capture_output=True, text=True).stdout
        got = {m.group(1): int(m.group(2))
               for m in re.finditer(r"collective (\w+)\s+(\d+)", out)}
        dm = re.search(r"^\s+dot\s+\d+ nodes\s+flops (\S+)", out, re.M)
        got_flops = float(dm.group(1)) if dm else 0.0
        io = io_bytes(f, comps, entry)
        im = re.search(r"^\s+io_bytes (\d+)", out, re.M)
        got_io = int(im.group(1)) if im else None
        ok = got == colls and abs(got_flops - flops) <= 1e-6 * max(flops, 1) and got_io == io
        print("%s %s: collectives %s (schedbench %s), dot flops %.6e (schedbench %.6e), "
              "io_bytes %d (schedbench %s)" %
              ("ok  " if ok else "FAIL", f.split("/")[-1], colls, got, flops, got_flops, io,
               got_io))
        bad += not ok
    print("hlo_count: %d passed, %d failed" % (len(files) - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
