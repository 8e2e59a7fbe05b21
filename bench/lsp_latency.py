"""Latency and memory of the GradGuard language server on real code, through the real process.

    python bench/lsp_latency.py [--corpus DIR] [--scripts 20] [--slowest 3] [--edits 12]
                                [--files 200] [--quick] [--build wheel|source]

The server runs from the wheel users install (``build_under_test.py``; ``--build source``: the
working tree's sources, pure Python), and so does the in-process analysis it is compared with.

Files come from the real-code corpus (``bench/real/corpus.py`` builds it): the ``--scripts``
longest training scripts (files with a ``.backward(`` call, up to ``--max-lines``) and the
``--slowest`` files of the corpus (each file timed once here with ``analyze_source``). Prints
p50/p95 of
  * didChange -> publishDiagnostics, the server's debounce subtracted, one edit at a time;
  * a typing burst (edits ``DEBOUNCE`` + 50 ms apart, each arriving while the previous one is
    analysed): last edit -> its diagnostics, debounce subtracted;
  * didChange -> textDocument/diagnostic (pull: no debounce);
  * hover when idle, and hover sent while an analysis of a newer version runs;
  * for comparison, one analysis of each script in this process (CPU time): what the server
    cannot go below;
and the server's resident memory with ``--files`` real files open. Targets (issue 7): diagnostics
p95 <= 50 ms on scripts up to ~2,000 lines and <= 250 ms on the slowest file, hover p95 <= 20 ms,
<= 150 MB with 200 files open. Wall-clock times, so an otherwise busy machine shows in them.
"""
from __future__ import annotations

import argparse
import ast
import asyncio
import gc
import os
import random
import statistics
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.client import BaseLanguageClient
from pygls.workspace import TextDocument

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import build_under_test  # noqa: E402

_build = argparse.ArgumentParser(add_help=False)
_build.add_argument("--build", choices=build_under_test.BUILDS, default="wheel")
SITE = build_under_test.folder(_build.parse_known_args()[0].build)
sys.path.insert(0, SITE)

from gradguard.analysis import analyze_source  # noqa: E402
from gradguard.lsp.server import DEBOUNCE_SECONDS  # noqa: E402
from gradguard.sources import SourceError, read_python  # noqa: E402

DEBOUNCE_MS = DEBOUNCE_SECONDS * 1000
DEFAULT_CORPUS = HERE / "real" / ".corpus"


# --- the corpus ---------------------------------------------------------------------------------

def corpus_files(root: Path) -> list[tuple[Path, str]]:
    out = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = Path(directory, name)
                try:
                    text = read_python(str(path))
                    ast.parse(text)
                except (SourceError, SyntaxError, ValueError):
                    continue
                out.append((path, text))
    return out


def training_scripts(files, count: int, max_lines: int) -> list[tuple[Path, str]]:
    scripts = [f for f in files if ".backward(" in f[1] and f[1].count("\n") <= max_lines]
    return sorted(scripts, key=lambda f: -f[1].count("\n"))[:count]


def analysis_times(files, root: Path) -> list[tuple[Path, str, float]]:
    """CPU time of one analysis of each file here (in one process, so with the module cache of
    the files timed before), as the server's analysis process runs it."""
    timed = []
    for path, text in files:
        project = root / path.relative_to(root).parts[0]
        start = time.process_time()
        try:
            analyze_source(text, str(path), str(project), facts=True)
        except SourceError:
            continue
        timed.append((path, text, time.process_time() - start))
    return timed


def edit_line(text: str, rng: random.Random) -> int:
    """A 0-based line of ``text`` where a statement starts: a comment line inserted there keeps
    the file valid."""
    return rng.choice(sorted({n.lineno - 1 for n in ast.walk(ast.parse(text)) if isinstance(n, ast.stmt)}))


def hover_targets(text: str, limit: int = 40) -> list[lsp.Position]:
    """Names on lines that build a loss or call backward: what a user hovers."""
    targets = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Name) and node.lineno == node.end_lineno:
            line = text.split("\n", node.lineno)[node.lineno - 1] if node.lineno else ""
            if ("backward" in line or "loss" in line) and line.isascii():
                targets.append(lsp.Position(node.lineno - 1, node.col_offset))
    random.Random(0).shuffle(targets)
    return targets[:limit]


# --- the client -----------------------------------------------------------------------------------

