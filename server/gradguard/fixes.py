"""Turn the engine's fix intents (:class:`~gradguard.findings.Fix`) into minimal text edits.

libcst locates the nodes (it keeps comments and formatting, and its positions are code
points like the engine's); the edits themselves are small insertions/replacements so an
editor applies them without touching the rest of the file.  Every result is re-parsed:
a fix whose result would not parse raises :class:`FixError` and is not offered.

Positions follow findings.py: 1-based lines, 1-based code-point columns, end exclusive.
Sources are keyed by notebook cell (``None`` for a plain file), like ``Location.cell``.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from .findings import Finding, Fix, Location
from .fix_choice import preferred_fix
from .sources import strip_magics

Sources = Mapping[Optional[int], str]

#: The suppression comment the engine honours, on the first line of the finding's range.
SUPPRESSION_RE = re.compile(r"#\s*gradguard:\s*ignore\[([^\]]*)\]")
#: The line ends Python knows; ``str.splitlines`` also breaks on form feeds, U+2028 and others,
#: which may sit in comments and strings without ending a line.
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def python_lines(text: str) -> list[str]:
    """``text`` split after each ``\n``, ``\r\n`` or lone ``\r`` (line ends kept), as Python counts lines."""
    return _LINE.findall(text)


class FixError(Exception):
    """The fix cannot be applied to this source (it changed, or the shape is unsupported)."""


@dataclass(frozen=True)
class Edit:
    cell: Optional[int]
    line: int
    column: int
    end_line: int
    end_column: int
    text: str

    @property
    def start(self) -> tuple[int, int]:
        return (self.line, self.column)

    @property
    def end(self) -> tuple[int, int]:
        return (self.end_line, self.end_column)


# --- serialisation (LSP diagnostic/code action ``data``) -------------------------------------

def fix_to_data(fix: Fix) -> dict[str, Any]:
    return dataclasses.asdict(fix)


def fix_from_data(data: Mapping[str, Any]) -> Fix:
    return Fix(
        kind=data["kind"],
        title=data["title"],
        targets=tuple((key, Location(**loc)) for key, loc in data["targets"]),
        preferred=bool(data.get("preferred", False)),
        texts=tuple((key, text) for key, text in data.get("texts", ())),
        safe=bool(data.get("safe", False)),
    )


# --- source access -----------------------------------------------------------------------------

class _Region:
    """libcst nodes, with absolute positions, of the top-level statements covering some lines.

    Parsing only those statements keeps a fix on a 2,000-line file fast: libcst's parser and
    position metadata cost about a millisecond per line.  Top-level statements start at column
    1, so only lines shift.
    """

    def __init__(self, text: str, first_line: int):
        try:
            wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        except cst.ParserSyntaxError as exc:
            raise FixError(f"source does not parse: {exc.message}") from exc
        self.module = wrapper.module
        self._positions: Mapping[cst.CSTNode, CodeRange] = wrapper.resolve(PositionProvider)
        self._shift = first_line - 1
        order: list[cst.CSTNode] = []

        class Collect(cst.CSTVisitor):  # pre-order: outer nodes before inner ones
            def on_visit(self, node: cst.CSTNode) -> bool:
                order.append(node)
                return True

        self.module.visit(Collect())
        self.nodes = order

    def span(self, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]]:
        """1-based (line, column) start and exclusive end of ``node`` (parentheses excluded)."""
        r = self._positions[node]
        return (r.start.line + self._shift, r.start.column + 1), (r.end.line + self._shift, r.end.column + 1)

    def block_of(self, stmt: cst.CSTNode) -> tuple[Sequence[cst.CSTNode], bool]:
        """The statement list holding ``stmt``, and whether it is the module's (top level)."""
        for node in self.nodes:
            if isinstance(node, (cst.Module, cst.IndentedBlock)) and any(s is stmt for s in node.body):
                return node.body, isinstance(node, cst.Module)
        raise FixError("statement not in a block")

    def string_continuation_lines(self) -> set[int]:
        """Lines that begin inside a multi-line string literal (must not be re-indented)."""
        inside: set[int] = set()
        for node in self.nodes:
            if isinstance(node, (cst.SimpleString, cst.FormattedString)):
                (start, _), (end, _) = self.span(node)
                inside.update(range(start + 1, end + 1))
        return inside


