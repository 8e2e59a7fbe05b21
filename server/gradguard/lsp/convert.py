"""Engine results -> LSP types.  Engine columns are 1-based code points; the client's are
0-based in the negotiated encoding (UTF-16 by default), so every position goes through the
pygls PositionCodec with the lines of the text that was analysed."""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from lsprotocol import types as lsp
from pygls import uris
from pygls.workspace import PositionCodec, ServerTextPosition, ServerTextRange

from .. import rules
from ..findings import Finding, Location
from ..fixes import Edit, fix_from_data, fix_to_data
from ..hover import rule_doc_url
from .documents import Snapshot

SOURCE = "gradguard"
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "info": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}


class Positions:
    """Converts engine Locations of one snapshot (and of files it imports) to client ranges."""

    def __init__(self, snap: Snapshot, codec: PositionCodec):
        self.snap = snap
        self.codec = codec
        self._other: dict[str, Optional[list[str]]] = {}

    def uri(self, loc: Location) -> Optional[str]:
        if self.snap.is_own_path(loc.path):
            return self.snap.uri_of(loc.cell)
        return uris.from_fs_path(loc.path)

    def _lines(self, loc: Location) -> Optional[Sequence[str]]:
        if self.snap.is_own_path(loc.path):
            return self.snap.lines_of(loc.cell)
        if loc.path not in self._other:
            try:
                self._other[loc.path] = Path(loc.path).read_text(encoding="utf-8").splitlines(True)
            except (OSError, UnicodeDecodeError):
                self._other[loc.path] = None
        return self._other[loc.path]

    def range(self, loc: Location) -> lsp.Range:
        server = ServerTextRange(ServerTextPosition(loc.line - 1, loc.column - 1),
                                 ServerTextPosition(loc.end_line - 1, loc.end_column - 1))
        lines = self._lines(loc)
        if not lines:
            return lsp.Range(lsp.Position(server.start.line, server.start.character),
                             lsp.Position(server.end.line, server.end.character))
        return self.codec.range_to_client_units(lines, server)

    def text(self, loc: Location) -> Optional[str]:
        """The source text at a one-line Location of this snapshot (e.g. a backward call)."""
        if loc.line != loc.end_line or not self.snap.is_own_path(loc.path):
            return None
        lines = self.snap.lines_of(loc.cell)
        if loc.line > len(lines):
            return None
        return lines[loc.line - 1][loc.column - 1:loc.end_column - 1] or None

    def server_position(self, cell: Optional[int], position: lsp.Position) -> tuple[int, int]:
        """A client position in the snapshot -> engine (1-based line, 1-based code-point column)."""
        pos = self.codec.position_from_client_units(self.snap.lines_of(cell), position)
        return pos.line + 1, pos.character + 1


def finding_data(snap: Snapshot, finding: Finding) -> dict[str, Any]:
    """Diagnostic ``data``: everything code actions need, valid for ``version`` only."""
    return {
        "version": snap.version,
        "code": finding.code,
        "location": dataclasses.asdict(finding.location),
        "fixes": [fix_to_data(fix) for fix in finding.fixes],
    }


def _location(data: Any) -> Location:
    """A Location back from data, checked field by field (data may come from anywhere)."""
    if not isinstance(data, Mapping):
        raise ValueError("a location must be an object")
    loc = Location(**data)
    numbers = (loc.line, loc.column, loc.end_line, loc.end_column)
    if not isinstance(loc.path, str) or not all(type(n) is int and n >= 0 for n in numbers) \
            or not (loc.cell is None or (type(loc.cell) is int and loc.cell > 0)):
        raise ValueError(f"not a location: {data!r}"[:200])
    return loc


def _fix(data: Any):
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str) \
            or not isinstance(data.get("title"), str) or not isinstance(data.get("targets"), (list, tuple)):
        raise ValueError("a fix needs a kind, a title and targets")
    for target in data["targets"]:
        if not (isinstance(target, (list, tuple)) and len(target) == 2 and isinstance(target[0], str)):
            raise ValueError("a fix target is a [name, location] pair")
        _location(target[1])
    texts = data.get("texts", ())
    if not isinstance(texts, (list, tuple)) or not all(
            isinstance(t, (list, tuple)) and len(t) == 2 and all(isinstance(x, str) for x in t) for t in texts):
        raise ValueError("fix texts are [name, text] pairs")
    return fix_from_data(data)


