#!/usr/bin/env bash
# Numbers, units and options (issue 42, items 8, 10, 13, 14): every value is
# read whole and strictly, within a documented range; every figure a run
# writes is one its readers take back; options apply wherever they stand.
# The bad-file cases are in tests/bad/catalogue.tsv; these are the options
# and the figures.  Expected numbers are worked out in the comments.
# Arguments: schedbench BIN, test data DIR, scratch DIR.
set -u
BIN=$1 DATA=$2 WORK=$3/numbers_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    timeout 60 "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; head -c 600 "$WORK/err" >&2; fi
}
refused() { # description message-fragment command...: exit 2 naming what is wrong
    local what=$1 want=$2; shift 2
    expect_rc 2 "$what" "$@"
    if grep -qF -- "$want" "$WORK/err"; then ok; else bad "$what: '$want' not in: $(head -c 400 "$WORK/err")"; fi
}
contains() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1: $(head -c 400 "$1")"; fi; }
col() { # csv column-name row(2 = first data row), by header name; quoted fields whole
    python3 -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
print(rows[int(sys.argv[3]) - 1][rows[0].index(sys.argv[2])])' "$1" "$2" "$3" 2>/dev/null
}
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
C="$DATA/chain.csv"

# one all_reduce of 0 bytes in a group of 2: a ring of 2 (p - 1) = 2 steps of
# lat_us each, no bytes to move: makespan 2 * lat_us
printf 'id,name,kind,inputs,coll,comm_bytes,group\n0,s,start,,all_reduce,0,2\n1,d,done,0,,,\n' >"$WORK/ar.csv"

# ---- item 8: a --cost piece is read whole, however long ------------------------------
# 'lat_us=' and 152 zeros are 159 characters: a 160-byte buffer cut the piece
# there and the run took lat_us=0.  Read whole it is 12345: 2 * 12345 = 24690.
z=$(printf '%0152d' 0)
expect_rc 0 "long --cost piece" "$BIN" run -q -w "$WORK/ar.csv" -s original --cost "lat_us=${z}12345" -o "$WORK/long.csv"
same "$(col "$WORK/long.csv" makespan_us 2)" "24690.000" "lat_us=<152 zeros>12345 is 12345"
# the same with the long piece between two others
expect_rc 0 "long piece in the middle" "$BIN" run -q -w "$WORK/ar.csv" -s original --cost "bw_gbps=50,lat_us=${z}12345,ranks=2" -o "$WORK/long2.csv"
same "$(col "$WORK/long2.csv" makespan_us 2)" "24690.000" "long piece between others"

# ---- item 10: ceilings on every cost value, named with the option -------------------
refused "--cost lat_us=1e300" "schedbench run: --cost: cost parameter lat_us: '1e300' is not a time in 0..10^12 us" \
    "$BIN" run -q -w "$WORK/ar.csv" -s original --cost lat_us=1e300 -o "$WORK/x.csv"
refused "--cost launch_us=inf" "cost parameter launch_us: 'inf' is not a time" \
    "$BIN" run -q -w "$C" -s original --cost launch_us=inf -o "$WORK/x.csv"
refused "--cost lat_us hex" "'0x1p3' is not a time in 0..10^12 us (hexadecimal)" \
    "$BIN" run -q -w "$C" -s original --cost lat_us=0x1p3 -o "$WORK/x.csv"
refused "--cost bw tiny" "bw_all_reduce=1e-300 is 1e-300 GB/s, outside 0.001 .. 100000 GB/s" \
    "$BIN" run -q -w "$C" -s original --cost bw_all_reduce=1e-300 -o "$WORK/x.csv"
refused "--cost hbm_gbps tiny" "hbm_gbps=1e-9 is 1e-09 GB/s, outside" \
    "$BIN" run -q -w "$C" -s original --cost hbm_gbps=1e-9 -o "$WORK/x.csv"
refused "--cost peak tiny" "peak_bf16: '1e-300' is not 0 or a rate in 1e-06..1e+06 TFLOP/s" \
    "$BIN" run -q -w "$C" -s original --cost peak_bf16=1e-300 -o "$WORK/x.csv"
