#!/usr/bin/env bash
# The blow-ups of issue 42 (item 15) made linear: convert, compare, summary,
# report and merge give what they gave before on small inputs, worked out by
# hand below, and refuse what they must.  Their speed is measured by
# bench/linear_time.sh (a timed command, not a timed test: the machine is
# shared); the bound's backward pass is checked in test_bound.
# Arguments: schedbench BIN, test data DIR, scratch DIR.
set -u
BIN=$1 DATA=$2 WORK=$3/linear_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    timeout 60 "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; head -c 600 "$WORK/err" >&2; fi
}
contains() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1: $(head -c 400 "$1")"; fi; }
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
H=workload,scheduler,status,makespan_us,peak_mem_bytes,exposed_comm_us

# ---- convert: the units column, decided once per file --------------------------------
# units only where some node's is not 1: written back with its values
printf 'id,name,kind,inputs,cost_us,units\n0,a,input,,,\n1,b,compute,0,5,3\n2,c,compute,1,4,\n' >"$WORK/u.csv"
expect_rc 0 "convert units" "$BIN" convert "$WORK/u.csv" -o "$WORK/u.out.csv"
contains "$WORK/u.out.csv" ",flags,units" "units column written"
contains "$WORK/u.out.csv" "1,b,compute,0,,5,,,,,,,,3" "b's 3 units"
contains "$WORK/u.out.csv" "2,c,compute,1,,4,,,,,,,,1" "c's default 1"
printf 'id,name,kind,inputs,cost_us\n0,a,input,,\n1,b,compute,0,5\n' >"$WORK/n.csv"
expect_rc 0 "convert no units" "$BIN" convert "$WORK/n.csv" -o "$WORK/n.out.csv"
if grep -q "units" "$WORK/n.out.csv"; then bad "a units column without units"; else ok; fi

# ---- compare: pairs by name, then by policy name ---------------------------------------
# base: w1 original, w1 aggressive:x=1, w2 aggressive:x=1 and :x=2, w3 heft
# new:  w1 original, w1 aggressive:x=9, w2 aggressive:x=3, w3 heft:y=1 and :y=2, w4 original
# w1's aggressive is the one left on both sides: paired, parameters noted;
# w2 has two aggressive rows left in the base: no pair (missing twice, new);
# w3 has two heft rows left in the new file: no pair (missing, new twice)
{
    echo "$H"
    echo "w1,original,ok,10,100,0"
    echo "w1,aggressive:x=1,ok,10,100,0"
    echo "w2,aggressive:x=1,ok,10,100,0"
    echo "w2,aggressive:x=2,ok,10,100,0"
    echo "w3,heft,ok,10,100,0"
} >"$WORK/base.csv"
{
    echo "$H"
    echo "w1,original,ok,10,100,0"
    echo "w1,aggressive:x=9,ok,20,100,0"
    echo "w2,aggressive:x=3,ok,10,100,0"
    echo "w3,heft:y=1,ok,10,100,0"
    echo "w3,heft:y=2,ok,10,100,0"
    echo "w4,original,ok,10,100,0"
} >"$WORK/new.csv"
expect_rc 1 "compare pairs" "$BIN" compare "$WORK/base.csv" "$WORK/new.csv" --format csv
python3 -c 'import csv, sys
for r in list(csv.DictReader(open(sys.argv[1]))):
    print(r["workload"], r["scheduler"], r["verdict"], r["note"])' "$WORK/out" >"$WORK/verdicts"
cat >"$WORK/want" <<'EOF'
w1 original ok 
w1 aggressive:x=1 regressed parameters x=1 -> x=9
w2 aggressive:x=1 missing 
w2 aggressive:x=2 missing 
w3 heft missing 
w2 aggressive:x=3 new 
w3 heft:y=1 new 
w3 heft:y=2 new 
w4 original new 
EOF
if diff "$WORK/want" "$WORK/verdicts" >"$WORK/diff"; then ok; else bad "compare verdicts: $(cat "$WORK/diff")"; fi
# a row twice in one file is refused, naming both lines (header line 1)
{ cat "$WORK/base.csv"; echo "w2,aggressive:x=1,ok,10,100,0"; } >"$WORK/dup.csv"
expect_rc 2 "compare duplicate" "$BIN" compare "$WORK/dup.csv" "$WORK/new.csv"
contains "$WORK/err" "dup.csv:7: duplicate row for workload 'w2', scheduler 'aggressive:x=1' (first on line 4)" "compare names the duplicate"

