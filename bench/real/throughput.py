"""Engine speed on real code: ``gradguard check`` next to bare ``ast.parse`` on the same files.

    python bench/real/throughput.py [--build wheel|source] [--corpus DIR] [--repos a,b] [--repeat N] [--no-cli]
                                    [--slowest N] [--profile F]

Measures the wheel users install, its engine compiled by setup.py (``--build wheel``, the default;
built once per version of the sources, ``build_under_test.py``), or the working tree's sources
(``--build source``, pure Python). Builds the corpus first if needed (``corpus.py``; pass
``--mirror`` through to it). Prints:

1. In this process, file by file (CPU time): ``ast.parse`` alone, then GradGuard's analysis of the
   same file (read, parse, scan, interpretation); lines per CPU-second of each, their ratio, and
   the slowest files. Every file is analysed with a fresh module cache of its own *project* (the
   repository), as one ``gradguard check`` over that repository would. The two are interleaved
   repository by repository, so that the load of a shared machine hits both alike, and the whole
   is repeated ``--repeat`` times from cold caches (default 3): the headline is the median run.
2. ``gradguard check`` as users run it, over the whole corpus in a child process (CPU time of
   the child and its workers, the largest process's peak RSS): ``--jobs 1`` and all cores, each
   ``--repeat`` times from a cold cache (the median is reported; each run's ratio is to an
   ``ast.parse`` pass made just before it), then once warm.

All findings are written to ``--findings FILE`` (JSON lines) for review.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import cProfile
import gc
import json
import os
import pstats
import resource
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.append(os.path.dirname(HERE))  # for cli_cache and build_under_test; real/corpus.py comes first

import build_under_test  # noqa: E402
import cli_cache  # noqa: E402
import corpus  # noqa: E402


def python_files(root: str, suffix: str = ".py") -> list[str]:
    out = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(suffix))
    return out


def notebook_cells(paths: list[str]) -> list[str]:
    """The code cells of the notebooks ``gradguard check`` reads too (its runs' parse baseline)."""
    cells = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                nb = json.load(f)
        except (OSError, ValueError):
            continue
        for cell in nb.get("cells", []) if isinstance(nb, dict) else []:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                source = cell.get("source", "")
                cells.append("".join(source) if isinstance(source, list) else str(source))
    return cells


def parse_texts(texts: list[str]) -> float:
    total = 0.0
    for text in texts:
        t = time.process_time()
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):  # IPython magics
            pass
        total += time.process_time() - t
    return total


def parse_pass(files: list[str]) -> tuple[float, int, dict]:
    total, lines, per = 0.0, 0, {}
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        t = time.process_time()
        try:
            ast.parse(data, path)
        except (SyntaxError, ValueError):
            pass
        dt = time.process_time() - t
        total += dt
        per[path] = dt
        lines += data.count(b"\n") + 1
    return total, lines, per