class _Source:
    """One file or cell: its text and lines, an ast of it, libcst regions on demand."""

    def __init__(self, cell: Optional[int], text: str):
        self.cell = cell
        self.text = text
        self.lines = python_lines(text)
        first = self.lines[0] if self.lines else ""
        self.newline = "\r\n" if first.endswith("\r\n") else "\r" if first.endswith("\r") else "\n"
        self._parsed = strip_magics(text)
        self._tree: Optional[ast.Module] = None
        self._regions: dict[tuple[int, int], _Region] = {}

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = ast.parse(self._parsed)
            except SyntaxError as exc:
                raise FixError(f"source does not parse: {exc.msg}") from exc
        return self._tree

    def region(self, first: int, last: int) -> _Region:
        """The top-level statements overlapping lines ``first``..``last``."""
        lo, hi = first, last
        for stmt in self.tree.body:
            start = min([stmt.lineno] + [d.lineno for d in getattr(stmt, "decorator_list", ())])
            if start <= last and stmt.end_lineno >= first:
                lo, hi = min(lo, start), max(hi, stmt.end_lineno)
        if (lo, hi) not in self._regions:
            lines = python_lines(self._parsed)[lo - 1:hi]
            self._regions[(lo, hi)] = _Region("".join(lines), lo)
        return self._regions[(lo, hi)]

    def line_text(self, line: int) -> str:
        return self.lines[line - 1].rstrip("\r\n") if 0 < line <= len(self.lines) else ""

    @property
    def indent_unit(self) -> str:
        """One level of indentation as the file writes it (four spaces when it has no block)."""
        for node in ast.walk(self.tree):
            body = getattr(node, "body", None)
            if isinstance(body, list) and body and hasattr(node, "lineno") and body[0].lineno > node.lineno:
                outer = self.line_text(node.lineno)
                inner = self.line_text(body[0].lineno)
                unit = inner[: len(inner) - len(inner.lstrip())][len(outer) - len(outer.lstrip()):]
                if unit.strip() == "" and unit:
                    return unit
        return "    "


def _sources(sources: Sources) -> dict[Optional[int], _Source]:
    return {cell: _Source(cell, text) for cell, text in sources.items()}


def _source_for(srcs: Mapping[Optional[int], _Source], loc: Location) -> _Source:
    src = srcs.get(loc.cell)
    if src is None:
        raise FixError(f"no source for cell {loc.cell}")
    return src


def _exact(src: _Source, loc: Location, kinds: tuple[type, ...]) -> tuple[_Region, cst.CSTNode]:
    """The outermost node of one of ``kinds`` spanning exactly ``loc``."""
    region = src.region(loc.line, loc.end_line)
    want = ((loc.line, loc.column), (loc.end_line, loc.end_column))
    for node in region.nodes:
        if isinstance(node, kinds) and region.span(node) == want:
            return region, node
    raise FixError(f"nothing at {loc.line}:{loc.column}-{loc.end_line}:{loc.end_column}")


def _insert(src: _Source, pos: tuple[int, int], text: str) -> Edit:
    return Edit(src.cell, pos[0], pos[1], pos[0], pos[1], text)


def _replace(src: _Source, span, text: str) -> Edit:
    (l0, c0), (l1, c1) = span
    return Edit(src.cell, l0, c0, l1, c1, text)


# --- the fix kinds ------------------------------------------------------------------------

