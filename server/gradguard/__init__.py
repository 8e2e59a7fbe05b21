"""GradGuard: finds PyTorch autograd graph-lifetime bugs before the code runs."""
from __future__ import annotations

import importlib

__all__ = ["Analysis", "SourceError", "analyze_cells", "analyze_path", "analyze_source"]
__version__ = "0.1.0"

_HOMES = {"Analysis": "analysis", "analyze_cells": "analysis", "analyze_path": "analysis",
          "analyze_source": "analysis", "SourceError": "sources"}


def __getattr__(name: str):
    # imported on first use: a CLI run whose files are all cached never loads the engine
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
