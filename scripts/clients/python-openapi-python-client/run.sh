#!/usr/bin/env bash
# openapi-python-client: generate the package, type-check it (mypy --strict), run workflow.py with it.
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
mkdir -p "$out"
# No post hooks: they would run ruff, which the generated code does not need to work.
printf 'post_hooks: []\n' > "$out/config.yaml"
"$python_venv/bin/openapi-python-client" generate --path "$document" --meta none \
  --config "$out/config.yaml" --output-path "$out/webhook_operator_client" > "$out/generate.log" 2>&1 ||
  { cat "$out/generate.log"; exit 1; }
(cd "$out" && "$python_venv/bin/mypy" --strict --no-incremental webhook_operator_client)
PYTHONPATH="$out" "$python_venv/bin/python" "$root/scripts/clients/python-openapi-python-client/workflow.py"
