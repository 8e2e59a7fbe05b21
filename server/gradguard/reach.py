"""Which code can reach a backward: a cheap scan that decides what is worth interpreting.

Every finding sits on a ``backward()`` / ``torch.autograd.backward()`` / ``torch.autograd.grad()``
call. A file is worth an abstract interpretation only if it makes such a call itself, or uses a
name imported from one of the project's modules whose definition can (transitively) make one.
Names are followed through re-exports (``from .mlp import Mlp`` in a package's ``__init__``), so
a model file that imports layers from a package whose *other* modules hold a training loop is
not pulled in by the package alone. The scan reads import statements, never the code's meaning.
"""
from __future__ import annotations

import os
import re
from collections import OrderedDict
from itertools import filterfalse
from typing import Optional

from .resolve import file_stamp
from .rules import TRIGGERS
from .sources import SourceError, read_python

try:  # the standard library's regex parser (a private module, hence the guard in ``required``)
    from re import _constants as _C, _parser as _sre
except ImportError:  # Python 3.10
    import sre_constants as _C
    import sre_parse as _sre

# A call that frees graph. ``def backward(ctx, grad)`` of a custom autograd Function is no call.
# Two patterns, each run only when its word occurs: one alternation over all would be tried at
# every position of the text, fifty times slower.
_BACKWARD_CALL = re.compile(r"\.\s*backward\s*\(")  # loss.backward(), scaler.scale(l).backward()
_AUTOGRAD_CALL = re.compile(
    r"autograd\s*\.\s*(?:grad|backward)\s*\("  # torch.autograd.grad(...)
    r"|from[ \t]+torch\.autograd[ \t]+import[^\n]*\b(?:grad|backward)\b"  # from torch.autograd import grad
    r"|torch\.autograd[ \t]+as\b")  # import torch.autograd as ag


def calls_backward(text: str) -> bool:
    return ("backward" in text and _BACKWARD_CALL.search(text) is not None) \
        or ("autograd" in text and _AUTOGRAD_CALL.search(text) is not None)


def triggered(text: str) -> bool:
    """Whether the finding of a rule that needs no backward may sit in this text (it matches
    the rule's ``trigger``). Such findings are the analysed file's own, so only its own text
    counts, not what it imports."""
    return any(all(_found(*search, text) for search in searches) for searches in _GATED)


def _found(pattern: re.Pattern, needs: frozenset, starts: frozenset, text: str) -> bool:
    if starts:  # tried only where a match can begin
        for start in starts:
            at = text.find(start)
            while at >= 0:
                if pattern.match(text, at):
                    return True
                at = text.find(start, at + 1)
        return False
    return (not needs or any(s in text for s in needs)) and pattern.search(text) is not None


def required(pattern: re.Pattern) -> frozenset:
    """Strings one of which every text the pattern matches in contains (empty: none known).
    A substring test is a hundred times cheaper than a regex that must be tried at every
    character (``\\bnp\\.``, ``\\A(?=[\\s\\S]*...)``), and most texts have none of them."""
    if not isinstance(pattern.pattern, str) or pattern.flags & re.IGNORECASE:
        return frozenset()
    try:
        return _needs(_sre.parse(pattern.pattern, pattern.flags)) or frozenset()
    except Exception:  # a construct this reading does not know: no shortcut, never a wrong one
        return frozenset()


_MAX_STRINGS = 32


def _needs(items) -> Optional[frozenset]:
    """For a sequence of parsed regex items: the best of the string sets its parts require
    (a run of items that match only fixed strings gives their concatenations)."""
    found, run = [], {""}
    for op, av in items:
        exact = _exact(op, av)
        if exact is not None and len(run) * len(exact) <= _MAX_STRINGS:
            run = {a + b for a in run for b in exact}
            continue
        if run != {""}:
            found.append(run)
        run = {""} if exact is None else set(exact)
        if exact is None:
            inner = _needs_of(op, av)
            if inner:
                found.append(inner)
    found.append(run)
    found = [f for f in found if "" not in f]
    return frozenset(max(found, key=lambda f: min(map(len, f)))) if found else None


