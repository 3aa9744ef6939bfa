#!/bin/bash
# The Slurm suite (meson test --suite slurm; .ci/run runs it): a sweep through
# a real single-node Slurm must merge to the same CSV as a local run.
#
#   tests/slurm/slurm_test.sh [NPUSIM [SOURCE_ROOT]]
#
# As root it installs slurm-wlm if it is missing (exit 77, skipped, with the
# reason, when it is not root or cannot install), then starts its own munged,
# slurmctld and slurmd on a private config (SLURM_CONF, sockets, ports and
# state all in one temporary folder; nothing under /etc is touched) and:
#   1. runs SPEC locally (npusim sweep + merge): the reference CSV;
#   2. submits SPEC with tools/slurm/submit.sh as 2 shards, one task paused
#      half-way (pausing_npusim.sh as NPUSIM), kills that task with scancel,
#      checks that points are missing, resubmits the task alone (sbatch
#      --array=K ... SHARDS=2) and merges again (merge.sbatch);
#   3. submits SPEC by hand as docs/sweeps.md shows (sbatch --array=0-1
#      --export=ALL,SPEC=...,OUT=... tools/slurm/sweep.sbatch, NPUSIM unset),
#      from the checkout root and from another folder, then merge.sbatch;
#   4. checks that sweep.sbatch fails with one line when npusim is nowhere.
# Every merged CSV must equal the reference byte for byte (merge leaves out
# host timing, so the rest is deterministic). The "checkout" the jobs see is
# a copy of tools/slurm/ and configs/ in the temporary folder with build/npusim
# linked to NPUSIM, so the test does not depend on where Meson builds and
# writes no job logs into the source tree.
#
# Every wait is bounded; the daemons (and any job left) are stopped on every
# exit. Exit 0 pass, 1 fail, 77 skip. NPUSIM_SLURM_KEEP=1 keeps the folder.
set -uo pipefail

SRC=$(cd "${2:-$(dirname "$0")/../..}" && pwd)
NPUSIM_BIN=$(realpath "${1:-$SRC/build/npusim}")
SPEC_REL=configs/sweeps/tiny.yaml          # 12 points of about 0.2 s each
export SC_COPYRIGHT_MESSAGE=DISABLE
unset NPUSIM SHARDS SPEC OUT

# One stream: stderr is the test's stdout, and skip/fail write to stderr, so
# their line shows even from inside $(...) (which captures stdout only).
exec 2>&1
say() { echo "slurm_test: $*"; }
skip() { say "SKIP: $*" >&2; exit 77; }
fail() { say "FAIL: $*" >&2; exit 1; }

# --- prerequisites -----------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "needs root to run munged, slurmctld and slurmd"
[ -x "$NPUSIM_BIN" ] || fail "no npusim binary at $NPUSIM_BIN"
export PATH=$PATH:/usr/sbin:/sbin              # the daemons live in sbin
have_slurm() {
    local p
    for p in munged munge unmunge slurmctld slurmd sbatch scontrol scancel squeue sinfo; do
        command -v "$p" >/dev/null || return 1
    done
}
if ! have_slurm; then
    command -v apt-get >/dev/null || skip "slurm-wlm is not installed and there is no apt-get"
    say "installing slurm-wlm (apt-get, each step at most 5 minutes)"
    apt_log=$(mktemp)
    apt_get() { DEBIAN_FRONTEND=noninteractive timeout 300 apt-get -q -y -o DPkg::Lock::Timeout=60 "$@" >>"$apt_log" 2>&1; }
    apt_get install --no-install-recommends slurm-wlm ||
        { apt_get update && apt_get install --no-install-recommends slurm-wlm; } ||
        skip "cannot install slurm-wlm (no network or no package?): $(tail -n 1 "$apt_log")"
    rm -f "$apt_log"
    have_slurm || skip "slurm-wlm installed but munged/slurmctld/slurmd/sbatch still missing"
fi
say "$(slurmctld -V), $(munged -V 2>&1 | head -n 1)"

