#!/bin/sh
# Issue 40: each Inductor pass's distinguishing rule, switched off through a
# parameter, must make the transcribed cases that exercise it fail (a rule no
# case notices would be untested).  Prints the failures per rule.
# usage: inductor_ablation.sh SCHEDBENCH CASE_DIR
sb=$1
dir=$2
status=0
for p in \
    reorder_compute_and_comm_for_overlap:ablate=ancestor_score \
    reorder_compute_and_comm_for_overlap:ablate=wait_score \
    reorder_compute_and_comm_for_overlap:ablate=overlap_fill \
    reorder_communication_preserving_peak_memory:gemm_stop=0 \
    reorder_communication_preserving_peak_memory:reorder_iterative_peak_memory_budget=1 \
    sink_waits_iterative:gemm_stop=0 \
    overlap_scheduling:prefetch=0 \
    overlap_scheduling:hide_key=0 \
    overlap_scheduling:queues=one \
    reorder_for_peak_memory:methods=bfs \
    simple_overlap:revert=0 \
    simple_overlap:pg_order=0 \
    overlap_preserving_bucketer:interval_check=0 \
    overlap_preserving_bucketer:type_key=0 \
    overlap_scheduling:collective_bucketing=0
do
    line=$("$sb" conform "$dir" --param "$p" | grep '^inductor: ')
    failed=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
    echo "$p: $line"
    if [ -z "$failed" ] || [ "$failed" -eq 0 ]; then
        echo "  no case fails with this rule switched off"
        status=1
    fi
done
exit $status
