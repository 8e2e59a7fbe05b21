"""``gradguard.diagnosticScope: "workspace"`` over the real-code corpus, through the real server.

    python bench/workspace_mode.py [--corpus DIR] [--edits-every 0.4] [--baseline-edits 20] [--rescans 8]

On a temporary copy of the corpus (so that both caches start empty), prints:
  * the wall time of ``gradguard check`` (all cores, its own empty cache, then warm; a cold one
    again at the end, so that a change of the machine's load shows);
  * the wall time of the server's workspace scan, from the switch of ``diagnosticScope`` to the
    end of its work-done progress: cold, then warm in a second session, then ``--rescans``
    times after the whole folder is reported changed (``didChangeWatchedFiles``, as after a
    ``git checkout``: every file is looked up again and the cache answers);
  * an open training script's edit -> diagnostics latency (debounce excluded), one edit every
    ``--edits-every`` seconds: while each scan runs, and just before the switch and just after
    the scan (the machine's load on both sides);
  * the server process's peak RSS (VmHWM), and the peak RSS seen of its analysis process and of
    the scan (its workers included), sampled every 0.2 s;
  * the load average before and after: the machine may be shared.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types as lsp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_latency import DEBOUNCE_MS, DEFAULT_CORPUS, Client, Doc, corpus_files, edit_line, training_scripts  # noqa: E402


def status_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def is_scan(pid: int) -> bool:
    try:
        return b"gradguard.lsp.workspace" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


class ScopeClient(Client):
    """The latency bench's client, which also accepts work-done progress, notes its end and
    counts the files that got findings."""

    def __init__(self) -> None:
        super().__init__()
        self.ended = asyncio.Event()
        self.ended_at = 0.0
        self.files_published: set[str] = set()
        self.protocol.fm.features.pop(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # the one below instead

        @self.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def create(params: lsp.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(lsp.PROGRESS)
        def progress(params: lsp.ProgressParams) -> None:
            value = params.value
            kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
            if kind == "end":
                self.ended_at = time.perf_counter()
                self.ended.set()

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.published[params.uri] = (time.perf_counter(), params.version)
            if params.diagnostics:
                self.files_published.add(params.uri)
            else:
                self.files_published.discard(params.uri)
            self.changed.set()


async def session(root: Path) -> ScopeClient:
    """A server on ``root``, its scope "openFiles" until told otherwise."""
    client = ScopeClient()
    await client.start_io(sys.executable, "-m", "gradguard", "lsp")
    caps = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
            related_information=True, version_support=True)),
        window=lsp.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=caps, process_id=None, root_uri=root.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)]))
    client.initialized(lsp.InitializedParams())
    return client


async def close(client: Client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def check(root: Path, cache: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gradguard", "check", "-q", "--exit-zero", "--cache-dir", str(cache),
                    str(root)], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # 2: some
    # files of the corpus do not parse (reported, the others analysed), as in the server's scan
    return time.perf_counter() - start


def quantiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return f"p50 {statistics.median(ordered):6.1f} ms  p95 {p95:6.1f} ms  max {ordered[-1]:6.1f} ms  (n={len(ordered)})"


async def edit_until(client: Client, doc: Doc, stop, every: float, rng: random.Random) -> list[float]:
    """Edits ``every`` seconds until ``stop()``; each one's latency, debounce excluded."""
    out = []
    while not stop():
        line = edit_line(doc.doc.source, rng)
        sent = time.perf_counter()
        doc.insert_comment(line)
        stamp = await client.published_version(doc.uri, doc.version)
        out.append((stamp - sent) * 1000 - DEBOUNCE_MS)
        await asyncio.sleep(max(0.0, every - (time.perf_counter() - sent)))
    return out


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


async def watch_memory(pid: int, peaks: dict, stop: asyncio.Event) -> None:
    """The peak RSS of the server's children: the analysis process, and the scan with its workers."""
    while not stop.is_set():
        for kid in children(pid):
            if is_scan(kid):
                tree = [kid]
                while tree[-1:] and len(tree) < 64:
                    more = [g for t in tree for g in children(t) if g not in tree]
                    if not more:
                        break
                    tree += more
                peaks["scan"] = max(peaks["scan"], sum(status_mb(t, "VmRSS") for t in tree))
            else:
                peaks["analysis"] = max(peaks["analysis"], status_mb(kid, "VmRSS"))
        await asyncio.sleep(0.2)


