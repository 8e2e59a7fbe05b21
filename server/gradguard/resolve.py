"""Finding and loading the user's own modules that an analysed file imports.

Imports of the project's modules are resolved to files without importing them: a quick look
for a matching file under the project's search roots filters out the standard library and
third-party packages, and jedi resolves what is there (packages, relative imports, ``src/``
layouts). The module is then parsed and its top level interpreted once; its names are cached.
"""
from __future__ import annotations

import ast
import os
import time
from collections import OrderedDict
from itertools import accumulate
from typing import Optional

from .skeleton import parse_lazily
from .sources import SourceError, read_python


class ModuleInfo:
    def __init__(self, path: str, name: str, text: str, tree: ast.Module):
        self.path, self.name, self.text, self.tree = path, name, text, tree
        self.env: dict = {}
        self.directory = os.path.dirname(path)
        self._line_starts: Optional[list] = None
        self.generators: dict = {}  # id(FunctionDef) -> whether it yields
        # the project files its top level loaded, directly or not: path -> (stamp, size). Its
        # cached names are only as good as those files, and reusing them costs what they cost.
        self.closure: dict = {}
        # ``invariants``: the attributes it assigns outside __init__, the names each scope binds once
        self.written: Optional[frozenset] = None
        self.unwalked: list = []  # the functions ``written`` has not looked into: bodies not parsed yet
        self.writes: dict = {}  # attribute -> whether ``written`` has it (or ``"*"``)
        self.settled: dict = {}
        self.global_lines: dict = {}  # name -> the lines of the text that declare it ``global``
        self.binds_unseen: Optional[bool] = None  # whether code may bind names unseen (``import *``, ``exec``)

    def release(self, *namespaces: dict) -> None:
        """Break the reference cycles among this module's values (a class and its methods, the
        module and its classes), so that reference counting frees them once the analysis that
        made them is dropped. ``namespaces``: other dicts of its values (the globals its run
        ended with, which branches may have copied)."""
        from .values import Class, Func

        for value in [v for names in (self.env, *namespaces) for v in names.values()]:
            if type(value) is Class and value.module is self:
                for attr in value.attrs.values():
                    if type(attr) is Func:
                        attr.owner = attr.closure = None
                value.attrs.clear()
        self.env.clear()
        self.unwalked = []
        self.settled.clear()  # keyed by its syntax tree's nodes
        self.tree = None  # classes made in functions stay in cycles until a full pass: not with the tree

    def source_of(self, node) -> str:
        """The raw text of the lines a node spans (cheap: no re-parse, no walk)."""
        if self._line_starts is None:
            self._line_starts = list(accumulate(map((1).__add__, map(len, self.text.split("\n"))), initial=0))
        starts = self._line_starts
        end = min(node.end_lineno, len(starts) - 1)
        return self.text[starts[node.lineno - 1]:starts[end]]


