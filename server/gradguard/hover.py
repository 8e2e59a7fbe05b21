"""Short hover texts (Markdown or plain) from the engine's facts, in English or Simplified Chinese.

Rendering only: the facts come from ``Analysis.fact_at``; a ``link`` callback turns a
Location into a URI (or None where no link is possible, e.g. notebook cells).
"""
from __future__ import annotations

import re
from typing import Callable, Optional, Sequence, Union

from . import rules
from .findings import BackwardFact, GraphStep, Location, TensorFact
from .fixes import SUPPRESSION_RE

MAX_ITEMS = 5  # longer chains are cut: a hover must stay short

Linker = Callable[[Location], Optional[str]]  # a Location -> its URI, or None: no link
Texter = Callable[[Location], Optional[str]]  # a Location -> its source text, when known
_ORIGIN_RE = re.compile(r"^(.*) \(line (\d+)\)$")

TEXT = {
    "en": {
        "line": "line {line}", "cell_line": "cell {cell}, line {line}",
        "tensor": "tensor", "requires_grad": "requires grad", "yes": "yes", "no": "no",
        "maybe": "maybe", "leaf": "leaf", "non_leaf": "non-leaf",
        "origin": "Graph from {origins}, built by:",
        "saves": "saves tensors", "saves_none": "saves no tensors",
        "freed": "**Freed here** by {calls}: another backward through it raises.",
        "not_freed": "Graph not freed here.",
        "no_grad": "No graph: backward never reaches it.",
        "more": "… and {n} more",
        "bw_frees": "Frees the saved tensors of:", "bw_retains": "Keeps the graph (`retain_graph=True`).",
        "bw_frees_nothing": "Frees no saved tensors of a graph used again.",
        "bw_reused": "{calls} walks it again.",
        "call_at": "{call} on {where}", "backward_at": "the backward on {where}",
        "bw_needed": "That later backward raises unless this graph is rebuilt, detached or kept "
                     "(`retain_graph=True`); the quick fixes say which fits.",
        "bw_not_needed": "`retain_graph=True` is not needed here (it only keeps memory alive).",
        "rule_fix": "How to fix: {fix}", "docs": "Documentation",
    },
    "zh-cn": {
        "line": "第 {line} 行", "cell_line": "单元格 {cell} 第 {line} 行",
        "tensor": "张量", "requires_grad": "需要梯度", "yes": "是", "no": "否",
        "maybe": "可能", "leaf": "叶子节点", "non_leaf": "非叶子节点",
        "origin": "计算图源自 {origins}，构建步骤：",
        "saves": "保存张量", "saves_none": "不保存张量",
        "freed": "**此处计算图已被释放**（{calls}）：再次对其 backward 会报错。",
        "not_freed": "此处计算图尚未释放。",
        "no_grad": "没有计算图：backward 不会经过它。",
        "more": "……另有 {n} 处",
        "bw_frees": "释放以下步骤保存的张量：", "bw_retains": "保留计算图（`retain_graph=True`）。",
        "bw_frees_nothing": "没有释放之后还会用到的计算图。",
        "bw_reused": "之后{calls}会再次经过它。",
        "call_at": "{where}的 {call}", "backward_at": "{where}的 backward",
        "bw_needed": "除非重新构建、detach 或保留（`retain_graph=True`）这个计算图，之后的 backward 会报错；"
                     "快速修复会给出合适的做法。",
        "bw_not_needed": "此处不需要 `retain_graph=True`（只会多占内存）。",
        "rule_fix": "修复方法：{fix}", "docs": "文档",
    },
}


def rule_doc_url(code: str) -> str:
    """The rule's page, as installed with the package (the same link the CLI prints)."""
    return rules.doc_url(code)


class _Writer:
    def __init__(self, locale: str, markdown: bool, link: Linker, text: Texter):
        self.text = text
        self.t = TEXT.get(locale, TEXT["en"])
        self.locale = locale
        self.markdown = markdown
        self.link = link

    def code(self, text: str) -> str:
        text = " ".join(text.split())
        if len(text) > 80:
            text = text[:77] + "…"
        if not self.markdown:
            return text
        fence = "``" if "`" in text else "`"
        pad = " " if fence == "``" else ""
        return f"{fence}{pad}{text}{pad}{fence}"

    def plain(self, text: str) -> str:
        """Template text may carry Markdown; strip it for plain-text clients."""
        return text if self.markdown else text.replace("**", "").replace("`", "")

    def where(self, loc: Location) -> str:
        label = (self.t["cell_line"].format(cell=loc.cell, line=loc.line) if loc.cell
                 else self.t["line"].format(line=loc.line))
        uri = self.link(loc) if self.markdown else None
        return f"[{label}]({uri}#L{loc.line})" if uri else label

    def bullets(self, items: Sequence[str]) -> list[str]:
        shown = [f"- {item}" for item in items[:MAX_ITEMS]]
        if len(items) > MAX_ITEMS:
            shown.append(f"- {self.t['more'].format(n=len(items) - MAX_ITEMS)}")
        return shown

    def step(self, step: GraphStep) -> str:
        saves = {True: f" ({self.t['saves']})", False: f" ({self.t['saves_none']})"}.get(step.saves, "")
        return f"{self.where(step.location)} {self.code(step.text)}{saves}"

    def origin(self, origin: str) -> str:
        """``"w (line 8)"`` from the engine -> the name as code, the line in this locale."""
        match = _ORIGIN_RE.match(origin)
        if not match:
            return self.code(origin)
        return f"{self.code(match.group(1))} ({self.t['line'].format(line=match.group(2))})"

    def calls(self, locs: Sequence[Location]) -> str:
        """Backward calls by their source text and place (``l.backward()`` on line 9)."""
        sep = "、" if self.locale == "zh-cn" else ", "
        named = []
        for loc in locs[:MAX_ITEMS]:
            call = self.text(loc)
            named.append(self.t["call_at"].format(call=self.code(call), where=self.where(loc)) if call
                         else self.t["backward_at"].format(where=self.where(loc)))
        return sep.join(named)


