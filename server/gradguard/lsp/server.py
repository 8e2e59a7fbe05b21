"""The GradGuard language server: pygls glue around the engine and the fixes/hover/config modules.

Analyses run in a child process (analyser.py), fed by one worker thread (worker.py) with frozen
snapshots (documents.py), the most recently edited document first. A newer version of a
document stops the analysis of the older one mid-run (the engine's ``cancel`` hook) and drops
it if it has not started, so stale results are never computed to the end, let alone published.
Each version is analysed twice: first for its diagnostics alone, then, once the typing has
paused, for the hover index (recording a fact at every tensor name costs a fifth more, and
diagnostics must not wait for it). Hovers and quick-fix lists answer from the last finished result (hovers through the lines
an edit left unchanged) and never wait for a running analysis.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import json
import os
import sys
import threading
import traceback
import urllib.parse
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Optional

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from .. import __version__, rules
from ..facts import Facts
from ..config import Config, EditorSettings, load_project_config, parse_editor_settings
from ..findings import Finding, Location
from ..fixes import FixError, fix_all_edits, fix_edits, fix_from_data, fix_to_data, suppression_edit
from ..graph_picture import build as build_picture, finding_at
from ..graph_render import html as picture_html, svg as picture_svg, text as picture_text
from ..hover import fact_hover, rule_hover, suppressed_code_at
from . import documents
from .analyser import Analyser, Job
from .convert import (Positions, action_data, diagnostic, diagnostics, finding_data, finding_from_data,
                      workspace_edit)
from .documents import Snapshot
from .lenses import backward_lenses, inlay_hints
from .linemap import LineMap
from .protocol import Protocol, StdinReader, read_messages
from .worker import Worker
from .workspace import WorkspaceScope

DEBOUNCE_SECONDS = 0.15
INDEX_DELAY_SECONDS = 0.25  # after the diagnostics of a version, the pause before its hover index
HOVER_WAIT_SECONDS = 1.0  # a hover on a document with no analysis at all waits this long for one
GRAPH_WAIT_SECONDS = 10.0  # a graph picture waits this long for the facts of the current version
GRAPH_REQUEST = "gradguard/graph"
SHOW_GRAPH_COMMAND = "gradguard.showGraph"
SHOW_GRAPH_TITLE = {"en": "Show the graph of this finding", "zh-cn": "显示此问题的计算图"}
FIX_ALL_KIND = "source.fixAll.gradguard"
FACTS_JOB = "#hover-index"  # the worker's key for a document's hover-index analysis
SUPPRESS_TITLE = {"en": "Suppress {code} on this line", "zh-cn": "在此行忽略 {code}"}
FIX_ALL_TITLE = {"en": "GradGuard: fix all", "zh-cn": "GradGuard：全部修复"}

_PYTHON_CELLS = [lsp.NotebookCellLanguage(language="python")]
# ...WithNotebook, not ...WithCells: the latter breaks cattrs >= 25.1 clients (pygls2-notes.md).
NOTEBOOK_SYNC = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[
        lsp.NotebookDocumentFilterWithNotebook(notebook="jupyter-notebook", cells=_PYTHON_CELLS),
        lsp.NotebookDocumentFilterWithNotebook(notebook="interactive", cells=_PYTHON_CELLS),
    ],
    save=True,
)
_CLOSED = object()  # the version of a document that is not open


@dataclass
class Result:
    """One analysis of one snapshot, already converted to diagnostics per URI."""

    snap: Snapshot
    gen: int  # settings generation it was computed under
    facts: Optional[Facts]  # the hover index (None: not asked for, or no analysis ran)
    findings: list[Finding]
    diagnostics: dict[str, list[lsp.Diagnostic]]
    error: Optional[str] = None
    keep_previous: bool = False  # e.g. a syntax error mid-edit: the last good diagnostics stay
    warnings: tuple[str, ...] = field(default=())
    crashed: Optional[str] = None  # the analysis died or failed (an engine bug): why


class GradGuardServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gradguard", __version__, notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=Protocol)
        self.locale = "en"
        self.editor = EditorSettings()
        self.gen = 0
        self.pull = False
        self.results: dict[str, Result] = {}  # last good result per snapshot key
        self.hovers: dict[str, Result] = {}  # last result with hover facts per snapshot key
        self._latest: dict[str, Any] = {}  # newest version per open key (read by the worker)
        self._tasks: dict[str, asyncio.Task] = {}  # lints waiting for their debounce
        self._index_tasks: dict[str, asyncio.Task] = {}  # hover indexes waiting for a pause
        self._running: dict[tuple[str, bool], tuple[tuple, asyncio.Future]] = {}
        self._worker = Worker("gradguard-analysis")
        self.analyser = Analyser()  # the child process, driven from the worker thread only
        self._shown: set[str] = set()
        self.drawn: set[str] = set()  # "lens", "hint": what the client has asked for
        self._crashed: set[str] = set()  # documents already told of a crashed analysis
        self.workspace_scope = WorkspaceScope(self)  # gradguard.diagnosticScope "workspace"

    # --- client capabilities -----------------------------------------------------------------
    def supports(self, path: str) -> bool:
        return bool(get_capability(self.client_capabilities, path, None))

    @property
    def markdown(self) -> bool:
        formats = get_capability(self.client_capabilities, "text_document.hover.content_format", None)
        return bool(formats) and lsp.MarkupKind.Markdown in formats

    @property
    def shows_graphs(self) -> bool:
        """The client runs ``gradguard.showGraph`` (``capabilities.experimental.gradguard.showGraph``)."""
        experimental = get_capability(self.client_capabilities, "experimental", None)
        own = experimental.get("gradguard") if isinstance(experimental, dict) else None
        return isinstance(own, dict) and own.get("showGraph") is True

    @property
    def lazy_edits(self) -> bool:
        props = get_capability(self.client_capabilities,
                               "text_document.code_action.resolve_support.properties", None) or ()
        return "edit" in props

    # --- messages ----------------------------------------------------------------------------
    def log(self, message: str, level: lsp.MessageType = lsp.MessageType.Log) -> None:
        self.window_log_message(lsp.LogMessageParams(type=level, message=message))

    def warn_once(self, warnings: tuple[str, ...] | list[str]) -> None:
        """One showMessage per distinct set of setting problems (not one per analysis)."""
        if not warnings:
            return
        text = "GradGuard: using defaults for bad settings: " + "; ".join(warnings)
        if text not in self._shown:
            self._shown.add(text)
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=text))

    def crashed(self, snap: Snapshot, why: str) -> None:
        """An analysis crashed: one log line, and once per document a notice (no diagnostic:
        nothing is known about the code), with what a bug report needs."""
        from .. import __version__
        from ..cli import _engine_build

        last = why.strip().splitlines()[-1] if why.strip() else why
        line = (f"GradGuard {__version__} ({_engine_build()}) could not analyse {snap.path or snap.key}: "
                f"internal error: {last}")
        self.log(line, lsp.MessageType.Error)
        if snap.key not in self._crashed:
            self._crashed.add(snap.key)
            self.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Warning,
                message=f"GradGuard could not analyse {os.path.basename(snap.path or snap.key)} (an internal "
                        f"error; other files are still analysed). The GradGuard output log has the details."))

    # --- analysis ----------------------------------------------------------------------------
    def _config_for(self, snap: Snapshot) -> Config:
        start = snap.directory or self.workspace.root_path
        project = load_project_config(start) if start else Config()
        return project.with_editor(self.editor)

    def _stale(self, snap: Snapshot, gen: int) -> bool:
        """Whether ``snap`` is no longer the document's newest version (read by the worker)."""
        return self._latest.get(snap.key, _CLOSED) != snap.version or self.gen != gen

    def _index_stale(self, snap: Snapshot, gen: int, latest) -> bool:
        """Whether the hover index of ``snap`` is no longer wanted: the document was edited
        since the job was asked for (``latest``: its version then), or a newer version was
        analysed. (The newest version may not parse: the last good one is indexed instead.)"""
        good = self.results.get(snap.key)
        return (self._latest.get(snap.key, _CLOSED) != latest or self.gen != gen
                or (good is not None and good.snap.version != snap.version))

    def _compute(self, snap: Snapshot, gen: int, editor: EditorSettings, locale: str,
                 facts: bool, stale) -> Optional[Result]:
        """Worker thread: analyse ``snap`` and build its diagnostics, or its hover index
        (``facts``). None: superseded (``stale()``)."""
        if stale():
            return None
        config = self._config_for(snap)
        empty = {uri: [] for uri in snap.uris}
        if not editor.enable or config.excludes(snap.path):
            return Result(snap, gen, None, [], empty, warnings=config.warnings)
        root = config.root or self.workspace.root_path
        job = Job(snap.texts, snap.path, root, snap.notebook, facts)
        outcome = self.analyser.run(job, cancel=stale)
        if outcome.cancelled:
            return None
        if outcome.crashed:  # the file is left without diagnostics; the next analysis starts afresh
            return Result(snap, gen, None, [], empty, crashed=outcome.crashed, warnings=config.warnings)
        if outcome.error:
            where = f" (line {outcome.error_line})" if outcome.error_line else ""
            return Result(snap, gen, None, [], empty, error=f"{outcome.error}{where}",
                          keep_previous=outcome.error_line is not None, warnings=config.warnings)
        findings = [f for f in config.apply(outcome.findings) if snap.is_own_path(f.location.path)]
        pos = Positions(snap, self.workspace.position_codec)
        related = self.supports("text_document.publish_diagnostics.related_information") or self.pull
        return Result(snap, gen, outcome.facts, findings, diagnostics(pos, findings, locale, related),
                      warnings=config.warnings)

    async def _run(self, snap: Snapshot, facts: bool) -> Optional[Result]:
        stale = (partial(self._index_stale, snap, self.gen, self._latest.get(snap.key, _CLOSED)) if facts
                 else partial(self._stale, snap, self.gen))
        job = partial(self._compute, snap, self.gen, self.editor, self.locale, facts, stale)
        if not facts:
            self.workspace_scope.hold()  # the background scan waits for an open file's diagnostics
        try:
            result = await self._worker.submit(snap.key + FACTS_JOB if facts else snap.key, job)
        except Exception:  # an engine bug must not take the server down
            self.log(f"GradGuard failed on {snap.key}:\n{traceback.format_exc()}", lsp.MessageType.Error)
            return None
        finally:
            if not facts:
                self.workspace_scope.release()
        if result is None:
            return None
        self.warn_once(result.warnings)
        if result.error:
            self.log(f"{snap.key}: {result.error}")
        if result.crashed:
            self.crashed(snap, result.crashed)
        if not result.keep_previous and snap.key in self._latest:
            if facts:
                self.hovers[snap.key] = result
                self.refresh_views()
            else:
                self.results[snap.key] = result
        if not facts and (good := self.results.get(snap.key)) is not None and not good.crashed:
            indexed = self.hovers.get(snap.key)
            if indexed is None or indexed.snap != good.snap or indexed.gen != good.gen:
                self.index_later(good.snap)
        return result

    async def analyse(self, snap: Snapshot, facts: bool = False) -> Optional[Result]:
        """The result for ``snap`` (with the hover index: ``facts``), sharing an analysis
        already running for the same version."""
        return await asyncio.shield(self._start(snap, facts))

    def _start(self, snap: Snapshot, facts: bool) -> asyncio.Future:
        """The analysis of ``snap`` running (or waiting) now, started if there is none."""
        ident = (snap.version, self.gen, snap.texts)
        running = self._running.get((snap.key, facts))
        if running is None or running[0] != ident:
            self._latest.setdefault(snap.key, snap.version)
            running = (ident, asyncio.ensure_future(self._run(snap, facts)))
            self._running[(snap.key, facts)] = running
        return running[1]

    def refresh_views(self) -> None:
        """New hover facts or settings: lenses and hints (drawn from them) are asked for again,
        by a client that has asked for them (even while they were off)."""
        if "lens" in self.drawn and self.supports("workspace.code_lens.refresh_support"):
            self.workspace_code_lens_refresh(None)
        if "hint" in self.drawn and self.supports("workspace.inlay_hint.refresh_support"):
            self.workspace_inlay_hint_refresh(None)

    def index_later(self, snap: Snapshot) -> None:
        """The hover index of ``snap`` after a pause, unless the document moves on meanwhile
        (while typing goes on, hovers answer from an older index)."""
        if (task := self._index_tasks.pop(snap.key, None)) is not None:
            task.cancel()

        latest = self._latest.get(snap.key, _CLOSED)

        async def index() -> None:
            await asyncio.sleep(INDEX_DELAY_SECONDS)
            if self._index_tasks.get(snap.key) is asyncio.current_task():
                del self._index_tasks[snap.key]
            if self._latest.get(snap.key, _CLOSED) == latest:
                self._start(snap, facts=True)

        self._index_tasks[snap.key] = asyncio.ensure_future(index())

    def finished(self, key: str, snap: Snapshot) -> Optional[Result]:
        """The last finished result if it is of exactly ``snap`` (never waits)."""
        cached = self.results.get(key)
        if cached is not None and cached.snap == snap and cached.gen == self.gen:
            return cached
        return None

    async def current(self, uri: str) -> tuple[Optional[Snapshot], Optional[Result]]:
        """The open document (or notebook) holding ``uri`` and its up-to-date result, waiting
        for the analysis of this version if needed. Only for what must see this very version:
        pulled diagnostics, fix-all, resolving a fix."""
        key = documents.key_of(self.workspace, uri)
        snap = documents.take(self.workspace, key)
        if snap is None:
            return None, None
        cached = self.finished(key, snap)
        if cached is not None:
            return snap, cached
        return snap, await self.analyse(snap)

    async def hover_result(self, key: str, snap: Snapshot) -> Optional[Result]:
        """The last finished result with hover facts, whatever version it is of; when there is
        none, the analysis of ``snap`` if it ends soon."""
        cached = self.hovers.get(key)
        if cached is not None and cached.gen == self.gen and cached.facts is not None:
            return cached
        good = self.results.get(key)  # the last version that parsed, if the newest may not
        try:
            return await asyncio.wait_for(self.analyse(good.snap if good is not None and good.gen == self.gen
                                                       else snap, facts=True), HOVER_WAIT_SECONDS)
        except asyncio.TimeoutError:
            return None

    # --- push diagnostics --------------------------------------------------------------------
    def touch(self, uri: str) -> str:
        """Record the newest version of the document holding ``uri``; returns its key."""
        key = documents.key_of(self.workspace, uri)
        snap = documents.take(self.workspace, key)
        self._latest[key] = snap.version if snap else _CLOSED
        return key

    def schedule(self, key: str, delay: float) -> None:
        if (task := self._tasks.pop(key, None)) is not None:
            task.cancel()
        self._tasks[key] = asyncio.ensure_future(self._lint(key, delay))

    async def _lint(self, key: str, delay: float) -> None:
        try:
            await self._lint_now(key, delay)
        except asyncio.CancelledError:
            raise
        except Exception:  # a background task has nobody to report to but the log
            self.log(f"GradGuard failed on {key}:\n{traceback.format_exc()}", lsp.MessageType.Error)
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]

    async def _lint_now(self, key: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        snap = documents.take(self.workspace, key)
        if snap is None:
            return
        result = await self.analyse(snap)
        if result is None or result.keep_previous or result.gen != self.gen:
            return
        if documents.take(self.workspace, key) != snap:
            return  # the document moved on; its own lint will publish
        if self.pull:
            if self.supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)
        else:
            self.publish(result)

    def publish(self, result: Result) -> None:
        version = (result.snap.version if not result.snap.notebook
                   and self.supports("text_document.publish_diagnostics.version_support") else None)
        for uri, items in result.diagnostics.items():
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def clear(self, key: str, uris: list[str]) -> None:
        for tasks in (self._tasks, self._index_tasks):
            if (task := tasks.pop(key, None)) is not None:
                task.cancel()
        self._worker.drop(key)
        self._worker.drop(key + FACTS_JOB)
        self.results.pop(key, None)
        self.hovers.pop(key, None)
        self._running.pop((key, False), None)
        self._running.pop((key, True), None)
        self._latest.pop(key, None)  # a running analysis of it sees this and stops
        if not self.pull:
            for uri in uris:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        self.workspace_scope.closed(key)

    def on_event(self, uri: str, trigger: str) -> None:
        """open / change / save of a document or notebook: lint as the settings say."""
        key = self.touch(uri)
        if trigger == "change":
            if self.editor.run == "onType" and not self.pull:
                self.schedule(key, DEBOUNCE_SECONDS)
        elif trigger == "save":
            if self.editor.run == "onSave" or not self.pull:
                self.schedule(key, 0)
        else:  # open
            self.workspace_scope.opened(key)
            if not self.pull:  # pull clients ask for themselves
                self.schedule(key, 0)

    def relint_all(self) -> None:
        """Settings changed: every open document again."""
        self.gen += 1
        keys = {documents.key_of(self.workspace, uri) for uri in self.workspace.text_documents}
        if self.pull:
            if self.supports("workspace.diagnostics.refresh_support"):
                self.workspace_diagnostic_refresh(None)
            return
        for key in keys:
            self.schedule(key, 0)

    # --- settings ----------------------------------------------------------------------------
    def apply_settings(self, raw: Any) -> None:
        settings, warnings = parse_editor_settings(raw)
        self.warn_once(warnings)
        if settings != self.editor:
            self.editor = settings
            self.relint_all()
            self.refresh_views()
            self.workspace_scope.sync()

    async def pull_settings(self) -> bool:
        """Ask the client for the ``gradguard`` section; False when it cannot say."""
        if not self.supports("workspace.configuration"):
            return False
        try:
            (section,) = await self.workspace_configuration_async(
                lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section="gradguard")]))
        except Exception as exc:  # a client that fails the request keeps the current settings
            self.log(f"workspace/configuration failed: {exc}", lsp.MessageType.Warning)
            return False
        if section is None:
            return False
        self.apply_settings({"gradguard": section})
        return True

    def shutdown_work(self) -> None:
        for task in [*self._tasks.values(), *self._index_tasks.values()]:
            task.cancel()
        self._latest.clear()
        self.workspace_scope.close()
        self.analyser.cancel()
        self._worker.close()

    # --- transport ---------------------------------------------------------------------------
    def _start_io_async(self, stdin=None, stdout=None) -> None:
        """pygls's stdio loop, with :func:`protocol.read_messages` reading the stream."""
        self._stop_event = threading.Event()
        reader = StdinReader(stdin or sys.stdin.buffer, self.thread_pool)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(read_messages(self._stop_event, reader, self.protocol))
        except BrokenPipeError:
            pass  # the client is gone
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """pygls's TCP server (one client), with :func:`protocol.read_messages` reading."""
        self._stop_event = threading.Event()

        async def serve() -> None:
            async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                self.protocol.set_writer(writer)  # type: ignore[arg-type]
                await read_messages(self._stop_event, reader, self.protocol)
                self.shutdown()

            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(serve())
        except (KeyboardInterrupt, SystemExit, asyncio.CancelledError):
            pass
        finally:
            self.shutdown()


