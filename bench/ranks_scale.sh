#!/usr/bin/env bash
# Wall time and peak RSS of a whole `schedbench run -s ready,original
# --import astra=1 --comm astra` on the real DDP trace as a job of N identical
# ranks, and the growth from the first N (docs/ready.md, "Jobs of a thousand
# ranks").  Not part of CI: a timed command, one run per binary and N.
#
#   bench/ranks_scale.sh SCHEDBENCH CORPUS SCRATCH [N ...]   (default 64..1024)
#
# CORPUS is ../shared/corpus; SCRATCH gets the rank folders (symlinks to the
# one trace), the Ring of N network files (50 GB/s, 500 ns, as
# bench/astra_vs.sh) and the results.  With BEFORE=another/schedbench each N
# runs that binary first, then SCHEDBENCH (alternated, on the same files),
# and says whether the two CSVs agree but for the timing column sched_ms.
set -eu
BIN=$1 C=$2 W=$3
shift 3
[ $# -gt 0 ] || set -- 64 128 256 512 1024
mkdir -p "$W"
C=$(cd "$C" && pwd) W=$(cd "$W" && pwd)
R=$C/chakra-real/pytorch-ddp-chakra.0.et
SYS=$C/astra-golden/workloads/system.json
# one run: wall seconds and peak RSS in MB, or "refused" with the message
one() { # binary tag n
    local out=$W/$2.$3
    rm -f "$out.csv"
    if /usr/bin/time -f "%e %M" -o "$out.time" "$1" run -q -w "$W/ddp$3/ddp.%d.et" \
        -s ready,original --import astra=1 --comm astra --system "$SYS" \
        --network "$W/ring$3.yml" -o "$out.csv" 2>"$out.err"; then
        awk '{ printf "%.2f s %d MB", $1, $2 / 1024 }' "$out.time"
    else
        printf 'refused: %s' "$(head -c 120 "$out.err")"
    fi
}
# the CSV but its timing column, sched_ms, found by name
untimed() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "sched_ms") t = i }
             { $t = ""; print }' OFS=, "$1"
}
first_s=
for n in "$@"; do
    mkdir -p "$W/ddp$n"
    for r in $(seq 0 $((n - 1))); do ln -sf "$R" "$W/ddp$n/ddp.$r.et"; done
    printf 'topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
        "$n" >"$W/ring$n.yml"
    line="$n ranks:"
    [ -n "${BEFORE:-}" ] && line="$line before $(one "$BEFORE" before "$n");"
    line="$line after $(one "$BIN" after "$n")"
    if [ -s "$W/after.$n.csv" ]; then
        s=$(awk '{ print $1 }' "$W/after.$n.time")
        first_s=${first_s:-$s} first_n=${first_n:-$n}
        line="$line; end $(awk -F, 'NR == 2 { print $6 }' "$W/after.$n.csv") us"
        line="$line; growth $(awk -v a="$s" -v b="$first_s" -v n="$n" -v m="$first_n" \
            'BEGIN { printf "%.1fx time for %.0fx ranks", a / (b > 0 ? b : 0.01), n / m }')"
    fi
    if [ -s "${W}/before.$n.csv" ] && [ -s "$W/after.$n.csv" ]; then
        if cmp -s <(untimed "$W/before.$n.csv") <(untimed "$W/after.$n.csv"); then
            line="$line; CSV identical"
        else
            line="$line; CSV DIFFERS"
        fi
    fi
    echo "$line"
done
