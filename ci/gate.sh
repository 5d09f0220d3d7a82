#!/bin/sh
# The regression gate: runs the default sweep and compares it with the committed
# baseline.  Results are deterministic, so the comparison is exact (zero
# tolerance): any growth of peak memory, makespan or exposed communication, a
# missing row or a row that turned into an error fails.  Improvements and new
# rows pass, and are printed so the baseline can be refreshed (make baseline).
set -eu
BIN=${1:-./build/schedbench}
BASE=${BASELINE:-results/baseline.csv}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BIN" run --jobs 2 --quiet -o "$out/now.csv"
echo "regression gate: $BASE vs the current sweep (exact)"
"$BIN" compare "$BASE" "$out/now.csv" --mem-tol 0 --time-tol 0