def _keyword_true(keyword: str, value: str = "True"):
    """``keyword=True`` (or ``value``) on the finding's call(s): set if given, added otherwise."""
    def make(srcs, fix: Fix) -> list[Edit]:
        edits = []
        for key, loc in fix.targets:
            if not key.startswith("call"):
                continue
            src = _source_for(srcs, loc)
            region, call = _exact(src, loc, (cst.Call,))
            existing = [a for a in call.args if a.keyword and a.keyword.value == keyword]
            spread = [a for a in call.args if a.star == "**"]
            if existing:
                edits.append(_replace(src, region.span(existing[0].value), value))
            elif spread:  # ``**kwargs`` may hold it too: a second value would be a TypeError
                start, end = region.span(spread[-1].value)
                edits.append(_insert(src, end, f', "{keyword}": {value}}}'))
                edits.append(_insert(src, start, "{**"))
            elif call.args:
                edits.append(_insert(src, region.span(call.args[-1].value)[1], f", {keyword}={value}"))
            else:
                end_line, end_col = region.span(call)[1]
                edits.append(_insert(src, (end_line, end_col - 1), f"{keyword}={value}"))  # before ")"
        if not edits:
            raise FixError(f"{keyword} fix without call targets")
        return edits
    return make


def _drop_keyword(keyword: str):
    """``keyword=…`` taken out of the ``call`` target (with the comma before it)."""
    def make(srcs, fix: Fix) -> list[Edit]:
        loc = fix.target("call")
        src = _source_for(srcs, loc)
        region, call = _exact(src, loc, (cst.Call,))
        args = list(call.args)
        for i, arg in enumerate(args):
            if arg.keyword and arg.keyword.value == keyword:
                before = args[i - 1].value if i else None  # its span leaves its parentheses out
                start = (_after_parens(src, region.span(before)[1], len(before.rpar)) if i and before.rpar
                         else region.span(before)[1] if i else region.span(arg)[0])
                end = region.span(arg.value)[1] if i else (region.span(args[1])[0] if len(args) > 1
                                                           else region.span(arg.value)[1])
                return [_replace(src, (start, end), "")]
        raise FixError(f"no {keyword}= keyword to take out")
    return make


def _leaf_after(srcs, fix: Fix) -> list[Edit]:
    """``torch.randn(4, requires_grad=True) * 0.01`` -> ``(torch.randn(4) * 0.01).requires_grad_()``."""
    return _drop_keyword("requires_grad")(srcs, fix) + _appended("requires_grad_")(srcs, fix)


def _retain_then_insert(srcs, fix: Fix) -> list[Edit]:
    """``retain_graph=True`` on the ``call`` targets, and new lines before ``before``."""
    return _keyword_true("retain_graph")(srcs, fix) + _insert_before(srcs, fix)


def _keep_tensors(srcs, fix: Fix) -> list[Edit]:
    """``torch.tensor(a.item() + 0.1 * b.item())`` becomes ``a + 0.1 * b`` (the ``value`` target
    without its ``.item()`` calls)."""
    loc, value_loc = fix.target("expr"), fix.target("value")
    src = _source_for(srcs, loc)
    region, node = _exact(src, loc, (cst.Call,))
    _, value = _exact(src, value_loc, (cst.BaseExpression,))

    class Unwrap(cst.CSTTransformer):
        def leave_Call(self, original, updated):
            func = updated.func
            if isinstance(func, cst.Attribute) and func.attr.value == "item" and not updated.args:
                return func.value.with_changes(lpar=[*updated.lpar, *func.value.lpar],
                                               rpar=[*func.value.rpar, *updated.rpar])
            return updated

    text = region.module.code_for_node(value.visit(Unwrap()))
    parent = next((n for n in region.nodes if any(c is node for c in n.children)), None)
    # an operand of something else keeps its grouping
    alone = isinstance(parent, (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr, cst.Arg)) or node.rpar
    return [_replace(src, region.span(node), text if alone or isinstance(value, _ATOMIC) or value.lpar else f"({text})")]


def _enable_grad(srcs, fix: Fix) -> list[Edit]:
    """The grad-mode context or decorator that turned recording off becomes ``enable_grad()``."""
    loc = fix.target("expr")
    src = _source_for(srcs, loc)
    region, node = _exact(src, loc, (cst.BaseExpression,))
    return [_replace(src, region.span(node), f"{_torch_name(srcs) or 'torch'}.enable_grad()")]


def _drop_detach(srcs, fix: Fix) -> list[Edit]:
    """``x.detach()`` / ``x.data`` / ``torch.detach(x)`` becomes ``x``."""
    loc, inner = fix.target("expr"), fix.target("receiver")
    src = _source_for(srcs, loc)
    region, node = _exact(src, loc, (cst.BaseExpression,))
    text = _text_between(src, (inner.line, inner.column), (inner.end_line, inner.end_column))
    return [_replace(src, region.span(node), text)]


