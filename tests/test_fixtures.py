"""The fixture corpus (tests/fixtures) and the demo programs (demo/), checked two ways.

* ``test_oracle``: real torch decides (tests/oracle.py says how each code is observed).
  - A raising mark (GG101, GG103, GG104, GG105, GG107, GG108) sits on the line where the program
    raises that error; a program stops at its first error, so it has at most one such mark, and a
    program without one runs clean.
  - GG106 marks are exactly the lines that read ``.grad`` of a non-leaf (torch warns there); when
    the ``None`` read is then used and the program raises (TypeError/AttributeError on NoneType),
    the access it came from must be marked.
  - GG102, GG201, GG202, GG203 marks are exactly the lines where the oracle saw, respectively, a
    backward re-run a freed graph without raising, a backward accumulate onto gradients a step had
    already applied, a running total keep every iteration's graph, and a ``retain_graph=True``
    whose graph no later backward walked.
* ``test_analyzer``: GradGuard, which never runs the code, reports exactly the marked
  (file, line, code) triples, and every GG101 points at where the graph was built and at the
  backward that freed it. Topics it does not get right yet are listed in tests/fixtures/PENDING.

A fixture is ``<topic>_bug.py`` / ``<topic>_ok.py`` or a directory ``<topic>_bug/`` with an entry
``main.py`` (its directory comes first on sys.path); expectations are trailing comments
``# expect: GG101`` (one or more codes) in any of its files.
"""
from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURES = TESTS / "fixtures"
DEMO = REPO / "demo"
ORACLE = TESTS / "oracle.py"

RAISING = ("GG101", "GG103", "GG104", "GG105", "GG107", "GG108")  # the program stops there
OBSERVED = {  # code -> the oracle's list of sites for it
    "GG102": "rewalks", "GG106": "warned", "GG201": "stale_grads", "GG202": "growing_totals",
    "GG203": "unused_retains",
}
CODES = (*RAISING, *OBSERVED)
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
CODE = re.compile(r"\bGG\d{3}\b")


@dataclass(frozen=True)
class Case:
    id: str  # "fixtures/<name>" or "demo/<name>"
    path: Path  # the .py file or the fixture directory
    root: Path  # directory that relative file names in expectations refer to

    @property
    def is_dir(self) -> bool:
        return self.path.is_dir()

    @property
    def entry(self) -> Path:
        return self.path / "main.py" if self.is_dir else self.path

    @property
    def files(self) -> list[Path]:
        if self.is_dir:
            return sorted(p for p in self.path.rglob("*.py") if "__pycache__" not in p.parts)
        return [self.path]

    def rel(self, file: Path) -> str:
        return os.path.relpath(file, self.root).replace(os.sep, "/")


def discover(base: Path) -> list[Case]:
    if not base.is_dir():
        return []
    cases = []
    for p in sorted(base.iterdir()):
        if p.name.startswith((".", "_")):
            continue
        if p.is_dir() and (p / "main.py").is_file():
            cases.append(Case(f"{base.name}/{p.name}", p, p))
        elif p.is_file() and p.suffix == ".py":
            cases.append(Case(f"{base.name}/{p.name}", p, p.parent))
    return cases


CASES = discover(FIXTURES) + discover(DEMO)


def pending() -> dict[str, str]:
    """Topics the analyzer does not get right yet (``tests/fixtures/PENDING``: ``topic  # why``, or
    ``topic_bug``/``topic_ok`` for one variant). Their analyzer test is a strict xfail, so a fix that makes one pass fails until it is removed
    from the list; torch (the oracle test) checks them like any other fixture."""
    out = {}
    listing = FIXTURES / "PENDING"
    if listing.is_file():
        for line in listing.read_text(encoding="utf-8").splitlines():
            topic, _, why = line.partition("#")
            if topic.strip():
                out[topic.strip()] = why.strip() or "not caught yet"
    return out


def _topic(case: Case) -> str:
    return case.path.name.removesuffix(".py").removesuffix("_bug").removesuffix("_ok")


def _pending_key(case: Case, waiting: dict[str, str]):
    names = (case.path.name.removesuffix(".py"), _topic(case))
    return next((n for n in names if n in waiting), None) if case.id.startswith("fixtures/") else None


def _analyzer_params():
    waiting = pending()
    unknown = set(waiting) - {n for c in CASES for n in (_topic(c), c.path.name.removesuffix(".py"))}
    assert not unknown, f"tests/fixtures/PENDING names no fixture: {sorted(unknown)}"
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=waiting[key])]
                         if (key := _pending_key(c, waiting)) else [])
            for c in CASES]


def expectations(case: Case) -> set[tuple[str, int, str]]:
    """(file, line, code) for every ``# expect:`` comment in the case's files (real comments only)."""
    found = set()
    for file in case.files:
        source = file.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type != tokenize.COMMENT:
                continue
            m = EXPECT.search(tok.string)
            if not m:
                continue
            codes = CODE.findall(m.group(1))
            assert codes, f"{file}:{tok.start[0]}: '# expect:' without a GGxxx code"
            for code in codes:
                assert code in CODES, f"{file}:{tok.start[0]}: unknown code {code}"
                found.add((case.rel(file), tok.start[0], code))
    return found


def _by_code(expected: set[tuple[str, int, str]], code: str) -> set[tuple[str, int]]:
    return {(f, line) for f, line, c in expected if c == code}


# --------------------------------------------------------------------------------------------
# the corpus itself


