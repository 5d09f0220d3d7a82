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
# each stg-et job as one (chakra.md, "Several ranks"): every rank file of it
# through trace.%d.et, every scheduler ok, every rank on its own device and
# no copies between them (the joins are after edges); the same from its CSV.
# overlap_preserving_bucketer included: each rank buckets its joined
# collectives alike, so the buckets match (docs/plugins.md, "Buckets").
jobs=0
for d in "$CORPUS"/stg-et/*/; do
    name=$(basename "$d")
    [ -e "$d/$name.0.et" ] || continue
    jobs=$((jobs + 1))
    ranks=$(ls "$d" | grep -c "^$name\.[0-9]*\.et$")
    pat="$d/$name.%d.et"
    if ! "$BIN" run -q -w "$pat" -s all -o "$WORK/j.csv" 2>"$WORK/err"; then
        echo "FAIL: $pat: $(head -c 300 "$WORK/err")"; fail=$((fail + 1)); continue
    fi
    bad=$(awk -F, -v r="$ranks" 'NR > 1 && ($3 != "ok" || $18 != r || $19 != 0)' "$WORK/j.csv" | head -3)
    if ! grep -q '^[^,]*,overlap_preserving_bucketer,ok,' "$WORK/j.csv"; then
        bad="$bad no ok overlap_preserving_bucketer row"
    fi
    if [ -n "$bad" ]; then echo "FAIL: $pat (wanted $ranks devices used, 0 bytes copied): $bad"; fail=$((fail + 1)); fi
    "$BIN" convert "$pat" -o "$WORK/$name.csv" 2>/dev/null &&
        "$BIN" run -q -w "$WORK/$name.csv" -s all -o "$WORK/c.csv" 2>/dev/null
    if ! diff <(cut -d, -f1-11 "$WORK/j.csv") <(cut -d, -f1-11 "$WORK/c.csv") >/dev/null; then
        echo "FAIL: $pat: its CSV gives other results"; fail=$((fail + 1))
    fi
    # the folder of the job's rank files is the job
    if ! "$BIN" validate "$d" 2>/dev/null | grep -qx "$d$name.%d.et: $name: .*"; then
        echo "FAIL: $d: not read as the job $pat"; fail=$((fail + 1))
    fi
done
# two identical ranks of the real PyTorch trace simulate as the one rank does
# under the policies that keep each rank's order or plan per device: every
# collective's copies start and end together, so the joins cost nothing
real=$CORPUS/chakra-real/pytorch-ddp-chakra.0.et
if [ -e "$real" ]; then
    cp "$real" "$WORK/twin.0.et" && cp "$real" "$WORK/twin.1.et"
    "$BIN" run -q -w "$WORK/twin.%d.et" -s original,ready,heft,ggml -o "$WORK/t2.csv" 2>/dev/null
    "$BIN" run -q -w "$real" -s original,ready,heft,ggml -o "$WORK/t1.csv" 2>/dev/null
    if ! diff <(cut -d, -f2,3,6,7 "$WORK/t2.csv") <(cut -d, -f2,3,6,7 "$WORK/t1.csv") >/dev/null; then
        echo "FAIL: two copies of $real do not simulate as one:"
        paste -d, <(cut -d, -f2,3,6,7 "$WORK/t2.csv") <(cut -d, -f6,7 "$WORK/t1.csv")
        fail=$((fail + 1))
    fi
fi
echo "traces: $n files and $jobs multi-rank jobs with every scheduler, $fail failed"
[ "$fail" = 0 ] && [ "$n" -gt 0 ] && [ "$jobs" -gt 0 ]