_ATOMIC = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString,
           cst.ConcatenatedString, cst.FormattedString, cst.List, cst.Dict, cst.Set,
           cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp)


def _after_parens(src: _Source, pos: tuple[int, int], count: int) -> tuple[int, int]:
    """The position just after ``count`` closing parentheses following ``pos``."""
    line, col = pos
    while count:
        text = src.line_text(line)
        rest = text[col - 1:]
        stripped = rest.lstrip(" \t\\")
        if not stripped or stripped.startswith("#"):
            line, col = line + 1, 1
            if line > len(src.lines):
                raise FixError("unbalanced parentheses")
            continue
        if stripped[0] != ")":
            raise FixError("expected ')'")
        col += len(rest) - len(stripped) + 1
        count -= 1
    return line, col


def _appended(*methods: str):
    """``.detach()`` / ``.detach().cpu()`` / ``.mean()`` / ``.sum()`` after the target expression
    (parenthesised when needed)."""
    calls = "".join(f".{m}()" for m in methods)

    def make(srcs, fix: Fix) -> list[Edit]:
        loc = fix.target("expr")
        src = _source_for(srcs, loc)
        region, node = _exact(src, loc, (cst.BaseExpression,))
        start, end = region.span(node)
        if node.rpar:
            return [_insert(src, _after_parens(src, end, len(node.rpar)), calls)]
        if isinstance(node, _ATOMIC):
            return [_insert(src, end, calls)]
        return [_insert(src, start, "("), _insert(src, end, f"){calls}")]
    return make


def _detach_elements(srcs, fix: Fix) -> list[Edit]:
    """``np.mean(losses)`` -> ``np.mean([t.detach().cpu() for t in losses])`` (NumPy converts each:
    a CUDA tensor must come to the CPU first)."""
    loc = fix.target("expr")
    src = _source_for(srcs, loc)
    region, node = _exact(src, loc, (cst.BaseExpression,))
    text = _text_between(src, (loc.line, loc.column), (loc.end_line, loc.end_column))
    return [_replace(src, region.span(node), f"[t.detach().cpu() for t in {text}]")]