# ---- summary and report: a duplicate is refused, as by compare --------------------------
expect_rc 2 "summary duplicate" "$BIN" summary "$WORK/dup.csv"
contains "$WORK/err" "dup.csv:7: duplicate row for workload 'w2', scheduler 'aggressive:x=1' (first on line 4)" "summary names the duplicate"
expect_rc 2 "report duplicate" "$BIN" report "$WORK/dup.csv" -o "$WORK/r.html"
contains "$WORK/err" "dup.csv:7: duplicate row for workload 'w2', scheduler 'aggressive:x=1'" "report names the duplicate"
if [ -e "$WORK/r.html" ]; then bad "report written from a file with a duplicate"; else ok; fi
# rows of workloads interleaved: each workload's rows together, in file order;
# w2: b 20 us over a 10 us = 2.000; w1: b 30 over a 15 = 2.000 too; a best on both
{
    echo "$H"
    echo "w1,a,ok,15,100,0"
    echo "w2,a,ok,10,100,0"
    echo "w2,b,ok,20,50,0"
    echo "w1,b,ok,30,50,0"
} >"$WORK/s.csv"
expect_rc 0 "summary interleaved" "$BIN" summary "$WORK/s.csv" --vs a --format csv
python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    print(r["workload"], r["scheduler"], r["makespan_ratio"])' "$WORK/out" >"$WORK/ratios"
printf 'w1 a 1.000000\nw1 b 2.000000\nw2 a 1.000000\nw2 b 2.000000\n' >"$WORK/want"
if diff "$WORK/want" "$WORK/ratios" >"$WORK/diff"; then ok; else bad "summary grouping: $(cat "$WORK/diff") $(head -c 300 "$WORK/out")"; fi

# ---- merge: nothing sized by the shard column -----------------------------------------
C="$DATA/chain.csv"
expect_rc 0 "shard 1/4294967295" "$BIN" run -q -w "$C" -s original,heft --shard 1/4294967295 -o "$WORK/sh1.csv"
# cell 1 belongs to shard 2 (cell c to shard c mod N + 1): the one shard missing
expect_rc 2 "merge one of 2^32 - 1 shards" "$BIN" merge "$WORK/sh1.csv" -o "$WORK/m.csv"
contains "$WORK/err" "merge: 1 of 2 cells: shard 2/4294967295 not given" "merge names the one shard missing"
# it allocated 4 GiB for the shard column: under a 1 GB address space it
# aborted (exit 134).  AddressSanitizer reserves terabytes of address space
# for itself, so the limit is only set on a plain build.
if ldd "$BIN" 2>/dev/null | grep -q asan; then
    ok
else
    (ulimit -v 1000000; "$BIN" merge "$WORK/sh1.csv" -o "$WORK/m.csv" >/dev/null 2>&1)
    same "$?" 2 "merge in 1 GB of address space"
    (ulimit -v 1000000; "$BIN" run -q -w "$C" -s original --shard 1/4294967295 -o "$WORK/sh3.csv" &&
        "$BIN" merge "$WORK/sh3.csv" -o "$WORK/m3.csv" >/dev/null 2>&1)
    same "$?" 0 "a whole sweep of one cell in shard 1/4294967295"
fi
# a shard column merge cannot read: 2^32 + 1 was 1 to sscanf
sed 's|,1/4294967295,|,1/4294967297,|' "$WORK/sh1.csv" >"$WORK/sh2.csv"
expect_rc 2 "merge shard 2^32 + 1" "$BIN" merge "$WORK/sh2.csv" -o "$WORK/m.csv"
contains "$WORK/err" "sh2.csv:2: shard '1/4294967297' is not K/N with 1 <= K <= N <= 4294967295 (above the maximum)" "merge shard read strictly"
# four shards of eight cells, the third missing: shards named as before
for k in 1 2 4; do
    "$BIN" run -q -w "$C" -w "$DATA/overlap.csv" -s original,heft,dp,ready --shard "$k/4" -o "$WORK/q$k.csv"
done
expect_rc 2 "merge without shard 3" "$BIN" merge "$WORK/q1.csv" "$WORK/q2.csv" "$WORK/q4.csv" -o "$WORK/m.csv"
contains "$WORK/err" "merge: 6 of 8 cells: shard 3/4 not given" "merge names shard 3"
"$BIN" run -q -w "$C" -w "$DATA/overlap.csv" -s original,heft,dp,ready --shard 3/4 -o "$WORK/q3.csv"
expect_rc 0 "merge all four" "$BIN" merge "$WORK/q1.csv" "$WORK/q2.csv" "$WORK/q3.csv" "$WORK/q4.csv" -o "$WORK/m.csv"
same "$(wc -l <"$WORK/m.csv")" 9 "header and eight cells"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
