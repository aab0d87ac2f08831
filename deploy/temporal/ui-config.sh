#!/bin/sh
# ui-config.sh ROOT: the Temporal Web UI server's config (ROOT/config/development.yaml), from the variables the
# temporalio/ui image reads too: TEMPORAL_ADDRESS (the frontend), TEMPORAL_UI_PORT, and over TLS TEMPORAL_TLS_CA and
# TEMPORAL_TLS_SERVER_NAME (defaults: TLS_CA and TLS_SERVER_NAME, as server-config.sh and setup.sh read them).
set -eu
root="$1"
ca="${TEMPORAL_TLS_CA:-${TLS_CA:-}}"
mkdir -p "$root/config"
cat >"$root/config/development.yaml" <<YAML
temporalGrpcAddress: "$TEMPORAL_ADDRESS"
port: ${TEMPORAL_UI_PORT:-8080}
enableUi: true
defaultNamespace: default
cors:
  unsafeAllowAllOrigins: true
tls:
  caFile: "$ca"
  serverName: "$([ -z "$ca" ] || echo "${TEMPORAL_TLS_SERVER_NAME:-${TLS_SERVER_NAME:-localhost}}")"
YAML