def _torch_name(srcs: Mapping[Optional[int], _Source]) -> Optional[str]:
    """How the code refers to the ``torch`` module (``import torch as th`` -> ``th``)."""
    for src in srcs.values():
        for node in ast.walk(src.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "torch":
                        return alias.asname or "torch"
    return None


def _import_position(src: _Source) -> tuple[int, int]:
    """Where ``import torch`` can go: after the docstring and ``from __future__`` imports."""
    line = 1
    for stmt in src.tree.body:
        is_doc = isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
            and isinstance(stmt.value.value, str)
        if not (is_doc or isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
            break
        line = stmt.end_lineno + 1
    return line, 1


def _statement_line(src: _Source, loc: Location) -> tuple[_Region, cst.CSTNode]:
    """The whole statement starting at ``loc`` (a SimpleStatementLine with a single statement)."""
    region = src.region(loc.line, loc.end_line)
    for node in region.nodes:
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) \
                and region.span(node)[0] == (loc.line, loc.column):
            if isinstance(node, cst.SimpleStatementLine) and len(node.body) > 1:
                raise FixError("several statements share the line")
            if src.line_text(loc.line)[: loc.column - 1].strip():
                raise FixError("statement does not start its line")
            return region, node
    raise FixError(f"no statement at {loc.line}:{loc.column}")


def _statements_in(src: _Source, loc: Location) -> tuple[_Region, Sequence[cst.CSTNode]]:
    """The sibling statements that make up ``loc`` (the first starts it, the last ends it)."""
    region, first = _statement_line(src, loc)
    block, _ = region.block_of(first)
    i = next(i for i, s in enumerate(block) if s is first)
    for j in range(i, len(block)):
        if region.span(block[j])[1] == (loc.end_line, loc.end_column):
            if any(isinstance(s, cst.SimpleStatementLine) and len(s.body) > 1 for s in block[i:j + 1]):
                raise FixError("several statements share a line")
            return region, block[i:j + 1]
    raise FixError("the statements do not end where the target does")


def _no_grad(srcs, fix: Fix) -> list[Edit]:
    loc = fix.target("stmt")
    src = _source_for(srcs, loc)
    region, stmts = _statements_in(src, loc)
    first_line = region.span(stmts[0])[0][0]
    last_line = region.span(stmts[-1])[1][0]
    indent = src.line_text(first_line)[: loc.column - 1]
    unit = src.indent_unit
    torch = _torch_name(srcs)
    edits = [_insert(src, (first_line, 1),
                     f"{indent}with {torch or 'torch'}.no_grad():{src.newline}{unit}")]
    skip = region.string_continuation_lines()
    for line in range(first_line + 1, last_line + 1):
        if line not in skip and src.line_text(line).strip():
            edits.append(_insert(src, (line, 1), unit))
    if torch is None:
        home = srcs.get(None) or srcs[min(c for c in srcs if c is not None)]
        edits.append(_insert(home, _import_position(home), f"import torch{home.newline}"))
    return edits


def _insert_before(srcs, fix: Fix) -> list[Edit]:
    loc = fix.target("before")
    src = _source_for(srcs, loc)
    _statement_line(src, loc)  # it must start its own line
    indent = src.line_text(loc.line)[: loc.column - 1]
    lines = fix.text("statement").splitlines()
    return [_insert(src, (loc.line, 1), "".join(f"{indent}{line}{src.newline}" for line in lines))]


def _replace_statement(srcs, fix: Fix) -> list[Edit]:
    """The statement ``stmt`` replaced by the one-line ``statement``."""
    loc = fix.target("stmt")
    src = _source_for(srcs, loc)
    _statement_line(src, loc)
    return [_replace(src, ((loc.line, loc.column), (loc.end_line, loc.end_column)), fix.text("statement"))]


def _replace_expr(srcs, fix: Fix) -> list[Edit]:
    """The expression ``expr`` replaced by ``text`` (``clip_grad_norm_(loss, …)`` -> the
    parameters)."""
    loc = fix.target("expr")
    src = _source_for(srcs, loc)
    return [_replace(src, ((loc.line, loc.column), (loc.end_line, loc.end_column)), fix.text("text"))]


def _insert_after(srcs, fix: Fix) -> list[Edit]:
    """New lines right after a statement (and its trailing comment), at its indentation."""
    loc = fix.target("after")
    src = _source_for(srcs, loc)
    _statement_line(src, loc)
    indent = src.line_text(loc.line)[: loc.column - 1]
    lines = fix.text("statement").splitlines()
    last = src.line_text(loc.end_line)
    if loc.end_line < len(src.lines):
        return [_insert(src, (loc.end_line + 1, 1), "".join(f"{indent}{line}{src.newline}" for line in lines))]
    # the statement ends the text: start the new lines after its end of line
    return [_insert(src, (loc.end_line, len(last.rstrip("\r\n")) + 1),
                    "".join(f"{src.newline}{indent}{line}" for line in lines))]


_TIGHTER_THAN_ADD = (cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.MatrixMultiply,
                     cst.Power)


def _operand(text: str) -> str:
    """``text`` as an operand of ``+`` (parenthesised unless it binds at least as tightly)."""
    try:
        expr = cst.parse_expression(text.strip())
    except cst.ParserSyntaxError as exc:
        raise FixError(f"bad loss expression {text!r}") from exc
    tight = isinstance(expr, _ATOMIC) or expr.lpar or (
        isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _TIGHTER_THAN_ADD))
    return text.strip() if tight else f"({text.strip()})"


