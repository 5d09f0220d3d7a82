#!/usr/bin/env bash
# Every real ASTRA-sim text workload and Chakra trace of ../shared/corpus
# imports and runs with every scheduler (issue 12); skipped without the corpus.
set -u
BIN=$1 CORPUS=$2 WORK=$3/traces_work
if [ ! -d "$CORPUS/astra-sim-text" ] || [ ! -d "$CORPUS/stg-et" ]; then
    echo "SKIP: $CORPUS/astra-sim-text or stg-et not present"
    exit 0
fi
rm -rf "$WORK" && mkdir -p "$WORK"
n=0 fail=0
for f in "$CORPUS"/astra-sim-text/*.txt "$CORPUS"/stg-et/*/*.et; do
    case "$f" in *README*) continue ;; esac
    n=$((n + 1))
    if ! "$BIN" run -q -w "$f" -o "$WORK/r.csv" 2>"$WORK/err"; then
        echo "FAIL: $f: $(head -c 300 "$WORK/err")"; fail=$((fail + 1)); continue
    fi
    bad=$(awk -F, 'NR > 1 && $3 != "ok"' "$WORK/r.csv" | head -3)
    if [ -n "$bad" ]; then echo "FAIL: $f: $bad"; fail=$((fail + 1)); fi
done
echo "traces: $n files with every scheduler, $fail failed"
[ "$fail" = 0 ] && [ "$n" -gt 0 ]
