"""``gradguard.diagnosticScope``: with "workspace" the files never opened get diagnostics, from a
background scan (server/gradguard/lsp/workspace.py), through the real server process."""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from conftest import CONFIG, start
from lsputil import assert_raises_backward_twice, wait_diagnostics

E2E_WORKSPACE = Path(__file__).resolve().parents[1] / "e2e" / "workspace"
# the scan runs at idle priority: it needs the machine to itself (scripts/test.sh)
pytestmark = pytest.mark.alone

LIB = """import torch


def make_loss(w):
    h = torch.tanh(w * 2)
    return h.sum()
"""
TRAIN = """import torch
from model_lib import make_loss

w = torch.randn(3, requires_grad=True)
loss = make_loss(w)
loss.backward()
loss.backward()
"""
CLEAN = """import torch

w = torch.randn(3, requires_grad=True)
(w * 2).sum().backward()
print(w.grad)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project: an importer of a module, a file on its own, a clean file, a notebook, and
    a bug in a folder that ``.gitignore`` leaves out (discovery must skip it, as the CLI does)."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "model_lib.py").write_text(LIB)
    (root / "train.py").write_text(TRAIN)
    (root / "clean.py").write_text(CLEAN)
    shutil.copy(E2E_WORKSPACE / "two_losses.py", root / "two_losses.py")
    shutil.copy(E2E_WORKSPACE / "seed_notebook.ipynb", root / "seed_notebook.ipynb")
    (root / "ignored").mkdir()
    shutil.copy(E2E_WORKSPACE / "two_losses.py", root / "ignored" / "copy.py")
    (root / ".gitignore").write_text("ignored/\n.gradguard_cache/\n")
    (root / ".git").mkdir()  # the repository root .gitignore files are read from
    return root


@pytest_lsp.fixture(config=CONFIG)
async def scope_client(lsp_client: LanguageClient):
    registrations: list[lsp.Registration] = []

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        registrations.extend(params.registrations)

    lsp_client.registrations = registrations
    yield
    await lsp_client.shutdown_session()


def codes(client: LanguageClient, path: Path) -> list:
    return sorted((d.code, d.range.start.line + 1) for d in client.diagnostics.get(path.as_uri(), []))


async def scan_logs(client: LanguageClient, count: int, timeout: float = 60) -> list[str]:
    """The server's log lines of finished scans, once there are ``count`` of them."""
    async def wait():
        while True:
            lines = [m.message for m in client.log_messages if m.message.startswith("GradGuard workspace scan:")]
            if len(lines) >= count:
                return lines
            await asyncio.sleep(0.05)
    return await asyncio.wait_for(wait(), timeout)


def configure(client: LanguageClient, **settings) -> None:
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"gradguard": settings}))


def ended(client: LanguageClient) -> list:
    """(begin title, end message) of each finished work-done progress."""
    out = []
    for values in client.progress_reports.values():
        begins = [v for v in values if isinstance(v, lsp.WorkDoneProgressBegin)]
        ends = [v for v in values if isinstance(v, lsp.WorkDoneProgressEnd)]
        if begins and ends:
            out.append((begins[0].title, ends[-1].message))
    return out


