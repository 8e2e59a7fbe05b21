"""GG101: backward() through a graph an earlier backward freed (torch raises).

Heard on ``walk_freed`` (the autograd state saw a backward reach freed graph); told, explained
and fixed by :mod:`gradguard.rules.freed`, which GG101 and GG102 share."""
from __future__ import annotations

from . import Report, Rule
from .freed import finding, known_origin, report


def on_walk_freed(ev) -> Report | None:
    """A freed node that saved tensors, or one whose saving is not known (then not exact)."""
    hits = known_origin(ev.cause)
    saving = [s for s in hits if s.saves]
    unknown = [s for s in hits if s.saves is None]
    if not saving and not unknown:
        return None
    return report("GG101", ev, saving or unknown, hits, ev.cause.exact and bool(saving))


RULE = Rule(
    code="GG101",
    name="backward-through-freed-graph",
    severity="error",
    summary={
        "en": "backward() walks a graph whose saved tensors an earlier backward freed",
        "zh-cn": "backward() 经过的计算图中保存的中间张量已被之前的 backward 释放",
    },
    message={
        "en": "{call} raises 'Trying to backward through the graph a second time': "
              "{what} was computed from {origin} on line {built_line}; its graph was freed "
              "by {freed_call} on line {freed_line}{when}",
        "zh-cn": "{call} 会报错“Trying to backward through the graph a second time”："
                 "{what} 于{built_where_zh}由 {origin_zh} 计算得到；它的计算图已被"
                 "{freed_where_zh}的 {freed_call} 释放{when_zh}",
    },
    fix_help={
        "en": "rebuild the graph before the second backward (run the forward pass again), cut the "
              "shared part with `.detach()` or `torch.no_grad()`, or add the losses and call "
              "backward once. `retain_graph=True` only when both backwards need the same graph and "
              "no optimizer step runs in between.",
        "zh-cn": "在第二次 backward 之前重新构建计算图（再做一次前向计算），用 `.detach()` 或 "
                 "`torch.no_grad()` 切断共享部分，或把损失相加后只调用一次 backward。只有两次 backward "
                 "确实需要同一计算图且中间没有优化器 step 时才使用 `retain_graph=True`。",
    },
    raises=True,
    events={"walk_freed": on_walk_freed},
    finding=finding,
    first_stands=True,
)
