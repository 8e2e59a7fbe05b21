"""Where a notebook cell's text sits in the ``.ipynb`` file itself.

Viewers of SARIF (GitHub code scanning among them) show the ``.ipynb`` file as the JSON text it
is, so a finding at line 3 of cell 5 must point at the JSON line (and column) holding that text.
A small JSON scanner records where each string of ``cells[i].source`` starts; escapes are walked
so that columns are exact.
"""
from __future__ import annotations

import json
import re
from typing import Optional

_WS = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_ESCAPE_LEN = {"u": 6}


class _Str(str):
    """A decoded JSON string that remembers the offset of its opening quote."""

    start: int


def _parse(text: str, i: int):
    i = _WS.match(text, i).end()
    ch = text[i]
    if ch == "{":
        obj, i = {}, _WS.match(text, i + 1).end()
        if text[i] == "}":
            return obj, i + 1
        while True:
            key, i = _parse(text, i)
            i = _WS.match(text, i).end() + 1  # ':'
            obj[str(key)], i = _parse(text, i)
            i = _WS.match(text, i).end()
            if text[i] == "}":
                return obj, i + 1
            i += 1  # ','
    if ch == "[":
        arr, i = [], _WS.match(text, i + 1).end()
        if text[i] == "]":
            return arr, i + 1
        while True:
            item, i = _parse(text, i)
            arr.append(item)
            i = _WS.match(text, i).end()
            if text[i] == "]":
                return arr, i + 1
            i += 1
    if ch == '"':
        value, end = json.decoder.scanstring(text, i + 1)
        out = _Str(value)
        out.start = i
        return out, end
    for literal, value in (("true", True), ("false", False), ("null", None)):
        if text.startswith(literal, i):
            return value, i + len(literal)
    match = _NUMBER.match(text, i)
    if match is None:
        raise ValueError(f"bad JSON at offset {i}")
    return json.loads(match.group()), match.end()


def _raw_offset(text: str, start: int, decoded: int) -> int:
    """Offset in ``text`` of the ``decoded``-th character of the string literal at ``start``."""
    i, n = start + 1, 0
    while n < decoded:
        if text[i] == "\\":
            i += _ESCAPE_LEN.get(text[i + 1], 2)
            if text[i - 6:i - 4] == "\\u" and 0xD800 <= int(text[i - 4:i], 16) < 0xDC00:
                i += 6  # a surrogate pair is one character
        else:
            i += 1
        n += 1
    return i


class NotebookText:
    """Maps (cell number, line, column) of a notebook cell to (line, column) in the file's text."""

    def __init__(self, text: str):
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.cells: dict[int, list[tuple[_Str, int]]] = {}  # cell number -> [(piece, first line)]
        nb, _ = _parse(text, 0)
        for number, cell in enumerate(nb.get("cells", []), 1):
            source = cell.get("source", []) if isinstance(cell, dict) else []
            pieces = [source] if isinstance(source, str) else [p for p in source if isinstance(p, str)]
            line, placed = 1, []
            for piece in pieces:
                if isinstance(piece, _Str):
                    placed.append((piece, line))
                line += piece.count("\n")
            self.cells[number] = placed

    def _file_position(self, offset: int) -> tuple[int, int]:
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._line_starts[lo] + 1

    def position(self, cell: int, line: int, column: int) -> Optional[tuple[int, int]]:
        """1-based (line, column) in the file of 1-based ``line``/``column`` of ``cell``."""
        best = None
        for piece, first in self.cells.get(cell, ()):
            if first <= line:
                best = (piece, first)
        if best is None:
            return None
        piece, first = best
        offset = 0
        for _ in range(line - first):  # to the start of the wanted line within this piece
            nl = piece.find("\n", offset)
            if nl < 0:
                return None
            offset = nl + 1
        return self._file_position(_raw_offset(self.text, piece.start, offset + column - 1))
