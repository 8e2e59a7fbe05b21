"""Diagnostics through the real server: push and pull, related places, UTF-16, edits, close."""
from __future__ import annotations

import asyncio

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import DATA, start
from lsputil import change_text, open_text, wait_diagnostics


async def test_diagnostic_points_at_build_and_free_sites(client: LanguageClient):
    uri = open_text(client, DATA / "two_losses.py")
    (diag,) = await wait_diagnostics(client, uri, bool)
    assert diag.source == "gradguard" and diag.code == "GG101"
    assert diag.severity == lsp.DiagnosticSeverity.Error
    assert diag.range == lsp.Range(lsp.Position(9, 0), lsp.Position(9, 16))  # loss2.backward()
    assert "Trying to backward through the graph a second time" in diag.message
    assert diag.code_description.href.endswith("docs/rules/GG101.md")
    related = {(r.location.range.start.line, r.message) for r in diag.related_information}
    assert any(line == 5 for line, _ in related), related  # h = torch.tanh(w * x): built
    assert any(line == 8 and "freed" in msg for line, msg in related), related  # loss1.backward()
    assert all(r.location.uri == uri for r in diag.related_information)
    assert diag.data["version"] == 1 and diag.data["fixes"]


async def test_clean_file_publishes_an_empty_list(client: LanguageClient):
    uri = open_text(client, DATA / "clean.py")
    assert not await wait_diagnostics(client, uri)


async def test_utf16_columns_after_non_ascii_text(client: LanguageClient):
    uri = open_text(client, DATA / "utf16.py")
    (diag,) = await wait_diagnostics(client, uri, bool)
    # line 6: '标签 = "🔥🔥"; 损失.backward()' -- each emoji is 2 UTF-16 units, each CJK char 1
    line = (DATA / "utf16.py").read_text(encoding="utf-8").splitlines()[5]
    start = len(line[: line.index("损失.backward()")].encode("utf-16-le")) // 2
    assert diag.range.start == lsp.Position(5, start)
    assert diag.range.end == lsp.Position(5, start + len("损失.backward()"))
    assert start == 13 and line.index("损失.backward()") == 11


async def test_findings_in_imported_modules_stay_off_this_document(client: LanguageClient):
    uri = open_text(client, DATA / "with_helper" / "main.py")
    assert not await wait_diagnostics(client, uri)
    assert (DATA / "with_helper" / "helper.py").as_uri() not in client.diagnostics


async def test_edits_debounce_and_only_the_latest_version_is_published(client: LanguageClient):
    path = DATA / "two_losses.py"
    text = path.read_text()
    uri = open_text(client, path, text)
    await wait_diagnostics(client, uri, bool)
    seen = len(client.log_messages)
    client.diagnostics.pop(uri)
    for version in range(2, 12):  # typing: each edit supersedes the last
        body = text if version % 2 else text.replace("loss2.backward()\n", "")
        change_text(client, uri, version, body)
        await asyncio.sleep(0.01)
    # version 11 (odd) still has the bug
    diags = await wait_diagnostics(client, uri, bool)
    assert diags[0].data["version"] == 11
    await asyncio.sleep(0.5)
    assert client.diagnostics[uri][0].data["version"] == 11  # nothing older arrived afterwards
    assert len(client.log_messages) == seen  # and nothing failed


async def test_syntax_error_mid_edit_keeps_the_last_good_diagnostics(client: LanguageClient):
    path = DATA / "two_losses.py"
    text = path.read_text()
    uri = open_text(client, path, text)
    await wait_diagnostics(client, uri, bool)
    change_text(client, uri, 2, text.replace("print(w.grad)", "print(w.grad"))
    await asyncio.sleep(0.6)
    assert client.diagnostics[uri][0].data["version"] == 1  # kept, not cleared, no crash
    change_text(client, uri, 3, text.replace("loss2.backward()\n", "") + "\n")
    assert not await wait_diagnostics(client, uri, lambda d: not d)
    change_text(client, uri, 4, "\x00\x01 not python")
    await asyncio.sleep(0.5)
    # the server is still serving
    change_text(client, uri, 5, text)
    assert (await wait_diagnostics(client, uri, bool))[0].data["version"] == 5


async def test_did_close_clears(client: LanguageClient):
    uri = open_text(client, DATA / "two_losses.py")
    await wait_diagnostics(client, uri, bool)
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri)))
    assert not await wait_diagnostics(client, uri, lambda d: not d)


async def test_save_reanalyses(client: LanguageClient):
    uri = open_text(client, DATA / "two_losses.py")
    await wait_diagnostics(client, uri, bool)
    client.diagnostics.pop(uri)
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri)))
    assert await wait_diagnostics(client, uri, bool)


async def test_pull_diagnostics_instead_of_push(pull_client: LanguageClient):
    client = pull_client
    uri = open_text(client, DATA / "two_losses.py")
    report = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri)))
    assert report.kind == "full"
    (diag,) = report.items
    assert diag.code == "GG101" and diag.related_information
    again = await client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), previous_result_id=report.result_id))
    assert again.kind == "unchanged"
    await asyncio.sleep(0.3)
    assert uri not in client.diagnostics  # nothing pushed to a pull client


async def test_shutdown_and_exit(unmanaged_client: LanguageClient):
    client = unmanaged_client
    uri = open_text(client, DATA / "two_losses.py")
    await wait_diagnostics(client, uri, bool)
    await client.shutdown_async(None)
    client.exit(None)
    assert await asyncio.wait_for(client._server.wait(), 10) == 0


async def test_utf8_position_encoding_when_the_client_prefers_it(fresh_client: LanguageClient):
    result = await start(fresh_client, encodings=[lsp.PositionEncodingKind.Utf8])
    assert result.capabilities.position_encoding == lsp.PositionEncodingKind.Utf8
    uri = open_text(fresh_client, DATA / "utf16.py")
    (diag,) = await wait_diagnostics(fresh_client, uri, bool)
    line = (DATA / "utf16.py").read_text(encoding="utf-8").splitlines()[5]
    start_bytes = len(line[: line.index("损失.backward()")].encode("utf-8"))
    assert diag.range.start == lsp.Position(5, start_bytes)
