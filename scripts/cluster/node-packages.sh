#!/usr/bin/env bash
# Usage: scripts/cluster/node-packages.sh
# Installs the Debian packages a real node runs on, those missing only: containerd (and ctr), runc,
# the CNI plugins (/usr/lib/cni), conntrack, iptables, and nftables and nfacct (which node.sh uses to
# put the machine's rules and kube-proxy's packet counters back), gcc for the pause image. Debian's containerd package would start its own daemon through systemd;
# node.sh runs one of its own, so none is started here (policy-rc.d refuses it during the install).
set -euo pipefail
declare -A needs=([containerd]=containerd [ctr]=containerd [runc]=runc [/usr/lib/cni/bridge]=containernetworking-plugins
  [conntrack]=conntrack [iptables]=iptables [nft]=nftables [nfacct]=nfacct [gcc]="gcc libc6-dev")
missing=()
for program in "${!needs[@]}"; do
  if [[ "$program" == /* ]]; then [[ -x "$program" ]] && continue
  else command -v "$program" >/dev/null && continue
  fi
  read -ra packages <<< "${needs[$program]}" && missing+=("${packages[@]}")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
echo "installing Debian packages for the node: ${missing[*]}" >&2
policy=/usr/sbin/policy-rc.d
[[ -e "$policy" ]] && { echo "$policy exists: install ${missing[*]} yourself" >&2; exit 1; }
printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
trap 'rm -f "$policy"' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
