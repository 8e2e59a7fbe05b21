"""GG104: a backward (or ``autograd.grad``) on outputs that do not require grad.

torch raises ``RuntimeError: element 0 of tensors does not require grad and does not have a
grad_fn``. Nothing the outputs were computed from requires grad where it was used: the loss was
built under ``torch.no_grad()`` / ``torch.inference_mode()`` or in a ``@torch.no_grad()``
function, every input was detached, the loss was rebuilt from Python numbers
(``torch.tensor(loss.item())``), or it comes from gradients taken without
``create_graph=True``."""
from __future__ import annotations

import ast
import dataclasses

from .. import torch_api as api
from ..findings import Fix
from ..values import NEVER, Const, Root
from . import FixIntent, Report, Rule, short

# the reasons a tensor does not require grad, most telling first
_ORDER = ("reentrant", "grad_off", "no_create_graph", "rebuilt", "detach")
_WHY = {
    "reentrant": ("it comes out of a reentrant checkpoint{at}, which records a backward only when a tensor "
                  "argument requires grad (the parameters inside do not count)",
                  "它来自可重入的检查点{at_zh}：只有当某个张量参数需要梯度时才会记录反向（其中的参数不算）"),
    "grad_off": ("it was computed with grad recording off{at}",
                 "它是在关闭梯度记录时计算的{at_zh}"),
    "no_create_graph": ("it is computed from gradients `autograd.grad` returned without "
                        "`create_graph=True`{at}",
                        "它由 `autograd.grad` 在未设置 `create_graph=True` 时返回的梯度计算得到{at_zh}"),
    "rebuilt": ("it was rebuilt from Python numbers{at}", "它是由 Python 数值重新构造的{at_zh}"),
    "detach": ("everything it is computed from is detached{at}", "它所依赖的张量都已被 detach{at_zh}"),
    None: ("nothing it is computed from requires grad", "它所依赖的张量都不需要梯度"),
}
_RELATED = {"reentrant": "reentrant", "grad_off": "grad_off", "no_create_graph": "no_create_graph", "rebuilt": "rebuilt",
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
    # nothing else explains it: the parameters frozen here (``requires_grad = False``) may be
    # what the loss was computed from; the finding checks them against the optimizer's
    frozen = frozenset(r for r in _frozen(ev.facts)) if kind is None else frozenset()
    return Report("GG104", ev.node, args, True, _fixes(kind, sites), related=related, cause=frozen or None)


def _frozen(heap) -> list:
    """The parameters (``values.Root``) frozen for sure in ``heap``."""
    return [key[0] for key, value in (heap or {}).items() if type(key) is tuple and len(key) == 2
            and key[1] == "frozen" and type(key[0]) is Root and value == Const(True)]


def finding(report: Report, path: str, locate, context: dict):
    from . import plain_finding  # defined after the rules are found

    out = plain_finding(report, path, locate)
    frozen = report.cause or frozenset()
    if out.fixes or not frozen & context.get("trained", frozenset()) or path != context.get("main_path"):
        return out
    fix = _unfreeze_fix(report.node, context["parents"], locate, path)
    return dataclasses.replace(out, fixes=(fix,)) if fix is not None else out


def _unfreeze_fix(node, parents, locate, path):
    """The optimizer was given frozen parameters: make its parameters require grad again, right
    before it is built (``for p in model[1].parameters(): p.requires_grad_(True)``).  Only for
    the file's one optimizer, given ``<chain>.parameters()`` (which can be evaluated again), built
    in the block that then runs the backward with nothing in between setting ``requires_grad``."""
    tree = parents.tree
    optimizers = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_optimizer(n.func, tree)]
    if len(optimizers) != 1:
        return None
    call = optimizers[0]
    params = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
    if not (isinstance(params, ast.Call) and isinstance(params.func, ast.Attribute)
            and params.func.attr == "parameters" and not params.args and not params.keywords
            and _chain(params.func.value)):
        return None
    stmt = parents.statement(call)
    parent = parents.parent(stmt) if stmt is not None else None
    block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse", "finalbody"))
                  if isinstance(b, list) and any(s is stmt for s in b)), None)
    if block is None:
        return None
    i = next(i for i, s in enumerate(block) if s is stmt)
    holder = parents.statement(node)
    while holder is not None and not any(holder is s for s in block[i + 1:]):
        holder = parents.statement(parents.parent(holder))
    if holder is None or any(_sets_requires_grad(s) for s in block[i:block.index(holder) + 1]):
        return None
    text = ast.unparse(params)
    if any(isinstance(s, ast.For) and ast.unparse(s.iter) == text and _sets_requires_grad(s) for s in block[:i]):
        return None  # made to require grad already (this fix, applied before)
    name = _loop_name(tree)
    return Fix("insert_before", f"Make the optimizer's parameters require grad again (`{text}`), before it is "
                                "built: they were frozen with the rest",
               (("before", locate(stmt, path)),), preferred=True,
               texts=(("statement", f"for {name} in {text}:\n    {name}.requires_grad_(True)"),))


def _chain(expr) -> bool:
    """``model``, ``model.head``, ``model[1]``, ``nets["g"].body``: evaluated again, the same object."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, (ast.Constant, ast.Name)):
            return False
        expr = expr.value
    return isinstance(expr, ast.Name)


def _sets_requires_grad(stmt) -> bool:
    """``x.requires_grad = ...`` / ``m.requires_grad_(...)`` anywhere in ``stmt``."""
    for n in ast.walk(stmt):
        if isinstance(n, ast.Attribute) and n.attr == "requires_grad" and isinstance(n.ctx, ast.Store):
            return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "requires_grad_":
            return True
    return False


def _is_optimizer(func, tree) -> bool:
    """``torch.optim.SGD``, ``optim.Adam``, ``SGD`` imported from ``torch.optim`` (not a scheduler)."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    head = _imports(tree).get(func.id)
    if head is None:
        return False
    qual = ".".join([head, *reversed(parts)])
    return qual.startswith(api.OPTIMIZER_PREFIXES) and not qual.startswith(api.NOT_OPTIMIZER_PREFIXES) \
        and qual.rsplit(".", 1)[-1][:1].isupper()


def _imports(tree) -> dict:
    """Name -> the dotted name it was imported as (``import torch.optim as optim``: optim -> torch.optim)."""
    out = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            for a in n.names:
                out[a.asname or a.name] = f"{n.module}.{a.name}"
    return out


def _loop_name(tree) -> str:
    """``p``, unless the file uses ``p`` other than as a loop's own variable; then a free name."""
    loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.comprehension))]
    for name in ("p", "param", "parameter"):
        targets = {id(t) for loop in loops for t in ast.walk(loop.target) if isinstance(t, ast.Name) and t.id == name}
        inside = {id(n) for loop in loops if any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(loop.target))
                  for part in (loop.body if isinstance(loop, ast.For) else [loop]) for n in ast.walk(part)}
        uses = [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == name
                or isinstance(n, ast.arg) and n.arg == name]
        if all(id(n) in targets or id(n) in inside for n in uses):
            return name
    return "_param"


def _fixes(kind, sites) -> tuple:
    if not sites:
        return ()
    if kind == "reentrant":
        return (FixIntent("no_reentrant", "Checkpoint with `use_reentrant=False`: the backward starts from the "
                          "parameters inside too", (("call", sites[0]),), preferred=True),)
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
    finding=finding,
)
