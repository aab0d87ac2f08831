#!/usr/bin/env bash
# The whole test suite against real services: installs the toolchain (scripts/bootstrap.sh), starts a Postgres
# cluster, then runs the type check, the linter, the format check and node's test runner; the runner's global setup
# starts a Temporal dev server (test/global-setup.ts). Extra arguments replace the default test file globs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
source scripts/test-postgres.sh
source scripts/skills-ref.sh
source scripts/schemathesis.sh
use_test_postgres
source scripts/openbao.sh
ensure_openbao
source scripts/chromium.sh
ensure_chromium
npx tsc --noEmit -p .
npx eslint .
npx prettier --check . >/dev/null || { echo 'formatting differs from prettier: run npm run format' >&2; exit 1; }
files=("$@")
[ ${#files[@]} -gt 0 ] || files=('test/**/*.test.ts')
node --test --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout=300000 \
  --test-global-setup=test/global-setup.ts "${files[@]}"
