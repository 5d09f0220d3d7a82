#!/usr/bin/env bash
# The journal and --resume (issue 42, items 5, 6, 7 and 3): the journal
# outlives a results file that could not be written; --resume refuses a
# journal of other columns and reuses only rows that check out (fields, sweep,
# the contents of the workload and its machine); an isolated cell stopped by
# Ctrl-C is no crash; --cell-timeout covers a workload's load.
# Arguments: schedbench BIN, test data DIR, test plugin DIR, scratch DIR.
set -u
BIN=$(realpath "$1") DATA=$(realpath "$2") PLUG=$(realpath "$3")/misbehave.so WORK=$(realpath "$4")/resume_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$WORK/err" >&2; fi
}
contains() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1: $(head -c 600 "$1")"; fi; }
lacks() { if grep -qF -- "$2" "$1"; then bad "$3: '$2' in $1"; else ok; fi; }
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
col() { # csv column-name row(2 = first data row)
    awk -F, -v n="$2" -v r="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                                 NR == r { print $c }' "$1"
}
cd "$WORK" || exit 1
cp "$DATA/chain.csv" w.csv
S=original,heft,misbehave:mode=mkdir,overlap
# The sweep: chain.csv (x -> a(10) -> b(5) -> c(7), c also reads a: makespan
# 10 + 5 + 7 = 22 us, tests/test_sim.c) under four policies that all keep the
# file order, so every row has makespan 22.  The third policy makes the
# folder r.csv while the sweep runs: the final rename then fails, as it
# would on a full disk or a path taken meanwhile.
journal() { # [options]: leaves r.csv.partial of the sweep $S on w.csv, its 4 rows; a copy in J
    rm -rf r.csv r.csv.partial
    SB_MISBEHAVE_MKDIR=r.csv "$BIN" run -q --plugin "$PLUG" -w w.csv -s $S "$@" -o r.csv 2>"$WORK/jerr"
    rmdir r.csv
    cp r.csv.partial J
}

# ---- 1. the journal outlives a failed final write (item 5) ----------------------
journal
same "$(grep -c ',ok,' r.csv.partial)" 4 "a failed rename keeps the four rows journalled"
contains "$WORK/jerr" "r.csv: is a folder now: only a regular file is replaced" "the rename's failure is named"
contains "$WORK/jerr" "the 4 finished rows are kept in r.csv.partial" "says where the rows are"
expect_rc 0 "resume after a failed write" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "--resume: 4 of 4 cells taken from r.csv.partial" "every row reused"
# reused, not run again: sched_ms (column 12) is the journal's, to the microsecond
same "$(cut -d, -f1-33 J | tail -n +2)" "$(tail -n +2 r.csv)" "the results are the journal's rows"
if [ -e r.csv.partial ]; then bad "journal left once the file is in place"; else ok; fi

# ---- 2. a journal of other columns is refused, and left as it was (item 6) --------
journal
sed -i '1s/makespan_us,peak_mem_bytes/peak_mem_bytes,makespan_us/' r.csv.partial
cp r.csv.partial J2
expect_rc 2 "columns in another order" "$BIN" run -q --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "r.csv.partial:1: column 6 is 'peak_mem_bytes' where this schedbench writes 'makespan_us'" "reordered header named"
if cmp -s J2 r.csv.partial && [ ! -e r.csv ]; then ok; else bad "reordered: journal changed or results written"; fi
journal
sed -i '1s/$/,extra/; 2,$s/$/,x/' r.csv.partial
expect_rc 2 "an extra column" "$BIN" run -q --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "r.csv.partial:1: 35 columns where this schedbench writes 34" "extra column named"

# ---- 3. garbled fields: the row runs again, and run says so -----------------------
journal
# cell 1's row gets cell 'abc', cell 2's '0x1' (both used to be read as
# cell 0), cell 3's makespan 'x22': only cell 0's row stands, 1 of 4
awk -F, -v OFS=, 'NR == 3 { $16 = "abc" } NR == 4 { $16 = "0x1" } NR == 5 { $6 = "x22" } { print }' J >r.csv.partial
expect_rc 0 "garbled cells" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "r.csv.partial:3: cell 'abc' is not a cell number: this row is not reused" "abc named"
contains "$WORK/err" "r.csv.partial:4: cell '0x1' is not a cell number" "0x1 named"
contains "$WORK/err" "r.csv.partial:5: makespan_us 'x22' is not what run writes there" "garbled makespan named"
contains "$WORK/err" "--resume: 1 of 4 cells taken" "one row reused"
same "$(cut -d, -f16 r.csv | tr '\n' ' ')" "cell 0 1 2 3 " "each cell once, in order"
same "$(cut -d, -f6 r.csv | tr '\n' ' ')" "makespan_us 22.000 22.000 22.000 22.000 " "the re-run rows"
expect_rc 0 "compare takes the resumed file" "$BIN" compare r.csv r.csv
# a row of a cell stopped by Ctrl-C, as older versions recorded it: runs again
journal
awk -F, -v OFS=, 'NR == 3 { $3 = "crash:signal 2" } { print }' J >r.csv.partial
expect_rc 0 "crash:signal 2 row" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "status 'crash:signal 2' is not a finished cell's" "interrupted row named"
same "$(col r.csv status 3)" ok "interrupted row ran again"