def interleaved_pass(repos: list[str], findings_out) -> tuple[float, float, int, dict, dict, dict]:
    """One cold run: for each repository, ``ast.parse`` over its files, then their analysis.
    (parse CPU, analysis CPU, lines, parse per file, analysis per file, findings by severity)."""
    from gradguard import engine, reach, resolve
    from gradguard.analysis import analyze_path
    from gradguard.sources import SourceError

    parse_cpu, total, lines, parse_per, per = 0.0, 0.0, 0, {}, {}
    counts = {"error": 0, "warning": 0, "info": 0, "unreadable": 0, "internal": 0}
    engine.forget_calls()
    resolve.hold_stamps()  # as ``gradguard check`` does: the files do not change during the run
    for repo in repos:
        resolve.clear_caches()  # each repository as one cold ``gradguard check`` run
        reach.clear_outlines()
        files = python_files(repo)
        gc.collect()
        cpu, n, times = parse_pass(files)
        parse_cpu, lines = parse_cpu + cpu, lines + n
        parse_per.update(times)
        for path in files:
            t = time.process_time()
            try:
                result = analyze_path(path).findings
            except SourceError:
                result, counts["unreadable"] = [], counts["unreadable"] + 1
            except Exception as exc:  # noqa: BLE001 - counted and shown, the run goes on
                result, counts["internal"] = [], counts["internal"] + 1
                print(f"internal error: {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            dt = time.process_time() - t
            total += dt
            per[path] = dt
            for f in result:
                counts[f.severity] = counts.get(f.severity, 0) + 1
                if findings_out is not None:
                    findings_out.write(json.dumps({"path": f.location.path, "line": f.location.line,
                                                   "code": f.code, "severity": f.severity,
                                                   "message": f.message}) + "\n")
    return parse_cpu, total, lines, parse_per, per, counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=corpus.DEFAULT_DEST)
    parser.add_argument("--mirror")
    parser.add_argument("--repos", help="comma-separated owner+name folders (default: all)")
    parser.add_argument("--slowest", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3, help="cold runs; the median is reported (default 3)")
    parser.add_argument("--no-cli", action="store_true", help="skip the gradguard check runs")
    parser.add_argument("--findings", default=os.path.join(tempfile.gettempdir(), "gradguard-real-findings.jsonl"))
    parser.add_argument("--json", help="write the figures here too")
    parser.add_argument("--build", choices=build_under_test.BUILDS, default="wheel",
                        help="measure the wheel users install, its engine compiled (default), or the "
                             "working tree's sources, pure Python")
    parser.add_argument("--profile", metavar="FILE",
                        help="cProfile the analysis pass into FILE and print its costliest functions "
                             "(the CPU times printed then include the profiler's)")
    args = parser.parse_args(argv)
    site = build_under_test.folder(args.build)
    sys.path.insert(0, site)  # before gradguard is first imported (``interleaved_pass``)
    print(build_under_test.describe(site))
    corpus.build(args.corpus, args.mirror, log=open(os.devnull, "w"))
    names = sorted(d for d in os.listdir(args.corpus) if not d.startswith("."))
    if args.repos:
        names = [n for n in names if n in set(args.repos.split(","))]
    repos = [os.path.join(args.corpus, n) for n in names]
    files = [f for r in repos for f in python_files(r)]
    cells = notebook_cells([f for r in repos for f in python_files(r, ".ipynb")])

    runs = []
    profiler = cProfile.Profile() if args.profile else None
    with open(args.findings, "w") as out:
        for i in range(max(1, args.repeat)):
            with (profiler if profiler is not None and i == 0 else contextlib.nullcontext()):
                runs.append(interleaved_pass(repos, out if i == 0 else None))
    if profiler is not None:
        profiler.dump_stats(args.profile)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    ratios = [p / a for p, a, *_ in runs]
    parse_cpu, cpu, lines, parse_per, _, counts = sorted(runs, key=lambda r: r[0] / r[1])[len(runs) // 2]
    # a file's time: its median over the runs
    per = {path: sorted(run[4][path] for run in runs)[len(runs) // 2] for path in runs[0][4]}
    figures = {
        "build": args.build, "repositories": len(repos), "files": len(files), "lines": lines, "runs": len(runs),
        "parse_cpu_s": round(parse_cpu, 2), "analysis_cpu_s": round(cpu, 2),
        "parse_lines_per_s": round(lines / parse_cpu), "analysis_lines_per_s": round(lines / cpu),
        "ratio": round(parse_cpu / cpu, 3), "ratios": [round(r, 3) for r in ratios],
        "max_file_cpu_s": round(max(per.values()), 3),
        "files_over_1s": sum(1 for v in per.values() if v > 1.0), "findings": counts,
    }
    print(f"corpus: {len(repos)} repositories, {len(files):,} files, {lines:,} lines (and {len(cells)} notebook "
          f"code cells, which only the gradguard check runs read)")
    print(f"ast.parse:          {parse_cpu:7.2f} CPU-s  {lines / parse_cpu:10,.0f} lines/CPU-s")
    print(f"gradguard analysis: {cpu:7.2f} CPU-s  {lines / cpu:10,.0f} lines/CPU-s")
    print(f"ratio (parse / analysis CPU): {parse_cpu / cpu:.3f}   (target >= 0.5; the median of "
          f"{len(runs)} interleaved runs: {', '.join(f'{r:.3f}' for r in sorted(ratios))})")
    print(f"slowest file: {max(per.values()):.3f} CPU-s; files over 1 CPU-s: {figures['files_over_1s']}")
    print(f"findings: {counts}  (all in {args.findings})")
    print(f"{args.slowest} slowest files (analysis CPU-s, parse CPU-s, lines):")
    for path in sorted(per, key=per.get, reverse=True)[:args.slowest]:
        with open(path, "rb") as f:
            n = f.read().count(b"\n") + 1
        print(f"  {per[path]:7.3f} {parse_per[path]:7.3f} {n:6d}  {os.path.relpath(path, args.corpus)}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak RSS of this process: {rss} MB")
    figures["peak_rss_mb_inprocess"] = rss

    if not args.no_cli:
        # the whole corpus in one run, as a user checks a large tree; CPU of the child and its
        # workers. Each cold run has an empty cache folder of its own and an ``ast.parse`` pass
        # just before it (the machine's load alike) over the same code: the .py files and the
        # notebooks' code cells; the median of ``--repeat`` is reported. The
        # warm run re-checks the unchanged tree with the last cold run's cache.
        print("gradguard check over the corpus (child CPU-s, wall s; median of the cold runs):")
        peak = 0
        for jobs in ("1", str(os.cpu_count() or 1)):
            colds = []
            with tempfile.TemporaryDirectory() as caches:
                for i in range(max(1, args.repeat)):
                    gc.collect()
                    parse_cpu = parse_pass(files)[0] + parse_texts(cells)
                    cache = os.path.join(caches, str(i))
                    cpu, wall, rss = cli_cache.run(["--jobs", jobs, "--cache-dir", cache, *repos], site)
                    colds.append((parse_cpu / cpu, cpu, wall))
                    peak = max(peak, rss)
                warm_cpu, warm_wall, rss = cli_cache.run(["--jobs", jobs, "--cache-dir", cache, *repos], site)
            ratio, cpu, wall = sorted(colds)[len(colds) // 2]
            figures[f"cli_jobs{jobs}_cold"] = {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "ratio": round(ratio, 3),
                                              "ratios": [round(r, 3) for r, *_ in sorted(colds)]}
            figures[f"cli_jobs{jobs}_warm"] = {"cpu_s": round(warm_cpu, 2), "wall_s": round(warm_wall, 2)}
            print(f"  --jobs {jobs:2s} cold: {cpu:7.2f} CPU-s {wall:7.2f} s wall   ratio to ast.parse {ratio:.3f}"
                  f" (runs {', '.join(f'{r:.3f}' for r, *_ in sorted(colds))})")
            print(f"  --jobs {jobs:2s} warm: {warm_cpu:7.2f} CPU-s {warm_wall:7.2f} s wall")
        gain = figures["cli_jobs1_cold"]["cpu_s"] / max(figures["cli_jobs1_warm"]["cpu_s"], 1e-9)
        figures["warm_gain"] = round(gain, 1)
        figures["cli_peak_rss_mb"] = peak
        print(f"  warm cache {gain:.1f}x cheaper than cold (target >= 20x); largest process {peak} MB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
