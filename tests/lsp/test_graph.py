"""The graph picture (``gradguard/graph``), code lenses on backward calls and inlay hints,
through the real server process."""
from __future__ import annotations

import ast
import asyncio
import json
import urllib.parse
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs
import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import CONFIG, DATA, vscode_capabilities
from lsputil import open_text, wait_diagnostics

REPO = Path(__file__).resolve().parents[2]
SEED000 = REPO / "demo" / "seed000_bug" / "main.py"
SEED001 = REPO / "demo" / "seed001_bug.py"


def _get(obj, key):
    return obj[key] if isinstance(obj, dict) else getattr(obj, key)


async def graph(client: LanguageClient, uri: str, line: int, character: int = 0, **extra):
    return await client.protocol.send_request_async("gradguard/graph", {
        "textDocument": {"uri": uri}, "position": {"line": line, "character": character}, **extra})


async def until(fetch, timeout: float = 30):
    """Ask again until the answer is there (the hover index follows the diagnostics)."""
    async def loop():
        while True:
            answer = await fetch()
            if answer:
                return answer
            await asyncio.sleep(0.1)
    return await asyncio.wait_for(loop(), timeout)


def answer_refreshes(client: LanguageClient) -> list:
    """The server asks for lenses and hints again once it has new facts or settings; the
    methods it sent, in order."""
    asked = []
    for method in (lsp.WORKSPACE_CODE_LENS_REFRESH, lsp.WORKSPACE_INLAY_HINT_REFRESH):
        client.feature(method)(lambda *args, method=method: asked.append(method))
    return asked


def configure(client: LanguageClient, **settings) -> None:
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"gradguard": settings}))


@pytest_lsp.fixture(config=CONFIG)
async def graph_client(lsp_client: LanguageClient):
    """A client that runs ``gradguard.showGraph`` (as the VS Code extension says it does)."""
    caps = vscode_capabilities()
    caps = attrs.evolve(caps, experimental={"gradguard": {"showGraph": True}}, workspace=attrs.evolve(
        caps.workspace, code_lens=lsp.CodeLensWorkspaceClientCapabilities(refresh_support=True),
        inlay_hint=lsp.InlayHintWorkspaceClientCapabilities(refresh_support=True)))
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=caps, root_uri=DATA.as_uri(), workspace_folders=[lsp.WorkspaceFolder(DATA.as_uri(), "data")]))
    lsp_client.refreshes = answer_refreshes(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_graph_of_the_finding_on_a_line(client: LanguageClient):
    uri = open_text(client, SEED000)
    await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    answer = await graph(client, uri, 34, 8)
    assert _get(answer, "code") == "GG101" and _get(_get(_get(answer, "range"), "start"), "line") == 34
    svg = _get(answer, "picture")
    root = ET.fromstring(svg)
    assert root.get("class") == "gg" and "iteration k + 1" in svg and "<style>" in svg
    links = [a.get("href") for a in root.iter("{http://www.w3.org/2000/svg}a")]
    assert f"{uri}#L11" in links and f"{uri}#L35" in links
    roles = [_get(n, "role") for n in _get(answer, "nodes")]
    assert roles[0] == "origin" and roles[-2:] == ["free", "walk"]
    # the same picture as the CLI's text, and a host that styles it itself gets no <style>
    text = _get(await graph(client, uri, 34, format="text"), "picture")
    assert "iteration k:\n           line 35  l.backward()  → frees 3 saved steps" in text
    assert "<style>" not in _get(await graph(client, uri, 34, style=False), "picture")
    assert await graph(client, uri, 33) is None  # no finding on that line


@pytest.mark.asyncio
async def test_graph_request_with_bad_params_is_an_error(client: LanguageClient):
    uri = open_text(client, SEED000)
    with pytest.raises(Exception) as err:
        await client.protocol.send_request_async("gradguard/graph", {"textDocument": {"uri": uri}})
    assert "position" in str(err.value)
    with pytest.raises(Exception) as err:
        await graph(client, uri, 34, format="png")
    assert "format" in str(err.value)


@pytest.mark.asyncio
async def test_code_lenses_follow_the_setting(graph_client: LanguageClient):
    client = graph_client
    uri = open_text(client, SEED001)
    await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    params = lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri))
    lenses = await until(lambda: client.text_document_code_lens_async(params))
    titles = {lens.range.start.line + 1: lens.command.title for lens in lenses}
    assert titles[32].startswith("frees 3 saved steps of loss1 ← h")
    assert titles[33].startswith("walks the graph freed on line 32")
    assert all(lens.command.command == "gradguard.showGraph" for lens in lenses)
    assert lenses[0].command.arguments[0] == uri

    configure(client, codeLens="off")
    assert await until(lambda: _none_after(client.text_document_code_lens_async(params)))


