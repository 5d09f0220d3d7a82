#!/usr/bin/env bash
# Walks tests/bad/catalogue.tsv (issue 14): every malformed input exits 2 with a
# message naming its file and line, without a crash or a hang; then the cases
# made at test time (a 10 MB single line, a deeply shared HLO call tree, bad
# option strings) and the regression inputs fuzzing found (tests/fuzz/crashes).
# Arguments: schedbench BIN, tests DIR, scratch DIR.
set -u
BIN=$1 TESTS=$2 WORK=$3/catalogue_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { # description want-fragment command...
    local what=$1 want=$2; shift 2
    timeout 20 "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = 2 ]; then ok; else bad "$what: exit $rc, wanted 2"; cat "$WORK/err" >&2; return; fi
    if grep -qF -- "$want" "$WORK/err"; then ok; else bad "$what: '$want' not in: $(head -c 300 "$WORK/err")"; fi
}
n=0
while IFS=$'\t' read -r file how want; do
    case "$file" in '#'*|'') continue ;; esac
    f="$TESTS/bad/$file"
    n=$((n + 1))
    case "$how" in
    validate) check "$file" "$want" "$BIN" validate "$f" ;;
    machine) check "$file" "$want" "$BIN" validate --machine "$f" ;;
    compare) check "$file" "$want" "$BIN" compare "$f" "$f" ;;
    *) bad "$file: unknown way '$how'" ;;
    esac
done <"$TESTS/bad/catalogue.tsv"
# every workload case also through run: exit 2 and no results file
for f in "$TESTS"/bad/csv-*.csv "$TESTS"/bad/hlo-*.hlo; do
    timeout 20 "$BIN" run -q -w "$f" -s original -o "$WORK/r.csv" >/dev/null 2>&1
    rc=$?
    if [ "$rc" = 2 ] && [ ! -e "$WORK/r.csv" ]; then ok; else bad "run $f: exit $rc or a results file"; fi
    rm -f "$WORK/r.csv"
done
# a 10 MB single line
{ printf 'id,name,kind,inputs,x_'; head -c 10000000 /dev/zero | tr '\0' 'a'; printf '\n0,a,compute,,\n'; } >"$WORK/long.csv"
timeout 60 "$BIN" validate "$WORK/long.csv" >"$WORK/out" 2>&1
same_rc=$?
if [ "$same_rc" = 0 ]; then ok; else bad "10 MB line (an x_ column): exit $same_rc"; fi
{ printf 'id,name,kind,inputs,'; head -c 10000000 /dev/zero | tr '\0' 'a'; printf '\n'; } >"$WORK/long2.csv"
check "10 MB header" "long2.csv:1:5: unknown column" "$BIN" validate "$WORK/long2.csv"
# CRLF, a byte-order mark and quoted separators are not errors
printf '\xef\xbb\xbfid,name,kind,inputs\r\n0,"a,b",compute,\r\n1,c,compute,0\r\n' >"$WORK/crlf.csv"
if "$BIN" validate "$WORK/crlf.csv" >/dev/null 2>&1; then ok; else bad "CRLF + BOM + quoted separator"; fi
# an HLO whose computations each call the next twice, 40 deep: 2^40 paths, one walk
# each; a step build (run, validate) would inline 2^40 instructions, and refuses at once
{
    echo "HloModule deep"
    echo "sum {"; echo "  a = f32[] parameter(0)"; echo "  b = f32[] parameter(1)"
    echo "  ROOT s = f32[] add(a, b)"; echo "}"
    echo "c40 {"; echo "  p = f32[4] parameter(0)"
    echo "  ROOT r = f32[4] all-reduce(p), replica_groups={{0,1}}, to_apply=sum"; echo "}"
    for i in $(seq 39 -1 0); do
        echo "c$i {"; echo "  p = f32[4] parameter(0)"
        echo "  a = f32[4] call(p), calls=c$((i + 1))"
        echo "  ROOT b = f32[4] call(a), calls=c$((i + 1))"; echo "}"
    done
    echo "ENTRY main {"; echo "  p = f32[4] parameter(0)"; echo "  ROOT r = f32[4] call(p), calls=c0"; echo "}"
} >"$WORK/deep.hlo"
check "deep HLO call tree" "deep.hlo:" "$BIN" validate "$WORK/deep.hlo"
# the same tree whose leaf reduces with itself: recursion, refused with its line
sed 's/to_apply=sum/to_apply=c40/' "$WORK/deep.hlo" >"$WORK/rec.hlo"
check "recursive HLO computation" "rec.hlo:7: computation 'c40' calls itself" \
    "$BIN" validate "$WORK/rec.hlo"
# option strings
C="$TESTS/data/chain.csv"
check "--cost value" "cost parameter bw_gbps: 'abc'" "$BIN" run -q -w "$C" --cost bw_gbps=abc -o "$WORK/o.csv"
check "--cost key" "unknown cost parameter 'nokey'" "$BIN" run -q -w "$C" --cost nokey=1 -o "$WORK/o.csv"
check "--sim" "sim parameter inflight: '-1'" "$BIN" run -q -w "$C" --sim inflight=-1 -o "$WORK/o.csv"
check "spec value" "scheduler 'dp': beam='x'" "$BIN" run -q -w "$C" -s dp:beam=x -o "$WORK/o.csv"
check "spec name" "unknown scheduler 'nosuch'" "$BIN" run -q -w "$C" -s nosuch -o "$WORK/o.csv"
check "--shard" "--shard '3/2'" "$BIN" run -q -w "$C" --shard 3/2 -o "$WORK/o.csv"
# inputs fuzzing found: each must be refused or run, never crash (exit >= 128) or hang
for f in "$TESTS"/fuzz/crashes/*; do
    [ -e "$f" ] || continue
    case "$f" in
    *.yaml) timeout 20 "$BIN" validate --machine "$f" >/dev/null 2>&1 ;;
    *.rcsv) timeout 20 "$BIN" compare "$f" "$f" >/dev/null 2>&1 ;;
    *.case) rm -rf "$WORK/case" && mkdir -p "$WORK/case" && cp "$f" "$WORK/case/" &&
            timeout 20 "$BIN" conform "$WORK/case" >/dev/null 2>&1 ;;
    *.aq) continue ;; # fuzz_astra_queue's bytes: ci/fuzz.sh replays them as its seeds
    *) timeout 20 "$BIN" run -q -w "$f" -o "$WORK/fz.csv" >/dev/null 2>&1 ;;
    esac
    rc=$?
    if [ "$rc" -lt 3 ]; then ok; else bad "fuzz regression $f: exit $rc"; fi
done
echo "catalogue: $n files; $pass passed, $fail failed"
[ "$fail" = 0 ]
