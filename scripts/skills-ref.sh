#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes the Agent Skills reference validator (`skills-ref` from PyPI, command
# `agentskills`) available as $SKILLS_REF, in a venv under $CADENZA_CACHE (scripts/pip-tool.sh).
source "$(dirname "${BASH_SOURCE[0]}")/pip-tool.sh"
ensure_pip_tool skills-ref skills-ref 0.1.1 agentskills SKILLS_REF
