#!/usr/bin/env bash
# Sourced by scripts/test.sh and scripts/bench.sh: provides a real Postgres server for the tests as TEST_DATABASE_URL. Uses
# DATABASE_URL when set; otherwise starts a throw-away cluster (own data dir, socket dir and port), installing
# Debian's postgresql package first when no server binaries are found, and pgvector when the server lacks it
# (scripts/pgvector.sh). use_test_postgres also stops it on exit.
source "$(dirname "${BASH_SOURCE[0]}")/pgvector.sh"

say() { printf '[postgres] %s\n' "$*" >&2; }

find_pg_bin() {
  if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then dirname "$(command -v pg_ctl)"; return; fi
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

start_test_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then export TEST_DATABASE_URL="$DATABASE_URL"; return; fi
  local bin; bin="$(find_pg_bin)"
  if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then
    say "no PostgreSQL server found: installing Debian's postgresql"
    if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
    else sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2; fi
    bin="$(find_pg_bin)"
  fi
  ensure_pgvector "$bin"
  PG_TEST_DIR="$(mktemp -d /tmp/cadenza-pg.XXXXXX)"
  PG_TEST_PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  local as=()
  # Postgres refuses to run as root: run it as the postgres system user.
  if [ "$(id -u)" = 0 ]; then chown postgres "$PG_TEST_DIR"; as=(runuser -u postgres --); fi
  "${as[@]}" "$bin/initdb" -D "$PG_TEST_DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
  "${as[@]}" "$bin/pg_ctl" -D "$PG_TEST_DIR/data" -l "$PG_TEST_DIR/server.log" -w -o \
    "-p $PG_TEST_PORT -k $PG_TEST_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null
  PG_TEST_STOP=("${as[@]}" "$bin/pg_ctl" -D "$PG_TEST_DIR/data" -m immediate stop)
  export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_TEST_PORT/postgres"
  say "test cluster on port $PG_TEST_PORT ($PG_TEST_DIR)"
}

stop_test_postgres() {
  if [ -n "${PG_TEST_DIR:-}" ]; then
    "${PG_TEST_STOP[@]}" >/dev/null 2>&1 || true
    rm -rf "$PG_TEST_DIR"
  fi
}

# Starts the cluster and stops it when the calling script exits, also when it is interrupted or terminated.
use_test_postgres() {
  start_test_postgres
  trap stop_test_postgres EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
