#!/usr/bin/env bash
# `schedbench collective` against ASTRA-sim (issue 11): upstream's regression
# value, then every case of ../shared/corpus/astra-golden/golden_cases.json
# (skipped without the corpus).  Any failure, or fewer passes than we reached,
# fails the test.
set -u
BIN=$1 CORPUS=$2
fail=0
got=$("$BIN" collective --op all_reduce --algo ring --npus 8 --size 1MiB --bw 50 --latency 500)
if [ "$got" = 117780 ]; then echo "ok: 117780 ns (astra-sim tests/rt_template/refs/stdout.txt)"; else echo "FAIL: U1 gave $got"; fail=1; fi
got=$("$BIN" collective --op all_gather --npus 16 --size 1MiB --local-mem-bw 1600)
if [ "$got" = 323560 ]; then echo "ok: 323560 ns (U3)"; else echo "FAIL: U3 gave $got"; fail=1; fi
# a communicator group {0,1,2,3} on the Ring of 8, its wrap link 3 hops long
# (70,960 ns, derived in tests/test_astra.c and ASTRA-sim's case M contig4)
got=$("$BIN" collective --op reduce_scatter --group 0,1,2,3)
if [ "$got" = 70960 ]; then echo "ok: 70960 ns over the group 0,1,2,3"; else echo "FAIL: group gave $got"; fail=1; fi
"$BIN" collective --op reduce_scatter --group 0,1,1 2>/dev/null
if [ $? = 2 ]; then echo "ok: a rank twice is refused"; else echo "FAIL: --group 0,1,1 accepted"; fail=1; fi
# the same from ASTRA-sim's own config files (workloads/astra/)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
got=$("$BIN" collective --op all_reduce --size 1MiB --system "$ROOT/workloads/astra/system.json" --network "$ROOT/workloads/astra/ring8.yml")
if [ "$got" = 117780 ]; then echo "ok: 117780 ns from the config files"; else echo "FAIL: config files gave $got"; fail=1; fi
# bad config files: file and line, exit 2
W=$(mktemp -d)
printf '{\n  "endpoint-delay": 10,\n  "colour": 3\n}\n' >"$W/bad.json"
"$BIN" collective --op all_reduce --system "$W/bad.json" 2>"$W/err"
if [ $? = 2 ] && grep -qF "$W/bad.json:3: unknown key 'colour'" "$W/err"; then echo "ok: unknown system key"; else echo "FAIL: unknown system key"; cat "$W/err"; fail=1; fi
printf 'topology: [ Ring ]\nnpus: [ 8 ]\n' >"$W/bad.yml"
"$BIN" collective --op all_reduce --network "$W/bad.yml" 2>"$W/err"
if [ $? = 2 ] && grep -qF "$W/bad.yml:2:1: unknown key" "$W/err"; then echo "ok: unknown network key"; else echo "FAIL: unknown network key"; cat "$W/err"; fail=1; fi
# run --comm astra: one 1 MiB all-reduce over 8 ranks (117.780 us, U1) then 1 us
# of compute: makespan 118.780 us; the default model prices it differently
printf 'id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group\n0,x,input,,,,1048576,,,\n1,s,start,0,,,1048576,all_reduce,1048576,8\n2,d,done,1,,,,all_reduce,,\n3,y,compute,2,mm,1,8,,,\n' >"$W/one.csv"
"$BIN" run -q -w "$W/one.csv" -s original --comm astra --system "$ROOT/workloads/astra/system.json" --network "$ROOT/workloads/astra/ring8.yml" -o "$W/r.csv"
got=$(awk -F, 'NR==2{print $6}' "$W/r.csv")
if [ "$got" = 118.780 ]; then echo "ok: run --comm astra 118.780 us"; else echo "FAIL: run --comm astra gave $got"; fail=1; fi
"$BIN" run -q -w "$W/one.csv" -s original -o "$W/s.csv"
if [ "$(awk -F, 'NR==2{print $6}' "$W/s.csv")" != 118.780 ]; then echo "ok: --comm simple differs"; else echo "FAIL: simple = astra"; fail=1; fi
# the rows say which model priced them, compare refuses to mix them, and plot
# draws the two runs side by side
if [ "$(awk -F, 'NR==2{print $15}' "$W/r.csv")" = analytical+astra ]; then echo "ok: cost_model analytical+astra"; else echo "FAIL: cost_model column"; fail=1; fi
if "$BIN" compare "$W/s.csv" "$W/r.csv" >/dev/null 2>&1; then echo "FAIL: compare mixed simple and astra"; fail=1; else echo "ok: compare refuses simple against astra"; fi
"$BIN" plot "$W/s.csv" "$W/r.csv" -o "$W/p" >/dev/null
line=$(grep '^"original"' "$W/p/one.runs.dat" 2>/dev/null)
simple_span=$(awk -F, 'NR==2{print $6}' "$W/s.csv")
if [ -n "$line" ] && [ "$(echo "$line" | awk '{print $3}')" = 118.780000 ] && [ "$(echo "$line" | awk '{print $2}')" = "$(printf '%.6f' "$simple_span")" ]; then echo "ok: plot of two runs"; else echo "FAIL: plot of two runs: $line"; fail=1; fi
# --comm astra-aware: the same all-reduce on a Switch of 8 takes 179.940 us
# alone (derived in tests/test_astra.c), then 1 us of compute
printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' >"$W/sw8.yml"
"$BIN" run -q -w "$W/one.csv" -s original --comm astra-aware --system "$ROOT/workloads/astra/system.json" --network "$W/sw8.yml" -o "$W/a.csv"
if [ "$(awk -F, 'NR==2{print $6 "," $15}' "$W/a.csv")" = 180.940,analytical+astra-aware ]; then echo "ok: run --comm astra-aware 180.940 us"; else echo "FAIL: run --comm astra-aware: $(awk -F, 'NR==2{print $6 "," $15}' "$W/a.csv")"; fail=1; fi
if "$BIN" run -q -w "$W/one.csv" -s original --comm astra-aware --sim inflight=2 -o "$W/x.csv" 2>/dev/null; then echo "FAIL: astra-aware with inflight=2 accepted"; fail=1; else echo "ok: astra-aware refuses inflight=2"; fi
# --comm astra refuses per-type limits and XLA's abstract units
if "$BIN" run -q -w "$W/one.csv" -s original --comm astra --sim all_reduce=2 -o "$W/x.csv" 2>/dev/null; then echo "FAIL: per-type --sim accepted"; fail=1; else echo "ok: per-type --sim refused"; fi
if "$BIN" run -q -w "$W/one.csv" -s original --comm astra --cost-model approx -o "$W/x.csv" 2>/dev/null; then echo "FAIL: approx accepted"; fail=1; else echo "ok: approx refused"; fi
rm -rf "$W"
G=$CORPUS/astra-golden/golden_cases.json
if [ ! -f "$G" ]; then echo "SKIP: $G not present"; exit $fail; fi
out=$("$BIN" collective --golden "$G" --dags "$ROOT/tests/data/astra_dags")
echo "$out" | tail -2
aware_passed=$(echo "$out" | grep '^congestion-aware:' | sed -E 's/^congestion-aware: ([0-9]+) passed.*/\1/')
if [ "${aware_passed:-0}" -lt 76 ]; then echo "FAIL: congestion-aware: ${aware_passed:-none} passed, fewer than 76"; fail=1; fi
passed=$(echo "$out" | tail -1 | sed -E 's/.*: ([0-9]+) passed.*/\1/')
unexpected=$(echo "$out" | grep '^FAIL')
if [ -n "$unexpected" ]; then echo "$unexpected"; fail=1; fi
if [ "$passed" -lt 99 ]; then echo "FAIL: $passed passed, fewer than 99"; fail=1; fi
exit $fail
