#!/usr/bin/env bash
# The README's Slurm job array on a real Slurm (issue 38): a one-node cluster
# on this machine (munged, slurmctld, slurmd, localhost only, everything in a
# temporary folder), the job script ci/slurm/sweep.sbatch submitted as the
# README says, its parts merged, and the merged file compared with one
# unsharded run apart from the timing columns.
#
# Usage: tests/slurm_test.sh [BIN]   (default ./build/schedbench)
# Needs root (apt-get installs slurm-wlm and munge where missing; the daemons
# run as root). Skips with a message, exit 0, where it cannot run. Every wait
# is bounded; the whole test stays under SB_SLURM_BUDGET seconds (default
# 280), and the daemons it started are stopped on every exit (trap).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/build/schedbench}
BUDGET=${SB_SLURM_BUDGET:-280}
START=$(date +%s)
skip() { echo "skip: slurm test: $*"; exit 0; }
fail() { echo "FAIL: slurm test: $*" >&2; exit 1; }
left() { echo $((BUDGET - ($(date +%s) - START))); }

case "$BIN" in /*) ;; *) BIN=$(pwd)/$BIN ;; esac
[ -x "$BIN" ] || fail "no schedbench at $BIN (make build first)"
[ "$(id -u)" = 0 ] || skip "not root: installing slurm-wlm and munge and running their daemons needs root"

# ---- 1. slurm-wlm and munge, where missing --------------------------------------
missing=0
for c in munged slurmctld slurmd sbatch sinfo scontrol; do
    command -v "$c" >/dev/null || missing=1
done
if [ $missing = 1 ]; then
    command -v apt-get >/dev/null || skip "slurm-wlm or munge missing and no apt-get"
    echo "slurm test: installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    if ! timeout 150 apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null 2>&1; then
        timeout 60 apt-get update >/dev/null 2>&1
        timeout 150 apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null 2>&1 ||
            skip "apt-get could not install slurm-wlm and munge"
    fi
    for c in munged slurmctld slurmd sbatch sinfo scontrol; do
        command -v "$c" >/dev/null || skip "$c still missing after apt-get"
    done
fi

# ---- 2. a one-node cluster in a temporary folder ---------------------------------
T=$(mktemp -d /tmp/schedbench-slurm.XXXXXX)
PIDS=""
cleanup() {
    # only the daemons started here, by their process ids
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        alive=0
        for p in $PIDS; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.5
    done
    for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
    if [ -n "${KEEP_SLURM_LOGS:-}" ]; then echo "slurm test: logs kept in $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
show_logs() { for f in "$T"/*.log; do echo "--- $f"; tail -n 20 "$f"; done >&2; }

# ports free on localhost, away from Slurm's defaults (6817/6818)
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + $$ % 20000))
while ! port_free $base || ! port_free $((base + 1)); do base=$((base + 2)); done

mkdir -p "$T/state" "$T/spool" "$T/root/build" "$T/root/results"
dd if=/dev/urandom of="$T/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$T/munge.key"
HOST=$(hostname -s)
CONF=$T/slurm.conf
cat >"$CONF" <<EOF
ClusterName=schedbench
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=sbnode NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=sb Nodes=sbnode Default=YES MaxTime=10 State=UP
EOF
export SLURM_CONF=$CONF

munged -f --key-file="$T/munge.key" --socket="$T/munge.sock" --pid-file="$T/munged.pid" \
    --log-file="$T/munged.log" --seed-file="$T/munge.seed" >/dev/null 2>&1 ||
    { show_logs; skip "munged would not start"; }
for _ in $(seq 20); do [ -s "$T/munged.pid" ] && break; sleep 0.25; done
[ -s "$T/munged.pid" ] || { show_logs; skip "munged wrote no pid file"; }
PIDS="$(cat "$T/munged.pid")"

slurmctld -D -i -f "$CONF" >"$T/slurmctld.out" 2>&1 &
PIDS="$PIDS $!"
slurmd -D -N sbnode -f "$CONF" >"$T/slurmd.out" 2>&1 &
PIDS="$PIDS $!"
up=0
for _ in $(seq 60); do # 30 s
    state=$(timeout 5 sinfo -h -N -o %t 2>/dev/null)
    case "$state" in idle*) up=1; break ;; esac
    sleep 0.5
done
if [ $up = 0 ]; then
    show_logs
    skip "slurmctld and slurmd did not bring node sbnode up within 30 s (sinfo: '${state:-nothing}')"
fi
echo "slurm test: one-node Slurm up after $(($(date +%s) - START)) s"

# ---- 3. the README's job array, as the README runs it ----------------------------
# The README's section is ci/slurm/sweep.sbatch's commands; a repository root in
# the temporary folder (this build, the corpus) keeps the parts out of the tree.
# every line of the job script but its comments is in the README, word for word
while IFS= read -r line; do
    case "$line" in "# "* | "#" | "") continue ;; esac
    grep -qxF -- "$line" "$ROOT/README.md" || fail "README's Slurm section lacks the job script's line: $line"
done <"$ROOT/ci/slurm/sweep.sbatch"
grep -qF "sbatch --wait ci/slurm/sweep.sbatch" "$ROOT/README.md" ||
    fail "README's Slurm section does not submit ci/slurm/sweep.sbatch"
grep -qF './build/schedbench merge results/parts/part-*.csv -o results/all.csv' "$ROOT/README.md" ||
    fail "README's Slurm section does not merge as ci/slurm/sweep.sbatch says"
ln -s "$BIN" "$T/root/build/schedbench"
ln -s "$ROOT/workloads" "$T/root/workloads"
mkdir -p "$T/root/ci/slurm"
cp "$ROOT/ci/slurm/sweep.sbatch" "$T/root/ci/slurm/"
wait_s=$(($(left) - 30))
[ $wait_s -gt 20 ] || fail "no time left for the job array"
(
    cd "$T/root" && mkdir -p results/parts &&
        timeout "$wait_s" sbatch --wait ci/slurm/sweep.sbatch
) >"$T/sbatch.out" 2>&1
rc=$?
if [ $rc != 0 ]; then
    cat "$T/sbatch.out" >&2
    cat "$T"/root/results/parts/slurm-*.out >&2 2>/dev/null
    show_logs
    fail "sbatch --wait exited $rc"
fi
n_parts=$(ls "$T"/root/results/parts/part-*.csv 2>/dev/null | wc -l)
[ "$n_parts" = 16 ] || fail "$n_parts parts written, wanted 16"
(cd "$T/root" && ./build/schedbench merge results/parts/part-*.csv -o results/all.csv) ||
    fail "merge refused the parts"

# ---- 4. the merged file is an unsharded run, apart from timing -------------------
(cd "$T/root" && ./build/schedbench run -w workloads/corpus -o results/one.csv --quiet) ||
    fail "the unsharded run failed"
# sched_ms is time measured, shard names the slice: every other column equal
strip() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i != "sched_ms" && $i != "shard") keep[i] = 1 }
             { out = ""; for (i = 1; i <= NF; i++) if (i in keep) out = out (out == "" ? "" : ",") $i; print out }' "$1"
}
strip "$T/root/results/all.csv" >"$T/all.cmp"
strip "$T/root/results/one.csv" >"$T/one.cmp"
if ! cmp -s "$T/all.cmp" "$T/one.cmp"; then
    diff "$T/one.cmp" "$T/all.cmp" | head -20 >&2
    fail "the merged job array differs from an unsharded run"
fi
echo "slurm test: 16 array tasks merged equal an unsharded run ($(($(wc -l <"$T/one.cmp") - 1)) rows) in $(($(date +%s) - START)) s"
