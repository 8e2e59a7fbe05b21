"""Flags that cannot change while a program runs: the ``if`` tests whose branches correlate.

A flag set once (a constructor argument kept on ``self``, a module-level setting, a local
computed before a loop) takes the same branch every time it is tested. Joining the branches of
one test and then those of the next as if they were independent mixes worlds that never meet:
a tensor rebuilt under ``if self.tuning:`` in one iteration and kept stale by the ``else`` of
the next. Which names and attributes are such flags is read from the code that can assign
them, never from their values:

- an attribute that no loaded module assigns outside an ``__init__`` (nor ``setattr``s or
  deletes);
- a name its scope binds once, not in a loop, and no inner function rebinds.
"""
from __future__ import annotations

import ast
from bisect import bisect_left
from typing import Optional

from .skeleton import LazyBody

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def written_attributes(tree: ast.AST, text: Optional[str] = None, unparsed: Optional[list] = None) -> frozenset:
    """The attribute names a module may assign (or delete) outside ``__init__`` methods;
    ``"*"`` among them when it calls ``setattr`` or ``delattr`` with a name not written out.
    Statements are walked; the expressions in them only where a line of ``text`` (the
    module's source; None: any line) names ``setattr`` or ``delattr``. With ``unparsed``, the
    functions whose bodies are not parsed yet (``skeleton``) are listed there, not walked:
    which of them can matter is for the caller to tell from their text."""
    out = set()
    lines = _lines_with(("setattr", "delattr"), text)
    calls = lines is None or bool(lines)
    stack = [(node, False) for node in tree.body]
    while stack:
        node, in_init = stack.pop()
        t = type(node)
        targets = ()
        if t is ast.Assign or t is ast.Delete:
            targets = node.targets
        elif t in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor):
            targets = (node.target,)
        elif t in (ast.With, ast.AsyncWith):
            targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
        if not in_init:
            for target in targets:
                _attributes(target, out)
            if calls and t not in _SCOPES and _spans(node, lines):
                for sub in _own_expressions(node):
                    if type(sub) is ast.Call and type(sub.func) is ast.Name and sub.func.id in ("setattr", "delattr"):
                        name = sub.args[1] if len(sub.args) > 1 else None
                        out.add(name.value if type(name) is ast.Constant and isinstance(name.value, str) else "*")
        inner = in_init or (t in (ast.FunctionDef, ast.AsyncFunctionDef) and node.name == "__init__")
        if unparsed is not None and t in (ast.FunctionDef, ast.AsyncFunctionDef) and type(node.body) is LazyBody:
            if not inner:  # (nothing an __init__ holds counts)
                unparsed.append(node)
            continue
        for field in _BLOCKS[:3]:
            stack.extend((sub, inner) for sub in getattr(node, field, ()) or ())
        for handler in getattr(node, "handlers", ()):
            stack.extend((sub, inner) for sub in handler.body)
        for case in getattr(node, "cases", ()):
            stack.extend((sub, inner) for sub in case.body)
    return frozenset(out)


def _attributes(target, out: set) -> None:
    t = type(target)
    if t is ast.Attribute:
        out.add(target.attr)
    elif t in (ast.Tuple, ast.List):
        for elt in target.elts:
            _attributes(elt, out)
    elif t is ast.Starred:
        _attributes(target.value, out)


