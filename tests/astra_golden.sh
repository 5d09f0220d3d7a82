#!/usr/bin/env bash
# `schedbench collective` against ASTRA-sim (issue 11): upstream's regression
# value, then every case of ../shared/corpus/astra-golden/golden_cases.json
# (skipped without the corpus).  The one multi-dimensional pipelined case we
# do not reproduce is named here and in docs/astra.md; any other failure, or
# fewer passes, fails the test.
set -u
BIN=$1 CORPUS=$2
fail=0
got=$("$BIN" collective --op all_reduce --algo ring --npus 8 --size 1MiB --bw 50 --latency 500)
if [ "$got" = 117780 ]; then echo "ok: 117780 ns (astra-sim tests/rt_template/refs/stdout.txt)"; else echo "FAIL: U1 gave $got"; fail=1; fi
got=$("$BIN" collective --op all_gather --npus 16 --size 1MiB --local-mem-bw 1600)
if [ "$got" = 323560 ]; then echo "ok: 323560 ns (U3)"; else echo "FAIL: U3 gave $got"; fail=1; fi
G=$CORPUS/astra-golden/golden_cases.json
if [ ! -f "$G" ]; then echo "SKIP: $G not present"; exit $fail; fi
out=$("$BIN" collective --golden "$G")
echo "$out" | tail -1
passed=$(echo "$out" | tail -1 | sed -E 's/.*: ([0-9]+) passed.*/\1/')
unexpected=$(echo "$out" | grep '^FAIL' | grep -v '^FAIL F_RR4x8_tpu_all_reduce_1MiB_localBWAware:')
if [ -n "$unexpected" ]; then echo "$unexpected"; fail=1; fi
if [ "$passed" -lt 85 ]; then echo "FAIL: $passed passed, fewer than 85"; fail=1; fi
exit $fail
