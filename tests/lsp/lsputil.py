"""Helpers for the LSP tests: open documents, wait for diagnostics, apply edits, run programs."""
from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

from lsprotocol import types as lsp
from pygls.workspace import TextDocument
from pytest_lsp import LanguageClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for torchrun
import torchrun  # noqa: E402

BACKWARD_TWICE = "backward through the graph a second time"


def open_text(client: LanguageClient, path: Path, text: Optional[str] = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=version,
        text=path.read_text(encoding="utf-8") if text is None else text)))
    return uri


def change_text(client: LanguageClient, uri: str, version: int, text: str,
                range_: Optional[lsp.Range] = None) -> None:
    """Replace ``range_`` (or, without it, the whole document through a huge range) by ``text``."""
    rng = range_ or lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(100000, 0))
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangePartial(range=rng, text=text)]))


async def wait_diagnostics(client: LanguageClient, uri: str,
                           predicate: Callable[[Sequence[lsp.Diagnostic]], bool] = lambda _: True,
                           timeout: float = 30) -> Sequence[lsp.Diagnostic]:
    """The first published diagnostics for ``uri`` that satisfy ``predicate``."""
    async def wait():
        while True:
            if uri in client.diagnostics and predicate(client.diagnostics[uri]):
                return client.diagnostics[uri]
            await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return await asyncio.wait_for(wait(), timeout)


def apply_text_edits(text: str, edits: Iterable[lsp.TextEdit]) -> str:
    """Apply LSP edits (UTF-16 positions, all relative to ``text``) like an editor does."""
    doc = TextDocument("file:///tmp/x.py", text)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        doc.apply_change(lsp.TextDocumentContentChangePartial(range=edit.range, text=edit.new_text))
    return doc.source


def edits_by_uri(edit: lsp.WorkspaceEdit) -> dict[str, list[lsp.TextEdit]]:
    if edit.changes:
        return {uri: list(edits) for uri, edits in edit.changes.items()}
    return {change.text_document.uri: list(change.edits) for change in edit.document_changes or ()}


async def resolved(client: LanguageClient, action: lsp.CodeAction) -> lsp.CodeAction:
    return action if action.edit else await client.code_action_resolve_async(action)


def run_python(path: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return torchrun.run(path, cwd=path.parent, timeout=timeout)


def assert_runs_clean(path: Path) -> None:
    proc = run_python(path)
    assert BACKWARD_TWICE not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stderr[-2000:]


def assert_raises_backward_twice(path: Path) -> None:
    proc = run_python(path)
    assert BACKWARD_TWICE in proc.stderr, (proc.returncode, proc.stderr[-2000:])
