#!/usr/bin/env bash
# Usage: scripts/cluster/node-images.sh BIN
# Prints the paths of the image archives every real node needs, building each once (cached by the
# hash of what goes in): the pod sandbox (registry.k8s.io/pause:3.10, from pause.c) and CoreDNS
# (registry.k8s.io/coredns/coredns:<version>, the binary scripts/cluster/build.sh built into BIN).
# No image can be pulled here, and neither needs a base image: each is one static binary.
set -euo pipefail
bin="${1:?usage: $0 BIN}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webhook-operator/cluster}/images"
mkdir -p "$cache"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

pause="$cache/pause-3.10-$(sha256sum "$here/pause.c" "$here/oci-archive.py" | sha256sum | cut -c1-12).tar"
if [[ ! -f "$pause" ]]; then
  command -v gcc >/dev/null || { echo "gcc is needed to build the pause image (apt-get install gcc libc6-dev)" >&2; exit 1; }
  gcc -Os -static -o "$work/pause" "$here/pause.c"
  strip "$work/pause"
  python3 "$here/oci-archive.py" registry.k8s.io/pause:3.10 "$work/image.tar" '["/pause"]' "$work/pause:/pause"
  mv "$work/image.tar" "$pause"
fi

coredns_version="$("$bin/coredns" -version | sed -n 's#^CoreDNS-\([0-9.]*\)$#\1#p')"
coredns="$cache/coredns-$coredns_version-$(sha256sum "$bin/coredns" "$here/oci-archive.py" | sha256sum | cut -c1-12).tar"
if [[ ! -f "$coredns" ]]; then
  python3 "$here/oci-archive.py" "registry.k8s.io/coredns/coredns:v$coredns_version" "$work/image.tar" \
    '["/coredns"]' "$bin/coredns:/coredns"
  mv "$work/image.tar" "$coredns"
fi
echo "$pause"
echo "$coredns"