refused "--cost ranks 2^32" "ranks: '4294967296' is not an integer in 1..4294967295" \
    "$BIN" run -q -w "$C" -s original --cost ranks=4294967296 -o "$WORK/x.csv"
refused "--cost ranks 4.0" "ranks: '4.0' is not an integer" \
    "$BIN" run -q -w "$C" -s original --cost ranks=4.0 -o "$WORK/x.csv"
refused "--cost key twice" "cost parameter lat_us given twice" \
    "$BIN" run -q -w "$C" -s original --cost lat_us=1,lat_us=2 -o "$WORK/x.csv"
# at the ceilings everything is finite: lat_us=10^12 on the one all_reduce is
# 2 * 10^12 us, written in full and read back by compare
expect_rc 0 "lat_us at its ceiling" "$BIN" run -q -w "$WORK/ar.csv" -s original --cost lat_us=1e12 -o "$WORK/top.csv"
same "$(col "$WORK/top.csv" makespan_us 2)" "2000000000000.000" "2 * 10^12 us"
expect_rc 0 "compare reads it" "$BIN" compare "$WORK/top.csv" "$WORK/top.csv"
# a sum past what a results file holds is an error row, not a number no
# reader takes back: two all_reduces one after the other in a group of
# 4294967294, 2 * 4294967293 steps of 10^12 us each: 8.589934586e21 us each,
# 1.7179869172e22 together, above 10^22
printf 'id,name,kind,inputs,coll,comm_bytes,group\n0,s1,start,,all_reduce,0,4294967294\n1,d1,done,0,,,\n2,s2,start,1,all_reduce,0,4294967294\n3,d2,done,2,,,\n' >"$WORK/big.csv"
expect_rc 1 "a sum above 10^22 us" "$BIN" run -q -w "$WORK/big.csv" -s original --cost lat_us=1e12 -o "$WORK/big.out.csv" --trace-dir "$WORK/trace"
contains "$WORK/big.out.csv" "error:makespan_us 1.71799e+22 is above 10^22, the most a results file holds" "the error names the figure"
same "$(col "$WORK/big.out.csv" makespan_us 2)" "" "no makespan written"
if [ -e "$WORK/trace/big__original.json" ]; then bad "a trace for a cell with no figures"; else ok; fi
# compare reads every file run writes: the error row is an error (exit 1), not
# an unreadable file (exit 2)
expect_rc 1 "compare reads the error row" "$BIN" compare "$WORK/big.out.csv" "$WORK/big.out.csv"
# one of them alone is 8.589934586e21 us: written, and read back
head -3 "$WORK/big.csv" >"$WORK/one.csv"
expect_rc 0 "8.6e21 us" "$BIN" run -q -w "$WORK/one.csv" -s original --cost lat_us=1e12 -o "$WORK/one.out.csv" --trace-dir "$WORK/trace"
# (8589934586 * 10^12 rounded to a double, as printf("%.3f") writes it: every digit)
same "$(col "$WORK/one.out.csv" makespan_us 2)" "$(python3 -c 'print("%.3f" % (8589934586.0 * 1e12))')" "8.59e21 written in full"
expect_rc 0 "compare reads 8.6e21" "$BIN" compare "$WORK/one.out.csv" "$WORK/one.out.csv"
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/trace/one__original.json" 2>"$WORK/err"; then ok; else bad "trace not JSON: $(head -c 300 "$WORK/err")"; fi
# machines at their ceilings (the slowest links and devices allowed): every
# policy's row is written with numbers compare takes back
cat >"$WORK/slow.yaml" <<'EOF'
devices:
  - {name: a, speed: 1e-6, peak_tflops: {fp32: 1e-6}, hbm_gbps: 0.001, launch_us: 1e12}
  - {name: b, speed: 1e6}
links:
  default: {gbps: 0.001, latency_us: 1e12}
EOF
expect_rc 0 "the slowest machine" "$BIN" run -q -w "$DATA/two_dev.csv" --machine "$WORK/slow.yaml" -o "$WORK/slow.csv"
expect_rc 0 "compare reads the slowest machine's rows" "$BIN" compare "$WORK/slow.csv" "$WORK/slow.csv"

