"""The public entry points: analyse a file, a source text or a notebook's cells.

This module turns the engine's raw results (AST nodes, segments) into :mod:`findings` data
with positions in code points, notebook cells resolved, and suppression comments honoured.
"""
from __future__ import annotations

import ast
import bisect
import contextlib
import gc
import logging
import os
import re
import sys
from typing import Optional

from .rules import report_finding
from .parents import Parents
from .engine import COMPILED, MAX_NESTING, Cancelled, Engine  # noqa: F401 - Cancelled is part of this module's API
from .facts import Facts
from .reach import Reach, calls_backward, identifiers, triggered
from .findings import Finding, Location
from . import skeleton
from .resolve import (ROOTS, ModuleInfo, Project, exists, forget_trees, probed, release_retired, remember_tree,
                      tree_of)
from .sources import Cell, SourceError, parse, read_notebook, read_python, strip_magics, unparsed_stand_in
from .state import State
from .suppress import suppressed
from . import torch_api as api
from .values import Class, Func, LibRef

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
log = logging.getLogger("gradguard")
# Abstract statements shared by the functions nothing called (analysed with unknown arguments).
ENTRY_BUDGET = 1_000
_IDENTIFIERS = re.compile(r"[^\W\d]\w*")


class Positions:
    """Converts AST positions (UTF-8 byte columns, lines of the analysed text) to Locations."""

    def __init__(self, project: Project, main: ModuleInfo, cells: Optional[list] = None):
        self.project, self.main = project, main
        self.lines: dict[str, list[str]] = {main.path: main.text.split("\n")}
        self.cell_starts: list[int] = []
        self.cell_numbers: list[int] = []
        if cells is not None:
            line = 1
            for cell in cells:
                self.cell_starts.append(line)
                self.cell_numbers.append(cell.number)
                line += cell.text.count("\n") + 1

    def _lines(self, path):
        if path not in self.lines:
            module = self.project.modules.get(path)
            self.lines[path] = module.text.split("\n") if module is not None else []
        return self.lines[path]

    def column(self, path, line, byte_col) -> int:
        lines = self._lines(path)
        if 0 < line <= len(lines):
            text = lines[line - 1]
            if len(text) > LONG_LINE and text.isascii():
                return byte_col + 1  # (one byte a character: a generated table's line is not re-read)
            return len(text.encode("utf-8")[:byte_col].decode("utf-8", "ignore")) + 1
        return byte_col + 1

    def locate(self, node, path: str) -> Location:
        line, end_line = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        col = self.column(path, line, node.col_offset)
        end_col = self.column(path, end_line, getattr(node, "end_col_offset", None) or node.col_offset)
        cell = None
        if path == self.main.path and self.cell_starts:
            i = bisect.bisect_right(self.cell_starts, line) - 1
            start = self.cell_starts[i]
            cell, line, end_line = self.cell_numbers[i], line - start + 1, end_line - start + 1
        return Location(path, line, col, end_line, end_col, cell)

    def to_text_line(self, line: int, cell: Optional[int]) -> int:
        if cell is None or not self.cell_starts:
            return line
        return self.cell_starts[self.cell_numbers.index(cell)] + line - 1


class Analysis:
    def __init__(self, path: str, findings: list, facts: Optional[Facts], positions: Optional[Positions],
                 main: Optional[ModuleInfo], dependencies: tuple = (), truncated: tuple = ()):
        self.path = path
        self.findings: list[Finding] = findings
        # the other files whose text this result depends on (the project modules it read)
        self.dependencies: tuple[str, ...] = dependencies
        # (path, line) of the code left unanalysed over budget: findings there are not reported
        self.truncated: tuple[tuple[str, int], ...] = truncated
        self._positions, self._main = positions, main
        self._facts = facts

    @property
    def facts(self) -> Optional[Facts]:
        """The hover index (None when the analysis kept no facts): plain data."""
        return self._facts

    def fact_at(self, line: int, column: int, cell: Optional[int] = None):
        """The hover fact for the innermost tensor name or backward call at a position."""
        facts = self.facts
        return facts.at(line, column, cell) if facts is not None else None


def project_root(path: str) -> str:
    directory = os.path.dirname(os.path.abspath(path))
    return probed(ROOTS, directory, lambda: _root_of(directory))