def _nothing(_loc: Location) -> None:
    return None


def tensor_hover(fact: TensorFact, locale: str = "en", markdown: bool = True,
                 link: Linker = _nothing, text: Texter = _nothing) -> str:
    w, t = _Writer(locale, markdown, link, text), TEXT.get(locale, TEXT["en"])
    name = f"**{w.code(fact.name)}**" if markdown else fact.name
    leaf = t["leaf"] if fact.is_leaf else t["non_leaf"]
    lines = [f"{name}: {t['tensor']} · {t['requires_grad']}: {t.get(fact.requires_grad, fact.requires_grad)} · {leaf}"]
    if fact.requires_grad == "no":
        lines += ["", t["no_grad"]]
        return "\n".join(lines)
    if fact.chain:
        sep = "、" if locale == "zh-cn" else ", "
        origins = sep.join(w.origin(o) for o in fact.origins) or "?"
        lines += ["", t["origin"].format(origins=origins)]
        lines += w.bullets([w.step(s) for s in fact.chain])
    lines += ["", w.plain(t["freed"].format(calls=w.calls(fact.freed_by))) if fact.freed_by
              else t["not_freed"]]
    return "\n".join(lines)


def backward_hover(fact: BackwardFact, locale: str = "en", markdown: bool = True,
                   link: Linker = _nothing, text: Texter = _nothing) -> str:
    w, t = _Writer(locale, markdown, link, text), TEXT.get(locale, TEXT["en"])
    lines = [f"**{w.code(fact.call)}**" if markdown else fact.call, ""]
    if fact.retains:
        lines.append(w.plain(t["bw_retains"]))
    elif fact.frees:
        lines.append(t["bw_frees"])
        lines += w.bullets([w.step(s) for s in fact.frees])
    else:
        lines.append(t["bw_frees_nothing"])
    if fact.reused_by:
        reused = t["bw_reused"].format(calls=w.calls(fact.reused_by))
        lines += ["", reused[0].upper() + reused[1:]]
    if fact.retain_needed and not fact.retains:
        lines += ["", w.plain(t["bw_needed"])]
    elif fact.retains and not fact.retain_needed:
        lines += ["", w.plain(t["bw_not_needed"])]
    return "\n".join(lines)


def fact_hover(fact: Union[TensorFact, BackwardFact], locale: str = "en", markdown: bool = True,
               link: Linker = _nothing, text: Texter = _nothing) -> str:
    render = backward_hover if isinstance(fact, BackwardFact) else tensor_hover
    return render(fact, locale, markdown, link, text)


def suppressed_code_at(line_text: str, column: int) -> Optional[tuple[str, int, int]]:
    """The rule code under ``column`` (1-based) in a ``# gradguard: ignore[...]`` comment, with its
    1-based start and exclusive end columns."""
    for match in SUPPRESSION_RE.finditer(line_text):
        offset = match.start(1)
        for part in match.group(1).split(","):
            start = offset + len(part) - len(part.lstrip())
            end = start + len(part.strip())
            if start < column <= end + 1 and part.strip():
                return part.strip().upper(), start + 1, end + 1
            offset += len(part) + 1
    return None


def rule_hover(code: str, locale: str = "en", markdown: bool = True) -> Optional[str]:
    rule = rules.RULES.get(code)
    if rule is None:
        return None
    t = TEXT.get(locale, TEXT["en"])
    head = f"**{code}** · {rule.name}" if markdown else f"{code} · {rule.name}"
    summary = rule.summary.get(locale, rule.summary["en"])
    fix = rule.fix_help.get(locale) or rule.fix_help.get("en")
    lines = [head, "", summary]
    if fix:
        lines += ["", t["rule_fix"].format(fix=fix if markdown else fix.replace("`", ""))]
    docs = rule_doc_url(code)
    lines += ["", f"[{t['docs']}]({docs})" if markdown else f"{t['docs']}: {docs}"]
    return "\n".join(lines)