# the reason a node cannot run on a device: a resource, not its op.  Node b
# needs 3 units; device g0 offers 2 (the default order puts b there).
cat >"$WORK/u.csv" <<'EOF'
id,name,kind,inputs,cost_us,out_bytes,units
0,a,input,,0,8,
1,b,compute,0,5,8,3
2,c,compute,0,4,8,1
3,d,compute,1 2,2,8,2
EOF
printf 'devices:\n  - {name: g0, units: 2}\n  - {name: g1}\nlinks:\n  default: {gbps: 10, latency_us: 1}\n' >"$WORK/u.yaml"
expect_rc 1 "units over a device" "$BIN" run -q -w "$WORK/u.csv" --machine "$WORK/u.yaml" -s original -o "$WORK/u.out.csv"
contains "$WORK/u.out.csv" "node 1 (b) on device 0 (g0), which offers 2 of resource 'units' where the node needs 3" "the resource is named"

# ---- item 13: options -----------------------------------------------------------------
# validate applies --machine to every file, wherever it stands (it used to
# apply only to files after it): node b is pre-assigned to device 1
printf 'id,name,kind,inputs,cost_us,device\n0,a,input,,,\n1,b,compute,0,1,1\n' >"$WORK/pre.csv"
expect_rc 0 "validate FILE --machine M" "$BIN" validate "$WORK/pre.csv" --machine "$DATA/two_dev.yaml"
expect_rc 0 "validate --machine M FILE" "$BIN" validate --machine "$DATA/two_dev.yaml" "$WORK/pre.csv"
expect_rc 0 "run -w FILE --machine M" "$BIN" run -q -w "$WORK/pre.csv" -s original --machine "$DATA/two_dev.yaml" -o "$WORK/x.csv"
# and an option error anywhere refuses the whole line before any file is read
refused "validate bad --import after a file" "import option npus: 'x'" \
    "$BIN" validate "$C" --import npus=x
same "$(wc -c <"$WORK/out")" 0 "nothing validated before the bad option"
refused "validate unknown option" "schedbench validate: unknown option '--machin' (did you mean '--machine'?)" \
    "$BIN" validate "$C" --machin "$DATA/two_dev.yaml"
refused "validate --machine twice" "schedbench validate: --machine given twice" \
    "$BIN" validate --machine "$DATA/two_dev.yaml" "$C" --machine "$DATA/two_dev.yaml"
# an option of one value given twice is refused by every command
refused "run --machine twice" "schedbench run: --machine given twice" \
    "$BIN" run -q -w "$C" --machine "$DATA/two_dev.yaml" --machine "$DATA/two_dev.yaml" -o "$WORK/x.csv"
refused "run --cost twice" "--cost given twice (the second is 'lat_us=2'): give it once, with every key in one comma list" \
    "$BIN" run -q -w "$C" --cost lat_us=1 --cost lat_us=2 -o "$WORK/x.csv"
