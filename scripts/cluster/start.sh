#!/usr/bin/env bash
# Usage: scripts/cluster/start.sh DIR [component …]
# Starts a real Kubernetes control plane on loopback with its state in DIR (made if missing) and
# prints DIR/kubeconfig, an admin kubeconfig. Components: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok (one simulated node, `kwok-node-0`: pods scheduled there become Running/Ready
# without any container runtime). Naming components (re)starts only those with the ports, certificates
# and data already in DIR, e.g. `start.sh DIR kube-apiserver` after `stop.sh DIR kube-apiserver`.
#
# Everything listens on 127.0.0.1 at ports chosen free on first start (saved in DIR/ports.env), but
# the apiserver listens on every address: pods of a real node (scripts/cluster/node.sh) reach it
# through the `kubernetes` Service, whose endpoint is the machine's own address. The aggregation layer
# is configured as kubeadm does (--requestheader-*, --proxy-client-*, a front-proxy CA of its own),
# with --enable-aggregator-routing: no kube-proxy runs on this machine, so the API server reaches an
# APIService's backend (an operator on the host) at its Service's endpoint address, not its cluster IP.
# RBAC
# is on (--authorization-mode=Node,RBAC), ServiceAccount tokens are real, and the controller-manager
# runs every default controller. Binaries come from scripts/cluster/build.sh (or $CLUSTER_BIN).
# scripts/cluster/stop.sh DIR stops what this started, and nothing else.
set -euo pipefail