class Project:
    """The files an analysis may read: the analysed file and the project's modules it imports."""

    def __init__(self, root: str, overlay: Optional[dict] = None, entry: Optional[str] = None):
        self.root = os.path.abspath(root)
        self.search_roots = [p for p in (self.root, os.path.join(self.root, "src")) if os.path.isdir(p)]
        # the analysed script's folder is on sys.path for every module it imports (a package's
        # ``from utils.tensors import *`` where ``utils`` sits next to the script)
        folder = os.path.dirname(os.path.abspath(entry)) if entry and not entry.startswith("<") else None
        self.entry_dir = folder if folder and not exists(os.path.join(folder, "__init__.py")) else None
        self.modules: dict[str, Optional[ModuleInfo]] = {}
        self.overlay = overlay or {}  # path -> unsaved text (editor buffers)
        self._jedi_project = None
        self.read: set[str] = set()  # every project file whose text was looked at
        self.imported_bytes = 0  # source loaded for imports, cached or not (the cost is parsing it)
        self._loading: list[ModuleInfo] = []  # the modules whose top level is running, innermost last
        self._stamps: dict = {}  # file stamps as this analysis saw them (each closure checks many)

    def dependencies(self, main: str) -> tuple[str, ...]:
        return tuple(sorted((self.read | self.modules.keys()) - {main}))

    def load(self, dotted: str, level: int, importer: ModuleInfo, engine) -> Optional[ModuleInfo]:
        path = self.find(dotted, level, importer)
        if path is None:
            return None
        stamp = self._stamp(path) if path not in self.overlay else None
        size = len(self.overlay[path]) if stamp is None else (stamp[1] if stamp else 0)
        if path in self.modules:  # loaded before in this analysis: read again by the one loading now
            known = self.modules[path]
            self._record(path, stamp, size, known.closure if known is not None else {})
            return known
        self.read.add(path)
        if len(self.modules) >= MAX_MODULES or self.imported_bytes + size > MAX_IMPORTED_BYTES:
            return None  # a sprawling import graph: further modules stay unknown
        self.imported_bytes += size
        self.modules[path] = None  # an import cycle sees an empty module
        cached = _LOADED.get(path)
        if stamp is not None and cached is not None and cached[0] == stamp and self._reusable(cached[1]):
            _LOADED.move_to_end(path)
            module = cached[1]
            self.modules[path] = module
            # what its first load read is read now too: dependencies and budget as a cold load
            self.read.update(module.closure)
            for p, (_, size_of_p) in module.closure.items():
                if p not in self.modules:
                    self.imported_bytes += size_of_p
                    kept = _LOADED.get(p)
                    if kept is not None and kept[0] == module.closure[p][0]:
                        self.modules[p] = kept[1]  # imported again here: the same module, not counted twice
            self._record(path, stamp, size, module.closure)
            return module
        try:
            text = self.overlay.get(path) or read_python(path)
            tree = tree_of(path, text)
        except SourceError:
            return None
        name = dotted if level == 0 else _module_name(path, self.root)
        module = ModuleInfo(path, name, text, tree)
        self._loading.append(module)
        try:
            out = engine.run_module(module, module.env, budget=IMPORT_BUDGET)
        finally:
            self._loading.pop()
        if out is not None:
            module.env = out.globals
        self.modules[path] = module
        self._record(path, stamp, size, module.closure)
        # (a module met through an import cycle keeps the names it had by then, as Python does)
        if stamp is not None:
            _cache_module(path, stamp, module)
        return module

    @property
    def loading(self) -> bool:
        """Whether a module's top level is running (it is not in ``modules`` yet)."""
        return bool(self._loading)

    def _record(self, path: str, stamp, size: int, closure: dict) -> None:
        """The module loading now (if any) read ``path`` and what ``path`` read."""
        if self._loading:
            outer = self._loading[-1].closure
            outer.update(closure)
            outer[path] = (stamp, size)

    def _reusable(self, module: ModuleInfo) -> bool:
        """A cached module is as it would load now: every file its top level read is unchanged
        (and none is an unsaved editor buffer)."""
        return all(p not in self.overlay and stamp is not None and self._stamp(p) == stamp
                   for p, (stamp, _) in module.closure.items())

    def _stamp(self, path: str):
        if path not in self._stamps:
            self._stamps[path] = file_stamp(path)
        return self._stamps[path]

    def find(self, dotted: str, level: int, importer: ModuleInfo) -> Optional[str]:
        return probed(_FOUND, (self.root, dotted, level, importer.directory, self.entry_dir),
                      lambda: self._find(dotted, level, importer))

    def _find(self, dotted: str, level: int, importer: ModuleInfo) -> Optional[str]:
        parts = [p for p in dotted.split(".") if p]
        if level > 0:
            base = os.path.dirname(importer.path)
            for _ in range(level - 1):
                base = os.path.dirname(base)
            return _module_file(base, parts)
        importer_dir = os.path.dirname(importer.path)
        # a script's folder is on sys.path; a package's is not (``from dataclasses import field``
        # inside ``pkg/utils/dataclasses.py`` is the standard library)
        script_dir = [] if exists(os.path.join(importer_dir, "__init__.py")) else [importer_dir]
        entry = [self.entry_dir] if self.entry_dir and self.entry_dir != importer_dir else []
        roots = script_dir + entry + [r for r in self.search_roots if r != importer_dir and r != self.entry_dir]
        candidates = [r for r in roots if parts and (exists(os.path.join(r, parts[0]))
                                                     or exists(os.path.join(r, parts[0] + ".py")))]
        if not candidates:
            return None  # not one of the project's modules: stdlib or third party
        for r in candidates:
            found = _module_file(r, parts)
            if found is not None:
                return found
        if any(_compiled(r, parts) for r in candidates):
            return None  # a C extension: nothing to read (and jedi would import it to look)
        if any(_module_file(r, parts[:i]) for r in candidates for i in range(1, len(parts))):
            return None  # a module's attribute (``pkg.Class``), not a module
        if any(os.path.isdir(os.path.join(r, *parts[:i])) for r in candidates for i in (len(parts), len(parts) - 1)
               if i):
            # a namespace package (a folder without ``__init__.py`` holds no code), or a name in
            # one (``from pytorch_lightning import Trainer`` where the package is generated)
            return None
        return self._jedi_find(dotted, importer)

    def _jedi_find(self, dotted: str, importer: ModuleInfo) -> Optional[str]:
        """Layouts the direct lookup misses (namespace packages, sys.path entries): ask jedi."""
        import jedi

        if self._jedi_project is None:
            self._jedi_project = jedi.Project(self.root)
        code = f"import {dotted}\n"
        try:
            names = jedi.Script(code, path=importer.path, project=self._jedi_project).goto(
                1, len(code) - 2, follow_imports=True)
        except Exception:  # jedi is best effort: an unresolved import is simply unknown
            return None
        for name in names:
            path = name.module_path
            if path is not None and str(path).endswith(".py") and str(path).startswith(self.root):
                return str(path)
        return None


