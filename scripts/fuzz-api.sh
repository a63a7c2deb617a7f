#!/usr/bin/env bash
# The API contract fuzz: schemathesis (pinned, in a venv under .cache/) drives the live service through
# its own OpenAPI document (/api/docs) with every check, a fixed seed and a bounded number of examples.
# The service runs as scripts/live-service.sh starts it: from dist/, an embedded Postgres in a temporary
# data directory, loopback only. Deliveries (test events, retries, recoveries the fuzzer asks for) reach
# one local receiver on its own loopback address and nothing else.
# Usage: bash scripts/fuzz-api.sh   (npm run test:fuzz builds first). Exit status is schemathesis's.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH" # the pinned Node 24 (npm run puts it first too)

version=4.32.5
venv=.cache/schemathesis-$version
if [ ! -x "$venv/bin/st" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "schemathesis==$version" "hypothesis==6.170.15"
fi

source scripts/live-service.sh
data_dir=$(mktemp -d)
# Its own address in 127/8 (all of it is loopback on Linux): nothing else listens there.
receiver_host=127.77.0.1
receiver_port=$(free_port)
node -e 'let n = 0;
  const server = require("http").createServer((req, res) => { n++; req.resume(); req.on("end", () => res.end("ok")); });
  server.listen(Number(process.argv[1]), process.argv[2]);
  process.on("SIGTERM", () => { console.error(`fuzz receiver: ${n} deliveries received`); process.exit(0); });' \
  "$receiver_port" "$receiver_host" &
receiver_pid=$!
start_live_service "$data_dir" "$receiver_host" warn fuzz-admin-key
cleanup() {
  kill "$service_pid" "$receiver_pid" 2>/dev/null
  wait "$service_pid" "$receiver_pid" 2>/dev/null || true
  rm -rf "$data_dir"
}
trap cleanup EXIT

post() {
  node -e 'const [url, key, body] = process.argv.slice(1);
    fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body })
      .then(async (r) => { if (!r.ok) { console.error(url, r.status, await r.text()); process.exit(1); } });' \
    "$base/api$1" "$api_key" "$2"
}
wait_live_service_ready

# Something for the generated requests to find: a project, a webhook of the local receiver, and a
# delivery record.
post /projects '{"name":"Fuzz","slug":"fuzz"}'
post /projects/1/webhooks "{\"url\":\"http://$receiver_host:$receiver_port/hook\",\"events\":[\"deployment.succeeded\"]}"
post /projects/1/webhooks/1/test '{}'

# Excluded: deleting API keys, which could revoke the key the fuzzer itself uses. schemathesis keeps a
# cache (.schemathesis/) in its working directory: the temporary one, so every run starts the same.
# One worker: with two threads, hypothesis parsing lambda sources in both at once trips CPython 3.11's
# AST recursion counter, which is shared between threads ("SystemError: AST constructor recursion depth
# mismatch", python/cpython#106905), and schemathesis reports it as a runtime error of the run.
st="$PWD/$venv/bin/st"
cd "$data_dir"
# Its summary's rulers ("==== No issues found in 35.2s ====") are rewritten as plain lines: CI reads
# lines of that shape as a test runner's closing line (pytest's), and this one counts no tests.
"$st" run "$base/api/docs" \
  --url "$base" \
  --header "Authorization: Bearer $api_key" \
  --checks all \
  --seed 1 \
  --max-examples "${FUZZ_MAX_EXAMPLES:-30}" \
  --workers 1 \
  --exclude-path-regex '/api-keys/\{' \
  --suppress-health-check all \
  --no-color \
  2>&1 | sed -E 's/^=+ (.*[^ =]) =+$/-- \1 --/'
