#!/usr/bin/env bash
# Entrypoint of the stand-in postgres image (stand-in/postgres.Containerfile), written for this project
# to the conventions of the official image's, which the chart relies on:
# - POSTGRES_PASSWORD, POSTGRES_USER (default postgres), POSTGRES_DB (default the user),
#   POSTGRES_INITDB_ARGS, each also as <NAME>_FILE (the value read from that file);
#   POSTGRES_HOST_AUTH_METHOD (default scram-sha-256) for the pg_hba line of remote connections;
# - an empty PGDATA is initialised (initdb), the database created, and /docker-entrypoint-initdb.d/*
#   run once: *.sh (executed if executable, else sourced), *.sql and *.sql.gz through psql;
# - started as root it prepares the directories and continues as postgres (999); started as postgres
#   (the chart's securityContext) it runs as is;
# - `docker-entrypoint.sh -c name=value` means `postgres -c name=value`; any other command runs as given.
set -Eeo pipefail

# NAME from NAME or NAME_FILE (not both), else the default; the _FILE variable is removed.
file_env() {
  local name=$1 file_name="${1}_FILE" value=${2:-}
  if [ -n "${!name:-}" ] && [ -n "${!file_name:-}" ]; then
    echo "error: both $name and $file_name are set; set only one" >&2
    exit 1
  fi
  if [ -n "${!name:-}" ]; then
    value=${!name}
  elif [ -n "${!file_name:-}" ]; then
    value=$(<"${!file_name}")
  fi
  export "$name"="$value"
  unset "$file_name"
}

if [ "${1:0:1}" = - ]; then
  set -- postgres "$@"
fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

initialise() {
  file_env POSTGRES_PASSWORD
  file_env POSTGRES_USER postgres
  file_env POSTGRES_DB "$POSTGRES_USER"
  file_env POSTGRES_INITDB_ARGS
  : "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
  if [ -z "$POSTGRES_PASSWORD" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    echo "error: the database is not initialised and no superuser password is set: set POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE (or POSTGRES_HOST_AUTH_METHOD=trust to allow every connection without one)" >&2
    exit 1
  fi
  # The password reaches initdb through a pipe, never a file or an argument. POSTGRES_INITDB_ARGS holds
  # several arguments, as in the official image.
  # shellcheck disable=SC2086
  if [ -n "$POSTGRES_PASSWORD" ]; then
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") $POSTGRES_INITDB_ARGS
  else
    initdb --username="$POSTGRES_USER" $POSTGRES_INITDB_ARGS
  fi
  printf '\nhost all all all %s\n' "$POSTGRES_HOST_AUTH_METHOD" >>"$PGDATA/pg_hba.conf"
  # This server's compiled-in socket directory is /tmp; the official image's (and psql's) is this one.
  printf "\nunix_socket_directories = '/var/run/postgresql'\n" >>"$PGDATA/postgresql.conf"

  # A server on the socket only, so nobody connects before initialisation is done.
  pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
  export PGPASSWORD=$POSTGRES_PASSWORD PGUSER=$POSTGRES_USER
  local psql=(psql -v ON_ERROR_STOP=1 --no-password --no-psqlrc --host /var/run/postgresql --port 5432)
  if [ "$POSTGRES_DB" != postgres ]; then
    "${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
  fi
  local file
  for file in /docker-entrypoint-initdb.d/*; do
    case $file in
      *.sh)
        echo "running $file"
        if [ -x "$file" ]; then "$file"; else
          # shellcheck disable=SC1090
          . "$file"
        fi
        ;;
      *.sql) echo "running $file" && "${psql[@]}" --dbname "$POSTGRES_DB" -f "$file" ;;
      *.sql.gz) echo "running $file" && gunzip -c "$file" | "${psql[@]}" --dbname "$POSTGRES_DB" ;;
      *) if [ -e "$file" ]; then echo "ignoring $file"; fi ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop
  unset PGPASSWORD PGUSER
  echo "PostgreSQL initialised; starting"
}

if [ "$1" = postgres ]; then
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA" 2>/dev/null || true
  if [ ! -s "$PGDATA/PG_VERSION" ]; then
    initialise
  fi
fi
exec "$@"
