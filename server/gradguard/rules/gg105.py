"""GG105: a backward (or ``autograd.grad``) without a gradient argument on outputs that are not
a single element.

torch raises ``RuntimeError: grad can be implicitly created only for scalar outputs``: without
``gradient=`` / ``grad_outputs=`` it seeds the backward with ones, which it does only for an
output of exactly one element. The usual causes: a loss with ``reduction='none'``, a mean over
one dimension only, a model's output, ``torch.stack`` of several losses."""
from __future__ import annotations

import ast

from ..shapes import not_single, unsized
from ..values import YES
from . import UNSIZED, FixIntent, Report, Rule, short

_STACKS = {"stack", "cat", "concat", "hstack", "vstack"}


def on_implicit_gradient(ev) -> Report | None:
    """``detail``: the keyword of the gradient argument the call went without."""
    wrong = [t for t in ev.tensors if t.grad == YES and t.exact and not_single(t.shape)]
    # one value per row of a dimension whose size is not known (a per-sample loss over a batch
    # of unknown size): torch raises unless that size is 1, a warning that says so
    sized = bool(wrong)
    if not wrong:
        wrong = [t for t in ev.tensors if t.grad == YES and t.exact and unsized(t.shape)]
    if not wrong:
        return None
    what = f"`{short(ev.target)}`" if ev.target is not None else "the outputs"
    call = "`autograd.grad`" if ev.detail == "grad_outputs" else "`backward()`"
    return Report("GG105", ev.node, (("call", call), ("what", what)), sized,
                  _fixes(ev, wrong[0]) if len(ev.tensors) == 1 else (), wrong[0].roots,
                  why="" if sized else UNSIZED)


def _fixes(ev, t) -> tuple:
    """Reduce the outputs, or pass ones as their gradient; which is preferred follows what they
    are: gradients of every point (``autograd.grad``) want ones, stacked losses their sum, a
    per-sample loss its mean."""
    if ev.target is None:
        return ()
    name = short(ev.target)
    keyword = ev.detail  # the call's gradient argument: gradient, grad_tensors, grad_outputs
    top = max(t.segs, key=lambda s: s.order).site if t.segs else None
    stacked = isinstance(top, ast.Call) and _callee(top) in _STACKS
    prefer = "ones" if keyword == "grad_outputs" else ("sum" if stacked else "mean")
    return (
        FixIntent("reduce_mean", f"Average `{name}` before the backward (`.mean()`)", (("expr", ev.target),),
                  preferred=prefer == "mean"),
        FixIntent("reduce_sum", f"Sum `{name}` before the backward (`.sum()`)", (("expr", ev.target),),
                  preferred=prefer == "sum"),
        FixIntent(f"ones_{keyword}", f"Pass `{keyword}=torch.ones_like({name})`",
                  (("expr", ev.target), ("call", ev.node)), preferred=prefer == "ones"),
    )


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


RULE = Rule(
    code="GG105",
    name="implicit-gradient-of-non-scalar",
    severity="error",
    summary={
        "en": "backward without a gradient argument on outputs that are not a single value",
        "zh-cn": "对非标量输出调用 backward 却未传入梯度参数",
    },
    message={
        "en": "{call} raises \"grad can be implicitly created only for scalar outputs\": {what} holds "
              "more than one value; reduce it (`.mean()` / `.sum()`) or pass the gradient of each value",
        "zh-cn": "{call} 会报错“grad can be implicitly created only for scalar outputs”：{what} 含有多个值；"
                 "请先归约（`.mean()` / `.sum()`），或传入每个值的梯度",
    },
    fix_help={
        "en": "reduce the outputs to one value (`loss.mean().backward()`, `losses.sum().backward()`), or "
              "pass their gradient: `out.backward(gradient=torch.ones_like(out))`, "
              "`autograd.grad(u, t, grad_outputs=torch.ones_like(u))`.",
        "zh-cn": "把输出归约为一个值（`loss.mean().backward()`、`losses.sum().backward()`），或传入梯度："
                 "`out.backward(gradient=torch.ones_like(out))`、"
                 "`autograd.grad(u, t, grad_outputs=torch.ones_like(u))`。",
    },
    events={"implicit_gradient": on_implicit_gradient},
    raises=True,
)
