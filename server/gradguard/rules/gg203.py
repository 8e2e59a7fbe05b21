"""GG203: ``retain_graph=True`` where no later backward walks the graph it keeps.

The graph (with every tensor its ops saved) stays in memory until its tensors are dropped, for
nothing: no later backward or ``autograd.grad`` call walks any of it, on any iteration. The usual
causes: ``retain_graph=True`` added by rote to silence a "second time" error that a detach fixed
since, the last of several backwards retaining too, a graph rebuilt every iteration. A call with
``create_graph=True`` is not one: it keeps the graph on purpose, for the gradients' own graph."""
from __future__ import annotations

import ast

from . import FixIntent, Report, Rule, short


def on_retained(ev) -> Report | None:
    # the graph must be known: segments from unresolved code might be walked where we do not see
    if not ev.known_context or not ev.tensors or not all(t.exact for t in ev.tensors):
        return None
    if _creates_graph(ev.node):
        return None  # the gradients' own graph is built on the one kept: retained by design
    segs = frozenset().union(*(t.segs for t in ev.tensors))
    if not segs or not any(s.roots for s in segs):
        return None
    what = f"`{short(ev.target)}`" if ev.target is not None else "the outputs"
    call = "`autograd.grad`" if ev.detail == "grads" else "`backward()`"
    fixes = (FixIntent("drop_retain_graph", "Do not retain the graph", (("call", ev.node),), preferred=True,
                       safe=True),)  # nothing walks it again: the same gradients, less memory
    return Report("GG203", ev.node, (("call", call), ("what", what)), True, fixes, unless_walked_later=segs)


def _creates_graph(call) -> bool:
    """``create_graph=`` anything but a literal False: the call keeps the graph for a double
    backward (and ``retain_graph`` defaults to it), which a later walk of the gradients needs."""
    value = next((k.value for k in getattr(call, "keywords", ()) if k.arg == "create_graph"), None)
    return value is not None and not (isinstance(value, ast.Constant) and not value.value)


RULE = Rule(
    code="GG203",
    name="retain-graph-never-used",
    severity="warning",
    summary={
        "en": "`retain_graph=True` keeps a graph that no later backward walks",
        "zh-cn": "`retain_graph=True` 保留的计算图之后没有任何 backward 会用到",
    },
    message={
        "en": "{call} keeps the graph of {what} (`retain_graph=True`), but no later backward walks any of it: "
              "the memory is held for nothing",
        "zh-cn": "{call} 保留了 {what} 的计算图（`retain_graph=True`），但之后没有 backward 会用到它："
                 "这部分内存被白白占用",
    },
    fix_help={
        "en": "remove `retain_graph=True` (keep it only on a backward whose graph a later backward walks "
              "again); if a 'second time' error made you add it, fix its cause instead (a missing detach).",
        "zh-cn": "去掉 `retain_graph=True`（只在之后还有 backward 会再次遍历该图时保留）；若是为了消除"
                 "“second time”错误而加的，请修正其根本原因（例如缺少的 detach）。",
    },
    events={"retained": on_retained},
)
