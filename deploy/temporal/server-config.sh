#!/bin/sh
# server-config.sh ROOT: writes the Temporal server's one config (every service in it) to ROOT/config, from the
# environment. Run by scripts/temporal-cluster.sh and by docker-compose.yml's Temporal services (start-service.sh):
# the one description of the cluster, so the two cannot drift.
#   DB_HOST DB_PORT DB_USER DB_PASSWORD  the Postgres of `temporal` and `temporal_visibility` (setup.sh schema)
#   PORT_BASE       the frontend's gRPC port; its membership and HTTP ports and the other services' follow (default 7233)
#   BIND_IP         where the services listen (default 0.0.0.0)
#   BROADCAST_ADDRESS  how the other services reach this one (default this host's first address)
#   FRONTEND_ADDRESS   the frontend's host:port for the cluster's metadata (default BROADCAST_ADDRESS:PORT_BASE)
#   TLS_DIR         when set, the frontend serves TLS with TLS_DIR/server.pem and server-key.pem (make-certs.sh), and the
#                   server's own clients of it (the system worker) trust TLS_DIR/ca.pem for TLS_SERVER_NAME
#   DYNAMIC_CONFIG_EXTRA  YAML appended to dynamicconfig.yaml (the test tier's faster drainage reports)
set -eu
root="$1"
here="$(cd "$(dirname "$0")" && pwd)"
base="${PORT_BASE:-7233}"
bind="${BIND_IP:-0.0.0.0}"
broadcast="${BROADCAST_ADDRESS:-$(hostname -i | awk '{print $1}')}"
frontend="${FRONTEND_ADDRESS:-$broadcast:$base}"
mkdir -p "$root/config/dynamicconfig"
cp "$here/dynamicconfig.yaml" "$root/config/dynamicconfig/development.yaml"
[ -z "${DYNAMIC_CONFIG_EXTRA:-}" ] || printf '%s\n' "$DYNAMIC_CONFIG_EXTRA" >>"$root/config/dynamicconfig/development.yaml"

store() {
  cat <<YAML
      sql:
        pluginName: "postgres12"
        databaseName: "$1"
        connectAddr: "$DB_HOST:$DB_PORT"
        connectProtocol: "tcp"
        user: "$DB_USER"
        password: "${DB_PASSWORD:-}"
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: "1h"
YAML
}

tls() {
  [ -n "${TLS_DIR:-}" ] || return 0
  cat <<YAML
  tls:
    frontend:
      server:
        certFile: "$TLS_DIR/server.pem"
        keyFile: "$TLS_DIR/server-key.pem"
      client:
        serverName: "${TLS_SERVER_NAME:-localhost}"
        rootCaFiles: ["$TLS_DIR/ca.pem"]
    systemWorker:
      client:
        serverName: "${TLS_SERVER_NAME:-localhost}"
        rootCaFiles: ["$TLS_DIR/ca.pem"]
YAML
}

cat >"$root/config/development.yaml" <<YAML
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
    broadcastAddress: "$broadcast"
$(tls)
services:
  frontend:
    rpc: { grpcPort: $base, membershipPort: $((base + 1)), bindOnIP: "$bind", httpPort: $((base + 2)) }
  history:
    rpc: { grpcPort: $((base + 3)), membershipPort: $((base + 4)), bindOnIP: "$bind" }
  matching:
    rpc: { grpcPort: $((base + 5)), membershipPort: $((base + 6)), bindOnIP: "$bind" }
  worker:
    rpc: { grpcPort: $((base + 7)), membershipPort: $((base + 8)), bindOnIP: "$bind" }
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
      rpcAddress: "$frontend"
dcRedirectionPolicy:
  policy: "noop"
dynamicConfigClient:
  filepath: "$root/config/dynamicconfig/development.yaml"
  pollInterval: "10s"
YAML
