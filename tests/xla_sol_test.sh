#!/bin/sh
# --comm xla-sol (net/xla_sol.c) on a graph whose times are derived by hand
# in tests/data/sol_graph.csv, and the options it refuses.
BIN=$1 DATA=$2
WORK=$(mktemp -d) || exit 1
trap 'rm -rf "$WORK"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
rc_is() { # want description command...
    want=$1 what=$2; shift 2
    "$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
    [ "$rc" = "$want" ] || { bad "$what: exit $rc, wanted $want"; cat "$WORK/err"; }
}
col() { # file column-name: the first data row's value
    awk -F, -v n="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                       NR == 2 { print $c }' "$1"
}
FIX=sol_nccl_op_launch_us=100,sol_nic_speed_gbps=100,sol_chunk_prep_us=100,sol_rtt_us=100,hbm_gbps=768.096
rc_is 0 run "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost "$FIX" -o "$WORK/r.csv" --quiet
[ "$(col "$WORK/r.csv" makespan_us)" = 2513.044 ] || bad "makespan $(col "$WORK/r.csv" makespan_us), wanted 2513.044"
[ "$(col "$WORK/r.csv" cost_model)" = analytical+xla-sol ] || bad "cost_model $(col "$WORK/r.csv" cost_model)"
grep -q 'sol_nic_speed_gbps=100;' "$WORK/r.csv" || bad "cost_params lacks the sol keys"
# the preset first, whatever the order: the nic key beside it wins
rc_is 0 "preset order" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol \
    --cost "$FIX,sol_preset=b200" -o "$WORK/r2.csv" --quiet
[ "$(col "$WORK/r2.csv" makespan_us)" = "$(col "$WORK/r.csv" makespan_us)" ] ||
    bad "sol_preset after the keys changed them"
rc_is 2 "sol keys without the model" "$BIN" run -w "$DATA/sol_graph.csv" -s original --cost sol_rtt_us=1 -o "$WORK/x.csv"
grep -q 'configure --comm xla-sol' "$WORK/err" || bad "message: $(cat "$WORK/err")"
rc_is 2 "bad preset" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost sol_preset=a100 -o "$WORK/x.csv"
rc_is 2 "key twice" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost sol_rtt_us=1,sol_rtt_us=2 -o "$WORK/x.csv"
rc_is 2 "unknown sol key" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost sol_speed=1 -o "$WORK/x.csv"
rc_is 2 "approx units" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost-model approx -o "$WORK/x.csv"
rc_is 2 "zero nic" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --cost sol_nic_speed_gbps=0 -o "$WORK/x.csv"
# the same config from a machine's xla_sol map (docs/machines.md); --cost wins
cat >"$WORK/m.yaml" <<'YAML'
name: sol-fixture
devices:
  - name: gpu0
    hbm_gbps: 768.096
    peak_tflops: {fp32: 30.32}
    launch_us: 0
xla_sol: {nccl_op_launch_us: 100, nic_speed_gbps: 100, chunk_prep_us: 100, rtt_us: 100}
YAML
rc_is 0 "machine keys" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --machine "$WORK/m.yaml" -o "$WORK/r3.csv" --quiet
[ "$(col "$WORK/r3.csv" makespan_us)" = 2513.044 ] || bad "machine xla_sol: makespan $(col "$WORK/r3.csv" makespan_us)"
# --cost over the machine: launch 100 -> 50 us takes 50 us off the SoL all-gather
rc_is 0 "cost over machine" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --machine "$WORK/m.yaml" --cost sol_nccl_op_launch_us=50 -o "$WORK/r4.csv" --quiet
[ "$(col "$WORK/r4.csv" makespan_us)" = 2463.044 ] || bad "--cost over machine: makespan $(col "$WORK/r4.csv" makespan_us)"
sed 's/rtt_us: 100/rtt: 100/' "$WORK/m.yaml" >"$WORK/bad.yaml"
rc_is 2 "machine bad key" "$BIN" run -w "$DATA/sol_graph.csv" -s original --comm xla-sol --machine "$WORK/bad.yaml" -o "$WORK/x.csv"
grep -q "bad.yaml: xla_sol: unknown cost parameter 'sol_rtt'" "$WORK/err" || bad "message: $(cat "$WORK/err")"
# XLA's GPU performance model as the roofline (--cost roofline=xla), by hand
# in tests/data/roofline_xla.csv
for spec in "" roofline=xla "roofline=xla,launch_us=3" "launch_us=3,roofline=xla" roofline=max; do
    rc_is 0 "roofline $spec" "$BIN" run -w "$DATA/roofline_xla.csv" -s original ${spec:+--cost "$spec"} -o "$WORK/k.csv" --quiet
    got=$(col "$WORK/k.csv" makespan_us)
    case "$spec" in
    "" | roofline=max) want=37.821 ;;
    roofline=xla) want=36.843 ;;
    *) want=38.843 ;;
    esac
    [ "$got" = "$want" ] || bad "roofline '$spec': makespan $got, wanted $want"
done
rc_is 2 "roofline bad" "$BIN" run -w "$DATA/roofline_xla.csv" -s original --cost roofline=fast -o "$WORK/x.csv"
rc_is 2 "overlap range" "$BIN" run -w "$DATA/roofline_xla.csv" -s original --cost mem_compute_overlap=1.5 -o "$WORK/x.csv"
[ $fails = 0 ] && echo "xla_sol_test: ok"
exit $((fails != 0))
