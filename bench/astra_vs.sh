#!/usr/bin/env bash
# ASTRA-sim against `schedbench run -s ready,original --import astra=1` on the
# real DDP trace as a job of N identical ranks, timed alternately on the
# same machine (docs/ready.md, "Speed against ASTRA-sim").  Not part of CI:
# ASTRA-sim is built by hand (../shared/tools/astra-sim/README.md).
#
#   bench/astra_vs.sh ASTRA_BIN_DIR SCHEDBENCH CORPUS SCRATCH N [N ...]
#
# ASTRA_BIN_DIR holds AstraSim_Analytical_Congestion_Unaware (WORK/astra-src/
# build/astra_analytical/build/bin); CORPUS is ../shared/corpus; SCRATCH gets
# the rank folders (symlinks to the one trace), the network files and
# ASTRA-sim's log/ folders.  Each N runs ASTRA-sim (congestion-unaware, Ring
# of N, 50 GB/s, 500 ns, the goldens' system.json), then schedbench with the
# same files, and prints both wall times (GNU time), peak RSS, both ends and
# the ratio of the wall times.
set -eu
A=$1 BIN=$2 C=$3 W=$4
shift 4
mkdir -p "$W"
# whole paths: ASTRA-sim runs in a folder of its own, and the links need them
A=$(cd "$A" && pwd) C=$(cd "$C" && pwd) W=$(cd "$W" && pwd)
R=$C/chakra-real/pytorch-ddp-chakra.0.et
SYS=$C/astra-golden/workloads/system.json
echo '{"memory-type": "NO_MEMORY_EXPANSION"}' >"$W/mem.json"
for n in "$@"; do
    mkdir -p "$W/ddp$n" "$W/run$n"
    for r in $(seq 0 $((n - 1))); do ln -sf "$R" "$W/ddp$n/ddp.$r.et"; done
    printf 'topology: [ Ring ]\nnpus_count: [ %d ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' \
        "$n" >"$W/ring$n.yml"
    # ASTRA-sim writes log/ in its working folder
    (cd "$W/run$n" && /usr/bin/time -f "%e %M" -o time.txt \
        "$A/AstraSim_Analytical_Congestion_Unaware" --workload-configuration="$W/ddp$n/ddp" \
        --system-configuration="$SYS" --network-configuration="$W/ring$n.yml" \
        --remote-memory-configuration="$W/mem.json" >out.txt 2>&1)
    a_end=$(grep -m1 'sys\[0\] finished' "$W/run$n/out.txt" | sed 's/.*finished, \([0-9]*\) cycles.*/\1/')
    read -r a_s a_kb <"$W/run$n/time.txt"
    /usr/bin/time -f "%e %M" -o "$W/sb$n.txt" "$BIN" run -q -w "$W/ddp$n/ddp.%d.et" \
        -s ready,original --import astra=1 --comm astra --system "$SYS" \
        --network "$W/ring$n.yml" -o "$W/sb$n.csv"
    s_end=$(awk -F, 'NR == 2 { print $6 }' "$W/sb$n.csv")
    read -r s_s s_kb <"$W/sb$n.txt"
    awk -v n="$n" -v as="$a_s" -v ak="$a_kb" -v ae="$a_end" -v ss="$s_s" -v sk="$s_kb" \
        -v se="$s_end" 'BEGIN { printf "%d ranks: ASTRA-sim %.2f s %d MB end %s ns; " \
        "schedbench %.2f s %d MB end %s us; %.0fx\n", n, as, ak / 1024, ae, ss, sk / 1024, se,
        as / (ss > 0 ? ss : 0.01) }'
done
