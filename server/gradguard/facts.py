"""The hover index: the engine's tensor and backward facts of one analysis, by line.

Texts shown in hovers are cut from the source, never rebuilt with ``ast.unparse``: that
recurses once per nested node, so a long method chain (``x.mul(0).mul(1)...``) would exhaust
the stack. Nothing here recurses on the tree.
"""
from __future__ import annotations

from typing import Optional

from .findings import BackwardFact, GraphStep, TensorFact
from .rules.freed import Reuse
from .values import MAYBE, YES

MAX_CHAIN = 8  # graph steps kept per fact (the last ones: nearest the hovered place)
MAX_STEP_TEXT = 80
MAX_CALL_TEXT = 60


class Facts:
    """Hover facts of one analysed module, looked up by (cell, line). Once built it holds plain
    data only (no engine state), so it is small and can be pickled to another process."""

    def __init__(self, engine, positions, main):
        self._positions, self._main = positions, main
        self._lines: dict[str, list[str]] = {}
        self.index: dict = {}
        self._build(engine)
        del self._positions, self._main, self._lines

    def at(self, line: int, column: int, cell: Optional[int] = None):
        """The innermost tensor name or backward call holding a position."""
        best, best_size = None, None
        for fact in self.index.get((cell, line), ()):
            loc = fact.location
            if (loc.line, loc.column) <= (line, column) < (loc.end_line, loc.end_column):
                size = (loc.end_line - loc.line, loc.end_column - loc.column)
                if best is None or size < best_size:
                    best, best_size = fact, size
        return best

    def _build(self, engine) -> None:
        pos, main, index = self._positions, self._main, self.index
        reused: dict = {}
        for report, _ in engine.reports.values():
            reuse = report.cause
            if isinstance(reuse, Reuse):  # a walk of freed graph: where the graph a call freed is reused
                reused.setdefault(id(reuse.info.call), []).append(pos.locate(reuse.node, reuse.module.path))
        for node, module, value, freed in engine.tensor_facts.values():
            if module is not main:
                continue
            loc = pos.locate(node, main.path)
            grad = "yes" if value.grad == YES else "maybe" if value.grad == MAYBE else "no"
            origins = tuple(sorted({f"{r.name} (line {r.node.lineno})" for r in value.roots}))
            frees = tuple(sorted({pos.locate(fi.call, fi.path) for fi in freed.values()},
                                 key=lambda l: (l.path, l.line)))
            fact = TensorFact(loc, node.id, grad, value.leaf, origins, self._chain(value.segs), frees)
            index.setdefault((loc.cell, loc.line), []).append(fact)
        for node, module, segs, retains in engine.backward_facts.values():
            if module is not main:
                continue
            loc = pos.locate(node, main.path)
            later = tuple(reused.get(id(node), ()))
            call = self._text(main.path, node, MAX_CALL_TEXT)
            fact = BackwardFact(loc, call, retains, self._chain(segs), later, bool(later) and not retains)
            for line in range(loc.line, loc.end_line + 1):
                index.setdefault((loc.cell, line), []).append(fact)

    def _chain(self, segs) -> tuple:
        steps, seen = [], {}
        for seg in sorted(segs, key=lambda s: s.order):
            stmt = seg.stmt if seg.stmt is not None else seg.site
            key = (seg.path, stmt.lineno)
            if key in seen:  # a line saves if any of its ops does: ``(x + 1).pow(2)``
                i = seen[key]
                if seg.saves and not steps[i].saves:
                    steps[i] = GraphStep(steps[i].location, steps[i].text, True)
                continue
            seen[key] = len(steps)
            text = self._text(seg.path, stmt, MAX_STEP_TEXT, first_line=True)
            steps.append(GraphStep(self._positions.locate(stmt, seg.path), text, seg.saves))
        return tuple(steps[-MAX_CHAIN:])

    def _source_lines(self, path: str) -> list[str]:
        if path not in self._lines:
            module = self._positions.project.modules.get(path)
            self._lines[path] = module.text.split("\n") if module is not None else []
        return self._lines[path]

    def _text(self, path: str, node, limit: int, first_line: bool = False) -> str:
        """The node's source text (AST columns are UTF-8 bytes), whitespace collapsed, cut to
        ``limit`` characters."""
        lines = self._source_lines(path)
        first, last = node.lineno, node.end_lineno or node.lineno
        if first_line:
            last = first
        if not 0 < first <= last <= len(lines):
            return "?"
        parts = []
        for n in range(first, last + 1):
            data = lines[n - 1].encode("utf-8")
            end = node.end_col_offset if n == node.end_lineno and node.end_col_offset is not None else len(data)
            start = node.col_offset if n == first else 0
            parts.append(data[start:end].decode("utf-8", "ignore"))
            if sum(map(len, parts)) > limit:
                break
        text = " ".join(" ".join(parts).split())
        return text if len(text) <= limit else text[:limit - 3] + "..."
