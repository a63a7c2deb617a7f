#!/usr/bin/env bash
# The container engine of the image scripts and tests: docker when its daemon answers, else podman with
# the settings this kind of machine needs, so that nobody has to remember them.
#   bash scripts/image/engine.sh ARGS...   runs the engine (`engine.sh run --rm IMAGE`, `engine.sh images`)
#   source scripts/image/engine.sh         defines engine_name and the function engine
# Podman on a cgroup v1 (or hybrid) host: crun refuses the layout ("cgroups in hybrid mode not
# supported"), runc with cgroupfs works. Without CAP_SYS_RESOURCE a container cannot raise a limit
# above its caller's, and podman's default nofile (1048576) is above it: run and build get the caller's
# own, and nproc no more than the 32768 podman sets for itself (measured: /proc/<podman>/limits).
set -euo pipefail

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  engine_name=docker
  engine_global=()
elif command -v podman >/dev/null; then
  engine_name=podman
  engine_global=()
  if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
    engine_global=(--runtime runc --cgroup-manager cgroupfs)
  fi
else
  echo "no container engine: install docker (with its daemon running) or podman" >&2
  exit 1
fi

host_limit() { # soft:hard of this shell's limit ($1 is ulimit's flag), each at most $2
  local soft hard
  soft=$(ulimit "-S$1") hard=$(ulimit "-H$1")
  [ "$hard" = unlimited ] || [ "$hard" -gt "$2" ] && hard=$2
  [ "$soft" = unlimited ] || [ "$soft" -gt "$hard" ] && soft=$hard
  echo "$soft:$hard"
}

engine() {
  local command=$1
  shift
  local limits=()
  if [ "$engine_name" = podman ] && [[ $command =~ ^(run|create|build)$ ]]; then
    limits=(--ulimit "nofile=$(host_limit n 1048576)" --ulimit "nproc=$(host_limit u 32768)")
  fi
  "$engine_name" "${engine_global[@]}" "$command" "${limits[@]}" "$@"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  engine "$@"
fi
