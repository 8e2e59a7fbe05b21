"""A few seconds of fuzzing: mutated fixtures and generated programs are analysed without a
crash (a SourceError is a clean refusal) and without running away. bench/fuzz.py runs the full
count and reports times."""
from __future__ import annotations

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings

from fuzzcases import MUTATIONS, judge, mutants, seeds

LIMIT = 20.0  # CPU-seconds: far above any budget, only a runaway analysis reaches it


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    return str(tmp_path_factory.mktemp("fuzz"))


def test_every_mutation_changes_some_fixture():
    import random
    text = seeds()[0]
    for name, mutate in MUTATIONS.items():
        assert any(mutate(text, random.Random(n)) != text for n in range(5)), name


@pytest.mark.parametrize("name,text", list(mutants(60, seed=1)), ids=lambda v: v if v.startswith("mutant") else "")
def test_mutated_fixtures(directory, name, text):
    verdict = judge(name, text, directory, LIMIT)
    assert verdict.outcome in ("ok", "refused"), (verdict, text[:2000])


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(source=hypothesmith.from_grammar())
def test_generated_programs(directory, source):
    verdict = judge("generated", source, directory, LIMIT)
    assert verdict.outcome in ("ok", "refused"), (verdict, source[:2000])


def test_bodies_parsed_apart_find_the_same_in_mutated_fixtures(directory, monkeypatch):
    """Mutated fixtures (lines deleted, swapped, re-indented, nested deep) analysed with every
    function body left out until read, and whole: the same findings wherever both analyse. The
    lazy parse may accept what the whole one refuses (a syntax error in a body never read),
    never the other way round."""
    import os

    from gradguard import resolve, skeleton
    from gradguard.analysis import analyze_source
    from gradguard.sources import SourceError

    def findings(text: str, min_chars: int):
        monkeypatch.setattr(skeleton, "MIN_LAZY_CHARS", min_chars)
        resolve.clear_caches()
        try:
            return analyze_source(text, os.path.join(directory, "mutant.py"), directory).findings
        except SourceError:
            return None

    compared = 0
    for name, text in mutants(150, seed=2):
        whole, lazy = findings(text, 10 ** 9), findings(text, 0)
        assert lazy is not None or whole is None, name
        if whole is not None:
            assert lazy == whole, name
            compared += 1
    assert compared > 50
