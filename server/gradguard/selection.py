"""Which rules run: the one selection grammar of the CLI, ``[tool.gradguard]`` and the editor.

As in Ruff: a selector is a rule code (``GG101``) or a prefix of codes (``GG1``, ``GG``) or
``ALL``; a setting is a list of selectors, each of which may itself be a comma-separated list;
case does not matter.  A selector that matches no known rule is an error naming the known codes
(the known codes come from the rule registry, :data:`gradguard.rules.RULES`).

Settings stack in layers (project config, then the editor or the command line).  Within a layer
the most specific selector wins (``select = ["GG1"]``, ``ignore = ["GG102"]`` keeps GG101;
``select = ["GG102"]``, ``ignore = ["GG1"]`` keeps GG102), and at equal specificity ``ignore``
wins.  A layer's ``select`` replaces what earlier layers enabled; ``extend_select`` and
``ignore`` adjust it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from .rules import RULES

ALL = "ALL"


class SelectionError(ValueError):
    """An unknown code or prefix; ``message`` names the setting and the known codes."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def known_codes() -> tuple[str, ...]:
    return tuple(sorted(RULES))


def split_selectors(values: Iterable[str] | str) -> list[str]:
    """``["GG101,gg102", " GG2 "]`` -> ``["GG101", "GG102", "GG2"]``."""
    if isinstance(values, str):
        values = [values]
    return [part.strip().upper() for value in values for part in value.split(",") if part.strip()]


def unknown_selectors(selectors: Iterable[str]) -> list[str]:
    codes = known_codes()
    return [s for s in selectors if s != ALL and not any(c.startswith(s) for c in codes)]


def unknown_message(where: str, unknown: list[str]) -> str:
    names = ", ".join(repr(s) for s in unknown)
    kind = "rule code or prefix" if len(unknown) == 1 else "rule codes or prefixes"
    return f"{where}: unknown {kind} {names} (known codes: {', '.join(known_codes())}; or a prefix such as GG1, or ALL)"


def parse_selectors(values: Iterable[str] | str, where: str) -> tuple[str, ...]:
    """The selectors of one setting, normalised; raises :class:`SelectionError` naming ``where``
    when one of them matches no rule."""
    selectors = split_selectors(values)
    unknown = unknown_selectors(selectors)
    if unknown:
        raise SelectionError(unknown_message(where, unknown))
    return tuple(selectors)


@dataclass(frozen=True)
class Layer:
    """One source of settings.  ``select=None``: keep what earlier layers enabled."""

    select: Optional[tuple[str, ...]] = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def _specificity(selector: str) -> int:
    return 0 if selector == ALL else len(selector)


def _matches(selector: str, code: str) -> bool:
    return selector == ALL or code.startswith(selector)


def enabled_codes(layers: Iterable[Layer], codes: Iterable[str] | None = None) -> frozenset[str]:
    """The codes (of ``codes``, default every known rule) enabled after applying ``layers`` in order."""
    universe = tuple(codes) if codes is not None else known_codes()
    enabled = set(universe)
    for layer in layers:
        on = (*(layer.select or ()), *layer.extend_select)
        base = set() if layer.select is not None else enabled
        result = set(base)
        for code in universe:
            best = None  # (specificity, is_ignore): ignore wins ties
            for selector, ignoring in [*((s, False) for s in on), *((s, True) for s in layer.ignore)]:
                if _matches(selector, code):
                    key = (_specificity(selector), ignoring)
                    best = key if best is None or key > best else best
            if best is not None and best[1]:
                result.discard(code)
            elif best is not None:
                result.add(code)
        enabled = result
    return frozenset(enabled)


def code_enabled(code: str, layers: Iterable[Layer]) -> bool:
    """Whether ``code`` (known or not) is enabled by ``layers``."""
    return code.upper() in enabled_codes(layers, (*known_codes(), code.upper()))
