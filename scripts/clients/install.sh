#!/usr/bin/env bash
# Installs the six client generators of the client suite, each pinned and cached by version under
# ~/.cache/webhook-operator/clients/ (CLIENTS_CACHE; nothing is fetched again once there), and prints nothing but errors:
#   openapi-python-client, mypy and openapi-generator's Python client's runtime (PyPI, in a venv),
#   openapi-typescript + openapi-fetch + TypeScript 5 (npm), oapi-codegen (the Go module proxy),
#   openapi-generator-cli (Maven Central, through mvn; it makes the Python, Go and Java clients).
# Usage: bash scripts/clients/install.sh   (scripts/clients/run.sh calls it).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/clients/versions.sh
mkdir -p "$clients_cache"

if [ ! -x "$python_venv/bin/openapi-python-client" ] || [ ! -x "$python_venv/bin/mypy" ]; then
  rm -rf "$python_venv"
  python3 -m venv "$python_venv"
  # The generated clients' runtimes: httpx + attrs (openapi-python-client), pydantic + urllib3
  # (openapi-generator's Python client); python-dateutil for both. mypy type-checks the first.
  "$python_venv/bin/pip" install --quiet "openapi-python-client==$openapi_python_client_version" \
    "mypy==$mypy_version" \
    "httpx==0.28.1" "attrs==25.4.0" "python-dateutil==2.9.0.post0" "pydantic==2.12.5" "urllib3==2.6.2" \
    "typing-extensions==4.15.0"
fi

if [ ! -x "$npm_prefix/node_modules/.bin/openapi-typescript" ]; then
  rm -rf "$npm_prefix"
  mkdir -p "$npm_prefix"
  echo '{"private": true, "type": "module"}' > "$npm_prefix/package.json"
  npm install --prefix "$npm_prefix" --no-audit --no-fund --silent \
    "openapi-typescript@$openapi_typescript_version" "openapi-fetch@$openapi_fetch_version" \
    "typescript@$typescript_version"
fi

if [ ! -x "$go_bin/oapi-codegen" ]; then
  # GOGC: the compiler spends 10-20 % less CPU collecting garbage (scripts/cluster/build.sh).
  GOGC="${GOGC:-400}" GOBIN="$go_bin" go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v$oapi_codegen_version" \
    > "$clients_cache/oapi-codegen-install.log" 2>&1 || { cat "$clients_cache/oapi-codegen-install.log"; exit 1; }
fi

if [ ! -f "$openapi_generator_jar" ]; then
  mvn -q -B dependency:copy -Dartifact="org.openapitools:openapi-generator-cli:$openapi_generator_version" \
    -DoutputDirectory="$(dirname "$openapi_generator_jar")" -Dmdep.stripVersion=false >/dev/null
fi
