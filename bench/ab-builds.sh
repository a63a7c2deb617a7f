#!/usr/bin/env bash
# npm run bench:ab: this checkout's delivery engine against earlier builds, alternated in one run, so
# that the machine's mood (other load, a slow spell of the disk) falls on every build alike.
#
# Each commit of BENCH_AB_COMMITS (default: efcea4c, before order per rollout and pace; a0f0491, the
# 0.2.0 release) is checked out once, detached, into BENCH_AB_DIR/<commit> (default .cache/ab), with
# its own dependencies and build; this checkout runs as "this" unless BENCH_AB_THIS=no (to bench a
# commit of it while editing on, name the commit instead). Then BENCH_AB_PAIRS times (default 2) every build runs its own
# bench/delivery.ts with BENCH_ROUNDS=1 and BENCH_ONLY (default: fan-out 1 and 100, 200 and 500
# events/s, memory), in an order that reverses each time. Each run's output is kept in
# BENCH_AB_DIR/runs-<time>/<build>-<n>.log and the figures are tabled by bench/ab-table.ts.
# Run it alone: under `flock /tmp/wo-heavy.lock` where machines are shared.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${BENCH_AB_DIR:-$root/.cache/ab}"
commits="${BENCH_AB_COMMITS:-efcea4c a0f0491}"
pairs="${BENCH_AB_PAIRS:-2}"
only="${BENCH_ONLY:-engine1,engine100,enginePaced200,enginePaced,memory}"
runs="$dir/runs-$(date -u +%Y%m%dT%H%M%S)"
mkdir -p "$runs"

builds=()
[ "${BENCH_AB_THIS:-yes}" = no ] || builds+=("this:$root")
for commit in $commits; do
  tree="$dir/$commit"
  if [ ! -d "$tree" ]; then
    git -C "$root" worktree add --detach "$tree" "$commit" >/dev/null
  fi
  [ -d "$tree/node_modules" ] || (cd "$tree" && npm ci --no-audit --no-fund >/dev/null)
  builds+=("$commit:$tree")
done
for build in "${builds[@]}"; do
  (cd "${build#*:}" && npm run build >/dev/null)
done

for pair in $(seq 1 "$pairs"); do
  order=("${builds[@]}")
  if [ $((pair % 2)) -eq 0 ]; then
    order=()
    for ((i = ${#builds[@]} - 1; i >= 0; i--)); do order+=("${builds[$i]}"); done
  fi
  for build in "${order[@]}"; do
    name="${build%%:*}"
    echo "pair $pair: $name ($(cut -d' ' -f1-3 /proc/loadavg))"
    (cd "${build#*:}" && BENCH_ROUNDS=1 BENCH_ONLY="$only" npx tsx bench/delivery.ts >"$runs/$name-$pair.log" 2>&1)
  done
done
npx tsx "$root/bench/ab-table.ts" "$runs" $(for build in "${builds[@]}"; do echo "${build%%:*}"; done)
