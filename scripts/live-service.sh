# Sourced by the scripts that drive the live service from outside, as a tool would (scripts/fuzz-api.sh,
# scripts/clients/run.sh): the service from dist/ with an embedded Postgres in a data directory of the
# caller's, on loopback only, allowed to deliver to one receiver host and nowhere else
# (DELIVERY_ALLOWED_DESTINATIONS_ONLY), so a URL a tool invents is refused (403) instead of sent.
# HTTP goes through node (always here), not curl (not always installed).

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# start_live_service DATA_DIR RECEIVER_HOST LOG_LEVEL KEY_PREFIX
# Starts the service in the background and sets `service_pid`, `base` (http://127.0.0.1:<port>) and
# `api_key` (an admin key starting with KEY_PREFIX). The caller stops it (kill "$service_pid").
start_live_service() {
  local data_dir=$1 receiver_host=$2 log_level=$3 key_prefix=$4 port
  port=$(free_port)
  base="http://127.0.0.1:$port"
  api_key="$key_prefix-$(node -e 'console.log(require("crypto").randomBytes(12).toString("hex"))')"
  DATA_DIR="$data_dir" PORT="$port" HOST=127.0.0.1 EMBEDDED_POSTGRES_PORT="$(free_port)" API_KEY="$api_key" \
    DELIVERY_ALLOW_PRIVATE_NETWORKS=false DELIVERY_ALLOWED_DESTINATIONS="$receiver_host" \
    DELIVERY_ALLOWED_DESTINATIONS_ONLY=true KUBERNETES=false LOG_LEVEL="$log_level" node dist/server/main.js serve &
  service_pid=$!
}

live_service_ready() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$base/readyz"; }

# Waits up to a minute for /readyz to answer 200; says so and fails otherwise.
wait_live_service_ready() {
  for _ in $(seq 1 120); do
    live_service_ready && return 0
    sleep 0.5
  done
  live_service_ready || { echo "the service did not become ready at $base" >&2; return 1; }
}
