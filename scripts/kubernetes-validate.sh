#!/usr/bin/env bash
# Runs kubernetes-validate (PyPI) with the given arguments, installing it first when needed.
#
# kubernetes-validate checks manifests against the OpenAPI schemas of real Kubernetes versions, which
# it ships inside the package, so the chart tests can check every rendered object offline. It goes into
# .cache/tools with `pip install --target` (a plain directory, so it can be built aside and renamed
# into place: test files starting at once never see half an install). Idempotent.
set -euo pipefail

version="1.37.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="$root/.cache/tools/kubernetes-validate-$version"

if [[ ! -f "$target/kubernetes_validate/__main__.py" ]]; then
  command -v python3 >/dev/null || { echo "python3 is needed to install kubernetes-validate" >&2; exit 1; }
  mkdir -p "$root/.cache/tools"
  work="$(mktemp -d "$root/.cache/tools/.kubernetes-validate.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "installing kubernetes-validate $version from PyPI…" >&2
  python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
    --target "$work/lib" "kubernetes-validate==$version" >&2
  mv -T "$work/lib" "$target" 2>/dev/null || [[ -f "$target/kubernetes_validate/__main__.py" ]]
fi

# -I: nothing from the working directory or the environment shadows the installed modules.
exec python3 -I -c '
import sys
sys.path.insert(0, sys.argv.pop(1))
sys.argv[0] = "kubernetes-validate"
from kubernetes_validate.__main__ import main
sys.exit(main())
' "$target" "$@"
