#!/bin/bash
# A Slurm cluster on this machine, for the slurm launcher's tests: munged,
# slurmctld and slurmd from Debian's slurm-wlm and munge, configured in a
# folder of their own (nothing under /etc is changed).
#
#   tests/slurm/cluster.sh start DIR [NODES]   prints the SLURM_CONF to export
#   tests/slurm/cluster.sh stop DIR
#
# One node (the default): one slurmd, this machine, over 127.0.0.1, so the
# host name need not resolve. NODES > 1: a simulated cluster, each node a
# slurmd in network, UTS and mount namespaces of its own: its own host name
# (node1, node2, ...), its own address on a bridge (NET.K+1, NET a /24 of
# 198.18.0.0/15, the range reserved for benchmarking networks, that no
# route or address of this machine uses), and its own /etc/hosts (a
# bind mount seen only inside the node) naming every node, so a rank on one
# node reaches rank 0's by name. The nodes share this machine's processes
# and files (the run folder is on a file system every node sees), but each
# has a TMPDIR of its own (DIR/tmp/nodeK, set by a TaskProlog and by the
# rsh agent), as nodes' /tmp are their own; slurmctld runs outside them,
# at NET.1. OpenMPI reaches the same nodes:
# DIR/hostfile names them and DIR/rsh, mpirun's rsh agent (--mca
# plm_rsh_agent DIR/rsh), runs a command inside a node's namespaces.
#
# Needs root (slurmd starts tasks as the submitting user; namespaces). Each
# node claims 16 CPUs (8 each when simulated) whatever the machine has
# (config_overrides), so tests with more ranks than cores still get their
# tasks.
set -euo pipefail

action=${1:?usage: cluster.sh start|stop DIR [NODES]}
dir=$(realpath -m "${2:?usage: cluster.sh start|stop DIR [NODES]}")
nodes=${3:-1}
conf=$dir/slurm.conf
# The simulated nodes' names, for namespaces and links: short, and this
# folder's own (two clusters at once do not share them).
tag=rt$(printf '%s' "$dir" | md5sum | cut -c1-6)

stop() {
  local pidfile pid
  for pidfile in "$dir"/slurmd*.pid "$dir/slurmctld.pid" "$dir/munged.pid"; do
    pid=$(cat "$pidfile" 2>/dev/null) || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$pidfile"
  done
  local netns
  for netns in $(ip netns list 2>/dev/null | awk -v tag="$tag" '$1 ~ "^" tag "n" {print $1}'); do
    ip netns del "$netns" 2>/dev/null || true
  done
  ip link del "${tag}br" 2>/dev/null || true
}

if [[ $action == stop ]]; then
  stop
  exit 0
fi
[[ $action == start ]] || { echo "cluster.sh: unknown action '$action' (start or stop)" >&2; exit 2; }
[[ $nodes =~ ^[1-9]$ ]] || { echo "cluster.sh: NODES must be 1 to 9, not '$nodes'" >&2; exit 2; }
tools="munged slurmctld slurmd srun scontrol"
((nodes == 1)) || tools="$tools ip nsenter unshare"
for tool in $tools; do
  command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] ||
    { echo "cluster.sh: $tool not found; run scripts/install-deps.sh" >&2; exit 3; }
done

stop
mkdir -p "$dir"/{munge,state,spool,log}
rm -f "$dir/nodes"
host=$(hostname -s)

# munge: a key of this cluster's own, a socket in the folder.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$dir/munge"
chmod 400 "$dir/munge/munge.key"
socket=$dir/munge/munge.socket
/usr/sbin/munged --force --key-file="$dir/munge/munge.key" --socket="$socket" \
  --pid-file="$dir/munged.pid" --log-file="$dir/log/munged.log" \
  --seed-file="$dir/munge/munge.seed"