def _module_file(base: str, parts: list) -> Optional[str]:
    target = os.path.join(base, *parts)
    if parts and exists(target + ".py"):
        return target + ".py"
    if exists(os.path.join(target, "__init__.py")):
        return os.path.join(target, "__init__.py")
    return None


# How many of the project's modules one analysis loads, and how many stay loaded between
# analyses (``gradguard check`` over a directory, an editor re-analysing on every keystroke):
# a module's top level is interpreted once while its file is unchanged.
MAX_MODULES = 64
MAX_IMPORTED_BYTES = 400_000  # about 10,000 lines: a tenth of a second of parsing
MAX_CACHED_MODULES = 256
# and at most this much of their source: a syntax tree takes about 40 times its text
MAX_CACHED_BYTES = 2_000_000
_cached_bytes = 0
# Statements an imported module's top level may run before its calls stop being followed.
IMPORT_BUDGET = 20_000
_LOADED: "OrderedDict[str, tuple]" = OrderedDict()
_RETIRED: list = []  # modules out of the cache, to release (``release_retired``)
# The syntax trees of the last files analysed as the main file: the same text is often parsed
# again soon (the editor's hover-index analysis after its diagnostics one; ``gradguard check``
# importing a file it has just analysed). Nothing changes a tree once parsed.
MAX_RECENT_TREES = 4
MAX_RECENT_TREE_BYTES = 200_000  # of their text (a tree takes some 40 times as much)
_TREES: "OrderedDict[str, tuple[str, ast.Module]]" = OrderedDict()


def tree_of(path: str, text: str) -> ast.Module:
    """The syntax tree of ``text`` (the file ``path``), parsed unless a loaded module or a
    recent analysis of the same text has it; function bodies are parsed when first read
    (``skeleton``). Raises :class:`SourceError`."""
    cached = _LOADED.get(path)
    if cached is not None and cached[1].tree is not None and cached[1].text == text:
        return cached[1].tree
    recent = _TREES.get(path)
    if recent is not None and recent[0] == text:
        return recent[1]
    return parse_lazily(text, path)


def remember_tree(path: str, text: str, tree: ast.Module) -> None:
    _TREES[path] = (text, tree)
    _TREES.move_to_end(path)
    while len(_TREES) > MAX_RECENT_TREES or (len(_TREES) > 1 and sum(len(t) for t, _ in _TREES.values())
                                             > MAX_RECENT_TREE_BYTES):
        _TREES.popitem(last=False)


