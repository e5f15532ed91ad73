#!/bin/bash
# A single-node Slurm cluster on this machine, for the slurm launcher's
# tests: munged, slurmctld and slurmd from Debian's slurm-wlm and munge,
# configured in a folder of their own (nothing under /etc is changed).
#
#   tests/slurm/cluster.sh start DIR   prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR
#
# Needs root (slurmd starts tasks as the submitting user). Daemons talk over
# 127.0.0.1, so the host name need not resolve. The node claims
# 16 CPUs whatever the machine has (config_overrides), so tests with more
# ranks than cores still get their tasks.
set -euo pipefail

action=${1:?usage: cluster.sh start|stop DIR}
dir=$(realpath -m "${2:?usage: cluster.sh start|stop DIR}")
conf=$dir/slurm.conf

stop() {
  local daemon pid
  for daemon in slurmd slurmctld munged; do
    pid=$(cat "$dir/$daemon.pid" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/$daemon.pid"
  done
}

if [[ $action == stop ]]; then
  stop
  exit 0
fi
[[ $action == start ]] || { echo "cluster.sh: unknown action '$action' (start or stop)" >&2; exit 2; }
for tool in munged slurmctld slurmd srun scontrol; do
  command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] ||
    { echo "cluster.sh: $tool not found; run scripts/install-deps.sh" >&2; exit 3; }
done

stop
mkdir -p "$dir"/{munge,state,spool,log}
host=$(hostname -s)

# munge: a key of this cluster's own, a socket in the folder.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
/usr/sbin/munged --force --key-file="$dir/munge/munge.key" --socket="$socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munge.seed"

cat >"$conf" <<CONF
ClusterName=ranktest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=16817
SlurmdPort=16818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
KillWait=5
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF

export SLURM_CONF=$conf
/usr/sbin/slurmctld -f "$conf"
/usr/sbin/slurmd -f "$conf"
for _ in $(seq 100); do
  if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    echo "$conf"
    exit 0
  fi
  sleep 0.2
done
echo "cluster.sh: the node did not become idle within 20 s; see $dir/log" >&2
sinfo >&2 || true
tail -5 "$dir"/log/*.log >&2 || true
exit 1
