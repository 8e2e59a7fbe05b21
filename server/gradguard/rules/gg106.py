"""GG106: ``.grad`` of a tensor that is not a leaf.

torch warns ``UserWarning: The .grad attribute of a Tensor that is not a leaf Tensor is being
accessed. Its .grad attribute won't be populated during autograd.backward().`` and the value is
``None``. The tensor looks like a leaf but was computed: ``torch.randn(…, requires_grad=True) *
0.01``, ``.to(device)`` of a leaf, a perturbation added to an input, a model's feature map."""
from __future__ import annotations


from ..values import YES
from . import Report, Rule, short


def on_read_grad(ev) -> Report | None:
    t = ev.tensors[0]
    if t.leaf or t.grad != YES or not t.exact or not t.roots or ev.detail == "retained":
        return None
    what = short(ev.target) if ev.target is not None else "the tensor"
    return Report("GG106", ev.node, (("what", f"`{what}`"),), True, (), t.roots)



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
              "being accessed'",
        "zh-cn": "{what} 不是叶子张量（它由需要梯度的张量计算得到），所以它的 `.grad` 为 None，torch 会警告"
                 "“The .grad attribute of a Tensor that is not a leaf Tensor is being accessed”",
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
