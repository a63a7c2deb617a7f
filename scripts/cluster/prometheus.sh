#!/usr/bin/env bash
# Usage: scripts/cluster/prometheus.sh
# Prints the path of a Prometheus that can discover targets through a Kubernetes apiserver, building it
# from the Go module proxy the first time (cached by version beside the cluster's binaries; about 4
# minutes on 2 cores, less once scripts/cluster/build.sh has filled the module cache).
#
# Why not Debian's prometheus package: it is built without Kubernetes service discovery (its
# Built-Using has no client-go), so `kubernetes_sd_configs` is "field not found" there, and that is
# how a Prometheus in a cluster finds the pods behind a ServiceMonitor. Prometheus's build tags keep
# only that discovery (remove_all_sd,enable_kubernetes_sd): a smaller, faster build.
set -euo pipefail
version="3.16.0" # the module github.com/prometheus/prometheus tags release 3.x.y as v0.3xx.y
module_version="v0.$((300 + $(cut -d. -f2 <<< "$version"))).$(cut -d. -f3 <<< "$version")"
cache="${CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webhook-operator/cluster}/prometheus-$version"
if [[ -x "$cache/prometheus" ]]; then echo "$cache/prometheus"; exit 0; fi
# One build at a time: a second caller (the node suite's metrics file, while .ci/run's background
# build is under way) waits for the first and then finds the binary.
mkdir -p "$(dirname "$cache")"
exec 9>"$cache.lock"
flock 9
if [[ -x "$cache/prometheus" ]]; then echo "$cache/prometheus"; exit 0; fi
command -v go >/dev/null || { echo "Go is needed to build Prometheus (go 1.24 or newer): install it and retry." >&2; exit 1; }
echo "[prometheus build $(date +%H:%M:%S)] prometheus $version with Kubernetes discovery" >&2
mkdir -p "$cache"
# GOGC: as scripts/cluster/build.sh says, the compiler spends 10-20 % less CPU collecting garbage.
GOGC="${GOGC:-400}" GOFLAGS="${GOFLAGS:--buildvcs=false}" CGO_ENABLED=0 GOBIN="$cache" go install -tags remove_all_sd,enable_kubernetes_sd \
  -ldflags "-s -w -X github.com/prometheus/common/version.Version=$version" \
  "github.com/prometheus/prometheus/cmd/prometheus@$module_version"
echo "$cache/prometheus"
