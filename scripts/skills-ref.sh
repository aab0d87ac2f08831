#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes the Agent Skills reference validator (`skills-ref` from PyPI, command
# `agentskills`) available as $SKILLS_REF, in a venv under $CADENZA_CACHE. Offline-safe once cached: an installed
# validator is used as it is, and nothing is fetched.
SKILLS_REF_VERSION="0.1.1"

ensure_skills_ref() {
  local venv="$CADENZA_CACHE/skills-ref-$SKILLS_REF_VERSION"
  if [ ! -x "$venv/bin/agentskills" ]; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
      printf "[skills-ref] %s\n" "no Python 3 with venv found: installing Debian's python3-venv (for the Agent Skills validator)" >&2
      if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
      else sudo apt-get update -qq >&2 && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2; fi
    fi
    printf "[skills-ref] %s\n" "installing the Agent Skills reference validator (skills-ref $SKILLS_REF_VERSION from PyPI) into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "skills-ref==$SKILLS_REF_VERSION" >&2
  fi
  export SKILLS_REF="$venv/bin/agentskills"
}

ensure_skills_ref
