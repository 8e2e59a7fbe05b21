"""The rule registry. A rule is one module of this package, ``ggNNN.py``, holding ``RULE``:
its code, default severity, texts in every supported language, the help its hover shows and,
for rules the interpreter's events decide, the handlers of those events. Adding a rule is
adding its module (and its fixtures and doc page): the registry finds it.

Messages are ``str.format`` templates over a finding's ``args``; the English text is the
default and the one the CLI prints.
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Optional

from ..findings import Finding, Fix, Related
from ..values import Root

#: The rule pages ship inside the package, so every install can link to its own copy.
DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    summary: dict[str, str]  # locale -> one line
    message: dict[str, str]  # locale -> template over the finding's args
    #: how to fix it, in a sentence or two per locale (the rule's hover)
    fix_help: Mapping[str, str] = field(default_factory=dict)
    #: event name -> handler(Event) -> Optional[Report]; see :class:`Event`
    events: Mapping[str, Callable] = field(default_factory=dict)
    #: torch raises here (the program stops at the first such finding on its path)
    raises: bool = False
    #: for a rule that needs no backward: text without a match cannot hold its finding, so a
    #: file is interpreted only if it (or what it uses) calls a backward or matches a trigger
    trigger: Optional[re.Pattern] = None
    #: builds the finding of a report, with positions: ``(report, path, locate, context)``, where
    #: ``context`` holds ``main_path``, ``parents`` and ``trained``; by default the report's
    #: args, related places and fixes as they are (``report_finding``)
    finding: Optional[Callable] = None
    #: at a place already reported, a later report replaces the first only if it is exact and
    #: the first was not (a loop's first iteration tells the story; later ones repeat it)
    first_stands: bool = False

    @property
    def doc(self) -> str:
        """Path of the user documentation page, relative to the repository root."""
        return f"server/gradguard/docs/rules/{self.code}.md"

    @property
    def url(self) -> str:
        """The absolute URL of the rule's page (the copy installed with this package)."""
        return doc_url(self.code)


@dataclass(frozen=True)
class Event:
    """What the interpreter saw, in autograd terms, at one expression.

    Events: ``walk_freed`` (a backward or autograd.grad call reaches graph an earlier one freed:
    ``cause`` says which and how; heard wherever it happens, not only in the analysed file),
    ``to_numpy`` (a tensor turned into a NumPy array), ``read_grad`` (its ``.grad``
    read), ``in_place`` (a tensor modified in place: a method, an augmented assignment, an
    indexed assignment), ``backward`` (a backward or autograd.grad call, over ``tensors``),
    ``implicit_gradient`` (the same call made without a gradient argument, so torch seeds it
    with ones; ``detail`` names the argument's keyword), ``modified_saved`` (the same call
    walks a node whose saved tensor was modified in place since: ``places`` holds
    ("modified", the in-place write) and ("saved", the op that saved it)), ``running_total``
    (an addition whose result links the graph of earlier loop iterations to this one's),
    ``retained`` (a backward or autograd.grad call that keeps the graph it walked, ``tensors``),
    ``step`` (parameters, ``roots``, updated in place: an optimizer step or a hand-written
    update), ``grad_reset`` (their ``.grad`` cleared: ``zero_grad()``, ``p.grad = None``).
    ``tensors``: the abstract tensor values concerned (``values.Tensor``); ``grad_mode``: whether
    grad recording is on there (True, False, None for unknown); ``known_context``: False while
    a function nothing called is analysed with unknown arguments (its callers' grad mode is
    not known); ``target``: the expression a fix would change (the receiver of a method call)."""

    node: ast.AST
    tensors: tuple = ()
    grad_mode: Optional[bool] = None
    known_context: bool = True
    target: Optional[ast.AST] = None
    detail: str = ""  # the method or function name, as written
    stmt: Optional[ast.stmt] = None  # the statement it is part of
    scope: Optional[ast.AST] = None  # the function (or module) the statement is in
    places: tuple = ()  # (what, ast node) pairs of other places the event involves
    roots: frozenset = frozenset()  # the parameters (values.Root) a step or a reset concerns
    # the abstract state's heap, where a rule may keep facts of its own under keys that start
    # with its code; they are copied, joined and aged like every other value
    facts: Optional[dict] = None
    # for ``walk_freed``: the walk (``freed.Walk``): the freed segments reached and how
    cause: object = None
    # grad recording is on only as the analysis takes it to be in a function nothing called,
    # whose own text runs no backward (an inference helper: its callers may well run it under
    # ``torch.no_grad()``, where what it computes requires no grad)
    caller_grad: bool = False

    def statement_run(self, keep: Callable[[ast.stmt], bool]) -> tuple:
        """``stmt`` and the sibling statements right after it that ``keep`` accepts (a fix
        that wraps one update should wrap the updates next to it too)."""
        for node in ast.walk(self.scope) if self.scope is not None else ():
            for name in ("body", "orelse", "finalbody"):
                block = getattr(node, name, None)
                if isinstance(block, list) and self.stmt in block:
                    i = j = block.index(self.stmt)
                    while j + 1 < len(block) and keep(block[j + 1]):
                        j += 1
                    return tuple(block[i:j + 1])
        return (self.stmt,)


@dataclass(frozen=True)
class FixIntent:
    """A fix, with AST nodes for places; the analysis turns it into a ``findings.Fix``."""

    kind: str
    title: str
    targets: tuple  # (key, ast node)
    preferred: bool = False
    safe: bool = False  # keeps what the program computes (``findings.Fix.safe``)
    texts: tuple = ()  # (key, text) pairs the fix kind inserts (``findings.Fix.texts``)


