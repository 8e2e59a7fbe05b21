"""``gradguard.diagnosticScope: "workspace"``: every Python file and notebook of the workspace
folders analysed in the background, their findings in the editor's Problems panel.

The server does not analyse them itself. A scan process (``python -m gradguard.lsp.workspace``)
does what ``gradguard check`` does, on CPU time nothing else wants (Linux's ``SCHED_IDLE``;
elsewhere the lowest ``nice``): the same discovery (``.gitignore``, ``exclude``, virtual
environments), the same ``.gradguard_cache`` and the same isolated worker processes. It writes a JSON line for each file with findings (or whose diagnostics the server
must take back) as soon as that file is known, cached or analysed; a clean file costs the
server nothing. The event loop publishes each line's diagnostics and keeps only the URIs it has
published to. A changed file is analysed again with the files that read it, and nothing else:
the cache's entries name the project modules each analysis read (``Analysis.dependencies``).

Open documents are the editor's business (server.py): their own analysis runs in the
analysis process at normal priority, is never queued behind the scan, and their diagnostics
are never overwritten by the scan's. While it runs, the scan and its workers are stopped
(:meth:`WorkspaceScope.hold`).
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
import time
from typing import IO, Optional

if __name__ == "__main__":  # the scan process, first of all: it ends with the server (argv[1])
    from gradguard.workers import die_with_parent
    die_with_parent(int(sys.argv[1]))

from lsprotocol import types as lsp
from pygls import uris

from ..cache import finding_from_data
from ..config import load_project_config
from ..notebook_lines import NotebookText
from ..sources import SourceError, read_python
from .convert import Positions, diagnostic
from .documents import Snapshot

NICENESS = 19  # without SCHED_IDLE: the scan and its workers yield the CPU all they can
SAVE_EVERY_SECONDS = 10.0  # the scan's cache is written this often, so a stopped scan keeps its work
REPORT_EVERY_SECONDS = 0.5  # $/progress reports at most this often
LINE_LIMIT = 64 * 2**20  # one file's findings on one line
WATCHERS = ("**/*.py", "**/*.ipynb")
# The scan and its workers in a process group of their own, to be paused and resumed together.
# Should the server die while they are paused: on Linux the kernel kills each with its parent
# (workers.die_with_parent); elsewhere, in the server's session (3.11+), their group is orphaned
# and gets SIGHUP then SIGCONT, which ends them (unless a subreaper of the session adopts them).
_OWN_GROUP = ({} if os.name == "nt" else {"process_group": 0} if sys.version_info >= (3, 11)
              else {"start_new_session": True})
_PAUSE = getattr(signal, "SIGSTOP", None)  # (none on Windows: the scan is never paused there)
_RESUME = getattr(signal, "SIGCONT", None)
_PACKAGE_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- the scan process ------------------------------------------------------------------------------

def _readers(cache, files: list[str], changed: list[str]) -> list[str]:
    """Of ``files``, those changed and those whose cached analysis read a changed file (or a
    file under a changed folder): the project modules an analysis read are its entry's
    ``deps`` (``Analysis.dependencies``, what the import reach followed)."""
    try:
        with open(cache.file, encoding="utf-8") as fh:
            entries = json.load(fh)
    except (OSError, ValueError):
        entries = {}
    gone = set(changed)
    under = tuple(path + os.sep for path in changed)

    def touched(path: str) -> bool:
        return path in gone or path.startswith(under)
    out = []
    for path in files:
        entry = entries.get(path) if type(entries) is dict else None
        deps = entry.get("deps") if type(entry) is dict else None
        if touched(path) or (type(deps) is dict and any(map(touched, deps))):
            out.append(path)
    return out


def scan(request: dict, out: IO[str]) -> None:
    """Analyse the files of ``request["folders"]`` as ``gradguard check`` would (with
    ``request["changed"]``, a list of paths: only those and the files that read them), writing
    one line per file that has findings or is in ``request["shown"]``: ``{"path", "findings"}``
    (raw, as the cache keeps them) or ``{"path", "error"}``, ``{"path", "internal"}`` (each
    with ``done``, the files done so far);
    ``{"total": n}`` first, ``{"done": n}`` now and then, ``{"end": n, "paths": [...]}`` last
    (the paths analysed, after a change only)."""
    from ..cache import DIRNAME, Cache, finding_to_data
    from ..cli import _died, analyse_file, batches
    from ..discovery import discover
    from ..resolve import hold_stamps
    from ..workers import run_isolated

    _yield_cpu()  # inherited by the workers it forks
    # stopped by the server: leave through run_isolated's ``finally``, which ends the workers
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    changed = request.get("changed")
    shown = set(request.get("shown", ()))
    groups, seen = [], set()
    for folder in request["folders"]:
        config = load_project_config(folder)
        files = [f for f in map(os.path.abspath, discover([folder], config.excludes).files) if f not in seen]
        seen.update(files)
        home = config.root if config.source else folder  # as the CLI run from the folder
        cache = Cache(os.path.join(home, DIRNAME), {"analysis": 1})
        groups.append((files if changed is None else _readers(cache, files, changed), cache))

    def write(line: dict) -> None:
        out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        out.flush()

    done, told = [0], [time.monotonic()]

    def emit(path: str, result: tuple) -> None:
        done[0] += 1
        if result[0] == "ok" and (result[1] or path in shown):
            write({"path": path, "findings": [finding_to_data(f) for f in result[1]], "done": done[0]})
        elif result[0] != "ok":
            write({"path": path, result[0]: result[1], "done": done[0]})
        elif time.monotonic() - told[0] > REPORT_EVERY_SECONDS:
            write({"done": done[0]})
            told[0] = time.monotonic()

    write({"total": sum(len(files) for files, _ in groups)})
    jobs = os.cpu_count() or 1  # as gradguard check
    for files, cache in groups:
        todo = []
        for path in files:  # cache hits first, as analyse_all finds them
            digest = cache.hash_of(path)
            entry = cache.lookup(path, digest) if digest is not None else None
            try:
                if entry is not None and "error" in entry:
                    emit(path, ("error", str(entry["error"])))
                elif entry is not None:
                    emit(path, ("ok", [finding_from_data(d) for d in entry["findings"]]))
            except (KeyError, TypeError, ValueError):  # damaged by hand: analysed again
                entry = None
            if entry is None:
                todo.append((path, digest))
        saved = [time.monotonic()]

        def record(path: str, digest: Optional[str], result: tuple, cache=cache, saved=saved) -> None:
            emit(path, result)
            if digest is not None and result[0] != "internal":
                if result[0] == "error":
                    cache.store(path, digest, error=result[1])
                else:
                    cache.store(path, digest, findings=result[1], dependencies=result[2])
            if time.monotonic() - saved[0] > SAVE_EVERY_SECONDS:
                cache.save()
                saved[0] = time.monotonic()

        run_isolated(batches(todo, jobs), jobs, analyse_file, record, _died)
        hold_stamps(False)
        cache.save()
    write({"end": done[0], "paths": None if changed is None else sorted(f for files, _ in groups for f in files)})


# --- the server's side -----------------------------------------------------------------------------

def _yield_cpu(pid: int = 0) -> None:
    """Run process ``pid`` (0: this one) on CPU time nothing else wants (Linux's SCHED_IDLE);
    elsewhere this process at the lowest priority."""
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        if not pid and hasattr(os, "nice"):
            os.nice(NICENESS)


def _scope_key(editor) -> tuple:
    """What the published diagnostics depend on among the editor settings."""
    return (editor.diagnostic_scope, editor.enable, editor.select, editor.ignore,
            tuple(sorted(editor.severity.items())))


class WorkspaceScope:
    """Runs scans for a :class:`server.GradGuardServer` and publishes what they find."""

    def __init__(self, server) -> None:
        self.server = server
        self.shown: dict[str, str] = {}  # URI -> path of the files holding diagnostics from a scan
        self._key: Optional[tuple] = None
        self._pending: Optional[set] | bool = None  # True: every file; a set: these changed paths
        self._task: Optional[asyncio.Task] = None
        self._proc: Optional[asyncio.subprocess.Process] = None
        self._watching = False
        self._tokens = 0
        self._holds = 0  # open documents' diagnostics analyses running: the scan waits meanwhile

    @property
    def on(self) -> bool:
        editor = self.server.editor
        return editor.enable and editor.diagnostic_scope == "workspace"

    # --- what starts and stops scans ---------------------------------------------------------
    def sync(self, force: bool = False) -> None:
        """The settings (or the project's config, ``force``) may have changed: scan everything
        again, or stop and clear."""
        key = _scope_key(self.server.editor)
        if key == self._key and not force:
            return
        self._key = key
        if not self.on:
            self.stop()
            return
        self._watch()
        self._want(True, restart=True)

    def changed(self, changes: list[lsp.FileEvent]) -> None:
        """``workspace/didChangeWatchedFiles``: the changed files and the files that read them
        are analysed again; a deleted file's (or folder's) diagnostics go at once."""
        if not self.on:
            return
        paths = set()
        for change in changes:
            path = uris.to_fs_path(change.uri)
            if not path:
                continue
            path = os.path.abspath(path)
            paths.add(path)
            if change.type == lsp.FileChangeType.Deleted:
                for uri, old in list(self.shown.items()):
                    if old == path or old.startswith(path + os.sep):
                        self._publish(uri, old, [])
        if paths:
            self._want(paths)

    def opened(self, key: str) -> None:
        """A document opened: its own analysis speaks for it from now on."""
        if key in self.shown:
            self._publish(key, self.shown[key], [])

    def closed(self, key: str) -> None:
        """A document closed: back to what is on disk."""
        path = uris.to_fs_path(key)
        if self.on and path and path.endswith((".py", ".ipynb")):
            self._want({os.path.abspath(path)})

    def stop(self) -> None:
        """Stop scanning and take back every diagnostic a scan published."""
        self._pending = None
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._kill()
        for uri, path in list(self.shown.items()):
            self._publish(uri, path, [])

    def hold(self) -> None:
        """An open document's diagnostics are being analysed: the scan and its workers stop
        (SIGSTOP) until they are done. Even at the lowest priority, analyses running on the
        other cores slowed the open file's by a third (p95 twice): they share caches and memory."""
        self._holds += 1
        if self._holds == 1:
            self._signal(_PAUSE)

    def release(self) -> None:
        self._holds -= 1
        if self._holds == 0:
            self._signal(_RESUME)

    def _signal(self, sig: Optional[int]) -> None:
        if sig is not None and self._proc is not None and self._proc.returncode is None:
            try:
                os.killpg(self._proc.pid, sig)  # the scan and its workers: a process group
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        """The server is shutting down: the scan ends with it."""
        self._pending = None
        self._kill()

    def _kill(self) -> None:
        if self._proc is not None:
            _end(self._proc)
        self._proc = None

    def _watch(self) -> None:
        """Ask the client for file events (the client watches; LSP's dynamic registration)."""
        if self._watching or not self.server.supports("workspace.did_change_watched_files.dynamic_registration"):
            return
        self._watching = True
        options = lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern=glob) for glob in WATCHERS])
        self.server.client_register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
            id="gradguard-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=options)]))

    def _want(self, paths: set | bool, restart: bool = False) -> None:
        """Scan ``paths`` (True: everything) after the scan running now, or instead of it."""
        if restart or paths is True or self._pending is True:
            self._pending = True
        else:
            self._pending = (self._pending or set()) | paths
        if restart and self._task is not None:
            self._task.cancel()
            self._task = None
            self._kill()
        if self._task is None:
            self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        try:
            while self._pending:
                wanted, self._pending = self._pending, None
                await self._scan(None if wanted is True else sorted(wanted))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a background task has nobody to report to but the log
            self.server.log(f"GradGuard workspace scan failed: {exc!r}", lsp.MessageType.Error)
        finally:
            if self._task is asyncio.current_task():
                self._task = None

    # --- one scan ----------------------------------------------------------------------------
    def _folders(self) -> list[str]:
        ws = self.server.workspace
        folders = [uris.to_fs_path(f.uri) for f in ws.folders.values()] or [ws.root_path]
        return [os.path.abspath(f) for f in folders if f and os.path.isdir(f)]

    async def _scan(self, changed: Optional[list[str]]) -> None:
        """One scan: of everything (``changed`` None), or of the changed paths and their readers."""
        folders = self._folders()
        if not folders:
            return
        here = os.getcwd()  # as the analysis process: never imported from the user's project
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p and p != here))
        self._proc = proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gradguard.lsp.workspace", str(os.getpid()), cwd=_PACKAGE_HOME, env=env, limit=LINE_LIMIT,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, **_OWN_GROUP)
        if self._holds:
            self._signal(_PAUSE)
        _yield_cpu(proc.pid)  # before its imports, which take a CPU-second (it does so itself elsewhere)
        request = {"folders": folders, "changed": changed, "shown": sorted(self.shown.values())}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.close()
        self._tokens += 1
        progress = _Progress(self.server, f"gradguard-workspace-{self._tokens}",
                             "GradGuard: analysing the workspace" if changed is None
                             else "GradGuard: analysing what changed")
        told, end = set(), None
        try:
            header = json.loads(await proc.stdout.readline() or b"{}")
            total = int(header.get("total", 0))
            await progress.begin(total)
            while line := await proc.stdout.readline():
                item = json.loads(line)
                if "path" in item:
                    told.add(item["path"])
                    self._take(item["path"], item)
                elif "end" in item:
                    end = item
                if "done" in item:
                    progress.report(item["done"], total)
                await asyncio.sleep(0)  # one file at a time: requests and edits get their turn
            status = await proc.wait()
            if status != 0 or end is None:
                self.server.log(f"GradGuard workspace scan ended with status {status}", lsp.MessageType.Error)
                return
            # what showed diagnostics and was analysed clean was told; what was not analysed at
            # all is gone (deleted, excluded, ignored since)
            gone = set(self.shown.values()) if changed is None else set(changed)
            for uri, path in list(self.shown.items()):
                if path in gone and path not in told and not self._is_open(uri):
                    self._publish(uri, path, [])
            named = f": {', '.join(end['paths'])}" if end["paths"] else ""  # what a change reached
            progress.end(end["end"])  # (before the log: a client that reads it sees the scan ended)
            self.server.log(f"GradGuard workspace scan: {end['end']} file{'s' * (end['end'] != 1)}{named}")
        finally:
            progress.end(end["end"] if end else len(told))
            _end(proc)

    def _take(self, path: str, item: dict) -> None:
        """One file's line: its diagnostics published, unless it is open."""
        uri = uris.from_fs_path(path)
        if "internal" in item:
            self.server.log(item["internal"], lsp.MessageType.Error)
        raw = item.get("findings")  # (none: the file cannot be read or parsed)
        if raw is None or self._is_open(uri):
            return
        config = load_project_config(os.path.dirname(path)).with_editor(self.server.editor)
        own = os.path.normcase(path)
        findings = [f for f in config.apply(map(finding_from_data, raw))
                    if os.path.normcase(os.path.abspath(f.location.path)) == own]
        if findings or uri in self.shown:
            self._publish(uri, path, _diagnostics(self.server, path, uri, findings))

    def _is_open(self, uri: str) -> bool:
        ws = self.server.workspace
        return uri in ws.text_documents or ws.get_notebook_document(notebook_uri=uri) is not None

    def _publish(self, uri: str, path: str, items: list[lsp.Diagnostic]) -> None:
        if items:
            self.shown[uri] = path
        else:
            self.shown.pop(uri, None)
        self.server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items))


