"""GG201: gradients that a step already applied are added to and applied again.

``backward()`` adds to ``.grad``; it does not replace it. Without ``zero_grad()`` (or
``p.grad = None``) between a step and the next backward, the next step applies the old gradients
once more, plus the new ones: the update grows with every iteration. torch raises nothing.
Accumulating several backwards before one step, on purpose, is not a finding: only a backward
onto gradients a step has *applied* is.

The rule keeps, for every parameter, what its ``.grad`` holds in the abstract state (a fact of
its own, joined like every value: a path that resets and one that does not make it unknown),
and which step applied it on some path with no reset since (a step run on some iterations only,
``if (i + 1) % accum == 0: opt.step()``: the iterations after it add to what it applied, unless
some path clears the gradients)."""
from __future__ import annotations

import ast

from ..torch_api import OPTIMIZER_STEP_METHODS
from ..values import UNKNOWN, Const
from . import FixIntent, Report, Rule, short

# what a parameter's .grad holds: cleared, gradients not yet applied, gradients a step applied,
# or ("stale", backward, step): applied gradients a backward added to
CLEAR, FRESH = "clear", "fresh"


def _key(root):
    return ("GG201", root)


def _applied_by(root):
    """The step that applied this parameter's gradients on some path, with no reset since on
    any: a fact every path keeps (joins keep a key one side lacks), unknown once one resets."""
    return ("GG201", ("applied by", root))


def on_backward(ev) -> None:
    if ev.detail == "grads" or ev.facts is None:  # autograd.grad leaves .grad alone
        return None
    for root in frozenset().union(*(t.roots for t in ev.tensors)) if ev.tensors else ():
        held = ev.facts.get(_key(root))
        if held is None or held == Const(CLEAR) or held == Const(FRESH):
            ev.facts[_key(root)] = Const(FRESH)
        elif type(held) is Const and type(held.value) is tuple and held.value[0] == "applied":
            ev.facts[_key(root)] = Const(("stale", ev.node, held.value[1], ev.stmt, held.value[2]))
        elif held is UNKNOWN:
            step = ev.facts.get(_applied_by(root))
            if type(step) is Const and type(step.value) is tuple:  # applied on the paths it ran
                ev.facts[_key(root)] = Const(("stale", ev.node, *step.value[:1], ev.stmt, *step.value[1:]))
    return None


def on_step(ev) -> Report | None:
    if ev.facts is None:
        return None
    stale = []
    for root in ev.roots:
        held = ev.facts.get(_key(root))
        if held is None or held is UNKNOWN or type(held) is not Const or held == Const(CLEAR):
            continue
        if type(held.value) is tuple and held.value[0] == "stale":
            stale.append((root, held.value))
        ev.facts[_key(root)] = Const(("applied", ev.node, ev.stmt))
    for root in ev.roots:
        ev.facts[_applied_by(root)] = Const((ev.node, ev.stmt))
    if not stale:
        return None
    _, (_, backward, applied, stmt, applied_stmt) = min(stale, key=lambda s: (s[1][1].lineno, s[1][1].col_offset))
    step = f"`{short(applied)}`"
    fixes = ()
    manual = _manual_resets([value for _, value in stale], ev)
    if manual is not None:
        after, lines = manual
        fixes = (FixIntent("insert_after", f"Clear the gradients after the update: `{lines[0]}`", (("after", after),),
                           preferred=True, texts=(("statement", "\n".join(lines)),)),)
    elif isinstance(applied, ast.Call) and isinstance(applied.func, ast.Attribute) and isinstance(applied_stmt, ast.Expr) \
            and applied_stmt.value is applied:
        # right after the step that applied them: gradients accumulated before a step still add up
        clear = _clearing(applied)
        fixes = (FixIntent("insert_after", f"Clear the gradients after `{short(applied)}`: `{clear}`",
                           (("after", applied_stmt),), preferred=True, texts=(("statement", clear),)),)
    elif isinstance(ev.node, ast.Call) and isinstance(ev.node.func, ast.Attribute) and stmt is not None:
        clear = _clearing(ev.node)
        fixes = (FixIntent("insert_before", f"Clear the gradients first: `{clear}`", (("before", stmt),),
                           preferred=True, texts=(("statement", clear),)),)
    target = backward.func.value if isinstance(backward, ast.Call) and isinstance(backward.func, ast.Attribute) \
        else backward
    return Report("GG201", backward, (("call", f"`{short(target)}.backward()`" if target is not backward
                                       else f"`{short(backward)}`"), ("step", step)),
                  True, fixes, frozenset(root for root, _ in stale))


