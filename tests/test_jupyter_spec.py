"""jupyter-lsp's spec for GradGuard (gradguard/jupyter_spec.py): found through the entry point,
valid in the shape jupyter-lsp checks, and its command starts a server that answers.

jupyterlab-lsp sends a notebook as one Python text document named like the notebook
(``.../name.ipynb``, language ``python``, the code cells joined by blank lines): the server must
analyse that text as Python, not look for notebook JSON, and its quick fixes must be edits of
that text that leave the other cells alone. The JupyterLab end-to-end test
(tests/e2e/test_jupyterlab.py) shows the same in a real JupyterLab.
"""
from __future__ import annotations

import json
import os
import subprocess
import time
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from gradguard import __version__, jupyter_spec

NOTEBOOK = Path(__file__).parent / "e2e" / "workspace" / "seed_notebook.ipynb"


def test_the_entry_point_resolves_to_the_spec():
    (ep,) = [ep for ep in entry_points(group="jupyter_lsp_spec_v1") if ep.name == "gradguard"]
    assert ep.load() is jupyter_spec.spec


def test_the_spec_has_what_jupyter_lsp_requires():
    specs = jupyter_spec.spec(manager=None)
    assert list(specs) == ["gradguard"]
    spec = specs["gradguard"]
    # jupyter-lsp's schema (version 2) requires argv, languages and version
    assert spec["version"] == 2 and spec["languages"] == ["python"]
    assert spec["argv"][1:] == ["-m", "gradguard", "lsp"] and Path(spec["argv"][0]).is_file()
    assert "text/x-ipython" in spec["mime_types"]
    assert spec["requires_documents_on_disk"] is False
    assert __version__ in spec["display_name"]
    assert all(isinstance(v, str) for v in spec["env"].values())


class _Client:
    """JSON-RPC over the spec's command's stdio, as jupyter-lsp speaks it."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env={**os.environ, **env})
        self.next_id = 0

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def receive(self) -> dict:
        length = None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the server closed its output"
            if line.strip() == b"":
                break
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        return json.loads(self.proc.stdout.read(length))

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            msg = self.receive()
            if msg.get("id") == self.next_id and "method" not in msg:
                return msg

    def wait_for(self, method: str, timeout: float = 60.0) -> dict:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            msg = self.receive()
            if msg.get("method") == method:
                return msg
        raise AssertionError(f"no {method} within {timeout} s")


@pytest.fixture
def client():
    spec = jupyter_spec.spec()["gradguard"]
    c = _Client(spec["argv"], spec["env"])
    yield c
    try:
        c.request("shutdown", None)
        c.send({"method": "exit"})
        c.proc.wait(timeout=10)
    finally:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def test_the_command_answers_initialize_and_serves_a_virtual_notebook(client, tmp_path):
    reply = client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
    result = reply["result"]
    assert result["serverInfo"] == {"name": "gradguard", "version": __version__}
    assert result["capabilities"]["hoverProvider"] and result["capabilities"]["codeActionProvider"]
    client.send({"method": "initialized", "params": {}})

    # the notebook as jupyterlab-lsp sends it: code cells joined by two blank lines, under the
    # notebook's own name (no such file on disk: requires_documents_on_disk is false)
    cells = ["".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"] if c["cell_type"] == "code"]
    text = "\n\n\n".join(cells) + "\n"
    uri = (tmp_path / NOTEBOOK.name).as_uri()
    client.send({"method": "textDocument/didOpen",
                 "params": {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}})
    diags = client.wait_for("textDocument/publishDiagnostics")["params"]
    assert diags["uri"] == uri
    (d,) = diags["diagnostics"]
    line = text.splitlines()[d["range"]["start"]["line"]]
    assert d["code"] == "GG101" and line.strip() == "l.backward()"

    # its quick fix is an edit of that text, which client/jupyterlab (jupyterlab-lsp 5.3.0 asks
    # for no code actions) maps to the cells; applied, the notebook is clean
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": d["range"], "context": {"diagnostics": [d]}})["result"]
    (no_grad,) = [a for a in actions if "no_grad" in a["title"]]
    fixed = _apply(text, no_grad["edit"]["changes"][uri])
    fixed_cells = fixed.split("\n\n\n")
    assert len(fixed_cells) == 3 and fixed_cells[1:] == text.split("\n\n\n")[1:]
    assert fixed_cells[0].endswith("with torch.no_grad():\n    Y = torch.mm(X, true_W) + true_b")
    client.send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}})
    assert client.wait_for("textDocument/publishDiagnostics")["params"]["diagnostics"] == []


def _apply(text: str, edits: list[dict]) -> str:
    """LSP text edits applied to an ASCII text (character offsets are UTF-16 units)."""
    lines = text.splitlines(keepends=True)
    starts = [sum(map(len, lines[:i])) for i in range(len(lines) + 1)]

    def offset(pos: dict) -> int:
        return starts[pos["line"]] + pos["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        text = text[:offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]):]
    return text