def _root_of(directory: str) -> str:
    probe = directory
    while True:
        if any(exists(os.path.join(probe, m)) for m in PROJECT_MARKERS):  # probes kept a few seconds
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return directory
        probe = parent


def analyze_source(text: str, path: str = "<stdin>", root: Optional[str] = None, *,
                   facts: bool = False, overlay: Optional[dict] = None, cancel=None) -> Analysis:
    """Analyse Python source. Raises :class:`SourceError` when it cannot be parsed.

    ``facts=True`` also records what hovers show (:meth:`Analysis.fact_at`); it costs time.
    ``cancel``: a callable looked at every thousand or so abstract statements; when it returns
    True the analysis stops by raising :class:`Cancelled`."""
    with _collector_paused():
        return _analyze(text, None, path, root, None, facts, overlay, cancel)


def analyze_cells(cells: list, path: str, root: Optional[str] = None, *, numbers: Optional[list] = None,
                  facts: bool = False, cancel=None) -> Analysis:
    """Analyse a notebook's code cells in order, as one program.

    Findings carry the 1-based cell number (``numbers[i]`` or ``i + 1``) and cell-relative
    lines. A cell that does not parse is unknown code (``sources.unparsed_stand_in``) rather than failing
    the whole notebook.
    """
    numbered = [Cell(numbers[i] if numbers else i + 1, strip_magics(c)) for i, c in enumerate(cells)]
    kept, imported = [], set()
    for cell in numbered:
        try:
            tree = parse(cell.text, path)
        except SourceError:
            kept.append(Cell(cell.number, unparsed_stand_in(cell.text, imported)))
            continue
        kept.append(cell)
        imported.update((a.asname or a.name).split(".")[0] for node in tree.body
                        if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names)
    text = "\n".join(c.text for c in kept)
    with _collector_paused():
        tree = parse(text, path)
        return _analyze(text, tree, path, root, kept, facts, None, cancel)


def analyze_path(path: str, root: Optional[str] = None, *, facts: bool = False) -> Analysis:
    """Analyse a ``.py`` file or a ``.ipynb`` notebook."""
    if path.endswith(".ipynb"):
        cells = read_notebook(path)
        return analyze_cells([c.text for c in cells], path, root, numbers=[c.number for c in cells], facts=facts)
    return analyze_source(read_python(path), path, root, facts=facts)


# A full pass of the cyclic collector is due when the memory blocks allocated have grown by this
# many since the first count (see ``_collector_paused``): some 50 MB.
FULL_COLLECT_GROWTH = 800_000
# objects frozen since the last count (new ones, less the freed: gc's gen-0 count); counting
# blocks walks the allocator's arenas, a millisecond, so it waits until this many
COUNT_AFTER = 500_000
_grown = [0]
_after_full: list = [None]  # the blocks allocated at the first count, then after each full pass


