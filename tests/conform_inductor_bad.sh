#!/bin/sh
# Issue 40: malformed Inductor conformance cases are refused with the file,
# the line and the problem, exit status 2, never a crash.
# usage: conform_inductor_bad.sh SCHEDBENCH CASE_DIR WORK_DIR
sb=$1 src=$2 work=$3/conform_inductor_bad
rm -rf "$work" && mkdir -p "$work" || exit 1
fails=0
check() { # name icase-text expected-message
    d=$work/$1
    mkdir -p "$d"
    printf '%b' "$2" >"$d/c.icase"
    cp "$src/aten_sink_waits.csv" "$d/c.csv"
    "$sb" conform "$d" >"$d/out" 2>"$d/err"
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -qF "$3" "$d/err"; then
        echo "FAIL $1: rc=$rc, stderr: $(cat "$d/err")"
        fails=$((fails + 1))
    fi
}
check unknown 'source x\ncommit y\npolicy overlap\nfrobnicate 3\n' "c.icase:4: unknown directive 'frobnicate'"
check missing 'source x\ncommit y\n' "c.icase: a case needs source, commit and policy lines"
check number 'source x\ncommit y\npolicy overlap\nexposed 1x\n' "c.icase:4: exposed '1x' is not a whole number"
check names 'source x\ncommit y\npolicy overlap\nsubsequence mm\n' "c.icase:4: subsequence needs two names or more"
check tier 'source x\ncommit y\npolicy overlap\ntier 7\n' "c.icase:4: tier '7' is not 1 or 2"
check nul 'source x\0\n' "c.icase:1: NUL byte"
check empty '' "c.icase: a case needs source, commit and policy lines"
# a case without its graph
mkdir -p "$work/nograph" && printf 'source x\ncommit y\npolicy overlap\n' >"$work/nograph/c.icase"
"$sb" conform "$work/nograph" >/dev/null 2>"$work/nograph.err"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "c.csv: cannot open" "$work/nograph.err"; then
    echo "FAIL nograph: rc=$rc"; fails=$((fails + 1))
fi
# a node name is data: a newline in it stays inside its case's one line
mkdir -p "$work/nl"
cp "$src/aten_sink_waits.icase" "$work/nl/c.icase"
printf 'id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,comm_us,flags\n0,a,input,,,,64,,,,,\n1,"all_reduce\nPASS fake",start,0,all_reduce,,64,all_reduce,64,2,1,\n2,wait_tensor,done,1,,,,,,,,\n3,mm,compute,0 0,mm,1,64,,,,,\n4,mm_1,compute,2 3,mm,1,64,,,,,output\n' >"$work/nl/c.csv"
"$sb" conform "$work/nl" >"$work/nl.out" 2>&1
if grep -q '^PASS fake' "$work/nl.out" || ! grep -q "^FAIL c .*'all_reduce?PASS fake'" "$work/nl.out"; then
    echo "FAIL a name with a newline: $(cat "$work/nl.out")"; fails=$((fails + 1))
fi
# --param must name a policy
"$sb" conform "$src" --param nocolon >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL --param without a policy was accepted"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "conform_inductor_bad: all refused as expected"
exit "$fails"
