#!/usr/bin/env bash
# The whole test suite: installs the toolchain (scripts/bootstrap.sh), runs the type check, the linter and the format
# check, then the unit layer alone (scripts/test-unit.sh: nothing started, guarded), then the workflow, integration
# and browser layers against real services: a Postgres cluster, OpenBao, Chromium, and the runner's global setup
# (test/global-setup.ts: the workflow bundle and a Temporal dev server). Extra arguments replace the default files:
# those under test/unit/ go to the unit layer, the others to the services run, which starts only when it has files.
# Each run prints node's closing lines; the script exits non-zero when either failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/bootstrap.sh
npx tsc --noEmit -p .
npx eslint .
npx prettier --check . >/dev/null || { echo 'formatting differs from prettier: run npm run format' >&2; exit 1; }
unit=()
rest=()
if [ $# -gt 0 ]; then
  for f in "$@"; do
    case "${f#./}" in test/unit/*) unit+=("$f") ;; *) rest+=("$f") ;; esac
  done
else
  unit=('test/unit/**/*.test.ts')
  shopt -s globstar nullglob
  for f in test/**/*.test.ts; do [[ $f == test/unit/* ]] || rest+=("$f"); done
  shopt -u globstar nullglob
fi
unit_status=0
rest_status=0
[ ${#unit[@]} -eq 0 ] || bash scripts/test-unit.sh "${unit[@]}" || unit_status=$?
if [ ${#rest[@]} -gt 0 ]; then
  source scripts/test-postgres.sh
  source scripts/skills-ref.sh
  source scripts/schemathesis.sh
  use_test_postgres
  source scripts/openbao.sh
  ensure_openbao
  source scripts/chromium.sh
  ensure_chromium
  node --test --test-concurrency="${TEST_CONCURRENCY:-2}" --test-timeout=300000 \
    --test-global-setup=test/global-setup.ts "${rest[@]}" || rest_status=$?
fi
if [ $unit_status -ne 0 ] || [ $rest_status -ne 0 ]; then
  echo "tests failed: unit layer exit $unit_status, workflow/integration/browser layers exit $rest_status" >&2
  exit 1
fi
