#!/usr/bin/env bash
# The command line end to end: schedbench BIN, test data DIR, scratch DIR.
# Expected figures are the hand-derived ones of tests/test_sim.c.
set -u
BIN=$1 DATA=$2 WORK=$3/cli_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$WORK/err" >&2; fi
}
contains() { # file needle description
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; cat "$1" >&2; fi
}
field() { # csv row col (row 1 = header)
    awk -F, -v r="$2" -v c="$3" 'NR == r { print $c }' "$1"
}
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
col_of() { # csv column-name row (row 2 = first data row)
    awk -F, -v n="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                                 NR == r { print $c }' "$1"
}

expect_rc 0 version "$BIN" --version
contains "$WORK/out" "plugin ABI 2" version
expect_rc 0 help "$BIN" --help
expect_rc 2 "no command" "$BIN"
expect_rc 2 "unknown command" "$BIN" frobnicate
for c in run list validate; do expect_rc 0 "$c --help" "$BIN" $c --help; done
# run --help names every --import key the importers accept (issue 38, item 15):
# each key of import.c's table, and fuse=none
expect_rc 0 "run --help" "$BIN" run --help
for k in peak_tflops mem_gbps clock_ghz npus ctrl_deps streams toposort astra=1 fuse=none \
         queues=none trip_count=N trip_count.NAME=N; do
    contains "$WORK/out" "$k" "run --help lists --import $k"
done
expect_rc 0 list "$BIN" list
contains "$WORK/out" "original" list

# a single-rank Chakra trace whose collectives have no process group but
# recorded durations: npus would change nothing, so no warning asks for it
# (issue 38, item 13)
if command -v python3 >/dev/null; then
    python3 "$(dirname "$0")/gen_chakra_job.py" "$WORK/solo" 1 3 >/dev/null
    expect_rc 0 "validate one timed rank" "$BIN" validate "$WORK/solo.0.et"
    if grep -q "npus" "$WORK/err"; then bad "timed collectives warn about npus: $(cat "$WORK/err")"; else ok; fi
else
    echo "skip: the single-rank Chakra warning (no python3)"
fi

# validate: counts, and a refusal naming file and line
expect_rc 0 validate "$BIN" validate "$DATA/chain.csv" "$DATA/overlap.csv"
contains "$WORK/out" "chain: 4 nodes, 4 edges, 0 collectives" validate
contains "$WORK/out" "overlap: 5 nodes, 4 edges, 1 collectives, all_gather 1" validate
printf 'id,name,kind,inputs\n0,a,compute,\n1,b,compute,7\n' >"$WORK/bad.csv"
expect_rc 2 "validate bad" "$BIN" validate "$WORK/bad.csv"
contains "$WORK/err" "bad.csv:3:4: input 7 is not an earlier row" "validate bad"

# a malformed '# ranks=' is refused with file and line (issue 13), no result file
printf '# name=r\n# ranks=4x\nid,name,kind\n0,a,input\n' >"$WORK/ranks.csv"
expect_rc 2 "run bad ranks" "$BIN" run -w "$WORK/ranks.csv" -s original -o "$WORK/ranks_out.csv" --quiet
contains "$WORK/err" "ranks.csv:2: metadata ranks '4x'" "run bad ranks"
if [ -e "$WORK/ranks_out.csv" ]; then bad "run bad ranks: result file written"; else ok; fi

# run: the leading columns and the hand-derived figures
expect_rc 0 run "$BIN" run -w "$DATA/chain.csv" -w "$DATA/overlap.csv" -s original -o "$WORK/r1.csv"
same "$(head -1 "$WORK/r1.csv" | cut -d, -f1-12)" \
    "workload,scheduler,status,nodes,collectives,makespan_us,peak_mem_bytes,exposed_comm_us,compute_us,comm_us,makespan_lb_us,sched_ms" header
same "$(field "$WORK/r1.csv" 2 1),$(field "$WORK/r1.csv" 2 3),$(field "$WORK/r1.csv" 2 6),$(field "$WORK/r1.csv" 2 7)" \
    "chain,ok,22.000,300" "chain row"