@contextlib.contextmanager
def _collector_paused():
    """Parsing and analysis allocate many objects, most of them long-lived (the loaded modules'
    trees) or freed by reference counting: an analysis breaks the cycles among what it made
    (its segments, its module's classes and functions, the cached modules it retired). A
    collector pass after each analysis would scan them all again, and cost a third of the run.
    What survives an analysis is frozen out of the collector's view instead, and a full pass runs
    only if the tracked objects grow by ``FULL_COLLECT_GROWTH`` past their first count: the
    cyclic garbage left (classes made inside functions) is small, and caches are bounded.

    Growth is first estimated from gc's allocation count, which never subtracts what an analysis
    frees of older objects; only then are the allocated blocks counted (``sys.getallocatedblocks``:
    a walk over the allocator's arenas, a thirtieth of one over the frozen objects), and a full
    pass (half a second) is paid for only if they did grow."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            _grown[0] += gc.get_count()[0]
            gc.freeze()
            if _grown[0] > COUNT_AFTER:
                _grown[0] = 0
                blocks = sys.getallocatedblocks()
                if _after_full[0] is None:
                    _after_full[0] = blocks
                elif blocks > _after_full[0] + FULL_COLLECT_GROWTH:
                    gc.unfreeze()
                    gc.collect()
                    gc.freeze()
                    _after_full[0] = sys.getallocatedblocks()
            gc.enable()


@contextlib.contextmanager
def _frames_for_nesting():
    """Room in Python's recursion limit for ``engine.MAX_NESTING`` nested evaluations (a few
    frames each) when the engine runs as Python: from 3.11 on, Python calls Python without the C
    stack, so the limit is only a count. (The compiled engine counts itself; 3.10 keeps its limit.)"""
    before = sys.getrecursionlimit()
    wanted = _depth() + FRAMES_PER_NESTING * MAX_NESTING
    raise_it = not COMPILED and sys.version_info >= (3, 11) and before < wanted
    if raise_it:
        sys.setrecursionlimit(wanted)
    try:
        yield
    finally:
        if raise_it:
            sys.setrecursionlimit(before)


def _depth() -> int:
    """Frames on the stack now (counted, not kept: a kept frame would hold itself in a cycle)."""
    frame, depth = sys._getframe(), 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    del frame
    return depth


FRAMES_PER_NESTING = 6
LONG_LINE = 1_000  # characters: past this, an ASCII line's columns are its byte offsets


def _analyze(text, tree, path, root, cells, facts, overlay, cancel=None) -> Analysis:
    with _frames_for_nesting():
        return _analyze_within(text, tree, path, root, cells, facts, overlay, cancel)


def _analyze_within(text, tree, path, root, cells, facts, overlay, cancel) -> Analysis:
    try:
        misread = skeleton.mismatches
        result = _run(text, tree, path, root, cells, facts, overlay, cancel)
        if skeleton.mismatches != misread:
            # a skeleton was cut where a string or bracket fooled it, and a body was read from
            # the whole tree instead: what ran of the skeleton is suspect. Again, parsed whole.
            forget_trees(skeleton.WHOLE)
            result = _run(text, tree, path, root, cells, facts, overlay, cancel)
        return result
    except RecursionError:
        raise SourceError(f"{path}: nested too deeply to analyse") from None


def _run(text, tree, path, root, cells, facts, overlay, cancel) -> Analysis:
    path = os.path.abspath(path) if not path.startswith("<") else path
    project = Project(root or (project_root(path) if not path.startswith("<") else os.getcwd()), overlay, path)
    reach = Reach(project, path, text)
    if not facts and not reach.runs(path) and not (triggered(text) and reach.may_hold_grad(path)):
        # no backward can run from here, nor can another rule's finding be here: nothing to
        # report and no hover asked for, so the file is only scanned, not even parsed
        return Analysis(path, [], None, None, None, project.dependencies(path))
    if tree is None:
        tree = tree_of(path, text)
    main = ModuleInfo(path, "__main__", text, tree)
    project.modules[path] = main
    engine = Engine(project)
    engine.collect_facts = facts
    engine.cancel = cancel  # called now and then; True makes the analysis raise Cancelled
    engine.main = main
    end = engine.run_module(main, main.env)
    _run_uncalled(engine, main, end)
    positions = Positions(project, main, cells)
    parents = Parents(tree)
    findings = []
    context = {"main_path": path, "parents": parents, "trained": engine.trained}
    for report, module in engine.reports.values():
        finding = report_finding(report, module.path, positions.locate, context)
        if not suppressed(finding, positions):
            findings.append(finding)
    findings.sort(key=lambda f: (f.location.path, f.location.cell or 0, f.location.line, f.location.column, f.code))
    truncated = tuple(sorted({(p, node.lineno) for node, p in engine.truncated}))
    if truncated:
        log.info("%s: over the analysis budget, left unanalysed: %s", path,
                 ", ".join(f"{os.path.basename(p)}:{line}" for p, line in truncated[:10]))
    remember_tree(path, text, tree)
    # the hover index is built now, as plain data, so that this analysis's values can be let go
    # (modules retired from the cache are released only then: kept, they grew a long-lived
    # editor or benchmark process by some 50 MB per 300 files, and each collector pass with it)
    index = Facts(engine, positions, main) if facts else None
    main.release(end.globals if end is not None else {})
    engine.release_segs()
    release_retired()
    return Analysis(path, findings, index, positions, main, project.dependencies(path), truncated)



def _run_uncalled(engine: Engine, main: ModuleInfo, end: Optional[State]) -> None:
    """Functions and methods no analysed code called are analysed with unknown arguments,
    those that can reach a backward (their text, or a function they name, mentions one)."""
    if end is None:
        return
    funcs = []
    for value in list(end.globals.values()):
        if type(value) is Func and value.module is main and type(value.node) is not ast.Lambda:
            funcs.append(value)
        elif type(value) is Class and value.module is main:
            funcs.extend(v for v in value.attrs.values()
                         if type(v) is Func and v.module is main and type(v.node) is not ast.Lambda)
    relevant = _reaching_free(funcs)
    # those that call a backward themselves first; together they get a budget of their own
    entries = sorted((fn for fn in funcs if fn.node not in engine.called and fn in relevant),
                     key=lambda fn: not calls_backward(fn.module.source_of(fn.node)))
    engine.limit = min(engine.limit, engine.executed + ENTRY_BUDGET)
    # the names a call that switches grad recording on ends with (their aliases too): a body
    # whose text has none is not walked for one
    switches = _GRAD_MODE_NAMES | {name for name, v in end.globals.items()
                                   if type(v) is LibRef and v.qual in api.GRAD_MODE}
    for fn in entries:
        if engine.executed >= engine.limit:
            engine.truncated.append((fn.node, main.path))
            break
        # (one that switches grad recording on itself is run where it is off: its callers')
        source = fn.module.source_of(fn.node)
        grad = not (any(name in source for name in switches) and _switches_grad_on(fn.node, end.globals))
        engine.run_entry(main, fn, State(None, dict(end.globals), dict(end.heap), {}, grad))


_GRAD_MODE_NAMES = frozenset(name.rsplit(".", 1)[1] for name in api.GRAD_MODE)


def _switches_grad_on(fn: ast.AST, globals_: dict) -> bool:
    """Whether the function's own body turns grad recording on (``torch.set_grad_enabled(True)``,
    ``with torch.enable_grad():``), the names resolved through the module's imports."""
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        todo.extend(ast.iter_child_nodes(node))
        if not isinstance(node, ast.Call):
            continue
        parts, f = [], node.func
        while isinstance(f, ast.Attribute):
            parts.append(f.attr)
            f = f.value
        base = globals_.get(f.id) if isinstance(f, ast.Name) else None
        if type(base) is not LibRef:
            continue
        spec = api.GRAD_MODE.get(".".join([base.qual, *reversed(parts)]))
        first = node.args[0] if node.args else None
        given = first.value if isinstance(first, ast.Constant) else None
        if spec is True or spec == "arg0" and given is True or spec == "not_arg0" and given is False:
            return True
    return False


