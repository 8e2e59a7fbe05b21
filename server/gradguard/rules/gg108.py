"""GG108: an in-place operation on a leaf that requires grad (or a view of one), with grad
recording on.

torch raises ``RuntimeError: a leaf Variable that requires grad is being used in an in-place
operation.`` (``a view of a leaf Variable …`` for ``w[i] = …``). The classic case is a
hand-written SGD step, ``w -= lr * w.grad``, outside ``torch.no_grad()``."""
from __future__ import annotations

import ast
import re

from ..values import YES
from . import FixIntent, Report, Rule, short


def on_in_place(ev) -> Report | None:
    # the grad mode must be known to be on: a helper nothing calls may run under no_grad
    if not ev.known_context or ev.grad_mode is not True:
        return None
    t = ev.tensors[0]
    # a view of a leaf (``b = conv.bias.view(3, -1)``) shares the leaf's memory: torch refuses too
    view = not t.leaf and t.storage is not None and t.storage in t.roots
    if not ((t.leaf or view) and t.grad == YES and t.exact and t.roots):
        return None
    kind = "a view of a leaf Variable" if ev.detail == "view" or view else "a leaf Variable"
    fixes = ()
    if ev.stmt is not None and ev.target is not None and not _an_update(ev.stmt):
        # the written value goes on into the graph (``weight = relu(self.weight)`` with an
        # in-place ReLU): the layer writes a copy, which passes the gradient back to the leaf
        fixes = (FixIntent("clone", f"Modify a copy: `{short(ev.target)}.clone()`", (("expr", ev.target),),
                           preferred=True),)
    elif ev.stmt is not None:
        run = ev.statement_run(_an_update)
        fixes = (FixIntent("no_grad", "Update under `torch.no_grad()`", (("stmt", (run[0], run[-1])),),
                           preferred=True, safe=True),)
    target = ev.target if ev.target is not None else getattr(ev.node, "target", ev.node)
    return Report("GG108", ev.node, (("call", f"`{short(ev.stmt or ev.node)}`"), ("kind", kind),
                                     ("what", f"`{short(target)}`")), True, fixes, t.roots)


def _an_update(stmt: ast.stmt) -> bool:
    """An in-place update as written: ``b -= …``, ``x[i] = …``, ``b.grad.zero_()``."""
    if isinstance(stmt, ast.AugAssign):
        return True
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Subscript) for t in stmt.targets)
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and call.func.attr.endswith("_") and not call.func.attr.startswith("_")



RULE = Rule(
    code="GG108",
    name="in-place-on-leaf-requiring-grad",
    severity="error",
    summary={
        "en": "a leaf tensor that requires grad (a parameter) is modified in place while grad is recorded",
        "zh-cn": "在记录梯度时原地修改了需要梯度的叶子张量（如参数）",
    },
    message={
        "en": "{call} raises \"{kind} that requires grad is being used in an in-place operation\": "
              "{what} is a leaf that requires grad; update it under `torch.no_grad()`",
        "zh-cn": "{call} 会报错“{kind} that requires grad is being used in an in-place operation”："
                 "{what} 是需要梯度的叶子张量；请在 `torch.no_grad()` 下更新它",
    },
    fix_help={
        "en": "wrap the update in `with torch.no_grad():` (an optimizer does the same), or use an "
              "out-of-place operation if the result should be part of the graph.",
        "zh-cn": "把更新放进 `with torch.no_grad():`（优化器也是这样做的）；若结果应属于计算图，改用非原地操作。",
    },
    events={"in_place": on_in_place},
    # a leaf made here; updates of a model's parameters sit next to the backward that fills .grad
    # a leaf made to require grad, or a layer's weight or bias written in place (or a view of it
    # that may be: YOLO's ``b = mi.bias.view(na, -1); b[:, 4] += ...``)
    trigger=re.compile(r"requires_grad\s*=\s*True|requires_grad_\(\s*\)"
                       r"|(?:weight|bias)(?:\s*\[[^\]\n]*\]\s*[-+*/]?=[^=]|\.\w+_\(|\s*[-+*/]=|\s*\.\s*view\()"),
    raises=True,
)
