"""Memory of the GradGuard language server over a long editing session on real files.

    python bench/soak.py [--corpus DIR] [--documents 200] [--edits 40000] [--burst 20] [--group 10]

Opens ``--documents`` real training scripts from the corpus (``bench/real/corpus.py`` builds
it), then edits them ``--edits`` times: bursts of ``--burst`` keystroke-sized changes to one
document (typing; the debounce folds a burst into one analysis), ``--group`` documents at a time,
then waits for their diagnostics. Each group also saves one document, closes and reopens
another, and hovers. The server's resident memory and its child processes' (the analysis process and multiprocessing's resource tracker) are sampled after
every group. Prints the figures after warm-up (the first ``--warmup`` of the edits): first,
last, lowest, highest. Target (issue 11): flat within 10 MB after warm-up.
"""
from __future__ import annotations

import argparse
import asyncio
import gc
import random
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from lsp_latency import (DEFAULT_CORPUS, Doc, children, close, corpus_files, is_analysis_process,  # noqa: E402
                         rss_mb, session)


def pick(files, count: int, seed: int = 0):
    scripts = [f for f in files if ".backward(" in f[1] and 30 <= f[1].count("\n") <= 400]
    return random.Random(seed).sample(scripts, min(count, len(scripts)))


def toggle(doc: Doc) -> None:
    """One keystroke-sized change that leaves the text as it was every second time."""
    doc.version += 1
    if doc.doc.lines and doc.doc.lines[0] == "#\n":
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(1, 0)), text="")
    else:
        change = lsp.TextDocumentContentChangePartial(
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)), text="#\n")
    doc.doc.apply_change(change)
    doc.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version), [change]))


async def main() -> None:
    gc.disable()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--edits", type=int, default=40_000)
    parser.add_argument("--burst", type=int, default=20)
    parser.add_argument("--group", type=int, default=10)
    parser.add_argument("--warmup", type=float, default=0.2, help="share of the edits before measuring")
    args = parser.parse_args()
    if not args.corpus.is_dir():
        sys.exit(f"no corpus at {args.corpus}: run  python bench/real/corpus.py  first")
    root = args.corpus.resolve()
    chosen = pick(corpus_files(root), args.documents)
    client = await session(False, root)
    pid = client._server.pid
    started = time.monotonic()
    docs = [Doc(client, path, text) for path, text in chosen]
    for doc in docs:
        await client.published_version(doc.uri, 1)
    print(f"{len(docs)} documents open ({sum(d.doc.source.count(chr(10)) for d in docs):,} lines) "
          f"in {time.monotonic() - started:.0f} s")

    samples: list[tuple[int, float, float]] = []  # (edits so far, server MB, its child processes MB)
    analysis_pids: set[int] = set()
    edits, turn = 0, 0
    while edits < args.edits:
        group = [docs[(turn * args.group + i) % len(docs)] for i in range(args.group)]
        turn += 1
        for doc in group:
            for _ in range(args.burst):
                toggle(doc)
                edits += 1
        saved, reopened = group[0], group[-1]
        client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(saved.uri)))
        reopened.close()
        index = docs.index(reopened)
        docs[index] = Doc(client, Path(reopened.doc.path), reopened.doc.source)
        group[-1] = docs[index]
        for doc in group:
            await client.published_version(doc.uri, doc.version)
        await client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri=group[0].uri), lsp.Position(0, 0)))
        kids = children(pid)
        analysis_pids.update(k for k in kids if is_analysis_process(k))
        samples.append((edits, rss_mb(pid), sum(rss_mb(k) for k in kids)))
        if turn % 20 == 0:
            print(f"  {edits:6d} edits  server {samples[-1][1]:6.1f} MB  children {samples[-1][2]:6.1f} MB"
                  f"  ({time.monotonic() - started:.0f} s)", flush=True)
    await close(client)

    after = [s for s in samples if s[0] > args.warmup * args.edits]
    for label, column in (("server", 1), ("child processes", 2), ("all", None)):
        values = [s[1] + s[2] if column is None else s[column] for s in after]
        print(f"{label:<17} after warm-up: first {values[0]:6.1f} MB  last {values[-1]:6.1f} MB  "
              f"lowest {min(values):6.1f} MB  highest {max(values):6.1f} MB  "
              f"(spread {max(values) - min(values):4.1f} MB, last - first {values[-1] - values[0]:+5.1f} MB)")
    print(f"{edits} edits on {len(docs)} documents in {time.monotonic() - started:.0f} s; "
          f"analysis processes seen: {len(analysis_pids)}")


if __name__ == "__main__":
    asyncio.run(main())
