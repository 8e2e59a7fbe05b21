"""The blind sets (tests/blind/, tests/blind2/) under real torch: every program does what its marks say.

Each set reproduces real user reports (its README.md); the sets are for measuring GradGuard
(bench/blind.py), so nothing here asserts GradGuard's verdicts. What is checked is that each
label is what torch 2.13 does, with the same rules as the fixture corpus: the oracle run and the
comparison are test_fixtures' own (``discover``, ``expectations``, ``test_oracle``).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import test_fixtures as corpus  # not `from ... import test_oracle`: pytest would collect it here

SETS = {"blind": 36, "blind2": 30, "blind3": 30, "blind4": 30, "blind5": 30, "blind6": 30, "blind7": 30, "blind8": 30, "blind9": 30, "blind10": 30, "blind11": 12, "blind12": 34, "blind13": 34, "blind14": 34, "blind15": 32, "blind16": 5, "blind17": 11, "blind18": 44, "blind19": 52, "blind20": 50}  # directory -> at least this many report/fix pairs
CASES_BY_SET = {name: corpus.discover(corpus.TESTS / name) for name in SETS}
CASES = [case for cases in CASES_BY_SET.values() for case in cases]
SOURCE = re.compile(r"#\s*Source:\s*https?://\S+")


def _name(case: corpus.Case) -> str:
    return case.path.name.removesuffix(".py")


@pytest.mark.parametrize("blind_set", list(SETS))
def test_the_set(blind_set: str):
    """Report/fix pairs named <topic>_bug / <topic>_ok, at least the set's minimum of them; every
    file's first line cites its report; fixed twins carry no mark; at least that many buggy
    programs carry one."""
    cases, minimum = CASES_BY_SET[blind_set], SETS[blind_set]
    names = {_name(c) for c in cases}
    bugs = {n.removesuffix("_bug") for n in names if n.endswith("_bug")}
    oks = {n.removesuffix("_ok") for n in names if n.endswith("_ok")}
    assert names == {t + "_bug" for t in bugs} | {t + "_ok" for t in oks}, "programs not named <topic>_bug/_ok"
    assert bugs == oks, f"unpaired topics: {sorted(bugs ^ oks)}"
    assert len(bugs) >= minimum
    for case in cases:
        first = case.entry.read_text(encoding="utf-8").splitlines()[0]
        assert SOURCE.match(first), f"{case.id}: the first line must cite the report (# Source: URL)"
    marked = [c for c in cases if _name(c).endswith("_bug") and corpus.expectations(c)]
    assert len(marked) >= minimum
    for case in cases:
        if _name(case).endswith("_ok"):
            assert not corpus.expectations(case), f"{case.id}: a fixed twin must be unmarked"


def test_sets_cite_distinct_reports():
    """No report is reproduced twice, within a set or across the sets."""
    cited = [case.entry.read_text(encoding="utf-8").splitlines()[0].split("Source:", 1)[-1].strip()
             for case in CASES if _name(case).endswith("_bug")]
    repeated = sorted({url for url in cited if cited.count(url) > 1})
    assert not repeated, f"reports used by more than one topic: {repeated}"


@pytest.fixture(scope="module")
def torch_results() -> dict[str, dict]:
    proc = subprocess.run([sys.executable, str(corpus.ORACLE), *(str(c.path) for c in CASES)],
                          capture_output=True, text=True, timeout=1800, cwd=corpus.REPO)
    assert proc.returncode == 0, f"oracle failed:\n{proc.stderr[-4000:]}"
    return {str(Path(k).resolve()): v for k, v in json.loads(proc.stdout).items()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_torch_agrees_with_the_marks(case: corpus.Case, torch_results):
    corpus.test_oracle(case, torch_results)
