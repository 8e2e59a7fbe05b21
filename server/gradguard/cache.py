"""``.gradguard_cache/``: analysis results keyed by content, like Ruff's cache.

An entry holds one file's raw findings (before ``select``/``ignore``/``severity``, which are
applied afterwards and so need not invalidate it) or its read/parse error.  It is valid while

- the file's bytes hash the same,
- every project module the result depended on (``Analysis.dependencies``) hashes the same,
- GradGuard's version and the analysis settings are the same (they name the cache's folder).

A hit costs reading and hashing; nothing is parsed.  A file is not even read again while its
``stat`` (modification and change times, size, inode) is the one its entry recorded, as git's
index does: a stat is recorded only for a file last modified two seconds or more before it was
hashed, so a change within the clock's tick after the hash cannot hide.  The entries of a project are one JSON file,
read once and written once at the end of a run (merged with what another run wrote meanwhile),
atomically: a crashed or concurrent run leaves whole entries, old or new.  (A file per entry cost
a cold run over the real-code corpus 2-3 CPU-s of system time for its 3,400 small files.)
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Optional

from . import __version__
from .findings import Finding, Fix, Location, Related
from .sources import MAX_BYTES

DIRNAME = ".gradguard_cache"
# A stat is trusted only for a file this much older than the hash of it (see above).
SETTLED_NS = 2_000_000_000


def content_hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def file_hash(path: str, limit: Optional[int] = None) -> Optional[str]:
    """The hash of a file's bytes; None when unreadable or over ``limit`` bytes (never read past it)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read() if limit is None else fh.read(limit + 1)
    except OSError:
        return None
    return None if limit is not None and len(data) > limit else content_hash(data)


# --- findings as JSON ------------------------------------------------------------------------

def _loc(loc: Location) -> list:
    return [loc.path, loc.line, loc.column, loc.end_line, loc.end_column, loc.cell]


def finding_to_data(f: Finding) -> dict:
    return {
        "code": f.code, "severity": f.severity, "message": f.message, "location": _loc(f.location),
        "related": [[_loc(r.location), r.message, r.key, [list(a) for a in r.args]] for r in f.related],
        "fixes": [[x.kind, x.title, [[k, _loc(v)] for k, v in x.targets], x.preferred, [list(t) for t in x.texts]]
                  for x in f.fixes],
        "args": [list(a) for a in f.args],
    }


def finding_from_data(d: dict) -> Finding:
    return Finding(
        d["code"], d["severity"], d["message"], Location(*d["location"]),
        tuple(Related(Location(*loc), message, key, tuple(map(tuple, args)))
              for loc, message, key, args in d["related"]),
        tuple(Fix(kind, title, tuple((k, Location(*v)) for k, v in targets), preferred, tuple(map(tuple, texts)))
              for kind, title, targets, preferred, texts in d["fixes"]),
        tuple(map(tuple, d["args"])),
    )


# --- the cache ---------------------------------------------------------------------------------

_UNSEEN = object()

class Cache:
    """Entries for the files of one project, under ``<top>/<version>-<settings>/``
    (``top`` is usually ``<project root>/.gradguard_cache``)."""

    def __init__(self, top: str, settings: dict):
        fingerprint = content_hash(json.dumps({"settings": settings, "python": sys.version_info[:2]},
                                              sort_keys=True, default=str).encode())[:12]
        self.top = top
        self.directory = os.path.join(self.top, f"{__version__}-{fingerprint}")
        self.file = os.path.join(self.directory, "entries.json")
        self._hashes: dict[str, Optional[str]] = {}
        self._stats: dict[str, tuple] = {}  # absolute path -> (stat, the hash it was read with)
        self._entries: Optional[dict] = None  # absolute path -> entry, as read
        self._new: dict = {}  # the entries this run stored, not yet saved
        self.hits = self.misses = 0

    def hash_of(self, path: str) -> Optional[str]:
        """The content hash of a file (analysed, or a dependency), once per run; None when it is
        unreadable or too large."""
        known = self._hashes.get(path, _UNSEEN)
        if known is _UNSEEN:  # (dependencies are absolute paths: most are asked as they were stored)
            key = os.path.abspath(path)
            known = self._hashes.get(key, _UNSEEN)
            if known is _UNSEEN:
                known = self._hashes[key] = self._hash(key)
            self._hashes[path] = known
        return known

    def _hash(self, path: str) -> Optional[str]:
        try:
            info = os.stat(path)
        except OSError:
            return None
        stat = [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
        if self._entries is None:
            self._entries = self._read()
        entry = self._entries.get(path)
        if type(entry) is dict and entry.get("stat") == stat and type(entry.get("content")) is str:
            self._stats[path] = (stat, entry["content"])  # (kept if its entry is stored anew)
            return entry["content"]
        digest = file_hash(path, MAX_BYTES)  # (a larger file is refused by the analysis)
        if digest is not None and time.time_ns() - info.st_mtime_ns >= SETTLED_NS:
            self._stats[path] = (stat, digest)
        return digest

    def _read(self) -> dict:
        """The saved entries (none if the file is missing or damaged)."""
        try:
            with open(self.file, encoding="utf-8") as fh:
                entries = json.load(fh)
        except (OSError, ValueError):
            return {}
        return entries if type(entries) is dict else {}

    def lookup(self, path: str, digest: str) -> Optional[dict]:
        """The stored result (``{"findings": [...], "dependencies": [...]}`` or ``{"error": msg}``)
        for ``path`` whose bytes hash to ``digest``, if still valid."""
        if self._entries is None:
            self._entries = self._read()
        entry = self._entries.get(os.path.abspath(path))
        deps = entry.get("deps", {}) if type(entry) is dict else None
        if type(deps) is not dict or entry.get("content") != digest \
                or any(self.hash_of(dep) != h for dep, h in deps.items()):
            self.misses += 1
            return None
        self.hits += 1
        return entry

    def store(self, path: str, digest: str, *, findings=None, dependencies=(), error: Optional[str] = None) -> None:
        entry: dict = {"content": digest}
        known = self._stats.get(os.path.abspath(path))
        if known is not None and known[1] == digest:  # (not after ``--fix`` rewrote it)
            entry["stat"] = known[0]
        if error is not None:
            entry["error"] = error
        else:
            deps = {dep: self.hash_of(dep) for dep in dependencies}
            if any(h is None for h in deps.values()):
                return  # a dependency vanished meanwhile: nothing trustworthy to store
            entry["deps"] = deps
            entry["findings"] = [finding_to_data(f) for f in findings]
        self._new[os.path.abspath(path)] = entry

    def save(self) -> None:
        """Write what this run stored, over the entries saved now (another run's included)."""
        if not self._new:
            return
        entries = self._read()
        entries.update(self._new)
        try:
            os.makedirs(self.directory, exist_ok=True)
            self._mark_ignored()
            # written whole, then renamed into place: a reader never sees half a file (the
            # temporary name is this process's own)
            tmp = f"{self.file}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(entries, fh, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, self.file)
        except OSError:
            return  # a read-only checkout still gets its results, just not cached
        self._new = {}

    def _mark_ignored(self) -> None:
        """A ``.gitignore`` of ``*`` inside the cache, as Ruff does, so it is never committed."""
        marker = os.path.join(self.top, ".gitignore")
        if not os.path.exists(marker):
            with open(marker, "w", encoding="utf-8") as fh:
                fh.write("# Automatically created by gradguard.\n*\n")