same "$(field "$WORK/r1.csv" 3 6),$(field "$WORK/r1.csv" 3 7),$(field "$WORK/r1.csv" 3 8),$(field "$WORK/r1.csv" 3 11)" \
    "40.000,5020,10.000,40.000" "overlap row"

# determinism: byte-identical apart from sched_ms (column 12)
expect_rc 0 rerun "$BIN" run -w "$DATA/chain.csv" -w "$DATA/overlap.csv" -s original -o "$WORK/r2.csv"
if cmp -s <(cut -d, -f1-11,13- "$WORK/r1.csv") <(cut -d, -f1-11,13- "$WORK/r2.csv"); then ok; else bad determinism; fi

# bad input mid-sweep: exit 2, message, and no result file, not even a temporary
expect_rc 2 "bad workload" "$BIN" run -w "$DATA/chain.csv" -w "$WORK/bad.csv" -s original -o "$WORK/r3.csv"
contains "$WORK/err" "bad.csv:3:4: input 7 is not an earlier row" "run bad"
if ls "$WORK"/r3.csv* >/dev/null 2>&1; then bad "half-written result left behind"; else ok; fi
expect_rc 2 "unknown scheduler" "$BIN" run -w "$DATA/chain.csv" -s nonesuch -o "$WORK/r4.csv"
contains "$WORK/err" "unknown scheduler 'nonesuch'" "unknown scheduler"
expect_rc 2 "unknown param" "$BIN" run -w "$DATA/chain.csv" -s original:x=1 -o "$WORK/r4.csv"
contains "$WORK/err" "unknown parameter 'x' (known: none)" "unknown param"
expect_rc 2 "missing workload" "$BIN" run -w "$WORK/nope.csv" -o "$WORK/r4.csv"
expect_rc 2 "bad cost model" "$BIN" run -w "$DATA/chain.csv" --cost-model magic -o "$WORK/r4.csv"

# an external plugin that misbehaves: rows say so, the sweep goes on, exit 1
PLUG=$3/misbehave.so
expect_rc 1 "misbehaving plugin" "$BIN" run --plugin "$PLUG" -w "$DATA/chain.csv" \
    -s misbehave,misbehave:mode=fail,scale=2,original -o "$WORK/r5.csv"
same "$(wc -l <"$WORK/r5.csv" | tr -d ' ')" 4 "plugin rows"
# reversed order x,a,b,c -> positions 3,2,1,0; the first broken edge in id order
# is a (at 2) reading x (at 3)
contains "$WORK/r5.csv" "chain,misbehave,invalid:node 1 (a) at 2 before its input 0 (x) at 3" invalid
contains "$WORK/r5.csv" '"misbehave:mode=fail,scale=2",error:no schedule for 4 nodes' error
same "$(field "$WORK/r5.csv" 4 3)" ok "sweep goes on"
expect_rc 2 "scheduler twice" "$BIN" run -w "$DATA/chain.csv" -s original,original -o "$WORK/r4.csv"
contains "$WORK/err" "scheduler 'original' given twice" "scheduler twice"

# memory timelines
mkdir -p "$WORK/mem"
expect_rc 0 "mem dir" "$BIN" run -w "$DATA/chain.csv" -s original -o "$WORK/r6.csv" --mem-dir "$WORK/mem"
same "$(cut -d, -f4 "$WORK/mem/chain__original.csv" | tr '\n' ' ')" "mem_bytes 100 300 250 260 " timeline

# convert: a round trip gives the same results
expect_rc 0 convert "$BIN" convert "$DATA/alias.csv" -o "$WORK/alias2.csv"
expect_rc 0 "convert run" "$BIN" run -w "$DATA/alias.csv" -s original -o "$WORK/ra.csv"
expect_rc 0 "convert rerun" "$BIN" run -w "$WORK/alias2.csv" -s original -o "$WORK/rb.csv"
if cmp -s <(cut -d, -f1-11 "$WORK/ra.csv") <(cut -d, -f1-11 "$WORK/rb.csv"); then ok; else bad "convert round trip"; fi
expect_rc 2 "convert missing -o" "$BIN" convert "$DATA/alias.csv"

