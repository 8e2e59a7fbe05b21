#!/usr/bin/env bash
# Sets up a virtual environment from the project's own files and runs the whole test suite twice:
# on the sources (the editable install), then on the wheel users install, whose engine setup.py
# compiles with Cython (the packaging and editor tests run only on the sources; they build and
# test the distributions themselves).
# Usage: bash scripts/test.sh [pytest args...]
#        GRADGUARD_TEST_BUILDS="source" (or "wheel") runs one of the two.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch 2.13.0 (CPU) is the ground truth the fixtures are run against.
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[test]"
for build in ${GRADGUARD_TEST_BUILDS:-source wheel}; do
  case "$build" in
    source)
      if [ "${GRADGUARD_E2E:-0}" = "1" ]; then
        bash scripts/e2e_setup.sh
      fi
      echo "== the test suite on the sources"
      .venv/bin/python -m pytest "$@"
      ;;
    wheel)
      out="$PWD/build/test-wheel"
      rm -rf "$out"
      echo "== building the wheel"
      .venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$out/dist" .
      .venv/bin/python -m pip install --quiet --no-deps --target "$out/site" "$out"/dist/gradguard-*.whl
      echo "== the test suite on the wheel ($(basename "$out"/dist/gradguard-*.whl))"
      GRADGUARD_TEST_SITE="$out/site" PYTHONPATH="$out/site" GRADGUARD_E2E=0 \
        .venv/bin/python -m pytest -m "not packaging" "$@"
      ;;
    *)
      echo "GRADGUARD_TEST_BUILDS: unknown build '$build' (source, wheel)" >&2
      exit 2
      ;;
  esac
done
