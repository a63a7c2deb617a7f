#!/usr/bin/env bash
# Makes a PostgreSQL 15 server from Debian's packages available on 127.0.0.1 and prints its URL.
# Installs the package when missing, creates and starts the cluster, sets the postgres password.
# Used by .ci/run so the integration suite also runs against a second major version.
set -euo pipefail
log() { echo "postgres15: $*" >&2; }

if [ ! -x /usr/lib/postgresql/15/bin/postgres ]; then
  log "installing Debian package postgresql-15"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql-15 >&2
fi
if ! pg_lsclusters -h 2>/dev/null | awk '$1 == "15" && $2 == "main"' | grep -q .; then
  log "creating cluster 15/main"
  pg_createcluster 15 main >&2
fi
port=$(pg_lsclusters -h | awk '$1 == "15" && $2 == "main" { print $3 }')
if ! pg_lsclusters -h | awk '$1 == "15" && $2 == "main" { print $4 }' | grep -q online; then
  log "starting cluster 15/main on port $port"
  pg_ctlcluster 15 main start >&2
fi
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 -p "$port" && break
  sleep 0.5
done
su postgres -c "psql -q -p $port -c \"ALTER USER postgres PASSWORD 'postgres'\"" >&2
echo "postgres://postgres:postgres@127.0.0.1:${port}/postgres"