def _diagnostics(server, path: str, uri: str, findings: list) -> list[lsp.Diagnostic]:
    """Diagnostics of a file as it is on disk; a notebook's at the lines of its ``.ipynb`` file
    (where its cell text sits), each message saying which cell and line it means."""
    if not findings:
        return []
    try:
        if path.endswith(".ipynb"):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        else:
            text = read_python(path)
    except (OSError, UnicodeDecodeError, SourceError):
        return []
    pos = Positions(Snapshot(key=uri, version=None, path=path, texts=(text,), uris=(uri,), notebook=False),
                    server.workspace.position_codec)
    related = server.supports("text_document.publish_diagnostics.related_information")
    if not path.endswith(".ipynb"):
        return [diagnostic(f, pos, server.locale, related) for f in findings]
    try:
        mapping = NotebookText(text)
    except (ValueError, IndexError):
        return []
    out = []
    for f in findings:
        loc = f.location
        start = mapping.position(loc.cell, loc.line, loc.column) if loc.cell else None
        end = mapping.position(loc.cell, loc.end_line, loc.end_column) if loc.cell else None
        if start is None or end is None:
            continue
        moved = dataclasses.replace(f, location=dataclasses.replace(
            loc, line=start[0], column=start[1], end_line=end[0], end_column=end[1], cell=None), related=())
        diag = diagnostic(moved, pos, server.locale, False)
        diag.message = f"cell {loc.cell}, line {loc.line}: {diag.message}"
        out.append(diag)
    return out


