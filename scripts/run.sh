#!/usr/bin/env bash
# Runs a command with the project's toolchain (Node >= 22, Temporal CLI, npm dependencies; see bootstrap.sh), so
# `npm start` and friends work even where the machine's own node is older.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
exec "$@"
