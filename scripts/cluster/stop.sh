#!/usr/bin/env bash
# Usage: scripts/cluster/stop.sh DIR [component …]
# Stops the control plane that scripts/cluster/start.sh started in DIR (or only the named components),
# newest first; a process is signalled only if its pid file is in DIR and it still runs one of the
# cluster's binaries, so a reused pid is never hit. State (certificates, etcd data) stays in DIR.
set -uo pipefail
dir="${1:?usage: $0 DIR [component …]}"
shift
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=(kwok kube-scheduler kube-controller-manager kube-apiserver etcd)
for component in "${components[@]}"; do
  pidfile="$dir/pids/$component"
  [[ -f "$pidfile" ]] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q "$component"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
done
