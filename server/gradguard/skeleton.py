"""Syntax trees whose function bodies are parsed when first read.

Parsing is a third of an analysis, and most functions of the files GradGuard interprets never
run in it: a model file's other helpers, an imported module's other classes. A text is parsed
as its *skeleton*: every ``def`` keeps its line, decorators and signature, its body is blanked
(its newlines kept, so that every position in the file stays what it was) and parsed from its
own lines when something first reads it. The tree is an ordinary ``ast.Module``; a function's
``body`` is a :class:`LazyBody` until then, a list that parses itself on any read.

Where a body ends is read from indentation, which a string or a bracket spanning lines can
fool. A body is left in the skeleton unless its text is whole: triple quotes paired, brackets
balanced, no line continued past it. A ``def`` found inside a string (a docstring's example)
matches no function of the parsed skeleton; the skeleton is then made again with that one left
alone. A body that will not parse on its own (a split that still fooled all this) is taken
from a parse of the whole text, and :data:`mismatches` counts it: the analysis that read the
skeleton is then run again on the whole tree (``analysis``).
"""
from __future__ import annotations

import ast
import re
import warnings
import weakref
from typing import Optional

from .sources import SourceError, check_limits, parse

# A body shorter than this stays in the skeleton: parsing it apart would cost more than it saves.
MIN_LAZY_CHARS = 200

_DEF = re.compile(r"def[ \t]+[^\W\d]\w*[ \t]*[(\[]")
# what a signature's end is searched among: brackets, the colon, comments, strings, line ends
_HEAD = re.compile(r"""[()\[\]{}:#\n]|\\\r?\n|'''|\"\"\"|'|\"""")
_STRING = {
    "'": re.compile(r"'(?:[^'\\\n]|\\[\s\S])*'"),
    '"': re.compile(r'"(?:[^"\\\n]|\\[\s\S])*"'),
    "'''": re.compile(r"'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''"),
    '"""': re.compile(r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""'),
}
_ENDS: dict = {}  # indentation -> the line a body at that indentation ends before
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))

# Bodies taken from a whole parse because their own text did not parse (the skeleton was
# cut wrong), and the files they are of: parsed whole from then on.
mismatches = 0
WHOLE: set = set()
MAX_WHOLE = 10_000


class LazyBody(list):
    """A function's body not parsed yet. Any read parses it (:meth:`force`), fills this list
    with it and puts a plain list of the same statements on the function."""

    __slots__ = ("_lazy", "_error")

    def __init__(self, lazy: "_Lazy"):
        super().__init__()
        self._lazy = lazy
        self._error = None

    def force(self) -> None:
        """Parse the body now: this list and the function's ``body`` then hold it. Raises
        :class:`SourceError` if the text does not parse (the body stays empty), and again at
        every later call: the tree outlives the first reader (a module imported, then checked
        itself), and each must learn why."""
        lazy = self._lazy
        if lazy is not None:
            self._lazy = None
            try:
                list.extend(self, lazy.parse())
            except SourceError as exc:
                self._error = exc
                raise
        elif self._error is not None:
            raise self._error


def _forcing(name: str):
    method = getattr(list, name)

    def forced(self, *args, **kwargs):
        if self._lazy is not None:
            try:
                self.force()
            except SourceError:
                pass  # an empty body: the reader needs no more; ``force`` callers learn why
        return method(self, *args, **kwargs)

    forced.__name__ = name
    return forced


for _name in ("__iter__", "__len__", "__getitem__", "__contains__", "__reversed__", "__eq__", "__ne__",
              "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__mul__", "__rmul__", "__iadd__", "__imul__",
              "__setitem__", "__delitem__", "__repr__", "append", "extend", "insert", "pop", "remove", "index",
              "count", "copy", "sort", "reverse", "clear"):
    setattr(LazyBody, _name, _forcing(_name))


