# The real node's configuration files (sourced by node.sh): containerd, the CNI network, the kubelet
# and kube-proxy. Expects $dir, $node (DIR/node), $node_name, $node_ip and the ports of node-ports.env.
# Every path is inside DIR, except the few the programs hard-code (node.sh stop removes those).

pod_cidr="10.244.1.0/24"  # this node's pods; kwok's simulated node has 10.244.0.0/24
cluster_cidr="10.244.0.0/16"
bridge="wo-cni0"
cluster_dns="10.96.0.10"
sandbox_image="registry.k8s.io/pause:3.10"

# Writes stdin to a file only if that changes it: kube-proxy exits when its configuration file is
# written to, even with the same content (a second `node.sh start` must leave a running node alone).
write_file() {
  cat > "$1.new"
  if cmp -s "$1.new" "$1"; then rm "$1.new"; else mv "$1.new" "$1"; fi
}

write_containerd_config() {
  write_file "$node/containerd.toml" <<TOML
version = 2
root = "$node/containerd/root"
state = "$node/containerd/state"
# Unused plugins off: fewer directories made and nothing listening that nobody asked for.
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$node/containerd.sock"
[ttrpc]
  address = "$node/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$node/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$sandbox_image"
  # Required without CAP_SYS_RESOURCE: lowering a container's oom_score_adj below containerd's own
  # fails, and every sandbox with it ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  disable_apparmor = true
  disable_hugetlb_controller = true
  tolerate_missing_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$node/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$node/cni/net.d"
TOML
}

# A bridge of this machine's own, no masquerade: pods reach each other, the host and (through
# kube-proxy's rules) Services; nothing they send is translated to leave the machine. No portmap (no
# hostPort): this network adds no iptables rule of its own, so none can be mistaken for another
# engine's (podman's CNI chains are CNI-*).
write_cni_config() {
  mkdir -p "$node/cni/net.d"
  write_file "$node/cni/net.d/10-webhook-operator.conflist" <<JSON
{
  "cniVersion": "0.4.0",
  "name": "webhook-operator-node",
  "plugins": [
    {
      "type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$node/cni/ipam",
        "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
JSON
}

write_kubelet_config() {
  write_file "$node/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$dir/pki/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$dir/pki/kubelet-serving.crt"
tlsPrivateKeyFile: "$dir/pki/kubelet-serving.key"
containerRuntimeEndpoint: "unix://$node/containerd.sock"
cgroupDriver: cgroupfs
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
failSwapOn: false
failCgroupV1: false
# The host's limit: raising it needs CAP_SYS_RESOURCE, which this machine does not give.
maxOpenFiles: $(ulimit -n)
podCIDR: "$pod_cidr"
clusterDomain: cluster.local
clusterDNS: ["$cluster_dns"]
# Pods resolve cluster names through CoreDNS alone; the host's resolvers (and so names outside this
# machine) are never handed to them.
resolvConf: ""
staticPodPath: ""
serializeImagePulls: false
# A developer's disk is shared with everything else: evict only when it is really full, and never
# collect the images imported for the tests (there is no registry to pull them again from).
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
containerLogMaxSize: 10Mi
shutdownGracePeriod: 0s
YAML
}

write_kube_proxy_config() {
  write_file "$node/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: $node_name
clientConnection: {kubeconfig: "$dir/kube-proxy.kubeconfig"}
clusterCIDR: "$cluster_cidr"
# In iptables mode nothing listens here: it tells kube-proxy the node's address.
bindAddress: $node_ip
nodePortAddresses: [primary]
healthzBindAddress: "127.0.0.1:$KUBE_PROXY_HEALTHZ_PORT"
metricsBindAddress: "127.0.0.1:$KUBE_PROXY_METRICS_PORT"
# No NodePort on 127.0.0.1: that would need net.ipv4.conf.all.route_localnet=1, a host-wide change.
iptables: {localhostNodePorts: false, syncPeriod: 10s, minSyncPeriod: 0s}
# 0: leave the host's conntrack table size and timeouts as they are.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
}
