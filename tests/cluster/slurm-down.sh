#!/usr/bin/env bash
# Stops the SLURM daemons that tests/cluster/slurm-up.sh started (listed in /run/repro-slurm/started),
# slurmd first, munged last, and waits until each has exited. A SLURM that was already running
# when slurm-up.sh was called is left alone. Idempotent: with nothing listed it does nothing.
set -uo pipefail

STATE=/run/repro-slurm/started
WAIT_S=${SLURM_DOWN_WAIT_S:-60}

say() { echo "slurm-down: $*"; }

[ -s "$STATE" ] || { say "nothing to stop (no daemon started by slurm-up.sh)"; rm -f "$STATE"; exit 0; }

pidfile() {
  case "$1" in
    slurmd) echo /run/slurmd.pid ;;
    slurmctld) echo /run/slurmctld.pid ;;
    munged) echo /run/munge/munged.pid ;;
  esac
}

rc=0
for daemon in slurmd slurmctld munged; do
  grep -qx "$daemon" "$STATE" || continue
  file=$(pidfile "$daemon")
  pid=$(cat "$file" 2>/dev/null) || { say "$daemon: no pid file $file (not running)"; continue; }
  kill -0 "$pid" 2>/dev/null || { say "$daemon: not running"; continue; }
  kill -TERM "$pid"
  deadline=$((SECONDS + WAIT_S))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "slurm-down: $daemon (pid $pid) still running ${WAIT_S} s after SIGTERM" >&2
      rc=1
      break
    fi
    sleep 0.2
  done
  kill -0 "$pid" 2>/dev/null || say "$daemon stopped"
done
[ "$rc" -eq 0 ] && rm -f "$STATE"
exit "$rc"
