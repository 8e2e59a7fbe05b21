"""Which files ``gradguard check`` analyses.

- A file named on the command line is always analysed (whatever its name), or rejected with a
  message when it is missing, a directory entry that is not a regular file (a FIFO, a device),
  or unreadable.  A folder named on the command line is searched even if ``.gitignore`` leaves
  it out (the ``.gitignore`` rules below it still apply).
- In a directory, ``*.py`` and ``*.ipynb`` regular files are analysed unless ``.gitignore``
  (every ``.gitignore`` from the repository root down to the file, as git reads them) or the
  config's ``exclude`` leaves them out.  Only virtual environments (any folder holding a
  ``pyvenv.cfg`` or ``conda-meta``) and VCS / tool caches are skipped without being asked;
  ``build/``, ``dist/`` and other dot-folders are searched like any other.
- Non-regular entries met while walking are skipped without opening them (a FIFO would block).
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Callable, Optional

import pathspec

SUFFIXES = (".py", ".ipynb")
#: Folders that hold version-control data or caches of tools, never the user's sources.
SKIP_DIRS = frozenset({
    ".git", ".hg", ".svn", ".jj", ".bzr", "_darcs", "__pycache__", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".hypothesis", ".tox", ".nox", ".ipynb_checkpoints", ".gradguard_cache",
    "node_modules", ".pytype", ".pyre",
})
#: A folder holding one of these is a virtual environment (venv, virtualenv, conda).
ENV_MARKERS = ("pyvenv.cfg", "conda-meta")


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    #: (path, why) for named paths that cannot be analysed
    problems: list[tuple[str, str]] = field(default_factory=list)


class _GitIgnores:
    """The ``.gitignore`` files that apply to a path, from the repository root down."""

    def __init__(self):
        self._specs: dict[str, Optional[pathspec.GitIgnoreSpec]] = {}
        self._roots: dict[str, str] = {}

    def _spec(self, directory: str) -> Optional[pathspec.GitIgnoreSpec]:
        if directory not in self._specs:
            spec = None
            try:
                with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                    spec = pathspec.GitIgnoreSpec.from_lines(fh.read().splitlines())
            except OSError:
                pass
            self._specs[directory] = spec
        return self._specs[directory]

    def root(self, directory: str) -> str:
        """The repository root above ``directory`` (the folder holding ``.git``), else itself."""
        if directory not in self._roots:
            probe = directory
            while not os.path.exists(os.path.join(probe, ".git")):
                parent = os.path.dirname(probe)
                if parent == probe:
                    probe = directory
                    break
                probe = parent
            self._roots[directory] = probe
        return self._roots[directory]

    def ignored(self, path: str, is_dir: bool, top: str) -> bool:
        """Whether git would ignore ``path`` (absolute); ``top`` is where the walk started."""
        root = self.root(top)
        directory = os.path.dirname(path)
        chain = []
        while True:
            chain.append(directory)
            if directory == root or os.path.dirname(directory) == directory:
                break
            directory = os.path.dirname(directory)
        verdict = None
        for directory in reversed(chain):  # deeper .gitignore files override shallower ones
            spec = self._spec(directory)
            if spec is None or self._names_ignored(spec, directory, top):
                continue
            rel = os.path.relpath(path, directory).replace(os.sep, "/") + ("/" if is_dir else "")
            result = spec.check_file(rel)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)

    def _names_ignored(self, spec, directory: str, top: str) -> bool:
        """Whether ``spec`` (of ``directory``, above ``top``) ignores the folder the user named:
        then it says nothing inside it (a named folder is analysed, like a named file)."""
        if top == directory or not top.startswith(directory):
            return False
        return bool(spec.check_file(os.path.relpath(top, directory).replace(os.sep, "/") + "/").include)


def is_environment(directory: str) -> bool:
    return any(os.path.exists(os.path.join(directory, marker)) for marker in ENV_MARKERS)


def regular_file_problem(path: str) -> tuple[Optional[str], Optional[tuple]]:
    """Why ``path`` cannot be read as a source file (None if it can), and which file it is
    (device, inode): ``stat`` only, it is never opened."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such file or directory", None
    except OSError as exc:
        return exc.strerror or str(exc), None
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file", None
    return None, (st.st_dev, st.st_ino)


def discover(paths: list[str], excluded: Callable[[str], bool], respect_gitignore: bool = True) -> Discovery:
    """The files to analyse under ``paths``; ``excluded(path)`` applies the config's ``exclude``."""
    found = Discovery()
    ignores = _GitIgnores()
    seen: set[tuple] = set()

    def add(path: str, key: tuple) -> None:
        # (the same file reached twice, through a symbolic link or named twice, is one file:
        # its inode says so without resolving each path's links)
        if key not in seen:
            seen.add(key)
            found.files.append(path)

    for path in paths:
        if os.path.isdir(path):
            top = os.path.abspath(path)
            for dirpath, dirnames, filenames in os.walk(path):
                here = os.path.abspath(dirpath)
                kept = []
                for name in sorted(dirnames):
                    full = os.path.join(here, name)
                    if name in SKIP_DIRS or is_environment(full) or excluded(full) \
                            or (respect_gitignore and ignores.ignored(full, True, top)):
                        continue
                    kept.append(name)
                dirnames[:] = kept
                for name in sorted(filenames):
                    if not name.endswith(SUFFIXES):
                        continue
                    full = os.path.join(here, name)
                    if excluded(full) or (respect_gitignore and ignores.ignored(full, False, top)):
                        continue
                    problem, key = regular_file_problem(full)
                    if problem is None:  # a FIFO or device is never opened
                        add(os.path.join(dirpath, name), key)
        else:
            problem, key = regular_file_problem(path)
            if problem is None:
                add(path, key)
            else:
                found.problems.append((path, problem))
    return found
