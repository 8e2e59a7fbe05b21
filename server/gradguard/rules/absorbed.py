"""GG101/GG102 of a graph an in-place update wrote into weights that are not trained: an EMA
teacher's (``t.mul_(a).add_((1 - a) * s)``) or a buffer of running statistics
(``self.mean.mul_(0.9).add_(0.1 * x.mean(0))``), run with grad recording on.  The weights then
hold the graph of what was added, and every later use passes it on to a backward that walks it
again.  The fix runs the update under ``torch.no_grad()``, as such updates are meant to run.

The update is found from the analysis: the engine keeps what an in-place update with grad on
wrote into frozen weights or a buffer (``(root or storage, "absorbed")`` in the heap, see
``torch_model.absorb``); the freed segments the walk reached that such a write holds were built
inside the arguments of the in-place call, which names the statement to wrap.
"""
from __future__ import annotations

import ast
import dataclasses

from .. import torch_api as api
from ..findings import Fix
from ..values import tensors_in

_LOOPS = (ast.For, ast.AsyncFor)


def absorbed_segments(heap) -> frozenset:
    """The graph segments in-place updates with grad on wrote into frozen weights or buffers."""
    out: set = set()
    for key, value in heap.items():
        if type(key) is tuple and len(key) == 2 and key[1] == "absorbed":
            for t in tensors_in(value):
                out |= t.segs
    return frozenset(out)


def no_grad_update_fix(reuse, locate, main_path: str, parents):
    """``with torch.no_grad():`` around the in-place update(s) that wrote the walked graph into
    weights nobody trains; None unless every freed segment the walk reached came that way."""
    if not reuse.absorbed or not all(h in reuse.absorbed for h in reuse.hits):
        return None
    updates = {}  # id -> the statement of an in-place update that wrote absorbed graph
    for seg in reuse.absorbed:
        if seg.path != main_path:
            continue
        stmt = _update_statement(seg.site, parents)
        if stmt is not None:
            updates[id(stmt)] = stmt
    # the update that wrote the graph the finding names (else any the walk reached)
    mine = [_update_statement(h.site, parents) for h in [reuse.stale, *reuse.hits] if h.path == main_path]
    mine = [s for s in mine if s is not None]
    if not mine:
        return None
    stmts = _run_of(mine[0], updates, parents)
    if stmts is None:
        return None
    stmts = _whole_loop(stmts, parents)
    first, last = locate(stmts[0], main_path), locate(stmts[-1], main_path)
    target = dataclasses.replace(first, end_line=last.end_line, end_column=last.end_column)
    what = _updated(mine[0])
    return Fix("no_grad", f"Update {what} under `torch.no_grad()` (line {stmts[0].lineno}), so "
                          "it does not take in the graph of what is added",
               (("stmt", target),), preferred=True)


def _update_statement(site, parents):
    """The statement of the in-place method call whose arguments hold ``site``, or None."""
    node, child = parents.parent(site), site
    while isinstance(node, (ast.expr, ast.keyword)):
        if isinstance(node, ast.Call) and child is not node.func and isinstance(node.func, ast.Attribute) \
                and api.is_in_place_method(node.func.attr):
            stmt = parents.parent(node)
            while isinstance(stmt, (ast.expr, ast.keyword)):
                stmt = parents.parent(stmt)
            return stmt if isinstance(stmt, ast.Expr) else None  # the update alone, not a name bound to it
        node, child = parents.parent(node), node
    return None


def _run_of(stmt, updates: dict, parents):
    """The contiguous sibling statements around ``stmt`` that are all updates writing graph."""
    block = parents.block_of(stmt)
    if block is None:
        return None
    i = next(i for i, s in enumerate(block) if s is stmt)
    lo = hi = i
    while lo > 0 and id(block[lo - 1]) in updates:
        lo -= 1
    while hi + 1 < len(block) and id(block[hi + 1]) in updates:
        hi += 1
    return block[lo:hi + 1]


def _whole_loop(stmts, parents):
    """A ``for`` loop whose body is only these updates (``for t, s in zip(...)``) is wrapped
    whole; so is a loop around it that holds nothing else."""
    while True:
        parent = parents.parent(stmts[0])
        if not isinstance(parent, _LOOPS) or parent.orelse or len(parent.body) != len(stmts) \
                or any(a is not b for a, b in zip(parent.body, stmts)):
            return stmts
        stmts = [parent]


def _updated(stmt) -> str:
    """``t_param`` / ``self.mean``: the tensor the update writes into, as the code names it."""
    call = stmt.value
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and api.is_in_place_method(call.func.attr):
        call = call.func.value
    return f"`{ast.unparse(call)}`" if isinstance(call, (ast.Name, ast.Attribute)) else "the weights"
