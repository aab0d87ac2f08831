#!/usr/bin/env bash
# Quick start: install what is needed, then run the embedded stack (Temporal dev server, PGlite unless
# DATABASE_URL is set, API and worker in one process) and a demo mission. Extra arguments go to bin/cadenza.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
# Sized as a worker is (wiring/worker-process.ts: EMBEDDED_NODE_FLAGS, WORKER_PROCESS_ENV).
exec env MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536 node --max-semi-space-size=16 bin/cadenza.ts "$@"