class Client(BaseLanguageClient):
    def __init__(self) -> None:
        super().__init__("gradguard-bench", "1")
        self.published: dict[str, tuple[float, int]] = {}
        self.changed = asyncio.Event()

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (time.perf_counter(), params.version)
            self.changed.set()

        @self.feature(lsp.WINDOW_LOG_MESSAGE)
        def on_log(params: lsp.LogMessageParams) -> None:
            if params.type <= lsp.MessageType.Warning:
                print(f"  server: {params.message[:2000]}", file=sys.stderr)

    async def published_version(self, uri: str, version: int, timeout: float = 120) -> float:
        async def wait():
            while True:
                stamp, seen = self.published.get(uri, (0.0, None))
                if seen == version:
                    return stamp
                self.changed.clear()
                await self.changed.wait()
        return await asyncio.wait_for(wait(), timeout)


async def session(pull: bool, root: Path) -> Client:
    client = Client()
    await client.start_io(sys.executable, "-m", "gradguard", "lsp",
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (SITE, os.environ.get("PYTHONPATH"))))})
    text_caps = lsp.TextDocumentClientCapabilities(
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown]),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(related_information=True,
                                                                     version_support=True),
        diagnostic=lsp.DiagnosticClientCapabilities() if pull else None)
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(text_document=text_caps), process_id=None,
        root_uri=root.as_uri()))
    client.initialized(lsp.InitializedParams())
    return client


async def close(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


class Doc:
    """An open document and the text the server holds for it."""

    def __init__(self, client: Client, path: Path, text: str):
        self.client, self.uri, self.version = client, path.as_uri(), 1
        self.doc = TextDocument(self.uri, text)
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=self.uri, language_id="python", version=1, text=text)))

    def insert_comment(self, line: int) -> None:
        self.version += 1
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0)), text=f"# edit {self.version}\n")
        self.doc.apply_change(change)
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version), [change]))

    async def hover(self, position: lsp.Position) -> tuple[float, bool]:
        start = time.perf_counter()
        answer = await self.client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(uri=self.uri), position))
        return (time.perf_counter() - start) * 1000, answer is not None

    def close(self) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(self.uri)))


# --- measurements ---------------------------------------------------------------------------------

class Figures:
    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self.counts: dict[str, list[int]] = {}

    def add(self, label: str, value: float) -> None:
        self.samples.setdefault(label, []).append(value)

    def hit(self, label: str, found: bool) -> None:
        self.counts.setdefault(label, [0, 0])[0 if found else 1] += 1

    def print(self) -> None:
        for label, values in self.samples.items():
            ordered = sorted(values)
            p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
            extra = ""
            if label in self.counts:
                found, empty = self.counts[label]
                extra = f"  ({found} with content)"
            print(f"  {label:<62} p50 {statistics.median(ordered):7.1f} ms  p95 {p95:7.1f} ms  "
                  f"max {ordered[-1]:7.1f} ms  (n={len(ordered)}){extra}")


async def bench_push(files, root: Path, edits: int, figures: Figures, group: str) -> None:
    client = await session(False, root)
    for n, (path, text) in enumerate(files):
        doc = Doc(client, path, text)
        try:
            await push_one(client, doc, n, edits, figures, group)
        except asyncio.TimeoutError:
            print(f"  no diagnostics for version {doc.version} of {path} in time: file skipped", file=sys.stderr)
        doc.close()
    await close(client)


async def push_one(client: Client, doc: Doc, n: int, edits: int, figures: Figures, group: str) -> None:
    rng = random.Random(n)
    await client.published_version(doc.uri, 1)
    for _ in range(edits):
        line = edit_line(doc.doc.source, rng)  # before the clock starts: a parse of the file
        sent = time.perf_counter()
        doc.insert_comment(line)
        stamp = await client.published_version(doc.uri, doc.version)
        figures.add(f"{group}: edit -> diagnostics, debounce excluded", (stamp - sent) * 1000 - DEBOUNCE_MS)
    # a typing burst: each edit lands while the previous version is being analysed
    for _ in range(4):
        line = edit_line(doc.doc.source, rng)
        sent = time.perf_counter()
        doc.insert_comment(line)
        await asyncio.sleep(DEBOUNCE_SECONDS + 0.05)
    stamp = await client.published_version(doc.uri, doc.version)
    figures.add(f"{group}: typing burst, last edit -> diagnostics, debounce excl.",
                (stamp - sent) * 1000 - DEBOUNCE_MS)
    # hovers: idle (index ready), then each sent while a newer version is analysed
    await asyncio.sleep(0.5)
    targets = hover_targets(doc.doc.source)
    for position in targets[:20]:
        ms, found = await doc.hover(position)
        figures.add(f"{group}: hover, idle", ms)
        figures.hit(f"{group}: hover, idle", found)
    for position in targets[:8]:
        doc.insert_comment(len(doc.doc.lines))  # at the end: the hovered lines stay put
        await asyncio.sleep(DEBOUNCE_SECONDS + 0.01)
        ms, found = await doc.hover(position)
        figures.add(f"{group}: hover while an analysis runs", ms)
        figures.hit(f"{group}: hover while an analysis runs", found)
        await client.published_version(doc.uri, doc.version)