# approx cost model, per-type resources
expect_rc 0 approx "$BIN" run -w "$DATA/approx.csv" -s original --cost-model approx -o "$WORK/r7.csv"
same "$(field "$WORK/r7.csv" 2 6)" 6001.000 approx
expect_rc 0 "sim inflight" "$BIN" run -w "$DATA/twocoll.csv" -s original --sim inflight=2 -o "$WORK/r8.csv"
same "$(field "$WORK/r8.csv" 2 6)" 10.000 inflight

# compare: the gate.  Base rows are edited by hand so each verdict is known.
cp "$WORK/r1.csv" "$WORK/base.csv"
expect_rc 0 "compare same" "$BIN" compare "$WORK/base.csv" "$WORK/r1.csv"
contains "$WORK/err" "2 rows: 2 ok, 0 regressed" "compare same"
# base peak of chain 300 -> 297: new 300 is +1.01% > 1% tolerance: regressed
sed 's/^chain,original,ok,4,0,22.000,300,/chain,original,ok,4,0,22.000,297,/' "$WORK/r1.csv" >"$WORK/b2.csv"
expect_rc 1 "compare mem regression" "$BIN" compare "$WORK/b2.csv" "$WORK/r1.csv"
contains "$WORK/out" "regressed" "mem regression"
contains "$WORK/out" "+1.01%" "mem change"
# ... but within --mem-tol 2
expect_rc 0 "compare mem tol" "$BIN" compare "$WORK/b2.csv" "$WORK/r1.csv" --mem-tol 2
# base makespan of overlap 40 -> 39.5: new 40 is +1.27% < 2%: ok; with 1%: regressed
sed 's/^overlap,original,ok,5,1,40.000,/overlap,original,ok,5,1,39.500,/' "$WORK/r1.csv" >"$WORK/b3.csv"
expect_rc 0 "compare time within" "$BIN" compare "$WORK/b3.csv" "$WORK/r1.csv"
expect_rc 1 "compare time tol" "$BIN" compare "$WORK/b3.csv" "$WORK/r1.csv" --time-tol 1
# base peak 300 -> 400: new is 25% lower: improved, exit 0
sed 's/^chain,original,ok,4,0,22.000,300,/chain,original,ok,4,0,22.000,400,/' "$WORK/r1.csv" >"$WORK/b4.csv"
expect_rc 0 "compare improved" "$BIN" compare "$WORK/b4.csv" "$WORK/r1.csv" --format csv
contains "$WORK/out" "chain,original,improved,400,300,-25.00%" "improved csv"
# a row only in base: missing, exit 1; only in new: new, exit 0
head -2 "$WORK/r1.csv" >"$WORK/b5.csv"
expect_rc 0 "compare new" "$BIN" compare "$WORK/b5.csv" "$WORK/r1.csv" --format markdown
contains "$WORK/out" "| overlap | original | new |" "new row"
expect_rc 1 "compare missing" "$BIN" compare "$WORK/r1.csv" "$WORK/b5.csv"
contains "$WORK/out" "missing" "missing row"
# a row that turned into an error
sed 's/^chain,original,ok,4,0,22.000,300,[^,]*,[^,]*,[^,]*,[^,]*,/chain,original,error:boom,4,0,,,,,,,/' "$WORK/r1.csv" >"$WORK/n6.csv"
expect_rc 1 "compare error" "$BIN" compare "$WORK/r1.csv" "$WORK/n6.csv"
contains "$WORK/out" "error" "error row"
# unusable input: exit 2 with file and line
printf 'workload,scheduler\nx,y\n' >"$WORK/junk.csv"
expect_rc 2 "compare junk" "$BIN" compare "$WORK/junk.csv" "$WORK/r1.csv"
contains "$WORK/err" "junk.csv:1: missing column 'status'" "compare junk"
sed 's/^overlap,original,ok,5,1,40.000,/overlap,original,ok,5,1,forty,/' "$WORK/r1.csv" >"$WORK/b7.csv"
expect_rc 2 "compare non-number" "$BIN" compare "$WORK/b7.csv" "$WORK/r1.csv"
contains "$WORK/err" "b7.csv:3: makespan_us 'forty' is not a number" "compare non-number"
cat "$WORK/r1.csv" <(tail -1 "$WORK/r1.csv") >"$WORK/b8.csv"
expect_rc 2 "compare duplicate" "$BIN" compare "$WORK/b8.csv" "$WORK/r1.csv"
contains "$WORK/err" "duplicate row for workload 'overlap'" "compare duplicate"