def _exact(op, av) -> Optional[frozenset]:
    """The strings an item matches, if they are few and fixed."""
    if op is _C.LITERAL:
        return frozenset(chr(av))
    if op is _C.IN and all(o is _C.LITERAL for o, _ in av) and len(av) <= _MAX_STRINGS:  # [ab]
        return frozenset(chr(a) for _, a in av)
    if op is _C.SUBPATTERN and not av[1] & re.IGNORECASE:
        return _exact_seq(av[3])
    if op is _C.BRANCH:
        parts = [_exact_seq(b) for b in av[1]]
        if all(p is not None for p in parts) and sum(map(len, parts)) <= _MAX_STRINGS:
            return frozenset().union(*parts)
    return None


def _exact_seq(items) -> Optional[frozenset]:
    out = {""}
    for op, av in items:
        exact = _exact(op, av)
        if exact is None or len(out) * len(exact) > _MAX_STRINGS:
            return None
        out = {a + b for a in out for b in exact}
    return frozenset(out)


def _needs_of(op, av) -> Optional[frozenset]:
    """What an item that matches more than fixed strings requires of the text."""
    if op is _C.SUBPATTERN and not av[1] & re.IGNORECASE:
        return _needs(av[3])
    if op is _C.BRANCH:
        parts = [_needs(b) for b in av[1]]
        return frozenset().union(*parts) if all(parts) else None
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, _C.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _needs(av[2])
    if op is _C.ASSERT:  # a lookahead or lookbehind: what it looks at is in the text too
        return _needs(av[1])
    return None


_ANYWHERE = r"(?=[\s\S]*"


def conjuncts(pattern: re.Pattern) -> tuple:
    """``\\A(?=[\\s\\S]*X)(?=[\\s\\S]*Y)`` ("the text holds X and Y") as the searches for X
    and Y: each alone lets the regex engine skip to where it can start, the whole is tried
    at every character of the text again for each lookahead. Other patterns: themselves."""
    source = pattern.pattern
    if isinstance(source, str) and source.startswith(r"\A" + _ANYWHERE):
        parts = source[2:].split(_ANYWHERE)[1:]
        if all(part.endswith(")") for part in parts):
            try:  # a split inside a group leaves some part unbalanced: then the whole pattern
                return tuple(re.compile(part[:-1], pattern.flags) for part in parts)
            except re.error:
                pass
    return (pattern,)


def starts(pattern: re.Pattern) -> frozenset:
    """Strings one of which every match of the pattern begins with (empty: none known). A
    pattern such as ``\\b(?:np|numpy)\\.`` has no first character the regex engine can skip
    to, and is tried at every character; at the few places a string begins, it is cheap."""
    if not isinstance(pattern.pattern, str) or pattern.flags & re.IGNORECASE:
        return frozenset()
    try:
        return _starts(_sre.parse(pattern.pattern, pattern.flags)) or frozenset()
    except Exception:  # a construct this reading does not know: no shortcut, never a wrong one
        return frozenset()


def _starts(items) -> Optional[frozenset]:
    items = list(items)
    while items and items[0][0] in (_C.AT, _C.ASSERT, _C.ASSERT_NOT):  # they match no text
        items.pop(0)
    if not items:
        return None
    op, av = items[0]
    if op is _C.BRANCH:
        parts = [_starts(b) for b in av[1]]
        return frozenset().union(*parts) if all(parts) else None
    if op is _C.SUBPATTERN and _exact(op, av) is None:
        return _starts(av[3]) if not av[1] & re.IGNORECASE else None
    run = {""}
    for op, av in items:
        exact = _exact(op, av)
        if exact is None or len(run) * len(exact) > _MAX_STRINGS:
            break
        run = {a + b for a in run for b in exact}
    return frozenset(run) if "" not in run else None


