#!/usr/bin/env bash
# Sourced by scripts/test.sh: makes Schemathesis (property-based tests of the API from its OpenAPI document alone,
# command `st`) available as $SCHEMATHESIS, in a venv under $CADENZA_CACHE (scripts/pip-tool.sh).
source "$(dirname "${BASH_SOURCE[0]}")/pip-tool.sh"
ensure_pip_tool schemathesis schemathesis 4.32.5 st SCHEMATHESIS
