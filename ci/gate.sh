#!/bin/sh
# The regression gate: runs the default sweep and compares it with the committed
# baseline.  Results are deterministic, so the comparison is exact (zero
# tolerance): any growth of peak memory, makespan or exposed communication, a
# missing row or a row that turned into an error fails.  Improvements and new
# rows pass, and are listed so the baseline can be refreshed (make baseline).
set -eu
BIN=${1:-./build/schedbench}
BASE=${BASELINE:-results/baseline.csv}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BIN" run --isolate --jobs 2 --quiet -o "$out/now.csv"
echo "regression gate: $BASE vs the current sweep (exact)"
rc=0
"$BIN" compare "$BASE" "$out/now.csv" --mem-tol 0 --time-tol 0 --format csv >"$out/cmp.csv" || rc=$?
column -t -s, "$out/cmp.csv" 2>/dev/null || cat "$out/cmp.csv"
[ "$rc" -le 1 ] || exit "$rc"
# one closing line in the form CI logs are read for: a row passes unless it
# regressed, went missing or turned into an error
awk -F, 'NR > 1 { if ($3 == "regressed" || $3 == "missing" || $3 == "error") f++; else p++ }
         END { printf "gate: %d passed, %d failed\n", p, f }' "$out/cmp.csv"
exit "$rc"
