"""Lines of an older text that are still in a newer one, unchanged.

Hovers answer from the last finished analysis while a newer one runs, so a position in the
newer text must be found in the analysed text, and a fact's place back in the newer one. An
edit changes one stretch of lines: the lines before it are where they were, the lines after it
moved by the change in line count, and the lines inside it have no counterpart.
"""
from __future__ import annotations

from typing import Optional, Sequence


class LineMap:
    def __init__(self, old: Sequence[str], new: Sequence[str]):
        shortest = min(len(old), len(new))
        head = 0
        while head < shortest and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < shortest - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
            tail += 1
        self._head, self._tail = head, tail
        self._old_len, self._new_len = len(old), len(new)

    def to_old(self, line: int) -> Optional[int]:
        """A 1-based line of the new text -> the same line in the old one (None: edited)."""
        return self._map(line, self._new_len, self._old_len)

    def to_new(self, line: int) -> Optional[int]:
        return self._map(line, self._old_len, self._new_len)

    def _map(self, line: int, length: int, other: int) -> Optional[int]:
        if 1 <= line <= self._head:
            return line
        if length - self._tail < line <= length:
            return line - length + other
        return None
