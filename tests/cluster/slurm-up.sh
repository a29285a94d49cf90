#!/usr/bin/env bash
# A one-node SLURM on this machine, for the cluster test tier (tests/cluster, docs/testing.md).
#
# As root: installs `slurm-wlm munge` with apt-get when absent, writes a one-node slurm.conf for
# this machine (its CPUs from `nproc`, its memory from /proc/meminfo; one partition `debug`, accounting
# off), starts munged, slurmctld and slurmd, and waits until the node answers `idle` (polling
# `sinfo`, bounded by SLURM_UP_WAIT_S, default 120 s). Idempotent: with SLURM already up it
# changes nothing. The daemons it started are listed in $STATE (tests/cluster/slurm-down.sh stops
# exactly those). Writes nothing in the repository: the config goes to /etc/slurm, state and logs
# to /var/lib/slurm, /var/log/slurm and /run.
#
# Every failure is one line on stderr, "slurm-up: ...", and exit status 1.
set -uo pipefail

CONF=/etc/slurm/slurm.conf
MARK="# written by repro tests/cluster/slurm-up.sh"
STATE_DIR=/run/repro-slurm
STATE=$STATE_DIR/started
WAIT_S=${SLURM_UP_WAIT_S:-120}
PARTITION=debug

say() { echo "slurm-up: $*"; }
fail() { echo "slurm-up: $*" >&2; exit 1; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }  # a pid file whose process runs

node_state() { sinfo -h -N -o %T 2>/dev/null | head -n 1; }  # idle, mixed, allocated, down*, ...

node_ready() { case "$(node_state)" in idle|mixed|allocated|completing) return 0 ;; *) return 1 ;; esac; }

# 1. already up (ours or anyone's): nothing to do
if command -v sinfo >/dev/null && command -v scontrol >/dev/null && scontrol ping >/dev/null 2>&1 && node_ready; then
  say "already up: node $(sinfo -h -N -o %N | head -n 1) $(node_state), partitions $(sinfo -h -o %P | tr '\n' ' ')"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  fail "SLURM is not running and starting it needs root (uid $(id -u)): run this script as root, or opt out of the cluster tier (REPRO_CLUSTER=skip)"
fi

# 2. the packages
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null \
   || ! command -v sinfo >/dev/null; then
  command -v apt-get >/dev/null || fail "slurm-wlm and munge are not installed and there is no apt-get to install them"
  say "installing slurm-wlm munge (apt-get)"
  log=$(mktemp /tmp/slurm-up-apt.XXXXXX)
  if ! { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
           slurm-wlm munge; } >"$log" 2>&1; then
    fail "apt-get could not install slurm-wlm munge ($(tail -n 1 "$log")); full log: $log"
  fi
  rm -f "$log"
fi

# 3. the config: one node (this machine: nproc CPUs, MemTotal MB), one partition
if [ -f "$CONF" ] && ! head -n 1 "$CONF" | grep -qF "$MARK"; then
  fail "$CONF exists and was not written by this script: this machine has its own SLURM config; start that cluster instead (or move the file away)"
fi
host=$(hostname -s)
cpus=$(nproc) || fail "nproc failed: cannot count this machine's CPUs"
mem_kb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
[ -n "$mem_kb" ] || fail "/proc/meminfo has no MemTotal line: cannot read this machine's memory"
mem_mb=$((mem_kb / 1024))
node="NodeName=$host CPUs=$cpus RealMemory=$mem_mb"
mkdir -p /etc/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm "$STATE_DIR"
cat >"$CONF.tmp" <<EOF
$MARK: a one-node cluster on this machine for the cluster test tier (tests/cluster); rewritten by each start
ClusterName=repro
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
$node State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
mv "$CONF.tmp" "$CONF"

# 4. the daemons (each only when not running already)
: >>"$STATE"
if ! munge -n >/dev/null 2>&1; then
  install -d -o munge -g munge -m 0755 /run/munge
  runuser -u munge -- /usr/sbin/munged || fail "munged did not start (see /var/log/munge/munged.log)"
  echo munged >>"$STATE"
  for _ in $(seq 100); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n >/dev/null 2>&1 || fail "munged started but munge -n fails (see /var/log/munge/munged.log)"
fi
if ! alive /run/slurmctld.pid; then
  /usr/sbin/slurmctld || fail "slurmctld did not start: $(tail -n 1 /var/log/slurm/slurmctld.log 2>/dev/null)"
  echo slurmctld >>"$STATE"
fi
if ! alive /run/slurmd.pid; then
  /usr/sbin/slurmd || fail "slurmd did not start: $(tail -n 1 /var/log/slurm/slurmd.log 2>/dev/null)"
  echo slurmd >>"$STATE"
fi

# 5. wait (poll sinfo, bounded) until the node takes jobs
deadline=$((SECONDS + WAIT_S))
until node_ready; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    reason=$(sinfo -h -N -o '%T %E' 2>/dev/null | head -n 1)
    fail "node $host not idle after ${WAIT_S} s (sinfo: ${reason:-no answer from slurmctld}); logs: /var/log/slurm/slurmctld.log, /var/log/slurm/slurmd.log"
  fi
  case "$(node_state)" in down*|drain*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 ;; esac
  sleep 0.5
done
say "up: $(sinfo -h -N -o 'node %N %T, %c CPUs, %m MB, partition %P')"
