#!/usr/bin/env bash
# Sourced (after scripts/bootstrap.sh): the real Temporal server as a cluster on Postgres, the production shape the
# compose file describes, run here without Docker, from the same description (deploy/temporal/: the server's config,
# the setup steps, the search attributes, the versions). `ensure_temporal_server` builds the server and its SQL schema
# tool, `ensure_temporal_ui` the Web UI server, from Temporal's Go modules (once, cached in $CADENZA_CACHE like the
# CLI). `start_temporal_cluster HOST PORT USER [PASSWORD]` sets up the `temporal` and `temporal_visibility` databases on
# that Postgres (SQL advanced visibility), starts the frontend, history, matching and worker services as four
# processes of one config and the Web UI pointed at the frontend, creates the `default` namespace with Cadenza's
# search attributes, and exports TEMPORAL_ADDRESS and TEMPORAL_UI_URL. With TEMPORAL_CLUSTER_TLS=1 the frontend serves
# TLS with a self-signed CA made at start (in the cluster's folder), and TEMPORAL_TLS_SERVER_CA_CERT_PATH and
# TEMPORAL_TLS_SERVER_NAME are exported for Cadenza's processes. `stop_temporal_cluster` ends them.
set -euo pipefail

TEMPORAL_DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../deploy/temporal" && pwd)"
# shellcheck source=../deploy/temporal/versions.env
source "$TEMPORAL_DEPLOY_DIR/versions.env"

ensure_temporal_server() {
  local dir="$CADENZA_CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"
  if [ ! -x "$dir/temporal-server" ] || [ ! -x "$dir/temporal-sql-tool" ] || [ ! -d "$dir/schema" ]; then
    command -v go >/dev/null || { say "building the Temporal server needs Go >= 1.25"; exit 1; }
    say "building the Temporal server $TEMPORAL_SERVER_VERSION and its SQL tool with go install (minutes, once) into $dir"
    mkdir -p "$dir"
    GOBIN="$dir" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" go install "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" >&2
    GOBIN="$dir" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" go install "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION" >&2
    mv "$dir/server" "$dir/temporal-server"
    mv "$dir/sql" "$dir/temporal-sql-tool"
    # The versioned schema ships in the module's source, which go install just fetched.
    rm -rf "$dir/schema"
    cp -r "$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION/schema/postgresql/v12" "$dir/schema"
    chmod -R u+w "$dir/schema"
  fi
  TEMPORAL_SERVER_DIR="$dir"
}

# The Web UI server (its HTTP API and pages; the module ships a placeholder page, not the built single-page app, which
# the temporalio/ui image adds). Empty TEMPORAL_UI_SERVER when it cannot be built: the cluster runs without it.
ensure_temporal_ui() {
  local dir="$CADENZA_CACHE/temporal-ui-$TEMPORAL_UI_VERSION"
  TEMPORAL_UI_SERVER=""
  if [ ! -x "$dir/temporal-ui-server" ]; then
    say "building the Temporal Web UI server $TEMPORAL_UI_VERSION with go install (minutes, once) into $dir"
    mkdir -p "$dir"
    GOBIN="$dir" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" go install "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION" >&2 ||
      { say "the Temporal Web UI server could not be built: the cluster runs without it"; return 0; }
    mv "$dir/server" "$dir/temporal-ui-server"
  fi
  TEMPORAL_UI_SERVER="$dir/temporal-ui-server"
}