def test_corpus_pairs():
    """Every fixture topic comes as a buggy and a fixed variant; there are at least 45 pairs."""
    fixtures = [c for c in CASES if c.id.startswith("fixtures/")]
    names = {c.path.name.removesuffix(".py") for c in fixtures}
    bugs = {n.removesuffix("_bug") for n in names if n.endswith("_bug")}
    oks = {n.removesuffix("_ok") for n in names if n.endswith("_ok")}
    stray = names - {t + "_bug" for t in bugs} - {t + "_ok" for t in oks}
    assert not stray, f"fixtures not named <topic>_bug / <topic>_ok: {sorted(stray)}"
    assert bugs == oks, f"unpaired topics: {sorted(bugs ^ oks)}"
    assert len(bugs) >= 45
    for seed in ("seed000", "seed001", "seed002", "seed003", "seed004"):
        assert seed in bugs
    for case in fixtures:
        expected = expectations(case)
        if case.path.name.removesuffix(".py").endswith("_ok"):
            assert not expected, f"{case.id}: a fixed variant must be clean"
        else:
            assert expected, f"{case.id}: a buggy variant must mark at least one line"


# --------------------------------------------------------------------------------------------
# (a) ground truth: real torch


@pytest.fixture(scope="session")
def oracle_results(request) -> dict[str, dict]:
    """Run (once per test session, in one subprocess) every case that an oracle test asks for."""
    wanted = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.originalname == "test_oracle" and callspec is not None:
            wanted.append(callspec.params["case"])
    wanted = list(dict.fromkeys(wanted)) or CASES
    proc = subprocess.run(
        [sys.executable, str(ORACLE), *(str(c.path) for c in wanted)],
        capture_output=True, text=True, timeout=900, cwd=REPO,
    )
    assert proc.returncode == 0, f"oracle failed:\n{proc.stderr[-4000:]}"
    raw = json.loads(proc.stdout)
    return {str(Path(k).resolve()): v for k, v in raw.items()}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_oracle(case: Case, oracle_results):
    result = oracle_results[str(case.path.resolve())]
    expected = expectations(case)
    raises = {(f, line, c) for f, line, c in expected if c in RAISING}
    assert result["status"] != "error", (
        f"fixture defect: {result.get('type')}: {result.get('message')} "
        f"at {result.get('file')}:{result.get('line')}"
    )
    assert len(raises) <= 1, f"a program stops at its first error, yet {sorted(raises)} are marked"
    if raises:
        assert result["status"] == "raised", f"marked {sorted(raises)}, but torch ran clean"
        assert {(result["file"], result["line"], result["code"])} == raises, (
            f"torch raised {result['code']} at {result['file']}:{result['line']}")
    elif result["status"] == "raised" and result["code"] == "GG106":
        assert tuple(result["cause"]) in _by_code(expected, "GG106"), (
            f"the None read at {result['cause']} raised at {result['file']}:{result['line']}, "
            "but that access is not marked GG106")
    else:
        assert result["status"] == "clean", (
            f"torch raised {result.get('code')} at {result['file']}:{result['line']}")
    for code, key in OBSERVED.items():
        seen = {(f, line) for f, line in result[key]}
        assert seen == _by_code(expected, code), f"{code} marks differ from what torch did ({key})"


# --------------------------------------------------------------------------------------------
# (b) the analyzer


def _finding_file(case: Case, analysed: Path, reported: str) -> Path:
    p = Path(reported)
    if p.is_absolute():
        return p.resolve()
    for base in (Path.cwd(), analysed.parent, case.root):
        if (base / p).is_file():
            return (base / p).resolve()
    return analysed.resolve()


@pytest.mark.parametrize("case", _analyzer_params())
def test_analyzer(case: Case):
    from gradguard import analyze_path

    found = set()
    gg101 = []
    for file in case.files:
        analysis = analyze_path(str(file))
        for f in analysis.findings:
            if f.code not in CODES:
                continue
            where = _finding_file(case, file, f.location.path)
            found.add((case.rel(where), f.location.line, f.code))
            if f.code == "GG101":
                gg101.append(f)
    assert found == expectations(case)
    for f in gg101:
        assert len(f.related) >= 2, (
            f"GG101 at line {f.location.line} must point at where the graph was built and at the "
            f"backward that freed it; related = {f.related}"
        )


GG106_CASES = [c for c in CASES if any(code == "GG106" for _, _, code in expectations(c))]


@pytest.mark.parametrize("case", GG106_CASES, ids=[c.id for c in GG106_CASES])
def test_gg106_is_an_error_where_torch_raises(case: Case, oracle_results):
    """A GG106 finding is an error only on the read whose ``None`` torch then fails on; when that
    happens on the read's own line (``W -= lr * W.grad``), it is one."""
    from gradguard import analyze_path

    result = oracle_results[str(case.path.resolve())]
    cause = tuple(result["cause"]) if result["status"] == "raised" and result["code"] == "GG106" else None
    errors = set()
    for file in case.files:
        for f in analyze_path(str(file)).findings:
            if f.code == "GG106" and f.severity == "error":
                errors.add((case.rel(_finding_file(case, file, f.location.path)), f.location.line))
    assert errors <= ({cause} if cause else set()), f"torch raised at {result.get('line')}, cause {cause}"
    if cause and (result["file"], result["line"]) == cause:
        assert errors == {cause}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bodies_parsed_apart_change_nothing(case: Case, monkeypatch):
    """Every function body left out of the parse until read (``skeleton``; fixtures' bodies
    are mostly too short to be): the findings are those of whole trees, fixes and all."""
    from gradguard import analyze_path, resolve, skeleton

    def findings(min_chars: int) -> list:
        monkeypatch.setattr(skeleton, "MIN_LAZY_CHARS", min_chars)
        resolve.clear_caches()
        return [analyze_path(str(file)).findings for file in case.files]

    whole = findings(10 ** 9)
    assert findings(0) == whole
