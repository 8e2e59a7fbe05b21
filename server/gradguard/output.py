"""Findings as the CLI prints them: text lines, the JSON contract, SARIF 2.1.0."""
from __future__ import annotations

import json
import os

from . import __version__
from .findings import Finding, Location
from .rules import RULES

SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _position(loc: Location) -> str:
    cell = f"cell {loc.cell}:" if loc.cell is not None else ""
    return f"{_display_path(loc.path)}:{cell}{loc.line}:{loc.column}"


def text(findings: list[Finding]) -> str:
    return "".join(f"{_position(f.location)}: {f.code} {f.message}\n" for f in findings)


def as_json(findings: list[Finding]) -> str:
    items = []
    for f in findings:
        loc = f.location
        items.append({
            "path": _display_path(loc.path) + (f"#cell{loc.cell}" if loc.cell is not None else ""),
            "line": loc.line,
            "column": loc.column,
            "end_line": loc.end_line,
            "end_column": loc.end_column,
            "code": f.code,
            "severity": f.severity,
            "message": f.message,
            "related": [{"path": _display_path(r.location.path), "line": r.location.line,
                         "column": r.location.column, "message": r.message} for r in f.related],
        })
    return json.dumps(items, indent=2, ensure_ascii=False) + "\n"


def _sarif_location(loc: Location, message: str | None = None) -> dict:
    region = {"startLine": loc.line, "startColumn": loc.column, "endLine": loc.end_line,
              "endColumn": loc.end_column}
    out = {"physicalLocation": {"artifactLocation": {"uri": _display_path(loc.path).replace(os.sep, "/")},
                                "region": region}}
    if loc.cell is not None:
        out["properties"] = {"cell": loc.cell}
    if message is not None:
        out["message"] = {"text": message}
    return out


def sarif(findings: list[Finding]) -> str:
    rules = [{"id": r.code, "name": r.name, "shortDescription": {"text": r.summary["en"]},
              "helpUri": r.doc, "defaultConfiguration": {"level": SARIF_LEVEL[r.severity]}}
             for r in RULES.values()]
    results = [{
        "ruleId": f.code,
        "level": SARIF_LEVEL.get(f.severity, "warning"),
        "message": {"text": f.message},
        "locations": [_sarif_location(f.location)],
        "relatedLocations": [dict(_sarif_location(r.location, r.message), id=i)
                             for i, r in enumerate(f.related)],
    } for f in findings]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "gradguard", "version": __version__,
                                      "informationUri": "https://github.com/gradguard/gradguard",
                                      "rules": rules}},
                  "results": results}],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


FORMATS = {"text": text, "json": as_json, "sarif": sarif}
