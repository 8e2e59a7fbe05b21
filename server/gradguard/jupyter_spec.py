"""GradGuard's language server spec for jupyter-lsp (the server half of jupyterlab-lsp).

jupyter-lsp finds language servers through the ``jupyter_lsp_spec_v1`` entry point group
(pyproject.toml names this module's ``spec``), so ``jupyter lab`` started where GradGuard is
installed offers it to notebooks and Python files with no configuration. jupyterlab-lsp sends
a notebook as one virtual Python document (its code cells joined, IPython magics replaced by
Python) and maps the diagnostics and hovers back onto the cells.
"""
from __future__ import annotations

import sys
from typing import Any

from . import __version__

KEY = "gradguard"
SPEC_VERSION = 2  # the version of jupyter-lsp's spec schema this follows


def spec(manager: Any = None) -> dict[str, dict[str, Any]]:
    """The spec jupyter-lsp calls with its manager: the server runs in this interpreter."""
    return {
        KEY: {
            "version": SPEC_VERSION,
            "argv": [sys.executable, "-m", "gradguard", "lsp"],
            "languages": ["python"],
            "mime_types": ["text/python", "text/x-ipython"],
            "display_name": f"GradGuard {__version__}",
            # the server analyses the text it is sent: no copy of unsaved notebooks on disk
            "requires_documents_on_disk": False,
            "env": {"PYTHONUNBUFFERED": "1"},
            "urls": {"home": "https://github.com/gradguard/gradguard"},
            "install": {"pip": "pip install 'gradguard[jupyter]'"},
        }
    }