server = GradGuardServer()


# --- lifecycle and settings ------------------------------------------------------------------

@server.feature(lsp.INITIALIZE)
def initialize(ls: GradGuardServer, params: lsp.InitializeParams) -> None:
    ls.analyser.start()  # its imports take a moment: under way before the first document opens
    ls.locale = rules.locale_of(params.locale)
    ls.editor, warnings = parse_editor_settings(params.initialization_options)
    ls.warn_once(warnings)
    ls.pull = get_capability(params.capabilities, "text_document.diagnostic", None) is not None
    if ls.pull:  # registered here so that diagnosticProvider is advertised only to pull clients
        ls.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
            identifier="gradguard", inter_file_dependencies=False, workspace_diagnostics=False,
        ))(pull_diagnostics)


@server.feature(lsp.INITIALIZED)
async def initialized(ls: GradGuardServer, params: lsp.InitializedParams) -> None:
    await ls.pull_settings()
    ls.workspace_scope.sync()  # (the settings of initializationOptions may not have changed)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GradGuardServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    pushed = isinstance(settings, dict) and ("gradguard" in settings or "settings" in settings
                                             or any(k.startswith("gradguard.") for k in settings))
    if pushed:
        ls.apply_settings(settings)
    elif not await ls.pull_settings():
        ls.relint_all()  # e.g. pyproject.toml changed; the project config is re-read
        ls.workspace_scope.sync(force=True)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: GradGuardServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    ls.workspace_scope.changed(params.changes)