@dataclass(frozen=True)
class Report:
    """A rule's finding, before it has positions: made by a rule's event handler."""

    code: str
    node: ast.AST
    args: tuple  # (name, text) pairs for the message templates
    exact: bool = True  # False: the values passed through code that was not resolved
    fixes: tuple = ()  # FixIntent
    origins: frozenset = frozenset()  # the requires_grad origins (values.Root) to point at
    related: tuple = ()  # other places to point at: (RELATED key, ast node, args)
    # withdrawn if a backward walks any of these segments, anywhere in the analysis
    unless_walked: frozenset = frozenset()
    # withdrawn if a backward walks one of these segments later, as they are now (the same run
    # of their op, or what a loop keeps of it in its next iterations)
    unless_walked_later: frozenset = frozenset()
    cause: object = None  # what the rule's ``finding`` builds the finding from
    severity: Optional[str] = None  # when exact: this, not the rule's (a warning that raises here)
    branched: bool = False  # not exact because a branch whose test is unknown may cut the graph
    several: bool = False  # not exact because the graph is one element's of several held as one
    why: str = ""  # not exact for another reason: what the message adds to say so


MAX_TEXT = 48
# what a raising rule's message says when its proof holds a maybe (then it is a warning)
UNRESOLVED = " (the value passes through code GradGuard could not resolve, so this may not raise)"
BRANCHED = " (a branch GradGuard cannot decide may cut that graph first, so this may not raise)"
SEVERAL = " (the graph is that of one of several values GradGuard holds as one, maybe not this one's, so this may not raise)"
UNSIZED = " (one value per row of a dimension whose size GradGuard does not know: if that size is 1, this does not raise)"


def short(node: ast.AST) -> str:
    """A node's source text, cut to fit in a message."""
    text = ast.unparse(node)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


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
    "reentrant": {"en": "a reentrant checkpoint runs its function without recording here (`{what}`)",
                  "zh-cn": "可重入的检查点在此处运行其函数时不记录计算图（`{what}`）"},
    "grad_off": {"en": "grad recording is turned off here (`{what}`)",
                 "zh-cn": "此处关闭了梯度记录（`{what}`）"},
    "detached": {"en": "the graph is cut here (`{what}`)", "zh-cn": "计算图在此处被切断（`{what}`）"},
    "rebuilt": {"en": "a new tensor is made from Python numbers here (`{what}`)",
                "zh-cn": "此处由 Python 数值构造了新张量（`{what}`）"},
    "no_create_graph": {"en": "gradients without a graph of their own are taken here (`{what}`)",
                        "zh-cn": "此处求得的梯度不带计算图（`{what}`）"},
    "modified": {"en": "a saved tensor is modified in place here (`{what}`)",
                 "zh-cn": "被保存的张量在此处被原地修改（`{what}`）"},
    "saved": {"en": "`{what}` saved it for the backward here", "zh-cn": "`{what}` 在此处为反向传播保存了它"},
    "backward": {"en": "the backward that runs the custom function's backward is called here",
                 "zh-cn": "调用反向传播（运行自定义函数的 backward）的位置"},
}


def _discover() -> dict:
    found = []
    for info in pkgutil.iter_modules(__path__):
        if re.fullmatch(r"gg\d{3}", info.name):
            found.append(importlib.import_module(f"{__name__}.{info.name}").RULE)
    return {rule.code: rule for rule in sorted(found, key=lambda r: r.code)}


RULES: dict[str, Rule] = _discover()
TRIGGERS: tuple = tuple(rule.trigger for rule in RULES.values() if rule.trigger is not None)
#: event name -> the rules that handle it
SUBSCRIBERS: dict[str, tuple] = {}
for _rule in RULES.values():
    for _event in _rule.events:
        SUBSCRIBERS[_event] = SUBSCRIBERS.get(_event, ()) + (_rule,)


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


def related(key: str, location, **args) -> Related:
    """A related place: its message, from ``RELATED[key]``."""
    return Related(location, RELATED[key]["en"].format(**args), key, tuple(args.items()))


def report_finding(report: Report, path: str, locate, context=None) -> Finding:
    """A report as a finding: ``locate(node, path)`` gives positions."""
    rule = RULES[report.code]
    if rule.finding is not None:
        return rule.finding(report, path, locate, context or {})
    return plain_finding(report, path, locate)


def plain_finding(report: Report, path: str, locate) -> Finding:
    """The report's args, related places and fixes as they are (a rule's ``finding`` may start here)."""
    rule = RULES[report.code]
    args = dict(report.args)
    places = []
    for root in sorted(report.origins, key=Root.place)[:2]:
        key = "origin_params" if root.kind == "params" else "origin_tensor"
        places.append(related(key, locate(root.node, root.path), name=root.name))
    for key, node, extra in report.related:
        places.append(related(key, locate(node, path), **dict(extra)))
    places = list({(r.location, r.message): r for r in places}.values())  # two layers on one line
    fixes = tuple(Fix(f.kind, f.title, tuple((k, _span(locate, n, path)) for k, n in f.targets), f.preferred,
                      f.texts, safe=f.safe) for f in report.fixes)
    message = rule.message["en"].format(**args)
    if not report.exact and rule.raises:  # a maybe: a warning that says why
        message += report.why or (BRANCHED if report.branched else SEVERAL if report.several else UNRESOLVED)
    return Finding(report.code, (report.severity or rule.severity) if report.exact else "warning", message,
                   locate(report.node, path), tuple(places), fixes, tuple(args.items()))



def _span(locate, node, path: str):
    """The location of a node, or of a (first, last) pair of statements: from one to the other."""
    if not isinstance(node, tuple):
        return locate(node, path)
    first, last = locate(node[0], path), locate(node[1], path)
    return dataclasses.replace(first, end_line=last.end_line, end_column=last.end_column)
