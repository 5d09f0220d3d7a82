#!/bin/bash
# The blow-ups of issue 42 (item 15), each at two sizes: wall time, peak
# memory and the growth from the first size to the second (x2 in size: about
# x2 in time is linear, x4 quadratic).  A timed command, not a test: the
# machine may be shared, so read the growth, not the seconds.
#
#   bench/linear_time.sh [BIN] [SCALE]
#
# BIN defaults to build/schedbench; SCALE (default 1) multiplies every size.
# Each command runs under a limit of LIMIT seconds (default 120): a quadratic
# build may not finish, and the line says so.  Needs python3 (the inputs are
# generated, not stored) and GNU time (/usr/bin/time).
#   convert             a chain of N nodes, CSV to CSV (N = 100k, 200k)
#   convert --toposort  a chain whose every row reads the next (150k, 300k)
#   bound               4 nodes, one with N repeated after edges, one cell
#                       of `run -s original` (100k, 200k)
#   compare             a results file of N rows against itself (25k, 50k)
#   summary             N workloads of one row each (10k, 20k), under a
#                       4 GB address-space limit (rows x workloads overran it)
#   merge               one shard of 1/4294967295 (a 1-cell and a 2-cell
#                       sweep), under a 1 GB address-space limit
set -uo pipefail
bin=${1:-build/schedbench}
scale=${2:-1}
limit=${LIMIT:-120}
[ -x "$bin" ] || { echo "linear_time: build $bin first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "linear_time: needs python3" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "linear_time: needs GNU time (/usr/bin/time)" >&2; exit 2; }
W=$(mktemp -d "${TMPDIR:-/tmp}/linear_time.XXXXXX")
trap 'rm -rf "$W"' EXIT
n() { python3 -c "print(int($1 * $scale))"; }

gen() { # kind size file
    python3 - "$1" "$2" "$3" <<'EOF'
import sys
kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "w") as f:
    w = f.write
    if kind == "chain":
        w("id,name,kind,inputs,cost_us,out_bytes\n0,n0,input,,0,8\n")
        for i in range(1, n):
            w(f"{i},n{i},compute,{i-1},1,8\n")
    elif kind == "rev":  # row i reads row i + 1, a later row
        w("id,name,kind,inputs,cost_us,out_bytes\n")
        for i in range(n - 1):
            w(f"{i},n{i},compute,{i+1},1,8\n")
        w(f"{n-1},n{n-1},input,,0,8\n")
    elif kind == "after":  # d is ordered after b n times
        w("id,name,kind,inputs,cost_us,out_bytes,after\n0,a,input,,0,8,\n")
        w("1,b,compute,0,1,8,\n2,c,compute,0,2,8,\n")
        w("3,d,compute,2,3,8," + " ".join(["1"] * n) + "\n")
    elif kind in ("results1", "results2"):  # n rows: one or two schedulers per workload
        w("workload,scheduler,status,nodes,collectives,makespan_us,peak_mem_bytes,"
          "exposed_comm_us,compute_us,comm_us,makespan_lb_us,sched_ms,peak_pos,edges,"
          "cost_model,cell,lb_gap_pct\n")
        per = ["original"] if kind == "results1" else ["original", "heft"]
        cell = 0
        for i in range(n // len(per)):
            for j, s in enumerate(per):
                span = 100 + (i * 7 + j * 13) % 50
                w(f"w{i},{s},ok,10,1,{span}.000,{1000 + (i + j) % 97},1.000,{span}.000,"
                  f"1.000,100.000,0.1,3,9,analytical,{cell},0.000\n")
                cell += 1
EOF
}

report() { # label size file-with-time-output rc
    local secs kb
    secs=$(sed -n 's/^TIME \([0-9.]*\) .*/\1/p' "$3" | tail -1)
    kb=$(sed -n 's/^TIME [0-9.]* \([0-9]*\).*/\1/p' "$3" | tail -1)
    if [ "$4" = 124 ]; then
        printf '%-22s %8s  > %ss (stopped)\n' "$1" "$2" "$limit" >&2
        echo "stopped"
    elif [ "$4" -gt 2 ]; then
        printf '%-22s %8s  %7.2f s  %8d KB  exit %s (failed)\n' "$1" "$2" "$secs" "$kb" "$4" >&2
        echo "failed"
    else
        printf '%-22s %8s  %7.2f s  %8d KB  exit %s\n' "$1" "$2" "$secs" "$kb" "$4" >&2
        echo "$secs"
    fi
}

run_timed() { # label size mem-limit-KB command...
    local label=$1 size=$2 vlim=$3
    shift 3
    ( [ "$vlim" != - ] && ulimit -v "$vlim"
      timeout "$limit" /usr/bin/time -f "TIME %e %M" "$@" >/dev/null 2>"$W/time" )
    report "$label" "$size" "$W/time" $?
}

growth() { # t1 t2
    python3 -c "import sys
a, b = sys.argv[1], sys.argv[2]
if 'stopped' in (a, b) or 'failed' in (a, b): print('  growth: n/a (a size did not finish)')
else: print('  growth x%.1f for x2 in size' % (float(b) / max(float(a), 0.005)))" "$1" "$2"
}

echo "linear_time: $bin, scale $scale, limit ${limit}s"
# each case: generate both sizes, time both, print the growth
case_convert() {
    local a b t1 t2
    a=$(n 100000) b=$(n 200000)
    gen chain "$a" "$W/c1.csv"; gen chain "$b" "$W/c2.csv"
    t1=$(run_timed "convert" "$a" - "$bin" convert "$W/c1.csv" -o "$W/o.csv")
    t2=$(run_timed "convert" "$b" - "$bin" convert "$W/c2.csv" -o "$W/o.csv")
    growth "$t1" "$t2"
}
case_toposort() {
    local a b t1 t2
    a=$(n 150000) b=$(n 300000)
    gen rev "$a" "$W/r1.csv"; gen rev "$b" "$W/r2.csv"
    t1=$(run_timed "convert --toposort" "$a" - "$bin" convert "$W/r1.csv" --toposort -o "$W/o.csv")
    t2=$(run_timed "convert --toposort" "$b" - "$bin" convert "$W/r2.csv" --toposort -o "$W/o.csv")
    growth "$t1" "$t2"
}
case_bound() {
    local a b t1 t2
    a=$(n 100000) b=$(n 200000)
    gen after "$a" "$W/d1.csv"; gen after "$b" "$W/d2.csv"
    t1=$(run_timed "bound (after edges)" "$a" - "$bin" run -q -w "$W/d1.csv" -s original -o "$W/o.csv")
    t2=$(run_timed "bound (after edges)" "$b" - "$bin" run -q -w "$W/d2.csv" -s original -o "$W/o.csv")
    growth "$t1" "$t2"
}
case_compare() {
    local a b t1 t2
    a=$(n 25000) b=$(n 50000)
    gen results2 "$a" "$W/p1.csv"; gen results2 "$b" "$W/p2.csv"
    t1=$(run_timed "compare (rows)" "$a" - "$bin" compare "$W/p1.csv" "$W/p1.csv")
    t2=$(run_timed "compare (rows)" "$b" - "$bin" compare "$W/p2.csv" "$W/p2.csv")
    growth "$t1" "$t2"
}
case_summary() {
    local a b t1 t2
    a=$(n 10000) b=$(n 20000)
    gen results1 "$a" "$W/s1.csv"; gen results1 "$b" "$W/s2.csv"
    t1=$(run_timed "summary (workloads)" "$a" 4000000 "$bin" summary "$W/s1.csv")
    t2=$(run_timed "summary (workloads)" "$b" 4000000 "$bin" summary "$W/s2.csv")
    growth "$t1" "$t2"
}
case_merge() {
    local t1 t2
    "$bin" run -q -w "$(dirname "$0")/../tests/data/chain.csv" -s original --shard 1/4294967295 \
        -o "$W/m1.csv" && "$bin" run -q -w "$(dirname "$0")/../tests/data/chain.csv" \
        -s original,heft --shard 1/4294967295 -o "$W/m2.csv" || { echo "merge: run failed"; return; }
    t1=$(run_timed "merge 1/4294967295" "1 cell" 1000000 "$bin" merge "$W/m1.csv" -o "$W/o.csv")
    t2=$(run_timed "merge 1/4294967295" "2 cells" 1000000 "$bin" merge "$W/m2.csv" -o "$W/o.csv")
    echo "  (exit 134: out of memory; 2 for the two-cell sweep: its shard 2 is not given)"
}
for c in ${CASES:-convert toposort bound compare summary merge}; do
    "case_$c"
done
