#!/usr/bin/env bash
# The unit layer (`npm run test:unit`): pure code only, so it starts nothing (no Postgres, Temporal, workflow bundle,
# OpenBao, Chromium) and needs only Node >= 22 and node_modules. It runs with the services' addresses unset, with an
# empty cache and data folder (no sentence encoder, no word-vector cache), and with test/unit-guard.ts preloaded,
# which fails a test that opens a TCP connection, listens on a port or starts a service. scripts/test.sh runs it too.
# All files run in one process (--test-isolation=none): pure tests share no state worth a process each, and a node
# per file cost ~4x the CPU (19 s against 5 s on this machine, most of it loading the same modules again).
# Extra arguments replace the default glob (they should name files under test/unit/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/node.sh
ensure_node
[ -d node_modules ] || { say "node_modules is missing: run npm ci (or bash scripts/test.sh, which installs it)"; exit 1; }
empty="$(mktemp -d "${TMPDIR:-/tmp}/cadenza-unit-XXXXXX")"
trap 'rm -rf "$empty"' EXIT
files=("$@")
[ ${#files[@]} -gt 0 ] || files=('test/unit/**/*.test.ts')
env -u DATABASE_URL -u TEST_DATABASE_URL -u TEMPORAL_ADDRESS -u CADENZA_TEST_BUNDLE -u SENTENCE_ENCODER_DIR \
  CADENZA_CACHE="$empty/cache" DATA_DIR="$empty/data" NODE_OPTIONS="--import=./test/unit-guard.ts ${NODE_OPTIONS:-}" \
  node --test --test-isolation=none --test-timeout=60000 "${files[@]}"