@server.feature(lsp.SHUTDOWN)
def shutdown(ls: GradGuardServer, params: None) -> None:
    ls.shutdown_work()


# --- text documents --------------------------------------------------------------------------

@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GradGuardServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.on_event(params.text_document.uri, "open")


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GradGuardServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.on_event(params.text_document.uri, "change")


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
def did_save(ls: GradGuardServer, params: lsp.DidSaveTextDocumentParams) -> None:
    ls.on_event(params.text_document.uri, "save")


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GradGuardServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.clear(params.text_document.uri, [params.text_document.uri])


# --- notebooks -------------------------------------------------------------------------------

@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: GradGuardServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    ls.on_event(params.notebook_document.uri, "open")


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: GradGuardServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells else None
    if structure and structure.did_close and not ls.pull:  # deleted cells keep no squiggles
        for cell in structure.did_close:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))
    ls.on_event(params.notebook_document.uri, "change")


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: GradGuardServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
    ls.on_event(params.notebook_document.uri, "save")


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: GradGuardServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    ls.clear(params.notebook_document.uri, [c.uri for c in params.cell_text_documents])


# --- pull diagnostics (registered in initialize) ---------------------------------------------

async def pull_diagnostics(ls: GradGuardServer, params: lsp.DocumentDiagnosticParams):
    uri = params.text_document.uri
    key = documents.key_of(ls.workspace, uri)
    cached = ls.results.get(key)
    if ls.editor.run == "onSave" and cached is not None and cached.gen == ls.gen:
        result = cached  # onSave: typing does not re-analyse
    else:
        _, result = await ls.current(uri)
        if result is None or result.keep_previous:
            result = ls.results.get(key)
    if result is None:
        return lsp.FullDocumentDiagnosticReport(items=[])
    result_id = f"{result.snap.version}:{result.gen}"
    if params.previous_result_id == result_id:
        return lsp.UnchangedDocumentDiagnosticReport(result_id=result_id)
    return lsp.FullDocumentDiagnosticReport(items=result.diagnostics.get(uri, []), result_id=result_id)


