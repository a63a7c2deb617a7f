#!/usr/bin/env bash
# Usage: scripts/cluster/node.sh DIR start|stop|import ARCHIVE…|tag IMAGE NEW-NAME|check
# A real Kubernetes node beside the control plane that scripts/cluster/start.sh runs in DIR: Debian's
# containerd and runc, a CNI bridge of its own (pods 10.244.1.0/24), the kubelet, kube-proxy (iptables
# mode: Service ClusterIPs in 10.96.0.0/16) and CoreDNS as a pod (Service kube-dns, 10.96.0.10), so
# pods really run, reach the apiserver through the `kubernetes` Service and resolve Service names.
# Node `node-0`; kwok's simulated node is another matter (start.sh's kwok component).
#
#   start   starts the node (needs root and the control plane; installs the Debian packages it needs
#           if missing) after saving the state of the machine in DIR/node/host-before.txt.
#   stop    stops it and puts back every change it made to the machine (sysctls, iptables and
#           nftables rules, mounts, cgroups, the bridge, network namespaces, files under /var, /run
#           and /opt), then compares the machine with host-before.txt; exits 1, printing what
#           differs, if anything does.
#   import  loads image archives (docker-archive or OCI) into the node's containerd: there is no
#           registry, so pods use imagePullPolicy IfNotPresent or Never.
#   tag     gives an image of the node another name (webhook-operator:0.2.0 webhook-operator:next).
#   check   compares the machine with host-before.txt (what stop does last).
#
# Addresses stay on this machine: the pod range lives on its bridge and in network namespaces, nothing
# is masqueraded out, and pods resolve cluster.local names only.
set -euo pipefail

usage="usage: $0 DIR start|stop|import ARCHIVE…|tag IMAGE NEW-NAME|check"
dir="${1:?$usage}"
command="${2:?$usage}"
shift 2
dir="$(cd "$dir" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
node="$dir/node"
node_name="node-0"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=node-config.sh
source "$here/node-config.sh"

ctr() { command ctr --address "$node/containerd.sock" --namespace k8s.io "$@"; }
# The name the kubelet asks containerd for: postgres:18 is docker.io/library/postgres:18.
full_name() {
  case "$1" in
    */*) [[ "${1%%/*}" == *[.:]* || "${1%%/*}" == localhost ]] && echo "$1" || echo "docker.io/$1" ;;
    *) echo "docker.io/library/$1" ;;
  esac
}

compare_host() {
  bash "$here/host-state.sh" > "$node/host-after.txt"
  if ! diff -u "$node/host-before.txt" "$node/host-after.txt" > "$node/host-diff.txt"; then
    echo "the machine differs from before the node started (DIR/node/host-diff.txt):" >&2
    grep '^[-+][^-+]' "$node/host-diff.txt" | head -40 >&2
    return 1
  fi
}

case "$command" in
  stop) exec bash "$here/node-restore.sh" "$dir" ;;
  check) compare_host; exit ;;
  import)
    for archive in "$@"; do ctr images import "$archive" >/dev/null; done
    exit ;;
  tag)
    from="$(full_name "${1:?$usage}")" to="$(full_name "${2:?$usage}")"
    [[ "$from" == "$to" ]] || ctr images tag --force "$from" "$to" >/dev/null
    exit ;;
  start) ;;
  *) echo "unknown command $command (start, stop, import, tag, check)" >&2; exit 2 ;;
esac

[[ $EUID -eq 0 ]] || { echo "a real node needs root (cgroups, mounts, network namespaces)" >&2; exit 1; }
[[ -f "$dir/kubeconfig" && -f "$dir/ports.env" ]] || { echo "no control plane in $dir: run scripts/cluster/start.sh $dir first" >&2; exit 1; }
bin="${CLUSTER_BIN:-$("$here/build.sh")}"
kubectl="$("$here/../fetch-k8s-tool.sh" kubectl)"
k() { "$kubectl" --kubeconfig "$dir/kubeconfig" "$@"; }
bash "$here/node-packages.sh"
mkdir -p "$node" "$dir/logs" "$dir/pids"

if ! running containerd && ! running kubelet; then
  if [[ -d /sys/fs/cgroup/memory/kubepods || -e /var/lib/kubelet ]]; then
    echo "another kubelet runs on this machine, or one left /kubepods or /var/lib/kubelet behind: stop it first" >&2
    exit 1
  fi
  bash "$here/host-state.sh" > "$node/host-before.txt"
fi
touch "$node/started"

# shellcheck source=/dev/null
source "$dir/ports.env"
[[ -f "$dir/node-ports.env" ]] || free_ports KUBELET_PORT KUBELET_HEALTHZ_PORT KUBE_PROXY_HEALTHZ_PORT \
  KUBE_PROXY_METRICS_PORT > "$dir/node-ports.env"
# shellcheck source=/dev/null
source "$dir/node-ports.env"
node_ip="$(node_address)"

sign "node-$node_name" "/O=system:nodes/CN=system:node:$node_name" "extendedKeyUsage=clientAuth"
sign kubelet-serving "/CN=$node_name" "extendedKeyUsage=serverAuth
subjectAltName=IP:$node_ip,DNS:$node_name"
sign kube-proxy "/CN=system:kube-proxy" "extendedKeyUsage=clientAuth"
kubeconfig kubelet.kubeconfig "node-$node_name"
kubeconfig kube-proxy.kubeconfig kube-proxy
write_containerd_config
write_cni_config
write_kubelet_config
write_kube_proxy_config

launch containerd containerd --config "$node/containerd.toml"
wait_for containerd ctr version
images="$(bash "$here/node-images.sh" "$bin")"
mapfile -t images <<< "$images"
bash "$0" "$dir" import "${images[@]}"

launch kubelet "$bin/kubelet" --config "$node/kubelet.yaml" --kubeconfig "$dir/kubelet.kubeconfig" \
  --hostname-override "$node_name" --node-ip "$node_ip" --root-dir "$node/kubelet" \
  --cert-dir "$node/kubelet-pki" --v 1
wait_for "the kubelet (node $node_name Ready)" sh -c "'$kubectl' --kubeconfig '$dir/kubeconfig' get node $node_name -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"

launch kube-proxy "$bin/kube-proxy" --config "$node/kube-proxy.yaml" --v 1
wait_for kube-proxy curl -fsS "http://127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT/healthz"

coredns_tag="$(ctr images ls -q | sed -n 's#^registry.k8s.io/coredns/coredns:##p' | head -1)"
sed "s/\${COREDNS_TAG}/$coredns_tag/" "$here/coredns.yaml" | k apply -f - >/dev/null
k -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null
echo "$dir/kubeconfig"
