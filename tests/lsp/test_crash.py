"""A crash of the analysis process (a planted ``os.abort()`` on one file) costs that file only:
the server says so once, in the log and in a notice, and goes on serving the others."""
from __future__ import annotations

import asyncio
import os
import shutil

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from conftest import DATA, SERVER, start
from lsputil import change_text, open_text, wait_diagnostics

from gradguard.workers import CRASH_ON

CRASHING = "crashing.py"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER,
                                              server_env={**os.environ, CRASH_ON: CRASHING}))
async def client(lsp_client: LanguageClient):
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def test_a_crashing_file_is_told_and_the_others_still_analysed(client: LanguageClient, tmp_path):
    crashing = tmp_path / CRASHING
    shutil.copy(DATA / "two_losses.py", crashing)
    uri = open_text(client, crashing)
    assert list(await wait_diagnostics(client, uri)) == []  # nothing is known: no diagnostic
    await asyncio.sleep(0.2)
    errors = [m.message for m in client.log_messages if m.type == lsp.MessageType.Error]
    assert len(errors) == 1 and CRASHING in errors[0] and "internal error" in errors[0], errors
    notices = [m.message for m in client.messages if m.type == lsp.MessageType.Warning]
    assert len(notices) == 1 and CRASHING in notices[0], notices

    other = open_text(client, DATA / "two_losses.py")
    diags = await wait_diagnostics(client, other, bool)
    assert [d.code for d in diags] == ["GG101"]

    # edited, it crashes again: logged again, not noticed twice
    change_text(client, uri, 2, crashing.read_text() + "\n")
    await asyncio.sleep(1.5)
    assert len([m for m in client.log_messages if m.type == lsp.MessageType.Error]) == 2
    assert len([m for m in client.messages if m.type == lsp.MessageType.Warning]) == 1
    # the server is still up: it answers a hover
    hover = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=other), position=lsp.Position(0, 0)))
    assert hover is None or hover.contents is not None
