"""The graph picture of one finding: what the analysis knows of its graph, laid out as data.

Built from the finding (its related places and fixes) and the hover index (``facts.Facts``):
the requires-grad origins, the steps that built the graph down to the tensor the finding is
about, which steps save tensors, the backward that freed them (iteration k when a loop carries
the graph), the backward that walks them again (iteration k + 1) or the in-place write that
changed a saved tensor, and where the preferred quick fix cuts. Rendering is graph_render.py's.
Nothing here runs or imports the analysed code, and the same inputs give the same picture.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from .facts import MAX_CHAIN
from .rules import RULES
from .findings import BackwardFact, Finding, GraphStep, Location, TensorFact

Texter = Callable[[Location], Optional[str]]  # a Location -> its source text (one line), if known
_ORIGIN_RE = re.compile(r"^(.*) \(line (\d+)\)$")
#: related places that are events after the graph was built (their key -> the node's role)
EVENT_ROLES = {"freed": "free", "modified": "modify", "grad_off": "cut_off", "detached": "cut_off", "reentrant": "cut_off",
               "rebuilt": "cut_off", "no_create_graph": "cut_off"}
#: related places drawn in the chain of values; any other is an event ("place": as its message says)
CHAIN_KEYS = ("built", "origin_tensor", "origin_params", "saved")


@dataclass(frozen=True)
class Node:
    role: str  # origin | step | free | walk | modify | cut_off | place | finding
    text: str  # the code, as written (one line)
    location: Location
    note: str = ""  # what happens there, in a few words
    saves: Optional[bool] = None  # steps: whether its ops save tensors for backward
    freed: bool = False  # steps: a backward of the story freed what it saved
    saved: bool = False  # steps: it saved the tensor an in-place write changed later
    lane: int = 0  # events: 0 iteration k (or the only one), 1 iteration k + 1


@dataclass(frozen=True)
class Cut:
    """Where the preferred quick fix acts: before ``index`` of the chain (or on an event)."""

    title: str
    location: Location
    step: Optional[int]  # index into ``Picture.chain``, or None when it acts on an event
    event: Optional[int]  # index into ``Picture.events``


@dataclass(frozen=True)
class Picture:
    finding: Finding
    origins: tuple[Node, ...]
    chain: tuple[Node, ...]  # graph steps, origin side first; the last builds the finding's tensor
    events: tuple[Node, ...]  # frees, re-walks, in-place writes, the finding itself, in order
    loop: bool  # a loop carries the graph: events sit in lanes "iteration k" and "k + 1"
    cut: Optional[Cut]
    earlier: bool  # the chain may start earlier than shown (the index keeps its last steps)


def _tensor_facts(facts, loc: Location) -> list[TensorFact]:
    return [f for f in facts.index.get((loc.cell, loc.line), ()) if isinstance(f, TensorFact)]


def _backward_fact(facts, loc: Location) -> Optional[BackwardFact]:
    for fact in facts.index.get((loc.cell, loc.line), ()):
        if isinstance(fact, BackwardFact) and fact.location.line == loc.line and fact.location.column == loc.column:
            return fact
    return None


def _within(inner: Location, outer: Location) -> bool:
    return ((outer.line, outer.column) <= (inner.line, inner.column)
            and (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column))


def _subject(facts, finding: Finding) -> Optional[TensorFact]:
    """The tensor the finding is about: the one its range holds with the longest known chain."""
    loc = finding.location
    inside = [f for f in _tensor_facts(facts, loc) if _within(f.location, loc)] or _tensor_facts(facts, loc)
    inside.sort(key=lambda f: (-len(f.chain), f.location.column))
    return inside[0] if inside else None


def _built(facts, loc: Location, what: str) -> Optional[TensorFact]:
    """The tensor a "computed here" place names (its name, else the one with the longest chain)."""
    candidates = _tensor_facts(facts, loc)
    named = [f for f in candidates if f.name == what]
    pool = named or candidates
    pool.sort(key=lambda f: (-len(f.chain), f.location.column))
    return pool[0] if pool else None


def _step_key(loc: Location) -> tuple:
    return (loc.path, loc.cell or 0, loc.line)


def _merge_steps(groups: Sequence[Sequence[GraphStep]], main_path: str) -> list[GraphStep]:
    """Every step once, in source order (the analysed file first), each with the most
    precise ``saves`` any group gave it."""
    merged: dict[tuple, GraphStep] = {}
    for steps in groups:
        for step in steps:
            key = _step_key(step.location)
            known = merged.get(key)
            if known is None or (known.saves is None and step.saves is not None):
                merged[key] = step
    return sorted(merged.values(), key=lambda s: (s.location.path != main_path,) + _step_key(s.location))


def _origins(finding: Finding, subject: Optional[TensorFact], built: Optional[TensorFact]) -> list[Node]:
    out = []
    for rel in finding.related:
        if rel.key in ("origin_tensor", "origin_params"):
            name = dict(rel.args).get("name", "?")
            note = "requires grad" if rel.key == "origin_tensor" else "parameters"
            node = Node("origin", name, rel.location, note)
            if all((n.text, n.location.line) != (name, rel.location.line) for n in out):
                out.append(node)
    if out:
        return sorted(out, key=lambda n: (n.location.line, n.location.column))
    seen = set()
    for fact in (built, subject):
        for origin in fact.origins if fact is not None else ():
            match = _ORIGIN_RE.match(origin)
            if match and origin not in seen:
                seen.add(origin)
                line = int(match.group(2))
                where = Location(finding.location.path, line, 1, line, 1,
                                 finding.location.cell if finding.location.cell else None)
                out.append(Node("origin", match.group(1), where, "requires grad"))
    return sorted(out, key=lambda n: (n.location.line, n.text))


def _call_text(text: Texter, loc: Location, default: str) -> str:
    return text(loc) or default


def build(finding: Finding, facts, text: Texter) -> Picture:
    """The picture of ``finding``; ``facts`` is the analysis' hover index (``Analysis.facts``)."""
    related = {rel.key: rel for rel in finding.related}
    subject = _subject(facts, finding) if facts is not None else None
    built = None
    if facts is not None and "built" in related:
        built = _built(facts, related["built"].location, dict(related["built"].args).get("what", "").strip("`"))
    freer = None
    if facts is not None and "freed" in related:
        freer = _backward_fact(facts, related["freed"].location)
    loop = bool(dict(related["freed"].args).get("when")) if "freed" in related else False

    groups = [f.chain for f in (built, subject) if f is not None] + ([freer.frees] if freer else [])
    steps = _merge_steps(groups, finding.location.path)
    freed_lines = {_step_key(s.location) for s in freer.frees} if freer else set()
    saved_at = related["saved"].location if "saved" in related else None
    if saved_at is not None and _step_key(saved_at) not in {_step_key(s.location) for s in steps}:
        steps = _merge_steps([steps, [GraphStep(saved_at, dict(related["saved"].args).get("what", "?"), True)]],
                             finding.location.path)
    chain = tuple(Node("step", s.text, s.location, saves=s.saves, freed=_step_key(s.location) in freed_lines,
                       saved=saved_at is not None and _step_key(s.location) == _step_key(saved_at))
                  for s in steps)

    earlier = max((len(f.chain) for f in (built, subject) if f is not None), default=0) >= MAX_CHAIN
    events = []
    for rel in finding.related:
        if rel.key in CHAIN_KEYS:
            continue
        role = EVENT_ROLES.get(rel.key, "place")
        what = dict(rel.args).get("what") or dict(rel.args).get("call", "").strip("`")
        note = rel.message
        if role == "modify":
            note = "changes a saved tensor"
        elif role == "free":
            count = sum(1 for n in chain if n.freed and n.saves)
            note = (f"frees {count}{'+' if earlier else ''} saved step{'s' if count != 1 else ''}" if count
                    else "frees the graph (no step of it saves tensors)")
        events.append(Node(role, _call_text(text, rel.location, what or "?"), rel.location, note))
    rewalk = finding.code in ("GG101", "GG102") and "freed" in related
    if finding.code == "GG103":
        final_note = "finds it changed: raises"
    elif rewalk:
        final_note = "walks them again: raises" if finding.code == "GG101" else "walks them again (nothing saved: no error)"
    else:
        final_note = RULES[finding.code].name if finding.code in RULES else finding.code
    final_role = "walk" if rewalk or finding.code == "GG103" else "finding"
    final = Node(final_role, _call_text(text, finding.location, dict(finding.args).get("call", "?").strip("`")),
                 finding.location, final_note, lane=1 if loop else 0)
    if loop:  # the free happened in iteration k, everything else of the story in k + 1
        events = [Node(e.role, e.text, e.location, e.note, lane=0 if e.role == "free" else 1) for e in events]
    events.sort(key=lambda e: (e.lane,) + _step_key(e.location) + (e.location.column,))
    # the finding ends the story, even where it sits above the call that led to it (a custom
    # autograd function's backward, run by the ``backward()`` below it)
    events.append(final)
    return Picture(finding, tuple(_origins(finding, subject, built)), chain, tuple(events), loop,
                   _cut(finding, chain, events), earlier)


def _cut(finding: Finding, chain: Sequence[Node], events: Sequence[Node]) -> Optional[Cut]:
    fixes = [f for f in finding.fixes if f.preferred] or list(finding.fixes)
    if not fixes:
        return None
    fix = fixes[0]
    for _, target in sorted(fix.targets):
        for i, node in enumerate(chain):
            if _step_key(node.location) == _step_key(target):
                return Cut(fix.title, target, i, None)
        for i, node in enumerate(events):
            if _step_key(node.location) == _step_key(target):
                return Cut(fix.title, target, None, i)
    target = sorted(fix.targets)[0][1] if fix.targets else finding.location
    return Cut(fix.title, target, None, None)


def finding_at(findings: Sequence[Finding], line: int, cell: Optional[int] = None,
               column: Optional[int] = None) -> Optional[Finding]:
    """The finding on ``line`` (of ``cell``), the one holding ``column`` first."""
    on_line = [f for f in findings if f.location.cell == cell and f.location.line <= line <= f.location.end_line]
    if column is not None:
        holding = [f for f in on_line if f.location.column <= column <= f.location.end_column]
        on_line = holding or on_line
    return on_line[0] if on_line else None
