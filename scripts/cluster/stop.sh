#!/usr/bin/env bash
# Usage: scripts/cluster/stop.sh DIR [component …]
# Stops the control plane that scripts/cluster/start.sh started in DIR (or only the named components),
# newest first; a process is signalled only if its pid file is in DIR and it still runs one of the
# cluster's binaries, so a reused pid is never hit. State (certificates, etcd data) stays in DIR.
# Stopping everything stops a real node that scripts/cluster/node.sh started in DIR first, which puts
# back every change it made to the machine.
set -uo pipefail
dir="${1:?usage: $0 DIR [component …]}"
shift
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
components=("$@")
if [[ ${#components[@]} -eq 0 ]]; then
  [[ -f "$dir/node/started" ]] && { bash "$here/node.sh" "$dir" stop || status=$?; }
  components=(kwok kube-scheduler kube-controller-manager kube-apiserver etcd)
fi
for component in "${components[@]}"; do end_component "$component"; done
exit "${status:-0}"
