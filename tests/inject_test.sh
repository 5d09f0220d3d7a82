#!/usr/bin/env bash
# Hardening round 3, item 1: a name never runs a command.  The three paths
# the adversarial round found: a workload name in a results CSV (plot and
# report), a workload *file name* with a newline (run, then plot), and a
# machine's device name (plot --gantt).  Each name carries a gnuplot
# `system` command on a line of its own; the test fails if any generated
# script has a line that starts with it, and, where gnuplot is installed,
# if the command ran.
# Arguments: schedbench BIN, test data DIR, scratch DIR.
set -u
BIN=$1 DATA=$2 WORK=$3/inject_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$WORK/err" >&2; fi
}
HAVE_GNUPLOT=0
command -v gnuplot >/dev/null && HAVE_GNUPLOT=1
# no_command MARKER DIR what: the marker file is absent from DIR and no script in DIR
# has a line that starts a command of its own
no_command() {
    if [ -e "$2/$1" ]; then bad "$3: the injected command ran"; else ok; fi
    if grep -rlE '^[[:space:]]*(system|!)' --include='*.gp' "$2" >"$WORK/hits" 2>/dev/null; then
        bad "$3: a script line starts a command:"; cat "$WORK/hits" >&2
    else ok; fi
}
# the payload: a newline, then a gnuplot command, then a newline
# (gnuplot runs in the output folder, so a relative marker lands there)
payload() { printf "w\nsystem \"touch %s\"\nx" "$1"; }

# ---- 1. a workload name inside a results CSV --------------------------------
"$BIN" run -q -w "$DATA/chain.csv" -s original,aggressive -o "$WORK/r.csv"
name=$(payload MARK1)
# the workload column quoted as CSV quotes it, so the name holds two newlines
awk -v n="\"${name//\"/\"\"}\"" -F, 'NR == 1 { print; next } { $1 = n; print }' OFS=, \
    "$WORK/r.csv" >"$WORK/r1.csv"
expect_rc 0 "plot a results name" "$BIN" plot "$WORK/r1.csv" -o "$WORK/p1"
no_command MARK1 "$WORK/p1" "results name"
expect_rc 0 "report a results name" "$BIN" report "$WORK/r1.csv" -o "$WORK/rep1"
no_command MARK1 "$WORK/rep1" "results name in report"

# ---- 2. a workload file name with a newline (run, then plot) -----------------
mkdir -p "$WORK/wl"
f="$WORK/wl/$(payload MARK2).csv"
cp "$DATA/chain.csv" "$f"
expect_rc 0 "run a file name" "$BIN" run -q -w "$f" -s original -o "$WORK/r2.csv" --mem-dir "$WORK/mem2"
expect_rc 0 "plot a file name" "$BIN" plot "$WORK/r2.csv" -o "$WORK/p2" --mem-dir "$WORK/mem2"
no_command MARK2 "$WORK/p2" "file name"

# ---- 3. a machine's device name (plot --gantt) -------------------------------
dev=$(payload MARK3)
dev=${dev//\"/\\\"}
dev=${dev//$'\n'/\\n}
cat >"$WORK/m.yaml" <<YAML
name: evil
devices:
  - name: "$dev"
    kind: gpu
  - name: gpu1
    kind: gpu
links:
  default: {gbps: 1, latency_us: 2}
YAML
expect_rc 0 "run a device name" "$BIN" run -q -w "$DATA/two_dev.csv" -s original --machine "$WORK/m.yaml" -o "$WORK/r3.csv" --mem-dir "$WORK/mem3"
expect_rc 0 "gantt a device name" "$BIN" plot "$WORK/r3.csv" -o "$WORK/p3" --mem-dir "$WORK/mem3" --gantt original
if ls "$WORK/p3"/*gantt.gp >/dev/null 2>&1; then ok; else bad "gantt: no script written"; cat "$WORK/out" "$WORK/err" >&2; fi
no_command MARK3 "$WORK/p3" "device name"
# the name is still shown, its newlines as '?'
if grep -qF "w?system" "$WORK"/p3/*gantt.gp; then ok; else bad "gantt: device name not shown"; fi

[ "$HAVE_GNUPLOT" = 1 ] || echo "note: gnuplot not installed; scripts checked, not run"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
