#!/usr/bin/env bash
# Issue 26: figures a report writer keeps (plot), the answer at a glance
# (summary), machine-readable output (compare/summary --format json), the
# report page.  Arguments: schedbench BIN, test data DIR, scratch DIR.
# Figures are checked in the gnuplot scripts and data plot writes (and in the
# SVG where gnuplot is installed); expected numbers are derived in comments.
set -u
BIN=$1 DATA=$2 WORK=$3/report_work
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
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1"; head -c 3000 "$1" >&2; fi
}
lacks() { # file needle description
    if grep -qF -- "$2" "$1"; then bad "$3: '$2' in $1"; else ok; fi
}
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
exists() { if [ -e "$1" ]; then ok; else bad "$2: $1 missing"; fi; }
absent() { if [ -e "$1" ]; then bad "$2: $1 exists"; else ok; fi; }
HAVE_GNUPLOT=0
command -v gnuplot >/dev/null && HAVE_GNUPLOT=1
col() { # csv column-name row(1 = first data row)
    awk -F, -v n="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                                 NR == r + 1 { print $c }' "$1"
}

# ---- 1. memory timelines belong to their run -----------------------------------
R=$WORK/r1
mkdir -p "$R"
expect_rc 0 "run with timelines" "$BIN" run -q -w "$DATA/chain.csv" -s original -o "$R/a.csv" --mem-dir "$R/mem"
# the timeline carries the run's sweep_id (results column sweep_id)
same "$(col "$R/mem/chain__original.csv" sweep_id 1)" "$(col "$R/a.csv" sweep_id 1)" "timeline sweep_id"
# another run of the same workload (other --cost) beside it, without timelines
expect_rc 0 "other run" "$BIN" run -q -w "$DATA/chain.csv" -s original --cost lat_us=7 -o "$R/b.csv"
expect_rc 0 "plot other run" "$BIN" plot "$R/b.csv" -o "$R/pb"
contains "$WORK/out" "skipped chain's memory plot: its timelines in the --mem-dir folder belong to another run" "foreign timelines refused"
absent "$R/pb/chain.memory.gp" "foreign timelines not drawn"
expect_rc 0 "plot own run" "$BIN" plot "$R/a.csv" -o "$R/pa"
exists "$R/pa/chain.memory.gp" "own timelines drawn"
# a stale image of the refused plot does not stay behind
expect_rc 0 "plot other run into the same folder" "$BIN" plot "$R/b.csv" -o "$R/pa"
absent "$R/pa/chain.memory.svg" "stale memory plot removed"
# a timeline from before sweep_id: refused with the reason
printf 'position,node,name,mem_bytes,begin_us,end_us\n0,0,x,100,0,0\n' >"$R/mem/chain__original.csv"
expect_rc 0 "plot old timeline" "$BIN" plot "$R/a.csv" -o "$R/pc"
contains "$WORK/out" "have no sweep_id (written by an older schedbench)" "old timeline refused"

# ---- 2. unknown memory is not 0 --------------------------------------------------
# An ASTRA-sim text workload has no tensor sizes: peak_mem_bytes is empty.
U=$WORK/u
mkdir -p "$U"
printf 'MICRO\n2\nconv1 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1048576 5\nconv2 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE 1048576 5\n' >"$U/micro.txt"
expect_rc 0 "run astra text" "$BIN" run -q -w "$U/micro.txt" -w "$DATA/chain.csv" -s original,overlap -o "$U/r.csv" --mem-dir "$U/mem"
same "$(col "$U/r.csv" peak_mem_bytes 1)" "" "astra text peak is empty"
expect_rc 0 "plot unknown memory" "$BIN" plot "$U/r.csv" -o "$U/p"
contains "$WORK/out" "skipped micro's scatter: peak memory not measured" "scatter skipped"
contains "$WORK/out" "skipped micro in pareto: peak memory not measured" "pareto reason"
lacks "$WORK/out" "micro in pareto and heatmap: no ok 'original' row" "no false blame on original"
absent "$U/p/micro.scatter.gp" "no scatter of unknown memory"
# bars: no peak panel (two panels: makespan and exposed), and the title says why
contains "$U/p/micro.bars.gp" "peak memory not measured: no tensor sizes" "bars title"
contains "$U/p/micro.bars.gp" "set multiplot layout 1,2" "bars without peak panel"
lacks "$U/p/micro.bars.gp" "set title 'peak memory'" "bars without peak panel"
# the bars data say '?' for the peak, not 0: "original" makespan lb pct ? exposed
same "$(awk '$1 == "\"original\"" { print $5 }' "$U/p/micro.bars.dat")" "?" "bars peak unknown"
# heatmap: the peak cell reads n/a, the makespan one is there (original = 1.00)
same "$(awk '$1 == 0 && $2 == 0 { print $5, $6 }' "$U/p/heatmap.dat")" "1.00 n/a" "heatmap n/a"
# summary says unknown, not 0
expect_rc 0 "summary unknown memory" "$BIN" summary "$U/r.csv" --workload micro
contains "$WORK/out" "unknown" "summary unknown peak"
contains "$WORK/out" "best peak:         unknown" "summary unknown best peak"

