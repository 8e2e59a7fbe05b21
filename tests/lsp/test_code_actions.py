"""Quick fixes through the real server: each fix is applied, checked as text, and the fixed
program is run under torch to check it no longer raises."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import DATA
from lsputil import (BACKWARD_TWICE, apply_text_edits, assert_raises_backward_twice, assert_runs_clean,
                     change_text, edits_by_uri, open_text, resolved, torchrun, wait_diagnostics)


async def code_actions(client, uri, diags, only=None) -> list[lsp.CodeAction]:
    return await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=diags[0].range,
        context=lsp.CodeActionContext(diagnostics=list(diags), only=only))) or []


async def quick_fixes(client, uri, diags) -> list[lsp.CodeAction]:
    return [a for a in await code_actions(client, uri, diags) if a.kind == lsp.CodeActionKind.QuickFix]


async def apply_action(client, action, uri, text) -> str:
    action = await resolved(client, action)
    assert action.edit is not None, action.title
    return apply_text_edits(text, edits_by_uri(action.edit)[uri])


def copy_with(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


async def test_two_losses_fixes(client: LanguageClient, tmp_path):
    source = DATA / "two_losses.py"
    text = source.read_text()
    assert_raises_backward_twice(source)
    uri = open_text(client, source, text)
    diags = await wait_diagnostics(client, uri, bool)
    actions = await quick_fixes(client, uri, diags)
    titles = [a.title for a in actions]
    assert actions[0].is_preferred and "loss1 + loss2" in titles[0]
    assert not any(a.is_preferred for a in actions[1:])
    assert titles[-1] == "Suppress GG101 on this line"
    assert (await code_actions(client, uri, diags))[-1].kind == "source.fixAll.gradguard"

    summed = await apply_action(client, actions[0], uri, text)
    assert "loss1.backward()" not in summed and "(loss1 + loss2).backward()\n" in summed
    assert_runs_clean(copy_with(tmp_path, "summed.py", summed))

    (retain,) = [a for a in actions if "retain_graph" in a.title]
    retained = await apply_action(client, retain, uri, text)
    assert "loss1.backward(retain_graph=True)\nloss2.backward()\n" in retained
    assert_runs_clean(copy_with(tmp_path, "retained.py", retained))


async def test_shared_target_fixes_never_offer_retain_graph_across_a_step(client: LanguageClient, tmp_path):
    source = DATA / "shared_target.py"
    text = source.read_text()
    uri = open_text(client, source, text)
    diags = await wait_diagnostics(client, uri, bool)
    actions = await quick_fixes(client, uri, diags)
    assert not any("retain_graph" in a.title for a in actions)  # opt.step() runs in between
    no_grad, detach = actions[0], next(a for a in actions if "detach" in a.title.lower())
    assert no_grad.is_preferred and "no_grad" in no_grad.title

    wrapped = await apply_action(client, no_grad, uri, text)
    assert "with torch.no_grad():\n    Y = torch.mm(X, true_w) + 1\n" in wrapped
    assert_runs_clean(copy_with(tmp_path, "wrapped.py", wrapped))

    detached = await apply_action(client, detach, uri, text)
    assert "Y = (torch.mm(X, true_w) + 1).detach()\n" in detached
    assert_runs_clean(copy_with(tmp_path, "detached.py", detached))


async def test_suppression_removes_the_diagnostic(client: LanguageClient):
    source = DATA / "two_losses.py"
    text = source.read_text()
    uri = open_text(client, source, text)
    diags = await wait_diagnostics(client, uri, bool)
    suppress = (await quick_fixes(client, uri, diags))[-1]
    suppressed = await apply_action(client, suppress, uri, text)
    assert "loss2.backward()  # gradguard: ignore[GG101]\n" in suppressed
    change_text(client, uri, 2, suppressed)
    assert not await wait_diagnostics(client, uri, lambda d: not d)


async def test_fix_all_applies_every_preferred_fix(client: LanguageClient, tmp_path):
    source = DATA / "two_bugs.py"
    text = source.read_text()
    for arg in ("fit", "heads"):
        assert BACKWARD_TWICE in torchrun.run(source, arg).stderr
    uri = open_text(client, source, text)
    diags = await wait_diagnostics(client, uri, lambda d: len(d) == 2)
    (fix_all,) = await code_actions(client, uri, diags, only=["source.fixAll"])
    assert fix_all.kind == "source.fixAll.gradguard"
    fixed = await apply_action(client, fix_all, uri, text)
    assert "    with torch.no_grad():\n        target = torch.tanh(w * x)\n" in fixed
    assert "    (loss1 + loss2).backward()\n" in fixed
    path = copy_with(tmp_path, "fixed_all.py", fixed)
    for arg in ("fit", "heads"):
        proc = torchrun.run(path, arg)
        assert proc.returncode == 0, proc.stderr
    change_text(client, uri, 2, fixed)
    assert not await wait_diagnostics(client, uri, lambda d: not d)


async def test_eager_clients_get_edits_without_resolve(eager_client: LanguageClient, tmp_path):
    source = DATA / "two_losses.py"
    text = source.read_text()
    uri = open_text(eager_client, source, text)
    diags = await wait_diagnostics(eager_client, uri, bool)
    actions = await quick_fixes(eager_client, uri, diags)
    assert actions and all(a.edit is not None and a.data is None for a in actions)
    fixed = apply_text_edits(text, edits_by_uri(actions[0].edit)[uri])
    assert_runs_clean(copy_with(tmp_path, "eager.py", fixed))


async def test_actions_follow_the_current_text_when_diagnostics_are_stale(client: LanguageClient):
    source = DATA / "two_losses.py"
    text = source.read_text()
    uri = open_text(client, source, text)
    stale = await wait_diagnostics(client, uri, bool)
    shifted = "# a new first line\n" + text
    change_text(client, uri, 2, shifted)
    # the client still shows version-1 diagnostics; the action must edit version 2's text
    actions = await quick_fixes(client, uri, [
        lsp.Diagnostic(range=lsp.Range(lsp.Position(10, 0), lsp.Position(10, 16)), message=stale[0].message,
                       source="gradguard", code="GG101", data=stale[0].data)])
    fixed = await apply_action(client, actions[0], uri, shifted)
    assert fixed.startswith("# a new first line\n") and "(loss1 + loss2).backward()\n" in fixed


@pytest.mark.parametrize("name", ["two_losses.py", "shared_target.py", "utf16.py"])
async def test_every_offered_fix_parses_and_runs(client: LanguageClient, tmp_path, name):
    source = DATA / name
    text = source.read_text(encoding="utf-8")
    uri = open_text(client, source, text)
    diags = await wait_diagnostics(client, uri, bool)
    for i, action in enumerate(await quick_fixes(client, uri, diags)):
        fixed = await apply_action(client, action, uri, text)
        compile(fixed, name, "exec")
        if not action.title.startswith("Suppress"):
            assert_runs_clean(copy_with(tmp_path, f"{i}_{name}", fixed))
