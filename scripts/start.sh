#!/usr/bin/env bash
# Quick start: install what is needed, then run the embedded stack (Temporal dev server, PGlite unless
# DATABASE_URL is set, API and worker in one process) and a demo mission. Extra arguments go to bin/cadenza.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
exec node bin/cadenza.ts "$@"
