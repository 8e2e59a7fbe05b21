"""GG102: backward() through a graph again where it saves no tensors (no error; gradients accumulate twice).

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
        "en": "backward() walks the same graph again; it does not raise because the graph "
              "saves no tensors, but gradients are accumulated twice",
        "zh-cn": "backward() 再次经过同一计算图；由于图中没有保存张量所以不会报错，但梯度会被累加两次",
    },
    message={
        "en": "{call} walks the graph of {what} (line {built_line}) again after {freed_call} "
              "on line {freed_line}{when}; it does not raise because that graph saves no "
              "tensors, but the gradients of {origin} are accumulated twice",
        "zh-cn": "{call} 在{freed_where_zh}的 {freed_call} 之后{when_zh}再次经过 {what}"
                 "（{built_where_zh}）的计算图；由于该图没有保存张量所以不会报错，但 {origin_zh} "
                 "的梯度会被累加两次",
    },
    fix_help={
        "en": "detach the shared part or compute it under `torch.no_grad()` if its gradient should "
              "count once; keep it if accumulating twice is intended.",
        "zh-cn": "如果共享部分的梯度只应计算一次，用 `.detach()` 或在 `torch.no_grad()` 下计算它；"
                 "若确实需要累加两次，可保留。",
    },
    events={"walk_freed": on_walk_freed},
    finding=finding,
    first_stands=True,
)
