#!/usr/bin/env bash
# openapi-generator, python: generate package wo_client, run workflow.py with it (its runtime,
# pydantic and urllib3, is in the suite's venv).
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
java -jar "$openapi_generator_jar" generate -i "$document" -g python -o "$out" \
  --package-name wo_client > "$out.generate.log" 2>&1 || { cat "$out.generate.log"; exit 1; }
PYTHONPATH="$out" "$python_venv/bin/python" "$root/scripts/clients/python-openapi-generator/workflow.py"
