"""GG202: a running total that keeps every iteration's graph alive.

``total_loss += loss`` (or ``avg = 0.9 * avg + 0.1 * loss``) with a ``loss`` that requires grad
makes ``total_loss`` a tensor whose graph holds the graph of every iteration so far; if no
backward ever walks it, all that memory is held for nothing and grows each step. torch raises
nothing: memory runs out later, or the loop just slows down. Weights stepped by their own gradient
(``w = w - lr * g``: meta-learning's inner loop, test-time adaptation) are no total: what is added
is computed from the value it is added to, or carries no graph at all."""
from __future__ import annotations

import ast
import re

from ..values import YES
from . import FixIntent, Report, Rule, short


def on_running_total(ev) -> Report | None:
    t = ev.tensors[0]
    # in a function nothing here calls, the total may well go to a backward elsewhere
    if t.grad != YES or not t.exact or not ev.known_context:
        return None
    mine = frozenset(s for s in t.segs if s.site is ev.node)
    if not _adds_new_graph(t.segs, ev.node):
        return None  # fast weights stepped by their own gradient: an unrolled inner loop, not a total
    stmt = ev.stmt
    total = stmt.target if isinstance(stmt, ast.AugAssign) else (
        stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None)
    if total is None or not (isinstance(stmt, ast.AugAssign) or _reads(ev.node, total)):
        return None  # not a total updated from itself (fast weights rebuilt from old ones are not)
    added = _added(ev.node)
    fixes = ()
    if isinstance(stmt, ast.Assign) and _all_tensors(stmt.value):
        # the whole new value: the term added may not be all that carries a graph into the total
        # (``avg = loss if avg is None else 0.9 * avg + 0.1 * loss`` starts from the loss itself)
        fixes = (FixIntent("detach", f"Keep {short(total)} without its graph (`.detach()`)", (("expr", stmt.value),),
                           preferred=True, safe=True),)  # no backward walks the total: same values, same gradients
    elif added is not None:
        fixes = (FixIntent("detach", f"Add `{short(added)}` without its graph (`.detach()`)", (("expr", added),),
                           preferred=True, safe=True),)
    what = f"`{short(total)}`" if total is not None else "the total"
    return Report("GG202", ev.node, (("what", what),), True, fixes, t.roots, unless_walked=mine)


def _adds_new_graph(segs, node) -> bool:
    """Whether this iteration adds graph not computed from the total's previous value: a loss
    (``total += loss``), not a gradient of a function of the total itself (``w = w - lr * g`` with
    ``g = autograd.grad(f(w), w, create_graph=True)``: an inner loop unrolled on purpose) nor
    nothing at all (``g`` without a graph). This iteration's segments other than the addition's
    own are what is added; the ones no other of them was built on are its results, and a
    segment's ``deps`` hold the whole graph below it."""
    previous = frozenset(s for s in segs if s.site is node and s.old)
    added = [s for s in segs if not s.old and s.site is not node]
    below = frozenset().union(*(s.deps for s in added)) if added else frozenset()
    return any(not (s.deps & previous) for s in added if s not in below)


def _reads(expr, target) -> bool:
    """``expr`` reads the variable ``target`` assigns (``avg = 0.9 * avg + …``)."""
    want = ast.dump(target.__class__(**{**{f: getattr(target, f) for f in target._fields}, "ctx": ast.Load()}))
    return any(ast.dump(n) == want for n in ast.walk(expr) if isinstance(n, type(target)))


def _all_tensors(value) -> bool:
    """Every value ``value`` may take is computed (not a literal, which has no ``.detach()``)."""
    if isinstance(value, ast.IfExp):
        return _all_tensors(value.body) and _all_tensors(value.orelse)
    return not isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set))


def _added(node):
    """The term added each iteration: the right operand (``total += loss``; ``… + 0.1 * loss``)."""
    if isinstance(node, ast.AugAssign):
        return node.value
    if isinstance(node, ast.BinOp):
        return node.right
    return None


RULE = Rule(
    code="GG202",
    name="running-total-keeps-graphs",
    severity="warning",
    summary={
        "en": "a running total keeps the graph of every iteration alive",
        "zh-cn": "累加的总和保留了每次迭代的计算图",
    },
    message={
        "en": "{what} adds up tensors that require grad across iterations: it keeps every iteration's graph "
              "alive and no backward walks it; add `.item()` or `.detach()` values instead",
        "zh-cn": "{what} 在迭代间累加需要梯度的张量：它保留了每次迭代的计算图，且没有 backward 会用到它；"
                 "请改为累加 `.item()` 或 `.detach()` 的值",
    },
    fix_help={
        "en": "accumulate numbers (`total += loss.item()`) or detached tensors (`total += loss.detach()`); "
              "compute evaluation losses under `torch.no_grad()`.",
        "zh-cn": "累加数值（`total += loss.item()`）或 detach 后的张量（`total += loss.detach()`）；"
                 "评估时的损失请在 `torch.no_grad()` 下计算。",
    },
    events={"running_total": on_running_total},
    # evaluation code has no backward: files that add something up and compute a loss
    trigger=re.compile(r"\A(?=[\s\S]*(?:\+=|=\s*[\w.\[\]]+\s*\+))(?=[\s\S]*(?:loss|criterion)\w*\s*\()"),
)
