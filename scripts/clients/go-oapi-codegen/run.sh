#!/usr/bin/env bash
# oapi-codegen (types and client): generate package api, build main.go with it (modules from the Go
# module proxy, cached in Go's module cache), run it.
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
mkdir -p "$out/api"
"$go_bin/oapi-codegen" -generate types,client -package api -o "$out/api/api.gen.go" "$document" \
  > "$out/generate.log" 2>&1 || { cat "$out/generate.log"; exit 1; }
cp "$root/scripts/clients/go-oapi-codegen/main.go" "$out/"
cd "$out"
cat > go.mod <<MOD
module workflow

go 1.24

require github.com/oapi-codegen/runtime v$oapi_codegen_runtime_version
MOD
go mod tidy > tidy.log 2>&1 || { cat tidy.log; exit 1; }
go build -o workflow .
./workflow
