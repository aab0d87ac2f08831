#!/usr/bin/env bash
# Sourced by the scripts that install a Python tool from PyPI (skills-ref.sh, schemathesis.sh): one venv per tool and
# version under $CADENZA_CACHE. Offline-safe once cached: an installed tool is used as it is, and nothing is fetched.

# ensure_pip_tool LABEL PACKAGE VERSION COMMAND VARIABLE: installs PACKAGE==VERSION once, exports VARIABLE as the path
# of its COMMAND.
ensure_pip_tool() {
  local label="$1" package="$2" version="$3" command="$4" variable="$5"
  local venv="$CADENZA_CACHE/$label-$version"
  if [ ! -x "$venv/bin/$command" ]; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
      printf "[%s] %s\n" "$label" "no Python 3 with venv found: installing Debian's python3-venv" >&2
      if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
      else sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2; fi
    fi
    printf "[%s] %s\n" "$label" "installing $package $version from PyPI into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$package==$version" >&2
  fi
  export "$variable=$venv/bin/$command"
}
