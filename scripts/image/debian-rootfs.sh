#!/usr/bin/env bash
# A Debian bookworm root filesystem as lean as debian:bookworm-slim (74 MB), from Debian's own packages:
#   bash scripts/image/debian-rootfs.sh OUT.tar
# minbase (Essential and required packages, apt), security and point updates included; /usr merged by
# mmdebstrap's hook instead of the usrmerge package (which would pull in perl); no apt lists or cache,
# and the paths the slim image leaves out: documentation (copyright files stay), man and info pages,
# translations. About a minute. mmdebstrap must run as root (or in its unshare mode).
set -euo pipefail
out=$1
command -v mmdebstrap >/dev/null || {
  echo "mmdebstrap is needed to make the stand-in base images: apt-get install mmdebstrap" >&2
  exit 1
}

slim=()
for dir in doc man info groff lintian linda locale; do
  slim+=(--dpkgopt="path-exclude=/usr/share/$dir/*")
done
slim+=(--dpkgopt='path-include=/usr/share/doc/*/copyright')

mmdebstrap --quiet --variant=minbase --format=tar --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  "${slim[@]}" bookworm "$out" \
  'deb http://deb.debian.org/debian bookworm main' \
  'deb http://deb.debian.org/debian bookworm-updates main' \
  'deb http://deb.debian.org/debian-security bookworm-security main'
