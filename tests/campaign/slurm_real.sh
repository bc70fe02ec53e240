#!/usr/bin/env bash
# tests/campaign/slurm_real.sh TRITON_FUZZ
#
# The deploy/slurm job array through a real single-node Slurm (Debian's
# slurmctld, slurmd and munge packages; scripts/setup.sh installs them):
#  1. a private munged (own key, socket, pid and log files in a temporary
#     folder) and a private Slurm (own slurm.conf: one node, this host, on two
#     free loopback ports; state, spool and logs in the temporary folder; no
#     cgroups, no accounting) are started, and the node must come up idle;
#  2. deploy/slurm/submit.sh submits fuzz-array.sbatch as an array of three
#     CPU-only shards and merge.sbatch after it, through the real sbatch;
#  3. every array task and the merge job must end COMPLETED with exit code 0,
#     the merge must have started after the last task ended, and the merged
#     report must hold the three shards with their kernel counts summed.
# The daemons are stopped and the folder removed on every exit (trap), and
# every wait has a time limit, after which the daemons' logs are printed.
#
# Exit 77 (ctest: skipped) when the Slurm or munge programs are missing outside
# CI, or when not run as root (slurmd starts each job as its submitting user);
# under CI=true a missing program is a failure, since scripts/setup.sh
# installs them there.
set -euo pipefail

