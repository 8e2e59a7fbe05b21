"""GG102: a backward or ``autograd.grad`` through a freed graph again where it saves no tensors (no
error; two ``backward()`` calls accumulate the gradients twice, ``autograd.grad`` adds nothing).

Heard on ``walk_freed`` (the autograd state saw a backward reach freed graph); told, explained
and fixed by :mod:`gradguard.rules.freed`, which GG101 and GG102 share."""
from __future__ import annotations

from . import Report, Rule
from .freed import finding, known_origin, report


def on_walk_freed(ev) -> Report | None:
    """Only freed nodes that saved nothing: torch runs them again without a word."""
    hits = known_origin(ev.cause)
    if not hits or any(s.saves or s.saves is None for s in hits):
        return None
    return report("GG102", ev, hits, hits, ev.cause.exact)


RULE = Rule(
    code="GG102",
    name="repeated-backward-no-saved-tensors",
    severity="warning",
    summary={
        "en": "a backward or `autograd.grad` walks a freed graph again; it does not raise only because "
              "the graph saves no tensors (two `backward()` calls accumulate the gradients twice)",
        "zh-cn": "backward 或 `autograd.grad` 再次经过已释放的计算图；只因图中没有保存张量才没有报错"
                 "（两次 `backward()` 会把梯度累加两次）",
    },
    message={
        "en": "{call} walks the graph of {what} (line {built_line}) again after {freed_call} "
              "on line {freed_line}{when}; it does not raise because that graph saves no "
              "tensors{effect}",
        "zh-cn": "{call} 在{freed_where_zh}的 {freed_call} 之后{when_zh}再次经过 {what}"
                 "（{built_where_zh}）的计算图；由于该图没有保存张量所以不会报错{effect_zh}",
    },
    fix_help={
        "en": "if the graph is meant to be walked again, say so with `retain_graph=True` on the earlier "
              "call (and, for two `backward()` calls whose gradients should count once, clear `.grad` "
              "in between); otherwise detach the shared part or compute it under `torch.no_grad()`.",
        "zh-cn": "如果确实要再次遍历该图，在前一次调用中加上 `retain_graph=True`（若两次 `backward()` 的梯度"
                 "只应计一次，中间清空 `.grad`）；否则用 `.detach()` 或在 `torch.no_grad()` 下计算共享部分。",
    },
    events={"walk_freed": on_walk_freed},
    finding=finding,
    first_stands=True,
)
