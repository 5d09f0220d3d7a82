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

expect_rc 0 version "$BIN" --version
contains "$WORK/out" "plugin ABI 1" version
expect_rc 0 help "$BIN" --help
expect_rc 2 "no command" "$BIN"
expect_rc 2 "unknown command" "$BIN" frobnicate
for c in run list validate; do expect_rc 0 "$c --help" "$BIN" $c --help; done
expect_rc 0 list "$BIN" list
contains "$WORK/out" "original" list

# validate: counts, and a refusal naming file and line
expect_rc 0 validate "$BIN" validate "$DATA/chain.csv" "$DATA/overlap.csv"
contains "$WORK/out" "chain: 4 nodes, 4 edges, 0 collectives" validate
contains "$WORK/out" "overlap: 5 nodes, 4 edges, 1 collectives, all_gather 1" validate
printf 'id,name,kind,inputs\n0,a,compute,\n1,b,compute,7\n' >"$WORK/bad.csv"
expect_rc 2 "validate bad" "$BIN" validate "$WORK/bad.csv"
contains "$WORK/err" "bad.csv:3:4: input 7 is not an earlier row" "validate bad"

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

# no arguments: the default corpus into results/latest.csv, relative to the cwd
mkdir -p "$WORK/repo/workloads/corpus" "$WORK/repo/results"
cp "$DATA/chain.csv" "$DATA/overlap.csv" "$WORK/repo/workloads/corpus/"
(cd "$WORK/repo" && "$BIN" run) >"$WORK/out" 2>"$WORK/err"
same "$?" 0 "default run"
same "$(wc -l <"$WORK/repo/results/latest.csv" | tr -d ' ')" 3 "default run rows"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
