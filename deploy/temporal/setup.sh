#!/bin/sh
# setup.sh schema|namespace: the Temporal cluster's setup steps, run by scripts/temporal-cluster.sh and by
# docker-compose.yml's one-shot services alike. Both are safe to run again.
#   schema     creates the `temporal` and `temporal_visibility` databases (SQL advanced visibility) on DB_HOST:DB_PORT
#              and brings their schema to the server's version (SQL_TOOL, SCHEMA_DIR: the server's schema/postgresql/v12;
#              RESET=1 drops them first)
#   namespace  waits for the frontend at TEMPORAL_ADDRESS, creates NAMESPACE (default `default`) and registers
#              Cadenza's search attributes (search-attributes.txt beside this file), trusting TLS_CA when set
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
deadline=$(($(date +%s) + ${SETUP_TIMEOUT:-120}))
retry() {
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "setup.sh: gave up on: $*" >&2; "$@" >&2 || true; exit 1; }
    sleep 1
  done
}

schema() {
  sql="${SQL_TOOL:-temporal-sql-tool} --plugin postgres12 --ep $DB_HOST -p $DB_PORT -u $DB_USER"
  [ -z "${DB_PASSWORD:-}" ] || sql="$sql --pw $DB_PASSWORD"
  schema_dir="${SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"
  for db in temporal temporal_visibility; do
    versioned="$schema_dir/$([ "$db" = temporal ] && echo temporal || echo visibility)/versioned"
    [ "${RESET:-0}" != 1 ] || $sql --db "$db" drop-database --force || true
    # Already there on a second run: creating it fails, and the schema's base version is already set.
    $sql --db "$db" create-database 2>/dev/null || true
    $sql --db "$db" setup-schema -v 0.0 2>/dev/null || true
    $sql --db "$db" update-schema -d "$versioned"
  done
}

namespace() {
  ns="${NAMESPACE:-default}"
  cli="${TEMPORAL_CLI:-temporal} --address $TEMPORAL_ADDRESS"
  [ -z "${TLS_CA:-}" ] || cli="$cli --tls-ca-path $TLS_CA --tls-server-name ${TLS_SERVER_NAME:-localhost}"
  retry $cli operator cluster health
  retry namespace_there
  # A namespace just created reaches every service's cache within seconds: until then it is "not found". Each service
  # caches the namespace's attribute mapping for up to a minute, so they are registered before Cadenza starts.
  while IFS='=' read -r name type; do
    [ -n "$name" ] || continue
    retry attribute_there "$name" "$type"
  done <"$here/search-attributes.txt"
}
namespace_there() {
  $cli operator namespace describe --namespace "$ns" || $cli operator namespace create --namespace "$ns" --retention 72h
}
attribute_there() {
  $cli operator search-attribute list --namespace "$ns" | grep -qw "$1" ||
    $cli operator search-attribute create --namespace "$ns" --name "$1" --type "$2"
}

case "${1:-}" in
  schema) schema ;;
  namespace) namespace ;;
  *) echo "usage: setup.sh schema|namespace" >&2; exit 2 ;;
esac
