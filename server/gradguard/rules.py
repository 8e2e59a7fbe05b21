"""The rule registry: one entry per finding code, with its texts in every supported language.

Messages are ``str.format`` templates over a finding's ``args``; the English text is the
default and the one the CLI prints.
"""
from __future__ import annotations

from dataclasses import dataclass

from .findings import Finding


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: dict[str, str]  # locale -> one line
    message: dict[str, str]  # locale -> template over the finding's args
    doc: str  # path of the user documentation page, relative to the repository root


RULES: dict[str, Rule] = {
    rule.code: rule
    for rule in (
        Rule(
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
                         "{what} 于第 {built_line} 行由 {origin} 计算得到；它的计算图已被第 "
                         "{freed_line} 行的 {freed_call} 释放{when_zh}",
            },
            doc="docs/rules/GG101.md",
        ),
        Rule(
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
                "zh-cn": "{call} 在第 {freed_line} 行的 {freed_call} 之后{when_zh}再次经过 {what}"
                         "（第 {built_line} 行）的计算图；由于该图没有保存张量所以不会报错，但 {origin} "
                         "的梯度会被累加两次",
            },
            doc="docs/rules/GG102.md",
        ),
    )
}

LOCALES = ("en", "zh-cn")


def locale_of(client_locale: str | None) -> str:
    """Map an editor locale ("zh-CN", "zh-Hans", "en-US", …) to a supported one."""
    if client_locale and client_locale.lower().startswith("zh"):
        return "zh-cn"
    return "en"


def render(finding: Finding, locale: str = "en") -> str:
    """The finding's message in ``locale`` (English when the rule has no text for it)."""
    rule = RULES.get(finding.code)
    if rule is None or locale == "en" or locale not in rule.message or not finding.args:
        return finding.message
    return rule.message[locale].format(**dict(finding.args))