class _Lazy:
    """Where one function's text lies, and how to parse its body apart."""

    __slots__ = ("skeleton", "start", "colon", "end", "lineno", "indent", "node", "holders")

    def __init__(self, skeleton: "_Skeleton", start: int, colon: int, end: int, lineno: int, indent: int):
        self.skeleton = skeleton
        # the def's line, its signature's colon, the end of its body (offsets in the text)
        self.start, self.colon, self.end = start, colon, end
        self.lineno, self.indent = lineno, indent
        self.node = None  # (weak references: the node holds its LazyBody, which holds this)
        self.holders: list = []  # the statements that end where it does

    def parse(self) -> list:
        skeleton = self.skeleton
        node = self.node() if self.node is not None else None
        # padded with newlines (and, for an indented def, a block to sit in) to its own lines
        head = "\n" * (self.lineno - 1) if not self.indent else "\n" * (self.lineno - 2) + "if 1:\n"
        found = None
        try:
            with warnings.catch_warnings():  # as ``sources.parse``: "invalid escape sequence"
                warnings.simplefilter("ignore")
                tree = ast.parse(head + skeleton.text[self.start:self.end])
            found = tree.body[0] if not self.indent else tree.body[0].body[0]
        except (SyntaxError, ValueError, RecursionError, MemoryError, IndexError, AttributeError):
            pass
        if not _same(found, node, self.lineno):
            found = skeleton.whole_def(self.lineno, self.indent)  # raises SourceError
        if node is not None:
            estimate = (node.end_lineno, node.end_col_offset)
            node.body = found.body
            node.end_lineno, node.end_col_offset = found.end_lineno, found.end_col_offset
            for ref in self.holders:
                holder = ref()
                if holder is not None and (holder.end_lineno, holder.end_col_offset) == estimate:
                    holder.end_lineno, holder.end_col_offset = found.end_lineno, found.end_col_offset
        return found.body


def _same(found, node, lineno: int) -> bool:
    return type(found) in (ast.FunctionDef, ast.AsyncFunctionDef) and found.lineno == lineno \
        and (node is None or (type(found) is type(node) and found.name == node.name))


class _Skeleton:
    """The text a skeleton was made from, and its whole tree when a body needs it."""

    __slots__ = ("text", "path", "_whole", "__weakref__")

    def __init__(self, text: str, path: str):
        self.text, self.path = text, path
        self._whole = None

    def whole_def(self, lineno: int, indent: int):
        global mismatches
        if self._whole is None:
            tree = parse(self.text, self.path)  # a syntax error in a body: SourceError, each time
            self._whole = {stmt.lineno: stmt for stmt in _statements(tree.body)
                           if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef)}
        found = self._whole.get(lineno)
        if found is None:
            raise SourceError(f"{self.path}:{lineno}: cannot read this function apart from its file")
        mismatches += 1
        if len(WHOLE) >= MAX_WHOLE:
            WHOLE.clear()
        WHOLE.add(self.path)
        return found


def parse_lazily(text: str, path: str) -> ast.Module:
    """``sources.parse(text, path)``, the function bodies left to be parsed on first read.
    Raises :class:`SourceError` for what the skeleton shows to be invalid."""
    if "def" not in text or len(text) < MIN_LAZY_CHARS or path in WHOLE:
        return parse(text, path)
    check_limits(text, path)  # (a body left out of the skeleton is checked too)
    skeleton = _Skeleton(text, path)
    lazies = _find(text, skeleton)
    skipped: set = set()
    while True:
        kept = [lazy for lazy in lazies if lazy.lineno not in skipped]
        if not kept:
            return parse(text, path)
        try:
            tree = parse(_blank(text, kept), path)
        except SourceError:  # the whole text says why, if it is the text's fault
            return parse(text, path)
        unmatched = _attach(tree, kept)
        if not unmatched:
            return tree
        if skipped:  # made again without the defs found in strings, and still off
            return parse(text, path)
        skipped = unmatched


def _find(text: str, skeleton: _Skeleton) -> list:
    """The functions whose bodies can be left out: in text order, none inside another."""
    found, after, line, counted = [], 0, 1, 0
    for m in _DEF.finditer(text):
        at = m.start()
        if at < after:
            continue  # inside a body left out already
        start = text.rfind("\n", 0, at) + 1
        prefix = text[start:at]
        rest = prefix.lstrip(" ")
        if rest and not (rest.startswith("async") and len(rest) > 5 and not rest[5:].strip(" \t")):
            continue  # not at the start of a line (a tab in the indentation too)
        colon = _signature_end(text, m.end() - 1)
        if colon is None:
            continue
        indent = len(prefix) - len(rest)
        end_match = _ending(indent).search(text, colon)
        end = end_match.start() if end_match is not None else len(text)
        body = text[colon + 1:end]
        if len(body) < MIN_LAZY_CHARS or not _whole(body):
            continue
        line += text.count("\n", counted, start)
        counted = start
        found.append(_Lazy(skeleton, start, colon, end, line, indent))
        after = end
    return found