def finding_from_data(data: Any) -> Optional[tuple[Optional[int], Finding]]:
    """(version, finding) back from diagnostic data; None when it is not ours."""
    if not isinstance(data, Mapping) or not isinstance(data.get("code"), str) or "location" not in data:
        return None
    try:
        finding = Finding(code=data["code"], severity="error", message="",
                          location=_location(data["location"]),
                          fixes=tuple(_fix(f) for f in data.get("fixes", ())))
    except (TypeError, KeyError, ValueError):
        return None
    return data.get("version"), finding


def action_data(data: Any) -> tuple[str, dict]:
    """A code action's ``data`` as this server made it: (document URI, data); ValueError
    saying what is wrong otherwise."""
    if not isinstance(data, Mapping) or not isinstance(data.get("uri"), str):
        raise ValueError("no data with a document URI")
    version = data.get("version")
    if version is not None and type(version) is not int:
        raise ValueError("the version is not an integer")
    if data.get("fixAll") is True:
        return data["uri"], dict(data)
    if "fix" in data:
        try:
            _fix(data["fix"])
        except (TypeError, KeyError) as exc:
            raise ValueError(f"malformed fix: {exc}") from None
        return data["uri"], dict(data)
    if "suppress" in data:
        if finding_from_data(data["suppress"]) is None:
            raise ValueError("malformed suppression")
        return data["uri"], dict(data)
    raise ValueError("neither a fix, a suppression nor fix-all")


def diagnostic(finding: Finding, pos: Positions, locale: str, related: bool) -> lsp.Diagnostic:
    info = None
    if related and finding.related:
        info = [lsp.DiagnosticRelatedInformation(
                    location=lsp.Location(uri=uri, range=pos.range(r.location)),
                    message=rules.render_related(r, locale))
                for r in finding.related if (uri := pos.uri(r.location))]
    return lsp.Diagnostic(
        range=pos.range(finding.location),
        message=rules.render(finding, locale),
        severity=SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=lsp.CodeDescription(href=rule_doc_url(finding.code)),
        source=SOURCE,
        related_information=info or None,
        data=finding_data(pos.snap, finding),
    )


def diagnostics(pos: Positions, findings: Iterable[Finding], locale: str,
                related: bool) -> dict[str, list[lsp.Diagnostic]]:
    """Diagnostics per URI of the snapshot (every URI present, clean ones with [])."""
    by_uri: dict[str, list[lsp.Diagnostic]] = {uri: [] for uri in pos.snap.uris}
    for finding in findings:
        uri = pos.uri(finding.location)
        if uri in by_uri:
            by_uri[uri].append(diagnostic(finding, pos, locale, related))
    return by_uri


def workspace_edit(pos: Positions, edits: Iterable[Edit],
                   versions: Optional[Mapping[str, Optional[int]]] = None) -> lsp.WorkspaceEdit:
    """Edits of one snapshot as a WorkspaceEdit; with ``versions`` (uri -> version) as
    versioned documentChanges, so a client refuses them if the document moved on."""
    grouped: dict[str, list[lsp.TextEdit]] = defaultdict(list)
    for edit in edits:
        uri = pos.snap.uri_of(edit.cell)
        loc = Location(pos.snap.path, edit.line, edit.column, edit.end_line, edit.end_column, edit.cell)
        grouped[uri].append(lsp.TextEdit(range=pos.range(loc), new_text=edit.text))
    if versions is None:
        return lsp.WorkspaceEdit(changes=dict(grouped))
    return lsp.WorkspaceEdit(document_changes=[
        lsp.TextDocumentEdit(
            text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(uri)),
            edits=text_edits)
        for uri, text_edits in grouped.items()])
