#!/usr/bin/env bash
# The chaos suite (bench/chaos/): installs the toolchain (scripts/bootstrap.sh), then bench/chaos/run-chaos.ts starts
# the production shape (its own Postgres cluster, a Temporal dev server, the API and two workers as processes; with
# --cluster the real Temporal server over TLS, two APIs and a worker per task queue),
# disrupts it scenario by scenario and prints a table of what held. Usage: scripts/chaos.sh [--quick] [scenario ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
# Installs Debian's postgresql when no server is found (the chaos run starts a cluster of its own from its binaries).
source scripts/test-postgres.sh
bin="$(find_pg_bin)"
if [ -z "$bin" ] || [ ! -x "$bin/pg_ctl" ]; then DATABASE_URL='' start_test_postgres && stop_test_postgres; fi
node bench/chaos/run-chaos.ts "$@"