# ---- 4. an edited workload or machine is not reused ----------------------------------
journal
sed -i 's/^2,b,compute,1,5,/2,b,compute,1,15,/' w.csv # b: 5 -> 15 us: makespan 10 + 15 + 7 = 32
expect_rc 0 "edited workload" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "w.csv: 4 journalled rows not reused: its files (or its machine's) have changed" "edit named"
contains "$WORK/err" "--resume: 0 of 4 cells taken" "no stale row taken"
same "$(col r.csv makespan_us 2)" 32.000 "the edited workload's makespan"
cp "$DATA/chain.csv" w.csv
# the machine a '# machine=' line names: its capacity is in dev_cap_bytes
printf 'devices:\n  - {name: d0, mem_bytes: 5GiB}\n' >m.yaml
{ echo "# machine=m.yaml"; cat "$DATA/chain.csv"; } >w.csv
journal
sed -i 's/5GiB/6GiB/' m.yaml
expect_rc 0 "edited machine" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "w.csv: 4 journalled rows not reused" "machine edit named"
same "$(col r.csv dev_cap_bytes 2)" 6442450944 "the edited machine's capacity (6 GiB)"
# unchanged, the same journal is taken whole
journal
expect_rc 0 "unchanged machine" "$BIN" run --plugin "$PLUG" -w w.csv -s $S -o r.csv --resume
contains "$WORK/err" "--resume: 4 of 4 cells taken" "unchanged: every row reused"
# --machine FILE too
cp "$DATA/chain.csv" w.csv
journal --machine m.yaml
sed -i 's/6GiB/7GiB/' m.yaml
expect_rc 0 "edited --machine" "$BIN" run --plugin "$PLUG" -w w.csv -s $S --machine m.yaml -o r.csv --resume
contains "$WORK/err" "--resume: 0 of 4 cells taken" "edited --machine: no row taken"

# ---- 5. an isolated cell stopped by Ctrl-C (item 7 of the issue) --------------------
# Only the hanging cell's child gets SIGINT (as when Ctrl-C reaches it first):
# the run stops (130), no row for that cell, and --resume runs it again.
rm -f k.csv k.csv.partial
perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$BIN" run -q --isolate --cell-timeout 60 --plugin "$PLUG" \
    -w w.csv -s original,misbehave:mode=hang,heft -o k.csv 2>"$WORK/kerr" &
pid=$!
child=
for _ in $(seq 600); do # up to 60 s on a loaded machine
    if [ "$(grep -c ',ok,' k.csv.partial 2>/dev/null)" = 1 ]; then
        child=$(pgrep -P $pid | head -1)
        [ -n "$child" ] && break
    fi
    sleep 0.1
done
[ -n "$child" ] && kill -INT "$child"
wait $pid
same "$?" 130 "a cell stopped by SIGINT stops the run"
contains "$WORK/kerr" "interrupted; the results file k.csv was not written" "says so"
lacks k.csv.partial "crash:" "no crash row journalled"
same "$(grep -c ',ok,' k.csv.partial)" 1 "the finished row kept"
expect_rc 1 "resume after SIGINT" "$BIN" run --isolate --cell-timeout 3 --plugin "$PLUG" -w w.csv \
    -s original,misbehave:mode=hang,heft -o k.csv --resume
contains "$WORK/err" "--resume: 1 of 3 cells taken" "original reused"
same "$(cut -d, -f3 k.csv | tr '\n' ' ')" "status ok timeout ok " "the stopped cell ran again"
# the run itself stopped by SIGTERM: its running cell is killed with it
rm -f k.csv k.csv.partial
"$BIN" run -q --isolate --cell-timeout 60 --plugin "$PLUG" -w w.csv -s misbehave:mode=hang -o k.csv 2>/dev/null &
pid=$!
child=
for _ in $(seq 600); do
    child=$(pgrep -P $pid | head -1)
    [ -n "$child" ] && break
    sleep 0.1
done
kill -TERM $pid
wait $pid
same "$?" 130 "SIGTERM to the run"
gone=0
for _ in $(seq 100); do # killed, then reaped by whoever inherits it
    state=$(awk '/^State:/ { print $2 }' "/proc/$child/status" 2>/dev/null)
    if [ -z "$state" ] || [ "$state" = Z ]; then gone=1; break; fi
    sleep 0.1
done
same "$gone" 1 "the hanging cell's process does not outlive the run"
[ "$gone" = 1 ] || kill -KILL "$child" 2>/dev/null

# ---- 6. --cell-timeout covers loading (item 3 of the issue, part) -------------------
# 600,000 nodes load in ~0.2 s (Release; more under ASan or load): far past
# a 0.01 s limit, so the load is stopped and its cells are timeout, with the
# file as workload.  Without the limit on loading, the workload would load
# here and its rows name it 'big'.
awk 'BEGIN { print "id,name,kind,inputs,cost_us"; print "0,n0,compute,,1"
             for (i = 1; i < 600000; i++) printf "%d,n%d,compute,%d,1\n", i, i, i - 1 }' >big.csv
expect_rc 1 "a load past --cell-timeout" timeout 60 "$BIN" run -q --isolate --cell-timeout 0.01 -w big.csv -s original,heft -o b.csv
contains "$WORK/err" "big.csv: loading it took too long (--cell-timeout 0.01 s): its cells are recorded as 'timeout'" "load timeout said"
same "$(cut -d, -f1,3 b.csv | tr '\n' ' ')" "workload,status big.csv,timeout big.csv,timeout " "load timeout rows"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
