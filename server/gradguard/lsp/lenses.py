"""Code lenses on backward calls and inlay hints, from the hover index (``facts.Facts``).

Plain data in engine coordinates (1-based lines, code-point columns); the server converts
them. Nothing is analysed here: the facts are the ones hovers show.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from ..findings import BackwardFact, Finding, Location, TensorFact

MAX_NAMES = 3  # values named in a lens or a hint; more are "…"
_TARGET = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=(?!=)")
_ASSIGNED = re.compile(r"^\s*(?::[^=]*)?(?:[-+*/@%&|^]|//|\*\*|<<|>>)?=(?!=)")


@dataclass(frozen=True)
class Lens:
    location: Location  # the backward call
    title: str
    finding: Optional[Finding]  # the finding it takes part in (its lens opens the graph)


@dataclass(frozen=True)
class Hint:
    line: int
    column: int  # the hint goes before this column (1-based code points)
    cell: Optional[int]
    label: str
    tooltip: str


def _name_of(step_text: str) -> Optional[str]:
    match = _TARGET.match(step_text)
    return match.group(1) if match else None


def _names(names: Sequence[str]) -> str:
    shown = list(dict.fromkeys(n for n in names if n))[:MAX_NAMES + 1]
    text = " ← ".join(shown[:MAX_NAMES])
    return text + (" ← …" if len(shown) > MAX_NAMES else "")


def _origin_names(origins: Sequence[str]) -> list[str]:
    return [o.rsplit(" (line ", 1)[0] for o in origins]


def _involved(findings: Sequence[Finding]) -> dict:
    """(cell, line, column) of each backward a finding is at or was freed by -> the finding."""
    out: dict = {}
    for finding in findings:
        places = [finding.location] + [r.location for r in finding.related if r.key == "freed"]
        for loc in places:
            out.setdefault((loc.cell, loc.line, loc.column), finding)
    return out


def backward_lenses(facts, findings: Sequence[Finding], mode: str, cell: Optional[int] = None) -> list[Lens]:
    """One lens per backward call (``mode`` "all"), or per call a finding involves ("findings")."""
    if mode == "off" or facts is None:
        return []
    involved = _involved(findings)
    backwards = {}
    for (fact_cell, _), items in facts.index.items():
        if fact_cell != cell:
            continue
        for fact in items:
            if isinstance(fact, BackwardFact):
                backwards[(fact.location.line, fact.location.column)] = fact
    walked_after: dict = {}  # a later call -> the lines of the calls whose freed graph it walks
    for fact in backwards.values():
        for later in fact.reused_by:
            walked_after.setdefault((later.line, later.column), []).append(fact.location.line)
    lenses = []
    for key in sorted(backwards):
        fact = backwards[key]
        finding = involved.get((cell, fact.location.line, fact.location.column))
        if mode == "findings" and finding is None:
            continue
        lenses.append(Lens(fact.location, _lens_title(facts, fact, walked_after.get(key, [])), finding))
    seen = {(lens.location.line, lens.location.column) for lens in lenses}
    for finding in findings:  # a finding at a call the index has no backward fact for (GG103, GG104…)
        loc = finding.location
        if loc.cell == cell and (loc.line, loc.column) not in seen and finding.code.startswith("GG1"):
            seen.add((loc.line, loc.column))
            lenses.append(Lens(loc, f"{finding.code}: show the graph", finding))
    return sorted(lenses, key=lambda lens: (lens.location.line, lens.location.column))


def _lens_title(facts, fact: BackwardFact, walks: Sequence[int]) -> str:
    parts = []
    if walks:
        lines = ", ".join(str(n) for n in sorted(set(walks)))
        parts.append(f"walks the graph freed on line {lines}")
    if fact.retains:
        parts.append("keeps the graph (retain_graph=True)")
    else:
        saved = [s for s in fact.frees if s.saves]
        names = [_name_of(s.text) for s in reversed(fact.frees)]
        names += _origin_names(_receiver_origins(facts, fact))
        count = f"{len(saved)} saved step{'s' if len(saved) != 1 else ''}"
        parts.append(f"frees {count} of {_names(names)}" if saved and any(names) else
                     f"frees {count}" if saved else "frees no saved tensors")
    return " · ".join(parts)


def _receiver_origins(facts, fact: BackwardFact) -> tuple:
    loc = fact.location
    for other in facts.index.get((loc.cell, loc.line), ()):
        if isinstance(other, TensorFact) and (loc.line, loc.column) <= (other.location.line, other.location.column) \
                and other.origins:
            return other.origins
    return ()


def inlay_hints(facts, lines: Sequence[str], first: int, last: int, cell: Optional[int] = None) -> list[Hint]:
    """Hints on lines ``first``..``last`` (1-based): after an assignment of a tensor that
    carries graph, what it requires grad from; after a backward, what it freed."""
    if facts is None:
        return []
    hints: dict = {}
    for line in range(max(1, first), min(last, len(lines)) + 1):
        text = lines[line - 1].rstrip("\r\n")
        for fact in facts.index.get((cell, line), ()):
            loc = fact.location
            if isinstance(fact, BackwardFact):
                if loc.end_line != line:
                    continue
                if fact.retains:
                    label, tip = "‹keeps graph›", "retain_graph=True: the graph stays for a later backward"
                else:
                    saved = sum(1 for s in fact.frees if s.saves)
                    label = f"‹frees {saved} saved›" if saved else "‹frees graph›"
                    tip = "Frees the saved tensors of: " + ", ".join(f"line {s.location.line}" for s in fact.frees)
                hints[(line, loc.end_column)] = Hint(line, loc.end_column, cell, label, tip)
            elif (fact.requires_grad == "yes" and not fact.is_leaf and fact.origins
                  and loc.line == line and _ASSIGNED.match(text[loc.end_column - 1:])
                  and not text[:loc.column - 1].strip()):
                code = text if "'" in text or '"' in text else text.split("#", 1)[0]  # a "#" may be in a string
                end = len(code.rstrip()) + 1
                names = _origin_names(fact.origins)
                label = f"‹grad ← {', '.join(names[:MAX_NAMES])}{', …' if len(names) > MAX_NAMES else ''}›"
                hints.setdefault((line, end), Hint(line, end, cell, label,
                                                   f"{fact.name} carries graph from " + ", ".join(fact.origins)))
    return [hints[key] for key in sorted(hints)]
