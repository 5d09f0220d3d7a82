#!/usr/bin/env bash
# Issue 37: `ready` under ASTRA-sim's reading of a trace (--import astra=1)
# against ASTRA-sim itself, on the real PyTorch DDP trace as a job of 2 and
# 8 identical ranks (../shared/corpus/chakra-real), and the figure
# astra_exposed_us.
#
#  1. Without the corpus: astra_exposed_us on two hand graphs.
#  2. With it: ASTRA-sim c459ab6 (built from source, ../shared/tools/astra-sim;
#     the goldens' system.json, a Ring of N at 50 GB/s and 500 ns) ends every
#     rank at 297,046,000 ns, for 2 and 8 ranks, congestion-unaware and (8
#     ranks; its aware backend aborts on a Ring of 2) aware.  Its exposed
#     communication is that end less tics_gpu_ops, the GPU kernels' time:
#     the trace's GPU COMP nodes (is_cpu_op unset) sum to 292,828 us, which
#     this script adds up itself from the .et (tests/chakra_feeder.py's
#     decoder), so 4,218,000 ns.  ASTRA-sim prints 4,217,996: 4 of the 157
#     kernels of no duration took its 1 ns floor (issue_replay) because
#     ETFeederNode leaves num_ops_ uninitialised when a node has no num_ops
#     attribute (docs/ready.md, "Exposed communication").
# Arguments: schedbench BIN, corpus DIR, scratch DIR.  Exit 77: skipped.
set -u
BIN=$1 CORPUS=$2 W=$3/astra_real_work
rm -rf "$W" && mkdir -p "$W"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
col() { # FILE COLUMN ROW: a field of a results file by its column's name
    awk -F, -v c="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i }
        NR == r + 1 { print $k }' "$1"
}

# ---- 1. the figure on hand graphs -------------------------------------------
# host h 0-10 (stream 0); kernel k 0-20 (stream 1); the all-reduce of 5 us
# from 20 to 25 on its own stream; k2 after it, 25-32.  End 32, GPU kernels
# 20 + 7 = 27: 5 exposed.
cat >"$W/one.csv" <<'EOF'
id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,comm_us,stream
0,h,compute,,host,10,,,,,,0
1,k,compute,,comp,20,,,,,,1
2,ar,start,1,,,,all_reduce,1000,2,5,2
3,ar.done,done,2,,,,,,,,2
4,k2,compute,3,comp,7,,,,,,1
EOF
# the same on device 0, and device 1 with 50 us of host work and a 1 us
# kernel: 50 - 1 = 49 there, the larger
{ echo '# devices=2'
  echo 'id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,comm_us,stream,device'
  tail -n +2 "$W/one.csv" | sed 's/$/,0/'
  echo '5,h1,compute,,host,50,,,,,,0,1'
  echo '6,k1,compute,,comp,1,,,,,,1,1'; } >"$W/two.csv"
for t in one:5.000 two:49.000; do
    "$BIN" run -q -w "$W/${t%%:*}.csv" -s original -o "$W/r.csv" 2>"$W/err"
    got=$(col "$W/r.csv" astra_exposed_us 1)
    if [ "$got" = "${t#*:}" ]; then ok; else bad "${t%%:*}: astra_exposed_us $got, want ${t#*:}"; fi
done

# ---- 2. against ASTRA-sim on the real trace -----------------------------------
R=$CORPUS/chakra-real/pytorch-ddp-chakra.0.et
[ -f "$R" ] && R=$(cd "$(dirname "$R")" && pwd)/$(basename "$R") # the links below need it whole
SYS=$CORPUS/astra-golden/workloads/system.json
if [ ! -f "$R" ] || [ ! -f "$SYS" ] || ! command -v python3 >/dev/null; then
    echo "astra_real: $pass passed, $fail failed; skip: no corpus or no python3"
    [ "$fail" = 0 ] || exit 1
    exit 77
fi
gpu_us=$(python3 - "$R" "$(dirname "$0")" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
import chakra_feeder as cf
print(sum(x["dur"] for x in cf.nodes(sys.argv[1])
          if x["type"] == cf.COMP and not x["attr"].get("is_cpu_op")))
EOF
)
end_ns=297046000 # ASTRA-sim's measured end, every rank
want_exp=$(awk -v e=$end_ns -v g="$gpu_us" 'BEGIN { printf "%.3f", (e - g * 1000) / 1000 }')
if [ "$want_exp" = 4218.000 ]; then ok; else
    bad "the trace's GPU kernels give $want_exp us exposed"; fi
for n in 2 8; do
    mkdir -p "$W/ddp$n"
    for r in $(seq 0 $((n - 1))); do ln -sf "$R" "$W/ddp$n/ddp.$r.et"; done
    printf 'topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
        "$n" >"$W/ring$n.yml"
    comms="astra"
    [ "$n" = 8 ] && comms="astra astra-aware"
    for comm in $comms; do
        rm -f "$W/r.csv"
        "$BIN" run -q -w "$W/ddp$n/ddp.%d.et" -s ready --import astra=1 --comm "$comm" \
            --system "$SYS" --network "$W/ring$n.yml" -o "$W/r.csv" 2>"$W/err"
        got="$(col "$W/r.csv" makespan_us 1),$(col "$W/r.csv" astra_exposed_us 1)"
        want="$(awk -v e=$end_ns 'BEGIN { printf "%.3f", e / 1000 }'),$want_exp"
        if [ "$got" = "$want" ]; then ok; else
            bad "$n ranks, --comm $comm: ready gave $got (end, exposed), ASTRA-sim $want"; fi
    done
done
# the goldens read as ASTRA-sim reads them: its end and exposed
# communication from ../shared/corpus/astra-golden/workloads/README.md
G=$CORPUS/astra-golden/workloads
while read -r comm sys net want; do
    rm -f "$W/r.csv"
    "$BIN" run -q -w "$G/llama.0.et" -s ready --import astra=1 --comm "$comm" \
        --system "$G/$sys" --network "$G/$net" -o "$W/r.csv" 2>"$W/err"
    got="$(col "$W/r.csv" makespan_us 1),$(col "$W/r.csv" astra_exposed_us 1)"
    if [ "$got" = "$want" ]; then ok; else bad "llama.0.et $comm $net: $got, ASTRA-sim $want"; fi
done <<'EOF'
astra system.json ring8.yml 607794.140,457586.140
astra-aware system.json ring8.yml 607794.140,457586.140
astra system-2d.json sw4x2.yml 158202.331,7994.331
EOF
echo "astra_real: $pass passed, $fail failed"
[ "$fail" = 0 ]
