#!/usr/bin/env bash
# Sets up a virtual environment from the project's own files and runs the test suite: on the
# sources (the editable install, pure Python), then on the compiled wheel the project ships
# (GRADGUARD_COMPILE=1, setup.py). The wheel run repeats only what the compiled build changes:
# the engine's verdicts, its compiled modules and the CLI (WHEEL_TESTS); CI runs the whole suite
# on it too (GRADGUARD_TEST_WHEEL=full, set by .ci/run). The packaging and editor tests run only
# on the sources: they build and test the distributions themselves, and the wheel phase tests the
# compiled wheel they built from the sdist (built here when they did not run).
# Tests run on every core (pytest-xdist), a module's tests on one worker (--dist loadscope): the
# tests that share one torch run of many programs (a module-scoped oracle) make it once, not once
# a worker. Every torch run happens on every run: no verdict is cached.
# Usage: bash scripts/test.sh [pytest args...]
#        GRADGUARD_TEST_BUILDS="source" (or "wheel") runs one of the two;
#        GRADGUARD_TEST_JOBS=N sets the number of workers (default: the cores, "0": no workers).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch 2.13.0 (CPU) is the ground truth the fixtures are run against.
.venv/bin/python -m pip install --quiet "torch==2.13.0" -e ".[test]"
# the packaging tests build the release distributions here; the wheel phase tests that wheel
export GRADGUARD_TEST_DISTS="$PWD/build/test-dists"
rm -rf "$GRADGUARD_TEST_DISTS"
JOBS=${GRADGUARD_TEST_JOBS:-auto}
PARALLEL=(); [ "$JOBS" = 0 ] || PARALLEL=(-n "$JOBS" --dist loadscope)
# What the compiled build can change: the engine (every fixture analysed, the rules, the facts
# it derives, its cache), the CLI and its worker processes, and what the C stack must survive
# (deep nesting, long import chains, a crashing worker); the wheel's own checks (test_build.py).
WHEEL_TESTS=(tests/test_build.py tests/test_fixtures.py tests/test_rules.py tests/test_engine_facts.py
             tests/test_state.py tests/test_saved.py tests/test_shapes.py tests/test_reach.py
             tests/test_blind.py tests/test_recall.py tests/test_cli_*.py tests/test_robustness.py
             tests/test_isolation.py tests/test_unknown_link.py tests/test_exact_values.py)
for build in ${GRADGUARD_TEST_BUILDS:-source wheel}; do
  case "$build" in
    source)
      if [ "${GRADGUARD_E2E:-0}" = "1" ]; then
        bash scripts/e2e_setup.sh
      fi
      echo "== the test suite on the sources"
      .venv/bin/python -m pytest "${PARALLEL[@]}" -m "not alone" "$@"
      # the workspace scan runs at idle priority: with the other tests on every core it would
      # get no CPU at all, so these run after them, on a machine to themselves
      echo "== the tests that need the machine to themselves"
      .venv/bin/python -m pytest -p no:xdist -m alone "$@"
      ;;
    wheel)
      out="$PWD/build/test-wheel"
      rm -rf "$out"
      mkdir -p "$out/dist"
      if compgen -G "$GRADGUARD_TEST_DISTS/gradguard-*.whl" >/dev/null; then
        echo "== the compiled wheel the packaging tests built from the sdist"
        cp "$GRADGUARD_TEST_DISTS"/gradguard-*.whl "$out/dist/"
      else
        echo "== building the compiled wheel"
        GRADGUARD_COMPILE=1 .venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$out/dist" .
      fi
      .venv/bin/python -m pip install --quiet --no-deps --target "$out/site" "$out"/dist/gradguard-*.whl
      wheel=$(basename "$out"/dist/gradguard-*.whl)
      if [ "${GRADGUARD_TEST_WHEEL:-}" = "full" ]; then
        echo "== the test suite on the wheel ($wheel)"
        selection=()
      else
        echo "== the engine and CLI tests on the wheel ($wheel; GRADGUARD_TEST_WHEEL=full: all)"
        # the oracle's torch runs do not involve GradGuard: the source run made them
        selection=("${WHEEL_TESTS[@]}" -k "not test_oracle and not test_torch_agrees_with_the_marks")
      fi
      GRADGUARD_TEST_SITE="$out/site" PYTHONPATH="$out/site" GRADGUARD_E2E=0 \
        .venv/bin/python -m pytest "${PARALLEL[@]}" -m "not packaging and not alone" "${selection[@]}" "$@"
      if [ "${GRADGUARD_TEST_WHEEL:-}" = "full" ]; then
        GRADGUARD_TEST_SITE="$out/site" PYTHONPATH="$out/site" GRADGUARD_E2E=0 \
          .venv/bin/python -m pytest -p no:xdist -m "alone and not packaging" "$@"
      fi
      ;;
    *)
      echo "GRADGUARD_TEST_BUILDS: unknown build '$build' (source, wheel)" >&2
      exit 2
      ;;
  esac
done
