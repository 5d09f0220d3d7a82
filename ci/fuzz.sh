#!/bin/sh
# Runs every libFuzzer target of tests/fuzz for SECONDS each (docs/fuzzing.md).
# Usage: ci/fuzz.sh BUILD_DIR SECONDS
# Seeds come from the repository (and ../shared/corpus when it exists); the
# growing corpus stays in BUILD_DIR/fuzz-corpus; a crash is saved as
# BUILD_DIR/fuzz-crashes/<target>-crash-* and fails the run: copy it to
# tests/fuzz/crashes/ (with the extension of its format) once it is fixed.
set -eu
B=$1 SECONDS_EACH=$2
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$root/../shared/corpus
seeds() { # target: the directories and files to seed it from
    case $1 in
    workload) echo "$root/tests/data $root/tests/bad $root/workloads/corpus/tiny-fsdp.csv $root/workloads/corpus/tiny-memory.csv $root/workloads/corpus/tiny-two-coll.csv" ;;
    hlo) echo "$root/tests/bad $root/tests/data/hlo_cases"; [ -d "$shared/xla-lhs" ] && echo "$shared/xla-lhs" ;;
    machine) echo "$root/workloads/machines $root/tests/data $root/tests/bad" ;;
    results) echo "$root/tests/bad" ;;
    options) echo "" ;;
    expect) [ -d "$shared/xla-lhs" ] && echo "$shared/xla-lhs" || echo "" ;;
    chakra) [ -d "$shared/stg-et" ] && echo "$shared/stg-et/denseA $shared/stg-et/mergedAB" || echo "" ;;
    astra_text) [ -d "$shared/astra-sim-text" ] && echo "$shared/astra-sim-text" || echo "" ;;
    ggml_case) [ -d "$shared/ggml-sched" ] && echo "$shared/ggml-sched" || echo "" ;;
    astra_config) echo "$root/workloads/astra" ;;
    astra_queue) echo "$root/tests/fuzz/crashes/astra-queue-sooner-than-alone.aq $root/tests/fuzz/crashes/astra-queue-tree-of-one.aq" ;;
    resume) echo "$root/tests/bad/journal-reordered.partial $root/tests/bad/journal-extra-column.partial" ;; # and seeds/resume
    names) echo "" ;; # seeds/names
    icase) echo "" ;; # seeds/icase: cases of workloads/conform/inductor with their graphs
    esac
}
mkdir -p "$B/fuzz-crashes"
failed=0
for t in workload hlo machine results options expect chakra astra_text ggml_case astra_config astra_queue \
         resume names icase; do
    corpus=$B/fuzz-corpus/$t seed=$B/fuzz-seeds/$t
    mkdir -p "$corpus" "$seed"
    # seeds kept for a target in tests/fuzz/seeds/<target> (issue 27's cases among them)
    for s in $(seeds $t) "$root/tests/fuzz/seeds/$t"; do
        if [ -d "$s" ]; then cp "$s"/* "$seed"/ 2>/dev/null || true; elif [ -f "$s" ]; then cp "$s" "$seed"/; fi
    done
    [ "$t" = options ] && printf 'lat_us=2,bw_gbps=40\ninflight=2\ndp:beam=2,max_group=8\n' >"$seed/one"
    echo "fuzz: $t for ${SECONDS_EACH}s"
    if ! "$B/tests/fuzz/fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$B/fuzz-crashes/$t-" "$corpus" "$seed" \
        >"$B/fuzz-$t.log" 2>&1; then
        echo "fuzz: $t FAILED (see $B/fuzz-$t.log and $B/fuzz-crashes/)"
        tail -30 "$B/fuzz-$t.log"
        failed=1
    else
        grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$B/fuzz-$t.log" | tr '\n' ' '
        echo
    fi
done
rm -rf /tmp/sbfuzz.*
exit $failed