def settled_names(scope: ast.AST, text: Optional[str] = None) -> frozenset:
    """The names a function (or module) binds exactly once, outside any loop, and that no
    function inside it declares ``nonlocal`` or ``global``. Statements are walked, not the
    expressions in them, but for ``match`` statements and those on a line of ``text`` (the
    module's source; None: any line) holding a walrus; inner functions only if one of their
    lines holds ``global`` or ``nonlocal``."""
    binds: dict = {}
    looped: set = set()
    rebound: set = set()
    nested = _lines_with(("global", "nonlocal"), text)
    walrus = _lines_with((":=",), text)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = scope.args
        for arg in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
            if arg is not None:
                _bind(binds, looped, arg.arg, False)
    stack = [(node, False) for node in scope.body]
    while stack:
        node, in_loop = stack.pop()
        t = type(node)
        if t is ast.Match or (walrus is None or walrus) and t not in _SCOPES and _spans(node, walrus):
            for sub in _own_expressions(node):
                if type(sub) is ast.NamedExpr and type(sub.target) is ast.Name:
                    _bind(binds, looped, sub.target.id, True)  # in a comprehension: once per element
                elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
                    _bind(binds, looped, sub.name, in_loop)
                elif type(sub) is ast.MatchMapping and sub.rest:
                    _bind(binds, looped, sub.rest, in_loop)
        if t in (ast.Global, ast.Nonlocal):
            rebound.update(node.names)
        elif t in _SCOPES:
            _bind(binds, looped, node.name, in_loop)
            if (nested is None or nested) and _spans(node, nested):  # it binds its own names, but may rebind ours
                rebound.update(n for sub in ast.walk(node) if type(sub) in (ast.Global, ast.Nonlocal)
                               for n in sub.names)
            continue
        elif t is ast.Assign:
            for target in node.targets:
                _bind_target(binds, looped, target, in_loop)
        elif t in (ast.AugAssign, ast.AnnAssign):
            if t is ast.AugAssign or node.value is not None:
                _bind_target(binds, looped, node.target, in_loop)
        elif t in (ast.For, ast.AsyncFor):
            _bind_target(binds, looped, node.target, True)
        elif t in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    _bind_target(binds, looped, item.optional_vars, in_loop)
        elif t in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                _bind(binds, looped, (alias.asname or alias.name).split(".")[0], in_loop)
        elif t is ast.Delete:
            for target in node.targets:
                _bind_target(binds, looped, target, in_loop)
        elif t in _TRIES:
            for handler in node.handlers:
                if handler.name:
                    _bind(binds, looped, handler.name, in_loop)
                stack.extend((sub, in_loop) for sub in handler.body)
        loop = in_loop or t in _LOOPS
        for field in ("body", "orelse", "finalbody"):
            stack.extend((sub, loop) for sub in getattr(node, field, ()) or ())
        if t is ast.Match:
            stack.extend((sub, in_loop) for case in node.cases for sub in case.body)
    return frozenset(n for n, count in binds.items() if count == 1 and n not in looped and n not in rebound)


def _lines_with(words: tuple, text: Optional[str]) -> Optional[list]:
    """The numbers of the lines of ``text`` holding one of ``words``, in order (None: any)."""
    if text is None:
        return None
    found = set()
    for word in words:
        line, done, at = 1, 0, text.find(word)
        while at >= 0:
            line += text.count("\n", done, at)
            done = at
            found.add(line)
            at = text.find(word, at + 1)
    return sorted(found)


def _spans(node, lines: Optional[list]) -> bool:
    """Whether the statement's lines hold one of ``lines`` (all do when that is None)."""
    if lines is None:
        return True
    i = bisect_left(lines, node.lineno)
    return i < len(lines) and lines[i] <= node.end_lineno
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _own_expressions(stmt):
    """The nodes of a statement, save those of the statements it holds."""
    for name, value in ast.iter_fields(stmt):
        if name in _BLOCKS:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, ast.AST):
                yield from ast.walk(item)
    for case in getattr(stmt, "cases", ()):
        yield from ast.walk(case.pattern)


_TRIES = (ast.Try,) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _bind_target(binds: dict, looped: set, target, in_loop: bool) -> None:
    t = type(target)
    if t is ast.Name:
        _bind(binds, looped, target.id, in_loop)
    elif t in (ast.Tuple, ast.List):
        for elt in target.elts:
            _bind_target(binds, looped, elt, in_loop)
    elif t is ast.Starred:
        _bind_target(binds, looped, target.value, in_loop)


def _bind(binds: dict, looped: set, name: str, in_loop: bool) -> None:
    binds[name] = binds.get(name, 0) + 1
    if in_loop:
        looped.add(name)
