"""Hovers through the real server, in English and Simplified Chinese."""
from __future__ import annotations

import asyncio

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import DATA
from lsputil import change_text, open_text, wait_diagnostics


async def hover(client, uri, line, character) -> lsp.Hover | None:
    return await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, character)))


async def test_tensor_hover_shows_chain_with_links_and_freed_state(client: LanguageClient):
    uri = open_text(client, DATA / "two_losses.py")
    await wait_diagnostics(client, uri, bool)
    result = await hover(client, uri, 9, 2)  # loss2 in "loss2.backward()" (line 10)
    assert result.contents.kind == lsp.MarkupKind.Markdown
    text = result.contents.value
    assert text.startswith("**`loss2`**") and "requires grad: yes" in text
    assert f"[line 6]({uri}#L6) `h = torch.tanh(w * x)`" in text
    assert f"**Freed here** by `loss1.backward()` on [line 9]({uri}#L9)" in text
    assert result.range == lsp.Range(lsp.Position(9, 0), lsp.Position(9, 5))
    before = (await hover(client, uri, 7, 2)).contents.value  # loss2 where it is built
    assert "Graph not freed here." in before


async def test_backward_hover_names_the_later_reuse(client: LanguageClient):
    uri = open_text(client, DATA / "two_losses.py")
    await wait_diagnostics(client, uri, bool)
    text = (await hover(client, uri, 8, 10)).contents.value  # loss1.backward() on line 9
    assert text.startswith("**`loss1.backward()`**")
    assert "Frees the saved tensors of:" in text
    assert f"`loss2.backward()` on [line 10]({uri}#L10) walks it again." in text


async def test_chinese_hover(zh_client: LanguageClient):
    uri = open_text(zh_client, DATA / "two_losses.py")
    (diag,) = await wait_diagnostics(zh_client, uri, bool)
    assert "会报错" in diag.message  # the diagnostic message is localised too
    text = (await hover(zh_client, uri, 9, 2)).contents.value
    assert "需要梯度: 是" in text
    assert f"**此处计算图已被释放**（[第 9 行]({uri}#L9)的 `loss1.backward()`）" in text


async def test_plain_text_clients_get_no_markup(plain_client: LanguageClient):
    uri = open_text(plain_client, DATA / "two_losses.py")
    await wait_diagnostics(plain_client, uri, bool)
    result = await hover(plain_client, uri, 9, 2)
    assert result.contents.kind == lsp.MarkupKind.PlainText
    assert "`" not in result.contents.value and "](" not in result.contents.value


async def test_hover_after_non_ascii_text_on_the_line(client: LanguageClient):
    uri = open_text(client, DATA / "utf16.py")
    await wait_diagnostics(client, uri, bool)
    # '标签 = "🔥🔥"; 损失.backward()': 损失 starts at UTF-16 column 13
    result = await hover(client, uri, 5, 13)
    assert result.contents.value.startswith("**`损失`**")
    assert result.range == lsp.Range(lsp.Position(5, 13), lsp.Position(5, 15))


async def test_rule_code_in_a_suppression_comment(client: LanguageClient):
    text = (DATA / "two_losses.py").read_text().replace(
        "loss2.backward()\n", "loss2.backward()  # gradguard: ignore[GG101]\n")
    uri = open_text(client, DATA / "two_losses.py", text)
    assert not await wait_diagnostics(client, uri)
    line = text.splitlines()[9]
    result = await hover(client, uri, 9, line.index("GG101") + 2)
    assert result.contents.value.startswith("**GG101** · backward-through-freed-graph")
    assert result.range.start.character == line.index("GG101")
    assert await hover(client, uri, 0, 0) is None  # a docstring: nothing to say


async def test_hover_while_the_text_does_not_parse_answers_from_the_last_analysis(client: LanguageClient):
    """Lines the edit left alone keep their facts, at their new place; the edited lines have none."""
    path = DATA / "two_losses.py"
    text = path.read_text()
    uri = open_text(client, path)
    await wait_diagnostics(client, uri, bool)
    broken = text.replace("x = torch.randn(3)\n", "x = torch.randn(3\n# unfinished\n")
    change_text(client, uri, 2, broken)
    lines = broken.splitlines()
    moved = lines.index("loss1.backward()")  # one line further down than when analysed
    after = await hover(client, uri, moved, 10)
    assert after is not None and after.contents.value.startswith("**`loss1.backward()`**")
    assert after.range.start.line == moved and after.range.start.character == 0
    assert await hover(client, uri, lines.index("x = torch.randn(3"), 0) is None
    assert (await hover(client, uri, lines.index("w = torch.randn(3, requires_grad=True)"), 0)) is not None


async def test_hover_on_a_document_whose_analysis_was_dropped(client: LanguageClient, tmp_path):
    """Only a few full analyses stay in memory; older documents are re-analysed for hovers."""
    text = (DATA / "two_losses.py").read_text()
    uris = []
    for n in range(6):
        path = tmp_path / f"t{n}.py"
        path.write_text(text)
        uris.append(open_text(client, path, text))
        await wait_diagnostics(client, uris[-1], bool)
    result = await hover(client, uris[0], 9, 2)
    assert result is not None and result.contents.value.startswith("**`loss2`**")


async def test_the_hover_index_of_an_edited_version_follows_its_diagnostics(client: LanguageClient):
    """Diagnostics come from an analysis without hover facts; the index of the same version is
    built right after, without any further request or edit."""
    path = DATA / "two_losses.py"
    text = path.read_text()
    uri = open_text(client, path)
    await wait_diagnostics(client, uri, bool)
    edited = text.replace("loss1.backward()\n", "loss1.backward()\nextra = w * 3\n")
    change_text(client, uri, 2, edited)
    await wait_diagnostics(client, uri, lambda items: any(d.range.start.line == 10 for d in items))
    line = edited.splitlines().index("extra = w * 3")
    for _ in range(100):  # a new name: only an index of version 2 knows it
        result = await hover(client, uri, line, 0)
        if result is not None:
            break
        await asyncio.sleep(0.1)
    assert result is not None and result.contents.value.startswith("**`extra`**")
