#!/usr/bin/env bash
# checkov (PyPI, pinned, in a venv under .cache/) on what users apply: the chart rendered with its
# default values, with ci/production-values.yaml and with aggregatedApi.enabled (and networkPolicy.enabled),
# and manifests/install.yaml. Offline:
# --skip-download (no platform API, no policy downloads). Every check that fails is fixed, or skipped
# below with its reason, also listed in docs/kubernetes.md ("What checkov reports").
# Usage: bash scripts/checkov.sh   (.ci/run calls it). Exit status: checkov's, non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."

version=3.3.30
venv=.cache/checkov-$version
if [ ! -x "$venv/bin/checkov" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "checkov==$version"
fi
helm=$(bash scripts/fetch-k8s-tool.sh helm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Deliberate in every rendering:
skips=(
  # CPU limits: requests are set; a CPU limit throttles delivery bursts (CFS quota) and saves nothing.
  CKV_K8S_11
  # imagePullPolicy Always: the defaults pin tags (digests with image.digest); IfNotPresent also lets
  # nodes without a registry run images imported into their runtime.
  CKV_K8S_15
  # Service account token mounted: the operator is a Kubernetes client (informers, its Lease, Events).
  # The Postgres pod mounts none.
  CKV_K8S_38
  # UID above 10000: the images' own users, 1000 (node) and 999 (postgres, the owner of its data
  # directory); both run as non-root, read-only, without capabilities or privilege escalation.
  CKV_K8S_40
  # Image digests: image.digest and postgres.image.digest pin them; default values cannot know the
  # digest of an image its user builds.
  CKV_K8S_43
)
# Also deliberate where NetworkPolicy is off (the default and install.yaml): it is opt-in
# (networkPolicy.enabled), because a default policy would shut out the callers of /api, whom the chart
# cannot know. ci/production-values.yaml turns it on, and that rendering is checked for it.
policy_off=(CKV2_K8S_6)

"$helm" template webhook-operator charts/webhook-operator --namespace webhook-operator >"$work/default.yaml"
"$helm" template webhook-operator charts/webhook-operator --namespace webhook-operator \
  --values charts/webhook-operator/ci/production-values.yaml >"$work/production.yaml"
"$helm" template webhook-operator charts/webhook-operator --namespace webhook-operator \
  --set aggregatedApi.enabled=true --set networkPolicy.enabled=true >"$work/aggregated-api.yaml"
cp manifests/install.yaml "$work/install.yaml"

checkov() {
  local skip
  skip=$(IFS=,; echo "$*")
  (cd "$work" && "$OLDPWD/$venv/bin/checkov" --skip-download --framework kubernetes --compact --quiet \
    --skip-check "$skip" "${files[@]}")
}
status=0
files=(-f default.yaml -f install.yaml)
echo "checkov $version: the default rendering and manifests/install.yaml"
checkov "${skips[@]}" "${policy_off[@]}" || status=$?
files=(-f production.yaml)
echo "checkov $version: the rendering with ci/production-values.yaml"
checkov "${skips[@]}" || status=$?
files=(-f aggregated-api.yaml)
echo "checkov $version: the rendering with aggregatedApi.enabled (and networkPolicy.enabled)"
checkov "${skips[@]}" || status=$?
exit "$status"
