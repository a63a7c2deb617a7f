#!/usr/bin/env bash
# Usage: scripts/cluster/node-restore.sh DIR   (what `node.sh DIR stop` runs)
# Stops the real node of DIR and puts the machine back as DIR/node/host-before.txt recorded it, then
# compares. Each step works whether or not the node's programs still answer (a crashed kubelet or
# containerd leaves the same things behind), and each undoes only what the node made: its processes,
# cgroups under /kubepods, mounts under DIR/node, /run/containerd and /run/netns/cni-*, the bridge
# wo-cni0, then (host-restore.py) KUBE-* chains, new nftables chains and tables, nfacct counters, and
# sysctls and paths that differ from before.
set -uo pipefail
dir="$(cd "${1:?usage: $0 DIR}" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="$dir/node"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=node-config.sh
source "$here/node-config.sh"
[[ -f "$node/host-before.txt" ]] || { echo "no node was started in $dir (no $node/host-before.txt)" >&2; exit 0; }
before="$node/host-before.txt"

# Processes: the node's programs, then every process of a pod (killed through the cgroups that hold
# them, which works even when containerd no longer answers), then containerd and its shims.
end_component kube-proxy
end_component kubelet
for _ in $(seq 1 50); do
  pids="$(cat /sys/fs/cgroup/memory/kubepods/cgroup.procs /sys/fs/cgroup/memory/kubepods/*/cgroup.procs \
    /sys/fs/cgroup/memory/kubepods/*/*/cgroup.procs /sys/fs/cgroup/memory/kubepods/*/*/*/cgroup.procs 2>/dev/null)"
  [[ -z "$pids" ]] && break
  kill -KILL $pids 2>/dev/null
  sleep 0.1
done
end_component containerd
for proc in /proc/[0-9]*; do
  if tr '\0' ' ' 2>/dev/null < "$proc/cmdline" | grep -q "containerd-shim.* -address $node/containerd.sock"; then
    kill -KILL "${proc#/proc/}" 2>/dev/null
  fi
done

# Mounts, deepest first: volumes inside the kubelet's own bind mount, root filesystems of containers.
for _ in 1 2 3 4 5; do
  mapfile -t mounts < <(awk '{print $5}' /proc/self/mountinfo | grep -E "^($node/|$node\$|/run/containerd/|/var/lib/kubelet)" | awk '{print length, $0}' | sort -rn | cut -d' ' -f2-)
  [[ ${#mounts[@]} -eq 0 ]] && break
  for mount in "${mounts[@]}"; do umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null; done
done

# The pods' network namespaces (containerd's CRI names them /run/netns/cni-*, as podman does): those
# made since the node started that no process uses any more. Their veth pairs go with them.
in_use="$(for proc in /proc/[0-9]*; do stat -L -c %i "$proc/ns/net" 2>/dev/null; done | sort -u)"
for netns in /run/netns/cni-*; do
  [[ -e "$netns" ]] || continue
  grep -qx "netns ${netns##*/}" "$before" && continue
  grep -qx "$(stat -L -c %i "$netns" 2>/dev/null)" <<< "$in_use" && continue
  umount "$netns" 2>/dev/null; rm -f "$netns"
done

# cgroups: pods' first, then the QoS classes, then /kubepods, in every hierarchy.
for _ in $(seq 1 20); do
  left=0
  for hierarchy in /sys/fs/cgroup/*/; do
    [[ -d "$hierarchy/kubepods" ]] || continue
    find "$hierarchy/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null || left=1
  done
  [[ $left -eq 0 ]] && break
  sleep 0.25
done

ip link del "$bridge" 2>/dev/null

# Rules, counters, sysctls and paths (host-restore.py says which and how).
python3 "$here/host-restore.py" "$before"

rm -rf "$node/kubelet" "$node/containerd" "$node/runc" "$node/cni/ipam" "$node/containerd.sock"*
kubectl="$("$here/../fetch-k8s-tool.sh" kubectl 2>/dev/null)" &&
  "$kubectl" --kubeconfig "$dir/kubeconfig" --request-timeout 5s delete node node-0 --ignore-not-found --wait=false >/dev/null 2>&1
rm -f "$node/started"
exec bash "$here/node.sh" "$dir" check
