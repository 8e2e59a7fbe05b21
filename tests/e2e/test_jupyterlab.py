"""JupyterLab end-to-end: GradGuard through jupyterlab-lsp in a real JupyterLab 4, in chromium.

Opt-in like the editors' tests (GRADGUARD_E2E=1, after scripts/e2e_setup.sh, which makes the
JupyterLab environment .e2e/jupyter-venv and installs client/jupyterlab's extension into it);
25 to 40 s. tests/e2e/jupyterlab/run.js drives it: the GG101 squiggle and the hover in a notebook
cell, quick fixes applied in the editor by gradguard-jupyterlab (context menu and Ctrl+.; Ctrl+Z
undoes one), and the saved notebook run under torch. Screenshots: .e2e/screenshots/jupyterlab-*.png
(GRADGUARD_E2E_SCREENSHOTS=docs/screenshots refreshes the ones docs/editors.md shows).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.alone, pytest.mark.skipif(
    os.environ.get("GRADGUARD_E2E") != "1",
    reason="end-to-end tests are opt-in: run scripts/e2e_setup.sh, then set GRADGUARD_E2E=1",
)]


def test_jupyterlab() -> None:
    """jupyter-lsp found GradGuard alone; the ignore setting; squiggle, hover and the quick fix applied
    in the editor to a notebook cell."""
    proc = subprocess.run(["node", "tests/e2e/jupyterlab/run.js"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "GRADGUARD_E2E_TORCH_PYTHON": sys.executable})
    sys.stdout.write(proc.stdout)
    sys.stderr.write(proc.stderr)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    assert "all checks passed" in proc.stdout