def _sum_losses(srcs, fix: Fix) -> list[Edit]:
    first_loc, second_loc = fix.target("first"), fix.target("second")
    first_src, second_src = _source_for(srcs, first_loc), _source_for(srcs, second_loc)
    region, first = _statement_line(first_src, first_loc)
    removal = _removal(first_src, region, first)

    region, call = _exact(second_src, second_loc, (cst.Call,))
    args = ""
    if isinstance(call.func, cst.Attribute) and call.args:  # keep loss.backward(...)'s arguments
        start = region.span(call.args[0])[0]
        end = region.span(call.args[-1].value)[1]
        args = _text_between(second_src, start, end)
    summed = f"({_operand(fix.text('first_loss'))} + {_operand(fix.text('second_loss'))})"
    return [removal, _replace(second_src, region.span(call), f"{summed}.backward({args})")]


def _removal(src: _Source, region: _Region, stmt: cst.CSTNode) -> Edit:
    """Take a statement's lines out (``pass`` if it is alone in its block)."""
    (l0, c0), (l1, c1) = region.span(stmt)
    block, top_level = region.block_of(stmt)
    if len(src.tree.body if top_level else block) == 1:  # a block must not become empty
        return _replace(src, ((l0, c0), (l1, c1)), "pass")
    if l1 < len(src.lines):  # its lines, trailing comment included
        return _replace(src, ((l0, 1), (l1 + 1, 1)), "")
    return _replace(src, ((l0, 1), (l1, len(src.line_text(l1)) + 1)), "")  # last line of the file


def _move_after(srcs, fix: Fix) -> list[Edit]:
    """Move ``stmt`` (and ``stmt1``, ``stmt2``, … in order) to right after ``after``, a sibling
    further down; when one statement already following ``after`` is the same, only take it out."""
    moved = [loc for key, loc in fix.targets if key.startswith("stmt")]
    if len(moved) > 1:
        return _move_all_after(srcs, fix, moved)
    loc, after = fix.target("stmt"), fix.target("after")
    src = _source_for(srcs, loc)
    region, stmt = _statement_line(src, loc)
    text = _text_between(src, (loc.line, loc.column), (loc.end_line, loc.end_column))
    after_region, target = _statement_line(src, after)
    block, _ = after_region.block_of(target)
    i = next(i for i, s in enumerate(block) if s is target)
    if i + 1 < len(block):
        (n0, m0), (n1, m1) = after_region.span(block[i + 1])
        if _text_between(src, (n0, m0), (n1, m1)) == text:
            return [_removal(src, region, stmt)]
    moved = Fix("insert_after", fix.title, (("after", after),), texts=(("statement", text),))
    return [_removal(src, region, stmt), *_insert_after(srcs, moved)]


def _out_of_place(srcs, fix: Fix) -> list[Edit]:
    """``x /= y`` -> ``x = x / y`` (the value parenthesised unless it is atomic), for each of the
    statements ``stmt``, ``stmt1``, ``stmt2``, ..."""
    edits, names = [], {name for name, _ in fix.targets}
    for n in ("", *(str(i) for i in range(1, len(names)))):
        if f"stmt{n}" not in names:
            break
        loc, value = fix.target(f"stmt{n}"), fix.target(f"value{n}")
        src = _source_for(srcs, loc)
        _statement_line(src, loc)
        text = _text_between(src, (value.line, value.column), (value.end_line, value.end_column))
        try:
            atomic = isinstance(cst.parse_expression(text), _ATOMIC + (cst.Integer, cst.Float))
        except cst.ParserSyntaxError as exc:
            raise FixError(f"cannot read the value {text!r}") from exc
        name, op = fix.text(f"target{n}"), fix.text(f"operator{n}")
        new = f"{name} = {name} {op} {text if atomic else f'({text})'}"
        edits.append(_replace(src, ((loc.line, loc.column), (loc.end_line, loc.end_column)), new))
    return edits


def _move_all_after(srcs, fix: Fix, moved) -> list[Edit]:
    after = fix.target("after")
    src = _source_for(srcs, after)
    _statement_line(src, after)
    edits, texts = [], []
    for loc in moved:
        if _source_for(srcs, loc) is not src or loc.line >= after.line or loc.column != after.column:
            raise FixError("a statement to move is not a sibling before the one to move it after")
        region, stmt = _statement_line(src, loc)
        texts.append(_text_between(src, (loc.line, loc.column), (loc.end_line, loc.end_column)))
        edits.append(_removal(src, region, stmt))
    inserted = Fix("insert_after", fix.title, (("after", after),), texts=(("statement", "\n".join(texts)),))
    return [*edits, *_insert_after(srcs, inserted)]


