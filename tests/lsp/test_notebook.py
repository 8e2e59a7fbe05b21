"""Notebooks through LSP notebook sync: all code cells analysed together, results per cell."""
from __future__ import annotations

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import DATA
from lsputil import apply_text_edits, assert_runs_clean, edits_by_uri, resolved, wait_diagnostics

NOTEBOOK = (DATA / "train.ipynb").as_uri()
CELLS = [  # (kind, text); the graph is built in cell 1 and walked by backwards in cells 3 and 4
    (lsp.NotebookCellKind.Code, "import torch\nw = torch.randn(3, requires_grad=True)\nloss = torch.exp(w).sum()\n"),
    (lsp.NotebookCellKind.Markup, "# Train\nTwo backwards over one graph."),
    (lsp.NotebookCellKind.Code, "loss.backward()\nprint(w.grad)\n"),
    (lsp.NotebookCellKind.Code, "%matplotlib inline\nloss.backward()\n"),
]


def cell_uri(i: int) -> str:
    return f"vscode-notebook-cell:{(DATA / 'train.ipynb').as_posix()}#ch{i:04d}"


def open_notebook(client: LanguageClient, cells=CELLS) -> list[str]:
    uris = [cell_uri(i) for i in range(len(cells))]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri=NOTEBOOK, notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=kind, document=uri) for (kind, _), uri in zip(cells, uris)]),
        cell_text_documents=[
            lsp.TextDocumentItem(uri=uri, language_id="python" if kind == lsp.NotebookCellKind.Code else "markdown",
                                 version=1, text=text)
            for (kind, text), uri in zip(cells, uris)]))
    return uris


async def test_diagnostic_lands_on_the_cell_that_raises(client: LanguageClient):
    uris = open_notebook(client)
    (diag,) = await wait_diagnostics(client, uris[3], bool)
    assert diag.code == "GG101"
    assert diag.range == lsp.Range(lsp.Position(1, 0), lsp.Position(1, 15))
    assert not client.diagnostics[uris[0]] and not client.diagnostics[uris[2]]
    assert uris[1] not in client.diagnostics  # markdown cells are not analysed
    related = {(r.location.uri, r.location.range.start.line) for r in diag.related_information}
    assert (uris[2], 0) in related  # freed by the backward in cell 3
    assert any(uri == uris[0] for uri, _ in related)  # built in cell 1


async def test_hover_in_a_cell_names_other_cells(client: LanguageClient):
    uris = open_notebook(client)
    await wait_diagnostics(client, uris[3], bool)
    result = await client.text_document_hover_async(lsp.HoverParams(
        text_document=lsp.TextDocumentIdentifier(uri=uris[3]), position=lsp.Position(1, 2)))
    text = result.contents.value
    assert text.startswith("**`loss`**")
    assert "**Freed here** by `loss.backward()` on cell 2, line 1" in text  # 2nd code cell, no link


async def test_quick_fix_edits_the_cell_of_the_first_backward(client: LanguageClient, tmp_path):
    uris = open_notebook(client)
    diags = await wait_diagnostics(client, uris[3], bool)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uris[3]), range=diags[0].range,
        context=lsp.CodeActionContext(diagnostics=list(diags))))
    retain = await resolved(client, next(a for a in actions if "retain_graph" in a.title))
    edits = edits_by_uri(retain.edit)
    assert set(edits) == {uris[2]}
    fixed_cell = apply_text_edits(CELLS[2][1], edits[uris[2]])
    assert fixed_cell == "loss.backward(retain_graph=True)\nprint(w.grad)\n"
    program = tmp_path / "nb.py"
    program.write_text(CELLS[0][1] + fixed_cell + CELLS[3][1].replace("%matplotlib inline\n", ""))
    assert_runs_clean(program)


async def test_cell_edits_and_deletions_update_the_cells(client: LanguageClient):
    uris = open_notebook(client)
    await wait_diagnostics(client, uris[3], bool)
    client.diagnostics.pop(uris[3])
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
        notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=2),
        change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(
            structure=lsp.NotebookDocumentCellChangeStructure(
                array=lsp.NotebookCellArrayChange(start=3, delete_count=1, cells=[]),
                did_close=[lsp.TextDocumentIdentifier(uri=uris[3])])))))
    assert not await wait_diagnostics(client, uris[3])
    # typing a second backward into cell 3 brings the finding back, there
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
        notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=3),
        change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
            lsp.NotebookDocumentCellContentChanges(
                document=lsp.VersionedTextDocumentIdentifier(uri=uris[2], version=2),
                changes=[lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(2, 0), lsp.Position(2, 0)), text="loss.backward()\n")])]))))
    (diag,) = await wait_diagnostics(client, uris[2], bool)
    assert diag.range.start.line == 2


async def test_closing_the_notebook_clears_its_cells(client: LanguageClient):
    uris = open_notebook(client)
    await wait_diagnostics(client, uris[3], bool)
    client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
        notebook_document=lsp.NotebookDocumentIdentifier(uri=NOTEBOOK),
        cell_text_documents=[lsp.TextDocumentIdentifier(uri=u) for u in uris]))
    assert not await wait_diagnostics(client, uris[3], lambda d: not d)


async def test_pull_diagnostics_for_cells(pull_client: LanguageClient):
    uris = open_notebook(pull_client)
    report = await pull_client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uris[3])))
    assert [d.code for d in report.items] == ["GG101"]
    clean = await pull_client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
        text_document=lsp.TextDocumentIdentifier(uri=uris[0])))
    assert clean.items == [] or clean.items == ()
