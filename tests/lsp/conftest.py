"""pytest-lsp clients that drive the real server process (``python -m gradguard lsp``)."""
from __future__ import annotations

import sys
from pathlib import Path

import attrs
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "gradguard", "lsp"]
DATA = Path(__file__).resolve().parent / "data"


def vscode_capabilities(pull: bool = False, markdown: bool = True) -> lsp.ClientCapabilities:
    """VS Code 1.65 as pytest-lsp knows it, plus notebook sync (and pull diagnostics if asked);
    that profile predates both."""
    caps = client_capabilities("visual-studio-code")
    caps = attrs.evolve(caps, notebook_document=lsp.NotebookDocumentClientCapabilities(
        synchronization=lsp.NotebookDocumentSyncClientCapabilities()))
    text = caps.text_document
    if pull:
        text = attrs.evolve(text, diagnostic=lsp.DiagnosticClientCapabilities(related_document_support=False))
        caps = attrs.evolve(caps, workspace=attrs.evolve(
            caps.workspace, diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)))
    if not markdown:
        text = attrs.evolve(text, hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.PlainText]))
    return attrs.evolve(caps, text_document=text)


def without_resolve(caps: lsp.ClientCapabilities) -> lsp.ClientCapabilities:
    """A client that wants code action edits eagerly (no codeAction/resolve)."""
    code_action = attrs.evolve(caps.text_document.code_action, resolve_support=None)
    return attrs.evolve(caps, text_document=attrs.evolve(caps.text_document, code_action=code_action))


async def start(client: LanguageClient, *, locale: str = "en", pull: bool = False,
                markdown: bool = True, resolve: bool = True, options=None,
                root: Path = DATA, encodings=None) -> lsp.InitializeResult:
    caps = vscode_capabilities(pull=pull, markdown=markdown)
    if not resolve:
        caps = without_resolve(caps)
    if encodings:
        caps = attrs.evolve(caps, general=lsp.GeneralClientCapabilities(position_encodings=encodings))
    return await client.initialize_session(lsp.InitializeParams(
        capabilities=caps, locale=locale, root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options))


CONFIG = ClientServerConfig(server_command=SERVER)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def eager_client(lsp_client: LanguageClient):
    await start(lsp_client, resolve=False)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def zh_client(lsp_client: LanguageClient):
    await start(lsp_client, locale="zh-CN")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def plain_client(lsp_client: LanguageClient):
    await start(lsp_client, markdown=False)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def pull_client(lsp_client: LanguageClient):
    await start(lsp_client, pull=True)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def unmanaged_client(lsp_client: LanguageClient):
    """Initialised; the test itself shuts the server down."""
    await start(lsp_client)
    yield


@pytest_lsp.fixture(config=CONFIG)
async def fresh_client(lsp_client: LanguageClient):
    """Not initialised yet: the test calls ``start`` with its own options."""
    yield
    await lsp_client.shutdown_session()