def _clearing(call) -> str:
    """What clears the gradients a step call applied: an optimizer's (or a module's)
    ``zero_grad()``; for a tensor updated in place by hand (``w.add_(...)``), ``w.grad = None``."""
    owner = short(call.func.value)
    if call.func.attr in OPTIMIZER_STEP_METHODS:
        return f"{owner}.zero_grad()"
    return f"{owner}.grad = None"


def _manual_resets(stale: list, ev):
    """For gradients applied by hand (``W -= lr * W.grad``, ``p.sub_(lr * p.grad)``): the last
    of those updates (with the hand-written updates next to them) and the
    ``p.grad = None`` lines to put after it, when they share one block.  A tensor whose ``.grad``
    the block uses after them is left to that code."""
    stmts = [s for _, _, _, _, s in stale]
    if any(_updated(s) is None for s in stmts):
        return None
    block = _block_of(stmts[0], ev.scope)
    if block is None or any(not any(s is b for b in block) for s in stmts):
        return None
    i = j = next(i for i, b in enumerate(block) if b is stmts[0])
    while i > 0 and _updated(block[i - 1]) is not None:
        i -= 1
    while j + 1 < len(block) and _updated(block[j + 1]) is not None:
        j += 1
    stmts += block[i:j + 1]
    last = max(stmts, key=_position)
    after = block[next(i for i, b in enumerate(block) if b is last) + 1:]
    used = {ast.unparse(n.value) for b in after for n in ast.walk(b) if isinstance(n, ast.Attribute) and n.attr == "grad"}
    names = [ast.unparse(_updated(s)) for s in sorted(stmts, key=_position)]
    lines = [f"{n}.grad = None" for n in dict.fromkeys(names) if n not in used]
    return (last, lines) if lines else None


def _updated(stmt):
    """The tensor a hand-written step updates in place with its own gradient, or None."""
    if isinstance(stmt, ast.AugAssign):
        tensor, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute):
        tensor, value = stmt.value.func.value, stmt.value
    else:
        return None
    if not isinstance(tensor, (ast.Name, ast.Attribute)):
        return None
    text = ast.unparse(tensor)
    reads_grad = any(isinstance(n, ast.Attribute) and n.attr == "grad" and ast.unparse(n.value) == text
                     for n in ast.walk(value))
    return tensor if reads_grad else None


def _position(node):
    return (node.lineno, node.col_offset)


def _block_of(stmt, scope):
    for node in ast.walk(scope) if scope is not None else ():
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


def on_grad_reset(ev) -> None:
    if ev.facts is not None:
        for root in ev.roots:
            ev.facts[_key(root)] = Const(CLEAR)
            if _applied_by(root) in ev.facts:  # (a reset before any step leaves no fact to join)
                ev.facts[_applied_by(root)] = Const(CLEAR)
    return None


RULE = Rule(
    code="GG201",
    name="gradients-applied-twice",
    severity="warning",
    summary={
        "en": "a backward adds to gradients a step already applied (no zero_grad in between)",
        "zh-cn": "backward 累加到已被 step 使用过的梯度上（中间没有 zero_grad）",
    },
    message={
        "en": "{call} adds to gradients that {step} already applied: nothing clears `.grad` in between, so "
              "the next step applies the old gradients again; call `zero_grad()` before the backward",
        "zh-cn": "{call} 累加到 {step} 已经使用过的梯度上：中间没有清空 `.grad`，下一次 step 会再次应用旧梯度；"
                 "请在 backward 之前调用 `zero_grad()`",
    },
    fix_help={
        "en": "call `optimizer.zero_grad()` (or set `p.grad = None`) once per step, before the backward; when "
              "accumulating gradients over several backwards, clear them right after each step.",
        "zh-cn": "每次 step 调用一次 `optimizer.zero_grad()`（或设 `p.grad = None`），放在 backward 之前；"
                 "若要在多次 backward 之间累积梯度，请在每次 step 之后立即清空。",
    },
    events={"backward": on_backward, "step": on_step, "grad_reset": on_grad_reset},
)
