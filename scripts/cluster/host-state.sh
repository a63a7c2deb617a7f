#!/usr/bin/env bash
# Usage: scripts/cluster/host-state.sh
# Prints the state of this machine that a Kubernetes node changes, one fact a line, in an order that
# does not depend on time: node.sh saves it before the node starts and compares it after the node
# stops (any line that differs is a change the node left behind). It covers:
#   sysctls (all but counters that move by themselves), iptables and ip6tables rules, the nftables
#   ruleset, nfacct counters, mounts, top-level cgroups of every hierarchy, network interfaces,
#   addresses and routes, network namespaces, the paths the kubelet, containerd and CNI use outside
#   their own directories, and processes of the node's programs.
set -uo pipefail
export LC_ALL=C

section() { echo "== $1"; }

section sysctl
# Counters and random values that change on their own from one second to the next.
sysctl -a 2>/dev/null | grep -Ev '^(fs\.(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota\.)|kernel\.(ns_last_pid|random\.|pty\.nr|tainted)|net\.netfilter\.nf_conntrack_count)' | sort

section iptables
for save in iptables-save ip6tables-save; do
  # Counters and the dump's own comments (time, version) aside.
  command -v "$save" >/dev/null && "$save" 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]$//'
done

section nftables
command -v nft >/dev/null && nft -s list ruleset 2>/dev/null

section nfacct
# Named packet counters (kube-proxy makes some): their names, not their counts.
command -v nfacct >/dev/null && nfacct list 2>/dev/null | sed -n 's/.* = \(.*\);$/\1/p' | sort

section mounts
# Mount point, source, type and options: not the ids, which a remount changes.
awk '{ sep = 0; for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
       print $5, $(sep + 1), $(sep + 2), $6 }' /proc/self/mountinfo | sort

section cgroups
# The top level of every hierarchy: a node's cgroups all live under /kubepods, so a leftover one leaves
# /kubepods there; deeper, other programs' cgroups come and go by themselves (a process manager's, one
# per command it runs).
for hierarchy in /sys/fs/cgroup/*/; do
  find "$hierarchy" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | sort
done

section network
ip -o link show | sed -E 's/^[0-9]+: //; s/ link-netnsid [0-9]+//; s/ state [A-Z]+//; s/(qdisc|mode|group|qlen) [^ ]+ //g'
ip -o address show | awk '{print $2, $3, $4}'
ip route show table all 2>/dev/null
ip -6 route show table all 2>/dev/null | grep -v ' proto kernel ' || true
ls /run/netns 2>/dev/null | sed 's/^/netns /'

section paths
for path in /var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/cni /run/netns \
  /opt/containerd /var/lib/containerd /etc/cni /etc/kubernetes; do
  if [[ -e "$path" ]]; then find "$path" 2>/dev/null | sort; else echo "absent $path"; fi
done

section processes
for proc in /proc/[0-9]*; do
  exe="$(readlink "$proc/exe" 2>/dev/null)" || continue
  case "${exe##*/}" in
    kubelet | kube-proxy | containerd | containerd-shim* | coredns | runc) echo "running $exe" ;;
  esac
done | sort
