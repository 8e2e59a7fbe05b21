"""GG107: ``.numpy()`` (or a NumPy function) on a tensor that requires grad.

torch raises ``RuntimeError: Can't call numpy() on Tensor that requires grad. Use
tensor.detach().numpy() instead.`` The tensor requires grad when it is a parameter, a
``requires_grad=True`` leaf, or computed from one with grad recording on, whatever the grad
mode is where it is converted."""
from __future__ import annotations

import ast
import re

from ..torch_api import NUMPY_CONVERTERS
from ..values import YES
from . import FixIntent, Report, Rule, short

# ``.numpy()``, or one of the NumPy functions the rule hears about (``torch_api.NUMPY_CONVERTERS``):
# a text with neither cannot hold this finding
_NUMPY_FUNCTIONS = sorted({qual.rsplit(".", 1)[1] for qual in NUMPY_CONVERTERS})
TRIGGER = re.compile(r"\.numpy\s*\(|\b(?:np|numpy)\.(?:" + "|".join(_NUMPY_FUNCTIONS) + r")\s*\(")


def on_to_numpy(ev) -> Report | None:
    needing = [t for t in ev.tensors if t.grad == YES]
    if not needing or not all(t.exact for t in needing):
        return None
    if ev.caller_grad and not all(t.leaf for t in needing):
        return None  # computed with grad on only if its caller, not seen, runs it so
    fixes = ()
    elements = dict(ev.places).get("elements")
    if ev.target is not None:
        # .cpu() as well: NumPy refuses a CUDA tensor, and on the CPU it returns the tensor as is
        on_cpu = isinstance(ev.target, ast.Call) and isinstance(ev.target.func, ast.Attribute) \
            and ev.target.func.attr == "cpu"  # ``x.cpu().numpy()``: only the detach is missing
        fixes = (FixIntent("detach" if on_cpu else "detach_cpu",
                           f"Detach `{short(ev.target)}`{'' if on_cpu else ' and bring it to the CPU'} before converting it",
                           (("expr", ev.target),), preferred=True, safe=True),)
    elif elements is not None:  # a list of tensors: detach each as NumPy takes it
        fixes = (FixIntent("detach_elements", f"Detach the tensors of `{short(elements)}` before converting them",
                           (("expr", elements),), preferred=True, safe=True),)
    what = f"`{short(ev.target)}`" if ev.target is not None else "a tensor in the list"
    return Report("GG107", ev.node, (("call", f"`{short(ev.node)}`"), ("what", what)), True, fixes,
                  frozenset().union(*(t.roots for t in needing)))



RULE = Rule(
    code="GG107",
    name="numpy-of-tensor-requiring-grad",
    severity="error",
    summary={
        "en": "a tensor that requires grad is converted to NumPy",
        "zh-cn": "将需要梯度的张量转换为 NumPy 数组",
    },
    message={
        "en": "{call} raises \"Can't call numpy() on Tensor that requires grad\": {what} requires grad "
              "(it is computed from trainable tensors); detach it first",
        "zh-cn": "{call} 会报错“Can't call numpy() on Tensor that requires grad”：{what} 需要梯度"
                 "（由可训练的张量计算得到）；请先 detach",
    },
    fix_help={
        "en": "convert `t.detach().cpu().numpy()`, or `t.item()` for a single number; or compute the "
              "value under `torch.no_grad()` if no gradient is wanted.",
        "zh-cn": "使用 `t.detach().cpu().numpy()` 转换，标量可用 `t.item()`；若不需要梯度，也可以在 "
                 "`torch.no_grad()` 下计算它。",
    },
    events={"to_numpy": on_to_numpy},
    trigger=TRIGGER,
    raises=True,
)