async def bench_pull(files, root: Path, edits: int, figures: Figures, group: str) -> None:
    client = await session(True, root)
    for n, (path, text) in enumerate(files):
        rng = random.Random(n)
        doc = Doc(client, path, text)
        params = lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri=doc.uri))
        await client.text_document_diagnostic_async(params)
        for _ in range(edits):
            line = edit_line(doc.doc.source, rng)
            start = time.perf_counter()
            doc.insert_comment(line)
            await client.text_document_diagnostic_async(params)
            figures.add(f"{group}: edit -> pulled diagnostics (no debounce)", (time.perf_counter() - start) * 1000)
        doc.close()
    await close(client)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid: int) -> list[int]:
    """The server's child processes: its analysis process and multiprocessing's resource tracker."""
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def is_analysis_process(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def rss_line(pid: int) -> str:
    """The server's RSS, and that of its child processes."""
    own, kids = rss_mb(pid), sum(rss_mb(c) for c in children(pid))
    return f"server {own:.1f} MB + child processes {kids:.1f} MB = {own + kids:.1f} MB"


async def bench_memory(files, root: Path) -> None:
    client = await session(False, root)
    pid = client._server.pid
    await asyncio.sleep(2)
    print(f"  RSS after start: {rss_line(pid)}")
    docs = [Doc(client, path, text) for path, text in files]
    for doc in docs:
        await client.published_version(doc.uri, 1)
    lines = sum(doc.doc.source.count("\n") for doc in docs)
    print(f"  RSS with {len(docs)} real files open ({lines:,} lines): {rss_line(pid)}")
    await close(client)


async def main() -> None:
    gc.disable()  # this client's own collector pauses would count as server latency
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--scripts", type=int, default=20)
    parser.add_argument("--max-lines", type=int, default=2200)
    parser.add_argument("--slowest", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=0,
                        help="how many of the longest files are timed to find the slowest (0: all, about a minute)")
    parser.add_argument("--edits", type=int, default=12)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="5 scripts, 1 slow file, 4 edits, 40 files")
    parser.add_argument("--build", choices=build_under_test.BUILDS, default="wheel",
                        help="the wheel users install (default) or the sources, pure Python")
    args = parser.parse_args()
    print(build_under_test.describe(SITE))
    if args.quick:
        args.scripts, args.slowest, args.candidates, args.edits, args.files = 5, 1, 40, 4, 40
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus}: run  python bench/real/corpus.py  first")
    root = args.corpus.resolve()
    files = corpus_files(root)
    scripts = training_scripts(files, args.scripts, args.max_lines)
    sizes = [t.count("\n") for _, t in scripts] or [0]
    print(f"corpus: {len(files)} files; {len(scripts)} training scripts of {min(sizes)}-{max(sizes)} lines")
    candidates = sorted(files, key=lambda f: -f[1].count("\n"))[:args.candidates or None]
    slow = sorted(analysis_times(candidates, root), key=lambda f: -f[2])[:args.slowest] if args.slowest else []
    for path, text, seconds in slow:
        print(f"slow file: {path.relative_to(root)} ({text.count(chr(10))} lines, "
              f"{seconds * 1000:.0f} ms CPU for one analysis in-process)")
    figures = Figures()
    for _, _, seconds in analysis_times(scripts, root):
        figures.add("scripts: one analysis in-process (CPU time, for comparison)", seconds * 1000)
    if scripts:
        await bench_push(scripts, root, args.edits, figures, "scripts")
    if slow:
        await bench_push([(p, t) for p, t, _ in slow], root, max(2, args.edits // 3), figures, "slowest")
    if scripts:
        await bench_pull(scripts, root, max(2, args.edits // 2), figures, "scripts")
    print("latency (wall clock):")
    figures.print()
    if args.files:
        print("memory:")
        by_length = sorted(files, key=lambda f: -f[1].count("\n"))
        await bench_memory(random.Random(0).sample(by_length[:len(by_length) // 2], args.files), root)


if __name__ == "__main__":
    asyncio.run(main())
