#!/usr/bin/env bash
# Usage: scripts/cluster/build.sh
# Builds the real Kubernetes cluster the cluster tests run against, from the Go module proxy, and
# prints the directory holding the binaries: kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet and kube-proxy (v1.34.4), etcd (v3.6.4), kwok (v0.7.0, simulates nodes: no container
# runtime) and CoreDNS (the cluster's DNS, run by scripts/cluster/node.sh beside the real node).
#
# Binaries are cached by version under $CLUSTER_CACHE (default ~/.cache/webhook-operator/cluster), so
# a second run builds nothing. The first run on a machine with empty Go caches takes about 6.5 minutes
# on 2 idle cores (10.5 beside a new machine's npm test; most of it compiling the Kubernetes commands)
# and fills ~4 GB of Go build and module caches.
#
# Why from source: no Kubernetes release binaries can be downloaded here, only Go modules. A wrapper
# module makes `go build` possible: k8s.io/kubernetes replaces its staging modules (k8s.io/api, …)
# with ./staging paths that do not exist in the module zip, so the wrapper replaces each with its
# published v0.x release.
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
# The compiler collects its garbage a quarter as often: 10-20 % less CPU for the same binaries
# (client-go's packages from nothing: 137 -> 123 and 160 -> 130 CPU-seconds, about 100 MB more a
# compile at its peak; 2026-12-07). Most of a new machine's build is compiling.
export GOGC="${GOGC:-400}"
log() { echo "[cluster build $(date +%H:%M:%S)] $*" >&2; }

# One module, one `go build`: the kube binaries, etcd and CoreDNS share every package they have in
# common (client-go, grpc, etcd's client, prometheus), which separate builds compiled up to four times.
# The five kube commands are one multi-call binary, as hyperkube was (one link instead of five), named
# by five hard links: a process's /proc/PID/exe still names the command it is. CoreDNS is built with
# only the plugins scripts/cluster/coredns.yaml's Corefile uses, not the cloud providers' SDKs.
log "${kube_binaries[*]} $kube_version, etcd $etcd_version and CoreDNS $coredns_version (the slow part)"
mkdir -p "$work/build/kube" "$work/build/coredns" && cd "$work/build"
go mod init local/cluster-build >/dev/null 2>&1
go mod edit -require="k8s.io/kubernetes@$kube_version" -require="go.etcd.io/etcd/server/v3@$etcd_version" \
  -require="github.com/coredns/coredns@$coredns_version"
gomod="$(go mod download -json "k8s.io/kubernetes@$kube_version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
# Every `k8s.io/x => ./staging/src/k8s.io/x` of kubernetes' go.mod becomes `k8s.io/x => k8s.io/x v0.34.4`.
for module in $(sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$gomod"); do
  go mod edit -replace="$module=$module@$staging_version"
done
cat > kube/main.go <<'GO'
// One binary for the five Kubernetes commands, chosen by the name it is run as.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	_ "time/tzdata" // CronJob time zones

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	commands := map[string]func() *cobra.Command{
		"kube-apiserver":          apiserver.NewAPIServerCommand,
		"kube-controller-manager": controllermanager.NewControllerManagerCommand,
		"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
		"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
		"kube-proxy":              proxy.NewProxyCommand,
	}
	command, ok := commands[filepath.Base(os.Args[0])]
	if !ok {
		fmt.Fprintln(os.Stderr, "run as kube-apiserver, kube-controller-manager, kube-scheduler, kubelet or kube-proxy")
		os.Exit(2)
	}
	os.Exit(cli.Run(command()))
}
GO
cat > coredns/main.go <<'GO'
// CoreDNS with the plugins of scripts/cluster/coredns.yaml's Corefile only.
package main

import (
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
GO
# etcd's server is a main package of another module: this import keeps it required through `go mod tidy`.
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
go mod tidy -e >/dev/null 2>&1 || true
go get "k8s.io/kubernetes@$kube_version" "go.etcd.io/etcd/server/v3@$etcd_version" \
  "github.com/coredns/coredns@$coredns_version" >/dev/null 2>&1 || true
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=34 -X $pkg.gitTreeState=clean"
done
# etcd's main package is its server module's root: `go build` names that binary `server`.
go build -ldflags "-s -w $ldflags" -o "$work/out/" ./kube ./coredns go.etcd.io/etcd/server/v3

# kwok in a module of its own: its controller-runtime wants the client-go it was released with.
log "kwok $kwok_version"
GOBIN="$work/gobin" go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"

rm -rf "$bin" && mkdir -p "$bin"
mv "$work/out/kube" "$bin/kube"
for b in "${kube_binaries[@]}"; do ln "$bin/kube" "$bin/$b"; done
mv "$work/out/server" "$bin/etcd"
mv "$work/out/coredns" "$bin/coredns"
mv "$work/gobin/kwok" "$bin/kwok"

have_all || { echo "control plane build finished without every binary in $bin" >&2; exit 1; }
log "done: $bin"
echo "$bin"