refused "run -j and --jobs" "--jobs given twice" "$BIN" run -q -w "$C" -j 2 --jobs 3 -o "$WORK/x.csv"
refused "summary --vs twice" "schedbench summary: --vs given twice" "$BIN" summary "$WORK/top.csv" --vs a --vs b
refused "compare --format twice" "schedbench compare: --format given twice" "$BIN" compare "$WORK/top.csv" "$WORK/top.csv" --format csv --format json
refused "merge -o twice" "schedbench merge: -o given twice" "$BIN" merge "$WORK/top.csv" -o "$WORK/m1.csv" -o "$WORK/m2.csv"
refused "plot -o twice" "schedbench plot: -o given twice" "$BIN" plot "$WORK/top.csv" -o "$WORK/p1" -o "$WORK/p2"
refused "report -o twice" "schedbench report: -o given twice" "$BIN" report "$WORK/top.csv" -o "$WORK/r1.html" -o "$WORK/r2.html"
refused "convert -o twice" "schedbench convert: -o given twice" "$BIN" convert "$C" -o "$WORK/c1.csv" -o "$WORK/c2.csv"
refused "collective --bw twice" "schedbench collective: --bw given twice" "$BIN" collective --op all_reduce --bw 10 --bw 20
# collective: an option wins over its file's value wherever it stands (the
# file used to overwrite an option given before it)
printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50 ]\nlatency: [ 500 ]\n' >"$WORK/n.yml"
"$BIN" collective --op all_reduce --network "$WORK/n.yml" >"$WORK/t_file" 2>&1
"$BIN" collective --op all_reduce --bw 5 --network "$WORK/n.yml" >"$WORK/t_before" 2>&1
"$BIN" collective --op all_reduce --network "$WORK/n.yml" --bw 5 >"$WORK/t_after" 2>&1
same "$(cat "$WORK/t_before")" "$(cat "$WORK/t_after")" "collective --bw before or after --network"
if [ "$(cat "$WORK/t_before")" != "$(cat "$WORK/t_file")" ]; then ok; else bad "--bw had no effect: the check above cannot fail"; fi
# a network value is read whole: 0.<69 zeros>5e70 is 5e-70 * 10^70 = 5 GB/s,
# the same as 5; a 63-byte copy read it as 0.000... and refused it
long_bw="0.$(printf '%069d' 0)5e70"
printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ %s ]\nlatency: [ 500 ]\n' "$long_bw" >"$WORK/nl.yml"
printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 5 ]\nlatency: [ 500 ]\n' >"$WORK/n5.yml"
expect_rc 0 "a long network bandwidth" "$BIN" collective --op all_reduce --network "$WORK/nl.yml"
cp "$WORK/out" "$WORK/t_long"
"$BIN" collective --op all_reduce --network "$WORK/n5.yml" >"$WORK/t_5" 2>&1
same "$(cat "$WORK/t_long")" "$(cat "$WORK/t_5")" "0.<69 zeros>5e70 GB/s = 5 GB/s"
# --sim: one mode per spec, each key once; integers strictly
refused "--sim mixed modes" "sim parameters inflight and all_gather: inflight=N is one limit shared by every collective type" \
    "$BIN" run -q -w "$C" --sim inflight=2,all_gather=3 -o "$WORK/x.csv"
refused "--sim mixed modes, the other order" "sim parameters all_gather and inflight" \
    "$BIN" run -q -w "$C" --sim all_gather=3,inflight=2 -o "$WORK/x.csv"
refused "--sim key twice" "sim parameter reduce_scatter given twice" \
    "$BIN" run -q -w "$C" --sim reduce_scatter=2,reduce_scatter=3 -o "$WORK/x.csv"
refused "--sim +3" "sim parameter inflight: '+3' is not an integer in 1..64" \
    "$BIN" run -q -w "$C" --sim inflight=+3 -o "$WORK/x.csv"
# --shard, --jobs, --cell-timeout: strict integers and ranges
refused "--shard 1/2^32+1" "--shard '1/4294967297' is not K/N with 1 <= K <= N <= 4294967295 (above the maximum)" \
    "$BIN" run -q -w "$C" --shard 1/4294967297 -o "$WORK/x.csv"
refused "--shard 1/4x" "--shard '1/4x'" "$BIN" run -q -w "$C" --shard 1/4x -o "$WORK/x.csv"
refused "--shard +1/4" "--shard '+1/4'" "$BIN" run -q -w "$C" --shard +1/4 -o "$WORK/x.csv"
refused "--jobs 1e1" "--jobs '1e1' is not an integer in 1..256 (not an integer)" "$BIN" run -q -w "$C" --jobs 1e1 -o "$WORK/x.csv"
refused "--jobs ' 2'" "--jobs ' 2' is not an integer" "$BIN" run -q -w "$C" --jobs ' 2' -o "$WORK/x.csv"
refused "--cell-timeout hex" "--cell-timeout '0x10' is not a number of seconds in (0, 10^6] (hexadecimal)" \
    "$BIN" run -q -w "$C" --isolate --cell-timeout 0x10 -o "$WORK/x.csv"
refused "compare --time-tol nan" "--time-tol needs a non-negative percentage, at most 10^6 ('nan': not a number)" \
    "$BIN" compare "$WORK/top.csv" "$WORK/top.csv" --time-tol nan
