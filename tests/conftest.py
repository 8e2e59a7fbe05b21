"""Parallel runs (pytest-xdist, ``--dist loadgroup`` in scripts/test.sh): the tests that share one
torch run of many programs (a module- or session-scoped oracle fixture) go to one worker, so that
the oracle runs once, not once on each worker that happens to get one of them."""
from __future__ import annotations

import pytest

ORACLE_FIXTURES = ("oracle_results", "torch_results")


def pytest_collection_modifyitems(items):
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in ORACLE_FIXTURES):
            item.add_marker(pytest.mark.xdist_group(f"torch:{item.module.__name__}"))