# For each trigger, the searches that must all find a match (the rarer first), with the
# strings each requires and those its matches begin with.
_GATED = tuple(tuple(sorted(((c, required(c), starts(c)) for c in conjuncts(t)),
                            key=lambda search: -min(map(len, search[1]), default=0)))
               for t in TRIGGERS)


# The scan reads the text, not a syntax tree: parsing costs as much as the whole budget of a
# file that cannot matter. Lines inside strings may look like imports or definitions; that only
# makes the answer "may reach" more often, which costs time, never truth.
_DEFINED = re.compile(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)"
                      r"|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+"
                   r"(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]*(?:\\\n[^\n#;]*)*)", re.M)
_ALIAS = re.compile(r"([\w.]+|\*)(?:\s+as\s+(\w+))?")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_NN = re.compile(r"nn\b")  # (a word boundary first would be tried at every character)
# The patterns above start with ``^``, which the regex engine tries at every character (a
# tenth of a second per megabyte). They are tried only where a literal found quickly puts them:
# after a newline starting a top-level statement (column 0), or at the start of a line whose
# first word is ``from`` / ``import``.
_TOP_STMT = re.compile(r"\n[A-Za-z_@]")
_TOP_FIRST = re.compile(r"[A-Za-z_@]")
_FROM_WORD = re.compile(r"from[ \t]")
_IMPORT_WORD = re.compile(r"import[ \t]")
_IMPORT_LINE = re.compile(r"(?:from|import)[ \t]")
# ASCII characters no identifier holds, to split a text into words in C (``_IDENT.findall``
# builds a match object per word, three times slower)
_NOT_WORD = {c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")}
# a one-line string: ``__all__ = ["Trainer"]`` names nothing. A prefixed one is kept (an
# f-string's fields run code).
_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")


def _blank(m: re.Match) -> str:
    start = m.start()
    if start and (m.string[start - 1].isalnum() or m.string[start - 1] == "_"):
        return m.group(0)
    return '""'


def _unstring(chunk: str) -> str:
    return _STRING.sub(_blank, chunk) if ('"' in chunk or "'" in chunk) else chunk


def _run_only(chunk: str) -> str:
    """The chunk without its one-line import statements, which only bind names."""
    if "import" not in chunk:
        return chunk
    return "\n".join(line for line in chunk.split("\n")
                     if "(" in line or not line.lstrip().startswith(("from ", "import ", "from\t", "import\t")))


def _line_matches(pattern: re.Pattern, word: re.Pattern, text: str) -> list:
    """``pattern.finditer(text)`` for a pattern matching lines whose first word ``word`` finds:
    tried only at those lines, skipping those a previous match spans (as ``finditer`` does)."""
    found, done = [], 0
    for w in word.finditer(text):
        line = text.rfind("\n", 0, w.start()) + 1
        if line >= done and not text[line:w.start()].strip(" \t"):
            m = pattern.match(text, line)
            if m is not None:
                found.append(m)
                done = m.end()
    return found


def identifiers(text: str, pattern: re.Pattern = _IDENT) -> set:
    """``set(pattern.findall(text))`` for a pattern of identifier-like words (``_IDENT``, or
    one that also takes non-ASCII letters): the words of a text."""
    words = set(text.translate(_NOT_WORD).split())
    # an ASCII word starting with a letter is whole; others (numbers, ``3d``, non-ASCII
    # letters or symbols inside) are split as the regex would
    if text.isascii():  # (the words are of letters, digits and ``_``: tested in C)
        odd = list(filterfalse(str.isidentifier, words))
    else:
        odd = [w for w in words if not (w.isascii() and (w[0].isalpha() or w[0] == "_"))]
    for w in odd:
        words.discard(w)
        words.update(pattern.findall(w))
    return words


def _of_nn(dotted: str) -> bool:
    return dotted == "torch.nn" or dotted.startswith("torch.nn.")


def _names_nn(text: str) -> bool:
    """Whether ``nn`` is a word of the text (``torch.nn``, ``from torch import nn``)."""
    return any(m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")
               for m in _NN.finditer(text))


class Outline:
    """What the scan needs of one module: whether its text calls a backward, the names it
    defines at the top level, and where each imported name comes from."""

    __slots__ = ("path", "frees", "defined", "imports", "modules", "stars", "text", "_spans", "_uses", "_run",
                 "_assigned", "_torch_names")

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.frees = calls_backward(text)
        # a top-level def, class or assignment: the text from its line to the next statement's
        starts = [m.start() + 1 for m in _TOP_STMT.finditer(text)]
        if _TOP_FIRST.match(text):
            starts.insert(0, 0)
        starts.append(len(text))
        self._spans: dict[str, list] = {}
        self._run: list = []  # the top-level statements run on import: not definitions, not imports
        defs = set()
        for i in range(len(starts) - 1):
            m = _DEFINED.match(text, starts[i])
            if m is not None:
                self._spans.setdefault(m.group(1) or m.group(2), []).append((starts[i], starts[i + 1]))
                if m.group(1):
                    defs.add(m.group(1))
            if (m is None or m.group(2)) and not _IMPORT_LINE.match(text, starts[i]):
                self._run.append((starts[i], starts[i + 1]))
        self._assigned = self._spans.keys() - defs  # bound by top-level assignments only
        self.defined: set[str] = set(self._spans)
        self._uses: dict = {}
        self.imports: dict[str, tuple[str, int, Optional[str]]] = {}  # local name -> (module, level, name)
        self.modules: dict[str, tuple[str, bool]] = {}  # ``import a.b [as c]``: bound name -> (dotted, aliased)
        self.stars: list[tuple[str, int]] = []
        # names bound to ``torch.nn`` or its members other than by the word ``nn`` (``from
        # torch.nn import Linear``, ``import torch.nn as tnn``); "*" for ``from torch.nn import *``
        self._torch_names: set = set()
        for m in _line_matches(_FROM, _FROM_WORD, text):
            dots, base, names = m.groups()
            of_nn = not dots and _of_nn(base)
            for name, asname in _ALIAS.findall(names):
                if of_nn or (not dots and base == "torch" and name == "nn"):
                    self._torch_names.add(asname or name)
                if name == "*":
                    self.stars.append((base, len(dots)))
                elif "." not in name:
                    self.imports[asname or name] = (base, len(dots), name)
        for m in _line_matches(_IMPORT, _IMPORT_WORD, text):
            for name, asname in _ALIAS.findall(m.group(1)):
                # torch is never the project's (and ``torch.``/``nn.``/``F.`` chains are legion)
                if name != "*" and name != "torch" and not name.startswith("torch."):
                    self.modules[asname or name.split(".")[0]] = (name if asname else name.split(".")[0],
                                                                  bool(asname))
                elif asname and _of_nn(name):
                    self._torch_names.add(asname)

    def uses(self, name: str) -> Optional[tuple[bool, set, set, bool]]:
        """For a name bound at the top level, what the statements binding it call, mention and
        make (``mentions``). None for others."""
        if name not in self._spans:
            return None
        if name not in self._uses:
            chunk = _unstring("\n".join(self.text[start:end] for start, end in self._spans[name]))
            self._uses[name] = self.mentions(chunk, identifiers(chunk), name)
        return self._uses[name]

    def executed(self) -> tuple[bool, set, set, bool]:
        """What the top-level statements that run (not ``def``, ``class`` or imports) call and name."""
        if "" not in self._uses:
            chunk = _run_only(_unstring("\n".join(self.text[start:end] for start, end in self._run)))
            # what a top-level assignment binds ran with the chunk itself, and imports (under a
            # ``try`` or ``if``) only bind
            self._uses[""] = self.mentions(chunk, identifiers(chunk) - self._assigned)
        return self._uses[""]

    def whole(self) -> tuple[bool, set, set, bool]:
        if "*" not in self._uses:
            # every name the module imports or defines is a word of its text (the statement
            # binding it), unless the scan took a non-identifier for one (``import 3d``)
            names = {n for n in self.imports.keys() | self.modules.keys() if _IDENT.fullmatch(n)}
            self._uses["*"] = self.mentions(self.text, names | self._spans.keys())
        return self._uses["*"]

    def mentions(self, chunk: str, idents: set, own: Optional[str] = None) -> tuple[bool, set, set, bool]:
        """Whether a piece of this module (whose words are ``idents``) calls a backward, the
        imported or defined names it mentions, the attribute chains it reads off whole
        imported modules (``tg.nn.GCN``), and whether it can make a tensor that requires grad
        itself (it names ``requires_grad``, ``nn``, or something of ``torch.nn`` bound another
        way: its layers and parameters are where the analysis finds such tensors)."""
        names = idents & (self.imports.keys() | self._spans.keys())
        names.discard(own)
        chains = set()
        for bound in idents & self.modules.keys():
            # a literal first lets the regex engine skip ahead; the word boundary is checked after
            for m in re.finditer(rf"{re.escape(bound)}((?:\s*\.\s*\w+)+)", chunk):
                if m.start() == 0 or not (chunk[m.start() - 1].isalnum() or chunk[m.start() - 1] in "_."):
                    chains.add((bound, tuple(part.strip() for part in m.group(1).split(".")[1:])))
        grad = "requires_grad" in chunk or _names_nn(chunk) or "*" in self._torch_names \
            or not idents.isdisjoint(self._torch_names)
        return calls_backward(chunk), names, chains, grad


class Reach:
    """Answers "can this module, or this name of it, reach a backward?" for one project,
    remembering outlines and answers (an import cycle is answered "no" while in progress).
    Asked ``wants="grad"``, the same of "make a tensor that requires grad"."""

    FLAGS = {"frees": 0, "grad": 3}  # which flag of ``Outline.mentions`` a question follows

    def __init__(self, project, main_path: str, main_text: str, wants: str = "frees",
                 outlines: Optional[dict] = None):
        self.project = project
        self._flag = self.FLAGS[wants]
        # the file's outline as last read from disk, when the analysed text is that
        hit = _OUTLINES.get(main_path)
        on_disk = hit is not None and hit[1] is not None and hit[1].text == main_text
        self.outlines: dict[str, Optional[Outline]] = outlines if outlines is not None else {
            main_path: hit[1] if on_disk else Outline(main_path, main_text)}
        self.main = main_path
        # Answers about files as they are on disk hold across analyses until a file changes
        # (``_outline`` forgets them then); unsaved buffers get answers of their own.
        shared = not project.overlay
        self._names: dict = _ANSWERS.setdefault((project.root, "names", wants), {}) if shared else {}
        self._modules: dict = _ANSWERS.setdefault((project.root, "modules", wants), {}) if shared else {}
        if not on_disk:
            self._names.pop(main_path, None)
            self._modules.pop(main_path, None)
        self._busy: dict = {}  # the questions being answered -> how deep
        self._provisional: dict = {}  # question -> (False, the depth of the question it rests on)
        self._pending: list = []  # the provisional questions, with where they go, in order
        self._low = 0  # the shallowest question in progress that the current answer rested on
        self._importers: dict[str, _Importer] = {}
        self._asked = 0  # questions answered afresh
        self._gave_up = False  # a question went past a bound: answers since are not remembered

    def outline(self, path: str) -> Optional[Outline]:
        if path not in self.outlines:
            self.project.read.add(path)
            self.outlines[path] = _outline(path, self.project.overlay.get(path))
        return self.outlines[path]

    def _find(self, dotted: str, level: int, importer: str) -> Optional[str]:
        if level == 0 and (dotted == "torch" or dotted.startswith("torch.")):
            return None
        if importer not in self._importers:
            self._importers[importer] = _Importer(importer)
        return self.project.find(dotted, level, self._importers[importer])

    def module(self, path: str) -> bool:
        """Whether running anything of this module may reach a backward."""
        return self._answer(self._modules, path, None)

    def runs(self, path: str) -> bool:
        """Whether analysing this file may reach a backward: it calls one itself, or the code
        it runs on its own (its top-level statements, save definitions and imports, and the
        functions they name) may. A package's ``__init__`` re-exporting a training loop, a
        model file importing a layer from a module that also trains, run none."""
        out = self.outline(path)
        return out is not None and (out.frees or self._follows(out, out.executed())
                                    or any(self._star_module(out, base, level) for base, level in out.stars))

    def may_hold_grad(self, path: str) -> bool:
        """Whether this module's code can see a tensor that requires grad: it makes one (it names
        torch, and ``torch.nn``, whose layers and parameters do, or ``requires_grad``), or a name
        it uses from the project's modules can (followed to its definition and what that names,
        as ``runs`` follows backwards). A trigger's finding (such a tensor turned into NumPy,
        added up, made a leaf) needs one; a module of plain NumPy, data or inference code that
        matches a trigger by its words is left alone. (What a third-party library returns is
        unknown to the analysis either way.)"""
        out = self.outline(path)
        if out is None:
            return False
        if "torch" in out.text and ("requires_grad" in out.text or _names_nn(out.text)):
            return True
        # the project's names it uses, followed to where they are made
        return Reach(self.project, path, out.text, "grad", self.outlines).module(path)

    def _module(self, path: str) -> bool:
        out = self.outline(path)
        # the names it defines itself need no following: their text is part of the whole
        return out is not None and (self._follows(out, out.whole(), imported_only=True)
                                    or any(self._star_module(out, base, level) for base, level in out.stars))

    def _answer(self, memo: dict, path: str, name: Optional[str]) -> bool:
        """A memoised answer. A question met again while being answered (an import cycle) is
        answered "no" for now: a "no" that rests on it is final only once the question it
        went back to is answered "no" too (the cycle's first question, as in Tarjan's
        strongly connected components); until then it is provisional."""
        key = path if name is None else (path, name)
        memo, slot = (memo, path) if name is None else (memo.setdefault(path, {}), name)
        got = memo.get(slot)
        if got is not None:
            return got
        if key in self._provisional:
            self._low = min(self._low, self._provisional[key][1])
            return False
        depth = self._busy.get(key)
        if depth is not None:
            self._low = min(self._low, depth)
            return False
        if len(self._busy) >= MAX_DEPTH or self._asked >= MAX_QUESTIONS:
            # an import chain too long or a closure too large to follow (a package of hundreds of
            # modules): "may", so the file is analysed, within the engine's own budgets
            self._gave_up = True
            return True
        self._asked += 1
        depth = self._busy[key] = len(self._busy)
        outer, self._low = self._low, depth + 1
        mark = len(self._pending)
        found = self._module(path) if name is None else self._name(path, name)
        del self._busy[key]
        low = self._low
        if found or low >= depth:
            if not self._gave_up:
                memo[slot] = found
            for k, m, s in self._pending[mark:]:
                del self._provisional[k]
                if not found:  # the cycle closed here with "no": what rested on it holds now
                    m[s] = False
            del self._pending[mark:]
            self._low = outer
        else:
            self._provisional[key] = (False, low)
            self._pending.append((key, memo, slot))
            self._low = min(outer, low)
        return found

    def _follows(self, out: Outline, uses, imported_only: bool = False) -> bool:
        _, names, chains = uses[:3]
        return uses[self._flag] or any(self._imported(out, out.imports[n]) if n in out.imports else self.name(out.path, n)
                            for n in names if not imported_only or n in out.imports) \
            or any(self._chain(out, bound, attrs) for bound, attrs in chains)

    def _chain(self, out: Outline, bound: str, attrs: tuple) -> bool:
        """``tg.nn.GCN`` after ``import tg``: submodules while they are, then one attribute."""
        dotted, _aliased = out.modules[bound]
        target = self._find(dotted, 0, out.path)
        if target is None:
            return False
        for attr in attrs:
            sub = self._find(f"{dotted}.{attr}", 0, out.path)
            if sub is None:
                return self.name(target, attr)
            dotted, target = f"{dotted}.{attr}", sub
        return self.module(target)

    def name(self, path: str, name: str) -> bool:
        """Whether the object ``name`` of this module may reach a backward when used."""
        return self._answer(self._names, path, name)

    def _name(self, path: str, name: str) -> bool:
        out = self.outline(path)
        uses = out.uses(name) if out is not None else None
        if out is None:
            found = False
        elif uses is not None:  # bound here: what its own statements call and name
            found = self._follows(out, uses)
        elif name not in out.imports and not out.stars:
            found = self.module(path)  # bound some other way: whatever the module uses
        elif name in out.imports:
            found = self._imported(out, out.imports[name])
        else:  # maybe from a star import
            found = any(self._via_star(out, base, level, name) for base, level in out.stars)
        return found

    def _via_star(self, out: Outline, base: str, level: int, name: str) -> bool:
        """``from base import *`` gives ``name`` only if ``base`` has it (or stars of its own)."""
        target = self._find(base, level, out.path)
        t = self.outline(target) if target is not None else None
        if t is None or not (name in t.defined or name in t.imports or t.stars):
            return False
        return self.name(target, name)

    def _imported(self, out: Outline, spec) -> bool:
        base, level, name = spec
        target = self._find(base, level, out.path) if (base or level) else None
        if target is not None:
            t = self.outline(target)
            if t is None:
                return False
            if name in t.defined or name in t.imports or not target.endswith("__init__.py"):
                return self.name(target, name)
        sub = self._find(f"{base}.{name}" if base else name, level, out.path)  # a submodule
        if sub is not None:
            return self.module(sub)
        return target is not None and self.name(target, name)

    def _star_module(self, out, base, level) -> bool:
        target = self._find(base, level, out.path)
        return target is not None and self.module(target)



# Bounds of one analysis' questions: how many are open one inside another (each follows an
# import, a few frames: a compiled build must not recurse without end) and how many are answered
# afresh (each reads a module's outline).
MAX_DEPTH = 48
MAX_QUESTIONS = 400

# Outlines of unchanged files, kept across analyses (a directory check, an editor's keystrokes):
# each keeps its text (what a name mentions is read lazily), so a thousand or so.
_OUTLINES: "OrderedDict[str, tuple]" = OrderedDict()
MAX_OUTLINES = 1024


def _outline(path: str, unsaved: Optional[str]) -> Optional[Outline]:
    if unsaved is not None:
        return Outline(path, unsaved)
    stamp = file_stamp(path)
    hit = _OUTLINES.get(path)
    if hit is not None and hit[0] == stamp:
        _OUTLINES.move_to_end(path)
        return hit[1]
    if hit is not None:
        _ANSWERS.clear()  # a file changed: answers that went through it may no longer hold
    try:
        outline = Outline(path, read_python(path))
    except SourceError:
        outline = None
    _OUTLINES[path] = (stamp, outline)
    while len(_OUTLINES) > MAX_OUTLINES:
        _OUTLINES.popitem(last=False)
    return outline


_ANSWERS: dict = {}  # (project root, "names" | "modules") -> answers


def clear_outlines() -> None:
    _OUTLINES.clear()
    _ANSWERS.clear()


class _Importer:
    """The little of a ModuleInfo that ``Project.find`` reads."""

    __slots__ = ("path", "directory")

    def __init__(self, path: str):
        self.path, self.directory = path, os.path.dirname(path)
