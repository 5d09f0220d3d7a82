#!/usr/bin/env bash
# Where output goes (issue 42, items 4, 5 and 9): -o of run, merge, report and
# convert replaces only a regular file, checked before the work; `-o -` is
# standard output; output that could not be written is exit 2; a killed report
# leaves no temporary folder.  No real /dev file is touched: the "device" is a
# FIFO or a symlink made here (/dev/full is only written to, by redirection).
# Arguments: schedbench BIN, test data DIR, test plugin DIR, scratch DIR.
set -u
BIN=$(realpath "$1") DATA=$(realpath "$2") PLUG=$(realpath "$3")/misbehave.so WORK=$(realpath "$4")/output_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$WORK/err" >&2; fi
}
contains() { if grep -qF -- "$2" "$1"; then ok; else bad "$3: '$2' not in $1: $(head -c 400 "$1")"; fi; }
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
C="$DATA/chain.csv"
W=$WORK/t
mkdir -p "$W"

# ---- 1. -o names something that is not a regular file -------------------------
# Each is refused before the sweep: the sweep here has a cell that hangs (under
# a 60 s cell timeout), so a check made only after it would run into `timeout`
# (exit 124).  The path keeps what it was.
echo kept >"$W/target.csv"
ln -s target.csv "$W/link.csv"
ln -s /dev/null "$W/devnull.csv" # a symlink to a device: refused as a symlink, /dev/null untouched
mkfifo "$W/fifo.csv"
mkdir -p "$W/dir.csv"
hang=(--isolate --cell-timeout 60 --plugin "$PLUG" -s original,misbehave:mode=hang)
for t in link devnull fifo dir; do
    expect_rc 2 "run -o $t" timeout 20 "$BIN" run -q -w "$C" "${hang[@]}" -o "$W/$t.csv"
done
contains "$WORK/err" "$W/dir.csv: is a folder: only a regular file is replaced" "-o folder says so"
expect_rc 2 "run -o link" timeout 20 "$BIN" run -q -w "$C" -s original -o "$W/link.csv"
contains "$WORK/err" "$W/link.csv: is a symbolic link: only a regular file is replaced" "-o symlink says so"
expect_rc 2 "run -o fifo" timeout 20 "$BIN" run -q -w "$C" -s original -o "$W/fifo.csv"
contains "$WORK/err" "$W/fifo.csv: is a FIFO: only a regular file is replaced" "-o FIFO says so"
if [ -L "$W/link.csv" ] && [ "$(cat "$W/target.csv")" = kept ]; then ok; else bad "symlink or its target changed"; fi
if [ -L "$W/devnull.csv" ]; then ok; else bad "symlink to /dev/null replaced"; fi
if [ -p "$W/fifo.csv" ]; then ok; else bad "FIFO replaced"; fi
if [ -d "$W/dir.csv" ]; then ok; else bad "folder replaced"; fi
same "$(ls "$W" | grep -c '\.tmp\.\|\.partial')" 0 "no temporary or journal left by the refusals"
# a folder that does not exist: before the sweep too
expect_rc 2 "run -o missing folder" timeout 20 "$BIN" run -q -w "$C" "${hang[@]}" -o "$W/nope/r.csv"
contains "$WORK/err" "$W/nope/r.csv: cannot create: folder '$W/nope' does not exist" "-o missing folder"
# a folder that cannot be written: chmod does not stop root, sysfs does
if [ "$(id -u)" != 0 ]; then
    mkdir -p "$W/ro" && chmod 555 "$W/ro"
    expect_rc 2 "run -o read-only folder" timeout 20 "$BIN" run -q -w "$C" "${hang[@]}" -o "$W/ro/r.csv"
    contains "$WORK/err" "$W/ro/r.csv: cannot create" "-o read-only folder"
elif [ -d /sys/kernel ]; then
    expect_rc 2 "run -o read-only folder (sysfs)" timeout 20 "$BIN" run -q -w "$C" "${hang[@]}" -o /sys/kernel/schedbench-r.csv
    contains "$WORK/err" "/sys/kernel/schedbench-r.csv: cannot create" "-o read-only folder"
else
    echo "skipped: read-only folder (root, and no sysfs)"
fi
# a regular file is replaced as before
expect_rc 0 "run -o regular file" "$BIN" run -q -w "$C" -s original -o "$W/target.csv"
same "$(wc -l <"$W/target.csv")" 2 "regular file replaced by the results"

# merge, convert and report refuse the same way, before their work
expect_rc 0 "a results file" "$BIN" run -q -w "$C" -s original,heft -o "$WORK/r.csv"
for t in link fifo dir; do
    expect_rc 2 "merge -o $t" timeout 20 "$BIN" merge "$WORK/r.csv" -o "$W/$t.csv"
    expect_rc 2 "convert -o $t" timeout 20 "$BIN" convert "$C" -o "$W/$t.csv"