dir="${1:?usage: $0 DIR [component …]}"
shift
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="${CLUSTER_BIN:-$("$here/build.sh")}"
kubectl="$("$here/../fetch-k8s-tool.sh" kubectl)"
all=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
components=("$@")
[[ ${#components[@]} -gt 0 ]] || components=("${all[@]}")
mkdir -p "$dir/pki" "$dir/logs" "$dir/pids"

# Ports are chosen free on first start and kept in ports.env: a restarted component listens where its
# clients already point.
# shellcheck source=lib.sh
source "$here/lib.sh"
[[ -f "$dir/ports.env" ]] || free_ports ETCD_PORT ETCD_PEER_PORT APISERVER_PORT CONTROLLER_MANAGER_PORT \
  SCHEDULER_PORT KWOK_PORT > "$dir/ports.env"
# shellcheck source=/dev/null
source "$dir/ports.env"
advertise="$(node_address)"

pki="$dir/pki"
certificates() {
  if [[ ! -f "$pki/ca.crt" ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/ca.key" \
      -out "$pki/ca.crt" -days 3650 -subj "/CN=webhook-operator-test-ca" 2>/dev/null
    openssl ecparam -name prime256v1 -genkey -noout -out "$pki/sa.key"
    openssl ec -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  fi
  sign apiserver "/CN=kube-apiserver" "extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:$advertise,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign admin "/O=system:masters/CN=admin" "extendedKeyUsage=clientAuth"
  sign controller-manager "/CN=system:kube-controller-manager" "extendedKeyUsage=clientAuth"
  sign scheduler "/CN=system:kube-scheduler" "extendedKeyUsage=clientAuth"
  # The apiserver's identity towards kubelets (logs, exec, port-forward of pods on the real node).
  sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "extendedKeyUsage=clientAuth"
  # The aggregation layer, as kubeadm sets it up: the API server proxies requests for an APIService
  # (the operator's deliveries.webhook-operator.io) with this client certificate, naming the caller in
  # X-Remote-* headers. Its CA is a CA of its own, so no other client certificate of the cluster can
  # pass for the front proxy and claim to be anyone.
  if [[ ! -f "$pki/front-proxy-ca.crt" ]]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$pki/front-proxy-ca.key" \
      -out "$pki/front-proxy-ca.crt" -days 3650 -subj "/CN=webhook-operator-test-front-proxy-ca" 2>/dev/null
  fi
  sign front-proxy-client "/CN=front-proxy-client" "extendedKeyUsage=clientAuth" front-proxy-ca
}

admin_curl() { curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "https://127.0.0.1:$APISERVER_PORT$1"; }

certificates
# Who wrote what, for the tests that must know which identity a pod used (an operator replica renewing
# its Lease through the kubernetes Service as its ServiceAccount): writes of Leases and Webhooks only,
# and the reads the node suite counts (below).
cat > "$dir/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    namespaces: [kube-node-lease]
  - level: Metadata
    verbs: [create, update, patch, delete]
    resources:
      - group: coordination.k8s.io
        resources: [leases]
      - group: webhook-operator.io
        resources: [webhooks, webhooks/status]
  # Replays through the operator's aggregated API: who asked, in which namespace, and the answer's code.
  # The API server proxies an aggregated API's bodies unread, so no level records which delivery.
  - level: Metadata
    verbs: [create]
    resources:
      - group: deliveries.webhook-operator.io
        resources: [deliveryreplays]
  # And the reads of pods, their logs and events in wo-failures: the rollout diagnostics' requests,
  # counted by test/node/rollout-failures.test.ts.
  - level: Metadata
    verbs: [get, list]
    namespaces: [wo-failures]
    resources:
      - group: ""
        resources: [pods, pods/log, events]
  - level: None
YAML
kubeconfig kubeconfig admin
kubeconfig controller-manager.kubeconfig controller-manager
kubeconfig scheduler.kubeconfig scheduler

for component in "${components[@]}"; do
  case "$component" in
    etcd)
      launch etcd "$bin/etcd" --name default --data-dir "$dir/etcd" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
        --quota-backend-bytes 2147483648 --log-level warn
      wait_for etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
      ;;
    kube-apiserver)
      launch kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --bind-address 0.0.0.0 --secure-port "$APISERVER_PORT" --advertise-address "$advertise" \
        --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" --client-ca-file "$pki/ca.crt" \
        --service-account-issuer https://kubernetes.default.svc.cluster.local \
        --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
        --authorization-mode Node,RBAC --service-cluster-ip-range 10.96.0.0/16 --allow-privileged=true \
        --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
        --kubelet-preferred-address-types InternalIP,Hostname \
        --requestheader-client-ca-file "$pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
        --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
        --requestheader-extra-headers-prefix X-Remote-Extra- \
        --proxy-client-cert-file "$pki/front-proxy-client.crt" --proxy-client-key-file "$pki/front-proxy-client.key" \
        --enable-aggregator-routing=true \
        --audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/logs/audit.log" \
        --audit-log-maxsize 50 --audit-log-maxbackup 1 \
        --profiling=false --cert-dir "$pki/apiserver-generated" --v 1
      wait_for kube-apiserver admin_curl /readyz
      ;;
    kube-controller-manager)
      launch kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$dir/controller-manager.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$CONTROLLER_MANAGER_PORT" --leader-elect=false \
        --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
        --use-service-account-credentials=true --cluster-signing-cert-file "$pki/ca.crt" \
        --cluster-signing-key-file "$pki/ca.key" --cert-dir "$pki/controller-manager-generated" --v 1
      ;;
    kube-scheduler)
      launch kube-scheduler "$bin/kube-scheduler" --kubeconfig "$dir/scheduler.kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false \
        --cert-dir "$pki/scheduler-generated" --v 1
      ;;
    kwok)
      launch kwok "$bin/kwok" --kubeconfig "$dir/kubeconfig" --manage-all-nodes=false \
        --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
        --server-address "127.0.0.1:$KWOK_PORT" --cidr 10.244.0.0/24 --node-ip 10.244.0.1 \
        --node-lease-duration-seconds 40
      "$kubectl" --kubeconfig "$dir/kubeconfig" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-0, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
status:
  allocatable: {cpu: "32", memory: 256Gi, pods: "110"}
  capacity: {cpu: "32", memory: 256Gi, pods: "110"}
YAML
      wait_for "the kwok node" sh -c "'$kubectl' --kubeconfig '$dir/kubeconfig' get node kwok-node-0 -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
      ;;
    *) echo "unknown component $component (one of: ${all[*]})" >&2; exit 2 ;;
  esac
done

# Pods need their namespace's `default` ServiceAccount, made by the controller-manager.
if [[ " ${components[*]} " == *" kube-controller-manager "* ]]; then
  wait_for "the controller-manager (default ServiceAccount)" "$kubectl" --kubeconfig "$dir/kubeconfig" -n default get serviceaccount default
fi
echo "$dir/kubeconfig"
