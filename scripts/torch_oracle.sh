#!/usr/bin/env bash
# Runs the fixture oracle (tests/test_fixtures.py::test_oracle: every fixture and demo program run
# under real torch, each outcome checked against its marks) under another torch version, in a
# virtual environment of its own (build/torch-<version>/), to check a version GradGuard's rules
# claim to support. The suite's own venv stays on torch 2.13.0, the ground truth.
# Usage: bash scripts/torch_oracle.sh [VERSION]     (default: the oldest supported, below)
#        extra pytest arguments after the version: bash scripts/torch_oracle.sh 2.4.1 -x
# Supported torch versions (README, "Use it on your project"): 2.4 to 2.13.
# On Linux, PyPI's torch wheels older than 2.10 are the CUDA builds (about 3 GB with their NVIDIA
# libraries); they run on the CPU all the same.
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST=2.4.1
version=${1:-$OLDEST}
[ $# -gt 0 ] && shift
venv=build/torch-$version
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "torch==$version" numpy pytest
"$venv/bin/python" -c 'import torch; print("torch", torch.__version__)'
# -p no:cacheprovider: nothing written into the checkout; the project's pytest plugins are not needed
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_fixtures.py -k test_oracle "$@"
