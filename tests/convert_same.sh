#!/usr/bin/env bash
# Converts every workload file of workloads/corpus, tests/data and
# ../shared/corpus with two schedbench binaries and requires byte-identical
# CSV v1 output, or the same refusal (exit status).  For changes to the
# importers that must not change what they import (the graph builder, issue
# 20): build the old commit, then
#   tests/convert_same.sh OLD/schedbench NEW/schedbench [ROOT]
# Prints one line per difference and "N passed, M failed".
set -u
OLD=$1 NEW=$2 ROOT=${3:-$(cd "$(dirname "$0")/.." && pwd)}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
pass=0 fail=0
dirs=("$ROOT/workloads/corpus" "$ROOT/tests/data")
[ -d "$ROOT/../shared/corpus" ] && dirs+=("$ROOT/../shared/corpus")
while IFS= read -r -d '' f; do
    "$OLD" convert "$f" -o "$WORK/old.csv" >"$WORK/old.out" 2>&1; a=$?
    "$NEW" convert "$f" -o "$WORK/new.csv" >"$WORK/new.out" 2>&1; b=$?
    if [ "$a" != "$b" ]; then
        echo "DIFF exit $a -> $b: $f"; fail=$((fail + 1))
    elif [ "$a" = 0 ] && ! cmp -s "$WORK/old.csv" "$WORK/new.csv"; then
        echo "DIFF output: $f"; fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
    rm -f "$WORK/old.csv" "$WORK/new.csv"
done < <(find "${dirs[@]}" -type f \( -name '*.csv' -o -name '*.hlo' -o -name '*.et' \
             -o -name '*.txt' \) -print0 | sort -z)
echo "convert_same: $pass passed, $fail failed"
[ "$fail" = 0 ]