def _end(proc: asyncio.subprocess.Process) -> None:
    """Stop a scan: SIGTERM, on which it ends its workers too (``scan``); a paused one is
    resumed to receive it."""
    if proc.returncode is None:
        try:
            proc.terminate()
            if _RESUME is not None:
                os.killpg(proc.pid, _RESUME)
        except (ProcessLookupError, PermissionError):
            pass


class _Progress:
    """LSP work-done progress for one scan (nothing when the client does not show any)."""

    def __init__(self, server, token: str, title: str):
        self.server, self.title, self.wanted = server, title, token
        self.token: Optional[str] = None  # once the client has accepted it
        self.last = 0.0

    async def begin(self, total: int) -> None:
        if not self.server.supports("window.work_done_progress"):
            return
        token = self.wanted
        try:
            await self.server.work_done_progress.create_async(token)
        except Exception as exc:  # a client that refuses gets no progress, the scan goes on
            self.server.log(f"window/workDoneProgress/create failed: {exc}", lsp.MessageType.Warning)
            return
        self.token = token
        self.server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(
            title=self.title, message=f"0/{total} files", percentage=0, cancellable=False))
        self.last = time.monotonic()

    def report(self, done: int, total: int) -> None:
        if self.token is None or time.monotonic() - self.last < REPORT_EVERY_SECONDS:
            return
        self.last = time.monotonic()
        self.server.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(
            message=f"{done}/{total} files", percentage=int(100 * done / max(total, 1))))

    def end(self, done: int) -> None:
        if self.token is not None:
            self.server.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(
                message=f"{done} file{'s' * (done != 1)} analysed"))
            self.token = None


if __name__ == "__main__":
    # through the package, so that pickled results between workers are gradguard's own classes
    from gradguard.lsp.workspace import scan as _scan
    _scan(json.loads(sys.stdin.readline()), sys.stdout)