def forget_trees(paths) -> None:
    """Drop what was parsed of these files (their loaded modules, their recent trees)."""
    for path in paths:
        _retire(path)
        _TREES.pop(path, None)


def _cache_module(path: str, stamp, module: ModuleInfo) -> None:
    global _cached_bytes
    _retire(path)
    _LOADED[path] = (stamp, module)
    _cached_bytes += len(module.text)
    while len(_LOADED) > MAX_CACHED_MODULES or (_cached_bytes > MAX_CACHED_BYTES and len(_LOADED) > 1):
        _retire(next(iter(_LOADED)))


def _retire(path: str) -> None:
    """Take ``path`` out of the cache, with every cached module whose top level read it (their
    names may be its values). They are released once the analysis using them is over."""
    global _cached_bytes
    entry = _LOADED.pop(path, None)
    if entry is None:
        return
    _cached_bytes -= len(entry[1].text)
    _RETIRED.append(entry[1])
    for other in [p for p, (_, m) in _LOADED.items() if path in m.closure]:
        _retire(other)


def release_retired() -> None:
    """Release the modules taken out of the cache (``ModuleInfo.release``): reference counting
    then frees them, where a collector pass over all the cache holds would cost far more. Only
    between analyses: the one running may hold their values. The plain-call memo may too."""
    if _RETIRED:
        from .engine import forget_calls

        forget_calls()
        for module in _RETIRED:
            module.release()
        _RETIRED.clear()


def clear_caches() -> None:
    """Forget loaded modules and file probes (benchmarks start each project cold)."""
    from .engine import forget_calls

    global _cached_bytes
    forget_calls()
    _RETIRED.extend(module for _, module in _LOADED.values())
    _LOADED.clear()
    release_retired()  # nothing else holds them now
    _TREES.clear()
    _cached_bytes = 0
    _PROBES.clear()
    _FOUND.clear()
    if _HELD_STAMPS is not None:
        _HELD_STAMPS.clear()
    ROOTS.clear()


def file_stamp(path: str):
    held = _HELD_STAMPS
    if held is not None and path in held:
        return held[path]
    try:
        st = os.stat(path)
        stamp = st.st_mtime_ns, st.st_size
    except OSError:
        stamp = None
    if held is not None:
        held[path] = stamp
    return stamp


# ``gradguard check`` reads a tree that does not change while it runs: each file is then
# stamped once per run (``hold_stamps``), not once per analysis that imports it (30,000 ``stat``
# calls over the real-code corpus). The editor's files change between analyses: it never holds.
_HELD_STAMPS: Optional[dict] = None


def hold_stamps(on: bool = True) -> None:
    global _HELD_STAMPS
    if not on:
        _HELD_STAMPS = None
    elif _HELD_STAMPS is None:
        _HELD_STAMPS = {}


# File-system probes, remembered briefly: one ``gradguard check`` or a burst of edits asks the
# same questions many times, while a module created later is still found seconds after.
_PROBES: dict = {}
_FOUND: dict = {}  # the same, for whole import resolutions
ROOTS: dict = {}  # and for the project root of a folder (``analysis.project_root``)
PROBE_SECONDS = 5.0


def probed(memo: dict, key, probe):
    """``probe()``, remembered in ``memo`` under ``key`` for ``PROBE_SECONDS``."""
    now = time.monotonic()
    hit = memo.get(key)
    if hit is None or now - hit[1] > PROBE_SECONDS:
        hit = memo[key] = (probe(), now)
    return hit[0]


def exists(path: str) -> bool:
    return probed(_PROBES, path, lambda: os.path.exists(path))


def _compiled(base: str, parts: list) -> bool:
    directory = os.path.join(base, *parts[:-1])
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(n.startswith(parts[-1] + ".") and n.endswith((".so", ".pyd")) for n in names)


def _module_name(path: str, root: str) -> str:
    rel = os.path.relpath(path, root)
    rel = rel[:-3] if rel.endswith(".py") else rel
    return rel.replace(os.sep, ".").removesuffix(".__init__")