# --- hover -----------------------------------------------------------------------------------

@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: GradGuardServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
    if not ls.editor.enable:
        return None
    uri = params.text_document.uri
    key = documents.key_of(ls.workspace, uri)
    snap = documents.take(ls.workspace, key)
    if snap is None or (snap.notebook and snap.cell_of(uri) is None):
        return None
    cell = snap.cell_of(uri)
    lines = snap.lines_of(cell)
    if params.position.line >= len(lines):
        return None
    pos = Positions(snap, ls.workspace.position_codec)
    line, column = pos.server_position(cell, params.position)
    kind = lsp.MarkupKind.Markdown if ls.markdown else lsp.MarkupKind.PlainText

    hit = suppressed_code_at(lines[line - 1].rstrip("\r\n"), column)
    if hit and (text := rule_hover(hit[0], ls.locale, ls.markdown)):
        where = Location(snap.path, line, hit[1], line, hit[2], cell)
        return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=text), range=pos.range(where))

    link = _graph_link(ls, key, snap, uri, pos, line, column, cell)
    result = await ls.hover_result(key, snap)
    if result is None or result.facts is None:
        return _link_hover(link, kind)
    # The result may be of an older version: look up the same line there, if the edit left it.
    old = result.snap
    old_cell = old.cell_of(uri) if old.notebook else None
    if old.notebook and old_cell is None:
        return None
    lines_map = None if old == snap else LineMap(old.lines_of(old_cell), lines)
    old_line = line if lines_map is None else lines_map.to_old(line)
    if old_line is None:
        return None
    fact = result.facts.at(old_line, column, old_cell)
    if fact is None:
        return _link_hover(link, kind)
    where = fact.location
    if lines_map is not None:
        start, end = lines_map.to_new(where.line), lines_map.to_new(where.end_line)
        if start is None or end is None:
            return None
        where = dataclasses.replace(where, line=start, end_line=end, cell=cell)
    old_pos = Positions(old, ls.workspace.position_codec)
    text = fact_hover(fact, ls.locale, ls.markdown, link=lambda loc: None if loc.cell else old_pos.uri(loc),
                      text=old_pos.text)
    if link is not None:
        text += f"\n\n{link[0]}"
    return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=text), range=pos.range(where))