# --jobs and --shard/merge give the unsharded single-threaded file (timing aside)
ALLW="-s original,misbehave,misbehave:mode=fail --plugin $3/misbehave.so --quiet"
for f in chain overlap twocoll alias approx; do ALLW="$ALLW -w $DATA/$f.csv"; done
"$BIN" run $ALLW -o "$WORK/j1.csv" 2>/dev/null
"$BIN" run $ALLW -o "$WORK/j3.csv" --jobs 3 2>/dev/null
if cmp -s <(cut -d, -f1-11,13- "$WORK/j1.csv") <(cut -d, -f1-11,13- "$WORK/j3.csv"); then ok; else bad "jobs 3 differs"; fi
same "$(wc -l <"$WORK/j1.csv" | tr -d ' ')" 16 "5 workloads x 3 schedulers + header"
for k in 1 2 3 4; do "$BIN" run $ALLW -o "$WORK/s$k.csv" --shard $k/4 --jobs 2 2>/dev/null; done
expect_rc 0 merge "$BIN" merge "$WORK/s3.csv" "$WORK/s1.csv" "$WORK/s4.csv" "$WORK/s2.csv" -o "$WORK/m.csv"
# columns 12 (sched_ms) and 27 (shard) differ by design
if cmp -s <(cut -d, -f1-11,13-26,28- "$WORK/j1.csv") <(cut -d, -f1-11,13-26,28- "$WORK/m.csv"); then ok; else bad "merged shards differ"; fi
expect_rc 2 "merge twice" "$BIN" merge "$WORK/s1.csv" "$WORK/s1.csv" -o "$WORK/m2.csv"
contains "$WORK/err" "the same shard twice?" "merge twice"
expect_rc 2 "bad shard" "$BIN" run -w "$DATA/chain.csv" --shard 5/4 -o "$WORK/x.csv"
expect_rc 2 "bad jobs" "$BIN" run -w "$DATA/chain.csv" --jobs 0 -o "$WORK/x.csv"

# plot: images and scripts; without gnuplot on PATH, data and scripts only
mkdir -p "$WORK/p/mem"
"$BIN" run -w "$DATA/chain.csv" -w "$DATA/overlap.csv" -o "$WORK/p/res.csv" --mem-dir "$WORK/p/mem" --quiet
if command -v gnuplot >/dev/null; then
    expect_rc 0 plot "$BIN" plot "$WORK/p/res.csv" -o "$WORK/p/plots"
    for f in overlap.memory.png overlap.memory.svg chain.bars.png pareto.png pareto.svg; do
        if [ -s "$WORK/p/plots/$f" ]; then ok; else bad "plot $f missing"; fi
    done
fi
PATH=/nonexistent "$BIN" plot "$WORK/p/res.csv" -o "$WORK/p/noplot" >"$WORK/out" 2>"$WORK/err"
same "$?" 0 "plot without gnuplot"
contains "$WORK/err" "gnuplot not found" "plot without gnuplot"
if [ -s "$WORK/p/noplot/overlap.memory.gp" ] && [ -s "$WORK/p/noplot/overlap.memory.dat" ] &&
   [ ! -e "$WORK/p/noplot/overlap.memory.png" ]; then ok; else bad "plot without gnuplot files"; fi
expect_rc 2 "plot no workload" "$BIN" plot "$WORK/p/res.csv" -o "$WORK/p/plots" --workload nope

