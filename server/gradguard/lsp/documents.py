"""What one analysis runs on: a text document or a whole notebook, frozen at one version.

A snapshot is taken on the event loop and handed to a worker thread, so the analysis and the
position conversions see exactly the text that was analysed, whatever the editor does meanwhile.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls import uris
from pygls.workspace import Workspace


@dataclass(frozen=True)
class Snapshot:
    key: str  # the text document URI, or the notebook URI
    version: Optional[int]
    path: str  # file system path (or the URI for unsaved documents): what the engine reports
    texts: tuple[str, ...]  # the document's text, or each code cell's text in order
    uris: tuple[str, ...]  # the URI of each entry of ``texts`` (cell document URIs for notebooks)
    notebook: bool

    def sources(self) -> dict[Optional[int], str]:
        """Texts keyed like ``Location.cell`` (1-based cells; None for a plain file)."""
        if self.notebook:
            return {i: text for i, text in enumerate(self.texts, 1)}
        return {None: self.texts[0]}

    def uri_of(self, cell: Optional[int]) -> Optional[str]:
        if not self.notebook:
            return self.uris[0]
        return self.uris[cell - 1] if cell and 0 < cell <= len(self.uris) else None

    def cell_of(self, uri: str) -> Optional[int]:
        return self.uris.index(uri) + 1 if self.notebook and uri in self.uris else None

    def lines_of(self, cell: Optional[int]) -> list[str]:
        text = self.texts[cell - 1] if self.notebook and cell else self.texts[0]
        return text.splitlines(keepends=True)

    def is_own_path(self, path: str) -> bool:
        """Whether a finding's path is this document (not e.g. an imported module)."""
        return path == self.path or _norm(path) == _norm(self.path)

    @property
    def directory(self) -> Optional[str]:
        return os.path.dirname(self.path) if os.path.isabs(self.path) else None


def _norm(path: str) -> str:
    return os.path.normcase(os.path.abspath(path)) if path else path


def _path_of(uri: str) -> str:
    return uris.to_fs_path(uri) or uri


def key_of(workspace: Workspace, uri: str) -> str:
    """The snapshot key for a document or cell URI (cells belong to their notebook)."""
    notebook = workspace.get_notebook_document(cell_uri=uri)
    return notebook.uri if notebook else uri


def is_python_cell(workspace: Workspace, cell: lsp.NotebookCell) -> bool:
    if cell.kind != lsp.NotebookCellKind.Code:
        return False
    doc = workspace.text_documents.get(unquote(cell.document))
    return doc is None or doc.language_id in (None, "python")


def take(workspace: Workspace, key: str) -> Optional[Snapshot]:
    """The current state of the document or notebook ``key`` (None when it is not open)."""
    notebook = workspace.get_notebook_document(notebook_uri=key)
    if notebook is not None:
        cells = [c for c in notebook.cells if is_python_cell(workspace, c)]
        docs = [workspace.get_text_document(c.document) for c in cells]
        return Snapshot(key=key, version=notebook.version, path=_path_of(notebook.uri),
                        texts=tuple(d.source for d in docs), uris=tuple(c.document for c in cells),
                        notebook=True)
    doc = workspace.text_documents.get(unquote(key))
    if doc is None:
        return None
    return Snapshot(key=key, version=doc.version, path=_path_of(doc.uri), texts=(doc.source,),
                    uris=(doc.uri,), notebook=False)