# --- the private cluster -----------------------------------------------------
T=$(mktemp -d /tmp/npusim-slurm.XXXXXX) || fail "cannot create a temporary folder"
chmod 755 "$T"                               # munged wants its socket's folders searchable
# Every Slurm command of this script (and of the jobs: --export=ALL) talks to
# the private cluster only; set before anything can call scancel.
export SLURM_CONF=$T/slurm.conf
PIDS=()                                      # daemons started, in start order

cleanup() {
    local rc=$? p i
    trap - EXIT INT TERM
    if [ ${#PIDS[@]} -gt 0 ]; then
        # Cancel whatever still runs (a failed or timed-out test), give the jobs
        # KillWait to end, then stop the daemons, newest first.
        if [ -f "$SLURM_CONF" ]; then
            scancel --quiet --user=root 2>/dev/null
            for i in $(seq 30); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.5; done
        fi
        for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
            kill "${PIDS[i]}" 2>/dev/null
        done
        for p in "${PIDS[@]}"; do
            for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
            kill -KILL "$p" 2>/dev/null
            wait "$p" 2>/dev/null
        done
    fi
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in "$T"/slurmctld.log "$T"/slurmd.log; do
            [ -f "$f" ] && { echo "--- last lines of $f"; tail -n 15 "$f"; }
        done
        say "kept $T for inspection"
    elif [ "${NPUSIM_SLURM_KEEP:-0}" = 1 ]; then
        say "kept $T"
    else
        rm -rf "$T"
    fi
    exit $rc
}
trap cleanup EXIT
trap 'say "interrupted"; exit 1' INT TERM

# Two free TCP ports for slurmctld and slurmd (no clash with a system Slurm).
read -r CTLD_PORT SLURMD_PORT < <(/usr/bin/python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
HOST=$(hostname -s)

mkdir -m 755 "$T/munge" && mkdir "$T/ctld" "$T/slurmd"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none && chmod 400 "$T/munge/munge.key"
munged --foreground --socket="$T/munge/socket" --key-file="$T/munge/munge.key" \
    --pid-file="$T/munge/munged.pid" --seed-file="$T/munge/seed" >"$T/munged.log" 2>&1 &
PIDS+=($!)
for i in $(seq 50); do munge -n -S "$T/munge/socket" >/dev/null 2>&1 && break; sleep 0.2; done
munge -n -S "$T/munge/socket" | unmunge -S "$T/munge/socket" >/dev/null 2>&1 ||
    fail "munged did not start: $(tail -n 1 "$T/munged.log")"

# CPUs=2 whatever the machine (SlurmdParameters=config_overrides): each
# sweep.sbatch task asks for 2, so the tasks run one after another.
cat >"$SLURM_CONF" <<EOF
ClusterName=npusimtest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge/socket
StateSaveLocation=$T/ctld
SlurmdSpoolDir=$T/slurmd
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=3600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -D -i -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N "$HOST" -f "$SLURM_CONF" >"$T/slurmd.out" 2>&1 &
PIDS+=($!)
for i in $(seq 60); do [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && break; sleep 0.5; done
[ "$(sinfo -h -o %t 2>/dev/null)" = idle ] ||
    fail "the node did not come up idle within 30 s (sinfo: $(sinfo -h -o '%t %E' 2>&1 | head -n 1))"
say "started munged, slurmctld (port $CTLD_PORT), slurmd (port $SLURMD_PORT) on $HOST; SLURM_CONF=$SLURM_CONF"

# --- helpers -----------------------------------------------------------------
# The states of every task of job $1 (one per line).
job_states() { scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
# Waits (at most $2 s) until every task of job $1 is finished.
wait_job() {
    local job=$1 deadline=$((SECONDS + $2)) states
    while :; do
        states=$(job_states "$job")
        if [ -n "$states" ] && ! grep -qvE '^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$' <<<"$states"; then
            return 0
        fi
        [ $SECONDS -lt $deadline ] || fail "job $job not finished within $2 s (states: $(tr "\n" " " <<<"$states"))"
        sleep 0.5
    done
}
# Fails unless every task of job $1 completed with exit status 0.
expect_completed() {
    local states
    states=$(job_states "$1" | sort -u | xargs)
    [ "$states" = COMPLETED ] || fail "job $1 ($2) ended $states; logs: $(echo "$3"/npusim-*"$1"[_.]*log)"
}
# The id printed by sbatch --parsable ("id" or "id;cluster").
jobid() { local out; out=$(sbatch --parsable "$@") || fail "sbatch $* failed"; echo "${out%%;*}"; }
# Fails unless $1 (a merged CSV) equals the local reference.
same_csv() {
    [ -f "$1" ] || fail "$2: no merged CSV at $1"
    cmp -s "$1" "$T/local.csv" || { diff "$T/local.csv" "$1" | head -n 5; fail "$2: $1 differs from the local sweep's CSV"; }
    say "$2: merged CSV equals the local one ($(($(wc -l <"$1") - 1)) points)"
}

# The checkout the jobs see: copies of the scripts, the configs, and
# build/npusim pointing at the binary under test.
CK=$T/checkout
mkdir -p "$CK/tools/slurm" "$CK/build" "$T/elsewhere"
cp "$SRC"/tools/slurm/* "$CK/tools/slurm/"
cp -r "$SRC/configs" "$CK/configs"
ln -s "$NPUSIM_BIN" "$CK/build/npusim"

# --- 1. the reference: a local sweep ------------------------------------------
t0=$SECONDS
"$NPUSIM_BIN" sweep "$CK/$SPEC_REL" -o "$T/local" -j 2 >"$T/local.log" 2>&1 &&
    "$NPUSIM_BIN" merge "$T/local" -o "$T/local.csv" >>"$T/local.log" 2>&1 ||
    fail "the local sweep failed: $(tail -n 1 "$T/local.log")"
say "local sweep of $SPEC_REL: $(tail -n 1 "$T/local.log") ($((SECONDS - t0)) s)"

# --- 2. submit.sh, one task killed mid-run and resubmitted -------------------
OUT_A=$T/out-submit
export REAL_NPUSIM=$NPUSIM_BIN PAUSE_MARKER=$T/paused NPUSIM=$SRC/tests/slurm/pausing_npusim.sh
line=$(cd "$CK" && tools/slurm/submit.sh "$SPEC_REL" "$OUT_A" 2) || fail "submit.sh failed"
say "submit.sh: $line"
ARRAY=$(sed -n 's/.*array job \([0-9]*\) .*/\1/p' <<<"$line")
MERGE1=$(sed -n 's/.*merge job \([0-9]*\) .*/\1/p' <<<"$line")
[ -n "$ARRAY" ] && [ -n "$MERGE1" ] || fail "cannot read the job ids from submit.sh's output: $line"
for i in $(seq 240); do [ -s "$PAUSE_MARKER" ] && break; sleep 0.5; done
[ -s "$PAUSE_MARKER" ] || fail "no task of job $ARRAY reached the half-way pause within 120 s"
K=$(cat "$PAUSE_MARKER")
[ "$(job_states "${ARRAY}_$K")" = RUNNING ] || fail "task ${ARRAY}_$K is $(job_states "${ARRAY}_$K"), not RUNNING"
scancel "${ARRAY}_$K" || fail "scancel ${ARRAY}_$K failed"
wait_job "$ARRAY" 120
[ "$(job_states "$ARRAY" | sort | xargs)" = "CANCELLED COMPLETED" ] ||
    fail "after scancel of task $K, the tasks of job $ARRAY are $(job_states "$ARRAY" | xargs), not one CANCELLED and one COMPLETED"
say "killed task ${ARRAY}_$K half-way through its shard"
wait_job "$MERGE1" 60
"$NPUSIM_BIN" merge "$OUT_A" -o "$T/partial.csv" >"$T/partial.log" 2>&1 &&
    fail "merge found every point after task $K was killed (the kill came too late)"
grep -q ' [1-9][0-9]* missing' "$T/partial.log" || fail "merge after the kill: $(tail -n 1 "$T/partial.log")"
say "merge after the kill: $(tail -n 1 "$T/partial.log")"
RESUB=$(cd "$CK" && jobid --array="$K" --export=ALL,SPEC="$SPEC_REL",OUT="$OUT_A",SHARDS=2 tools/slurm/sweep.sbatch) || exit 1
MERGE2=$(cd "$CK" && jobid --dependency=afterany:"$RESUB":"$MERGE1" --export=ALL,OUT="$OUT_A" tools/slurm/merge.sbatch) || exit 1
say "resubmitted task $K as job $RESUB, merge job $MERGE2"
wait_job "$MERGE2" 180
expect_completed "$RESUB" "resubmitted task" "$CK"
expect_completed "$MERGE2" "merge" "$CK"
# It ran its own shard only (K of 2, not all points) and skipped the half done.
n=$("$NPUSIM_BIN" sweep "$CK/$SPEC_REL" --list --shard "$K/2" | wc -l)
grep -q "^sweep: $n/$n points done ($((n / 2 + n % 2)) skipped as already done, 0 failed)" "$CK/npusim-sweep-${RESUB}_$K.log" ||
    fail "the resubmitted task did not resume its $n points: $(tail -n 1 "$CK/npusim-sweep-${RESUB}_$K.log")"
say "resubmitted task: $(tail -n 1 "$CK/npusim-sweep-${RESUB}_$K.log")"
same_csv "$OUT_A/results.csv" "submit.sh + kill + resubmit"
unset REAL_NPUSIM PAUSE_MARKER NPUSIM

# --- 3. by hand, as docs/sweeps.md shows, NPUSIM unset ------------------------
# From the checkout root (relative SPEC and OUT) and from another folder
# (absolute paths): there only the submitted script's path leads to npusim.
submit_by_hand() {   # DIR SCRIPT_DIR SPEC OUT: prints "ARRAY MERGE"
    local a m
    a=$(cd "$1" && jobid --array=0-1 --export=ALL,SPEC="$3",OUT="$4" "$2/sweep.sbatch") || exit 1
    m=$(cd "$1" && jobid --dependency=afterany:"$a" --export=ALL,OUT="$4" "$2/merge.sbatch") || exit 1
    echo "$a $m"
}
read -r ROOT_A ROOT_M < <(submit_by_hand "$CK" tools/slurm "$SPEC_REL" out-root)
read -r ELSE_A ELSE_M < <(submit_by_hand "$T/elsewhere" "$CK/tools/slurm" "$CK/$SPEC_REL" "$T/out-elsewhere")
[ -n "${ROOT_M:-}" ] && [ -n "${ELSE_M:-}" ] || fail "submitting by hand failed"
say "by hand: from the checkout root jobs $ROOT_A + $ROOT_M, from another folder jobs $ELSE_A + $ELSE_M"
wait_job "$ROOT_M" 180
wait_job "$ELSE_M" 180
expect_completed "$ROOT_A" "sweep from the checkout root" "$CK"
expect_completed "$ROOT_M" "merge from the checkout root" "$CK"
expect_completed "$ELSE_A" "sweep from another folder" "$T/elsewhere"
expect_completed "$ELSE_M" "merge from another folder" "$T/elsewhere"
say "from another folder, task 0 used $(head -n 1 "$T/elsewhere/npusim-sweep-${ELSE_A}_0.log")"
same_csv "$CK/out-root/results.csv" "by hand from the checkout root"
same_csv "$T/out-elsewhere/results.csv" "by hand from another folder"

# --- 4. no npusim anywhere: one clear line ------------------------------------
# A checkout without build/, submitted from its root, with no npusim on PATH.
mkdir -p "$T/nobuild/tools/slurm"
cp "$SRC/tools/slurm/sweep.sbatch" "$T/nobuild/tools/slurm/"
NOB=$(cd "$T/nobuild" &&
    jobid --array=0 "--export=ALL,PATH=/usr/bin:/bin,SPEC=$CK/$SPEC_REL,OUT=$T/out-nobuild" tools/slurm/sweep.sbatch) || exit 1
wait_job "$NOB" 60
[ "$(job_states "$NOB")" = FAILED ] || fail "sweep.sbatch without npusim ended $(job_states "$NOB"), not FAILED"
err=$(cat "$T/nobuild/npusim-sweep-${NOB}_0.log")
grep -q '^sweep.sbatch: cannot find npusim (tried .*); set NPUSIM=' <<<"$err" && [ "$(wc -l <<<"$err")" = 1 ] ||
    fail "sweep.sbatch without npusim should print one line, printed: $err"
say "without npusim: $err"

say "PASS ($SECONDS s)"
