#!/bin/sh
# A results file in the form that is committed as a baseline:
#
#   sh ci/baseline-form.sh RESULTS.csv > BASELINE.csv
#
# Every column of the results but those that change without a figure moving:
# sched_ms (the policy's own running time, which differs run to run) and the
# sweep's bookkeeping, cell, shard, sweep_id and sweep_cells, which number
# every row by its place in the sweep (one policy more renumbers them all).
# The sweep's identity is kept once, in a `#` line above the header, which
# every reader of results files skips.  Rows keep run's order, by workload,
# then policy in the order of `schedbench list`: adding a policy adds its
# rows and changes none.  compare reads both forms: it never reads the
# columns left out.
set -eu
[ $# -eq 1 ] || { echo "usage: sh ci/baseline-form.sh RESULTS.csv" >&2; exit 2; }
awk '
# split one CSV record (RFC 4180: a quoted field may hold commas and "")
# into f[1..n], each field as written (quotes kept), so it is written back as it was
function split_csv(line,    i, c, q, cur) {
    n = 0; cur = ""; q = 0
    for (i = 1; i <= length(line); i++) {
        c = substr(line, i, 1)
        if (c == "\"") q = !q
        if (c == "," && !q) { f[++n] = cur; cur = ""; continue }
        cur = cur c
    }
    f[++n] = cur
    return q  # 1 when the record goes on past this line (a quoted newline)
}
BEGIN { drop["sched_ms"]; drop["cell"]; drop["shard"]; drop["sweep_id"]; drop["sweep_cells"] }
/^#/ && !have_header { next }
{
    rec = pending == "" ? $0 : pending "\n" $0
    if (split_csv(rec)) { pending = rec; next }
    pending = ""
    if (!have_header) {
        have_header = 1
        for (i = 1; i <= n; i++) { name[i] = f[i]; if (f[i] == "sweep_id") c_id = i; if (f[i] == "sweep_cells") c_cells = i }
        ncol = n
        hdr = ""; k = 0
        for (i = 1; i <= n; i++) if (!(f[i] in drop)) hdr = (k++ ? hdr "," : "") f[i]
        next
    }
    if (!printed) {
        printf "# baseline of sweep_id=%s sweep_cells=%s (ci/baseline-form.sh: sched_ms, cell, shard, sweep_id and sweep_cells left out of the rows)\n", c_id ? f[c_id] : "-", c_cells ? f[c_cells] : "-"
        print hdr
        printed = 1
    }
    out = ""; k = 0
    for (i = 1; i <= n; i++) if (!(name[i] in drop)) out = (k++ ? out "," : "") f[i]
    print out
}
END {
    if (pending != "") { print "ci/baseline-form.sh: the file ends inside a quoted field" > "/dev/stderr"; exit 2 }
    if (!have_header) { print "ci/baseline-form.sh: no header row" > "/dev/stderr"; exit 2 }
    if (!printed) print hdr
}' "$1"
