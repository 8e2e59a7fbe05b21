"""The GradGuard language server: pygls glue around the engine and the fixes/hover/config modules.

Analyses run in one worker thread on frozen snapshots (documents.py).  Each document or
notebook has at most one pending lint; a newer edit cancels it, and work already queued for an
older version returns at once (``_latest``), so stale results are never published.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import traceback
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Optional

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from .. import __version__, rules
from ..analysis import Analysis, analyze_cells, analyze_source
from ..config import Config, EditorSettings, load_project_config, parse_editor_settings
from ..findings import Finding, Location
from ..fixes import FixError, fix_all_edits, fix_edits, fix_from_data, fix_to_data, suppression_edit
from ..hover import fact_hover, rule_hover, suppressed_code_at
from ..sources import SourceError
from . import documents
from .convert import Positions, diagnostic, diagnostics, finding_data, finding_from_data, workspace_edit
from .documents import Snapshot

DEBOUNCE_SECONDS = 0.15
IDLE_SECONDS = 0.3  # after this long without edits, hover facts are prepared in the background
ANALYSES_KEPT = 3  # documents whose full analysis (for hovers) stays in memory; others keep findings
FIX_ALL_KIND = "source.fixAll.gradguard"
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


@dataclass
class Result:
    """One analysis of one snapshot, already converted to diagnostics per URI."""

    snap: Snapshot
    gen: int  # settings generation it was computed under
    analysis: Optional[Analysis]
    findings: list[Finding]
    diagnostics: dict[str, list[lsp.Diagnostic]]
    error: Optional[str] = None
    keep_previous: bool = False  # e.g. a syntax error mid-edit: the last good diagnostics stay
    warnings: tuple[str, ...] = field(default=())
    evicted: bool = False  # ``analysis`` was dropped to bound memory; hovers re-analyse


class GradGuardServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("gradguard", __version__, notebook_document_sync=NOTEBOOK_SYNC)
        self.locale = "en"
        self.editor = EditorSettings()
        self.gen = 0
        self.pull = False
        self.results: dict[str, Result] = {}  # last good result per snapshot key
        self._latest: dict[str, Optional[int]] = {}  # newest version per key (read by the worker)
        self._tasks: dict[str, asyncio.Task] = {}
        self._running: dict[str, tuple[tuple, asyncio.Future]] = {}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradguard-analysis")
        self._shown: set[str] = set()
        self._analysed: OrderedDict[str, None] = OrderedDict()  # keys holding an analysis, LRU

    # --- client capabilities -----------------------------------------------------------------
    def supports(self, path: str) -> bool:
        return bool(get_capability(self.client_capabilities, path, None))

    @property
    def markdown(self) -> bool:
        formats = get_capability(self.client_capabilities, "text_document.hover.content_format", None)
        return bool(formats) and lsp.MarkupKind.Markdown in formats

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

    # --- analysis ----------------------------------------------------------------------------
    def _config_for(self, snap: Snapshot) -> Config:
        start = snap.directory or self.workspace.root_path
        project = load_project_config(start) if start else Config()
        return project.with_editor(self.editor)

    def _compute(self, snap: Snapshot, gen: int, editor: EditorSettings, locale: str) -> Optional[Result]:
        """Worker thread: analyse ``snap`` and build its diagnostics."""
        if self._latest.get(snap.key, snap.version) != snap.version:
            return None  # superseded while queued
        config = self._config_for(snap)
        empty = {uri: [] for uri in snap.uris}
        if not editor.enable or config.excludes(snap.path):
            return Result(snap, gen, None, [], empty, warnings=config.warnings)
        root = config.root or self.workspace.root_path
        try:
            if snap.notebook:
                analysis = analyze_cells(list(snap.texts), snap.path, root, facts=True)
            else:
                analysis = analyze_source(snap.texts[0], snap.path, root, facts=True)
        except SourceError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            return Result(snap, gen, None, [], empty, error=f"{exc.message}{where}",
                          keep_previous=exc.line is not None, warnings=config.warnings)
        findings = [f for f in config.apply(analysis.findings) if snap.is_own_path(f.location.path)]
        pos = Positions(snap, self.workspace.position_codec)
        related = self.supports("text_document.publish_diagnostics.related_information") or self.pull
        return Result(snap, gen, analysis, findings, diagnostics(pos, findings, locale, related),
                      warnings=config.warnings)

    async def _run(self, snap: Snapshot) -> Optional[Result]:
        loop = asyncio.get_running_loop()
        try:
            result = await loop.run_in_executor(self._pool, self._compute, snap, self.gen,
                                                self.editor, self.locale)
        except Exception:  # an engine bug must not take the server down
            self.log(f"GradGuard failed on {snap.key}:\n{traceback.format_exc()}", lsp.MessageType.Error)
            return None
        if result is None:
            return None
        self.warn_once(result.warnings)
        if result.error:
            self.log(f"{snap.key}: {result.error}")
        if not result.keep_previous:
            self.results[snap.key] = result
            self._keep_analysis(snap.key)
        return result

    def _keep_analysis(self, key: str) -> None:
        """Many open files must not mean many engine states in memory: keep the recent ones."""
        self._analysed.pop(key, None)
        self._analysed[key] = None
        evicted = False
        while len(self._analysed) > ANALYSES_KEPT:
            old, _ = self._analysed.popitem(last=False)
            if (result := self.results.get(old)) is not None and result.analysis is not None:
                result.analysis, result.evicted = None, True
                evicted = True
        if evicted:
            gc.collect()  # engine states are full of reference cycles: give their memory back now

    async def analyse(self, snap: Snapshot) -> Optional[Result]:
        """The result for ``snap``, sharing an analysis already running for the same version."""
        ident = (snap.version, self.gen, snap.texts)
        running = self._running.get(snap.key)
        if running is None or running[0] != ident:
            running = (ident, asyncio.ensure_future(self._run(snap)))
            self._running[snap.key] = running
        return await asyncio.shield(running[1])

    async def current(self, uri: str, facts: bool = False) -> tuple[Optional[Snapshot], Optional[Result]]:
        """The open document (or notebook) holding ``uri`` and its up-to-date result
        (``facts``: with its analysis, for hovers)."""
        key = documents.key_of(self.workspace, uri)
        snap = documents.take(self.workspace, key)
        if snap is None:
            return None, None
        cached = self.results.get(key)
        if cached and cached.snap == snap and cached.gen == self.gen and not (facts and cached.evicted):
            if cached.analysis is not None:
                self._keep_analysis(key)
            return snap, cached
        if cached and cached.evicted:
            self._running.pop(key, None)  # its finished run holds the evicted result
        return snap, await self.analyse(snap)

    # --- push diagnostics --------------------------------------------------------------------
    def touch(self, uri: str) -> str:
        """Record the newest version of the document holding ``uri``; returns its key."""
        key = documents.key_of(self.workspace, uri)
        snap = documents.take(self.workspace, key)
        self._latest[key] = snap.version if snap else None
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
        if result.analysis is not None:  # idle: prepare hover facts (a new edit cancels this)
            await asyncio.sleep(IDLE_SECONDS)
            await asyncio.get_running_loop().run_in_executor(self._pool, self._warm, key, result)

    def _warm(self, key: str, result: Result) -> None:
        """Worker thread: build the hover index, unless the result was superseded or evicted
        meanwhile (the job holds the result, not the analysis, so eviction frees it)."""
        analysis = result.analysis
        if analysis is not None and self.results.get(key) is result:
            analysis.fact_at(1, 1, None)

    def publish(self, result: Result) -> None:
        version = (result.snap.version if not result.snap.notebook
                   and self.supports("text_document.publish_diagnostics.version_support") else None)
        for uri, items in result.diagnostics.items():
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version))

    def clear(self, key: str, uris: list[str]) -> None:
        if (task := self._tasks.pop(key, None)) is not None:
            task.cancel()
        self.results.pop(key, None)
        self._running.pop(key, None)
        self._latest.pop(key, None)
        self._analysed.pop(key, None)
        if not self.pull:
            for uri in uris:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def on_event(self, uri: str, trigger: str) -> None:
        """open / change / save of a document or notebook: lint as the settings say."""
        key = self.touch(uri)
        if trigger == "change":
            if self.editor.run == "onType" and not self.pull:
                self.schedule(key, DEBOUNCE_SECONDS)
        elif trigger == "save":
            if self.editor.run == "onSave" or not self.pull:
                self.schedule(key, 0)
        elif not self.pull:  # open: pull clients ask for themselves
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
        for task in self._tasks.values():
            task.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


server = GradGuardServer()


# --- lifecycle and settings ------------------------------------------------------------------

@server.feature(lsp.INITIALIZE)
def initialize(ls: GradGuardServer, params: lsp.InitializeParams) -> None:
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


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: GradGuardServer, params: lsp.DidChangeConfigurationParams) -> None:
    settings = params.settings
    pushed = isinstance(settings, dict) and ("gradguard" in settings or "settings" in settings
                                             or any(k.startswith("gradguard.") for k in settings))
    if pushed:
        ls.apply_settings(settings)
    elif not await ls.pull_settings():
        ls.relint_all()  # e.g. pyproject.toml changed; the project config is re-read


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
    snap = documents.take(ls.workspace, documents.key_of(ls.workspace, uri))
    if snap is None:
        return None
    cell = snap.cell_of(uri)
    pos = Positions(snap, ls.workspace.position_codec)
    line, column = pos.server_position(cell, params.position)
    lines = snap.lines_of(cell)
    kind = lsp.MarkupKind.Markdown if ls.markdown else lsp.MarkupKind.PlainText

    hit = suppressed_code_at(lines[line - 1].rstrip("\r\n"), column) if line <= len(lines) else None
    if hit and (text := rule_hover(hit[0], ls.locale, ls.markdown)):
        where = Location(snap.path, line, hit[1], line, hit[2], cell)
        return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=text), range=pos.range(where))

    snap, result = await ls.current(uri, facts=True)
    if result is None or result.analysis is None or result.snap != snap:
        return None
    fact = result.analysis.fact_at(line, column, cell)
    if fact is None:
        return None
    text = fact_hover(fact, ls.locale, ls.markdown, link=lambda loc: None if loc.cell else pos.uri(loc),
                      text=pos.text)
    return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=text), range=pos.range(fact.location))


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
                 diag: lsp.Diagnostic) -> list[lsp.CodeAction]:
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
            action.data = {"uri": uri, "version": snap.version, **data}
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
        pairs = []
        for diag in params.context.diagnostics:
            parsed = finding_from_data(diag.data) if diag.source == "gradguard" else None
            if parsed and parsed[0] == snap.version:
                pairs.append((parsed[1], diag))
        if not pairs:
            snap, result = await ls.current(uri)
            if result is not None and result.snap == snap:
                pos = Positions(snap, ls.workspace.position_codec)
                for finding in result.findings:
                    if pos.uri(finding.location) == uri and _overlaps(pos.range(finding.location), params.range):
                        pairs.append((finding, diagnostic(finding, pos, ls.locale, True)))
        for finding, diag in pairs:
            actions += _actions_for(ls, snap, uri, finding, diag)

    if _wants(only, FIX_ALL_KIND) and (only or actions):
        if result is None:
            snap, result = await ls.current(uri)
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
    data = action.data if isinstance(action.data, dict) else {}
    if "uri" not in data:
        return action
    snap, result = await ls.current(data["uri"])
    if snap is None:
        return action
    if data.get("version") != snap.version or data.get("fixAll"):
        if result is None or result.snap != snap:
            return action
        data = _same_fix_now(result, data)
        if data is None:
            return action
    action.edit = _edit_for(ls, snap, data, result)
    return action


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
