"""The rule registry: one entry per finding code, with its texts in every supported language.

Messages are ``str.format`` templates over a finding's ``args``; the English text is the
default and the one the CLI prints.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .findings import Finding

#: The rule pages ship inside the package, so every install can link to its own copy.
DOCS_DIR = Path(__file__).resolve().parent / "docs" / "rules"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: dict[str, str]  # locale -> one line
    message: dict[str, str]  # locale -> template over the finding's args
    doc: str  # path of the user documentation page, relative to the repository root

    @property
    def url(self) -> str:
        """The absolute URL of the rule's page (the copy installed with this package)."""
        return doc_url(self.code)


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
                         "{what} 于{built_where_zh}由 {origin_zh} 计算得到；它的计算图已被"
                         "{freed_where_zh}的 {freed_call} 释放{when_zh}",
            },
            doc="server/gradguard/docs/rules/GG101.md",
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
                "zh-cn": "{call} 在{freed_where_zh}的 {freed_call} 之后{when_zh}再次经过 {what}"
                         "（{built_where_zh}）的计算图；由于该图没有保存张量所以不会报错，但 {origin_zh} "
                         "的梯度会被累加两次",
            },
            doc="server/gradguard/docs/rules/GG102.md",
        ),
    )
}

# Messages of the related places of a finding, by key.
RELATED: dict[str, dict[str, str]] = {
    "built": {"en": "{what} was computed here from {origin}",
              "zh-cn": "{what} 在此处由 {origin_zh} 计算得到"},
    "origin_tensor": {"en": "`{name}` requires grad (created here)",
                      "zh-cn": "`{name}` 需要梯度（在此处创建）"},
    "origin_params": {"en": "parameters of `{name}` are created here",
                      "zh-cn": "`{name}` 的参数在此处创建"},
    "freed": {"en": "the graph was freed here by {call}{when}",
              "zh-cn": "计算图在此处被 {call} 释放{when_zh}"},
}

LOCALES = ("en", "zh-cn")


def doc_url(code: str) -> str:
    """A ``file://`` URL of the rule's page as installed (absolute, and readable offline)."""
    return (DOCS_DIR / f"{code.upper()}.md").as_uri()


def locale_of(client_locale: str | None) -> str:
    """Map an editor locale ("zh-CN", "zh-Hans", "en-US", …) to a supported one."""
    if client_locale and client_locale.lower().startswith("zh"):
        return "zh-cn"
    return "en"


def render_related(related, locale: str = "en") -> str:
    """A related place's message in ``locale``."""
    templates = RELATED.get(related.key)
    if templates is None or locale not in templates or locale == "en":
        return related.message
    return templates[locale].format(**dict(related.args))


def render(finding: Finding, locale: str = "en") -> str:
    """The finding's message in ``locale`` (English when the rule has no text for it)."""
    rule = RULES.get(finding.code)
    if rule is None or locale == "en" or locale not in rule.message or not finding.args:
        return finding.message
    return rule.message[locale].format(**dict(finding.args))