@pytest.mark.asyncio
async def test_workspace_scope(scope_client: LanguageClient, project: Path) -> None:
    client = scope_client
    await start(client, root=project, options={"gradguard": {"diagnosticScope": "workspace"}})
    train, two, nb = project / "train.py", project / "two_losses.py", project / "seed_notebook.ipynb"

    # Every file, none opened: the findings are the ones gradguard check reports, on the raising lines.
    await wait_diagnostics(client, train.as_uri(), bool)
    await wait_diagnostics(client, two.as_uri(), bool)
    await wait_diagnostics(client, nb.as_uri(), bool)
    (first,) = await scan_logs(client, 1)
    assert first == "GradGuard workspace scan: 5 files", first  # not ignored/copy.py
    assert codes(client, train) == [("GG101", 7)]
    assert codes(client, two) == [("GG101", 10)]
    (cell,) = client.diagnostics[nb.as_uri()]
    assert cell.code == "GG101" and cell.message.startswith("cell 3, line 5: ")
    raw = nb.read_text().splitlines()[cell.range.start.line]
    assert "l.backward()" in raw[cell.range.start.character:cell.range.end.character + 4], raw
    assert (project / "ignored" / "copy.py").as_uri() not in client.diagnostics
    assert not client.diagnostics.get((project / "clean.py").as_uri())
    assert_raises_backward_twice(train)
    assert_raises_backward_twice(two)
    # the CLI's cache: the scan stored its results where gradguard check looks for them
    assert list((project / ".gradguard_cache").glob("*/entries.json"))

    # Work-done progress: created by the server, begun and ended.
    assert ("GradGuard: analysing the workspace", "5 files analysed") in ended(client)
    # The client watches the files for the server.
    (reg,) = [r for r in client.registrations if r.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    globs = sorted(w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in
                   (reg.register_options["watchers"] if isinstance(reg.register_options, dict)
                    else reg.register_options.watchers))
    assert globs == ["**/*.ipynb", "**/*.py"]

    # A module changes on disk: it and its importer are analysed again, and nothing else.
    (project / "model_lib.py").write_text(LIB.replace("torch.tanh(w * 2)", "torch.sigmoid(w * 3)"))
    client.diagnostics.pop(train.as_uri())
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=(project / "model_lib.py").as_uri(), type=lsp.FileChangeType.Changed)]))
    logs = await scan_logs(client, 2)
    assert logs[1] == f"GradGuard workspace scan: 2 files: {project / 'model_lib.py'}, {train}", logs
    await wait_diagnostics(client, train.as_uri(), bool)
    assert codes(client, train) == [("GG101", 7)]

    # The importer is fixed on disk: its diagnostic goes.
    train.write_text(TRAIN.replace("loss.backward()\nloss.backward()", "loss.backward()"))
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=train.as_uri(), type=lsp.FileChangeType.Changed)]))
    await wait_diagnostics(client, train.as_uri(), lambda d: not d)
    assert (await scan_logs(client, 3))[2] == f"GradGuard workspace scan: 1 file: {train}"

    # A deleted file: its diagnostics are cleared at once, without a scan.
    two.unlink()
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=two.as_uri(), type=lsp.FileChangeType.Deleted)]))
    await wait_diagnostics(client, two.as_uri(), lambda d: not d)

    # Back to "openFiles": every diagnostic the scan published is taken back.
    configure(client, diagnosticScope="openFiles")
    await wait_diagnostics(client, nb.as_uri(), lambda d: not d)
    assert not any(client.diagnostics.values()), {u: d for u, d in client.diagnostics.items() if d}


@pytest.mark.asyncio
async def test_open_files_scope_publishes_nothing_unopened(scope_client: LanguageClient, project: Path) -> None:
    client = scope_client
    await start(client, root=project)
    # the default: an open file gets its diagnostics, the others none
    uri = (project / "two_losses.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=(project / "two_losses.py").read_text())))
    await wait_diagnostics(client, uri, bool)
    await asyncio.sleep(2)  # room for a scan that should not run
    assert set(client.diagnostics) == {uri}
    assert not any(m.message.startswith("GradGuard workspace scan") for m in client.log_messages)
    assert not client.progress_reports
    assert not (project / ".gradguard_cache").exists()


@pytest.mark.asyncio
async def test_open_file_wins_and_close_goes_back_to_disk(scope_client: LanguageClient, project: Path) -> None:
    client = scope_client
    await start(client, root=project, options={"gradguard": {"diagnosticScope": "workspace"}})
    two = project / "two_losses.py"
    await scan_logs(client, 1)
    assert codes(client, two) == [("GG101", 10)]
    # opened and fixed in the editor (not saved): the open document's analysis is what shows
    fixed = two.read_text().replace("loss1.backward()", "loss1.backward(retain_graph=True)")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=two.as_uri(), language_id="python", version=1, text=fixed)))
    await wait_diagnostics(client, two.as_uri(), lambda d: not d)
    # a change of another file reaching nothing open does not bring the disk's finding back
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=two.as_uri(), type=lsp.FileChangeType.Changed)]))
    await scan_logs(client, 2)
    await asyncio.sleep(0.5)
    assert not client.diagnostics[two.as_uri()]
    # closed unsaved: the file on disk still has the bug, and the scan says so again
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=two.as_uri())))
    await wait_diagnostics(client, two.as_uri(), bool)
    assert codes(client, two) == [("GG101", 10)]