# ---- 3, 17. pareto: a style per scheduler, log axes --------------------------------
P=$WORK/p
mkdir -p "$P"
expect_rc 0 "run all" "$BIN" run -q -w "$DATA/overlap.csv" -w "$DATA/chain.csv" -s all -o "$P/r.csv" --mem-dir "$P/mem"
n_sched=$(tail -n +2 "$P/r.csv" | cut -d, -f2 | sort -u | wc -l)
expect_rc 0 "plot all" "$BIN" plot "$P/r.csv" -o "$P/out"
# issue 38, item 8: colour per policy, shape per workload (the points' third
# column, pt variable); the key names each policy's colour and each workload's shape
contains "$P/out/pareto.gp" "using 1:2:3 with points pt variable" "pareto shape per workload"
colours=$(grep "^    NaN with points pt 7 " "$P/out/pareto.gp" | grep -v "#555555" | grep -o "lc rgb '#[0-9a-f]*'" | sort -u | wc -l)
# every built-in policy a colour of its own (twenty colours)
same "$colours" "$n_sched" "pareto distinct colours"
shapes=$(grep "^    NaN with points pt [0-9]* ps 1.4 lc rgb '#555555' title" "$P/out/pareto.gp" | grep -o "pt [0-9]*" | sort -u | wc -l)
same "$shapes" 2 "pareto: a shape for each of the two workloads"
same "$(awk '$3 != "" { print $3 }' "$P/out/pareto.dat" | sort -u | wc -l)" 2 "pareto points carry their workload's shape"
# a narrow log axis still has six tick labels, not two
awk '/set ytics/ { n = gsub(/\x27[0-9.e+-]*\x27 /, "&"); if (n < 6) exit 1 }' "$P/out/pareto.gp" && ok || bad "pareto y tick labels: $(grep ytics "$P/out/pareto.gp")"
# issue 38, item 9: a policy's colour is the same whatever subset is plotted
expect_rc 0 "plot --schedulers" "$BIN" plot "$P/r.csv" -o "$P/sub" --schedulers ready,overlap,original
c_all=$(grep "NaN with points pt 7 .* title 'overlap'" "$P/out/pareto.gp" | grep -o "rgb '#[0-9a-f]*'")
c_sub=$(grep "NaN with points pt 7 .* title 'overlap'" "$P/sub/pareto.gp" | grep -o "rgb '#[0-9a-f]*'")
same "$c_sub" "$c_all" "overlap's colour with and without --schedulers"
[ -n "$c_all" ] && ok || bad "overlap has no colour in pareto.gp"
m_all=$(grep "title 'overlap (" "$P/out/overlap.memory.gp" | grep -o "lc rgb '#[0-9a-f]*'")
m_sub=$(grep "title 'overlap (" "$P/sub/overlap.memory.gp" | grep -o "lc rgb '#[0-9a-f]*'")
same "$m_sub" "$m_all" "overlap's memory line colour with and without --schedulers"
lacks "$P/sub/pareto.gp" "title 'aggressive'" "--schedulers leaves aggressive out"
expect_rc 2 "plot --schedulers unknown" "$BIN" plot "$P/r.csv" -o "$P/sub2" --schedulers ready,nosuch
contains "$WORK/err" "no row of $P/r.csv has scheduler 'nosuch'" "--schedulers names the unknown policy"
# report --schedulers: the page and its figures hold only those policies,
# with the timelines beside the results as without it
expect_rc 0 "report --schedulers" "$BIN" report "$P/r.csv" -o "$P/sub.html" --schedulers original,overlap
contains "$P/sub.html" "only --schedulers original,overlap" "report names its subset"
lacks "$P/sub.html" ">aggressive<" "report --schedulers leaves aggressive out"
contains "$P/sub.html" "live memory" "report --schedulers keeps the memory plots"
expect_rc 2 "report --schedulers unknown" "$BIN" report "$P/r.csv" -o "$P/sub2.html" --schedulers nosuch
contains "$WORK/err" "has scheduler 'nosuch'" "report --schedulers names the unknown policy"
# legends name the policy a line coincides with, not a line number
for g in "$P"/out/*.memory.gp; do lacks "$g" "same as line" "legend by number in $g"; done
grep -q "same line as [a-z]" "$P"/out/*.memory.gp && ok || bad "no coinciding lines named in the memory legends"
contains "$P/out/pareto.gp" "set logscale xy" "pareto log axes"
contains "$P/out/pareto.gp" "makespan / original makespan (log scale)" "pareto axis says log"
contains "$P/out/heatmap.gp" "ratio to original (log scale)" "heatmap colour scale says log"
# the memory plot: distinct colours for its lines too, legend above the chart
lines=$(grep -c "with steps" "$P/out/overlap.memory.gp")
lc=$(grep "with steps" "$P/out/overlap.memory.gp" | grep -o "lc rgb '#[0-9a-f]*'" | sort -u | wc -l)
same "$lc" "$lines" "memory lines distinct colours"
contains "$P/out/overlap.memory.gp" "set key above" "memory legend above"

# ---- 12. cosmetics -----------------------------------------------------------------
# units: "(KB = 10^3 bytes)" (overlap peaks at 5020 bytes), never "bytes))"
contains "$P/out/overlap.bars.gp" "peak memory (KB = 10^3 bytes)" "memory unit"
lacks "$P/out/overlap.bars.gp" "bytes))" "no doubled parenthesis"
lacks "$P/out/overlap.memory.gp" "bytes))" "no doubled parenthesis"
# chain has no collectives: no exposed-communication panel, and the title says so
contains "$P/out/chain.bars.gp" "no exposed communication in any schedule" "exposed panel dropped"
lacks "$P/out/chain.bars.gp" "set title 'exposed communication'" "exposed panel dropped"
# chain: every policy keeps the file order (one chain), so all land on one
# point of the scatter, labelled once with every name
same "$(wc -l <"$P/out/chain.scatter.dat")" 1 "scatter one point"
contains "$P/out/chain.scatter.dat" '"original, aggressive, overlap' "scatter labels joined"
# a row without a lower bound gets no marker (not one at 0 on the tick labels)
printf 'workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,peak_pos,makespan_lb_us\nw,original,ok,10,100,0,0,0\nw,x,ok,20,100,0,0,5\n' >"$WORK/lb.csv"
expect_rc 0 "plot without bound" "$BIN" plot "$WORK/lb.csv" -o "$WORK/lb"
same "$(awk '$1 == "\"original\"" { print $3 $4 }' "$WORK/lb/w.bars.dat")" "??" "no bound, no marker"
# x: 20 us against a bound of 5: (20 - 5) / 5 = +300.00 %
same "$(awk '$1 == "\"x\"" { print $3, $4 }' "$WORK/lb/w.bars.dat")" "5.000000 300.00" "bound and gap"
if [ "$HAVE_GNUPLOT" = 1 ]; then
    # each bar's distance to its bound is printed once: one "+300.0%" in the SVG
    same "$(grep -o '>+300.0%<' "$WORK/lb/w.bars.svg" | wc -l)" 1 "gap label once"
    same "$(grep -c '>+[0-9.]*%<' "$WORK/lb/w.bars.svg")" 1 "no gap label without bound"
fi
# several devices: a panel per scheduler, a line per device named in the
# legend (point 15; the figures are checked with the Gantt chart below)
M=$WORK/m
mkdir -p "$M"
expect_rc 0 "run two devices" "$BIN" run -q -w "$DATA/two_dev.csv" -s original,heft --machine "$DATA/two_dev.yaml" -o "$M/r.csv" --mem-dir "$M/mem"
expect_rc 0 "plot two devices" "$BIN" plot "$M/r.csv" -o "$M/p"
contains "$M/p/two_dev.memory.gp" "live memory of each device, a panel per scheduler" "multi-device memory title"
contains "$M/p/two_dev.memory.gp" "title 'gpu0 (peak" "multi-device legend names the device"
# one device stays one line per scheduler, without panels
lacks "$U/p/chain.memory.gp" "multiplot" "one device: no panels"
contains "$U/p/chain.memory.gp" "title 'original (peak" "one device: a line per scheduler"

# ---- 9. units of --mem-cap ------------------------------------------------------------
# one rule with a machine's mem_bytes (issue 42): a bare number is bytes, and
# one below 1 MiB is refused as a missing unit (it was GB before: 80 meant
# 80 GB, and is refused now rather than drawn at 80 bytes)
expect_rc 2 "mem-cap bare GB of old" "$BIN" plot "$P/r.csv" -o "$P/cap" --mem-cap 80
contains "$WORK/err" "--mem-cap '80' is not a capacity (1 B .. 1 PiB" "mem-cap bare number refused"
contains "$WORK/err" "below 1 MiB without a unit" "mem-cap says why"
# 80e9 bytes = 80 GB: the same line as 80GB and 80gb (the case of a unit is free)
expect_rc 0 "mem-cap bare bytes" "$BIN" plot "$P/r.csv" -o "$P/cap" --mem-cap 80e9 --workload overlap
contains "$P/cap/overlap.memory.gp" "memory cap 80 GB" "mem-cap 80e9 is 80 GB"
expect_rc 0 "mem-cap lower-case unit" "$BIN" plot "$P/r.csv" -o "$P/cap2" --mem-cap 80gb --workload overlap
contains "$P/cap2/overlap.memory.gp" "memory cap 80 GB" "mem-cap 80gb is 80 GB"
expect_rc 2 "mem-cap unknown unit" "$BIN" plot "$P/r.csv" -o "$P/cap" --mem-cap 80Gb/s
contains "$WORK/err" "80GB, 80GiB, 512MiB" "mem-cap units listed"
# 4 KiB = 4096 bytes = 4.096 KB, printed with 3 significant digits: 4.1 KB
expect_rc 0 "mem-cap KiB" "$BIN" plot "$P/r.csv" -o "$P/cap" --mem-cap 4KiB --workload overlap
contains "$P/cap/overlap.memory.gp" "memory cap 4.1 KB" "mem-cap KiB"

# ---- 10. did you mean ---------------------------------------------------------------------
expect_rc 2 "plot unknown workload" "$BIN" plot "$P/r.csv" -o "$P/x" --workload overlapp
contains "$WORK/err" "no rows for workload 'overlapp' (did you mean 'overlap'?); its workloads: overlap, chain" "plot --workload lists names"
expect_rc 2 "unknown command" "$BIN" plto
contains "$WORK/err" "unknown command 'plto' (did you mean 'plot'?)" "command did you mean"
expect_rc 2 "plot unknown option" "$BIN" plot "$P/r.csv" --workloads x
contains "$WORK/err" "(did you mean '--workload'?)" "option did you mean"

# ---- 13. the answer at a glance: summary, and run's closing table ----------------------
# Hand-made results.  w: original 100 us / 1000 B, fast 50 / 2000, lean 200 / 500;
# v: original 10 / 100, fast 20 / 100.  Ratios to original: fast 0.5 and 2 on w,
# 2 and 1 on v; lean 2 and 0.5 on w.  Geometric means over both workloads: fast
# makespan sqrt(0.5 * 2) = 1, peak sqrt(2 * 1) = 1.414.
S=$WORK/s
mkdir -p "$S"
cat >"$S/r.csv" <<'CSV'
workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,lb_gap_pct,dev_peak_bytes
w,original,ok,100,1000,10,25,1000;0
w,fast,ok,50,2000,0,0,1500;2000
w,lean,ok,200,500,0,150,500;0
w,broken,error:boom,,,,,
v,original,ok,10,100,0,0,100
v,fast,ok,20,100,0,100,100
CSV
expect_rc 0 summary "$BIN" summary "$S/r.csv"
contains "$WORK/out" "best makespan:     fast (50 us)" "w best makespan"
contains "$WORK/out" "best peak:         lean (0.5 KB)" "w best peak"
contains "$WORK/out" "best makespan:     original (10 us)" "v best makespan"
contains "$WORK/out" "best peak:         original, fast (100 B)" "v best peak, a tie names both"
same "$(awk '$1 == "fast" && $2 == "50" { print $4, $5, $8 }' "$WORK/out")" "0.500 +0.0% 2.000" "fast row on w"
same "$(awk '$1 == "lean" && $2 == "200" { print $4, $5, $8 }' "$WORK/out")" "2.000 +150.0% 0.500" "lean row"
contains "$WORK/out" "broken" "failed row listed"
contains "$WORK/out" "error:boom" "failed row status"
# across workloads: fast 1.000 over 2 workloads, best once by makespan (w), once by peak (v)
same "$(awk '/^across/ { on = 1 } on && $1 == "fast" { print $2, $3, $4, $5, $6, $7 }' "$WORK/out")" \
    "1.000 (2) 1 1.414 (2) 1" "fast across workloads"
# policy against policy: w original / fast = 100 / 50 = 2
expect_rc 0 "summary --vs" "$BIN" summary "$S/r.csv" --vs fast --workload w
same "$(awk '$1 == "original" { print $4, $8 }' "$WORK/out")" "2.000 0.500" "ratios to fast"
expect_rc 2 "summary --vs unknown" "$BIN" summary "$S/r.csv" --vs fsat
contains "$WORK/err" "(did you mean 'fast'?)" "summary --vs did you mean"
# run ends with the summary unless --quiet
expect_rc 0 "run prints summary" "$BIN" run -w "$DATA/chain.csv" -s original,minmem -o "$S/run.csv"
contains "$WORK/out" "best makespan:     original, minmem (22 us): fits" "run's closing summary"
expect_rc 0 "run --quiet" "$BIN" run -q -w "$DATA/chain.csv" -s original -o "$S/run.csv"
same "$(cat "$WORK/out")" "" "run --quiet prints nothing"

# ---- 16. machine-readable output ---------------------------------------------------------
expect_rc 0 "summary json" "$BIN" summary "$S/r.csv" --format json
contains "$WORK/out" '"makespan_ratio": 0.5' "json ratio"
contains "$WORK/out" '"peak_mem_bytes": null' "json unknown is null"
contains "$WORK/out" '"geomean_makespan_ratio": 1' "json geomean"
expect_rc 0 "summary csv" "$BIN" summary "$S/r.csv" --format csv
contains "$WORK/out" "w,lean,ok,200.000,500,0.000,150.000,2.000000,0.500000,0,1" "csv row"
# per-device peaks in long format: one row per device
expect_rc 0 "devices" "$BIN" summary "$S/r.csv" --devices
same "$(grep -c '^w,fast,' "$WORK/out")" 2 "two devices, two rows"
contains "$WORK/out" "w,fast,1,2000" "device 1 of fast"
expect_rc 0 "devices json" "$BIN" summary "$S/r.csv" --devices --format json
contains "$WORK/out" '"device": 1' "devices json"
if command -v python3 >/dev/null; then
    "$BIN" summary "$S/r.csv" --format json | python3 -c 'import json,sys; json.load(sys.stdin)' && ok || bad "summary json parses"
fi

# ---- issue 35, 4. answers that fit -----------------------------------------------------------
# Hand-made results on devices of 2000 bytes (dev_cap_bytes).
#   w: ready 100 us at 3000 B: over its device (over_capacity 1); aggressive
#      150 us at 1800 B fits, but its policy was given a limit of 1500 B
#      (mem_limit_bytes) and went above it; original 200 us at 1000 B fits.
#      Fastest: ready, which does NOT fit; fastest that fits: aggressive.
#   v: ready 10, aggressive 20, original 40 us, 100 B each: all fit.
# Ratios to original: w ready 100/200 = 0.5 and 3000/1000 = 3, aggressive 0.75
# and 1.8; v ready 10/40 = 0.25, aggressive 0.5, peaks all 1.
# The ranking counts only rows that fit, so ready is left out on w:
#   ready      makespan 0.25 over 1 workload, best on v (10 us); peak 1 (1),
#              best peak on v (a tie of three at 100 B); over capacity once
#   aggressive makespan sqrt(0.75 * 0.5) = 0.612 (2), best on w among the
#              rows that fit; peak sqrt(1.8 * 1) = 1.342 (2), best peak on v
#   original   best peak twice: w's smallest that fits (1000 B) and v's tie
# --include-over-capacity counts ready on w too: sqrt(0.5 * 0.25) = 0.354 (2),
# best makespan twice; peak sqrt(3 * 1) = 1.732 (2); aggressive best 0 times.
FT=$WORK/fits
mkdir -p "$FT"
cat >"$FT/r.csv" <<'CSV'
workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,over_capacity,dev_cap_bytes,mem_limit_bytes
w,ready,ok,100,3000,0,1,2000,
w,aggressive,ok,150,1800,0,0,2000,1500
w,original,ok,200,1000,0,0,2000,
v,ready,ok,10,100,0,0,2000,
v,aggressive,ok,20,100,0,0,2000,
v,original,ok,40,100,0,0,2000,
CSV
expect_rc 0 "summary fits" "$BIN" summary "$FT/r.csv"
contains "$WORK/out" "best makespan:     ready (100 us, 3 KB): does NOT fit (1 device over capacity)" "fastest marked as not fitting"
contains "$WORK/out" "fastest that fits: aggressive (150 us, 1.8 KB)" "fastest that fits"
# v's fastest fits: said on its line, no second line naming it again
contains "$WORK/out" "best makespan:     ready (10 us, 100 B): fits" "fastest fits"
same "$(grep -c 'fastest that fits' "$WORK/out")" 1 "fastest that fits only where it differs"
# every row says whether it fits (last column)
same "$(awk '/^w$/ { on = 1 } /^v$/ { on = 0 } on && $1 == "ready" && $2 == "100" { print $11, $12, $13, $14 }' "$WORK/out")" \
    "NO (1 device over)" "ready's row does not fit"
same "$(awk '/^w$/ { on = 1 } /^v$/ { on = 0 } on && $1 == "original" && $2 == "200" { print $11 }' "$WORK/out")" \
    "yes" "original's row fits"
contains "$WORK/out" "yes, above its own limit (1.5 KB)" "above its own limit"
same "$(awk '/^across/ { on = 1 } on && $1 == "ready" { print $2, $3, $4, $5, $6, $7, $8 }' "$WORK/out")" \
    "0.250 (1) 1 1.000 (1) 1 1" "ranking leaves out the row that does not fit"
same "$(awk '/^across/ { on = 1 } on && $1 == "aggressive" { print $2, $3, $4, $5, $6, $7, $8 }' "$WORK/out")" \
    "0.612 (2) 1 1.342 (2) 1 0" "ranking of the fastest that fits"
same "$(awk '/^across/ { on = 1 } on && $1 == "original" { print $5, $6, $7 }' "$WORK/out")" \
    "1.000 (2) 2" "best peak among rows that fit"
contains "$WORK/out" "only rows that fit their devices' memory count (--include-over-capacity counts all)" "ranking says what it counts"
expect_rc 0 "summary --include-over-capacity" "$BIN" summary "$FT/r.csv" --include-over-capacity
same "$(awk '/^across/ { on = 1 } on && $1 == "ready" { print $2, $3, $4, $5, $6, $7, $8 }' "$WORK/out")" \
    "0.354 (2) 2 1.732 (2) 1 1" "every row counted on request"
same "$(awk '/^across/ { on = 1 } on && $1 == "aggressive" { print $4 }' "$WORK/out")" "0" "aggressive never fastest of all"
expect_rc 2 "summary option did you mean" "$BIN" summary "$FT/r.csv" --include-over-capacty
contains "$WORK/err" "(did you mean '--include-over-capacity'?)" "did you mean the new option"
# csv: ... best_makespan,best_peak,fits,over_limit,fastest_that_fits
expect_rc 0 "summary csv fits" "$BIN" summary "$FT/r.csv" --format csv
contains "$WORK/out" "best_peak,fits,over_limit,fastest_that_fits" "csv header"
contains "$WORK/out" "w,ready,ok,100.000,3000,0.000,,0.500000,3.000000,1,0,0,,0" "csv ready: fastest, does not fit"
contains "$WORK/out" "w,aggressive,ok,150.000,1800,0.000,,0.750000,1.800000,0,0,1,1,1" "csv aggressive: fits, above its limit"
# json: fits per row (null when the file does not say), fastest_that_fits per workload
expect_rc 0 "summary json fits" "$BIN" summary "$FT/r.csv" --format json
if command -v python3 >/dev/null; then
    same "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["workloads"][0]
rows = {r["scheduler"]: r for r in w["rows"]}
print(w["workload"], w["best_makespan"], w["fastest_that_fits"], d["include_over_capacity"],
      rows["ready"]["fits"], rows["ready"]["devices_over_capacity"],
      rows["aggressive"]["fits"], rows["aggressive"]["over_limit"],
      rows["original"]["over_limit"], rows["aggressive"]["mem_limit_bytes"],
      [p["workloads_over_capacity"] for p in d["policies"]])' "$WORK/out")" \
        "w ['ready'] ['aggressive'] False False 1 True True None 1500.0 [1, 0, 0]" "json fits"
    "$BIN" summary "$S/r.csv" --format json >"$FT/old.json"
    same "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print({r["fits"] for w in d["workloads"] for r in w["rows"]}, d["workloads"][0]["fastest_that_fits"])' "$FT/old.json")" \
        "{None} None" "json fits unknown in a file without over_capacity"
else
    echo "skipped: summary json fits (no python3)"
fi
# a file without over_capacity (from before placement): fits reads '-', no line on it
expect_rc 0 "summary old file" "$BIN" summary "$S/r.csv" --workload w
same "$(awk '$1 == "fast" && $2 == "50" { print $11 }' "$WORK/out")" "-" "fit unknown"
lacks "$WORK/out" "fastest that fits" "no fit line without capacity"
# the report: the same, as HTML
expect_rc 0 "report fits" "$BIN" report "$FT/r.csv" -o "$FT/r.html"
contains "$FT/r.html" '<td class="bad">NO (1 device over)</td>' "report row does not fit"
contains "$FT/r.html" "best makespan: <b>ready</b> (100 us, 3 KB): does NOT fit (1 device over capacity); fastest that fits: <b>aggressive</b> (150 us, 1.8 KB)" "report fastest that fits"
contains "$FT/r.html" "<td>0.250 (1)</td>" "report ranking counts rows that fit"
expect_rc 0 "report --include-over-capacity" "$BIN" report "$FT/r.csv" -o "$FT/all.html" --include-over-capacity
contains "$FT/all.html" "<td>0.354 (2)</td>" "report ranking counts every row on request"

# ---- issue 35, 4. the memory plot draws the devices' capacity -------------------------------
# Hand-made: w on devices of 2000 bytes (dev_cap_bytes); ready peaks at 3000 B
# (over_capacity 1), original at 1000 B.  Memory is plotted in KB (largest peak
# 3000 B), so the capacity line is at 2000 / 1000 = 2 KB, and the axis reaches
# the largest peak: 3 * 1.08 = 3.24.
FP=$WORK/fitplot
mkdir -p "$FP/mem"
cat >"$FP/r.csv" <<'CSV'
workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,peak_pos,sweep_id,dev_peak_bytes,over_capacity,dev_cap_bytes
w,ready,ok,100,3000,0,1,s1,3000,1,2000
w,original,ok,200,1000,0,0,s1,1000,0,2000
CSV
printf 'position,node,name,mem_bytes,begin_us,end_us,sweep_id\n0,0,a,1000,0,50,s1\n1,1,b,3000,50,100,s1\n' >"$FP/mem/w__ready.csv"
printf 'position,node,name,mem_bytes,begin_us,end_us,sweep_id\n0,0,a,1000,0,100,s1\n1,1,b,500,100,200,s1\n' >"$FP/mem/w__original.csv"
expect_rc 0 "plot capacity" "$BIN" plot "$FP/r.csv" -o "$FP/p"
contains "$FP/p/w.memory.gp" "set arrow 1 from graph 0, first 2.000000 to graph 1, first 2.000000" "capacity line without --mem-cap"
contains "$FP/p/w.memory.gp" "set label 1 'device capacity 2 KB'" "capacity line labelled"
contains "$FP/p/w.memory.gp" "set yrange [0:3.240000]" "memory axis reaches the largest peak"
contains "$FP/p/w.memory.gp" "title 'ready (peak 3 KB, does NOT fit)'" "legend says which does not fit"
contains "$FP/p/w.memory.gp" "title 'original (peak 1 KB)'" "legend of a row that fits"
# the bars' peak panel draws it too (the same 2 KB line), and stretches its
# axis only when the line is above every bar: here the 3 KB peak is higher
contains "$FP/p/w.bars.gp" "set arrow 1 from graph 0, first 2.000000 to graph 1, first 2.000000" "capacity on the bars"
contains "$FP/p/w.bars.gp" "set label 1 'device capacity 2 KB'" "bars capacity labelled"
# --mem-cap overrides it: 2.5 KB
expect_rc 0 "plot --mem-cap over capacity" "$BIN" plot "$FP/r.csv" -o "$FP/o" --mem-cap 2.5KB
contains "$FP/o/w.memory.gp" "set label 1 'memory cap 2.5 KB' at graph 0.99, first 2.500000" "--mem-cap wins"
lacks "$FP/o/w.memory.gp" "device capacity" "--mem-cap replaces the capacity"
# devices of 2000 and 4000 bytes: the line is the smallest (2 KB), and says so
sed 's/,2000$/,2000;4000/' "$FP/r.csv" >"$FP/two.csv"
expect_rc 0 "plot two capacities" "$BIN" plot "$FP/two.csv" -o "$FP/t" --mem-dir "$FP/mem"
contains "$FP/t/w.memory.gp" "set label 1 'smallest device capacity 2 KB' at graph 0.99, first 2.000000" "smallest capacity"
# 80 GB devices: 8e10 / 3000 is far past 4 times the largest peak; named in the
# title, not drawn (every line would lie flat at the bottom)
sed 's/,2000$/,80000000000/' "$FP/r.csv" >"$FP/big.csv"
expect_rc 0 "plot big capacity" "$BIN" plot "$FP/big.csv" -o "$FP/b" --mem-dir "$FP/mem"
contains "$FP/b/w.memory.gp" "set title 'w (device capacity 80 GB, far above every peak)'" "far capacity named"
lacks "$FP/b/w.memory.gp" "set arrow 1" "far capacity not drawn"
contains "$FP/b/w.bars.gp" "set title 'peak memory (device capacity 80 GB, far above every peak)'" "far capacity named on the bars"
# a results file without dev_cap_bytes: no line, as before
cut -d, -f1-10 "$FP/r.csv" >"$FP/old.csv"
expect_rc 0 "plot without capacity" "$BIN" plot "$FP/old.csv" -o "$FP/n" --mem-dir "$FP/mem"
lacks "$FP/n/w.memory.gp" "set arrow 1" "no capacity, no line"
# the report draws it too: its memory figure comes from plot
if [ "$HAVE_GNUPLOT" = 1 ]; then
    expect_rc 0 "report capacity" "$BIN" report "$FP/r.csv" -o "$FP/r.html"
    contains "$FP/r.html" "device capacity 2 KB" "report's memory plot has the capacity"
fi

# ---- 6, 7, 16. compare across network models, by policy name, as json ----------------------
C=$WORK/c
mkdir -p "$C"
H='workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us,cost_model'
printf '%s\nw,original,ok,100,1000,10,analytical\nw,aggressive,ok,90,1000,5,analytical\n' "$H" >"$C/simple.csv"
printf '%s\nw,original,ok,120,1000,30,analytical+astra\nw,aggressive,ok,90,1000,5,analytical+astra\n' "$H" >"$C/astra.csv"
printf '%s\nw,original,ok,100,1000,10,approx\nw,aggressive,ok,90,1000,5,approx\n' "$H" >"$C/approx.csv"
expect_rc 2 "two network models refused by default" "$BIN" compare "$C/simple.csv" "$C/astra.csv"
contains "$WORK/err" "rerun with the same --cost-model and --comm, or pass --cross-model" "cross-model hint"
# original: makespan 100 -> 120 is +20.00 %, past the 2 % tolerance: regressed
expect_rc 1 "--cross-model" "$BIN" compare "$C/simple.csv" "$C/astra.csv" --cross-model --format csv
contains "$WORK/err" "makespan_us, exposed_comm_us and comm_us change meaning" "cross-model says what changed meaning"
contains "$WORK/out" "w,original,regressed,1000,1000,+0.00%,100.000,120.000,+20.00%" "cross-model row"
expect_rc 2 "approx never compares with time" "$BIN" compare "$C/approx.csv" "$C/simple.csv" --cross-model
contains "$WORK/err" "results in different units cannot be compared" "approx refused"
# a policy run with other parameters pairs with its default row: 1000 -> 1016 bytes
# is +1.60 %, past the 1 % memory tolerance
printf '%s\nw,original,ok,100,1000,10,analytical\nw,aggressive:limit=4,ok,90,1016,5,analytical\n' "$H" >"$C/param.csv"
expect_rc 1 "compare by policy name" "$BIN" compare "$C/simple.csv" "$C/param.csv" --format csv
contains "$WORK/out" "w,aggressive,regressed,1000,1016,+1.60%" "paired by policy name"
contains "$WORK/out" "parameters default -> limit=4" "parameter difference shown"
contains "$WORK/err" "0 new, 0 missing" "no new/missing pair"
# two parameterised runs of one policy on one side: no guess, new and missing
printf '%s\nw,original,ok,100,1000,10,analytical\nw,aggressive:limit=4,ok,90,1016,5,analytical\nw,aggressive:limit=8,ok,90,1016,5,analytical\n' "$H" >"$C/two.csv"
expect_rc 1 "ambiguous policy pairing" "$BIN" compare "$C/simple.csv" "$C/two.csv" --format csv
contains "$WORK/err" "2 new, 1 missing" "ambiguous pairing not guessed"
expect_rc 1 "compare json" "$BIN" compare "$C/simple.csv" "$C/param.csv" --format json
contains "$WORK/out" '"verdict": "regressed"' "json verdict"
contains "$WORK/out" '"peak_mem_change_pct": 1.6' "json change"
contains "$WORK/out" '"regressed": 1' "json counts"
if command -v python3 >/dev/null; then
    "$BIN" compare "$C/simple.csv" "$C/param.csv" --format json 2>/dev/null |
        python3 -c 'import json,sys; json.load(sys.stdin)' && ok || bad "compare json parses"
fi
expect_rc 2 "compare option did you mean" "$BIN" compare "$C/simple.csv" "$C/param.csv" --chnages-only
contains "$WORK/err" "(did you mean '--changes-only'?)" "compare did you mean"

# ---- 10. did you mean, for schedulers ------------------------------------------------------
expect_rc 2 "overlapp" "$BIN" run -q -w "$DATA/chain.csv" -s overlapp -o "$WORK/dym.csv"
contains "$WORK/err" "unknown scheduler 'overlapp' (did you mean 'overlap'?" "overlapp"
expect_rc 2 "LHS" "$BIN" run -q -w "$DATA/chain.csv" -s LHS -o "$WORK/dym.csv"
contains "$WORK/err" "(did you mean 'lhs'?" "LHS"
# the space after a comma is a slip: both schedulers run
expect_rc 0 "space after comma" "$BIN" run -q -w "$DATA/chain.csv" -s 'original, aggressive' -o "$WORK/dym.csv"
same "$(cut -d, -f2 "$WORK/dym.csv" | tr '\n' ' ')" "scheduler original aggressive " "space after comma"
expect_rc 2 "xyz has no neighbour" "$BIN" run -q -w "$DATA/chain.csv" -s xyz -o "$WORK/dym.csv"
lacks "$WORK/err" "did you mean" "no far-fetched suggestion"
expect_rc 2 "run option" "$BIN" run --isolat
contains "$WORK/err" "unknown argument '--isolat' (did you mean '--isolate'?)" "run option did you mean"

# ---- 8. Ctrl-C: a word on where the journal is, no temporary left behind -------------------
# The run gets its own process group and the whole group SIGINT, as a
# terminal's Ctrl-C sends it; the hanging cell keeps the sweep busy meanwhile.
PLUG=$3/misbehave.so
K=$WORK/k
mkdir -p "$K"
if command -v setsid >/dev/null && [ -e "$PLUG" ]; then
    echo old >"$K/r.csv"
    touch "$K/r.csv.tmp.999999999" # a temporary of a long-gone run (pid beyond pid_max)
    setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$BIN" run -q --isolate --cell-timeout 30 \
        --plugin "$PLUG" -w "$DATA/chain.csv" -s original,misbehave:mode=hang -o "$K/r.csv" \
        2>"$K/err" &
    pid=$!
    for _ in $(seq 600); do # up to 60 s on a loaded machine
        [ "$(grep -c ',ok,' "$K/r.csv.partial" 2>/dev/null)" = 1 ] && break
        sleep 0.1
    done
    kill -INT -- -$pid 2>/dev/null
    wait $pid
    same "$?" 130 "Ctrl-C exit status"
    contains "$K/err" "interrupted; the results file $K/r.csv was not written" "Ctrl-C says so"
    contains "$K/err" "run the same command with --resume" "Ctrl-C says how to continue"
    same "$(cat "$K/r.csv")" old "Ctrl-C leaves the results file"
    same "$(ls "$K" | grep -c '\.tmp\.')" 0 "no temporary left behind (ours and the stale one)"
    # resumed: original's row is reused, the hanging cell runs again (3 s timeout: the
    # other cells and the load, each in a child, keep to it on a loaded machine)
    "$BIN" run -q --isolate --cell-timeout 3 --plugin "$PLUG" -w "$DATA/chain.csv" \
        -s original,misbehave:mode=hang -o "$K/r.csv" --resume 2>/dev/null
    same "$(cut -d, -f3 "$K/r.csv" | tr '\n' ' ')" "status ok timeout " "resumed after Ctrl-C"
else
    echo "skipped: Ctrl-C test (needs setsid and $PLUG)"
fi

# ---- 14. the report page ------------------------------------------------------------------
RP=$WORK/rp
mkdir -p "$RP"
expect_rc 0 "run for report" "$BIN" run -q -w "$DATA/overlap.csv" "$DATA/chain.csv" -s original,overlap,minmem -o "$RP/r.csv" --mem-dir "$RP/mem"
# a --mem-dir that is not there is refused with its reason, and no page is
# left claiming gnuplot is missing (issue 38, item 12)
expect_rc 2 "report --mem-dir missing" "$BIN" report "$RP/r.csv" -o "$RP/nodir.html" --mem-dir "$RP/nonexistent"
contains "$WORK/err" "--mem-dir $RP/nonexistent: no such folder" "report names the missing --mem-dir"
if [ -e "$RP/nodir.html" ]; then bad "report --mem-dir missing left a page"; else ok; fi
expect_rc 2 "report --mem-dir a file" "$BIN" report "$RP/r.csv" -o "$RP/nodir.html" --mem-dir "$RP/r.csv"
contains "$WORK/err" "not a folder" "report names a --mem-dir that is a file"
expect_rc 0 report "$BIN" report "$RP/r.csv" -o "$RP/report.html"
contains "$WORK/out" "report: wrote $RP/report.html" "report path"
H=$RP/report.html
# the sweep's identity: its id, policies, cost model
contains "$H" "$(col "$RP/r.csv" sweep_id 1)" "report sweep id"
contains "$H" "original, overlap, minmem" "report policies"
contains "$H" "<th>cost model</th><td>analytical</td>" "report cost model"
# the summary: chain's three policies keep the file order: 22 us each, all best
contains "$H" "best makespan: <b>original, overlap, minmem</b> (22 us)" "report summary"
# self-contained: no script, nothing fetched (the SVG namespaces are names, not fetches)
lacks "$H" "<script" "report has no script"
same "$(grep -o "\(src\|href\)=[\"'][a-z]*://[^\"']*" "$H" | wc -l)" 0 "report fetches nothing"
# one page, so no id twice (gnuplot repeats its ids in every SVG)
same "$(grep -o "id=[\"'][^\"']*[\"']" "$H" | sort | uniq -d | wc -l)" 0 "report ids unique"
if [ "$HAVE_GNUPLOT" = 1 ]; then
    # every figure plot draws is in the page: 2 workloads x (bars, memory, scatter)
    # + pareto + heatmap = 8 SVGs
    same "$(grep -c '<svg' "$H")" 8 "report figures inline"
fi
# a run without timelines: the notes say which plots were skipped and why
expect_rc 0 "report unknown memory" "$BIN" report "$U/r.csv" -o "$RP/u.html"
contains "$RP/u.html" "skipped micro's scatter: peak memory not measured" "report notes"
expect_rc 2 "report bad workload" "$BIN" report "$RP/r.csv" -o "$RP/x.html" --workload nope
absent "$RP/x.html" "no half-written report"
# In a real browser (Debian's chromium, headless): it loads without a console
# message, and its screenshot is not blank.  A blank page of the same size
# compresses to a few KB; text and figures cannot, so the report's must be at
# least ten times larger.  bad.html (a console.error) proves the check can fail.
CHROME=$(command -v chromium-headless-shell || command -v chromium || true)
if [ -n "$CHROME" ]; then
    shot() { # html png -> the browser's log
        timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --enable-logging=stderr --v=0 --window-size=1200,1600 --screenshot="$2" \
            "file://$1" 2>&1
    }
    printf '<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>\n' >"$RP/bad.html"
    printf '<!DOCTYPE html><html><body></body></html>\n' >"$RP/blank.html"
    shot "$RP/bad.html" "$RP/bad.png" >"$RP/bad.log"
    if grep -q ':CONSOLE' "$RP/bad.log"; then ok; else bad "browser check cannot see console messages"; fi
    shot "$RP/blank.html" "$RP/blank.png" >/dev/null
    shot "$H" "$RP/report.png" >"$RP/report.log"
    exists "$RP/report.png" "report screenshot"
    if grep ':CONSOLE' "$RP/report.log"; then bad "report: console messages"; else ok; fi
    big=$(stat -c %s "$RP/report.png" 2>/dev/null || echo 0)
    blank=$(stat -c %s "$RP/blank.png" 2>/dev/null || echo 1)
    if [ "$big" -ge $((10 * blank)) ]; then ok; else bad "report screenshot looks blank: $big bytes, a blank page $blank"; fi
else
    echo "skipped: report in a browser (no chromium or chromium-headless-shell)"
fi

# ---- 5. an installed binary finds the corpus installed beside it ----------------------------
# cmake --install --prefix P puts the binary in P/bin and the corpus in
# P/share/schedbench/corpus, whatever prefix the build was configured with.
BUILD_DIR=$(cd "$3/.." && pwd)
if command -v cmake >/dev/null && [ -f "$BUILD_DIR/cmake_install.cmake" ]; then
    cmake --install "$BUILD_DIR" --prefix "$WORK/inst" >/dev/null 2>&1
    (cd "$WORK" && env -u SCHEDBENCH_CORPUS "$WORK/inst/bin/schedbench" list) >"$WORK/out" 2>&1
    contains "$WORK/out" "workloads ($WORK/inst/share/schedbench/corpus):" "installed corpus found"
else
    echo "skipped: install test (no cmake or no build tree)"
fi

# ---- 11. --machine takes a name, as gen --machine does ---------------------------------------
# gpu2-pcie.yaml (workloads/machines) has two devices
expect_rc 0 "validate --machine NAME" "$BIN" validate --machine gpu2-pcie "$DATA/chain.csv"
contains "$WORK/out" "2 devices" "machine by name"
expect_rc 0 "run --machine NAME" "$BIN" run -q -w "$DATA/two_dev.csv" -s heft --machine gpu2-pcie -o "$WORK/mn.csv"
expect_rc 2 "unknown machine name" "$BIN" run -q -w "$DATA/chain.csv" --machine gpu3-nope -o "$WORK/mn.csv"
contains "$WORK/err" "nor a machine name in" "unknown machine lists names"
contains "$WORK/err" "gpu2-pcie" "unknown machine lists names"

# ---- 15. placement at a glance: a Gantt chart of one cell -------------------------------------
# overlap.csv under `overlap` (tests/test_sim.c): the all_gather runs 0-30 us,
# x computes 0-20, the done waits 20-30, y computes 30-40.  As boxes (centre,
# lane, half width): compute 10 0 10 and 35 0 5, wait 25 0 5, collective 15 1 15.
G=$WORK/g
mkdir -p "$G"
expect_rc 0 "run for gantt" "$BIN" run -q -w "$DATA/overlap.csv" -s original,overlap -o "$G/r.csv" --mem-dir "$G/mem"
expect_rc 0 "plot --gantt" "$BIN" plot "$G/r.csv" -o "$G/p" --gantt overlap
D=$G/p/overlap.overlap.gantt.dat
same "$(grep -v '^#' "$D" | awk 'NF { printf "%g %d %g; ", $1, $2, $3 }')" "10 0 10; 35 0 5; 25 0 5; 15 1 15; " "gantt boxes"
contains "$G/p/overlap.overlap.gantt.gp" "'device 0 compute' 0, 'device 0 collectives 1' 1" "gantt lanes"
expect_rc 0 "plot --gantt unknown" "$BIN" plot "$G/r.csv" -o "$G/p" --gantt heft
contains "$WORK/out" "skipped overlap's Gantt chart of heft: no such scheduler in the results" "gantt unknown scheduler"

expect_rc 0 "report --gantt" "$BIN" report "$G/r.csv" -o "$G/r.html" --gantt overlap
contains "$G/r.html" "what runs where and when" "report has the Gantt chart"

# Placement: two_dev.csv with b pre-assigned to gpu1 (x, a, c on gpu0) on
# two_dev.yaml, under original (file order, pre-assigned devices kept).
# docs/machines.md: a copy starts when its producer has finished and its link
# is free, and takes latency_us + bytes / (gbps * 1000) us.
#   a on gpu0: 0 .. 10.
#   x (input, done at 0, 1000 B) to gpu1 for b: link gpu0->gpu1 is the
#     default 1 GB/s, 2 us: 0 .. 2 + 1000/1000 = 3.
#   b on gpu1 (speed 2): 3 .. 3 + 20/2 = 13.
#   b (2000 B) to gpu0 for c: gpu1->gpu0 is 2 GB/s, 1 us: 13 .. 13 + 1 + 1 = 15.
#   c on gpu0: 15 .. 20 = the makespan.
# Memory by position (x, a, b, c): gpu0 holds x 1000 until b's position (the
# copy is made there), a 4000 until c, b's copy 2000 and c 100 from c: 1000,
# 5000, 5000, 6100.  gpu1: x's copy 1000 at b, b 2000 from b to c (read by
# its copy there): 0, 0, 3000, 2000.
sed -e 's/flags$/flags,device/' -e 's/^\([0-9],[xac],.*\)$/\1,0/' -e 's/^\(2,b,.*\)$/\1,1/' "$DATA/two_dev.csv" >"$G/td.csv"
expect_rc 0 "run placed" "$BIN" run -q -w "$G/td.csv" -s original --machine "$DATA/two_dev.yaml" -o "$G/td.r.csv" --mem-dir "$G/td.mem"
same "$(col "$G/td.r.csv" makespan_us 1)" "20.000" "placed makespan"
C=$G/td.mem/td__original.copies.csv
same "$(awk -F, 'NR > 1 { printf "%s %s %s %s %s %s; ", $2, $3, $4, $5, $6, $7 }' "$C")" \
     "x gpu0 gpu1 0.000 3.000 1000; b gpu1 gpu0 13.000 15.000 2000; " "copies and their times"
same "$(col "$C" sweep_id 1)" "$(col "$G/td.r.csv" sweep_id 1)" "copies carry the sweep_id"
T=$G/td.mem/td__original.csv
same "$(awk -F, 'NR > 1 { printf "%s %s; ", $13, $14 }' "$T")" "1000 0; 5000 0; 5000 3000; 6100 2000; " "memory per device"
same "$(head -1 "$T" | cut -d, -f13-)" "mem_bytes.gpu0,mem_bytes.gpu1,stream" "device columns named, then the stream (issue 36)"
expect_rc 0 "plot --gantt placed" "$BIN" plot "$G/td.r.csv" -o "$G/tp" --gantt original --mem-dir "$G/td.mem"
GP=$G/tp/td.original.gantt.gp
# lanes: gpu0 compute 0, copies gpu0 -> gpu1 1, gpu1 compute 2, copies gpu1 -> gpu0 3
contains "$GP" "'gpu0 compute' 0, 'copies gpu0 -> gpu1' 1, 'gpu1 compute' 2, 'copies gpu1 -> gpu0' 3" "link lanes"
contains "$GP" "set xlabel 'simulated time (us)'" "time axis unit"
contains "$GP" "set xrange [0:20.000000]" "time axis ends at the makespan"
contains "$GP" "title 'copy over a link (latency + bytes / bandwidth)'" "copies in the legend"
lacks "$GP" "copies over links not recorded" "copies recorded"
# boxes (centre, lane, half width): a 5 0 5, b 8 2 5, c 17.5 0 2.5; copies
# x 1.5 1 1.5, b 14 3 1
same "$(grep -v '^#' "$G/tp/td.original.gantt.dat" | awk 'NF { printf "%g %d %g; ", $1, $2, $3 }')" \
     "5 0 5; 8 2 5; 17.5 0 2.5; 1.5 1 1.5; 14 3 1; " "placed gantt boxes"
MP=$G/tp/td.memory.gp
contains "$MP" "title 'gpu0 (peak 6.1 KB)'" "memory line of gpu0"
contains "$MP" "title 'gpu1 (peak 3 KB)'" "memory line of gpu1"
contains "$MP" "original: peak 6.1 KB on gpu0, 2/2 devices hold memory" "memory panel title"
if [ "$HAVE_GNUPLOT" = 1 ]; then
    contains "$G/tp/td.original.gantt.svg" "<text>copies gpu0 -> gpu1</text>" "link lane in the SVG"
    contains "$G/tp/td.original.gantt.svg" "simulated time (us)" "time unit in the SVG"
    contains "$G/tp/td.memory.svg" "gpu1 (peak 3 KB)" "device legend in the SVG"
fi
# the Chrome trace of the same cell: each copy a slice on its source device's
# lane for the link (pid 1 + device, tid 100000 + target), memory per device
expect_rc 0 "trace placed" "$BIN" run -q -w "$G/td.csv" -s original --machine "$DATA/two_dev.yaml" -o "$G/td.t.csv" --trace-dir "$G/td.tr"
TR=$G/td.tr/td__original.json
contains "$TR" '"name":"x","cat":"copy","ph":"X","pid":1,"tid":100001,"ts":0.000,"dur":3.000' "trace copy x"
contains "$TR" '"name":"b","cat":"copy","ph":"X","pid":2,"tid":100000,"ts":13.000,"dur":2.000' "trace copy b"
contains "$TR" '"args":{"name":"copies to gpu1"}' "trace link lane named"
contains "$TR" '"name":"memory","ph":"C","pid":2,"ts":3.000,"args":{"bytes":3000}' "trace memory of gpu1"
# a timeline without its copies file (run before copies were recorded): the
# chart is drawn and says so
rm "$C"
expect_rc 0 "plot --gantt without copies" "$BIN" plot "$G/td.r.csv" -o "$G/tp" --gantt original --mem-dir "$G/td.mem"
contains "$GP" "copies over links not recorded: run again with --mem-dir" "missing copies said"
lacks "$GP" "copies gpu0 -> gpu1" "no link lanes without copies"

# --brief (make run): one line for the plots written: 2 workloads x (memory,
# bars, scatter) + pareto + heatmap = 8
expect_rc 0 "plot --brief" "$BIN" plot "$RP/r.csv" -o "$RP/brief" --brief
same "$(grep -c 'wrote' "$WORK/out")" 1 "plot --brief one line"
contains "$WORK/out" "plot: wrote 8 plots to $RP/brief" "plot --brief count"

# ---- 9. units of --cost bandwidths ----------------------------------------------------------------
# 400 Gb/s is 400 / 8 = 50 GB/s: the same makespan as bw_gbps=50, and not the
# same as 100 GB/s (ddp-resnet50's all_reduces are priced by bandwidth)
RN=$(cd "$DATA/../.." && pwd)/workloads/corpus/ddp-resnet50-b32-r8.csv
span() { "$BIN" run -q -w "$RN" -s original --cost "$1" -o "$WORK/bw.csv" && col "$WORK/bw.csv" makespan_us 1; }
same "$(span bw_gbps=400Gbps)" "$(span bw_gbps=50)" "400Gbps = 50 GB/s"
if [ "$(span bw_gbps=100)" != "$(span bw_gbps=50)" ]; then ok; else bad "bandwidth has no effect: the unit test cannot fail"; fi
expect_rc 2 "bytes/s where GB/s are expected" "$BIN" run -q -w "$RN" -s original --cost bw_gbps=40e9 -o "$WORK/bw2.csv"
contains "$WORK/err" "bw_gbps=40e9 is 4e+10 GB/s, outside 0.001 .. 100000 GB/s" "bandwidth range"
absent "$WORK/bw2.csv" "no results for an implausible bandwidth"
expect_rc 2 "unknown bandwidth unit" "$BIN" run -q -w "$RN" -s original --cost bw_gbps=4x -o "$WORK/bw2.csv"
contains "$WORK/err" "'4x' is not a bandwidth: GB/s, or with a unit: 400Gbps" "bandwidth unit named"

# ---- issue 38, item 10: figures in plain decimals, columns apart, "1 workload" ---------
# a chain of 24,650,000 + 10,000 + 5,000 us: makespan 24,665 ms (a then b then c:
# 24,650,000 + 10,000 + 5,000 = 24,665,000 us), written out, never 2.466e+04 ms
NB=$WORK/n38
mkdir -p "$NB"
printf 'id,name,kind,inputs,cost_us,out_bytes,flags\n0,x,input,,,100,\n1,a,compute,0,24650000,200,\n2,b,compute,1,10000,50,\n3,c,compute,2,5000,10,output\n' >"$NB/long.csv"
expect_rc 0 "run a long chain" "$BIN" run -q -w "$NB/long.csv" -s original -o "$NB/r.csv"
expect_rc 0 "summary of a long chain" "$BIN" summary "$NB/r.csv"
contains "$WORK/out" "24,665 ms" "makespan with a thousands separator"
lacks "$WORK/out" "e+0" "no exponent in summary"
expect_rc 0 "run says one workload" "$BIN" run -w "$NB/long.csv" -s original -o "$NB/r2.csv"
contains "$WORK/err" "1 workload x 1 scheduler ->" "singular workload and scheduler"
# two spaces at least between the ratio and the exposed columns
awk '/^  original/ { if ($0 ~ /[0-9] [0-9]/) bad = 1 } END { exit bad }' "$WORK/out" && ok || bad "summary columns run together: $(cat "$WORK/out")"

# ---- issue 38, item 7: scatter labels never overprint --------------------------------
# on llama3-8b-bwd-r64 overlap and membound end 1.9 ms apart at the same peak
# (1,239.0 and 1,237.1 ms of a 1,100..2,100 ms axis): their labels sat on one
# line on the same side; now on opposite sides of the point (or joined)
L8=$(cd "$DATA/../.." && pwd)/workloads/corpus/llama3-8b-bwd-r64.csv
expect_rc 0 "run llama 8b" "$BIN" run -q -w "$L8" -s original,overlap,memfallback,membound -o "$NB/l8.csv"
expect_rc 0 "plot llama 8b" "$BIN" plot "$NB/l8.csv" -o "$NB/l8"
sides=$(awk '/"overlap"|"membound"/ { print $NF }' "$NB/l8/llama3-8b-bwd-r64.scatter.dat" | sort -u | wc -l)
joined=$(grep -c '"membound / overlap"\|"overlap / membound"' "$NB/l8/llama3-8b-bwd-r64.scatter.dat")
if [ "$sides" = 2 ] || [ "$joined" = 1 ]; then ok; else bad "overlap and membound labels overprint: $(cat "$NB/l8/llama3-8b-bwd-r64.scatter.dat")"; fi
# bar labels: thousands separated, and 72 px a bar so that all labels stand
# apart: four bars would fit 600 px, n need n x 72 + 120 px a panel (ten:
# 840); three panels (makespan, peak, exposed) are three times that
contains "$NB/l8/llama3-8b-bwd-r64.bars.gp" "lbl(x) = x >= 1000 ? commas(" "bar labels with separators"
expect_rc 0 "run llama 8b, all" "$BIN" run -q -w "$L8" -s all -o "$NB/l8all.csv"
expect_rc 0 "plot llama 8b, all" "$BIN" plot "$NB/l8all.csv" -o "$NB/l8all" --workload llama3-8b-bwd-r64
n_bars=$(tail -n +2 "$NB/l8all.csv" | cut -d, -f2 | sort -u | wc -l)
contains "$NB/l8all/llama3-8b-bwd-r64.bars.gp" "size $((3 * (n_bars * 72 + 120))),540" "bars wide enough for $n_bars labels"
if command -v gnuplot >/dev/null; then
    contains "$NB/l8all/llama3-8b-bwd-r64.bars.svg" "1,233" "a bar label with a separator drawn"
fi
# the report shows a figure wider than the page (the 2,520 px bars) at its own
# size in a sideways-scrolling box, not shrunk until its labels are unreadable
if command -v gnuplot >/dev/null; then
    expect_rc 0 "report llama 8b, all" "$BIN" report "$NB/l8all.csv" -o "$NB/l8all.html"
    contains "$NB/l8all.html" '<figure class="wide">' "a wide figure scrolls"
fi
# outliers do not squash the memory plot: on llama3-8b-bwd-r64-extloss-sac-fp32
# the ten peaks are 18.5 (x3), 19.4, 20.7 (x2), 51.2, 64.6, 66.2 (x2) GB; the
# median (the 6th of ten, sorted) is 20.7 GB, so 3 x 20.7 = 62.1 GB is the
# limit: aggressive, heft and dp are clipped (ready, 51.2 GB, stays) and the
# axis tops at 51.2 x 1.15 = 58.9 GB
LS=$(cd "$DATA/../.." && pwd)/workloads/corpus/llama3-8b-bwd-r64-extloss-sac-fp32.csv
expect_rc 0 "run llama 8b sac, all" "$BIN" run -q -w "$LS" -s all -o "$NB/ls.csv" --mem-dir "$NB/lsmem"
expect_rc 0 "plot llama 8b sac" "$BIN" plot "$NB/ls.csv" -o "$NB/ls" --mem-dir "$NB/lsmem"
G8=$NB/ls/llama3-8b-bwd-r64-extloss-sac-fp32.memory.gp
contains "$G8" "off the chart (clipped): aggressive (peak 64.58 GB), heft (peak 66.21 GB), dp (peak 66.21 GB)" "outliers named"
grep -q "set yrange \[0:58\.9" "$G8" && ok || bad "memory axis not clipped at 58.9 GB: $(grep yrange "$G8")"
grep "off the chart" "$G8" | grep -q "ready" && bad "ready clipped" || ok
# ---- issue 38, item 11: what produced the figures, what binds, which rows replay --------
# ddp-resnet50's bound (4,627 us) is its collectives' total (4,612 us) plus a
# 15 us compute head: within 1%, so communication binds
expect_rc 0 "run resnet original,ready" "$BIN" run -q -w "$RN" -s original,ready -o "$NB/rr.csv"
expect_rc 0 "summary names the bound" "$BIN" summary "$NB/rr.csv"
contains "$WORK/out" "(communication binds: the collectives' total time); cost model analytical" "summary: binding term and cost model"
grep -q "^  ready .*(replay, not a compiler's order)" "$WORK/out" && ok || bad "summary does not mark ready as a replay: $(cat "$WORK/out")"
grep -q "^  original .*replay" "$WORK/out" && bad "original marked as a replay" || ok
expect_rc 0 "report names the bound" "$BIN" report "$NB/rr.csv" -o "$NB/rr.html"
contains "$NB/rr.html" "communication binds" "report: binding term"
contains "$NB/rr.html" "(replay)</span>" "report marks the replay"

# ---- issue 38, item 11: which bandwidth and latency produced the figures ----------
# twocoll under --cost bw_gbps=400,lat_us=3: the row's cost_params carries the
# effective values (the host and copy bandwidths keep their defaults, 25 and
# 1500 GB/s; ranks 1), and summary and the report show them
"$BIN" run -q -w "$DATA/twocoll.csv" -s original --cost bw_gbps=400,lat_us=3 -o "$WORK/cp.csv"
same "$(col "$WORK/cp.csv" cost_params 1)" "lat_us=3;bw_gbps=400;bw_send_host=25;bw_recv_host=25;bw_copy=1500;ranks=1" "cost_params written"
expect_rc 0 "summary cost params" "$BIN" summary "$WORK/cp.csv"
contains "$WORK/out" "cost model analytical (lat_us=3;bw_gbps=400;" "summary names the bandwidth"
expect_rc 0 "report cost params" "$BIN" report "$WORK/cp.csv" -o "$WORK/cp.html"
contains "$WORK/cp.html" "<th>cost parameters</th><td>lat_us=3;bw_gbps=400;" "report names the bandwidth"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
