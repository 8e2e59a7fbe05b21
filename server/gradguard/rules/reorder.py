"""GG101 of backwards that keep the graph (``retain_graph=True``) run after the backward that
frees it, with an optimizer step in between: per-loss gradients for logging measured after the
combined backward and its step.  The training step (``zero_grad()``, the freeing backward,
``step()``) moves to right after the last backward that keeps the graph, so every walk sees the
graph before it is freed and before the step changes the weights.

Moved only when that does not change what the code between computes or what the step uses:
- the moved run starts with ``zero_grad()`` on the optimizer (so gradients the backwards in
  between leave do not reach the step) and ends with its ``step()``;
- the code in between only measures: no exit (return/raise, or break/continue of an outer
  loop), no other step, no forward pass (no call of the modules the graph was built from, other
  than for their ``.parameters()``, nor of functions of the file), no new value or in-place
  change of what the moved run reads, and each ``.grad`` it reads is read after its own
  ``zero_grad()`` on the same optimizer;
- nothing else in the function reads ``.grad`` (it would see the training step's gradients
  instead of the last measured ones, or the other way round).
"""
from __future__ import annotations

import ast
import dataclasses

from .. import torch_api as api
from ..findings import Fix
from ..parents import Parents

_EXITS = (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Await)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_READS_PARAMS = ("parameters", "named_parameters", "zero_grad")


def move_step_fix(reuse, locate, main_path: str, parents):
    """Move the training step after the backwards that keep its graph; None unless it is safe."""
    first, second = reuse.info.call, reuse.node
    if not _retains(second):
        return None
    stmt = parents.statement(first)
    if not isinstance(stmt, ast.Expr) or stmt.value is not first:
        return None
    block = parents.block_of(stmt)
    if block is None:
        return None
    i = next(i for i, s in enumerate(block) if s is stmt)
    if i == 0 or _method(block[i - 1]) != "zero_grad":
        return None
    lo, hi = i - 1, i
    while hi + 1 < len(block) and _method(block[hi + 1]) == "step":
        hi += 1
    if hi == i:
        return None
    optimizer = ast.unparse(block[lo].value.func.value)
    moved = block[lo:hi + 1]
    # the last statement after it that runs a backward keeping the graph (the finding's among them)
    holder = parents.statement(second)
    while holder is not None and not any(holder is s for s in block[hi + 1:]):
        holder = parents.statement(parents.parent(holder))
    if holder is None:
        return None
    j = max(k for k in range(hi + 1, len(block)) if block[k] is holder or any(
        _retains(n) for n in ast.walk(block[k])))
    between = block[hi + 1:j + 1]
    owners = {_base(r.name) for h in reuse.hits for r in h.roots} - {None}
    defined = {n.name for n in ast.walk(parents.tree)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    if not _only_measures(between, moved, optimizer, owners, defined, _Links(between)):
        return None
    scope = _scope_of(stmt, parents)
    inside = {id(n) for s in between for n in ast.walk(s)}
    if any(_reads_grad(n) and id(n) not in inside for n in ast.walk(scope)):
        return None
    first_loc, last_loc = locate(moved[0], main_path), locate(moved[-1], main_path)
    span = dataclasses.replace(first_loc, end_line=last_loc.end_line, end_column=last_loc.end_column)
    return Fix("move_block_after", f"Run the training step (lines {moved[0].lineno}-{moved[-1].end_lineno}) after the "
                                   f"backwards that keep its graph (line {block[j].lineno})",
               (("stmt", span), ("after", locate(block[j], main_path))), preferred=True)


def _retains(call) -> bool:
    return isinstance(call, ast.Call) and any(
        k.arg == "retain_graph" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords)


def _method(stmt):
    """``zero_grad`` / ``step`` of a statement ``x.zero_grad()`` / ``x.step()`` (no arguments)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and not stmt.value.args and not stmt.value.keywords:
        return stmt.value.func.attr
    return None


def _scope_of(node, parents):
    cur = parents.parent(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        cur = parents.parent(cur)
    return cur if cur is not None else parents.tree


def _base(text: str):
    name = text.split(".")[0].split("[")[0]
    return name if name.isidentifier() else None


def _reads_grad(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load)


def _only_measures(between, moved, optimizer: str, owners: set, defined: set, parents) -> bool:
    """``parents``: links within ``between``."""
    reads = {n.id for s in moved for n in ast.walk(s) if isinstance(n, ast.Name)}
    for stmt in between:
        for n in ast.walk(stmt):
            if isinstance(n, _EXITS) or isinstance(n, (ast.Break, ast.Continue)) and not _in_loop(n, stmt, parents):
                return False
            if isinstance(n, ast.Name) and n.id in reads and not isinstance(n.ctx, ast.Load):
                return False  # a new value of what the training step reads
            if isinstance(n, ast.Call):
                func = n.func
                if isinstance(func, ast.Attribute) and func.attr == "step":
                    return False
                if isinstance(func, ast.Attribute) and api.is_in_place_method(func.attr) \
                        and _base(ast.unparse(func.value)) in reads:
                    return False
                if isinstance(func, ast.Name) and func.id in defined:
                    return False  # a function of the file: it may run the model
            if isinstance(n, ast.Name) and n.id in owners and not _reads_parameters(n, parents):
                return False  # the modules being trained used otherwise than for their parameters
            if _reads_grad(n) and not _after_reset(n, stmt, between, optimizer, parents):
                return False
    return True


class _Links(Parents):
    """Parent links within some statements, made at once (``Parents`` finds them by position,
    which does not enter comprehensions)."""

    def __init__(self, stmts):
        super().__init__(None)
        for stmt in stmts:
            for node in ast.walk(stmt):
                for child in ast.iter_child_nodes(node):
                    self._parent[id(child)] = node

    def parent(self, node):
        return self._parent.get(id(node))


def _in_loop(node, top, parents) -> bool:
    """``break``/``continue`` of a loop inside ``top`` (not of one around it)."""
    cur = parents.parent(node)
    while cur is not None:
        if isinstance(cur, _LOOPS):
            return True
        if cur is top:
            return False
        cur = parents.parent(cur)
    return False


def _reads_parameters(name, parents) -> bool:
    """``model`` in ``model.parameters()`` / ``model.named_parameters()`` / ``model.zero_grad()``."""
    attr = parents.parent(name)
    call = parents.parent(attr)
    return isinstance(attr, ast.Attribute) and attr.attr in _READS_PARAMS and isinstance(call, ast.Call) \
        and call.func is attr


def _after_reset(node, top, between, optimizer: str, parents) -> bool:
    """A statement before ``node``'s, in a block enclosing it up to the statements ``between``
    (of which ``top`` holds it), is ``<optimizer>.zero_grad()``."""
    def resets(stmts) -> bool:
        return any(_method(s) == "zero_grad" and ast.unparse(s.value.func.value) == optimizer for s in stmts)

    cur = parents.statement(node)
    while cur is not None and cur is not top:
        block = parents.block_of(cur)
        if block is not None and resets(block[:next(i for i, b in enumerate(block) if b is cur)]):
            return True
        cur = parents.statement(parents.parent(cur))
    return resets(between[:next(i for i, b in enumerate(between) if b is top)])
