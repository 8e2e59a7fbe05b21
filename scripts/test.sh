#!/usr/bin/env bash
# Sets up a virtual environment from the project's own files and runs the whole test suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch 2.13.0 (CPU) is the ground truth the fixtures are run against.
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[test]"
if [ "${GRADGUARD_E2E:-0}" = "1" ]; then
  bash scripts/e2e_setup.sh
fi
exec .venv/bin/python -m pytest "$@"
