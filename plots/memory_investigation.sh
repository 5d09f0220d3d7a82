#!/usr/bin/env bash
# Regenerates the memory-over-position plot of docs/overlap.md.
#   plots/memory_investigation.sh [WORKLOAD.csv] [OUT.png]
# Without a workload, generates the default Llama 3 8B FSDP backward.  Uses
# $SCHEDBENCH (default build/schedbench); writes timelines to a temporary
# directory, the PNG to OUT (default plots/memory_investigation.png).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
bin=${SCHEDBENCH:-$root/build/schedbench}
out=${2:-$here/memory_investigation.png}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

workload=${1:-}
if [ -z "$workload" ]; then
    workload=$work/llama-bwd.csv
    "$bin" gen llama-bwd -o "$workload"
fi
"$bin" run -w "$workload" --quiet \
    -s original,overlap,overlap:prefetch=0,memfallback,membound \
    --mem-dir "$work" -o "$work/results.csv"
# the timelines are named after the workload's name column of the results
name=$(awk -F, 'NR == 2 { print $1 }' "$work/results.csv" | tr -c 'A-Za-z0-9._\n-' '_')
gnuplot -e "memdir='$work'; workload='$name'; out='$out'" "$here/memory_investigation.gp"
cut -d, -f1-8 "$work/results.csv"
echo "wrote $out"