def _ending(indent: int) -> re.Pattern:
    pattern = _ENDS.get(indent)
    if pattern is None:
        # a line holding a statement (not blank, not a comment) indented no deeper than the def
        pattern = _ENDS[indent] = re.compile(r"\n {0,%d}(?=[^ \t\r\n#\\])" % indent)
    return pattern


def _signature_end(text: str, at: int) -> Optional[int]:
    """The colon ending the signature whose parameter list opens at ``at``."""
    depth = 0
    while True:
        m = _HEAD.search(text, at)
        if m is None:
            return None
        token = m.group()
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif token == ":":
            if depth == 0:
                return m.start()
        elif token == "#":
            at = text.find("\n", m.end())
            if at < 0 or depth == 0:
                return None
            continue
        elif token == "\n":
            if depth == 0:
                return None
        elif token[0] in "'\"":
            s = _STRING[token].match(text, m.start())
            if s is None:
                return None
            at = s.end()
            continue
        at = m.end()


def _whole(body: str) -> bool:
    """Whether a body's text can be told apart by its indentation: no string, bracket or
    continued line crosses its end."""
    if body.count('"""') % 2 or body.count("'''") % 2:
        return False
    if any(body.count(a) != body.count(b) for a, b in _PAIRS):
        return False
    return not body.rstrip().endswith("\\")


def _blank(text: str, lazies: list) -> str:
    """The text with those bodies replaced by ``...`` and the newlines they held."""
    pieces, done = [], 0
    for lazy in lazies:
        pieces.append(text[done:lazy.colon + 1])
        pieces.append(" ...")
        pieces.append("\n" * text.count("\n", lazy.colon, lazy.end))
        done = lazy.end
    pieces.append(text[done:])
    return "".join(pieces)


def _attach(tree: ast.Module, lazies: list) -> set:
    """Give each function left out its LazyBody, and the statements holding it their ends;
    returns the lines of those no function of the skeleton begins on (they were inside a
    string)."""
    by_line = {lazy.lineno: lazy for lazy in lazies}
    _attach_in(tree.body, by_line)
    return set(by_line)


def _attach_in(block: list, by_line: dict) -> Optional[_Lazy]:
    """Attaches in a statement list; returns the function left out that the list ends with
    (its end is only estimated until it is parsed: the statements ending with it follow it)."""
    tail = None
    for stmt in block:
        tail = None
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            lazy = by_line.pop(stmt.lineno, None)
            if lazy is not None:
                lazy.node = weakref.ref(stmt)
                stmt.body = LazyBody(lazy)
                stmt.end_lineno, stmt.end_col_offset = _last_line(lazy)
                tail = lazy
                continue
        inner = [getattr(stmt, field, None) for field in ("body", "orelse", "finalbody")]
        inner += [[h] for h in getattr(stmt, "handlers", ())] + [c.body for c in getattr(stmt, "cases", ())]
        for sub in inner:
            if type(sub) is list and sub:
                if type(sub[0]) is ast.ExceptHandler:
                    last, handler = _attach_in(sub[0].body, by_line), sub[0]
                    if _extend(handler, handler.body[-1]) and last is not None:
                        last.holders.append(weakref.ref(handler))
                    sub = [handler]
                else:
                    last = _attach_in(sub, by_line)
                if _extend(stmt, sub[-1]):
                    tail = last
        if tail is not None:
            tail.holders.append(weakref.ref(stmt))
    return tail


def _extend(outer, last) -> bool:
    """Whether the statement ends where the last one it holds does (made so if that one
    grew back its body)."""
    end = (last.end_lineno, last.end_col_offset)
    if end >= (outer.end_lineno, outer.end_col_offset):
        outer.end_lineno, outer.end_col_offset = end
        return True
    return False


def _last_line(lazy: _Lazy) -> tuple:
    """(line, UTF-8 column) where the function's text ends: its last line that is not blank or a
    comment. (Exact once parsed; until then only whole lines are read from it.)"""
    text = lazy.skeleton.text
    end = lazy.end
    lineno = lazy.lineno + text.count("\n", lazy.start, end)
    while True:
        start = text.rfind("\n", lazy.start, end) + 1
        line = text[start:end].rstrip()
        if line and not line.lstrip().startswith("#") or start <= lazy.start:
            return lineno, len(line.encode("utf-8"))
        end = start - 1
        lineno -= 1


def _statements(body: list):
    """Every statement of a tree, not descending into the bodies left out."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if type(block) is list:
                stack.extend(block)
        for handler in getattr(stmt, "handlers", ()):
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            stack.extend(case.body)
