#!/usr/bin/env bash
# `npm run image`: builds webhook-operator:<package.json version> from the repository's Dockerfile with
# whichever engine is installed (engine.sh: docker when its daemon answers, else podman).
#   npm run image [-- --save DIR] [-- --bases auto|official|stand-in]
# --bases (or IMAGE_BASES): official pulls node:24-bookworm-slim, debian:bookworm-slim and the chart's
#   postgres image; stand-in builds all three from Debian's packages (stand-in-bases.sh);
#   auto (the default) tries a pull of the official Node image and falls back to the stand-ins.
# --save DIR: also writes DIR/webhook-operator-<version>.tar and DIR/postgres-<tag>.tar (docker
#   archives) for a node without a registry: `ctr -n k8s.io images import DIR/<file>.tar`.
# npm in the build reaches the registry with the CA file the host's npm uses (npm config get cafile;
# else /etc/ssl/certs/ca-certificates.crt; or CA_FILE), given as a build secret: never in a layer.
# Prints the operator's image and the chart's postgres image (official or stand-in), one a line.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/image/engine.sh

bases=${IMAGE_BASES:-auto} save_dir=""
while [ $# -gt 0 ]; do
  case $1 in
    --save) save_dir=${2:?--save needs a directory} && shift 2 ;;
    --bases) bases=${2:?--bases needs auto, official or stand-in} && shift 2 ;;
    *) echo "unknown option $1; usage: npm run image [-- --save DIR] [-- --bases auto|official|stand-in]" >&2 && exit 2 ;;
  esac
done

version=$(node -p 'require("./package.json").version')
image=webhook-operator:$version
# The chart's bundled database image, which the stand-in must match tag for tag.
chart_postgres=$(node -e '
  const { parse } = require("yaml");
  const { postgres } = parse(require("fs").readFileSync("charts/webhook-operator/values.yaml", "utf8"));
  console.log(`${postgres.image.repository}:${postgres.image.tag}`);')

if [ "$bases" = auto ]; then
  if timeout 60 "$engine_name" "${engine_global[@]}" pull -q docker.io/library/node:24-bookworm-slim >/dev/null 2>&1; then
    bases=official
  else
    echo "image: the official base images cannot be pulled here: using stand-ins built from Debian's packages" >&2
    bases=stand-in
  fi
fi
case $bases in
  official)
    debian_image=docker.io/library/debian:bookworm-slim
    node_image=docker.io/library/node:24-bookworm-slim
    postgres_image=docker.io/library/$chart_postgres
    engine pull -q "$postgres_image" >/dev/null
    ;;
  stand-in)
    { read -r debian_image && read -r node_image && read -r postgres_image; } < <(bash scripts/image/stand-in-bases.sh)
    if [ "${postgres_image##*/}" != "$chart_postgres" ]; then
      echo "image: the stand-in is ${postgres_image##*/} but the chart pins $chart_postgres (charts/webhook-operator/values.yaml, postgres.image.tag): make them agree" >&2
      exit 1
    fi
    ;;
  *) echo "--bases must be auto, official or stand-in, not $bases" >&2 && exit 2 ;;
esac

ca_file=${CA_FILE:-$(npm config get cafile 2>/dev/null || true)}
[ -n "$ca_file" ] && [ "$ca_file" != null ] && [ "$ca_file" != undefined ] || ca_file=/etc/ssl/certs/ca-certificates.crt
secret=()
[ -f "$ca_file" ] && secret=(--secret "id=npm_ca,src=$ca_file")

echo "image: building $image from $node_image and $debian_image with $engine_name" >&2
export DOCKER_BUILDKIT=1 # build secrets need BuildKit
engine build "${secret[@]}" --build-arg "NODE_IMAGE=$node_image" --build-arg "DEBIAN_IMAGE=$debian_image" \
  --tag "$image" . >&2

if [ -n "$save_dir" ]; then
  mkdir -p "$save_dir"
  # Under the name a `docker build -t webhook-operator:<version>` would give it, which is also the name
  # Kubernetes gives the chart's default `webhook-operator:<version>`.
  engine tag "$image" "docker.io/library/$image"
  for name in "docker.io/library/$image" "$postgres_image"; do
    file=$save_dir/$(basename "${name//:/-}").tar
    rm -f "$file"
    engine save --output "$file" "$name" >&2
    echo "image: saved $name to $file" >&2
  done
fi
# The two images the chart's default install runs: the operator's and its bundled database's.
echo "$image"
echo "$postgres_image"
