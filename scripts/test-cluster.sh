#!/usr/bin/env bash
# The cluster tier (`npm run test:cluster`): the engine's key scenarios against the real Temporal server in its
# production shape (scripts/temporal-cluster.sh: four service processes on Postgres, SQL visibility) instead of the
# CLI's dev server. A mission with parallel tools, per-tool and whole-mission cancels, approvals, schedules, a retry,
# search attributes registered by the API itself, the Web UI's metadata, a rolling deploy under worker versioning, and
# production's shape on a cluster of its own whose frontend serves TLS (two APIs, a worker per task queue, the Web UI
# server pointed at the frontend: test/integration/cluster-production-shape.test.ts). Extra arguments replace the files.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
source scripts/test-postgres.sh
source scripts/temporal-cluster.sh
use_test_postgres
pg_port="${TEST_DATABASE_URL##*:}"
pg_port="${pg_port%%/*}"
trap 'stop_temporal_cluster; stop_test_postgres' EXIT
# A retired worker build shows DRAINED seconds after its last pinned mission closed, not minutes (worker-versioning test).
export DYNAMIC_CONFIG_EXTRA='matching.wv.VersionDrainageStatusVisibilityGracePeriod:
  - value: 1s
matching.wv.VersionDrainageStatusRefreshInterval:
  - value: 1s'
start_temporal_cluster 127.0.0.1 "$pg_port" postgres
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(
  test/integration/mission-happy-path.test.ts
  test/integration/mission-cancel.test.ts
  test/integration/mission-approvals.test.ts
  test/integration/schedules-runs.test.ts
  test/integration/mission-retry.test.ts
  test/integration/web-ui-metadata.test.ts
  test/integration/mission-sessions.test.ts
  test/integration/worker-versioning.test.ts
  test/integration/cluster-production-shape.test.ts
)
node --test --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout=300000 --test-global-setup=test/global-setup.ts "${files[@]}"
