#!/usr/bin/env bash
# openapi-generator, go: generate module github.com/example/wo, build main.go with it (a replace
# directive points there), run it.
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
java -jar "$openapi_generator_jar" generate -i "$document" -g go -o "$out/wo" --package-name wo \
  --git-user-id example --git-repo-id wo > "$out.generate.log" 2>&1 || { cat "$out.generate.log"; exit 1; }
cp "$root/scripts/clients/go-openapi-generator/main.go" "$out/"
cd "$out"
cat > go.mod <<MOD
module workflow

go 1.24

require github.com/example/wo v0.0.0

replace github.com/example/wo => ./wo
MOD
go mod tidy > tidy.log 2>&1 || { cat tidy.log; exit 1; }
go build -o workflow .
./workflow