[[ $# -eq 1 && -x "$1" ]] || { echo "usage: slurm_real.sh PATH/TO/triton-fuzz" >&2; exit 2; }
fuzz=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
deploy=$root/deploy

skip() {
  echo "SKIP: slurm_real: $*"
  exit 77
}
# Slurm's and munge's daemons live in /usr/sbin, which a user's PATH may lack.
export PATH=$PATH:/usr/sbin:/sbin
for program in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  if ! command -v "$program" >/dev/null 2>&1; then
    [[ "${CI:-}" == true ]] && { echo "FAIL: slurm_real: $program is missing (scripts/setup.sh installs slurmctld, slurmd, slurm-client and munge)" >&2; exit 1; }
    skip "$program not found (install Debian's slurmctld slurmd slurm-client munge, or run scripts/setup.sh)"
  fi
done
[[ $(id -u) -eq 0 ]] || skip "needs root: slurmd runs each job as the user who submitted it"

node=$(hostname -s)
work=$(mktemp -d /tmp/slurm-real.XXXXXX)
chmod 700 "$work"
munge_pid=
ctld_pid=
slurmd_pid=

print_logs() {
  local log
  for log in "$work"/log/*.log "$work"/submit/*.log; do
    [[ -f "$log" ]] || continue
    echo "----- $log (last 40 lines)" >&2
    tail -n 40 "$log" >&2
  done
}
fail() {
  echo "FAIL: slurm_real: $*" >&2
  print_logs
  exit 1
}
# stop PID NAME: TERM, then KILL after 10 s; waits until it is gone.
stop() {
  local pid=$1 i
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local i
  set +e
  if [[ -n "$ctld_pid" ]] && kill -0 "$ctld_pid" 2>/dev/null; then
    # Jobs still queued or running (a failed run): cancel them so that no
    # slurmstepd or triton-fuzz outlives the test, and wait up to 20 s.
    scancel --quiet --full --user="$user" 2>/dev/null
    for ((i = 0; i < 40; i++)); do
      [[ -z "$(squeue -h -o %i 2>/dev/null)" ]] && break
      sleep 0.5
    done
  fi
  # Each job step's slurmstepd outlives its job by a moment; its socket in the
  # spool folder goes when it exits. Wait for them (up to 10 s) before slurmd.
  for ((i = 0; i < 20; i++)); do
    [[ -z "$(find "$work/spool" -type s -name "${node}_*" 2>/dev/null)" ]] && break
    sleep 0.5
  done
  stop "$slurmd_pid"
  stop "$ctld_pid"
  stop "$munge_pid"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every half second until it
# succeeds; fails with WHAT and the logs after SECONDS.
wait_for() {
  local seconds=$1 what=$2 i
  shift 2
  for ((i = 0; i < seconds * 2; i++)); do
    "$@" && return 0
    sleep 0.5
  done
  fail "timed out after ${seconds}s waiting for $what"
}

mkdir -p "$work"/{munge,log,state,spool/"$node",submit}
user=$(id -un)
cpus=$(nproc)
read -r ctld_port slurmd_port < <(python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
EOF
)

# --- 1. munged and the two Slurm daemons -------------------------------------
socket_path=$work/munge/munge.socket
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --foreground --force --socket="$socket_path" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
  --log-file="$work/log/munged.log" >"$work/log/munged.out.log" 2>&1 &
munge_pid=$!
wait_for 20 "munged's socket $socket_path" test -S "$socket_path"

export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
# A private single-node Slurm for tests/campaign/slurm_real.sh.
ClusterName=tritonfuzztest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket_path
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool/%n
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=2,bf_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$node CPUs=$cpus RealMemory=2048 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out.log" 2>&1 &
ctld_pid=$!
wait_for 30 "slurmctld to answer (scontrol ping)" bash -c 'scontrol ping 2>/dev/null | grep -q UP'
slurmd -D -N "$node" -f "$SLURM_CONF" >"$work/log/slurmd.out.log" 2>&1 &
slurmd_pid=$!
node_idle() {
  kill -0 "$ctld_pid" 2>/dev/null || fail "slurmctld exited"
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited"
  [[ "$(sinfo -h -N -n "$node" -o %T 2>/dev/null)" == idle ]]
}
wait_for 60 "node $node to be idle (sinfo: $(sinfo -h -N -o '%N %T' 2>&1 || true))" node_idle
echo "slurm_real: node $node idle ($cpus CPUs, slurmctld on port $ctld_port, slurmd on $slurmd_port)"

# --- 2. the array and the merge through deploy/slurm/submit.sh ----------------
# The array's #SBATCH defaults ask for a GPU, 8 CPUs and 32G; the options after
# `--` override them for CPU-only shards on this small node, as a site would
# pass its own --partition or --account.
export TRITON_FUZZ=$fuzz OUT=$work/submit/campaign FUZZ_SEED=11 FUZZ_TIME=20s
export FUZZ_EXTRA="--cpu-only --max-kernels 45 --shrink-time 2s"
cd "$work/submit"
"$deploy/slurm/submit.sh" 3 -- --partition=test --gres=none --cpus-per-task=1 --mem=300M \
  >"$work/submit/submit.out.log" 2>&1 || fail "submit.sh exited with $?"
cat "$work/submit/submit.out.log"
array=$(sed -n 's/^submitted: campaign array job \([0-9]*\) .*/\1/p' "$work/submit/submit.out.log")
merge=$(sed -n 's/^submitted: merge job \([0-9]*\) .*/\1/p' "$work/submit/submit.out.log")
[[ -n "$array" && -n "$merge" ]] || fail "submit.sh printed no job ids"

# scontrol keeps finished jobs for MinJobAge seconds (there is no accounting
# database, so sacct has nothing); one line per job or array task.
job_field() { # JOB FIELD: the field of each of JOB's records, one a line
  scontrol show job "$1" -o 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"
}
merge_done() {
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd exited"
  local state
  state=$(job_field "$merge" JobState)
  [[ -n "$state" && "$state" != PENDING && "$state" != RUNNING && "$state" != CONFIGURING &&
    "$state" != COMPLETING ]]
}
wait_for 150 "the merge job $merge to end (queue: $(squeue -h 2>&1 | tr '\n' ';'))" merge_done

# --- 3. the jobs' states and the merged report -------------------------------
scontrol show job "$array" -o >"$work/submit/array.txt"
[[ $(wc -l <"$work/submit/array.txt") -eq 3 ]] || fail "the array has $(wc -l <"$work/submit/array.txt") tasks, not 3"
python3 - "$work/submit/array.txt" "$array" "$merge" "$(scontrol show job "$merge" -o)" <<'EOF' || fail "job states"
import datetime, sys
def parse(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)
tasks = [parse(l) for l in open(sys.argv[1]) if l.strip()]
array, merge_id = sys.argv[2], sys.argv[3]
merge = parse(sys.argv[4])
ids = sorted(int(t["ArrayTaskId"]) for t in tasks)
assert ids == [0, 1, 2], ids
for t in tasks:
    assert t["ArrayJobId"] == array, t["ArrayJobId"]
    assert t["JobState"] == "COMPLETED" and t["ExitCode"] == "0:0", (t["ArrayTaskId"], t["JobState"], t["ExitCode"])
    assert t["TimeLimit"] == "01:00:00", t["TimeLimit"]  # FUZZ_TIME 20s + 60 minutes, from submit.sh
    assert t["Partition"] == "test"
assert merge["JobState"] == "COMPLETED" and merge["ExitCode"] == "0:0", (merge["JobState"], merge["ExitCode"])
assert merge["Dependency"] in ("(null)", f"afterany:{array}_*(unfulfilled)"), merge["Dependency"]
when = lambda s: datetime.datetime.fromisoformat(s)
last_end = max(when(t["EndTime"]) for t in tasks)
assert when(merge["StartTime"]) >= last_end, (merge["StartTime"], last_end)
print(f"slurm_real: array job {array} tasks 0-2 COMPLETED 0:0, merge job {merge_id} COMPLETED 0:0 after them")
EOF
for k in 0 1 2; do
  log=$work/submit/triton-fuzz-${array}_$k.log
  [[ -f "$log" ]] || fail "no log $log of array task $k"
  grep -qF -- "--shard $k/3 --out $OUT/shard$k --cpu-only" "$log" || fail "task $k did not run shard $k/3: $(cat "$log")"
done
[[ -f "$work/submit/triton-fuzz-merge-$merge.log" ]] || fail "no log of the merge job"
for f in report.html report.md merged.json; do
  [[ -s "$OUT/$f" ]] || fail "the merge job wrote no $OUT/$f"
done
python3 - "$OUT" <<'EOF' || fail "merged counts"
import json, sys
out = sys.argv[1]
shards = [json.load(open(f"{out}/shard{k}/campaign.json")) for k in range(3)]
merged = json.load(open(f"{out}/merged.json"))
assert [(s["shard_index"], s["shard_count"]) for s in shards] == [(0, 3), (1, 3), (2, 3)]
# --max-kernels 45 over 3 shards: indices I % 3 == K, 15 each, all checked in 20 s.
assert [s["kernels"] for s in shards] == [15, 15, 15], [s["kernels"] for s in shards]
assert merged["format"] == "triton-fuzz-campaign/1", merged["format"]
assert len(merged["parts"]) == 3, merged["parts"]
assert merged["kernels"] == sum(s["kernels"] for s in shards) == 45, merged["kernels"]
print(f"slurm_real: 3 shards of 15 kernels, merged report of {merged['kernels']} kernels")
EOF
grep -qF "merged from 3 parts" "$OUT/report.md" || fail "report.md does not say 'merged from 3 parts'"
echo "slurm_real: PASS"
