"""``# gradguard: ignore`` and ``# gradguard: ignore[GG101, ...]`` on a finding's first line.

Lines are counted as Python counts them: ``\\n``, ``\\r\\n`` and a lone ``\\r`` end a line; form
feeds, U+2028 and the other characters ``str.splitlines`` also breaks on do not.
"""
from __future__ import annotations

import functools
import re

SUPPRESS = re.compile(r"#\s*gradguard:\s*ignore(?:\[([A-Za-z0-9_, ]+)\])?", re.IGNORECASE)
_NEWLINE = re.compile(r"\r\n|\r|\n")


@functools.lru_cache(maxsize=8)
def python_lines(text: str) -> tuple[str, ...]:
    """``text`` split into lines the way Python's tokenizer numbers them (no line ends kept)."""
    return tuple(_NEWLINE.split(text))


def suppressed_codes(line: str) -> frozenset[str] | None:
    """The codes a line's suppression comment names; empty for a bare ``ignore``; None without one."""
    match = SUPPRESS.search(line)
    if match is None:
        return None
    codes = match.group(1)
    return frozenset() if codes is None else frozenset(c.strip().upper() for c in codes.split(",") if c.strip())


def is_suppressed(code: str, line: str) -> bool:
    codes = suppressed_codes(line)
    return codes is not None and (not codes or code.upper() in codes)


def suppressed(finding, positions) -> bool:
    """Whether ``finding`` (located by the analysis' :class:`Positions`) is suppressed in its source."""
    loc = finding.location
    if loc.path == positions.main.path:
        text = positions.main.text
        line = positions.to_text_line(loc.line, loc.cell)
    else:
        module = positions.project.modules.get(loc.path)
        if module is None:
            return False
        text, line = module.text, loc.line
    lines = python_lines(text)
    return 0 < line <= len(lines) and is_suppressed(finding.code, lines[line - 1])