def _move_block_after(srcs, fix: Fix) -> list[Edit]:
    """Move the sibling statements ``stmt`` (whole lines, comments between them included) to
    right after ``after``, a later sibling in the same block (so at the same indentation)."""
    loc, after = fix.target("stmt"), fix.target("after")
    src = _source_for(srcs, loc)
    region, stmts = _statements_in(src, loc)
    after_region, target = _statement_line(src, after)
    block, _ = region.block_of(stmts[0])
    if not any(s is target for s in block) or region.span(target)[0] <= region.span(stmts[-1])[1]:
        raise FixError("the statements do not come before a sibling to move them after")
    rest = src.line_text(loc.end_line)[loc.end_column - 1:].strip()
    if rest and not rest.startswith("#"):
        raise FixError("the last statement shares its line")
    first, last = loc.line, loc.end_line
    end = after_region.span(target)[1][0]
    if end >= len(src.lines) and not src.lines[-1].endswith(("\n", "\r")):
        raise FixError("the statement to move them after ends the text")
    text = "".join(src.lines[first - 1:last])
    return [_replace(src, ((first, 1), (last + 1, 1)), ""), _insert(src, (end + 1, 1), text)]


def _text_between(src: _Source, start: tuple[int, int], end: tuple[int, int]) -> str:
    return src.text[_offset(src, start):_offset(src, end)]


def _offset(src: _Source, pos: tuple[int, int]) -> int:
    line, col = pos
    return sum(len(text) for text in src.lines[: line - 1]) + col - 1


def _ones_like(keyword: str):
    """``keyword=torch.ones_like(<outputs>)`` added to the backward call."""
    def make(srcs, fix: Fix) -> list[Edit]:
        loc, call_loc = fix.target("expr"), fix.target("call")
        src = _source_for(srcs, loc)
        outputs = _text_between(src, (loc.line, loc.column), (loc.end_line, loc.end_column))
        region, call = _exact(src, call_loc, (cst.Call,))
        if any(a.keyword and a.keyword.value == keyword for a in call.args):
            raise FixError(f"{keyword} is already given")
        torch = _torch_name(srcs) or "torch"
        text = f"{keyword}={torch}.ones_like({outputs})"
        if call.args:
            return [_insert(src, region.span(call.args[-1].value)[1], f", {text}")]
        end_line, end_col = region.span(call)[1]
        return [_insert(src, (end_line, end_col - 1), text)]
    return make


_KINDS = {
    "retain_graph": _keyword_true("retain_graph"), "create_graph": _keyword_true("create_graph"),
    "no_reentrant": _keyword_true("use_reentrant", "False"),
    "drop_retain_graph": _drop_keyword("retain_graph"), "drop_inplace": _drop_keyword("inplace"),
    "out_of_place": _out_of_place,
    "detach": _appended("detach"), "clone": _appended("clone"), "detach_cpu": _appended("detach", "cpu"), "drop_detach": _drop_detach,
    "detach_elements": _detach_elements,
    "no_grad": _no_grad, "enable_grad": _enable_grad, "leaf_after": _leaf_after,
    "reduce_mean": _appended("mean"), "reduce_sum": _appended("sum"),
    **{f"ones_{k}": _ones_like(k) for k in ("gradient", "grad_tensors", "grad_outputs")},
    "sum_losses": _sum_losses, "insert_before": _insert_before, "insert_after": _insert_after,
    "replace_statement": _replace_statement, "replace_expr": _replace_expr,
    "move_after": _move_after, "retain_graph_and_insert_before": _retain_then_insert,
    "keep_tensors": _keep_tensors, "move_block_after": _move_block_after,
}


# --- public API --------------------------------------------------------------------------------