# no arguments: the default corpus into results/<sweep_id>.csv, relative to the
# cwd, never over results/latest.csv (issue 26: make run names that one)
mkdir -p "$WORK/repo/workloads/corpus" "$WORK/repo/results"
cp "$DATA/chain.csv" "$DATA/overlap.csv" "$WORK/repo/workloads/corpus/"
echo keep >"$WORK/repo/results/latest.csv"
(cd "$WORK/repo" && "$BIN" run --quiet) >"$WORK/out" 2>"$WORK/err"
same "$?" 0 "default run"
same "$(cat "$WORK/repo/results/latest.csv")" keep "default run leaves latest.csv"
out_csv=$(sed -n 's/.* -> \(results\/[0-9a-f]*\.csv\)$/\1/p' "$WORK/err")
same "$(col_of "$WORK/repo/$out_csv" sweep_id 2).csv" "$(basename "$out_csv")" "default run named after its sweep"
# one row per workload x every registered scheduler
n_sched=$("$BIN" list | awk '/^schedulers:/ {on = 1; next} /^$/ {on = 0} on && /^  [^ ]/ {n++} END {print n}')
same "$(wc -l <"$WORK/repo/$out_csv" | tr -d ' ')" $((1 + 2 * n_sched)) "default run rows"

# --machine (issue 9): the hand-derived figures of tests/test_machine.c
M="$DATA/two_dev.yaml"
expect_rc 0 "validate machine" "$BIN" validate --machine "$M" "$DATA/two_dev.csv"
contains "$WORK/out" "two_dev.yaml: 2 devices" "validate machine"
printf 'devices:\n  - {name: a, kind: tpu}\n' >"$WORK/bad.yaml"
expect_rc 2 "validate bad machine" "$BIN" validate --machine "$WORK/bad.yaml"
contains "$WORK/err" "bad.yaml:2:21: kind 'tpu' is not gpu, cpu or other" "validate bad machine"
expect_rc 2 "run bad machine" "$BIN" run -w "$DATA/two_dev.csv" -s original --machine "$WORK/bad.yaml" -o "$WORK/m0.csv" --quiet
# original keeps everything on gpu0: a 0..10, b 10..30, c 30..35; gpu0 holds
# x 1000 (0..2), a 4000 (1..3), b 2000 (2..3), c 100 (3): peak 7000 at b
expect_rc 0 "run machine" "$BIN" run -w "$DATA/two_dev.csv" -s original --machine "$M" -o "$WORK/m1.csv" --quiet
same "$(field "$WORK/m1.csv" 1 18),$(field "$WORK/m1.csv" 1 22)" "devices_used,over_capacity" "placement columns"
same "$(field "$WORK/m1.csv" 2 6)" 35.000 "machine makespan"
same "$(field "$WORK/m1.csv" 2 11)" 12.500 "machine lower bound"
same "$(field "$WORK/m1.csv" 2 18),$(field "$WORK/m1.csv" 2 19),$(field "$WORK/m1.csv" 2 21),$(field "$WORK/m1.csv" 2 22)" "1,0,7000;0,0" "machine one device used"
# a pre-assigned device: b on gpu1 is the two-transfer case (makespan 20)
sed 's/^id,name,kind,inputs,op,cost_us,out_bytes,flags$/&,device/; s/^2,b,compute,0,conv,20,2000,$/&,1/; s/^\([013],.*\)$/\1,/' "$DATA/two_dev.csv" >"$WORK/pre.csv"
# without a machine the run has one device: bad input, exit 2, not an invalid cell (issue 15)
expect_rc 2 "pre-assigned without machine" "$BIN" run -w "$WORK/pre.csv" -s original -o "$WORK/m2.csv" --quiet
contains "$WORK/err" "is pre-assigned to device 1, but with no --machine" "pre-assigned without machine"
expect_rc 0 "pre-assigned with machine" "$BIN" run -w "$WORK/pre.csv" -s original --machine "$M" -o "$WORK/m3.csv" --quiet
# compute_us: each node on its own device, 10 + 20/2 + 5
same "$(field "$WORK/m3.csv" 2 9)" 25.000 "pre-assigned compute"
same "$(field "$WORK/m3.csv" 2 6),$(field "$WORK/m3.csv" 2 19),$(field "$WORK/m3.csv" 2 21),$(field "$WORK/m3.csv" 2 22)" "20.000,3000,6100;3000,1" "pre-assigned figures"
# the Chrome trace gives each device its own process: b runs on gpu1 (pid 2)
mkdir -p "$WORK/mtr"
expect_rc 0 "machine trace" "$BIN" run -w "$WORK/pre.csv" -s original --machine "$M" --trace-dir "$WORK/mtr" -o "$WORK/m4.csv" --quiet
contains "$WORK/mtr/pre__original.json" '"name":"b","cat":"compute","ph":"X","pid":2' "machine trace"
contains "$WORK/mtr/pre__original.json" '"name":"pre / original / gpu1"' "machine trace"
# compare: a row that newly exceeds a device's capacity regresses even when faster
printf 'workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,over_capacity\nw,s,ok,10,5,0,0\n' >"$WORK/c0.csv"
printf 'workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,over_capacity\nw,s,ok,9,5,0,1\n' >"$WORK/c1.csv"
expect_rc 1 "compare over capacity" "$BIN" compare "$WORK/c0.csv" "$WORK/c1.csv" --format csv
contains "$WORK/out" "w,s,regressed" "compare over capacity"

