"""Editor settings and [tool.gradguard] through the real server."""
from __future__ import annotations

import asyncio
import shutil

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import DATA, start
from lsputil import change_text, open_text, wait_diagnostics

BUG = DATA / "two_losses.py"


def change_configuration(client, settings=None):
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=settings))


async def test_initialization_options_as_the_vscode_client_sends_them(fresh_client: LanguageClient):
    await start(fresh_client, options={"settings": {"gradguard": {"ignore": ["GG101"], "run": "onType"}}})
    uri = open_text(fresh_client, BUG)
    assert not await wait_diagnostics(fresh_client, uri)


async def test_pushed_settings_change_severity_and_selection(client: LanguageClient):
    uri = open_text(client, BUG)
    (diag,) = await wait_diagnostics(client, uri, bool)
    assert diag.severity == lsp.DiagnosticSeverity.Error
    change_configuration(client, {"gradguard": {"severity": {"GG101": "hint"}}})
    (diag,) = await wait_diagnostics(client, uri, lambda d: d and d[0].severity == lsp.DiagnosticSeverity.Hint)
    change_configuration(client, {"gradguard": {"select": ["GG102"]}})
    assert not await wait_diagnostics(client, uri, lambda d: not d)


async def test_settings_pulled_with_workspace_configuration(client: LanguageClient):
    uri = open_text(client, BUG)
    await wait_diagnostics(client, uri, bool)
    client.set_configuration({"ignore": ["GG1"]}, section="gradguard")
    change_configuration(client, None)  # VS Code style: "something changed, ask me"
    assert not await wait_diagnostics(client, uri, lambda d: not d)


async def test_bad_setting_warns_once_and_keeps_serving(client: LanguageClient):
    uri = open_text(client, BUG)
    await wait_diagnostics(client, uri, bool)
    for _ in range(2):
        change_configuration(client, {"gradguard": {"run": "sometimes", "severity": "loud"}})
    await asyncio.sleep(0.3)
    (message,) = [m for m in client.messages if m.type == lsp.MessageType.Warning]
    assert "gradguard.run" in message.message and "gradguard.severity" in message.message
    change_text(client, uri, 2, BUG.read_text() + "\n")  # defaults (onType) still in force
    (diag,) = await wait_diagnostics(client, uri, lambda d: d and d[0].data["version"] == 2)
    assert diag.severity == lsp.DiagnosticSeverity.Error


async def test_enable_false_clears_and_silences(client: LanguageClient):
    uri = open_text(client, BUG)
    await wait_diagnostics(client, uri, bool)
    change_configuration(client, {"gradguard": {"enable": False}})
    assert not await wait_diagnostics(client, uri, lambda d: not d)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(9, 2)))
    assert hover is None
    change_configuration(client, {"gradguard": {"enable": True}})
    assert await wait_diagnostics(client, uri, bool)


async def test_run_on_save(client: LanguageClient):
    change_configuration(client, {"gradguard": {"run": "onSave"}})
    text = BUG.read_text()
    uri = open_text(client, BUG, text.replace("loss2.backward()\n", ""))
    assert not await wait_diagnostics(client, uri)  # opening still analyses
    change_text(client, uri, 2, text)
    await asyncio.sleep(0.6)
    assert not client.diagnostics[uri]  # typing does not
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri=uri)))
    assert await wait_diagnostics(client, uri, bool)  # saving does


async def test_pyproject_tool_gradguard(fresh_client: LanguageClient, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.gradguard]\nseverity = { GG101 = "warning" }\nexclude = ["generated/*"]\n')
    (tmp_path / "generated").mkdir()
    shutil.copy(BUG, tmp_path / "train.py")
    shutil.copy(BUG, tmp_path / "generated" / "train.py")
    await start(fresh_client, root=tmp_path)
    uri = open_text(fresh_client, tmp_path / "train.py")
    (diag,) = await wait_diagnostics(fresh_client, uri, bool)
    assert diag.severity == lsp.DiagnosticSeverity.Warning
    excluded = open_text(fresh_client, tmp_path / "generated" / "train.py")
    assert not await wait_diagnostics(fresh_client, excluded)


async def test_advertised_capabilities(fresh_client: LanguageClient):
    caps = (await start(fresh_client)).capabilities
    assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Incremental
    assert caps.text_document_sync.save is not None
    assert caps.hover_provider
    assert caps.code_action_provider.resolve_provider
    assert set(caps.code_action_provider.code_action_kinds) == {"quickfix", "source.fixAll.gradguard"}
    notebooks = {f.notebook for f in caps.notebook_document_sync.notebook_selector}
    assert notebooks == {"jupyter-notebook", "interactive"}
    assert caps.diagnostic_provider is None  # this client has no pull diagnostics: pushed


async def test_pull_clients_get_a_diagnostic_provider(fresh_client: LanguageClient):
    caps = (await start(fresh_client, pull=True)).capabilities
    assert caps.diagnostic_provider.identifier == "gradguard"
    assert not caps.diagnostic_provider.inter_file_dependencies
