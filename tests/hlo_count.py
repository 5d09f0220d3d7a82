#!/usr/bin/env python3
"""An independent count of what `schedbench validate` reports for an HLO module
(issue 21): collectives by type and dot FLOPs after the while loops run their
trip counts, read from the text with regular expressions and none of the
harness's code.

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
        ok = got == colls and abs(got_flops - flops) <= 1e-6 * max(flops, 1)
        print("%s %s: collectives %s (schedbench %s), dot flops %.6e (schedbench %.6e)" %
              ("ok  " if ok else "FAIL", f.split("/")[-1], colls, got, flops, got_flops))
        bad += not ok
    print("hlo_count: %d passed, %d failed" % (len(files) - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