def _reaching_free(funcs: list) -> set:
    """The functions whose text calls a backward, or names one of them that does. Names are
    whole identifiers (``train`` is not named by ``self.training``), and a function's own
    ``def`` line names nothing: every ``forward`` would otherwise reach a backward as soon as
    one ``forward`` does. (One that reaches a backward only through imported code, a test
    calling a library's ``fit``, is not an entry: what it would find lies in the library, at
    a cost the budget is better spent on.)"""
    texts = {fn: fn.module.source_of(fn.node) for fn in funcs}
    # (a function's text is part of its module's: what the whole text lacks, none of them has)
    whole = funcs[0].module.text if funcs else ""
    frees, trigger = calls_backward(whole), triggered(whole)
    relevant = {fn for fn, text in texts.items() if (frees and calls_backward(text)) or (trigger and triggered(text))}
    pending = [fn for fn in texts if fn not in relevant]
    words = {}  # a function's identifiers, read once some new name occurs in its text
    names = {fn.node.name for fn in relevant}
    new = names
    while new and pending:
        reached = []
        for fn in pending:
            text = texts[fn]
            if any(name in text for name in new):
                if fn not in words:
                    # its own name is left out: on its def line it names nothing (and a
                    # function that calls itself reaches a backward only if its text does)
                    words[fn] = identifiers(text, _IDENTIFIERS) - {fn.node.name}
                if not words[fn].isdisjoint(new):
                    reached.append(fn)
        relevant.update(reached)
        pending = [fn for fn in pending if fn not in relevant]
        new = {fn.node.name for fn in reached} - names
        names |= new
    return relevant
