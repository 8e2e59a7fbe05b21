"""GG106: ``.grad`` of a tensor that is not a leaf.

torch warns ``UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being
accessed. Its .grad attribute won't be populated during autograd.backward().`` and the value is
``None``. The tensor looks like a leaf but was computed: ``torch.randn(…, requires_grad=True) *
0.01``, ``.to(device)`` of a leaf, a perturbation added to an input, a model's feature map."""
from __future__ import annotations


import ast
import functools
from collections import Counter

from ..values import YES
from . import FixIntent, Report, Rule, short
from .freed import _read_before_written


def on_read_grad(ev) -> Report | None:
    t = ev.tensors[0]
    if t.leaf or t.grad != YES or not t.exact or not t.roots or ev.detail == "retained":
        return None
    what = short(ev.target) if ev.target is not None else "the tensor"
    if ev.detail == "reader":  # a library function reads it (gradient clipping): nothing to use
        owners = {r.name for r in t.roots if r.kind == "params"}
        fixes = ()
        if ev.target is not None and len(owners) == 1 and owners == {r.name for r in t.roots}:
            # the parameters of the one module the tensor was computed from
            params = f"{owners.pop()}.parameters()"
            fixes = (FixIntent("replace_expr", f"Clip `{params}` instead", (("expr", ev.target),), preferred=True,
                               texts=(("text", params),)),)
        return Report("GG106", ev.node, (("what", f"`{what}`"), ("raises", READER)), True, fixes, t.roots)
    raises = ev.known_context and _used_as_tensor(ev.node, ev.stmt)
    return Report("GG106", ev.node, (("what", f"`{what}`"), ("raises", RAISES if raises else "")), True,
                  _fixes(ev, t), t.roots, severity="error" if raises else None)


# what the message adds when the None is used on the spot (then the finding is an error)
RAISES = "; used here as a tensor, that None raises a TypeError or AttributeError"
# ... and when a library function reads it (it skips a None): what it should be given
READER = "; this call reads it, and skips it: pass the parameters whose gradients it should clip"


def _used_as_tensor(read: ast.AST, stmt) -> bool:
    """Whether the ``None`` read is used right there as a tensor, which raises: an attribute of
    it (``W.grad.data``, ``W.grad.zero_()``), an item, an operand (``W -= lr * W.grad``)."""
    for node in ast.walk(stmt) if stmt is not None else ():
        if isinstance(node, (ast.Attribute, ast.Subscript)) and node.value is read:
            return True
        if isinstance(node, ast.BinOp) and read in (node.left, node.right):
            return True
        if isinstance(node, ast.UnaryOp) and node.operand is read:
            return True
        if isinstance(node, ast.AugAssign) and node.value is read:
            return True
    return False


def _fixes(ev, t) -> tuple:
    """Make the tensor a leaf after the arithmetic when its ``requires_grad=True`` is in the
    statement that computed it (``W = torch.randn(4, requires_grad=True) * 0.01``); otherwise keep
    its gradient with ``retain_grad()`` right after that statement. Only when one statement
    computed every value the read may see."""
    if not isinstance(ev.target, ast.Name) or not t.segs:
        return ()
    # the statements that made the value read (the tops of its graph: a view of a value made
    # on an earlier line is the view's), not those of the graph below it
    below = frozenset().union(*(s.deps for s in t.segs))
    stmts = {id(s.stmt): s.stmt for s in t.segs if s.stmt is not None and s not in below}
    top = max(t.segs, key=lambda s: s.order).stmt
    if len(stmts) != 1:
        return _leaf_each_iteration(ev)
    if not (isinstance(top, ast.Assign) and len(top.targets) == 1 and isinstance(top.targets[0], ast.Name)
            and top.targets[0].id == ev.target.id):
        return ()
    name = ev.target.id
    for root in t.roots:
        keyword = _requires_grad_keyword(root.node)
        if keyword is not None and root.stmt is top:
            return (FixIntent("leaf_after", f"Make `{name}` a leaf after computing it (`.requires_grad_()`)",
                              (("expr", top.value), ("call", root.node)), preferred=True),)
    if _assignments(ev.scope, name) > 1:
        return _leaf_each_iteration(ev)  # retain_grad() would keep the gradient of one of its values only
    return (FixIntent("insert_after", f"Keep the gradient of `{name}`: `{name}.retain_grad()`", (("after", top),),
                      preferred=True, texts=(("statement", f"{name}.retain_grad()"),)),)


def _leaf_each_iteration(ev) -> tuple:
    """A value the loop computes anew from its last one (``x_adv = x_adv + alpha * g``) cannot be
    made a leaf once: make it one at the top of every iteration, from where it flows in."""
    name = ev.target.id
    loops = [n for n in ast.walk(ev.scope) if isinstance(n, (ast.For, ast.While, ast.AsyncFor))
             and n.body and _within(ev.stmt, n)] if ev.scope is not None and ev.stmt is not None else []
    if not loops:
        return ()
    loop = max(loops, key=lambda n: (n.lineno, n.col_offset))
    rebound = any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == name
                  for s in loop.body for n in ast.walk(s))
    if not rebound or name not in _read_before_written(loop):
        return ()
    return (FixIntent("insert_before", f"Make `{name}` a leaf at the start of every iteration "
                                       "(`.detach().requires_grad_()`)", (("before", loop.body[0]),), preferred=True,
                      texts=(("statement", f"{name} = {name}.detach().requires_grad_()"),)),)


def _within(node, outer) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _assignments(scope, name: str) -> int:
    return _assigned(scope)[name] if scope is not None else 2


@functools.lru_cache(maxsize=4)  # a loop reads .grad many times: walk its scope once
def _assigned(scope) -> Counter:
    return Counter(n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))


def _requires_grad_keyword(node):
    if isinstance(node, ast.Call):
        for k in node.keywords:
            if k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True:
                return k
    return None



RULE = Rule(
    code="GG106",
    name="grad-of-non-leaf",
    severity="warning",
    summary={
        "en": "`.grad` of a tensor that is not a leaf: it is None (torch warns)",
        "zh-cn": "读取非叶子张量的 `.grad`：其值为 None（torch 会发出警告）",
    },
    message={
        "en": "{what} is not a leaf (it was computed from a tensor that requires grad), so its `.grad` "
              "is None and torch warns 'The .grad attribute of a Tensor that is not a leaf Tensor is "
              "being accessed'{raises}",
        "zh-cn": "{what} 不是叶子张量（它由需要梯度的张量计算得到），所以它的 `.grad` 为 None，torch 会警告"
                 "“The .grad attribute of a Tensor that is not a leaf Tensor is being accessed”{raises}",
    },
    fix_help={
        "en": "make the tensor a leaf after the arithmetic (`(torch.randn(n) * 0.01).requires_grad_()`, "
              "`torch.randn(n, device=device, requires_grad=True)`), read the leaf's `.grad` instead, "
              "or call `.retain_grad()` on it before the backward.",
        "zh-cn": "在运算之后再把张量设为叶子（`(torch.randn(n) * 0.01).requires_grad_()`、"
                 "`torch.randn(n, device=device, requires_grad=True)`），改为读取叶子张量的 `.grad`，"
                 "或在 backward 之前对它调用 `.retain_grad()`。",
    },
    # no trigger: a .grad is filled by a backward, so files that reach none are left alone
    events={"read_grad": on_read_grad},
)
