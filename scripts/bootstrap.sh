#!/usr/bin/env bash
# Sourced by scripts/start.sh, scripts/test.sh and .ci/run: makes Node >= 22, the Temporal CLI, the npm
# dependencies, the skill-script sandbox (bubblewrap, Python 3) and the local sentence encoder available. Idempotent; everything downloaded is cached outside the repo in $CADENZA_CACHE so a
# fresh clone on the same machine reuses it.
set -euo pipefail

TEMPORAL_CLI_VERSION="v1.5.1"
source "$(dirname "${BASH_SOURCE[0]}")/node.sh"

ensure_temporal() {
  if [ -n "${TEMPORAL_CLI:-}" ]; then
    [ -x "$TEMPORAL_CLI" ] || { say "TEMPORAL_CLI=$TEMPORAL_CLI is not an executable"; exit 1; }
  elif [ -x "$CADENZA_CACHE/bin/temporal" ]; then
    TEMPORAL_CLI="$CADENZA_CACHE/bin/temporal"
  elif command -v temporal >/dev/null; then
    TEMPORAL_CLI="$(command -v temporal)"
  elif command -v go >/dev/null; then
    say "building the Temporal CLI $TEMPORAL_CLI_VERSION with go install (a few minutes, once) into $CADENZA_CACHE/bin"
    GOBIN="$CADENZA_CACHE/bin" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" \
      go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2
    TEMPORAL_CLI="$CADENZA_CACHE/bin/temporal"
  else
    say "no Temporal CLI found. Either set TEMPORAL_CLI=/path/to/temporal, put 'temporal' on PATH"
    say "(https://docs.temporal.io/cli), or install Go >= 1.25 and run:"
    say "  GOBIN=$CADENZA_CACHE/bin go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
    exit 1
  fi
  export TEMPORAL_CLI
}

ensure_npm_deps() {
  local stamp="node_modules/.cadenza-lock-hash"
  local want
  want="$(node -e 'const c=require("crypto"),f=require("fs");process.stdout.write(c.createHash("sha256").update(f.readFileSync("package-lock.json")).update(process.version).digest("hex"))')"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  say "installing npm dependencies (npm ci)"
  # onnxruntime-node would fetch optional CUDA binaries from nuget (unreachable here); its CPU binaries ship in the package.
  ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund >&2
  printf '%s' "$want" > "$stamp"
}

apt_install() {
  if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
  elif command -v sudo >/dev/null; then sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
  else return 1; fi
}

# Skill scripts run only inside bubblewrap (skill-scripts/); without it run_skill_script refuses, so install it here
# as the tests' Postgres is, with Python 3 for Python scripts. prlimit and setpriv come with util-linux.
ensure_sandbox() {
  local missing=()
  command -v bwrap >/dev/null || missing+=(bubblewrap)
  command -v python3 >/dev/null || missing+=(python3)
  command -v prlimit >/dev/null || missing+=(util-linux)
  [ ${#missing[@]} -eq 0 ] && return
  say "installing ${missing[*]} for the skill-script sandbox"
  apt_install "${missing[@]}" || say "could not install ${missing[*]}: skill scripts will be refused until it is installed"
}

source "$(dirname "${BASH_SOURCE[0]}")/sentence-encoder.sh"

ensure_node
ensure_temporal
ensure_npm_deps
ensure_sandbox
ensure_sentence_encoder
