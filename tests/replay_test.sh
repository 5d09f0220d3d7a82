#!/usr/bin/env bash
# The ASTRA-sim-style replay (`ready`) and the Chakra fixes of issue 22.
#  1. ../shared/corpus/astra-golden/workloads: ASTRA-sim's own end times and
#     exposed communication for a Llama backward over 8 ranks (its README, from
#     ASTRA-sim c459ab6 built from source), from the .et and from the .csv.
#  2. ../shared/corpus/chakra-real: the real PyTorch trace imports (3,664 trace
#     nodes, 7 collectives), and `ready` issues every node when ASTRA-sim's rule
#     says (tests/chakra_feeder.py derives it independently).
#  3. Without the corpus: a collective ASTRA-sim's model refuses gives an error
#     row and the sweep goes on (it used to crash); --cost ranks= reaches
#     --comm astra for a collective that names no group.
# Arguments: schedbench BIN, repository ROOT, scratch DIR.
set -u
BIN=$1 ROOT=$2 W=$3/replay_work
rm -rf "$W" && mkdir -p "$W"
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

G=$ROOT/../shared/corpus/astra-golden/workloads
if [ -d "$G" ]; then
    # network system expected-end expected-exposed (us), ASTRA-sim's README table
    while read -r comm sys net want_end want_exp; do
        for wl in llama-L4-r8.csv llama.0.et; do
            rm -f "$W/r.csv"
            "$BIN" run -q -w "$G/$wl" -s ready --comm "$comm" --system "$G/$sys" \
                --network "$G/$net" -o "$W/r.csv" 2>"$W/err"
            got=$(tail -1 "$W/r.csv" | cut -d, -f6,8)
            if [ "$got" = "$want_end,$want_exp" ]; then ok; else
                bad "$wl $comm $net: ready gave $got, ASTRA-sim $want_end,$want_exp"; fi
        done
    done <<'EOF'
astra system.json ring8.yml 607794.140 457586.140
astra-aware system.json ring8.yml 607794.140 457586.140
astra system-2d.json sw4x2.yml 158202.331 7994.331
EOF
    # the file's own order ends later (the README's 726,100.492 us)
    rm -f "$W/r.csv"
    "$BIN" run -q -w "$G/llama.0.et" -s original --comm astra --system "$G/system.json" \
        --network "$G/ring8.yml" -o "$W/r.csv" 2>/dev/null
    got=$(tail -1 "$W/r.csv" | cut -d, -f6)
    if [ "$got" = 726100.492 ]; then ok; else bad "original on llama.0.et gave $got"; fi
else
    skip=$((skip + 1)); echo "skip: no ../shared/corpus/astra-golden"
fi

R=$ROOT/../shared/corpus/chakra-real/pytorch-ddp-chakra.0.et
if [ -f "$R" ] && command -v python3 >/dev/null; then
    # 3,664 trace nodes; each of the 7 GPU collectives becomes a start and a done,
    # and each of the 822 GPU storages of the tensor lists a buffer node
    out=$("$BIN" validate "$R" 2>/dev/null)
    case "$out" in *"4493 nodes"*"7 collectives"*) ok ;; *) bad "validate: $out" ;; esac
    rm -rf "$W/tr"
    # ASTRA-sim runs one compute node at a time: the trace on one stream
    if "$BIN" run -q --import streams=0 -w "$R" -s ready --trace-dir "$W/tr" -o "$W/r.csv" 2>/dev/null &&
        python3 "$ROOT/tests/chakra_feeder.py" "$R" "$W/tr/pytorch-ddp-chakra.0__ready.json" 3664 7; then
        ok
    else
        bad "ready on the real trace does not issue as ASTRA-sim's rule"
    fi
    # every policy runs on it
    if "$BIN" run -q -w "$R" -s all -o "$W/all.csv" 2>/dev/null &&
        [ "$(grep -c ',ok,' "$W/all.csv")" -ge 10 ]; then ok; else bad "run -s all on the real trace"; fi
    # --import ctrl_deps=1 follows Chakra's call-tree parents, stale ids and all: refused
    "$BIN" validate --import ctrl_deps=1 "$R" >/dev/null 2>"$W/err"
    rc=$?
    if [ $rc = 2 ] && grep -q "node id [0-9]*.*ctrl_deps\|depends on itself (ctrl_deps)" "$W/err"; then ok; else
        bad "ctrl_deps=1: exit $rc, $(head -c 200 "$W/err")"; fi
else
    skip=$((skip + 1)); echo "skip: no ../shared/corpus/chakra-real or no python3"
fi

# a 128-byte all-gather over 64 ranks: ASTRA-sim's chunks would be 0 bytes, so
# --comm astra refuses it; the row says so, the other workload still runs
cat >"$W/tiny.csv" <<'EOF'
id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group
0,x,compute,,mm,1,,,,
1,ag,start,0,,,,all_gather,128,64
2,ag.done,done,1,,,,,,
EOF
cat >"$W/fine.csv" <<'EOF'
id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group
0,x,compute,,mm,1,,,,
EOF
"$BIN" run -q -w "$W/tiny.csv" "$W/fine.csv" -s original --comm astra \
    --system "$ROOT/workloads/astra/system.json" --network "$ROOT/workloads/astra/ring8.yml" \
    -o "$W/r.csv" 2>"$W/err"
rc=$?
if [ $rc = 1 ] && grep -q 'tiny.csv,original,error:' "$W/r.csv" && grep -q '^fine,original,ok' "$W/r.csv"; then
    ok; else bad "refused collective: exit $rc, $(cat "$W/r.csv" "$W/err" | head -c 300)"; fi

# a collective without a group and no '# ranks=': --cost ranks=8 makes it a
# ring of 8 under --comm astra too (it used to cost nothing there)
cat >"$W/nogroup.csv" <<'EOF'
id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group
0,x,compute,,mm,1,,,,
1,ar,start,0,,,,all_reduce,1048576,
2,ar.done,done,1,,,,,,
EOF
"$BIN" run -q -w "$W/nogroup.csv" -s original --comm astra --cost ranks=8 \
    --system "$ROOT/workloads/astra/system.json" --network "$ROOT/workloads/astra/ring8.yml" \
    -o "$W/r.csv" 2>/dev/null
# 1 us of compute, then the 1 MiB all-reduce over 8 ranks: 117.780 us (the
# golden case U1 of tests/astra_golden.sh)
got=$(tail -1 "$W/r.csv" | cut -d, -f6)
if [ "$got" = 118.780 ]; then ok; else bad "--cost ranks=8 under --comm astra gave $got"; fi

echo "replay: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