refused "scheduler integer 1e1" "scheduler 'dp': beam='1e1' is not an integer" \
    "$BIN" run -q -w "$C" -s dp:beam=1e1 -o "$WORK/x.csv"
refused "scheduler number hex" "scheduler 'overlap': compute_overlap_multiplier='0x10' is not" \
    "$BIN" run -q -w "$C" -s overlap:compute_overlap_multiplier=0x10 -o "$WORK/x.csv"
refused "--import integer 2.0" "import option npus: '2.0' is not an integer" \
    "$BIN" run -q -w "$C" --import npus=2.0 -o "$WORK/x.csv"
refused "conform --tier x" "schedbench conform: --tier 'x' is not an integer in 1..9" \
    "$BIN" conform "$WORK" --tier x
refused "collective --npus 8.0" "--npus '8.0' is not valid" "$BIN" collective --op all_reduce --npus 8.0
# res.<name> columns: refused without a machine as under a machine whose
# devices declare no such resource (they used to be ignored there)
printf 'id,name,kind,inputs,cost_us,res.sms\n0,a,input,,,\n1,b,compute,0,1,4\n' >"$WORK/res.csv"
refused "res column without a machine" "column res.sms: the run has no machine" \
    "$BIN" run -q -w "$WORK/res.csv" -s original -o "$WORK/x.csv"
refused "validate: res column without a machine" "column res.sms: the run has no machine" \
    "$BIN" validate "$WORK/res.csv"
refused "res column under a machine without it" "column res.sms: no device of the machine" \
    "$BIN" validate "$WORK/res.csv" --machine "$DATA/two_dev.yaml"
printf 'devices:\n  - {name: g, resources: {sms: 8}}\n' >"$WORK/sms.yaml"
expect_rc 0 "res column under a machine with it" "$BIN" validate "$WORK/res.csv" --machine "$WORK/sms.yaml"
# dp runs a units column every other policy runs: without a machine the
# built-in device declares no units, so they limit nothing; a, then b (5 us),
# c (4 us) and d (2 us) one at a time on the one stream: 5 + 4 + 2 = 11 us
expect_rc 0 "units without a machine" "$BIN" run -q -w "$WORK/u.csv" -s dp,heft,original -o "$WORK/ud.csv"
same "$(col "$WORK/ud.csv" status 2),$(col "$WORK/ud.csv" makespan_us 2)" "ok,11.000" "dp runs units 3 on the built-in device"
# under a machine, dp keeps to the device's units as the others do: b (3
# units) fits only g1 (no units key), which every policy that places finds
expect_rc 0 "dp under units" "$BIN" run -q -w "$WORK/u.csv" --machine "$WORK/u.yaml" -s dp,heft -o "$WORK/ud2.csv"
same "$(col "$WORK/ud2.csv" status 2),$(col "$WORK/ud2.csv" status 3)" "ok,ok" "dp and heft place b on g1"

# ---- item 14: one size rule ---------------------------------------------------------------
size_of() { # mem_bytes text -> the capacity run writes (dev_cap_bytes), or the error
    printf 'devices:\n  - {name: g, mem_bytes: "%s"}\n' "$1" >"$WORK/m.yaml"
    "$BIN" run -q -w "$C" -s original --machine "$WORK/m.yaml" -o "$WORK/m.csv" 2>"$WORK/err" &&
        col "$WORK/m.csv" dev_cap_bytes 2
}
same "$(size_of 80GB)" 80000000000 "mem_bytes 80GB = 80 * 10^9"
same "$(size_of 80gb)" 80000000000 "mem_bytes 80gb: the case of a unit is free"
same "$(size_of '80 GiB')" 85899345920 "mem_bytes 80 GiB = 80 * 2^30"
same "$(size_of 80e9)" 80000000000 "mem_bytes 80e9: a bare number is bytes"
same "$(size_of 1PiB)" 1125899906842624 "mem_bytes 1PiB = 2^50"
same "$(size_of 1.5B)" "" "mem_bytes 1.5B refused"
contains "$WORK/err" "mem_bytes '1.5B' is not a capacity (1 B .. 1 PiB: bytes, or with a unit: 80GB, 80GiB): a fraction of a byte" "1.5B: why"
same "$(size_of 0x10GB)" "" "mem_bytes hex refused"
contains "$WORK/err" "hexadecimal" "hex: why"
same "$(size_of 80G)" "" "mem_bytes 80G refused"
contains "$WORK/err" "ambiguous" "80G: why"
# collective --size: the same parser (1MiB = 1048576 bytes, the same time)
"$BIN" collective --op all_reduce --size 1MiB >"$WORK/s1" 2>&1
"$BIN" collective --op all_reduce --size 1048576 >"$WORK/s2" 2>&1
same "$(cat "$WORK/s1")" "$(cat "$WORK/s2")" "collective --size 1MiB = 1048576"
refused "collective --size 1.5B" "--size '1.5B' is not valid" "$BIN" collective --op all_reduce --size 1.5B
refused "collective --size 1M" "--size '1M' is not valid" "$BIN" collective --op all_reduce --size 1M