async def _true(value: bool) -> bool:
    return value


async def _none_after(request):
    return (await request) is None


@pytest.mark.asyncio
async def test_lenses_on_every_backward_and_none_without_a_finding(client: LanguageClient):
    answer_refreshes(client)
    source = ("import torch\nw = torch.randn(3, requires_grad=True)\nloss = (w * w).sum()\n"
              "loss.backward()\n")
    path = DATA / "one_backward.py"
    uri = open_text(client, path, source)
    params = lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri))
    await wait_diagnostics(client, uri)
    await asyncio.sleep(1.0)  # the hover index
    assert not await client.text_document_code_lens_async(params)  # "findings": none here
    configure(client, codeLens="all")
    lenses = await until(lambda: client.text_document_code_lens_async(params))
    assert [(lens.range.start.line, lens.command.title, lens.command.command) for lens in lenses] == \
        [(3, "frees 1 saved step of loss ← w", "")]  # a client without showGraph: no command


@pytest.mark.asyncio
async def test_inlay_hints_off_by_default_then_on(graph_client: LanguageClient):
    client, asked = graph_client, graph_client.refreshes
    uri = open_text(client, SEED000)
    await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    params = lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri),
                                 range=lsp.Range(lsp.Position(0, 0), lsp.Position(60, 0)))
    await until(lambda: graph(client, uri, 34))  # the hover index is there
    assert await client.text_document_inlay_hint_async(params) is None
    configure(client, inlayHints=True)
    # the editor asks again only when told to: at once, and once the facts are rebuilt
    await until(lambda: _true(asked.count(lsp.WORKSPACE_INLAY_HINT_REFRESH) >= 2))
    hints = await client.text_document_inlay_hint_async(params)
    by_line = {h.position.line + 1: (h.position.character, h.label) for h in hints}
    line11 = SEED000.read_text().split("\n")[10]
    assert by_line[11] == (len(line11.rstrip()), "‹grad ← true_W, true_b›")
    assert by_line[35][1] == "‹frees 3 saved›"


@pytest.mark.asyncio
async def test_show_graph_code_action_only_for_a_client_that_has_the_command(graph_client: LanguageClient):
    uri = open_text(graph_client, SEED000)
    diags = await wait_diagnostics(graph_client, uri, lambda d: len(d) == 1)
    actions = await graph_client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri), range=diags[0].range,
        context=lsp.CodeActionContext(diagnostics=list(diags))))
    # (the client's converter reads an action that carries a command as that Command)
    # (pytest-lsp's converter reads a CodeAction that carries a command as a Command whose
    # ``command`` is the action's command, printed)
    shows = [ast.literal_eval(a.command) for a in actions if isinstance(a, lsp.Command)]
    assert shows == [{"title": "Show the graph of this finding", "command": "gradguard.showGraph",
                      "arguments": [uri, {"line": 34, "character": 8}]}]


@pytest.mark.asyncio
async def test_no_show_graph_action_for_other_clients(client: LanguageClient):
    uri = open_text(client, SEED000)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 1)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri), range=diags[0].range,
        context=lsp.CodeActionContext(diagnostics=list(diags))))
    assert actions and not any(isinstance(a, lsp.Command) or a.command for a in actions)


@pytest.mark.asyncio
async def test_hover_on_a_finding_links_to_its_graph(graph_client: LanguageClient):
    uri = open_text(graph_client, SEED000)
    await wait_diagnostics(graph_client, uri, lambda d: len(d) == 1)
    params = lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri), position=lsp.Position(34, 10))
    hover = await until(lambda: graph_client.text_document_hover_async(params))
    link = "[Show the graph of this finding](command:gradguard.showGraph?"
    assert link in hover.contents.value
    args = hover.contents.value.split(link, 1)[1].rstrip(")")
    assert json.loads(urllib.parse.unquote(args)) == [uri, {"line": 34, "character": 8}]
    elsewhere = await graph_client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri), position=lsp.Position(10, 0)))
    assert elsewhere is not None and "command:" not in elsewhere.contents.value
