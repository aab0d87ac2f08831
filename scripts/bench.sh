#!/usr/bin/env bash
# The benchmarks (bench/): installs the toolchain (scripts/bootstrap.sh), starts a throw-away Postgres cluster,
# then bench/run-all.ts starts one Temporal dev server, runs the benches and prints a table of figures.
# Usage: scripts/bench.sh [--stock-dev-server] [mission-overhead|throughput|cancel-latency|approval-latency|event-latency|hostile-load|thousand-missions|cluster-scale|model-fallback|provider-limits ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
source scripts/test-postgres.sh
use_test_postgres
node bench/run-all.ts "$@"
