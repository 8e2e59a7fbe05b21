"""bench/robust.py: a sample of the installed packages' sources analysed (with hover facts, so that
every file is interpreted) without a crash, an internal error or a refusal of code CPython
compiles; a planted file CPython refuses is counted as such; and the pool survives a child that
dies (a stand-in analyser that segfaults on one file)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import robust  # noqa: E402

SAMPLE = 80


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_packages_sample_and_a_planted_python2_file(tmp_path):
    planted = tmp_path / "planted"
    planted.mkdir()
    # uses torch (so the analysis reads it) and is Python 2: CPython refuses it, so must the analysis
    (planted / "py2_script.py").write_text("import torch\nx = torch.ones(3, requires_grad=True)\nprint 'loss', x\n")
    records = tmp_path / "records.jsonl"
    run = subprocess.run([sys.executable, str(BENCH / "robust.py"), "--build", "source", "--sources", "packages",
                          "--sample", str(SAMPLE), "--seed", "3", "--timeout", "20", "--facts", "--extra", str(planted),
                          "--records", str(records)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = _records(records)
    packages = [r for r in rows if r["source"] == "packages"]
    assert len(packages) == SAMPLE and sum(r["lines"] for r in packages) > 0
    # with hover facts every file is interpreted, not only scanned (the engine meets library code)
    assert all(r["interpreted"] for r in packages if r["outcome"] == "ok")
    assert [r for r in rows if r["outcome"] not in ("ok", "refused")] == []
    assert [r for r in rows if r["outcome"] == "refused" and r["cpython_compiles"]] == []
    py2, = [r for r in rows if r["source"] == "extra"]
    assert py2["outcome"] == "refused" and py2["cpython_compiles"] is False, py2
    refused = sum(1 for r in rows if r["outcome"] == "refused")
    assert f"refusals: {refused}: {refused} of code CPython cannot compile either, 0 of code it compiles" in run.stdout
    assert "crashes (the process died): 0" in run.stdout


STAND_IN = {
    # just what the child calls; analyze_path dies on crash.py and never returns on spin.py
    "__init__.py": "",
    "engine.py": "def forget_calls(): pass\n",
    "reach.py": "def clear_outlines(): pass\n",
    "resolve.py": "def clear_caches(): pass\ndef hold_stamps(on=True): pass\n",
    "sources.py": """\
        class SourceError(Exception):
            def __init__(self, message, line=None):
                super().__init__(message)
                self.message, self.line = message, line
        def read_notebook(path): return []
        def strip_magics(text): return text
        """,
    "analysis.py": """\
        import ctypes
        class Analysis:
            findings, truncated, _main = [], (), None
        def analyze_path(path, root=None, facts=False):
            if path.endswith("crash.py"):
                ctypes.string_at(0)
            while path.endswith("spin.py"):
                pass
            return Analysis()
        """,
}


@pytest.mark.skipif(sys.platform == "win32", reason="faulthandler's SIGSEGV trace and /proc")
def test_a_child_that_dies_is_a_crash_with_its_trace_and_is_replaced(tmp_path):
    site = tmp_path / "site"
    (site / "gradguard").mkdir(parents=True)
    for name, text in STAND_IN.items():
        (site / "gradguard" / name).write_text(textwrap.dedent(text))
    files = tmp_path / "project"
    files.mkdir()
    for name in ("before.py", "crash.py", "spin.py", "after.py"):
        (files / name).write_text("x = 1\n")
    tasks = [{"source": "extra", "root": str(files), "path": str(files / name), "timeout": 1.0, "facts": False}
             for name in ("before.py", "crash.py", "spin.py", "after.py")]
    with open(tmp_path / "records.jsonl", "w") as out:
        results = robust.run_pool(tasks, str(site), 1, 1.0, out)
    outcome = {Path(r["path"]).name: r for r in results}
    assert {n: r["outcome"] for n, r in outcome.items()} == \
        {"before.py": "ok", "crash.py": "crash", "spin.py": "timeout", "after.py": "ok"}
    crash = outcome["crash.py"]
    assert crash["exit"] < 0 and "Segmentation fault" in crash["trace"] and "analyze_path" in crash["trace"]
