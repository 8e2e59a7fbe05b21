"""Reading what the user gave us: Python files and notebooks, with clear errors for bad input.

Nothing here imports or executes the analysed code.
"""
from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import os
import re
import stat
import tokenize
import warnings
from dataclasses import dataclass

# Larger files are refused with a message rather than analysed slowly.
MAX_BYTES = 10 * 1024 * 1024
# Longer lines too: positions on a line that is not ASCII are found by re-reading it, so one huge
# line (minified code) costs as much as its length times the nodes on it. Real code stays far
# below (the longest line of the 690 k-line benchmark corpus has 491 characters); generated tables
# do not (56 k and 73 k characters in bashlex's and pygments' installed sources).
MAX_LINE_CHARS = 100_000


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
    text = decode(read_bytes(path), path)
    return text[1:] if text.startswith("\ufeff") else text


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def read_bytes(path: str) -> bytes:
    """A regular file's bytes, at most ``MAX_BYTES`` of them.

    Opened without blocking and checked with ``fstat`` before any read: a FIFO named ``*.py``
    would block forever and a link to ``/dev/zero`` would never end."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise SourceError(f"{path}: not a regular file ({kind})")
        if info.st_size > MAX_BYTES:
            raise SourceError(f"{path}: {info.st_size:,} bytes is over the {MAX_BYTES:,}-byte limit")
        chunks, size = [], 0
        while size <= MAX_BYTES:
            chunk = os.read(fd, min(MAX_BYTES + 1 - size, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_BYTES:  # it grew while being read
            raise SourceError(f"{path}: over the {MAX_BYTES:,}-byte limit")
        return b"".join(chunks)
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


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


def check_limits(text: str, path: str) -> None:
    """Raises :class:`SourceError` for a text too large, or with a line too long, to analyse."""
    if len(text) > MAX_BYTES:
        raise SourceError(f"{path}: {len(text):,} characters is over the {MAX_BYTES:,} limit")
    if len(text) > MAX_LINE_CHARS:
        _check_line_lengths(text, path)


def parse(text: str, path: str) -> ast.Module:
    check_limits(text, path)
    try:
        with warnings.catch_warnings():  # "is not callable; perhaps you missed a comma?", "\d"
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return ast.parse(text, filename=path)
    except SyntaxError as exc:
        col = exc.offset if exc.offset and exc.offset > 0 else None
        raise SourceError(f"{path}:{exc.lineno}: syntax error: {exc.msg}", exc.lineno, col) from None
    except (RecursionError, MemoryError):
        raise SourceError(f"{path}: too deeply nested to parse") from None
    except ValueError as exc:
        raise SourceError(f"{path}: {exc}") from None


def _check_line_lengths(text: str, path: str) -> None:
    lines = text.split("\n")
    if max(map(len, lines)) <= MAX_LINE_CHARS:
        return
    for number, line in enumerate(lines, 1):
        if len(line) > MAX_LINE_CHARS:
            raise SourceError(f"{path}:{number}: a line of {len(line):,} characters is over the "
                              f"{MAX_LINE_CHARS:,}-character limit for one line")


# --- IPython syntax ---------------------------------------------------------------------------
# A notebook cell may hold IPython syntax that is not Python. Each form is masked on its own
# line, keeping every other line and column where it was, so the rest of the cell is analysed:
#   %magic args, %%magic (cell), !shell, !!shell, ?name, name?, name??, /autocall, ,quote, ;quote,
#   automagics such as "pip install x", and the assignment forms "x = !ls", "r = %timeit -o f()".
# The masked text is also what a Python interpreter could run (tests execute it with torch).

# Cell magics whose body is still Python.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun"}
# Line magics whose argument is a Python statement that runs (``%time loss.backward()`` does).
_PYTHON_LINE_MAGICS = {"time", "timeit", "prun"}
# Magics IPython runs without ``%`` (automagic), when the line is not Python.
_AUTOMAGICS = {"pip", "conda", "cd", "env", "load_ext", "reload_ext", "matplotlib", "config", "run",
               "time", "timeit", "who", "whos", "reset", "autoreload", "alias", "pwd", "ls", "mkdir",
               "cp", "mv", "rm", "cat", "set_env", "pylab", "precision", "store", "sx", "system"}
_TARGET = re.compile(r"(?:[A-Za-z_][\w.]*\s*,\s*)*[A-Za-z_][\w.]*\s*=\s*(?=[%!])")
_LINE_MAGIC = re.compile(r"%{1,2}([A-Za-z_]\w*)[ \t]*")
_HELP = re.compile(r"(\?{1,2}\S*|[\w.*\[\]]+\?{1,2})\s*")
_ESCAPE = re.compile(r"[/,;][A-Za-z_]")
_WORD = re.compile(r"([A-Za-z_]\w*)\s+\S")


def strip_magics(cell: str) -> str:
    """The cell with IPython-only syntax masked, line and column positions kept."""
    lines = cell.split("\n")
    first = lines[0].lstrip()
    if first.startswith("%%"):
        name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return "\n" * (len(lines) - 1)
        lines[0] = ""
    logical = _LogicalLines()
    for i, line in enumerate(lines):
        if logical.at_start():
            masked = _mask(line)
            if masked is not None:
                lines[i] = masked
                continue
        logical.feed(line)
    return "\n".join(lines)


UNPARSED_CELL = "__gradguard_unparsed_cell__"


def unparsed_stand_in(cell: str, imported: set) -> str:
    """What a cell that does not parse (a template's ``loss = <YOUR CODE>``, a cell mid-typing)
    becomes: code the analysis cannot see, which may bind or change any variable it names. Every
    name it mentions, but an attribute's, an imported module's or a builtin's, is made unknown on its first
    line; the cell keeps its line count, so later cells keep their lines."""
    names = []
    try:
        after_dot = False
        for tok in tokenize.generate_tokens(io.StringIO(cell).readline):
            if tok.type == tokenize.NAME and not after_dot:
                names.append(tok.string)
            after_dot = tok.type == tokenize.OP and tok.string == "."
    except (tokenize.TokenError, SyntaxError):  # unreadable past some point: every word counts
        names = _IDENTIFIER.findall(cell)
    names = [n for n in dict.fromkeys(names) if n not in _KEYWORDS and n not in imported and n not in _BUILTINS]
    head = " = ".join(names) + f" = {UNPARSED_CELL}()" if names else ""
    return head + "\n" * cell.count("\n")


_KEYWORDS = frozenset(keyword.kwlist)
_BUILTINS = frozenset(dir(builtins))  # a cell that rebinds `len` or `tuple` is rare; one that calls them is not
_IDENTIFIER = re.compile(r"(?<![.\w])[A-Za-z_]\w*")


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _mask(line: str) -> str | None:
    """A Python stand-in for one IPython line (same length up to what stays), or None if the
    line is not IPython syntax."""
    body = line.lstrip()
    indent = line[:len(line) - len(body)]
    if not body or body.startswith("#"):
        return None
    target = _TARGET.match(body)
    head = target.group(0) if target else ""
    rest = body[len(head):]
    if rest.startswith("!") or (rest.startswith("%") and not rest.startswith("%=")):
        magic = _LINE_MAGIC.match(rest)
        if magic and magic.group(1) in _PYTHON_LINE_MAGICS:
            kept = _python_argument(rest[magic.end():])
            if kept is not None:
                cut = len(rest) - len(kept)
                if head and magic.group(1) == "time":  # r = %time f(x): r is f(x)
                    stand_in = " " * cut
                else:
                    stand_in = ("None;" if head else "pass;").ljust(cut)
                return indent + head + stand_in + kept
        return indent + head + ("None" if head else "pass")
    if head:
        return None
    if _HELP.fullmatch(body) and "?" in body or _ESCAPE.match(body):
        return indent + "pass"
    word = _WORD.match(body)
    if word and word.group(1) in _AUTOMAGICS and not _parses(body):
        return indent + "pass"
    return None


def _python_argument(args: str) -> str | None:
    """The Python statement at the end of a magic's arguments, after its options
    (``-n 10 -r 3 f(x)`` -> ``f(x)``), or None."""
    rest = args
    for _ in range(6):
        if rest.strip() and not rest.startswith("-") and _parses(rest):
            return rest
        parts = rest.split(None, 1)
        if len(parts) < 2:
            return None
        rest = rest[rest.index(parts[1], len(parts[0])):]
    return None


class _LogicalLines:
    """Where a logical line starts: outside brackets, strings and backslash continuations
    (a line starting with ``!=`` or ``%`` inside parentheses is Python, not a magic)."""

    def __init__(self):
        self.depth = 0
        self.quote: str | None = None
        self.continued = False

    def at_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        i, n, comment = 0, len(line), False
        while i < n:
            c = line[i]
            if self.quote is not None:
                if c == "\\":
                    i += 2
                    continue
                if line.startswith(self.quote, i):
                    i += len(self.quote)
                    self.quote = None
                    continue
                i += 1
                continue
            if c == "#":
                comment = True
                break
            if c in "\"'":
                self.quote = line[i:i + 3] if line[i:i + 3] in ('"""', "'''") else c
                i += len(self.quote)
                continue
            if c in "([{":
                self.depth += 1
            elif c in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        self.continued = not comment and line.endswith("\\")
        if self.quote in ("'", '"') and not self.continued:
            self.quote = None  # a one-line string left open: the line is broken anyway
