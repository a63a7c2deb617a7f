#!/usr/bin/env bash
# Usage: scripts/cluster/build.sh
# Builds the real Kubernetes cluster the cluster tests run against, from the Go module proxy, and
# prints the directory holding the binaries: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet and kube-proxy (v1.34.4), etcd (v3.6.4), kwok (v0.7.0, simulates nodes: no container
# runtime) and CoreDNS (the cluster's DNS, run by scripts/cluster/node.sh beside the real node).
#
# Binaries are cached by version under $CLUSTER_CACHE (default ~/.cache/webhook-operator/cluster), so
# a second run builds nothing. The first run on a machine with empty Go caches takes 6 to 25 minutes
# on 2 cores (most of it compiling kube-apiserver) and fills ~4.5 GB of Go build and module caches.
#
# Why from source: no Kubernetes release binaries can be downloaded here, only Go modules. Two wrapper
# modules make `go build` possible: k8s.io/kubernetes replaces its staging modules (k8s.io/api, …)
# with ./staging paths that do not exist in the module zip, so the wrapper replaces each with its
# published v0.x release; etcd's server module likewise needs its sibling modules pinned together.
set -euo pipefail

kube_version="v1.34.4"
staging_version="v0.34.4"
etcd_version="v3.6.4"
kwok_version="v0.7.0"
coredns_version="v1.12.4"

cache="${CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webhook-operator/cluster}"
bin="$cache/bin-kube-$kube_version-etcd-$etcd_version-kwok-$kwok_version-coredns-$coredns_version"
kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
wanted=("${kube_binaries[@]}" etcd kwok coredns)

have_all() { for b in "${wanted[@]}"; do [[ -x "$bin/$b" ]] || return 1; done; }
if have_all; then echo "$bin"; exit 0; fi

command -v go >/dev/null || { echo "Go is needed to build the control plane (go 1.24 or newer): install it and retry." >&2; exit 1; }
mkdir -p "$cache"
work="$(mktemp -d "$cache/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0
log() { echo "[cluster build $(date +%H:%M:%S)] $*" >&2; }

have_kube() { for b in "${kube_binaries[@]}"; do [[ -x "$bin/$b" ]] || return 1; done; }
if ! have_kube; then
  log "${kube_binaries[*]} $kube_version (the slow part)"
  mkdir -p "$work/kube" && cd "$work/kube"
  go mod init local/kube-build >/dev/null 2>&1
  go mod edit -require="k8s.io/kubernetes@$kube_version"
  gomod="$(go mod download -json "k8s.io/kubernetes@$kube_version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
  # Every `k8s.io/x => ./staging/src/k8s.io/x` of kubernetes' go.mod becomes `k8s.io/x => k8s.io/x v0.34.4`.
  for module in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod"); do
    go mod edit -replace="$module=$module@$staging_version"
  done
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
)
GO
  go mod tidy -e >/dev/null 2>&1 || true
  go get "k8s.io/kubernetes@$kube_version" >/dev/null 2>&1 || true
  ldflags=""
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=34 -X $pkg.gitTreeState=clean"
  done
  mkdir -p "$work/out"
  go build -tags tools -ldflags "-s -w $ldflags" -o "$work/out/" \
    $(printf 'k8s.io/kubernetes/cmd/%s ' "${kube_binaries[@]}")
  mkdir -p "$bin" && mv "$work/out/"* "$bin/"
fi

if ! [[ -x "$bin/etcd" ]]; then
  log "etcd $etcd_version"
  mkdir -p "$work/etcd" && cd "$work/etcd"
  go mod init local/etcd-build >/dev/null 2>&1
  cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  go get "go.etcd.io/etcd/server/v3@$etcd_version" >/dev/null
  go mod tidy -e >/dev/null 2>&1 || true
  go build -tags tools -ldflags "-s -w" -o "$work/etcd-bin" go.etcd.io/etcd/server/v3
  mkdir -p "$bin" && mv "$work/etcd-bin" "$bin/etcd"
fi

if ! [[ -x "$bin/kwok" ]]; then
  log "kwok $kwok_version"
  GOBIN="$work/gobin" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
  mkdir -p "$bin" && mv "$work/gobin/kwok" "$bin/kwok"
fi

if ! [[ -x "$bin/coredns" ]]; then
  log "coredns $coredns_version"
  GOBIN="$work/gobin" go install -ldflags "-s -w" "github.com/coredns/coredns@$coredns_version"
  mkdir -p "$bin" && mv "$work/gobin/coredns" "$bin/coredns"
fi

have_all || { echo "control plane build finished without every binary in $bin" >&2; exit 1; }
log "done: $bin"
echo "$bin"
