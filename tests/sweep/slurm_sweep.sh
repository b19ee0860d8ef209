#!/usr/bin/env bash
# A planned sweep on SLURM, for real: starts a throwaway one-node SLURM
# cluster on this machine (slurmctld and slurmd from a generated slurm.conf in
# a temporary directory, on free ports, no munge and no cgroups), submits the
# plan's sbatch array, waits for it, collects it and compares the results
# with the local runner's; the daemons are stopped however the test ends.
# When they cannot start, the test fails saying why (their logs follow).
# Needs the Debian package slurm-wlm (scripts/install-deps.sh).
# Usage: slurm_sweep.sh SMMU_VP SOURCE_DIR
set -uo pipefail
exe=${1:?smmu-vp binary}
src=${2:?source dir}
test_name=sweep_slurm
. "$(dirname "$0")/lib.sh"
limit=${SLURM_TEST_TIMEOUT:-120}

need slurmctld slurm-wlm
need slurmd slurm-wlm
need sbatch slurm-wlm
need python3 python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/smmu-vp-slurm.XXXXXX")  # the cluster's scratch directory, removed on exit
pids=()
stop_cluster() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap stop_cluster EXIT

# show_logs: the daemons' own account of a failure.
show_logs() {
  for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log; do
    [ -f "$f" ] && { echo "--- $f (last lines)" >&2; tail -n 20 "$f" >&2; }
  done
}

# Two ports free now, for slurmctld and slurmd, so that tests running at the
# same time each get their own.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
node=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
# The node offers its real memory, so that tasks may request some (--mem).
mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
mkdir -p "$tmp/state" "$tmp/spool"
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=smmuvp$$
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

start=$(date +%s.%N)
slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$node" >"$tmp/slurmd.out" 2>&1 &
pids+=($!)

# The node must come up idle; a daemon that died says why in its log.
state=""
for _ in $(seq 1 100); do
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || { cat "$tmp"/*.out >&2; show_logs; fail "a SLURM daemon exited at start (its output and log above)"; }
  done
  state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || { show_logs; fail "the SLURM node did not become idle within 20 s (state: '${state:-no answer from slurmctld}')"; }

write_sweep "$src" "$tmp/sweep.json"
"$exe" sweep "$tmp/sweep.json" --jobs 2 --out "$tmp/local" >/dev/null 2>"$tmp/local.err" ||
  { cat "$tmp/local.err" >&2; fail "the local sweep failed"; }
"$exe" sweep plan "$tmp/sweep.json" --out "$tmp/plan" --slurm --slurm-concurrency 2 \
    --slurm-time 00:05:00 --slurm-mem 200M >/dev/null ||
  fail "sweep plan --slurm failed"
grep -q -- '^#SBATCH --array=0-3%2$' "$tmp/plan/sweep.sbatch" || fail "sweep.sbatch has no --array=0-3%2 line"

timeout "$limit" sbatch --wait --quiet "$tmp/plan/sweep.sbatch" >"$tmp/sbatch.out" 2>&1
rc=$?
[ "$rc" -eq 124 ] && { show_logs; fail "the array did not finish within $limit s"; }
[ "$rc" -eq 0 ] || { cat "$tmp/sbatch.out" "$tmp"/plan/slurm/* >&2; show_logs; fail "sbatch --wait exited with $rc"; }
n_out=$(ls "$tmp/plan/slurm" | wc -l)
[ "$n_out" -eq 4 ] || fail "expected an output file per array task in slurm/, found $n_out"

"$exe" sweep collect "$tmp/plan" --format csv >"$tmp/collect.csv" 2>"$tmp/collect.err" ||
  { cat "$tmp/collect.err" >&2; fail "sweep collect failed"; }
cmp -s "$tmp/collect.csv" "$tmp/local/sweep.csv" || fail "the collected table differs from the local runner's"
same_results "$tmp/local" "$tmp/plan"
end=$(date +%s.%N)
echo "$test_name: OK: 4-task array on a one-node SLURM ($(sinfo -V)), collected equal to the local sweep; $(python3 -c "print(f'{$end - $start:.1f}')") s from start to results"
