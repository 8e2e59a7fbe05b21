"""What the graph pictures, code lenses and inlay hints cost, on real code.

    python bench/graph_cost.py [--corpus DIR] [--scripts 20] [--repeat 5]

On the ``--scripts`` longest real training scripts of the corpus (``bench/real/corpus.py``
builds it; the same choice as ``bench/lsp_latency.py``): the CPU time of the analysis the
server runs for diagnostics and of the one that also records the hover facts, against the time
of every code lens (``codeLens: all``) and of the inlay hints of the whole file, drawn from
those facts. Then the picture of every finding in the corpus files with one, and of every
finding of the bug fixtures (``tests/fixtures``, the seeds among them): building it and
rendering its SVG, the slowest of ``--repeat`` runs each. Targets (issue 26): a picture
<= 50 ms; lenses and hints <= 10 % of an analysis.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE))

from gradguard import graph_render  # noqa: E402
from gradguard.analysis import analyze_path, analyze_source  # noqa: E402
from gradguard.explain import source_lines, texter  # noqa: E402
from gradguard.graph_picture import build  # noqa: E402
from gradguard.lsp.lenses import backward_lenses, inlay_hints  # noqa: E402
from gradguard.sources import SourceError  # noqa: E402
from lsp_latency import DEFAULT_CORPUS, corpus_files, training_scripts  # noqa: E402


def cpu(fn, repeat: int) -> tuple[float, object]:
    """The fastest of ``repeat`` runs (CPU seconds; the machine is shared) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def with_facts(text: str, path: str, project: str):
    analysis = analyze_source(text, path, project, facts=True)
    analysis.facts
    return analysis


def picture_cost(path: str, repeat: int) -> list[tuple[str, float]]:
    """(place, slowest build + render in seconds) of each finding of ``path``."""
    analysis = analyze_path(path, facts=True)
    text = texter(path, source_lines(path))
    facts = analysis.facts
    out = []
    for finding in analysis.findings:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            graph_render.svg(build(finding, facts, text))
            times.append(time.perf_counter() - start)
        out.append((f"{path}:{finding.location.line} {finding.code}", max(times)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--scripts", type=int, default=20)
    parser.add_argument("--max-lines", type=int, default=2200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    files = corpus_files(args.corpus)
    scripts = training_scripts(files, args.scripts, args.max_lines)
    ratios, rows = [], []
    for path, text in scripts:
        project = str(args.corpus / path.relative_to(args.corpus).parts[0])
        try:
            plain, _ = cpu(lambda: analyze_source(text, str(path), project), args.repeat)
            # the hover index is built on first use: part of the analysis with facts, as in the server
            full, analysis = cpu(lambda: with_facts(text, str(path), project), args.repeat)
        except SourceError:
            continue
        facts = analysis.facts
        lines = text.split("\n")
        drawn, _ = cpu(lambda: (backward_lenses(facts, analysis.findings, "all"),
                                inlay_hints(facts, lines, 1, len(lines))), args.repeat)
        ratios.append(drawn / plain)
        rows.append((path.relative_to(args.corpus), len(lines), plain, full, drawn))
    print(f"{'script':70} {'lines':>6} {'diag ms':>8} {'facts ms':>9} {'lens+hints ms':>13} {'% of diag':>9}")
    for name, n, plain, full, drawn in rows:
        print(f"{str(name)[:70]:70} {n:6} {plain * 1000:8.1f} {full * 1000:9.1f} {drawn * 1000:13.2f} "
              f"{100 * drawn / plain:8.1f}%")
    print(f"lenses + hints over {len(rows)} scripts: median {100 * statistics.median(ratios):.1f} %, "
          f"max {100 * max(ratios):.1f} % of the diagnostics analysis; median "
          f"{100 * statistics.median(r[4] / r[3] for r in rows):.1f} % of the analysis with facts")

    with_findings = []
    for path, text in files:
        project = str(args.corpus / path.relative_to(args.corpus).parts[0])
        try:
            if analyze_source(text, str(path), project).findings:
                with_findings.append(str(path))
        except SourceError:
            continue
    fixtures = sorted(str(p) for p in (HERE.parent / "tests" / "fixtures").glob("*_bug.py"))
    costs = [c for path in with_findings + fixtures for c in picture_cost(path, args.repeat)]
    corpus_costs = [c for c in costs if not c[0].startswith(str(HERE.parent / "tests"))]
    for place, seconds in corpus_costs:
        print(f"picture, corpus: {place}: {seconds * 1000:.2f} ms")
    slowest = max(costs, key=lambda c: c[1])
    print(f"pictures of {len(costs)} findings ({len(corpus_costs)} in the corpus): median "
          f"{statistics.median(c[1] for c in costs) * 1000:.2f} ms, slowest {slowest[1] * 1000:.2f} ms ({slowest[0]})")


if __name__ == "__main__":
    main()
