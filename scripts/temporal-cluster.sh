#!/usr/bin/env bash
# Sourced (after scripts/bootstrap.sh): the real Temporal server as a cluster on Postgres, the production shape the
# compose file describes, run here without Docker. `ensure_temporal_server` builds the server and its SQL schema tool
# from Temporal's Go module (once, cached in $CADENZA_CACHE like the CLI); `start_temporal_cluster HOST PORT USER`
# sets up the `temporal` and `temporal_visibility` databases on that Postgres with the schema tool (SQL advanced
# visibility), starts the frontend, history, matching and worker services as four processes of one config, creates
# the `default` namespace with Cadenza's search attributes (as the compose file's one-shot service does) and exports
# TEMPORAL_ADDRESS; `stop_temporal_cluster` ends them.
set -euo pipefail

TEMPORAL_SERVER_VERSION="v1.29.1"

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

# start_temporal_cluster HOST PORT USER [PASSWORD]: a fresh cluster on that Postgres (its databases dropped first).
start_temporal_cluster() {
  local host="$1" pg_port="$2" user="$3" password="${4:-}"
  ensure_temporal_server
  local sql=("$TEMPORAL_SERVER_DIR/temporal-sql-tool" --plugin postgres12 --ep "$host" -p "$pg_port" -u "$user")
  [ -z "$password" ] || sql+=(--pw "$password")
  TEMPORAL_CLUSTER_DIR="$(mktemp -d /tmp/cadenza-temporal.XXXXXX)"
  local db schema log="$TEMPORAL_CLUSTER_DIR/schema.log"
  for db in temporal temporal_visibility; do
    schema="$TEMPORAL_SERVER_DIR/schema/$([ "$db" = temporal ] && echo temporal || echo visibility)/versioned"
    "${sql[@]}" --db "$db" drop-database --force >>"$log" 2>&1 || true
    { "${sql[@]}" --db "$db" create-database && "${sql[@]}" --db "$db" setup-schema -v 0.0 &&
      "${sql[@]}" --db "$db" update-schema -d "$schema"; } >>"$log" 2>&1 ||
      { say "the Temporal schema could not be set up on $host:$pg_port"; tail -n 20 "$log" >&2; exit 1; }
  done
  local base
  # Nine free ports in a row from `base`: gRPC and membership for each service, and the frontend's HTTP port. Below
  # 32768: the server stores membership ports as a Postgres smallint.
  base="$(node -e '
    const net = require("net");
    const free = (p) => new Promise((ok) => { const s = net.createServer().once("error", () => ok(false)).listen(p, "127.0.0.1", () => s.close(() => ok(true))); });
    (async () => { for (;;) { const b = 20000 + Math.floor(Math.random() * 12000); let all = true;
      for (let p = b; p < b + 9 && all; p++) all = await free(p); if (all) return console.log(b); } })();')"
  write_temporal_config "$TEMPORAL_CLUSTER_DIR/config/development.yaml" "$host" "$pg_port" "$user" "$password" "$base"
  mkdir -p "$TEMPORAL_CLUSTER_DIR/config/dynamicconfig"
  cat >"$TEMPORAL_CLUSTER_DIR/config/dynamicconfig/development.yaml" <<'YAML'
frontend.enableUpdateWorkflowExecution:
  - value: true
frontend.workerVersioningWorkflowAPIs:
  - value: true
system.enableDeploymentVersions:
  - value: true
YAML
  TEMPORAL_CLUSTER_PIDS=()
  local service deadline=$((SECONDS + 120))
  for service in history matching frontend worker; do
    "$TEMPORAL_SERVER_DIR/temporal-server" --root "$TEMPORAL_CLUSTER_DIR" --config config --env development --allow-no-auth \
      start --service "$service" >"$TEMPORAL_CLUSTER_DIR/$service.log" 2>&1 &
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
  until "$TEMPORAL_CLI" operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { say "the Temporal cluster did not come up; logs in $TEMPORAL_CLUSTER_DIR"; tail -n 20 "$TEMPORAL_CLUSTER_DIR"/*.log >&2; exit 1; }
    sleep 1
  done
  until "$TEMPORAL_CLI" operator namespace describe --address "$TEMPORAL_ADDRESS" --namespace default >/dev/null 2>&1 ||
    "$TEMPORAL_CLI" operator namespace create --address "$TEMPORAL_ADDRESS" --namespace default --retention 72h >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { say "could not create the default namespace; logs in $TEMPORAL_CLUSTER_DIR"; exit 1; }
    sleep 1
  done
  # Cadenza's search attributes, before any of its processes starts: each service caches the namespace's mapping for up
  # to a minute, so attributes added while Cadenza runs reach every frontend only then (the API registers any missing
  # itself too, and answers 503 meanwhile).
  local name
  for name in $(node -e 'import("./contracts/mission.ts").then((m) => console.log(m.SEARCH_ATTRIBUTE_NAMES.join(" ")))'); do
    # A namespace just created reaches every service's cache within seconds: until then it is "not found".
    until "$TEMPORAL_CLI" operator search-attribute create --address "$TEMPORAL_ADDRESS" --namespace default --name "$name" --type Keyword >/dev/null 2>&1; do
      [ $SECONDS -lt $deadline ] || { say "could not register the search attribute $name; logs in $TEMPORAL_CLUSTER_DIR"; exit 1; }
      sleep 1
    done
  done
  say "Temporal cluster (4 services on Postgres $host:$pg_port) at $TEMPORAL_ADDRESS; logs in $TEMPORAL_CLUSTER_DIR"
}

stop_temporal_cluster() {
  local pid
  for pid in "${TEMPORAL_CLUSTER_PIDS[@]:-}"; do [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; done
  for pid in "${TEMPORAL_CLUSTER_PIDS[@]:-}"; do [ -z "$pid" ] || wait "$pid" 2>/dev/null || true; done
  TEMPORAL_CLUSTER_PIDS=()
}

# write_temporal_config FILE HOST PG_PORT USER PASSWORD BASE_PORT: the server's one config, every service in it.
write_temporal_config() {
  local file="$1" host="$2" pg_port="$3" user="$4" password="$5" base="$6"
  mkdir -p "$(dirname "$file")"
  local store
  store() {
    cat <<YAML
      sql:
        pluginName: "postgres12"
        databaseName: "$1"
        connectAddr: "$host:$pg_port"
        connectProtocol: "tcp"
        user: "$user"
        password: "$password"
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: "1h"
YAML
  }
  cat >"$file" <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
$(store temporal 20)
    postgres-visibility:
$(store temporal_visibility 5)
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "127.0.0.1"
services:
  frontend:
    rpc: { grpcPort: $base, membershipPort: $((base + 1)), bindOnLocalHost: true, httpPort: $((base + 2)) }
  history:
    rpc: { grpcPort: $((base + 3)), membershipPort: $((base + 4)), bindOnLocalHost: true }
  matching:
    rpc: { grpcPort: $((base + 5)), membershipPort: $((base + 6)), bindOnLocalHost: true }
  worker:
    rpc: { grpcPort: $((base + 7)), membershipPort: $((base + 8)), bindOnLocalHost: true }
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: "active"
  currentClusterName: "active"
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: "frontend"
      rpcAddress: "127.0.0.1:$base"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "$(dirname "$file")/dynamicconfig/development.yaml"
  pollInterval: "10s"
YAML
}
