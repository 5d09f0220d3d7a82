#!/bin/bash
# Instructions per node of one policy's run function (or of the whole loader)
# at 10k, 100k and 1M nodes, counted by valgrind's callgrind, and the growth
# exponent b of count ~ n^b.  Instruction counts do not depend on the machine's
# load, so this tells an algorithm's growth (a log factor, a hidden rescan) from
# cache and page-fault effects, which bench_scale's times include.
#
#   bench/instr_scale.sh POLICY_FUNCTION   e.g. lhs_run (aggressive), ggml_run,
#                                          minmem_run: the plugin's run function
#   bench/instr_scale.sh load              the CSV loader (schedbench validate)
#
# Needs a build in build/ (Release, with symbols: the run function must not be
# inlined away, which a plugin's run never is: it is called through a pointer)
# and valgrind.  Takes minutes: callgrind runs about 50x slower than native.
# SB_SIZES="40 400" picks other gen llama-bwd --layers values.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:?usage: bench/instr_scale.sh POLICY_RUN_FUNCTION|load}
bin=build/schedbench
command -v valgrind >/dev/null || { echo "instr_scale: valgrind not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "instr_scale: build $bin first" >&2; exit 2; }
# the plugin a run function belongs to (its descriptor's name)
policy=
if [ "$what" != load ]; then
    for f in schedulers/*.c; do
        if grep -q "\.run = $what," "$f"; then
            policy=$(sed -n 's/^ *\.name = "\([a-z0-9_-]*\)",.*/\1/p' "$f" | head -1)
        fi
    done
    [ -n "$policy" ] || { echo "instr_scale: no scheduler has .run = $what" >&2; exit 2; }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prev_n=; prev_i=; first_n=; first_i=
printf '%-10s %10s %16s %12s %8s\n' layers nodes instructions instr/node b
for L in ${SB_SIZES:-40 400 4096}; do
    "$bin" gen llama-bwd --layers "$L" -o "$tmp/g.csv" >/dev/null
    n=$("$bin" validate "$tmp/g.csv" | sed -n 's/.*: \([0-9]*\) nodes,.*/\1/p')
    if [ "$what" = load ]; then
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
            "$bin" validate "$tmp/g.csv" >/dev/null 2>"$tmp/log"
    else
        valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$what" \
            --callgrind-out-file="$tmp/cg.out" "$bin" run -w "$tmp/g.csv" -s "$policy" \
            --quiet -o "$tmp/r.csv" >/dev/null 2>"$tmp/log"
    fi
    i=$(sed -n 's/^summary: *//p' "$tmp/cg.out")
    b=-
    [ -n "$prev_n" ] && b=$(awk -v a="$prev_i" -v b="$i" -v m="$prev_n" -v n="$n" \
        'BEGIN { printf "%.3f", log(b / a) / log(n / m) }')
    printf '%-10s %10s %16s %12.0f %8s\n' "$L" "$n" "$i" "$(awk -v i="$i" -v n="$n" 'BEGIN { print i / n }')" "$b"
    [ -n "$first_n" ] || { first_n=$n; first_i=$i; }
    prev_n=$n; prev_i=$i
done
awk -v a="$first_i" -v b="$prev_i" -v m="$first_n" -v n="$prev_n" \
    'BEGIN { if (n > m) printf "growth exponent, smallest to largest: %.3f\n", log(b / a) / log(n / m) }'
