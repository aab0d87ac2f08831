# Sourced by scripts/test.sh (after bootstrap.sh): the console's browser tests drive Debian's Chromium through
# playwright-core (Playwright's own browser download does not work here). Installed when missing; CHROMIUM_PATH
# names it for the tests.
ensure_chromium() {
  if [ -z "${CHROMIUM_PATH:-}" ]; then
    CHROMIUM_PATH="$(command -v chromium || command -v chromium-browser || true)"
  fi
  if [ -z "$CHROMIUM_PATH" ]; then
    say "installing chromium for the console's browser tests"
    apt_install chromium || say "could not install chromium: the browser tests will fail until it is installed"
    CHROMIUM_PATH="$(command -v chromium || true)"
  fi
  export CHROMIUM_PATH
}
