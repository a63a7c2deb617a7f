#!/usr/bin/env bash
# Usage: bash scripts/ci-fresh-machine.sh [REV]   (as root; REV defaults to HEAD)
# Runs .ci/run as a new machine of this project's kind would run it, so that a missing install step
# shows here rather than on the next new machine:
#   - a fresh clone of REV in a temporary folder (nothing built, no .cache/ of the repository's);
#   - the Debian packages that .ci/run and the suites install removed first (a new machine has none
#     of them), and a /usr/sbin/policy-rc.d that refuses service starts, as a new machine ships;
#   - every cache outside the clone (npm, Go's build and module caches, pip, Maven's repository, the
#     control plane's binaries, the previous release, podman's images) in a fresh directory of its
#     own. (Before 2026-12-07 Maven's ~/.m2 and the previous release under ~/.cache were the
#     machine's: runs after the first found them filled.)
# Prints how long the run took and its exit code, and exits with it. Afterwards the machine is put
# back: whatever was removed and not installed again by the run is reinstalled, policy-rc.d is as it
# was, and the fresh directory is deleted (KEEP=1 keeps it, for a look at the run's logs).
# Takes 26.5–31 minutes on 2 cores (26:33 to 30:40 in seven runs on 2026-12-07 and 08): the control plane, kubelet and
# Prometheus compile from nothing, beside npm test.
set -euo pipefail
[[ $(id -u) -eq 0 ]] || { echo "run it as root: it removes and reinstalls Debian packages" >&2; exit 2; }
rev=${1:-HEAD}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
commit=$(git -C "$repo" rev-parse --verify "$rev^{commit}")

# What .ci/run and the suites install when it is missing, none of which a new machine has.
packages=(prometheus chromium podman mmdebstrap runc containerd conntrack nfacct nftables
  containernetworking-plugins iptables)
removed=()
for package in "${packages[@]}"; do
  dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q "ok installed" && removed+=("$package")
done
# Nothing installed by hand beyond that list may go with them (a package of the machine's own that
# depends on one of them would not come back); what apt pulled in for them may. Asked of apt first,
# without changing anything.
if [[ ${#removed[@]} -gt 0 ]]; then
  mapfile -t taken < <(apt-get remove -s "${removed[@]}" 2>/dev/null | awk '/^Remv /{print $2}')
  manual=" $(apt-mark showmanual | tr '\n' ' ') "
  others=()
  for package in "${taken[@]}"; do
    [[ " ${removed[*]} " == *" $package "* || "$manual" != *" $package "* ]] || others+=("$package")
  done
  if [[ ${#others[@]} -gt 0 ]]; then
    echo "ci-fresh-machine: removing ${removed[*]} would also remove ${others[*]}; stopping, nothing changed" >&2
    exit 1
  fi
fi

fresh=$(mktemp -d /var/tmp/ci-fresh-machine.XXXXXX)
# The embedded Postgres runs as the postgres user, who must be able to enter the clone.
chmod 755 "$fresh"
policy=/usr/sbin/policy-rc.d
policy_saved=""
[[ -e "$policy" ]] && policy_saved="$fresh/policy-rc.d.saved" && cp -p "$policy" "$policy_saved"

put_back() {
  local missing=()
  for package in "${removed[@]}"; do
    dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q "ok installed" || missing+=("$package")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    echo "ci-fresh-machine: reinstalling what the run did not: ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null ||
      echo "ci-fresh-machine: reinstalling failed; install them yourself: ${missing[*]}" >&2
  fi
  if [[ -n "$policy_saved" ]]; then cp -p "$policy_saved" "$policy"; else rm -f "$policy"; fi
  # Go's module cache is read-only: made writable before it is deleted.
  if [[ "${KEEP:-}" == 1 ]]; then echo "ci-fresh-machine: kept $fresh" >&2
  else chmod -R u+w "$fresh" && rm -rf "$fresh"; fi
}
trap put_back EXIT

if [[ ${#removed[@]} -gt 0 ]]; then
  echo "ci-fresh-machine: removing ${removed[*]}" >&2
  # The removal must not stop or start services either; the policy below is the one a new machine has.
  printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"
  DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq -o DPkg::Lock::Timeout=600 "${removed[@]}" >/dev/null
fi
printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy"

git clone -q "$repo" "$fresh/clone"
git -C "$fresh/clone" checkout -q "$commit"
mkdir -p "$fresh/home/.cache" "$fresh/containers"
cat > "$fresh/containers/storage.conf" <<CONF
[storage]
driver = "overlay"
graphroot = "$fresh/containers/storage"
runroot = "$fresh/containers/run"
CONF

echo "ci-fresh-machine: .ci/run on a fresh clone of ${commit:0:7}, caches under $fresh (log: $fresh/ci.log)" >&2
started=$(date +%s)
set +e
(
  cd "$fresh/clone"
  export CI=true XDG_CACHE_HOME="$fresh/home/.cache" GOCACHE="$fresh/home/.cache/go-build" \
    GOMODCACHE="$fresh/home/go/pkg/mod" GOPATH="$fresh/home/go" npm_config_cache="$fresh/home/.npm" \
    PIP_CACHE_DIR="$fresh/home/.cache/pip" CONTAINERS_STORAGE_CONF="$fresh/containers/storage.conf" \
    MAVEN_OPTS="-Dmaven.repo.local=$fresh/home/.m2/repository"
  bash .ci/run < /dev/null
) > "$fresh/ci.log" 2>&1
status=$?
set -e
took=$(($(date +%s) - started))
tail -40 "$fresh/ci.log"
echo "ci-fresh-machine: .ci/run exited $status after $((took / 60)) min $((took % 60)) s"
exit "$status"
