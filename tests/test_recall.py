"""The recall set (tests/recall/) under real torch: every program does what its marks say.

``buggy/`` holds one-bug programs of the backward-twice family, each with exactly one
``# expect: GG101`` (torch raises "backward through the graph a second time" on that line) or
``# expect: GG102`` (torch re-runs freed graph nodes there without raising); ``correct/`` holds
programs of the same shapes that run clean. A program is a ``.py`` file or a directory with a
``main.py``. bench/recall.py measures GradGuard against the same marks.
"""
from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
RECALL = TESTS / "recall"
ORACLE = TESTS / "oracle.py"
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
CODE = re.compile(r"\bGG\d{3}\b")


def programs(kind: str) -> list[Path]:
    folder = RECALL / kind
    return sorted(p for p in folder.iterdir()
                  if (p.suffix == ".py" and p.is_file()) or (p / "main.py").is_file())


def files(program: Path) -> list[Path]:
    return sorted(program.rglob("*.py")) if program.is_dir() else [program]


def marks(program: Path) -> set[tuple[str, int, str]]:
    """(file relative to the program's directory, line, code) of every ``# expect:`` comment."""
    root = program if program.is_dir() else program.parent
    found = set()
    for file in files(program):
        source = file.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and (m := EXPECT.search(tok.string)):
                for code in CODE.findall(m.group(1)):
                    found.add((file.relative_to(root).as_posix(), tok.start[0], code))
    return found


BUGGY, CORRECT = programs("buggy"), programs("correct")
ALL = BUGGY + CORRECT


def test_the_set():
    """40+ one-bug programs (one GG101 or GG102 mark each) and 20+ correct ones (no mark)."""
    assert len(BUGGY) >= 40 and len(CORRECT) >= 20
    for p in BUGGY:
        found = marks(p)
        assert len(found) == 1 and {c for _, _, c in found} <= {"GG101", "GG102"}, f"{p.name}: {found}"
    for p in CORRECT:
        assert not marks(p), f"{p.name} is in correct/ but carries marks"
    names = [p.name.removesuffix(".py") for p in ALL]
    assert len(names) == len(set(names)), "program names must be unique across buggy/ and correct/"


@pytest.fixture(scope="module")
def torch_results() -> dict[str, dict]:
    proc = subprocess.run([sys.executable, str(ORACLE), *map(str, ALL)],
                          capture_output=True, text=True, timeout=900, cwd=TESTS.parent)
    assert proc.returncode == 0, f"oracle failed:\n{proc.stderr[-4000:]}"
    return {str(Path(k).resolve()): v for k, v in json.loads(proc.stdout).items()}


@pytest.mark.parametrize("program", ALL, ids=[f"{p.parent.name}/{p.name}" for p in ALL])
def test_torch_agrees_with_the_marks(program: Path, torch_results):
    result = torch_results[str(program.resolve())]
    expected = marks(program)
    assert result["status"] != "error", (
        f"not in the family: {result.get('type')}: {result.get('message')} "
        f"at {result.get('file')}:{result.get('line')}")
    raises = {(f, line) for f, line, c in expected if c == "GG101"}
    if raises:
        assert result["status"] == "raised", f"marked GG101 at {sorted(raises)}, but torch ran clean"
        assert {(result["file"], result["line"])} == raises, "torch raised on another line"
    else:
        assert result["status"] == "clean", f"torch raised at {result['file']}:{result['line']}"
    rewalks = {(f, line) for f, line in result["rewalks"]}
    assert rewalks == {(f, line) for f, line, c in expected if c == "GG102"}, \
        "GG102 marks differ from the freed graphs torch re-ran"


@pytest.mark.parametrize("program", ALL, ids=[f"{p.parent.name}/{p.name}" for p in ALL])
def test_no_false_error(program):
    """Precision first: an error-severity finding is a promise that torch raises there. On a
    correct program there is none; on a buggy one, none but on the line torch raises."""
    from gradguard import analyze_path

    root = program if program.is_dir() else program.parent
    expected = {(f, line) for f, line, _ in marks(program)}
    for file in files(program):
        for finding in analyze_path(str(file)).findings:
            if finding.severity == "error":
                where = (Path(finding.location.path).resolve().relative_to(root.resolve()).as_posix(),
                         finding.location.line)
                assert where in expected, f"false error at {where}: {finding.message}"