done
contains "$WORK/err" "$W/dir.csv: is a folder: only a regular file is replaced" "convert -o folder"
# report: refused before any figure.  A gnuplot of our own on PATH notes each
# call: none may come.
mkdir -p "$WORK/bin"
printf '#!/bin/sh\necho called >>"%s"\n' "$WORK/gnuplot.calls" >"$WORK/bin/gnuplot"
chmod +x "$WORK/bin/gnuplot"
for t in link fifo dir; do
    expect_rc 2 "report -o $t" env PATH="$WORK/bin:$PATH" TMPDIR="$WORK" timeout 20 "$BIN" report "$WORK/r.csv" -o "$W/$t.csv"
done
contains "$WORK/err" "$W/dir.csv: is a folder: only a regular file is replaced" "report -o folder"
if [ -e "$WORK/gnuplot.calls" ]; then bad "report -o DIR drew figures before refusing"; else ok; fi
if [ -L "$W/link.csv" ] && [ -p "$W/fifo.csv" ] && [ -d "$W/dir.csv" ]; then ok; else bad "merge/convert/report replaced a target"; fi

# an empty folder name (--mem-dir ''): refused; it used to walk past the
# string's end (valgrind: a jump on uninitialised memory, when installed and
# the binary is not built with ASan, which valgrind cannot run)
expect_rc 2 "--mem-dir ''" "$BIN" run -q -w "$C" -s original --mem-dir '' -o "$W/m.csv"
contains "$WORK/err" "'': an empty folder name" "--mem-dir '' says so"
if command -v valgrind >/dev/null && ! ldd "$BIN" 2>/dev/null | grep -q libasan; then
    valgrind -q --error-exitcode=99 "$BIN" run -q -w "$C" -s original --mem-dir '' -o "$W/m.csv" >/dev/null 2>"$WORK/vg"
    rc=$?
    if [ "$rc" = 2 ]; then ok; else bad "--mem-dir '' under valgrind: exit $rc: $(head -c 600 "$WORK/vg")"; fi
fi

# ---- 2. -o - writes to standard output -------------------------------------------
expect_rc 0 "run -o -" "$BIN" run -q -w "$C" -s original,heft -o -
same "$(cut -d, -f1-11,13- "$WORK/out")" "$(cut -d, -f1-11,13- "$WORK/r.csv")" "run -o -: the results file's rows"
expect_rc 2 "run -o - --resume" "$BIN" run -q -w "$C" -s original -o - --resume
contains "$WORK/err" "--resume needs -o FILE" "run -o - --resume"
expect_rc 0 "merge -o -" "$BIN" merge "$WORK/r.csv" -o -
same "$(cat "$WORK/out")" "$(cat "$WORK/r.csv")" "merge -o -"
expect_rc 0 "convert -o -" "$BIN" convert "$C" -o -
"$BIN" convert "$C" -o "$WORK/conv.csv"
same "$(cat "$WORK/out")" "$(cat "$WORK/conv.csv")" "convert -o -"
expect_rc 0 "report -o -" env PATH="$WORK/bin:$PATH" "$BIN" report "$WORK/r.csv" -o -
contains "$WORK/out" "<!DOCTYPE html>" "report -o -"
same "$(ls "$WORK" | grep -c '^-')" 0 "no file named - written"

# ---- 3. output that goes nowhere is exit 2 -----------------------------------------
if [ -w /dev/full ]; then
    for cmd in "summary $WORK/r.csv" "summary $WORK/r.csv --format json" "compare $WORK/r.csv $WORK/r.csv" \
               "validate $C" "list" "merge $WORK/r.csv -o -" "convert $C -o -" "run -q -w $C -s original -o -"; do
        # shellcheck disable=SC2086
        "$BIN" $cmd >/dev/full 2>"$WORK/err"
        rc=$?
        same "$rc" 2 "$cmd >/dev/full"
        contains "$WORK/err" "standard output: write error: No space left on device" "$cmd >/dev/full says so"
    done
else
    echo "skipped: /dev/full"
fi

# ---- 4. a killed report removes its temporary folder -------------------------------
# A gnuplot that takes its time keeps the report busy while it is killed.
mkdir -p "$WORK/slow" "$WORK/rtmp"
printf '#!/bin/sh\nexec sleep 5\n' >"$WORK/slow/gnuplot"
chmod +x "$WORK/slow/gnuplot"
for sig in TERM INT; do
    env PATH="$WORK/slow:$PATH" TMPDIR="$WORK/rtmp" perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' \
        "$BIN" report "$WORK/r.csv" -o "$WORK/killed.html" >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 600); do # until it is drawing (up to 60 s on a loaded machine)
        ls "$WORK"/rtmp/schedbench-report.*/*.gp >/dev/null 2>&1 && break
        sleep 0.1
    done
    kill -$sig $pid
    wait $pid
    rc=$?
    [ $sig = TERM ] && want=143 || want=130
    same "$rc" "$want" "report killed by SIG$sig dies of it"
    same "$(ls -A "$WORK/rtmp" | wc -l)" 0 "SIG$sig: no temporary folder left"
    same "$(ls "$WORK" | grep -c 'killed\.html')" 0 "SIG$sig: no page and no page temporary"
done

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
