"""GG104: a backward (or ``autograd.grad``) on outputs that do not require grad.

torch raises ``RuntimeError: element 0 of tensors does not require grad and does not have a
grad_fn``. Nothing the outputs were computed from requires grad where it was used: the loss was
built under ``torch.no_grad()`` / ``torch.inference_mode()`` or in a ``@torch.no_grad()``
function, every input was detached, the loss was rebuilt from Python numbers
(``torch.tensor(loss.item())``), or it comes from gradients taken without
``create_graph=True``."""
from __future__ import annotations

import ast

from ..values import NEVER
from . import FixIntent, Report, Rule, short

# the reasons a tensor does not require grad, most telling first
_ORDER = ("grad_off", "no_create_graph", "rebuilt", "detach")
_WHY = {
    "grad_off": ("it was computed with grad recording off{at}",
                 "它是在关闭梯度记录时计算的{at_zh}"),
    "no_create_graph": ("it is computed from gradients `autograd.grad` returned without "
                        "`create_graph=True`{at}",
                        "它由 `autograd.grad` 在未设置 `create_graph=True` 时返回的梯度计算得到{at_zh}"),
    "rebuilt": ("it was rebuilt from Python numbers{at}", "它是由 Python 数值重新构造的{at_zh}"),
    "detach": ("everything it is computed from is detached{at}", "它所依赖的张量都已被 detach{at_zh}"),
    None: ("nothing it is computed from requires grad", "它所依赖的张量都不需要梯度"),
}
_RELATED = {"grad_off": "grad_off", "no_create_graph": "no_create_graph", "rebuilt": "rebuilt",
            "detach": "detached"}


def on_backward(ev) -> Report | None:
    if not ev.tensors or any(t.grad != NEVER for t in ev.tensors):
        return None
    reasons = sorted({r for t in ev.tensors for r in t.why},
                     key=lambda r: (_ORDER.index(r[0]), _position(r[1])))
    kind = reasons[0][0] if reasons else None
    sites = [node for k, node in reasons if k == kind and node is not None]
    at = f" (`{short(sites[0])}`)" if sites else ""
    what = f"`{short(ev.target)}`" if ev.target is not None else "the outputs"
    call = "`autograd.grad`" if ev.detail == "grads" else "`backward()`"
    en, zh = _WHY[kind]
    args = (("call", call), ("what", what), ("why", en.format(at=at)), ("why_zh", zh.format(at_zh=at)))
    related = tuple((_RELATED[k], node, (("what", short(node)),)) for k, node in reasons[:3] if node is not None)
    return Report("GG104", ev.node, args, True, _fixes(kind, sites), related=related)


def _fixes(kind, sites) -> tuple:
    if not sites:
        return ()
    if kind == "grad_off":
        return (FixIntent("enable_grad", f"Record the graph: `{short(sites[0])}` -> `torch.enable_grad()`",
                          (("expr", sites[0]),), preferred=True),)
    if kind == "no_create_graph":
        return (FixIntent("create_graph", "Take the gradients with `create_graph=True`", (("call", sites[0]),),
                          preferred=True),)
    if kind == "rebuilt":
        value = _from_items(sites[0])
        if value is None:
            return ()
        return (FixIntent("keep_tensors", "Keep the tensors instead of rebuilding them from `.item()` numbers",
                          (("expr", sites[0]), ("value", value)), preferred=True),)
    if kind == "detach":
        return tuple(FixIntent("drop_detach", f"Keep the graph of `{short(_receiver(node))}` (remove the detach)",
                               (("expr", node), ("receiver", _receiver(node))), preferred=i == 0)
                     for i, node in enumerate(sites) if _receiver(node) is not None)
    return ()


def _from_items(call):
    """The argument of ``torch.tensor(a.item() + 0.1 * b.item())`` when it is arithmetic over
    ``.item()`` numbers and plain values: without the ``.item()`` calls it computes the same
    number as a tensor that keeps its graph."""
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
        return None
    value, items = call.args[0], 0
    for node in ast.walk(value):
        if _is_item(node):
            items += 1
        elif not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Attribute, ast.Load,
                                   ast.operator, ast.unaryop)) and not any(_is_item(c) and c.func is node
                                                                           for c in ast.walk(value)):
            return None
    return value if items else None


def _is_item(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item" \
        and not node.args and not node.keywords


def _receiver(node):
    """``x`` in ``x.detach()``, ``x.data`` and ``torch.detach(x)``."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and not node.args:
            return node.func.value
        return node.args[0] if node.args else None
    if isinstance(node, ast.Attribute):
        return node.value
    return None


def _position(node):
    return (node.lineno, node.col_offset) if node is not None else (0, 0)


RULE = Rule(
    code="GG104",
    name="backward-of-tensor-without-grad",
    severity="error",
    summary={
        "en": "backward on outputs that do not require grad (no graph to walk)",
        "zh-cn": "对不需要梯度的输出调用 backward（没有可回溯的计算图）",
    },
    message={
        "en": "{call} raises \"element 0 of tensors does not require grad and does not have a grad_fn\": "
              "{what} does not require grad, {why}",
        "zh-cn": "{call} 会报错“element 0 of tensors does not require grad and does not have a grad_fn”："
                 "{what} 不需要梯度，{why_zh}",
    },
    fix_help={
        "en": "build the loss with grad recording on (outside `torch.no_grad()` / `inference_mode()`, not "
              "in a `@torch.no_grad()` helper), keep the model's side of the loss undetached, keep tensors "
              "rather than `.item()` numbers, and pass `create_graph=True` to `autograd.grad` when its "
              "gradients go into a loss.",
        "zh-cn": "在开启梯度记录时构造损失（不要放在 `torch.no_grad()` / `inference_mode()` 中，也不要用 "
                 "`@torch.no_grad()` 修饰的函数），不要 detach 模型一侧的输出，保留张量而不是 `.item()` 数值；"
                 "若梯度要进入损失，调用 `autograd.grad` 时传入 `create_graph=True`。",
    },
    events={"backward": on_backward},
    raises=True,
)
