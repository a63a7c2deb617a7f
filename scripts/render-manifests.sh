#!/usr/bin/env bash
# Renders manifests/install.yaml (plain manifests for `kubectl apply`) from charts/webhook-operator,
# after copying the generated CRD from crds/ into the chart's crds/. test/integration/chart.test.ts fails when
# either is out of date: run this (npm run render:manifests) after changing the chart or the CRD.
#   --stdout   print the rendering instead of writing any file (the test compares it with the file)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
helm="$(bash scripts/fetch-k8s-tool.sh helm)"

render() {
  cat <<'HEADER'
# webhook-operator: plain manifests rendered from charts/webhook-operator by scripts/render-manifests.sh
# (npm run render:manifests), with charts/webhook-operator/ci/install-manifest-values.yaml. Do not edit.
#
# The admin API key, the bundled Postgres password, the secret encryption key and the metrics token are not in this file (a committed file would
# give everyone the same ones). Create them, then apply:
#   kubectl create namespace webhook-operator
#   kubectl -n webhook-operator create secret generic webhook-operator-api-key --from-literal=api-key="wo_$(openssl rand -hex 24)"
#   password=$(openssl rand -hex 24)
#   kubectl -n webhook-operator create secret generic webhook-operator-postgres --from-literal=password="$password" \
#     --from-literal=database-url="postgres://webhook_operator:$password@webhook-operator-postgres:5432/webhook_operator"
#   kubectl -n webhook-operator create secret generic webhook-operator-secret-keys --from-literal=keys="$(openssl rand -base64 32)"
#   kubectl -n webhook-operator create secret generic webhook-operator-metrics-token --from-literal=token="$(openssl rand -hex 24)"
#   kubectl apply --server-side -f manifests/install.yaml
HEADER
  # For the oldest Kubernetes the chart supports (Chart.yaml kubeVersion), so that the one file applies
  # everywhere the chart does: the PodDisruptionBudget's unhealthyPodEvictionPolicy (1.27+) stays out.
  "$helm" template webhook-operator charts/webhook-operator \
    --namespace webhook-operator \
    --kube-version 1.25.0 \
    --include-crds \
    --values charts/webhook-operator/ci/install-manifest-values.yaml
}

if [[ "${1:-}" == "--stdout" ]]; then
  render
  exit 0
fi

cp crds/*.yaml charts/webhook-operator/crds/
render > manifests/install.yaml.tmp
mv manifests/install.yaml.tmp manifests/install.yaml
echo "wrote charts/webhook-operator/crds/ and manifests/install.yaml" >&2
