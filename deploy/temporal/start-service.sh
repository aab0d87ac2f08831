#!/bin/sh
# start-service.sh SERVICE: runs one Temporal service (frontend, history, matching or worker) as its own process on
# the config server-config.sh writes to TEMPORAL_ROOT (default /tmp/temporal), written first if it is not there yet.
# The OSS server has no API keys: `--allow-no-auth` admits every caller that reaches the frontend (over TLS when
# TLS_DIR is set); Temporal Cloud is where an API key is checked.
set -eu
root="${TEMPORAL_ROOT:-/tmp/temporal}"
[ -f "$root/config/development.yaml" ] || sh "$(dirname "$0")/server-config.sh" "$root"
exec "${TEMPORAL_SERVER:-temporal-server}" --root "$root" --config config --env development --allow-no-auth \
  start --service "$1"