def _graph_link(ls: GradGuardServer, key: str, snap: Snapshot, uri: str, pos: Positions, line: int,
                column: int, cell: Optional[int]) -> Optional[tuple[str, lsp.Range]]:
    """A Markdown link that runs ``gradguard.showGraph`` on the finding under the cursor (and
    its range), for a client that runs that command and shows Markdown."""
    result = ls.finished(key, snap)
    if not (ls.shows_graphs and ls.markdown) or result is None:
        return None
    finding = finding_at(result.findings, line, cell, column)
    if finding is None or not (finding.location.column <= column <= finding.location.end_column):
        return None
    rng = pos.range(finding.location)
    args = urllib.parse.quote(json.dumps([uri, _json_range(rng)["start"]]))
    title = SHOW_GRAPH_TITLE.get(ls.locale, SHOW_GRAPH_TITLE["en"])
    return f"[{title}](command:{SHOW_GRAPH_COMMAND}?{args})", rng


def _link_hover(link: Optional[tuple[str, lsp.Range]], kind: lsp.MarkupKind) -> Optional[lsp.Hover]:
    if link is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=link[0]), range=link[1])


# --- code actions ----------------------------------------------------------------------------

def _versions(ls: GradGuardServer, snap: Snapshot) -> Optional[dict[str, Optional[int]]]:
    if not ls.supports("workspace.workspace_edit.document_changes"):
        return None
    return {uri: ls.workspace.get_text_document(uri).version for uri in snap.uris}


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and \
        (b.start.line, b.start.character) <= (a.end.line, a.end.character)


