#!/usr/bin/env bash
# openapi-typescript + openapi-fetch: generate the types, type-check workflow.ts with TypeScript 5
# (strict), run it with Node.
# Arguments: the document, a working directory, the repository's root.
set -euo pipefail
document=$1 out=$2 root=$3
source "$root/scripts/clients/versions.sh"
mkdir -p "$out"
bin="$npm_prefix/node_modules/.bin"
"$bin/openapi-typescript" "$document" --output "$out/api.d.ts" > "$out/generate.log" 2>&1 ||
  { cat "$out/generate.log"; exit 1; }
cp "$root/scripts/clients/typescript-openapi-fetch/workflow.ts" "$out/"
ln -sfn "$npm_prefix/node_modules" "$out/node_modules"
echo '{"type": "module"}' > "$out/package.json"
"$bin/tsc" --strict --noEmit --target es2022 --module nodenext --moduleResolution nodenext \
  --allowImportingTsExtensions --types node --typeRoots "$root/node_modules/@types" --skipLibCheck \
  "$out/workflow.ts"
node "$out/workflow.ts"
