"""``gradguard check --fix`` / ``--diff``: the editor's quick fixes (``fixes.fix_all``)
applied to files on disk.

A file is fixed in memory, round after round (each fix can reveal or settle others), until no
applicable fix is left; then it is written back once (``--fix``) or shown as a diff (``--diff``).
Only the preferred fix of each finding is used, and only if it is safe or ``--unsafe-fixes`` was
given.  A finding is fixed once: if its fix did not remove it, the next rounds leave it alone
(the same fix would only be applied again).  Encoding, BOM and line endings of ``.py`` files are kept; notebooks keep their JSON
layout (nbformat's one-space indent) and every non-code cell.
"""
from __future__ import annotations

import difflib
import io
import json
import os
import shutil
import tokenize
from dataclasses import dataclass
from typing import Callable, Optional

from .analysis import analyze_cells, analyze_source
from .findings import Finding
from .fix_choice import is_safe, preferred_fix
from .fixes import apply_edits, fix_all, moved

MAX_ROUNDS = 10


@dataclass
class Fixed:
    path: str
    before: str  # the file's text as it was
    after: str  # the file's text with the fixes applied
    fixed: int  # findings the fixes removed
    findings: list[Finding]  # what the analysis reports on the fixed text
    dependencies: tuple[str, ...]


class _PythonFile:
    def __init__(self, path: str):
        data = open(path, "rb").read()
        self.bom = data.startswith(b"\xef\xbb\xbf")
        self.encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(self.encoding)
        self.text = text[1:] if text.startswith("\ufeff") else text

    def sources(self, text: str) -> dict:
        return {None: text}

    def merge(self, text: str, sources: dict) -> str:
        return sources[None]

    def analyse(self, text: str, path: str):
        return analyze_source(text, path)

    def encode(self, text: str) -> bytes:
        encoding = "utf-8" if self.encoding == "utf-8-sig" else self.encoding
        return (b"\xef\xbb\xbf" if self.bom else b"") + text.encode(encoding)


class _Notebook:
    def __init__(self, path: str):
        self.text = open(path, encoding="utf-8").read()

    @staticmethod
    def _cells(text: str) -> dict:
        nb = json.loads(text)
        return {n: c for n, c in enumerate(nb["cells"], 1) if c.get("cell_type") == "code"}

    def sources(self, text: str) -> dict:
        return {n: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for n, c in self._cells(text).items()}

    def merge(self, text: str, sources: dict) -> str:
        nb = json.loads(text)
        for number, cell in enumerate(nb["cells"], 1):
            if number in sources and cell.get("cell_type") == "code":
                cell["source"] = sources[number].splitlines(keepends=True)
        return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"

    def analyse(self, text: str, path: str):
        sources = self.sources(text)
        return analyze_cells(list(sources.values()), path, numbers=list(sources))

    def encode(self, text: str) -> bytes:
        return text.encode("utf-8")


def _applicable(findings: list[Finding], path: str, unsafe: bool, enabled: Callable[[str], bool]) -> list[Finding]:
    """Findings of ``path`` whose preferred fix may be applied and edits only ``path``."""
    here = os.path.abspath(path)
    out = []
    for finding in findings:
        fix = preferred_fix(finding)
        if fix is None or not enabled(finding.code) or not (unsafe or is_safe(fix)):
            continue
        if all(os.path.abspath(loc.path) == here for _, loc in fix.targets):
            out.append(finding)
    return out


def _key(finding: Finding) -> tuple:
    """A finding and the fix it prefers: after one fix, the same finding may prefer another (a
    backward whose graph two writes spoilt: the second write once the first is out of place)."""
    loc, fix = finding.location, preferred_fix(finding)
    return (finding.code, loc.cell, loc.line, loc.column, fix.kind,
            tuple((name, t.cell, t.line, t.column) for name, t in fix.targets))


def _moved(key: tuple, edits) -> tuple:
    code, cell, line, column, kind, targets = key

    def at(cell, line, column):
        return moved((line, column), [e for e in edits if e.cell == cell])
    return (code, cell, *at(cell, line, column), kind,
            tuple((name, c, *at(c, ln, col)) for name, c, ln, col in targets))


def fix_file(path: str, unsafe: bool, enabled: Callable[[str], bool]) -> Optional[Fixed]:
    """``path`` with every applicable fix applied (in memory), or None when none applies."""
    source = _Notebook(path) if path.endswith(".ipynb") else _PythonFile(path)
    text = source.text
    analysis = source.analyse(text, path)
    own = [f for f in analysis.findings if enabled(f.code) and os.path.abspath(f.location.path) == os.path.abspath(path)]
    first_count = len(own)
    changed = False
    tried: set = set()  # (code, cell, line, column) of the findings fixed so far, where they are now
    for _ in range(MAX_ROUNDS):
        candidates = [f for f in _applicable(analysis.findings, path, unsafe, enabled) if _key(f) not in tried]
        if not candidates:
            break
        sources = source.sources(text)
        edits, fixed = fix_all(candidates, sources)
        if not edits:
            break
        tried = {_moved(key, edits) for key in tried | {_key(f) for f in fixed}}
        for cell in {e.cell for e in edits}:
            sources[cell] = apply_edits(sources[cell], [e for e in edits if e.cell == cell])
        new_text = source.merge(text, sources)
        if new_text == text:
            break
        text, changed = new_text, True
        analysis = source.analyse(text, path)
    if not changed:
        return None
    remaining = [f for f in analysis.findings if enabled(f.code) and os.path.abspath(f.location.path) == os.path.abspath(path)]
    return Fixed(path, source.text, text, max(first_count - len(remaining), 0), analysis.findings,
                 tuple(analysis.dependencies))


def write(fixed: Fixed) -> None:
    source = _Notebook(fixed.path) if fixed.path.endswith(".ipynb") else _PythonFile(fixed.path)
    data = source.encode(fixed.after)
    tmp = fixed.path + ".gradguard-tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    shutil.copymode(fixed.path, tmp)
    os.replace(tmp, fixed.path)


def diff(fixed: Fixed, shown: str) -> str:
    lines = difflib.unified_diff(fixed.before.splitlines(keepends=True), fixed.after.splitlines(keepends=True),
                                 f"a/{shown}", f"b/{shown}")
    return "".join(line if line.endswith(("\n", "\r")) else line + "\n" for line in lines)