# Ports of its own: a simulated cluster's slurmctld listens on this
# machine beside a single node's, which another test may run at once. Two
# simulated clusters at once share the bridge's addresses: the tests hold
# a lock while one runs.
controller=127.0.0.1
port=16817
if ((nodes > 1)); then
  port=16827
  # The bridge the nodes hang on, on a network this machine does not use
  # (its own may be on any private or documentation range); this machine
  # is NET.1 on it.
  net=
  used=$(ip -4 route; ip -4 addr)
  for x in $(seq 0 255); do
    grep -q "198\.18\.$x\." <<<"$used" || { net=198.18.$x; break; }
  done
  [[ -n $net ]] || { echo "cluster.sh: every /24 of 198.18.0.0/16 is in use here" >&2; exit 3; }
  controller=$net.1
  ip link add "${tag}br" type bridge
  ip addr add "$controller/24" dev "${tag}br"
  ip link set "${tag}br" up
  {
    echo "127.0.0.1 localhost"
    echo "$controller $host"
    for k in $(seq "$nodes"); do echo "$net.$((k + 1)) node$k"; done
  } >"$dir/hosts"
  for k in $(seq "$nodes"); do
    ip netns add "${tag}n$k"
    ip link add "${tag}v$k" type veth peer name eth0 netns "${tag}n$k"
    ip link set "${tag}v$k" master "${tag}br" up
    ip -n "${tag}n$k" addr add "$net.$((k + 1))/24" dev eth0
    ip -n "${tag}n$k" link set eth0 up
    ip -n "${tag}n$k" link set lo up
    mkdir -p "$dir/spool/node$k"
    echo "node$k /run/netns/${tag}n$k" >>"$dir/nodes"  # for a test to enter a node's network
  done
fi

{
  cat <<CONF
ClusterName=ranktest
SlurmctldHost=$host($controller)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/slurmctld.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmctldPort=$port
SlurmdPort=$((port + 1))
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
CONF
  if ((nodes == 1)); then
    cat <<CONF
SlurmdSpoolDir=$dir/spool
SlurmdPidFile=$dir/slurmd.pid
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
CONF
  else
    cat <<CONF
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmdLogFile=$dir/log/slurmd-%n.log
CONF
    # Four devices of a kind no machine has, counted by Slurm only (no
    # device file): a step asks for them with --gres=tpu:N and waits while
    # its node's are taken, as GPUs would.
    echo "GresTypes=tpu"
    # A node's own TMPDIR (DIR/tmp/nodeK), as a cluster node's /tmp is its
    # own: ranktest's port locks there are that node's.
    echo "TaskProlog=$dir/task-prolog"
    for k in $(seq "$nodes"); do
      echo "NodeName=node$k NodeAddr=$net.$((k + 1)) CPUs=8 RealMemory=1000 Gres=tpu:4 State=UNKNOWN"
    done
  fi
  echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
} >"$conf"

if ((nodes > 1)); then
  echo "Name=tpu Count=4" >"$dir/gres.conf"
  for k in $(seq "$nodes"); do mkdir -p "$dir/tmp/node$k"; done
  chmod -R 1777 "$dir/tmp"
  cat >"$dir/task-prolog" <<PROLOG
#!/bin/sh
echo "export TMPDIR=$dir/tmp/\$(hostname)"
PROLOG
  chmod +x "$dir/task-prolog"
  for k in $(seq "$nodes"); do echo "node$k slots=8"; done >"$dir/hostfile"
  cat >"$dir/rsh" <<AGENT
#!/bin/bash
# mpirun's rsh agent for this simulated cluster: HOST COMMAND... runs the
# command inside the namespaces of HOST's slurmd.
host=\$1
shift
pid=\$(cat "$dir/slurmd-\$host.pid") || { echo "rsh: no node \$host in $dir" >&2; exit 255; }
exec nsenter -t "\$pid" -n -u -m -- env TMPDIR="$dir/tmp/\$host" /bin/sh -c "\$*"
AGENT
  chmod +x "$dir/rsh"
fi

export SLURM_CONF=$conf
/usr/sbin/slurmctld -f "$conf"
if ((nodes == 1)); then
  /usr/sbin/slurmd -f "$conf"
else
  # nsenter enters the node's network only (ip netns exec would remount
  # /sys, hiding the cgroup file system slurmd needs); the node's host name
  # and hosts file are namespaces of its own, made here.
  for k in $(seq "$nodes"); do
    nsenter --net="/run/netns/${tag}n$k" unshare --mount --uts --propagation private \
      sh -c 'mount --bind "$1" /etc/hosts && hostname "$2" && exec /usr/sbin/slurmd -f "$3" -N "$2"' \
      node "$dir/hosts" "node$k" "$conf"
  done
fi
for _ in $(seq 100); do
  if (($(sinfo -h -N -o %t 2>/dev/null | grep -cE '^(idle|mix|alloc)') == nodes)); then
    echo "$conf"
    exit 0
  fi
  sleep 0.2
done
echo "cluster.sh: the nodes did not become idle within 20 s; see $dir/log" >&2
sinfo -N >&2 || true
tail -n 5 "$dir"/log/*.log >&2 || true
exit 1