def _edit_for(ls: GradGuardServer, snap: Snapshot, data: dict, result: Optional[Result]) -> Optional[lsp.WorkspaceEdit]:
    """The WorkspaceEdit for a code action's ``data`` (a fix, a suppression or fix-all)."""
    sources = snap.sources()
    try:
        if data.get("fixAll"):
            edits = fix_all_edits(result.findings if result else [], sources)
        elif "fix" in data:
            edits = fix_edits(fix_from_data(data["fix"]), sources)
        else:
            _, finding = finding_from_data(data["suppress"])
            edits = [suppression_edit(finding, sources)]
    except FixError as exc:
        ls.log(f"GradGuard fix not applied: {exc}", lsp.MessageType.Warning)
        return None
    return workspace_edit(Positions(snap, ls.workspace.position_codec), edits, _versions(ls, snap))


def _actions_for(ls: GradGuardServer, snap: Snapshot, uri: str, finding: Finding,
                 diag: lsp.Diagnostic, version: Optional[int]) -> list[lsp.CodeAction]:
    """The quick fixes of a finding made on ``version`` of the document (for an older version
    than ``snap``'s, resolving them finds the same fix in the current text)."""
    wanted: list[tuple[str, dict, bool]] = [
        (fix.title, {"fix": fix_to_data(fix)}, i == 0 and fix.preferred)
        for i, fix in enumerate(finding.fixes)
    ]
    title = SUPPRESS_TITLE.get(ls.locale, SUPPRESS_TITLE["en"]).format(code=finding.code)
    wanted.append((title, {"suppress": finding_data(snap, finding)}, False))
    actions = []
    for title, data, preferred in wanted:
        action = lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                is_preferred=preferred or None)
        if ls.lazy_edits:
            action.data = {"uri": uri, "version": version, **data}
        elif version != snap.version:
            continue
        elif (edit := _edit_for(ls, snap, data, None)) is not None:
            action.edit = edit
        else:
            continue  # a fix that does not apply is not offered
        actions.append(action)
    return actions


def _wants(only: Optional[list[str]], kind: str) -> bool:
    return not only or any(kind == k or kind.startswith(k + ".") for k in only)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
    code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True))
async def code_action(ls: GradGuardServer, params: lsp.CodeActionParams) -> Optional[list[lsp.CodeAction]]:
    if not ls.editor.enable:
        return None
    uri = params.text_document.uri
    snap = documents.take(ls.workspace, documents.key_of(ls.workspace, uri))
    if snap is None:
        return None
    only = params.context.only
    actions: list[lsp.CodeAction] = []
    result: Optional[Result] = None

    if _wants(only, lsp.CodeActionKind.QuickFix):
        # Fast path: the diagnostics carry their fixes, valid while the version is unchanged.
        parsed = [(p, diag) for diag in params.context.diagnostics
                  if diag.source == "gradguard" and (p := finding_from_data(diag.data))]
        pairs = [(version, finding, diag) for (version, finding), diag in parsed if version == snap.version]
        if not pairs:  # e.g. asked for a range: from the finished result of this version, if any
            result = ls.finished(snap.key, snap)
            if result is not None:
                pos = Positions(snap, ls.workspace.position_codec)
                for finding in result.findings:
                    if pos.uri(finding.location) == uri and _overlaps(pos.range(finding.location), params.range):
                        pairs.append((snap.version, finding, diagnostic(finding, pos, ls.locale, True)))
        if not pairs:  # diagnostics of an older version, while this one is analysed
            pairs = [(version, finding, diag) for (version, finding), diag in parsed]
        for version, finding, diag in pairs:
            actions += _actions_for(ls, snap, uri, finding, diag, version)
            if ls.shows_graphs:  # a client command: only for a client that says it has it
                title = SHOW_GRAPH_TITLE.get(ls.locale, SHOW_GRAPH_TITLE["en"])
                actions.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                              command=lsp.Command(title=title, command=SHOW_GRAPH_COMMAND,
                                                                  arguments=[uri, _json_range(diag.range)["start"]])))

    if _wants(only, FIX_ALL_KIND) and (only or actions):
        if result is None:  # asked for by name (e.g. on save), fix-all waits for this version
            snap, result = await ls.current(uri) if only else (snap, ls.finished(snap.key, snap))
        if result is not None and result.snap == snap and any(f.fixes for f in result.findings):
            action = lsp.CodeAction(title=FIX_ALL_TITLE.get(ls.locale, FIX_ALL_TITLE["en"]), kind=FIX_ALL_KIND)
            if ls.lazy_edits:
                action.data = {"uri": uri, "version": snap.version, "fixAll": True}
                actions.append(action)
            elif (edit := _edit_for(ls, snap, {"fixAll": True}, result)) is not None:
                action.edit = edit
                actions.append(action)
    return actions or None


