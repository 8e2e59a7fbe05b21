"""Latency and memory of the GradGuard language server, measured through the real LSP process.

    python bench/lsp_latency.py [--edits 60] [--hovers 200] [--files 200] [--lines 2000]

Prints p50/p95 of
  * didChange -> publishDiagnostics on a generated ~2,000-line training script (push; the
    server's 150 ms debounce is reported separately and subtracted),
  * didChange -> textDocument/diagnostic (pull: no debounce, the analysis itself),
  * hover on tensor names and backward calls,
and the server's resident memory with N files open.  Targets: diagnostics <= 50 ms p95
(debounce excluded), hover <= 20 ms p95, <= 150 MB RSS.  It only prints; nothing is asserted.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient
from pygls.workspace import TextDocument

DEBOUNCE_MS = 150  # gradguard.lsp.server.DEBOUNCE_SECONDS

BLOCK = '''

class Model{i}(nn.Module):
    def __init__(self, dim={dim}):
        super().__init__()
        self.trunk = nn.Linear(dim, 2 * dim)
        self.head_a = nn.Linear(2 * dim, 1)
        self.head_b = nn.Linear(2 * dim, 1)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.head_a(h), self.head_b(h)


def make_data{i}(n=64, dim={dim}):
    x = torch.randn(n, dim)
    w_true = torch.randn(dim, 1, requires_grad=True)
    y = torch.mm(x, w_true) + 0.1 * torch.randn(n, 1)
    return x, y


def train{i}(epochs=2, dim={dim}):
    model = Model{i}(dim)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = make_data{i}(dim=dim)
    for epoch in range(epochs):
        optimizer.zero_grad()
        out_a, out_b = model(x)
        loss_a = F.mse_loss(out_a, y.detach())
        loss_b = F.l1_loss(out_b, y.detach())
        total = loss_a + loss_b
        total.backward()
        optimizer.step()
    return model


def evaluate{i}(model, dim={dim}):
    with torch.no_grad():
        x, y = make_data{i}(dim=dim)
        out_a, out_b = model(x)
        err = (out_a - y).abs().mean() + (out_b - y).abs().mean()
    return err.item()
'''

BUG = '''

def two_losses():
    w = torch.randn(3, requires_grad=True)
    h = torch.tanh(w * 2)
    loss1 = h.sum()
    loss2 = (h * 3).sum()
    loss1.backward()
    loss2.backward()
    return w.grad
'''


def training_script(lines: int) -> str:
    parts = ['"""Generated training script for the latency benchmark."""\n'
             "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n", BUG]
    i = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(BLOCK.format(i=i, dim=4 + i % 5))
        i += 1
    calls = "".join(f"    evaluate{n}(train{n}())\n" for n in range(i))
    parts.append(f'\n\nif __name__ == "__main__":\n{calls}    two_losses()\n')
    return "".join(parts)


def report(label: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    print(f"{label:<58} p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ordered)})")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Client(BaseLanguageClient):
    def __init__(self) -> None:
        super().__init__("gradguard-bench", "1")
        self.published: dict[str, tuple[float, list]] = {}
        self.events: dict[str, asyncio.Event] = {}

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (time.perf_counter(), params.diagnostics)
            self.events.setdefault(params.uri, asyncio.Event()).set()

    async def published_version(self, uri: str, version: int, timeout: float = 60) -> float:
        """When diagnostics computed from ``version`` arrived (every script has a finding)."""
        async def wait():
            while True:
                event = self.events.setdefault(uri, asyncio.Event())
                stamp, diags = self.published.get(uri, (0.0, []))
                if diags and diags[0].data.get("version") == version:
                    return stamp
                event.clear()
                await event.wait()
        return await asyncio.wait_for(wait(), timeout)


async def session(pull: bool) -> Client:
    client = Client()
    await client.start_io(sys.executable, "-m", "gradguard", "lsp")
    text_caps = lsp.TextDocumentClientCapabilities(
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(related_information=True),
        diagnostic=lsp.DiagnosticClientCapabilities() if pull else None)
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(text_document=text_caps), process_id=None))
    client.initialized(lsp.InitializedParams())
    return client


async def close(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def open_doc(client: Client, path: Path, text: str) -> str:
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri


def edit(client: Client, uri: str, version: int, line: int) -> None:
    """A keystroke-sized edit: rewrite a comment inserted at ``line``."""
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)), text=f"# edit {version}\n")]))


def hover_targets(text: str) -> list[lsp.Position]:
    targets = []
    for n, line in enumerate(text.splitlines()):
        for needle in ("loss1.backward", "loss2.backward", "total.backward", "h = torch.tanh", "err = "):
            col = line.find(needle)
            if col >= 0:
                targets.append(lsp.Position(n, col))
    return targets


async def bench_push(path: Path, text: str, edits: int, hovers: int) -> None:
    client = await session(pull=False)
    uri = open_doc(client, path, text)
    await client.published_version(uri, 1)
    latencies = []
    for version in range(2, edits + 2):
        sent = time.perf_counter()
        edit(client, uri, version, 5 + version % 40)
        latencies.append((await client.published_version(uri, version) - sent) * 1000)
    report(f"didChange -> publishDiagnostics (incl. {DEBOUNCE_MS} ms debounce)", latencies)
    report("didChange -> publishDiagnostics, debounce excluded", [max(0.0, x - DEBOUNCE_MS) for x in latencies])

    targets = hover_targets(text_after_edits(uri, text, edits))
    times, found = [], 0
    for i in range(hovers):
        pos = targets[i % len(targets)]
        start = time.perf_counter()
        result = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri=uri), pos))
        times.append((time.perf_counter() - start) * 1000)
        found += result is not None
    report(f"hover ({found}/{hovers} with content)", times)
    await close(client)


def text_after_edits(uri: str, text: str, edits: int) -> str:
    """The document text after the edits, derived the way the server applies them."""
    doc = TextDocument(uri, text)
    for version in range(2, edits + 2):
        line = 5 + version % 40
        doc.apply_change(lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)), text=f"# edit {version}\n"))
    return doc.source


async def bench_pull(path: Path, text: str, edits: int) -> None:
    client = await session(pull=True)
    uri = open_doc(client, path, text)
    params = lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri=uri))
    await client.text_document_diagnostic_async(params)
    latencies = []
    for version in range(2, edits + 2):
        start = time.perf_counter()
        edit(client, uri, version, 5 + version % 40)
        answer = await client.text_document_diagnostic_async(params)
        latencies.append((time.perf_counter() - start) * 1000)
        assert answer.items, "the generated script has a finding"
    report("didChange -> textDocument/diagnostic (pull, no debounce)", latencies)
    await close(client)


async def bench_memory(directory: Path, text: str, files: int) -> None:
    client = await session(pull=False)
    pid = client._server.pid
    print(f"{'server RSS after start':<58} {rss_mb(pid):7.1f} MB")
    uris = []
    for n in range(files):
        path = directory / f"train_{n:03d}.py"
        uris.append(open_doc(client, path, text.replace("two_losses", f"two_losses_{n}")))
    for uri in uris:
        await client.published_version(uri, 1, timeout=600)
    print(f"{f'server RSS with {files} open files of {text.count(chr(10))} lines':<58} {rss_mb(pid):7.1f} MB")
    await close(client)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=60)
    parser.add_argument("--hovers", type=int, default=200)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()
    text = training_script(args.lines)
    with tempfile.TemporaryDirectory(prefix="gradguard-bench-") as tmp:
        directory = Path(tmp)
        path = directory / "train.py"
        path.write_text(text)
        print(f"generated training script: {text.count(chr(10))} lines")
        await bench_push(path, text, args.edits, args.hovers)
        await bench_pull(path, text, args.edits)
        await bench_memory(directory, text, args.files)


if __name__ == "__main__":
    asyncio.run(main())