def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """``text`` with non-overlapping ``edits`` (all relative to ``text``) applied."""
    src = _Source(None, text)
    spans = sorted(((_offset(src, e.start), _offset(src, e.end), e.text) for e in edits),
                   key=lambda s: (s[0], s[1]), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def _check_parses(sources: Sources, edits: Sequence[Edit]) -> None:
    for cell in {e.cell for e in edits}:
        fixed = apply_edits(sources[cell], [e for e in edits if e.cell == cell])
        try:
            ast.parse(strip_magics(fixed))
        except SyntaxError as exc:
            raise FixError(f"the fixed code would not parse: {exc.msg} (line {exc.lineno})") from exc


def fix_edits(fix: Fix, sources: Sources) -> list[Edit]:
    """The text edits that apply ``fix`` to ``sources``; raises FixError when it does not fit."""
    make = _KINDS.get(fix.kind)
    if make is None:
        raise FixError(f"unknown fix kind {fix.kind!r}")
    edits = make(_sources(sources), fix)
    _check_parses(sources, edits)
    return edits


def suppression_edit(finding: Finding, sources: Sources) -> Edit:
    """Add ``# gradguard: ignore[CODE]`` to the first line of the finding (or extend one there)."""
    loc = finding.location
    src = _source_for(_sources(sources), loc)
    line = src.line_text(loc.line)
    match = SUPPRESSION_RE.search(line)
    if match:
        codes = [c.strip() for c in match.group(1).split(",") if c.strip()]
        if finding.code in codes:
            raise FixError("already suppressed")
        edit = _replace(src, ((loc.line, match.start(1) + 1), (loc.line, match.end(1) + 1)),
                        ", ".join([*codes, finding.code]))
    else:
        inside = src.region(loc.line, loc.line + 1).string_continuation_lines()
        if line.rstrip().endswith("\\") or loc.line in inside or loc.line + 1 in inside:
            raise FixError("the line ends inside a string or continues")
        end = len(line.rstrip()) + 1
        edit = _replace(src, ((loc.line, end), (loc.line, len(line) + 1)),
                        f"  # gradguard: ignore[{finding.code}]")
    _check_parses(sources, [edit])
    return edit


def _conflicts(a: Edit, b: Edit) -> bool:
    if a.cell != b.cell:
        return False
    if a.start == b.start:
        return True
    return a.start < b.end and b.start < a.end


def fix_all_edits(findings: Iterable[Finding], sources: Sources) -> list[Edit]:
    """The preferred fix of every finding; a fix that collides with an earlier one is skipped
    (the next run reports what is left)."""
    return fix_all(findings, sources)[0]


def fix_all(findings: Iterable[Finding], sources: Sources) -> tuple[list[Edit], list[Finding]]:
    """``fix_all_edits``, and the findings whose fix those edits apply."""
    accepted: list[Edit] = []
    fixed: list[Finding] = []
    seen: set[Fix] = set()
    for finding in findings:
        fix = preferred_fix(finding)
        if fix is None or fix in seen:
            continue
        seen.add(fix)
        try:
            edits = fix_edits(fix, sources)
        except FixError:
            continue
        if any(_conflicts(e, a) for e in edits for a in accepted):
            continue
        try:
            _check_parses(sources, accepted + edits)
        except FixError:
            continue
        accepted.extend(edits)
        fixed.append(finding)
    return accepted, fixed


def moved(pos: tuple[int, int], edits: Iterable[Edit]) -> tuple[int, int]:
    """Where ``pos`` (outside every edit, or at an insertion) is once ``edits`` of its cell apply."""
    line, col = pos
    for e in sorted(edits, key=lambda e: e.start, reverse=True):
        if e.end > pos or e.start > pos:
            continue
        new = python_lines(e.text) or [""]
        ends_line = e.text.endswith(("\n", "\r"))
        if e.end[0] != line:  # the edit ends on an earlier line: only lines shift
            line += len(new) - (1 if not ends_line else 0) - (e.end[0] - e.start[0])
            continue
        if ends_line:
            line, col = e.start[0] + len(new), col - e.end[1] + 1
        elif len(new) == 1:
            line, col = e.start[0], e.start[1] + len(new[0]) + col - e.end[1]
        else:
            line, col = e.start[0] + len(new) - 1, len(new[-1]) + 1 + col - e.end[1]
    return line, col