def _same_fix_now(result: Result, data: dict) -> Optional[dict]:
    """After an edit, the equivalent of a code action's data in the fresh result (or None)."""
    if data.get("fixAll"):
        return data
    if "fix" in data:
        old = fix_from_data(data["fix"])
        for finding in result.findings:
            for fix in finding.fixes:
                if fix.kind == old.kind and fix.title == old.title:
                    return {"fix": fix_to_data(fix)}
        return None
    _, old_finding = finding_from_data(data["suppress"])
    for finding in result.findings:
        if finding.code == old_finding.code and finding.location.cell == old_finding.location.cell:
            if finding.location.line == old_finding.location.line:
                return {"suppress": finding_data(result.snap, finding)}
    return None


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: GradGuardServer, action: lsp.CodeAction) -> lsp.CodeAction:
    try:
        uri, data = action_data(action.data)
    except ValueError as exc:
        raise JsonRpcInvalidParams(f"codeAction/resolve: not a GradGuard code action ({exc})") from None
    snap, result = await ls.current(uri)
    if snap is None:
        return action
    if data.get("version") != snap.version or data.get("fixAll"):
        if result is None or result.snap != snap:
            return action
        data = _same_fix_now(result, data)
        if data is None:
            return action
    try:
        action.edit = _edit_for(ls, snap, data, result)
    except (LookupError, TypeError, ValueError) as exc:  # places that are not in this document
        raise JsonRpcInvalidParams(f"codeAction/resolve: the action does not fit {uri} ({exc})") from None
    return action


# --- the graph picture, code lenses, inlay hints ---------------------------------------------

def _graph_params(params: Any) -> tuple[str, lsp.Position, str, bool]:
    """``{textDocument: {uri}, position: {line, character}, format?: "svg"|"html"|"text",
    style?: bool}`` (pygls hands a custom request's params over as a dict or a namespace)."""
    def get(obj, key):
        return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
    try:
        uri = get(get(params, "textDocument"), "uri")
        position = get(params, "position")
        line, character = get(position, "line"), get(position, "character")
        fmt = get(params, "format") or "svg"
        style = get(params, "style")
    except (AttributeError, TypeError):
        uri = line = character = fmt = style = None
    if not (isinstance(uri, str) and isinstance(line, int) and isinstance(character, int) and line >= 0
            and character >= 0 and fmt in ("svg", "html", "text") and style in (None, True, False)):
        raise JsonRpcInvalidParams(f"{GRAPH_REQUEST}: expected textDocument.uri, position "
                                   "and optionally format (svg, html, text) and style (a boolean)")
    return uri, lsp.Position(line=line, character=character), fmt, style is not False


@server.feature(GRAPH_REQUEST)
async def graph(ls: GradGuardServer, params: Any) -> Optional[dict]:
    """The graph picture of the finding at a position (on its line), drawn from the facts of
    the document's current version: ``{code, message, range, uri, picture, nodes}``, or null
    when no finding is there. ``nodes``: each place the picture links to, ``{role, text, uri,
    range}``, in the picture's order (origins, steps, events)."""
    uri, position, fmt, style = _graph_params(params)
    key = documents.key_of(ls.workspace, uri)
    snap = documents.take(ls.workspace, key)
    if snap is None or not ls.editor.enable or (snap.notebook and snap.cell_of(uri) is None):
        return None
    cell = snap.cell_of(uri)
    if position.line >= len(snap.lines_of(cell)):
        return None
    cached = ls.hovers.get(key)
    result = cached if cached is not None and cached.snap == snap and cached.gen == ls.gen else None
    if result is None:
        try:
            result = await asyncio.wait_for(ls.analyse(snap, facts=True), GRAPH_WAIT_SECONDS)
        except asyncio.TimeoutError:
            return None
    if result is None or result.facts is None or result.snap != snap:
        return None
    pos = Positions(snap, ls.workspace.position_codec)
    line, column = pos.server_position(cell, position)
    finding = finding_at(result.findings, line, cell, column)
    if finding is None:
        return None
    picture = build_picture(finding, result.facts, pos.text)

    def link(loc: Location) -> Optional[str]:
        target = pos.uri(loc)
        return f"{target}#L{loc.line}" if target else None

    body = (picture_svg(picture, link, style) if fmt == "svg" else picture_html(picture, link) if fmt == "html"
            else picture_text(picture))
    nodes = [{"role": n.role, "text": n.text, "uri": pos.uri(n.location), "range": _json_range(pos.range(n.location))}
             for n in picture.origins + picture.chain + picture.events]
    return {"code": finding.code, "message": rules.render(finding, ls.locale), "uri": pos.uri(finding.location),
            "range": _json_range(pos.range(finding.location)), "format": fmt, "picture": body, "nodes": nodes}


