#!/usr/bin/env bash
# Names are data in every output language (issue 42, item 7): a workload whose
# file name holds '|', '=cmd()', a newline, '<blink>' and bytes that are not
# UTF-8, with node names as bad, goes through run (results, Chrome trace),
# summary (text, json, csv, --devices), compare (text, json, csv, markdown),
# merge, report and convert.  JSON must parse (python3's json, and jq when
# installed) with the names as U+FFFD-mended text; Markdown rows keep their
# 16 cell separators; spreadsheet CSV defuses formulas; HTML is UTF-8 with no
# tag from a name; the results CSV keeps the name byte for byte; convert
# refuses a name it cannot write as a '# name=' line.
# Arguments: schedbench BIN, test data DIR, scratch DIR.
set -u
BIN=$(realpath "$1") DATA=$(realpath "$2") WORK=$(realpath "$3")/names_work
rm -rf "$WORK" && mkdir -p "$WORK"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description command...
    local want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; local rc=$?
    if [ "$rc" = "$want" ]; then ok; else bad "$what: exit $rc, wanted $want"; cat "$WORK/err" >&2; fi
}
same() { if [ "$1" = "$2" ]; then ok; else bad "$3: got '$1', wanted '$2'"; fi; }
if ! command -v python3 >/dev/null; then
    echo "skipped: names test (needs python3)"
    exit 0
fi
# py WHAT SCRIPT FILE: the script (reading sys.argv[1]) must exit 0
py() {
    if python3 -c "$2" "$3" 2>"$WORK/pyerr"; then ok; else bad "$1: $(head -c 600 "$WORK/pyerr")"; fi
}
jq_ok() { # jq, when installed, parses it too
    if ! command -v jq >/dev/null; then return; fi
    if jq . "$2" >/dev/null 2>&1; then ok; else bad "$1: jq refuses $2"; fi
}
cd "$WORK" || exit 1

# The workload's name is its file's stem: '=cmd()|<blink>', a newline, 'x', then
# 0xff (never UTF-8) and 0xc3 0x28 (a lead byte without its continuation).
W=$'=cmd()|<blink>\nx\xff\xc3('
# node names: a pipe and a newline, a formula, ill-formed UTF-8, a control byte
printf 'id,name,kind,inputs,cost_us,out_bytes\n0,"a|b\nc",compute,,1,100\n1,"=HYPERLINK(""x"")",compute,0,10,200\n2,"\xc3(x",compute,1,5,50\n3,"\001ctl",compute,1 2,7,10\n' >"$W.csv"
# what a UTF-8 text output shows of W: each ill-formed part one U+FFFD
export WANT=$'=cmd()|<blink>\nx\xef\xbf\xbd\xef\xbf\xbd('

expect_rc 0 "run" "$BIN" run -q -w "$W.csv" -s original,heft --trace-dir tr -o r.csv
# ---- the results CSV keeps the name byte for byte, and reads back -----------------
py "results CSV: the workload field is the name, byte for byte" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="latin-1", newline="")))
name = rows[1][0].encode("latin-1")
assert name == b"=cmd()|<blink>\nx\xff\xc3(", name
assert len(rows) == 3 and all(len(r) == len(rows[0]) for r in rows), rows' r.csv
expect_rc 0 "compare reads it back" "$BIN" compare r.csv r.csv
expect_rc 0 "merge keeps it" "$BIN" merge r.csv -o m.csv
if cmp -s r.csv m.csv; then ok; else bad "merge changed the names"; fi

# ---- Chrome trace (JSON by hand) ---------------------------------------------------
for t in tr/*original.json; do
    py "trace $t is JSON with the names mended" '
import json, os, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
names = {e.get("name") for e in d["traceEvents"]}
titles = [e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"]
assert titles == [os.environ["WANT"] + " / original"], titles
for n in ["a|b\nc", "=HYPERLINK(\"x\")", "\ufffd(x", "\x01ctl"]:
    assert n in names, (n, names)' "$t"
    jq_ok "trace" "$t"
done

# ---- summary -------------------------------------------------------------------
expect_rc 0 "summary json" "$BIN" summary r.csv --format json
cp out s.json
py "summary json keeps the workload" '
import json, os, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert [w["workload"] for w in d["workloads"]] == [os.environ["WANT"]], d["workloads"]
assert [p["scheduler"] for p in d["policies"]] == ["original", "heft"]' s.json
jq_ok "summary json" s.json
expect_rc 0 "summary --devices json" "$BIN" summary r.csv --devices --format json
cp out d.json
py "summary --devices json" '
import json, os, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert {r["workload"] for r in d} == {os.environ["WANT"]}, d' d.json
expect_rc 0 "summary csv" "$BIN" summary r.csv --format csv
cp out s.csv
py "summary csv: a formula is text in a spreadsheet" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="latin-1", newline="")))
assert rows[1][0].encode("latin-1") == b"\x27=cmd()|<blink>\nx\xff\xc3(", rows[1][0]
assert rows[1][1] == "original"' s.csv
expect_rc 0 "summary --devices csv" "$BIN" summary r.csv --devices
py "summary --devices csv" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="latin-1", newline="")))
assert rows[1][0].startswith("\x27=cmd()"), rows' out
expect_rc 0 "summary text" "$BIN" summary r.csv

# ---- compare ---------------------------------------------------------------------
expect_rc 0 "compare json" "$BIN" compare r.csv r.csv --format json
cp out c.json
py "compare json keeps the workload" '
import json, os, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert [r["workload"] for r in d["rows"]] == [os.environ["WANT"]] * 2, d["rows"]' c.json
jq_ok "compare json" c.json
expect_rc 0 "compare markdown" "$BIN" compare r.csv r.csv --format markdown
cp out c.md
py "compare markdown: one line a row, 16 separators each, UTF-8" '
import sys
text = open(sys.argv[1], "rb").read().decode("utf-8")
lines = [l for l in text.split("\n") if l.startswith("|")]
assert len(lines) == 4, lines          # header, rule, two rows (then the counts, no "|")
for line in lines:
    bars, esc = 0, False
    for ch in line:
        if esc: esc = False
        elif ch == "\\": esc = True
        elif ch == "|": bars += 1
    assert bars == 16, (bars, line)
assert "=cmd()\\|\\<blink\\><br>x\ufffd\ufffd(" in lines[2], lines[2]' c.md
expect_rc 0 "compare csv" "$BIN" compare r.csv r.csv --format csv
py "compare csv: a formula is text in a spreadsheet" '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="latin-1", newline="")))
assert rows[1][0].startswith("\x27=cmd()"), rows[1]
assert rows[1][2] == "ok"' out
expect_rc 0 "compare text" "$BIN" compare r.csv r.csv

# ---- report (HTML) ---------------------------------------------------------------
expect_rc 0 "report" env PATH=/nonexistent "$BIN" report r.csv -o rep.html
py "report: UTF-8, the name as text" '
import sys
html = open(sys.argv[1], "rb").read().decode("utf-8")
assert "<blink>" not in html, "a tag from the name"
assert "=cmd()|&lt;blink&gt;\nx\ufffd\ufffd(" in html' rep.html

# ---- convert: a name with a newline cannot be a "# name=" line ----------------------
expect_rc 2 "convert refuses the name" "$BIN" convert "$W.csv" -o conv.csv
grep -qF "the graph's name holds a control character" err && ok || bad "convert: $(cat err)"
if [ -e conv.csv ]; then bad "convert wrote a file"; else ok; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
