#!/bin/sh
# The regression gate: runs a sweep and compares it with a committed baseline.
#
#   sh ci/gate.sh [BIN] [--metrics L] [--junit FILE] [--summary FILE] [RUN OPTIONS]
#
# BIN is schedbench (default ./build/schedbench); BASELINE names the baseline
# (default results/baseline.csv).  RUN OPTIONS go to `schedbench run` as they
# are (--plugin X.so, -w FILE|DIR, -s SPEC, --machine, ...), so a plugin's own
# CI gates its sweep against its own baseline (docs/plugins.md, "Gating your
# plugin"); with none, the default sweep.  --metrics peak,makespan,exposed
# picks what is judged (compare --metrics); --junit and --summary also write
# compare's JUnit XML and Markdown (for $GITHUB_STEP_SUMMARY) before the gate
# decides, so a CI step under `bash -e` has both even when it fails.
#
# Results are deterministic, so the comparison is exact (zero tolerance): any
# growth of a judged metric, a missing row, a row that turned into an error or
# a trade-off (one metric grew while another shrank) fails.  Improvements and
# new rows pass, and are listed so the baseline can be refreshed (make
# baseline).  Only changed rows are printed; the last line names each row
# that failed.
set -eu
BIN=./build/schedbench
case "${1:-}" in -*|'') ;; *) BIN=$1; shift ;; esac
BASE=${BASELINE:-results/baseline.csv}
JOBS=${JOBS:-2}
metrics=peak,makespan,exposed junit= summary=
# the gate's own options out, the rest kept in order for run (POSIX sh has no
# arrays: each kept argument is rotated to the end of "$@")
n=$#
while [ "$n" -gt 0 ]; do
    a=$1; shift; n=$((n - 1))
    case $a in
    --metrics|--junit|--summary)
        [ "$n" -gt 0 ] || { echo "ci/gate.sh: $a needs a value" >&2; exit 2; }
        v=$1; shift; n=$((n - 1))
        case $a in --metrics) metrics=$v ;; --junit) junit=$v ;; *) summary=$v ;; esac ;;
    *) set -- "$@" "$a" ;;
    esac
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$BIN" run --isolate --jobs "$JOBS" --quiet "$@" -o "$out/now.csv"
echo "regression gate: $BASE vs the current sweep (exact; judged: $metrics)"
cmp() { "$BIN" compare "$BASE" "$out/now.csv" --mem-tol 0 --time-tol 0 --metrics "$metrics" "$@"; }
# the reports first, each allowed to fail (exit 1 is the verdict, read below)
if [ -n "$junit" ]; then rc=0; cmp --format junit >"$junit" 2>/dev/null || rc=$?; [ "$rc" -le 1 ] || exit "$rc"; fi
if [ -n "$summary" ]; then rc=0; cmp --format md --changes-only >"$summary" 2>/dev/null || rc=$?; [ "$rc" -le 1 ] || exit "$rc"; fi
rc=0
cmp --changes-only --format text 2>"$out/err" || rc=$?
# compare's closing lines: the counts, then the failing rows by name
grep -v '^compare: ' "$out/err" >&2 || true
[ "$rc" -le 1 ] || exit "$rc"
counts=$(sed -n 's/^compare: \([0-9]* rows\): .*; \([0-9]* passed, [0-9]* failed\)$/\1: \2/p' "$out/err")
failed=$(sed -n 's/^compare: failed: //p' "$out/err")
echo "gate: $counts${failed:+: $failed}"
exit "$rc"