def _json_range(rng: lsp.Range) -> dict:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


async def _indexed(ls: GradGuardServer, uri: str):
    """The document holding ``uri``, its cell, and the last result with hover facts with a map of
    its lines to the current text (None: the same version), or None when there is none yet."""
    key = documents.key_of(ls.workspace, uri)
    snap = documents.take(ls.workspace, key)
    if snap is None or not ls.editor.enable or (snap.notebook and snap.cell_of(uri) is None):
        return None
    cached = ls.hovers.get(key)
    if cached is None or cached.gen != ls.gen or cached.facts is None:
        return None  # asked again (workspace/codeLens/refresh) once the index is built
    cell = snap.cell_of(uri)
    old_cell = cached.snap.cell_of(uri) if cached.snap.notebook else None
    if cached.snap.notebook and old_cell is None:
        return None
    lines_map = None if cached.snap == snap else LineMap(cached.snap.lines_of(old_cell), snap.lines_of(cell))
    return snap, cell, cached, old_cell, lines_map


def _moved(loc: Location, lines_map: Optional[LineMap], cell: Optional[int]) -> Optional[Location]:
    """A place of the indexed text in the current one (None: its line was edited)."""
    if lines_map is None:
        return loc
    start, end = lines_map.to_new(loc.line), lines_map.to_new(loc.end_line)
    if start is None or end is None:
        return None
    return dataclasses.replace(loc, line=start, end_line=end, cell=cell)


@server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
async def code_lens(ls: GradGuardServer, params: lsp.CodeLensParams) -> Optional[list[lsp.CodeLens]]:
    ls.drawn.add("lens")
    if ls.editor.code_lens == "off":
        return None
    found = await _indexed(ls, params.text_document.uri)
    if found is None:
        return None
    snap, cell, result, old_cell, lines_map = found
    pos = Positions(snap, ls.workspace.position_codec)
    lenses = []
    for lens in backward_lenses(result.facts, result.findings, ls.editor.code_lens, old_cell):
        where = _moved(lens.location, lines_map, cell)
        if where is None:
            continue
        rng = pos.range(where)
        command = lsp.Command(title=lens.title, command="")
        if lens.finding is not None and ls.shows_graphs:
            command = lsp.Command(title=f"{lens.title} · {lens.finding.code}: show graph",
                                  command=SHOW_GRAPH_COMMAND,
                                  arguments=[params.text_document.uri, _json_range(rng)["start"]])
        lenses.append(lsp.CodeLens(range=rng, command=command))
    return lenses


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
async def inlay_hint(ls: GradGuardServer, params: lsp.InlayHintParams) -> Optional[list[lsp.InlayHint]]:
    ls.drawn.add("hint")
    if not ls.editor.inlay_hints:
        return None
    found = await _indexed(ls, params.text_document.uri)
    if found is None:
        return None
    snap, cell, result, old_cell, lines_map = found
    first, last = params.range.start.line + 1, params.range.end.line + 1
    old_lines = result.snap.lines_of(old_cell)
    if lines_map is not None:  # the lines the edit left alone, at their old place
        olds = [o for n in range(first, last + 1) if (o := lines_map.to_old(n)) is not None]
        if not olds:
            return []
        first, last = min(olds), max(olds)
    pos = Positions(snap, ls.workspace.position_codec)
    hints = []
    for hint in inlay_hints(result.facts, old_lines, first, last, old_cell):
        line = hint.line if lines_map is None else lines_map.to_new(hint.line)
        if line is None:
            continue
        where = Location(snap.path, line, hint.column, line, hint.column, cell)
        hints.append(lsp.InlayHint(position=pos.range(where).start, label=hint.label,
                                   kind=lsp.InlayHintKind.Type, tooltip=hint.tooltip, padding_left=True))
    return hints


def start(argv: list[str]) -> int:
    """``gradguard lsp [--stdio | --tcp --host H --port P]``."""
    parser = argparse.ArgumentParser(prog="gradguard lsp", description="Run the GradGuard language server.")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on a TCP socket instead")
    parser.add_argument("--host", default="127.0.0.1", help="TCP address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    args = parser.parse_args(argv)
    # Everything loaded so far (pygls, lsprotocol, libcst, jedi) lives as long as the server:
    # keep it out of the collector's full passes, which otherwise stall diagnostics.
    gc.freeze()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return 0