# HLO (issue 39): a loop of unknown trip count, a malformed operation queue,
# a trip count for a loop the module lacks: exit 2 with file:line
H="$DATA/hlo_cases"
refused "hlo unknown trip count" "hlo_trip_user.hlo:42: while 'w': cannot find its trip count" \
    "$BIN" validate "$H/hlo_trip_user.hlo"
contains "$WORK/err" "--import trip_count.w=N" "the trip count refusal names the option"
expect_rc 0 "hlo trip_count=7" "$BIN" validate --import trip_count=7 "$H/hlo_trip_user.hlo"
refused "hlo trip_count.NAME unknown" "import option trip_count.nope: the module has no while" \
    "$BIN" validate --import trip_count.nope=3 "$H/hlo_trip_user.hlo"
refused "hlo bad queue" "hlo_bad_queue.hlo:6: 'b': operation_queue_id is not a queue" \
    "$BIN" run -q -w "$H/hlo_bad_queue.hlo" -s original -o "$WORK/q.csv"
[ ! -e "$WORK/q.csv" ] && ok || bad "a refused HLO left a results file"
# hlo_queues.hlo: five ops of one size (memory-bound, one time t each). Read
# as XLA's queues, a, b and c run at once, then d (waits for all three), then
# e2 (waits for d): 3t; on one stream (queues=none) the five in turn: 5t.
expect_rc 0 "hlo queues=xla" "$BIN" run -q -w "$H/hlo_queues.hlo" -s original \
    --import fuse=none -o "$WORK/qx.csv"
expect_rc 0 "hlo queues=none" "$BIN" run -q -w "$H/hlo_queues.hlo" -s original \
    --import fuse=none,queues=none -o "$WORK/qn.csv"
same "$(python3 -c 'import sys; r = float(sys.argv[1]) / float(sys.argv[2]); print(abs(r - 0.6) < 1e-3)' \
    "$(col "$WORK/qx.csv" makespan_us 2)" "$(col "$WORK/qn.csv" makespan_us 2)")" True \
    "hlo queues: makespan 3t against 5t on one stream"
# hlo_async_compute.hlo: the fusion of queue 1 (wrapped in async-start) and
# the one of queue 0 run at once, then the add: 2 op-times against 3 on one
# stream (the add moves 12 KiB, the fusions 8 KiB: within 1e-3 of 2/3)
expect_rc 0 "hlo async compute" "$BIN" run -q -w "$H/hlo_async_compute.hlo" -s original \
    -o "$WORK/ax.csv"
expect_rc 0 "hlo async compute, queues=none" "$BIN" run -q -w "$H/hlo_async_compute.hlo" \
    -s original --import queues=none -o "$WORK/an.csv"
same "$(python3 -c 'import sys; r = float(sys.argv[1]) / float(sys.argv[2]); print(abs(r - 2 / 3) < 1e-3)' \
    "$(col "$WORK/ax.csv" makespan_us 2)" "$(col "$WORK/an.csv" makespan_us 2)")" True \
    "hlo async compute: makespan 2t against 3t on one stream"
refused "hlo bad import queues" "import option queues: 'x' is not none or xla" \
    "$BIN" validate --import queues=x "$H/hlo_queues.hlo"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
