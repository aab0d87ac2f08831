#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes Schemathesis (property-based tests of the API from its OpenAPI document alone,
# command `st`) available as $SCHEMATHESIS, in a venv under $CADENZA_CACHE. Offline-safe once cached: an installed
# version is used as it is, and nothing is fetched.
SCHEMATHESIS_VERSION="4.32.5"

ensure_schemathesis() {
  local venv="$CADENZA_CACHE/schemathesis-$SCHEMATHESIS_VERSION"
  if [ ! -x "$venv/bin/st" ]; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
      printf "[schemathesis] %s\n" "no Python 3 with venv found: installing Debian's python3-venv (for Schemathesis)" >&2
      if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
      else sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2; fi
    fi
    printf "[schemathesis] %s\n" "installing Schemathesis $SCHEMATHESIS_VERSION from PyPI into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2
  fi
  export SCHEMATHESIS="$venv/bin/st"
}

ensure_schemathesis