async def scan_session(root: Path, script: tuple[Path, str], every: float, baseline: int, rescans: int,
                       label: str) -> None:
    """The open script is edited before the scan (scope "openFiles"), while it runs (from the
    switch to "workspace" to the end of its progress) and after it: the machine's load on both
    sides of the figure that matters. Then ``rescans`` times the whole folder is reported
    changed (as after a ``git checkout``): every file is looked up again, the cache answers."""
    client = await session(root)
    pid = client._server.pid
    peaks = {"scan": 0.0, "analysis": 0.0}
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(watch_memory(pid, peaks, stop))
    path, text = script
    doc = Doc(client, path, text)
    await client.published_version(doc.uri, 1)

    def counted(n: int):
        count = [0]

        def done() -> bool:
            count[0] += 1
            return count[0] > n
        return done
    rng = random.Random(1)
    before = await edit_until(client, doc, counted(baseline), every, rng)
    started = time.perf_counter()
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"gradguard": {"diagnosticScope": "workspace"}}))
    during = await edit_until(client, doc, client.ended.is_set, every, rng)
    await client.ended.wait()
    filled = client.ended_at - started
    after = await edit_until(client, doc, counted(baseline), every, rng)
    print(f"  {label}: workspace scan filled diagnostics in {filled:.1f} s "
          f"({len(client.files_published)} files with findings published)")
    for name, values in (("before the scan", before), ("during the scan", during), ("after the scan", after)):
        if values:
            print(f"    open file edit -> diagnostics {name + ':':<17} {quantiles(values)}")
    again, fills = [], []
    for _ in range(rescans):
        client.ended.clear()
        started = time.perf_counter()
        client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=root.as_uri(), type=lsp.FileChangeType.Changed)]))
        again += await edit_until(client, doc, client.ended.is_set, every, rng)
        await client.ended.wait()
        fills.append(client.ended_at - started)
    if rescans:
        print(f"    the whole folder reported changed, {rescans} times: each scan {statistics.median(fills):.1f} s "
              f"(median; {min(fills):.1f}-{max(fills):.1f} s)")
        print(f"    open file edit -> diagnostics during them:  {quantiles(again)}")
    stop.set()
    await watcher
    print(f"    server peak RSS (VmHWM) {status_mb(pid, 'VmHWM'):.1f} MB; its analysis process up to "
          f"{peaks['analysis']:.1f} MB; the scan with its workers up to {peaks['scan']:.1f} MB (separate processes)")
    doc.close()
    await close(client)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--edits-every", type=float, default=0.4)
    parser.add_argument("--baseline-edits", type=int, default=20)
    parser.add_argument("--rescans", type=int, default=8,
                        help="warm: how many times the whole folder is reported changed")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="gradguard-workspace-bench-") as tmp:
        root = Path(tmp, "corpus")
        shutil.copytree(args.corpus, root, ignore=shutil.ignore_patterns(".gradguard_cache"))
        files = sum(1 for p in root.rglob("*") if p.suffix in (".py", ".ipynb"))
        print(f"corpus copy: {files} .py/.ipynb files")
        script = training_scripts(corpus_files(root), 1, 2200)[0]
        print(f"open file: {script[0].relative_to(root)} ({script[1].count(chr(10))} lines)")
        cli_cache = Path(tmp, "cli-cache")
        print(f"  gradguard check, cold cache: {check(root, cli_cache):.1f} s")
        print(f"  gradguard check, warm cache: {check(root, cli_cache):.1f} s")
        await scan_session(root, script, args.edits_every, args.baseline_edits, 0, "cold cache")
        await scan_session(root, script, args.edits_every, args.baseline_edits, args.rescans, "warm cache")
        # again, so that a change of the machine's load during the run shows
        print(f"  gradguard check, cold cache, after the scans: {check(root, Path(tmp, 'cli-cache-2')):.1f} s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
