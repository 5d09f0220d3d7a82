#!/usr/bin/env python3
"""The layers of harness/src, checked on what the compiler and linker see.

  core < import < net < cmd      (a layer uses only the ones before it)

1. Includes: a file in harness/src/<layer>/ includes headers of its own layer
   or lower ones only (from the source text).
2. Calls: from the object files of a build (nm), every symbol a file uses is
   defined by a file of its own layer or a lower one, and no two files need
   each other, directly or through others (no cycle in the file graph).
   schedulers/*.c reach the host only through what it passes them: they use
   no symbol of harness/src.
3. Policies and the policy toolkit: schedulers/*.c and schedulers/lib/*.c
   include only public headers (harness/include/schedbench/*.h, the toolkit's
   schedbench/policy.h among them).  No private header is left among the
   policies (issue 41): schedulers/ holds no .h, and no file of the tree
   includes a header from schedulers/ or a *-impl.h (the generators' own
   workloads/gen/gen-impl.h aside, which is not a policy's).
   The toolkit's objects (schedbench_policy) use no symbol of harness/src
   either.

Usage: layers.py SOURCE_DIR BUILD_DIR.  Prints each violation and
"N passed, M failed"; exits 1 on any violation."""
import collections
import os
import re
import subprocess
import sys

LAYERS = ["core", "import", "net", "cmd"]
src, build = sys.argv[1], sys.argv[2]
harness = os.path.join(src, "harness", "src")
failed = []
checks = 0


def layer_of(rel):
    """harness/src/<layer>/x.c -> index; None for files outside harness/src."""
    parts = rel.split("/")
    if len(parts) == 4 and parts[:2] == ["harness", "src"] and parts[2] in LAYERS:
        return LAYERS.index(parts[2])
    return None


# 1. includes
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for layer in LAYERS:
    d = os.path.join(harness, layer)
    for f in sorted(os.listdir(d)):
        if not f.endswith((".c", ".h")):
            continue
        text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
        for h in inc.findall(text):
            checks += 1
            target = os.path.normpath(os.path.join(d, h))
            if not os.path.exists(target):
                target = os.path.normpath(os.path.join(harness, h))
            rel = os.path.relpath(target, src)
            lt = layer_of(rel)
            if lt is not None and lt > LAYERS.index(layer):
                failed.append("include: harness/src/%s/%s includes %s (a higher layer)"
                              % (layer, f, rel))

# 3. includes of the policies and the toolkit: public headers only
public = os.path.join(src, "harness", "include")
for sub in ["schedulers", os.path.join("schedulers", "lib")]:
    d = os.path.join(src, sub)
    for f in sorted(os.listdir(d)):
        if not f.endswith((".c", ".h")):
            continue
        text = open(os.path.join(d, f), encoding="utf-8", errors="replace").read()
        for h in inc.findall(text):
            checks += 1
            if h.startswith("schedbench/") and os.path.exists(os.path.join(public, h)):
                continue
            failed.append("include: %s/%s includes \"%s\" (policies and the toolkit "
                          "include only schedbench/*.h)" % (sub, f, h))
# No private header among the policies (issue 41): nothing under schedulers/
# but .c files, so no *-impl.h, and no file of the tree (tests included)
# reaches into schedulers/ for a header; what two files share is in the
# toolkit, schedbench/policy.h.  (workloads/gen/gen-impl.h is the generators'
# own internal header, not a policy's, and stays.)
for root, dirs, files in os.walk(os.path.join(src, "schedulers")):
    dirs.sort()
    for f in sorted(files):
        if f.endswith(".h"):
            checks += 1
            failed.append("private header: %s (policies share code through the "
                          "toolkit, schedbench/policy.h)"
                          % os.path.relpath(os.path.join(root, f), src))
NOT_A_POLICY = {"gen-impl.h"}
for top in ["harness", "schedulers", "tests", "bench", "docs", "workloads"]:
    for root, dirs, files in os.walk(os.path.join(src, top)):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".cc", ".cpp")):
                continue
            text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
            for h in inc.findall(text):
                checks += 1
                if "schedulers/" in h or (h.endswith("-impl.h") and
                                          os.path.basename(h) not in NOT_A_POLICY):
                    failed.append("include: %s includes \"%s\" (a policy's private header)"
                                  % (os.path.relpath(os.path.join(root, f), src), h))

# 2. symbols of the object files whose source is in the tree
objs = {}
for root, _, files in os.walk(os.path.join(build, "CMakeFiles", "schedbench_core.dir")):
    for f in files:
        if not f.endswith(".c.o"):
            continue
        path = os.path.join(root, f)
        rel = os.path.relpath(path, os.path.join(build, "CMakeFiles", "schedbench_core.dir"))
        source = rel[:-2]  # x.c.o -> x.c
        if os.path.exists(os.path.join(src, source)):
            objs[source] = path
# the toolkit's objects, checked like the policies' below
lib_dir = os.path.join(build, "CMakeFiles", "schedbench_policy.dir")
lib_objs = {}
for root, _, files in os.walk(lib_dir):
    for f in files:
        if f.endswith(".c.o"):
            lib_objs[os.path.relpath(os.path.join(root, f), lib_dir)[:-2]] = os.path.join(root, f)
if not lib_objs:
    print("layers: no object files of schedulers/lib under %s (build first)" % build)
    sys.exit(1)
if not any(layer_of(s) is not None for s in objs):
    print("layers: no object files of harness/src under %s (build first)" % build)
    sys.exit(1)
defs, uses = {}, collections.defaultdict(set)
for source, path in objs.items():
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        sym, kind = f[0], f[1]
        if kind == "U":
            uses[source].add(sym)
        elif kind in "TDBRC":
            defs[sym] = source
for source, path in sorted(lib_objs.items()):
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2 or f[1] != "U":
            continue
        checks += 1
        d = defs.get(f[0])
        if d and layer_of(d) is not None:
            failed.append("call: %s uses %s of %s (the toolkit sees only the public headers)"
                          % (source, f[0], d))
dep = collections.defaultdict(set)
for source, syms in uses.items():
    for s in syms:
        d = defs.get(s)
        if d and d != source:
            dep[source].add((d, s))
for source in sorted(dep):
    ls = layer_of(source)
    for d, s in sorted(dep[source]):
        checks += 1
        ld = layer_of(d)
        if ls is not None and ld is not None and ld > ls:
            failed.append("call: %s uses %s of %s (a higher layer)" % (source, s, d))
        if source.startswith("schedulers/") and ld is not None:
            failed.append("call: %s uses %s of %s (policies see only the public headers)"
                          % (source, s, d))

# cycles between files: Tarjan's strongly connected components
graph = {s: sorted({d for d, _ in dep[s]}) for s in objs}
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]


def strong(v):
    work = [(v, 0)]
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    while work:
        v, i = work[-1]
        if i < len(graph[v]):
            work[-1] = (v, i + 1)
            w = graph[v][i]
            if w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, 0))
            elif w in on:
                low[v] = min(low[v], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                sccs.append(comp)


for v in sorted(graph):
    if v not in index:
        strong(v)
for comp in sccs:
    checks += 1
    if len(comp) > 1:
        failed.append("cycle: %s need each other" % ", ".join(sorted(comp)))

for f in failed:
    print(f)
print("layers: %d passed, %d failed" % (checks - len(failed), len(failed)))
sys.exit(1 if failed else 0)
