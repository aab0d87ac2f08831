#!/usr/bin/env bash
# Regenerates docs/screenshots/console-*.png: the console's browser tests run in Chromium and keep a screenshot of
# the mission view and of a skill's page (test/browser/console.test.ts, keepScreenshot).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/screenshots
CONSOLE_SCREENSHOT_DIR="$PWD/docs/screenshots" bash scripts/test.sh test/browser/console.test.ts
