"""``gradguard explain PATH:LINE``: the graph picture of the finding on that line.

``PATH:CELL:LINE`` for a notebook (cell numbers as ``check`` prints them). Exit 0 with the
picture on stdout, 1 when no finding is on that line (the lines that have one go to stderr),
2 when the file cannot be read or the place is malformed.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Optional

from . import graph_render
from .config import load_project_config
from .findings import Location
from .graph_picture import build, finding_at
from .output import display_path

_PLACE = re.compile(r"^(?P<path>.+?):(?:(?P<cell>\d+):)?(?P<line>\d+)$")


def parse_place(place: str) -> Optional[tuple[str, Optional[int], int]]:
    match = _PLACE.match(place)
    if not match:
        return None
    cell = match.group("cell")
    return match.group("path"), int(cell) if cell else None, int(match.group("line"))


def source_lines(path: str) -> dict:
    """(cell or None) -> the lines of that cell, or of the file."""
    from .sources import read_notebook, read_python

    if path.endswith(".ipynb"):
        return {cell.number: cell.text.split("\n") for cell in read_notebook(path)}
    return {None: read_python(path).split("\n")}


def texter(path: str, lines: dict):
    def text(loc: Location) -> Optional[str]:
        if os.path.abspath(loc.path) != os.path.abspath(path) or loc.line != loc.end_line:
            return None
        cell = lines.get(loc.cell)
        if cell is None or not 0 < loc.line <= len(cell):
            return None
        return cell[loc.line - 1][loc.column - 1:loc.end_column - 1] or None
    return text


def link(loc: Location) -> str:
    """A link relative to the current folder, so that pictures made in CI are the same bytes
    on every machine."""
    return f"{display_path(loc.path)}#L{loc.line}"


def render(picture, fmt: str) -> str:
    if fmt == "svg":
        return graph_render.svg(picture, link)
    if fmt == "html":
        return graph_render.html(picture, link)
    return graph_render.text(picture)


def explain(place: str, fmt: str) -> int:
    from .analysis import analyze_path
    from .sources import SourceError

    parsed = parse_place(place)
    if parsed is None:
        print(f"gradguard explain: expected PATH:LINE (or PATH:CELL:LINE for a notebook), got {place!r}",
              file=sys.stderr)
        return 2
    path, cell, line = parsed
    if path.endswith(".ipynb") and cell is None:
        print("gradguard explain: a notebook's place is PATH:CELL:LINE", file=sys.stderr)
        return 2
    try:
        lines = source_lines(path)
        analysis = analyze_path(path, facts=True)
    except SourceError as exc:
        print(f"gradguard explain: {exc.message}", file=sys.stderr)
        return 2
    config = load_project_config(os.path.dirname(os.path.abspath(path)))
    findings = [f for f in config.apply(analysis.findings)
                if os.path.abspath(f.location.path) == os.path.abspath(path)]
    finding = finding_at(findings, line, cell)
    if finding is None:
        places = ", ".join(graph_render.where(f.location) for f in findings) or "none"
        print(f"gradguard explain: no finding on {place} (findings in {display_path(path)}: {places})",
              file=sys.stderr)
        return 1
    picture = build(finding, analysis.facts, texter(path, lines))
    sys.stdout.write(render(picture, fmt))
    return 0
