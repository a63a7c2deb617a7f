#!/usr/bin/env bash
# Usage: scripts/cluster/node-packages.sh
# Installs the Debian packages a real node runs on, those missing only: containerd (and ctr), runc,
# the CNI plugins (/usr/lib/cni), conntrack, iptables, and nftables and nfacct (which node.sh uses to
# put the machine's rules and kube-proxy's packet counters back), gcc for the pause image. Debian's containerd package would start its own daemon through systemd;
# node.sh runs one of its own, so none is started here (a policy-rc.d refuses it during the install).
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
# Services must not start during the install. An existing policy-rc.d that already refuses them (the
# usual container-image one, `exit 101`) is what we need and stays as it is; one that allows them is
# set aside for the install and put back, byte for byte, when this script ends.
policy=/usr/sbin/policy-rc.d
refuses() { [[ -x "$policy" ]] && { "$policy" containerd start >/dev/null 2>&1; [[ $? -eq 101 ]]; }; }
if ! refuses; then
  saved=""
  if [[ -e "$policy" ]]; then saved=$(mktemp) && cp -p "$policy" "$saved"; fi
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
  trap 'if [[ -n "$saved" ]]; then cp -p "$saved" "$policy" && rm -f "$saved"; else rm -f "$policy"; fi' EXIT
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