@pytest_lsp.fixture(config=CONFIG)
async def doomed_client(lsp_client: LanguageClient):
    """Initialised by the test, which then kills the server."""
    lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
    lsp_client.spawned = []  # the scan and its workers, once the test has seen them
    yield
    server = lsp_client._server
    if server is not None and server.returncode is None:  # the test failed before killing it:
        server.kill()  # (left alive, its writes to a client no longer reading would never end)
    for pid in lsp_client.spawned:  # a failed test leaves none behind holding the server's stderr,
        try:  # which the client reads to its end before it stops
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _paused(pid: int) -> bool:
    """Stopped, or with a SIGSTOP pending: a process at idle priority on a busy machine may wait
    a while for the CPU time that stopping takes (it stays "R" meanwhile, running nothing)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    pending = 0
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            pending |= int(line.split()[1], 16)
    return _state(pid) == "T" or bool(pending & (1 << (signal.SIGSTOP - 1)))


def _state(pid: int) -> str:
    """The process state letter (R, S, T: stopped, Z...), "" once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
@pytest.mark.asyncio
async def test_scan_waits_for_open_files_and_ends_with_the_server(doomed_client: LanguageClient,
                                                                   tmp_path: Path) -> None:
    client = doomed_client
    root = tmp_path / "big"
    root.mkdir()
    source = (E2E_WORKSPACE / "two_losses.py").read_text()
    for i in range(6000):  # a scan that outlasts the test on any machine (it ends with the server)
        (root / f"copy_{i}.py").write_text(source.replace("torch.randn(3", f"torch.randn({i % 7 + 2}"))
    # an open document whose analysis takes a while: many training loops
    body = (E2E_WORKSPACE / "target_in_loop.py").read_text()
    big = "\n".join(f"def run_{i}():\n" + "".join(f"    {line}\n" for line in body.splitlines()) for i in range(60))
    await start(client, root=root, options={"gradguard": {"diagnosticScope": "workspace"}})
    server = client._server.pid

    async def scan_with_workers():
        while True:
            scans = [p for p in _children(server) if b"gradguard.lsp.workspace" in Path(f"/proc/{p}/cmdline").read_bytes()]
            if scans and _children(scans[0]):
                return scans[0]
            await asyncio.sleep(0.02)
    scan = await asyncio.wait_for(scan_with_workers(), 60)
    workers = _children(scan)
    client.spawned = [scan, *workers]

    # An open document's analysis: the scan and its workers are stopped meanwhile, then resumed.
    uri = (root / "open_me.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=big)))
    seen = set()

    async def diagnosed():
        while uri not in client.diagnostics:
            seen.add((_paused(scan), *map(_paused, workers)))
            await asyncio.sleep(0.001)
    await asyncio.wait_for(diagnosed(), 120)
    assert (True,) * (1 + len(workers)) in seen, seen
    await asyncio.sleep(0.3)
    assert _state(scan) not in ("T", ""), "the scan was not resumed"

    # Killed while the scan is paused, the server takes it along: the kernel kills the scan with its
    # parent and each worker with the scan (workers.die_with_parent), whoever adopts them.
    os.killpg(scan, signal.SIGSTOP)
    os.kill(server, signal.SIGKILL)

    async def gone():
        while any(_state(p) not in ("", "Z") for p in [scan, *workers]):
            await asyncio.sleep(0.05)
    await asyncio.wait_for(gone(), 20)
