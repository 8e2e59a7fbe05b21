"""Findings as the CLI prints them: text, the JSON contract, SARIF 2.1.0, and ``--statistics``.

Every formatter takes a :class:`Report`: the findings plus the files that could not be read
(SARIF lists those as tool execution notifications; the other formats leave them to stderr).
"""
from __future__ import annotations

import json
import os
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import __version__
from .findings import Finding, Fix, Location
from .fix_choice import is_safe, preferred_fix
from .notebook_lines import NotebookText
from .rules import RULES, doc_url

SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class Report:
    findings: list[Finding]
    #: (path, message) of the inputs that could not be analysed
    problems: list[tuple[str, str]] = field(default_factory=list)


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _position(loc: Location) -> str:
    cell = f"cell {loc.cell}:" if loc.cell is not None else ""
    return f"{display_path(loc.path)}:{cell}{loc.line}:{loc.column}"


def applicability(fix: Fix) -> str:
    return "safe" if is_safe(fix) else "unsafe"


def fix_line(finding: Finding) -> str:
    fix = preferred_fix(finding)
    if fix is None:
        return "fix: no automatic fix fits here; the rule's page lists the ways out"
    how = "--fix applies it" if is_safe(fix) else "unsafe: it changes which gradients flow; --fix --unsafe-fixes applies it"
    return f"fix: {fix.title} ({how})"


# --- text ----------------------------------------------------------------------------------------

def text(report: Report) -> str:
    return "".join(f"{_position(f.location)}: {f.code} {f.message}\n  {fix_line(f)}\n  docs: {doc_url(f.code)}\n"
                   for f in report.findings)


def statistics(report: Report) -> str:
    """Ruff's ``--statistics``: a count per rule, ``[*]`` where a fix is offered."""
    counts = Counter(f.code for f in report.findings)
    fixable = {f.code for f in report.findings if preferred_fix(f) is not None}
    width = max((len(str(n)) for n in counts.values()), default=1)
    rows = []
    for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = RULES.get(code)
        rows.append(f"{n:>{width}}\t{code}\t{'[*]' if code in fixable else '[ ]'} {rule.name if rule else ''}\n")
    return "".join(rows)


# --- JSON ----------------------------------------------------------------------------------------

def as_json(report: Report) -> str:
    items = []
    for f in report.findings:
        loc = f.location
        fix = preferred_fix(f)
        items.append({
            "path": display_path(loc.path),
            "cell": loc.cell,
            "line": loc.line,
            "column": loc.column,
            "end_line": loc.end_line,
            "end_column": loc.end_column,
            "code": f.code,
            "severity": f.severity,
            "message": f.message,
            "fix": None if fix is None else {"title": fix.title, "applicability": applicability(fix)},
            "url": doc_url(f.code),
            "related": [{"path": display_path(r.location.path), "cell": r.location.cell, "line": r.location.line,
                         "column": r.location.column, "message": r.message} for r in f.related],
        })
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


# --- SARIF ---------------------------------------------------------------------------------------

def _uri(path: str) -> tuple[str, Optional[str]]:
    """(uri, uriBaseId): relative to the working directory (%SRCROOT%) when inside it."""
    shown = display_path(path)
    if os.path.isabs(shown):
        return Path(shown).as_uri(), None
    return urllib.parse.quote(shown.replace(os.sep, "/")), "%SRCROOT%"


class _Notebooks:
    """Raw notebook texts, read once, to map cell positions into the ``.ipynb`` file."""

    def __init__(self):
        self._maps: dict[str, Optional[NotebookText]] = {}

    def position(self, path: str, cell: int, line: int, column: int) -> Optional[tuple[int, int]]:
        if path not in self._maps:
            try:
                self._maps[path] = NotebookText(Path(path).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError, IndexError):
                self._maps[path] = None
        mapping = self._maps[path]
        return mapping.position(cell, line, column) if mapping is not None else None


def _artifact(path: str) -> dict:
    uri, base = _uri(path)
    return {"uri": uri, "uriBaseId": base} if base else {"uri": uri}


def _sarif_location(loc: Location, notebooks: _Notebooks, message: Optional[str] = None) -> dict:
    region = {"startLine": loc.line, "startColumn": loc.column, "endLine": loc.end_line, "endColumn": loc.end_column}
    out: dict = {"physicalLocation": {"artifactLocation": _artifact(loc.path), "region": region}}
    if loc.cell is not None:
        start = notebooks.position(loc.path, loc.cell, loc.line, loc.column)
        end = notebooks.position(loc.path, loc.cell, loc.end_line, loc.end_column)
        if start and end and end >= start:
            region.update(startLine=start[0], startColumn=start[1], endLine=end[0], endColumn=end[1])
        else:  # the file changed since: point at the notebook, not at a wrong line
            del out["physicalLocation"]["region"]
        out["properties"] = {"cell": loc.cell, "cellLine": loc.line, "cellColumn": loc.column}
    if message is not None:
        out["message"] = {"text": message}
    return out


def _sarif_rule(rule) -> dict:
    page = Path(rule.doc).name
    try:
        markdown = (Path(__file__).resolve().parent / "docs" / "rules" / page).read_text(encoding="utf-8")
    except OSError:
        markdown = None
    out = {"id": rule.code, "name": rule.name, "shortDescription": {"text": rule.summary["en"]},
           "fullDescription": {"text": rule.summary["en"]}, "helpUri": doc_url(rule.code),
           "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
           "properties": {"tags": ["pytorch", "autograd", "correctness"]}}
    if markdown:
        out["help"] = {"text": markdown, "markdown": markdown}
    return out


def sarif(report: Report) -> str:
    rules = list(RULES.values())
    index = {rule.code: i for i, rule in enumerate(rules)}
    notebooks = _Notebooks()
    results = []
    for f in report.findings:
        result = {
            "ruleId": f.code,
            "level": SARIF_LEVEL.get(f.severity, "warning"),
            "message": {"text": f"{f.message}\n{fix_line(f)}"},
            "locations": [_sarif_location(f.location, notebooks)],
        }
        if f.code in index:
            result["ruleIndex"] = index[f.code]
        if f.related:
            result["relatedLocations"] = [dict(_sarif_location(r.location, notebooks, r.message), id=i)
                                          for i, r in enumerate(f.related)]
        results.append(result)
    notifications = [{"level": "error", "message": {"text": message},
                      "locations": [{"physicalLocation": {"artifactLocation": _artifact(path)}}]}
                     for path, message in report.problems]
    cwd = Path(os.getcwd()).as_uri() + "/"
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "GradGuard", "version": __version__, "semanticVersion": __version__,
                                "rules": [_sarif_rule(r) for r in rules]}},
            "invocations": [{"executionSuccessful": not report.problems,
                             "toolExecutionNotifications": notifications}],
            "originalUriBaseIds": {"%SRCROOT%": {"uri": cwd}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


FORMATS = {"text": text, "json": as_json, "sarif": sarif}
