"""Which fix of a finding is applied, and whether applying it is safe (Ruff's applicability).

Kept apart from :mod:`fixes` so that printing findings does not load libcst.
"""
from __future__ import annotations

from typing import Optional

from .findings import Finding, Fix

#: Fix kinds that keep what the program computes and only stop it from raising; the others
#: (detach, no_grad, recompute, cut a carried state) change which gradients flow, so the CLI
#: applies them only with ``--unsafe-fixes``.
SAFE_KINDS = frozenset({"retain_graph", "sum_losses"})


def is_safe(fix: Fix) -> bool:
    return fix.safe or fix.kind in SAFE_KINDS


def preferred_fix(finding: Finding) -> Optional[Fix]:
    return next((f for f in finding.fixes if f.preferred), finding.fixes[0] if finding.fixes else None)
