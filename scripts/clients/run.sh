#!/usr/bin/env bash
# The client suite: six clients generated from the live service's /api/docs, each driven through the
# same workflow by a small program of its language (scripts/clients/<client>/): projects listed and
# created; a webhook created, listed (bare and paged), read, disabled and enabled; test events (one
# with no body); its deliveries paged through with the Link header's cursor; one read and replayed; a
# 400 and a 404. A program stops at the first answer that differs from what it expects.
# The service runs as scripts/live-service.sh starts it: from dist/, an embedded Postgres in a temporary
# data directory, loopback only; deliveries reach one local receiver on its own loopback address and
# nothing else.
# Usage: bash scripts/clients/run.sh [client …]   (npm run test:clients builds first). Clients:
#   python-openapi-python-client typescript-openapi-fetch go-oapi-codegen
#   python-openapi-generator go-openapi-generator java-openapi-generator
# Exits non-zero when any client fails; its generator's, compiler's or program's output is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="$PWD/node_modules/.bin:$PATH" # the pinned Node 24
root=$PWD
all=(python-openapi-python-client typescript-openapi-fetch go-oapi-codegen python-openapi-generator
  go-openapi-generator java-openapi-generator)
clients=("${@:-${all[@]}}")
[ $# -gt 0 ] || clients=("${all[@]}")

started=$SECONDS
bash scripts/clients/install.sh
echo "generators installed or cached: $((SECONDS - started)) s"

source scripts/live-service.sh
work=$(mktemp -d)
chmod o+x "$work" # the embedded Postgres runs as its own user, inside DATA_DIR
receiver_host=127.78.0.1
receiver_port=$(free_port)
# Answers 500 to deployment.failed (a failed delivery to replay), 200 to anything else.
node -e 'require("http").createServer((req, res) => {
    req.resume();
    req.on("end", () => { res.statusCode = req.headers["x-webhook-event"] === "deployment.failed" ? 500 : 200; res.end("ok"); });
  }).listen(Number(process.argv[1]), process.argv[2]);' "$receiver_port" "$receiver_host" &
receiver_pid=$!
start_live_service "$work/data" "$receiver_host" error clients-admin-key
cleanup() {
  kill "$service_pid" "$receiver_pid" 2>/dev/null
  wait "$service_pid" "$receiver_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

wait_live_service_ready
node -e 'fetch(process.argv[1]).then(async (r) => process.stdout.write(await r.text()))' "$base/api/docs" > "$work/openapi.json"

# What every workflow program reads.
export WO_BASE_URL=$base WO_API_KEY=$api_key WO_RECEIVER_URL="http://$receiver_host:$receiver_port/hook"
failed=()
for client in "${clients[@]}"; do
  echo "== $client"
  began=$SECONDS
  # Each client gets its own project (its slug is the client's name), so the programs do not meet.
  if WO_CLIENT=$client bash "scripts/clients/$client/run.sh" "$work/openapi.json" "$work/$client" "$root"; then
    echo "-- $client: passed ($((SECONDS - began)) s)"
  else
    echo "-- $client: FAILED ($((SECONDS - began)) s)"
    failed+=("$client")
  fi
done
echo "client suite: $((${#clients[@]} - ${#failed[@]}))/${#clients[@]} clients passed in $((SECONDS - started)) s"
[ ${#failed[@]} -eq 0 ] || { echo "failed: ${failed[*]}" >&2; exit 1; }
