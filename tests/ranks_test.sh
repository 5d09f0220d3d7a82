#!/usr/bin/env bash
# Issue 36: the real PyTorch trace as a job of 1, 2 and 4 identical ranks
# (copies of one rank file, -w 'dir/name.%d.et').  Every policy that is no
# placer schedules each rank's program alone, so its makespan and each
# rank's peak equal the single rank's (heft, dp and ggml too: they keep the
# pinned ranks and plan them alike); under every policy each joined
# collective has one begin and one end on all its members (the Chrome
# trace's collective slices, pid = device + 1).  Skipped without the corpus.
set -u
BIN=$1 CORPUS=$2 WORK=$3/ranks_work
real=$CORPUS/chakra-real/pytorch-ddp-chakra.0.et
if [ ! -e "$real" ]; then echo "SKIP: $real not present"; exit 77; fi
rm -rf "$WORK" && mkdir -p "$WORK"
fail=0
for n in 1 2 4; do
    mkdir -p "$WORK/j$n"
    for ((r = 0; r < n; r++)); do ln -s "$real" "$WORK/j$n/j$n.$r.et"; done
    args=(-q -w "$WORK/j$n/j$n.%d.et" -s all -o "$WORK/j$n.csv")
    [ "$n" = 4 ] && args+=(--trace-dir "$WORK/tr4")
    if ! "$BIN" run "${args[@]}" 2>"$WORK/err"; then
        echo "FAIL: $n ranks: $(head -c 300 "$WORK/err")"; fail=$((fail + 1))
    fi
done
# scheduler, makespan, every device's peak, against one rank's makespan and peak
for n in 2 4; do
    bad=$(join -t, <(awk -F, 'NR > 1 { print $2 "," $6 "," $21 }' "$WORK/j$n.csv" | sort) \
                   <(awk -F, 'NR > 1 { print $2 "," $6 "," $7 }' "$WORK/j1.csv" | sort) |
        awk -F, -v n="$n" '{ k = split($3, p, ";"); ok = k == n && $2 == $4
              for (i = 1; i <= k; i++) ok = ok && p[i] == $5
              if (!ok) print }')
    rows=$(awk -F, 'NR > 1 && $3 == "ok"' "$WORK/j$n.csv" | wc -l)
    if [ -n "$bad" ] || [ "$rows" -lt 10 ]; then
        echo "FAIL: $n identical ranks differ from one (scheduler,makespan,peaks,1-rank makespan,peak):"
        echo "$bad"; fail=$((fail + 1))
    fi
done
# each collective: 4 members, one begin and one end
if ! python3 - "$WORK/tr4" <<'PY'
import glob, json, sys
bad = 0
files = sorted(glob.glob(sys.argv[1] + "/*.json"))
for f in files:
    ev = json.load(open(f))
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = {}
    for e in ev:
        if e.get("ph") != "X" or not names.get((e["pid"], e["tid"]), "").startswith("comm"):
            continue
        key = e["name"].split("/", 1)[1]  # the trace node, without its rank
        spans.setdefault(key, []).append((e["pid"], e["ts"], e["ts"] + e["dur"]))
    for key, s in spans.items():
        if len(s) != 4 or len({p for p, _, _ in s}) != 4 or len({(b, x) for _, b, x in s}) != 1:
            bad += 1
            if bad < 4:
                print(f, key, s)
    if not spans:
        print(f, "no collective slices"); bad += 1
print("ranks_test: %d traces, %d collectives off" % (len(files), bad))
sys.exit(1 if bad or len(files) < 10 else 0)
PY
then fail=$((fail + 1)); fi
echo "ranks: 1, 2 and 4 identical ranks, $fail failed"
[ "$fail" = 0 ]
