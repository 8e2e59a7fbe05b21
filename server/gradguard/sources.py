"""Reading what the user gave us: Python files and notebooks, with clear errors for bad input.

Nothing here imports or executes the analysed code.
"""
from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

# Larger files are refused with a message rather than analysed slowly.
MAX_BYTES = 10 * 1024 * 1024


class SourceError(Exception):
    """Input that cannot be analysed; ``message`` says why in the user's terms."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based position in the notebook (markdown cells count, as editors show them)
    text: str


def decode(data: bytes, path: str) -> str:
    if b"\0" in data[:8192]:
        raise SourceError(f"{path}: binary file, not Python source")
    if len(data) > MAX_BYTES:
        raise SourceError(f"{path}: {len(data):,} bytes is over the {MAX_BYTES:,}-byte limit")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: cannot decode as Python source ({exc})") from None


def read_python(path: str) -> str:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    text = decode(data, path)
    return text[1:] if text.startswith("\ufeff") else text


def read_notebook(path: str) -> list[Cell]:
    """The notebook's code cells (numbered as the notebook shows them)."""
    text = read_python(path)
    try:
        nb = json.loads(text)
        cells = nb["cells"]
        result = []
        for number, cell in enumerate(cells, 1):
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            result.append(Cell(number, "".join(source) if isinstance(source, list) else source))
        return result
    except json.JSONDecodeError as exc:
        raise SourceError(f"{path}: broken notebook JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except (KeyError, TypeError, AttributeError):
        raise SourceError(f"{path}: not a Jupyter notebook (no list of cells)") from None


def parse(text: str, path: str) -> ast.Module:
    if len(text) > MAX_BYTES:
        raise SourceError(f"{path}: {len(text):,} characters is over the {MAX_BYTES:,} limit")
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as exc:
        col = exc.offset if exc.offset and exc.offset > 0 else None
        raise SourceError(f"{path}:{exc.lineno}: syntax error: {exc.msg}", exc.lineno, col) from None
    except (RecursionError, MemoryError):
        raise SourceError(f"{path}: too deeply nested to parse") from None
    except ValueError as exc:
        raise SourceError(f"{path}: {exc}") from None


# IPython syntax that is not Python: line magics, shell escapes, help.
_MAGIC = re.compile(r"^\s*(%|!|\?)|\?\s*$")
# Cell magics whose body is still Python.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}


def strip_magics(cell: str) -> str:
    """Blank IPython-only lines so the cell parses, keeping line numbers."""
    lines = cell.split("\n")
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].lstrip()[2:].split(maxsplit=1)[0] if lines[0].strip() != "%%" else ""
        if magic not in _PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
        lines[0] = ""
    return "\n".join("" if _MAGIC.search(line) else line for line in lines)