# start_temporal_cluster HOST PORT USER [PASSWORD]: a fresh cluster on that Postgres (its databases dropped first).
start_temporal_cluster() {
  local host="$1" pg_port="$2" user="$3" password="${4:-}"
  ensure_temporal_server
  ensure_temporal_ui
  TEMPORAL_CLUSTER_DIR="$(mktemp -d /tmp/cadenza-temporal.XXXXXX)"
  export DB_HOST="$host" DB_PORT="$pg_port" DB_USER="$user" DB_PASSWORD="$password"
  RESET=1 SQL_TOOL="$TEMPORAL_SERVER_DIR/temporal-sql-tool" SCHEMA_DIR="$TEMPORAL_SERVER_DIR/schema" \
    sh "$TEMPORAL_DEPLOY_DIR/setup.sh" schema >"$TEMPORAL_CLUSTER_DIR/schema.log" 2>&1 ||
    { say "the Temporal schema could not be set up on $host:$pg_port"; tail -n 20 "$TEMPORAL_CLUSTER_DIR/schema.log" >&2; exit 1; }
  local base
  # Ten free ports in a row from `base`: gRPC and membership for each service, the frontend's HTTP port and the Web
  # UI's. Below 32768: the server stores membership ports as a Postgres smallint.
  base="$(node -e '
    const net = require("net");
    const free = (p) => new Promise((ok) => { const s = net.createServer().once("error", () => ok(false)).listen(p, "127.0.0.1", () => s.close(() => ok(true))); });
    (async () => { for (;;) { const b = 20000 + Math.floor(Math.random() * 12000); let all = true;
      for (let p = b; p < b + 10 && all; p++) all = await free(p); if (all) return console.log(b); } })();')"
  unset TEMPORAL_TLS_SERVER_CA_CERT_PATH TEMPORAL_TLS_SERVER_NAME
  if [ "${TEMPORAL_CLUSTER_TLS:-0}" = 1 ]; then
    sh "$TEMPORAL_DEPLOY_DIR/make-certs.sh" "$TEMPORAL_CLUSTER_DIR/tls"
    export TLS_DIR="$TEMPORAL_CLUSTER_DIR/tls" TLS_CA="$TEMPORAL_CLUSTER_DIR/tls/ca.pem" TLS_SERVER_NAME=localhost
    export TEMPORAL_TLS_SERVER_CA_CERT_PATH="$TLS_CA" TEMPORAL_TLS_SERVER_NAME=localhost
  else
    unset TLS_DIR TLS_CA
  fi
  export TEMPORAL_ROOT="$TEMPORAL_CLUSTER_DIR" TEMPORAL_SERVER="$TEMPORAL_SERVER_DIR/temporal-server"
  PORT_BASE="$base" BIND_IP=127.0.0.1 BROADCAST_ADDRESS=127.0.0.1 sh "$TEMPORAL_DEPLOY_DIR/server-config.sh" "$TEMPORAL_CLUSTER_DIR"
  TEMPORAL_CLUSTER_PIDS=()
  local service deadline=$((SECONDS + 120))
  for service in history matching frontend worker; do
    sh "$TEMPORAL_DEPLOY_DIR/start-service.sh" "$service" >"$TEMPORAL_CLUSTER_DIR/$service.log" 2>&1 &
    TEMPORAL_CLUSTER_PIDS+=("$!")
    # History first, alone: the first service writes the cluster's metadata record, and two writing it at once lose.
    if [ "$service" = history ]; then
      until (exec 3<>"/dev/tcp/127.0.0.1/$((base + 3))") 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || { say "the history service did not come up; logs in $TEMPORAL_CLUSTER_DIR"; tail -n 20 "$TEMPORAL_CLUSTER_DIR/history.log" >&2; exit 1; }
        sleep 0.5
      done
    fi
  done
  export TEMPORAL_ADDRESS="127.0.0.1:$base"
  # The namespace and Cadenza's search attributes, before any of its processes starts (the API registers any missing
  # itself too, and answers 503 meanwhile).
  TEMPORAL_CLI="$TEMPORAL_CLI" sh "$TEMPORAL_DEPLOY_DIR/setup.sh" namespace >"$TEMPORAL_CLUSTER_DIR/setup.log" 2>&1 ||
    { say "the namespace could not be set up; logs in $TEMPORAL_CLUSTER_DIR"; tail -n 20 "$TEMPORAL_CLUSTER_DIR"/*.log >&2; exit 1; }
  unset TEMPORAL_UI_URL
  if [ -n "$TEMPORAL_UI_SERVER" ]; then
    TEMPORAL_UI_PORT=$((base + 9)) sh "$TEMPORAL_DEPLOY_DIR/ui-config.sh" "$TEMPORAL_CLUSTER_DIR/ui"
    "$TEMPORAL_UI_SERVER" --root "$TEMPORAL_CLUSTER_DIR/ui" --config config --env development start \
      >"$TEMPORAL_CLUSTER_DIR/ui.log" 2>&1 &
    TEMPORAL_CLUSTER_PIDS+=("$!")
    export TEMPORAL_UI_URL="http://127.0.0.1:$((base + 9))"
  fi
  say "Temporal cluster (4 services on Postgres $host:$pg_port${TLS_DIR:+, TLS}) at $TEMPORAL_ADDRESS, Web UI ${TEMPORAL_UI_URL:-not built}; logs in $TEMPORAL_CLUSTER_DIR"
}

stop_temporal_cluster() {
  local pid
  for pid in "${TEMPORAL_CLUSTER_PIDS[@]:-}"; do [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; done
  for pid in "${TEMPORAL_CLUSTER_PIDS[@]:-}"; do [ -z "$pid" ] || wait "$pid" 2>/dev/null || true; done
  TEMPORAL_CLUSTER_PIDS=()
}
