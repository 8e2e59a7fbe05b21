"""Every fix the engine offers on the fixture corpus, applied with gradguard.fixes and run under
real torch (tests/oracle.py, one subprocess for all variants): the finding it fixes must be gone
at run time — no "backward through the graph a second time" there (GG101), no re-walk (GG102)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import analyze_path
from gradguard.fixes import FixError, apply_edits, fix_all_edits, fix_edits

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "fixtures"


def bug_fixtures() -> list[Path]:
    """The buggy variants, except those whose findings are known to be wrong (tests/fixtures/PENDING)."""
    if not FIXTURES.is_dir():
        return []
    listing = FIXTURES / "PENDING"
    lines = listing.read_text(encoding="utf-8").splitlines() if listing.is_file() else []
    waiting = {line.partition("#")[0].strip() for line in lines}
    found = [*FIXTURES.glob("*_bug.py"), *FIXTURES.glob("*_bug/main.py")]
    return sorted(p for p in found
                  if not {n := (p.parent.name if p.name == "main.py" else p.stem), n.removesuffix("_bug")} & waiting)


def variants(tmp: Path):
    """(variant path, entry file inside it, finding code, finding line, label) for each fix,
    plus one fix-all variant per fixture (line None: the whole program must be clean)."""
    for entry in bug_fixtures():
        findings = [f for f in analyze_path(str(entry)).findings
                    if os.path.samefile(f.location.path, entry)]
        text = entry.read_text(encoding="utf-8")
        jobs = [(f"{f.code}@{f.location.line}:{fix.kind}", f.code, f.location.line, [fix])
                for f in findings for fix in f.fixes]
        if findings and all(f.fixes for f in findings):
            jobs.append(("fix-all", None, None, findings))
        for n, (label, code, line, payload) in enumerate(jobs):
            try:
                edits = (fix_all_edits(payload, {None: text}) if code is None
                         else fix_edits(payload[0], {None: text}))
            except FixError as exc:
                raise AssertionError(f"{entry.name} {label}: {exc}") from exc
            fixed = apply_edits(text, edits)
            compile(fixed, str(entry), "exec")  # every fix result parses
            if entry.name == "main.py":  # a directory fixture: copy its modules along
                target = tmp / f"{entry.parent.name}_{n}"
                shutil.copytree(entry.parent, target)
                (target / "main.py").write_text(fixed, encoding="utf-8")
                yield target, "main.py", code, line, f"{entry.parent.name} {label}"
            else:
                target = tmp / f"{entry.stem}_{n}.py"
                target.write_text(fixed, encoding="utf-8")
                yield target, target.name, code, line, f"{entry.name} {label}"


@pytest.mark.skipif(not bug_fixtures(), reason="no fixture corpus in this checkout")
def test_every_fix_on_the_fixture_corpus_removes_its_error(tmp_path):
    runs = list(variants(tmp_path))
    assert runs, "the engine offered no fix on any fixture"
    proc = subprocess.run([sys.executable, str(TESTS / "oracle.py"), *[str(p) for p, *_ in runs]],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    failures = []
    for path, entry, code, line, label in runs:
        result = results[str(path)] if str(path) in results else results[path.name]
        raised_here = result["status"] == "raised" and (line is None or
                                                         (result["file"] == entry and result["line"] == line))
        rewalked_here = code == "GG102" and [entry, line] in result["rewalks"]
        if raised_here or rewalked_here or result["status"] == "error":
            failures.append(f"{label}: {result}")
    assert not failures, "\n".join(failures)
