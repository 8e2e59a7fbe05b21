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
from typing import Optional

from .resolve import file_stamp
from .sources import SourceError, read_python

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


# The scan reads the text, not a syntax tree: parsing costs as much as the whole budget of a
# file that cannot matter. Lines inside strings may look like imports or definitions; that only
# makes the answer "may reach" more often, which costs time, never truth.
_DEFINED = re.compile(r"^(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)"
                      r"|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+"
                   r"(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)", re.M)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]*(?:\\\n[^\n#;]*)*)", re.M)
_ALIAS = re.compile(r"([\w.]+|\*)(?:\s+as\s+(\w+))?")


class Outline:
    """What the scan needs of one module: whether its text calls a backward, the names it
    defines at the top level, and where each imported name comes from."""

    __slots__ = ("path", "frees", "defined", "imports", "modules", "stars")

    def __init__(self, path: str, text: str):
        self.path = path
        self.frees = calls_backward(text)
        self.defined: set[str] = {a or b for a, b in _DEFINED.findall(text)}
        self.imports: dict[str, tuple[str, int, Optional[str]]] = {}  # local name -> (module, level, name)
        self.modules: list[tuple[str, int]] = []  # ``import a.b``: used whole
        self.stars: list[tuple[str, int]] = []
        for dots, base, names in _FROM.findall(text):
            for name, asname in _ALIAS.findall(names):
                if name == "*":
                    self.stars.append((base, len(dots)))
                elif "." not in name:
                    self.imports[asname or name] = (base, len(dots), name)
        for names in _IMPORT.findall(text):
            for name, _asname in _ALIAS.findall(names):
                if name != "*":
                    self.modules.append((name, 0))


class Reach:
    """Answers "can this module, or this name of it, reach a backward?" for one project,
    remembering outlines and answers (an import cycle is answered "no" while in progress)."""

    def __init__(self, project, main_path: str, main_text: str):
        self.project = project
        self.outlines: dict[str, Optional[Outline]] = {main_path: Outline(main_path, main_text)}
        self.main = main_path
        self._names: dict[tuple[str, str], bool] = {}
        self._modules: dict[str, bool] = {}

    def outline(self, path: str) -> Optional[Outline]:
        if path not in self.outlines:
            self.project.read.add(path)
            self.outlines[path] = _outline(path, self.project.overlay.get(path))
        return self.outlines[path]

    def _find(self, dotted: str, level: int, importer: str) -> Optional[str]:
        if level == 0 and (dotted == "torch" or dotted.startswith("torch.")):
            return None
        return self.project.find(dotted, level, _Importer(importer))

    def module(self, path: str) -> bool:
        """Whether running anything of this module may reach a backward."""
        if path in self._modules:
            return self._modules[path]
        self._modules[path] = False
        out = self.outline(path)
        found = out is not None and (out.frees or self._uses(out, out.imports.keys()))
        self._modules[path] = found
        return found

    def name(self, path: str, name: str) -> bool:
        """Whether the object ``name`` of this module may reach a backward when used."""
        key = (path, name)
        if key in self._names:
            return self._names[key]
        self._names[key] = False
        out = self.outline(path)
        if out is None:
            found = False
        elif name in out.defined or (name not in out.imports and not out.stars):
            found = self.module(path)  # defined here (or a variable): whatever the module uses
        elif name in out.imports:
            found = self._imported(out, out.imports[name])
        else:  # maybe from a star import
            found = any(self._via_star(out, base, level, name) for base, level in out.stars)
        self._names[key] = found
        return found

    def _via_star(self, out: Outline, base: str, level: int, name: str) -> bool:
        target = self._find(base, level, out.path)
        return target is not None and self.name(target, name)

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

    def _uses(self, out: Outline, names) -> bool:
        if any(self._imported(out, out.imports[n]) for n in names):
            return True
        for dotted, level in out.modules:
            target = self._find(dotted, level, out.path)
            if target is not None and self.module(target):
                return True
        return any(self._star_module(out, base, level) for base, level in out.stars)

    def _star_module(self, out, base, level) -> bool:
        target = self._find(base, level, out.path)
        return target is not None and self.module(target)

    def reaching_names(self, path: str) -> set[str]:
        """The names bound in a module by imports whose objects may reach a backward."""
        out = self.outline(path)
        if out is None:
            return set()
        names = {n for n, spec in out.imports.items() if self._imported(out, spec)}
        for dotted, level in out.modules:
            target = self._find(dotted, level, out.path)
            if target is not None and self.module(target):
                names.add(dotted.split(".")[0])
        return names


# Outlines of unchanged files, kept across analyses (a directory check, an editor's keystrokes):
# a few hundred bytes each, so many fit.
_OUTLINES: "OrderedDict[str, tuple]" = OrderedDict()
MAX_OUTLINES = 4096


def _outline(path: str, unsaved: Optional[str]) -> Optional[Outline]:
    if unsaved is not None:
        return Outline(path, unsaved)
    stamp = file_stamp(path)
    hit = _OUTLINES.get(path)
    if hit is not None and hit[0] == stamp:
        _OUTLINES.move_to_end(path)
        return hit[1]
    try:
        outline = Outline(path, read_python(path))
    except SourceError:
        outline = None
    _OUTLINES[path] = (stamp, outline)
    while len(_OUTLINES) > MAX_OUTLINES:
        _OUTLINES.popitem(last=False)
    return outline


def clear_outlines() -> None:
    _OUTLINES.clear()


class _Importer:
    """The little of a ModuleInfo that ``Project.find`` reads."""

    __slots__ = ("path", "directory")

    def __init__(self, path: str):
        self.path, self.directory = path, os.path.dirname(path)