# issue 26, 11: a placement workload generated outside workloads/corpus still
# finds its machine (# machine=../machines/gpu4-nvlink.yaml, by name): heft
# spreads it over the 4 GPUs
mkdir -p "$WORK/away"
expect_rc 0 "gen elsewhere" "$BIN" gen dag --nodes 50 -o "$WORK/away/d.csv"
expect_rc 0 "run elsewhere" "$BIN" run -q -w "$WORK/away/d.csv" -s heft -o "$WORK/away/r.csv"
same "$(col_of "$WORK/away/r.csv" devices_used 2)" 4 "machine of a workload generated elsewhere"

# Inductor's NCCL estimators (issue 40): one all_reduce of 1 MiB over 8
# ranks under the classic model is 15.0 us + 14e9 / (1024 * 1128) ns =
# 27.120 us (docs/cost-model.md), named in cost_model and cost_params; the
# approx model refuses it; a bucketed overlap schedule runs.
printf 'id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group\n0,ar,start,,,,1048576,all_reduce,1048576,8\n1,w,done,0,,,,all_reduce,,\n2,c,compute,1,mm,5,64,,,\n' >"$WORK/ind.csv"
expect_rc 0 "run --comm inductor-classic" "$BIN" run -w "$WORK/ind.csv" -s original -o "$WORK/ind_out.csv" --comm inductor-classic --quiet
same "$(col_of "$WORK/ind_out.csv" comm_us 2)" "27.120" "inductor-classic comm_us"
same "$(col_of "$WORK/ind_out.csv" cost_model 2)" "analytical+inductor-classic" "inductor cost_model"
contains "$WORK/ind_out.csv" "intra_node_bw=300" "inductor cost_params"
expect_rc 2 "inductor with approx" "$BIN" run -w "$WORK/ind.csv" -s original -o "$WORK/ind_x.csv" --comm inductor-multi --cost-model approx
contains "$WORK/err" "--comm inductor-* prices collectives in time" "inductor with approx says why"
# the same estimator as `collective --backend`: §3.3's classic H100 AR 1 MiB
# x 8 (27120.5 ns) and newest AG 64 MiB x 8 ((32.2 + 67108864 * 7 / 2960000) us = 190903.4 ns, ring Simple)
expect_rc 0 "collective inductor-classic" "$BIN" collective --backend inductor-classic --op all_reduce --size 1MiB --npus 8
contains "$WORK/out" "27120.5 ring LL" "collective inductor-classic value"
expect_rc 0 "collective inductor-multi" "$BIN" collective --backend inductor-multi --op all_gather --size 64MiB --npus 8
contains "$WORK/out" "190903.4 ring Simple" "collective inductor-multi value"
expect_rc 2 "collective inductor bad key" "$BIN" collective --backend inductor-multi --op all_reduce --cost gpu=h100
contains "$WORK/err" "volta|ampere|hopper|blackwell" "collective inductor bad key says which"
expect_rc 0 "overlap:bucket=overlap" "$BIN" run -w "$DATA" -s overlap:bucket=overlap,overlap:bucket=greedy -o "$WORK/bk.csv" --quiet
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
