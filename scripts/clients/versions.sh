# The client suite's generators, pinned; each is cached under its version (scripts/clients/install.sh).
openapi_python_client_version=0.29.1
mypy_version=1.19.1
openapi_typescript_version=7.13.0
openapi_fetch_version=0.17.0
typescript_version=5.9.3
oapi_codegen_version=2.8.2
openapi_generator_version=7.25.0

# Outside the clone, like the cluster's binaries: a fresh clone on the same machine installs nothing.
clients_cache="${CLIENTS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webhook-operator/clients}"
python_venv=$clients_cache/python-openapi-python-client-$openapi_python_client_version-mypy-$mypy_version
npm_prefix=$clients_cache/npm-openapi-typescript-$openapi_typescript_version-fetch-$openapi_fetch_version
go_bin=$clients_cache/oapi-codegen-$oapi_codegen_version
openapi_generator_jar=$clients_cache/openapi-generator-cli-$openapi_generator_version/openapi-generator-cli-$openapi_generator_version.jar
# The module oapi-codegen's clients import (fetched by go mod tidy, cached in Go's module cache).
oapi_codegen_runtime_version=1.9.0
