"""Throughput of the GradGuard engine compared with bare ``ast.parse``.

    python bench/engine_throughput.py                 # 200 files, seed 0, best of 3
    python bench/engine_throughput.py --files 50 --seed 7 --repeat 5
    python bench/engine_throughput.py --profile       # plus cProfile of one analysis pass
    python bench/engine_throughput.py --keep /tmp/corpus --json out.json

It generates a deterministic synthetic corpus of PyTorch training scripts (``bench/corpus.py``)
into a temporary directory, reads every file into memory, then times, in the same process:

  (a) ``ast.parse(text, filename=path)`` over every file, and
  (b) ``gradguard.analyze_source(text, path, root)`` over every file (it does its own parse),

each ``--repeat`` times, keeping the best pass.  It prints files, lines, lines/s for both,
the ratio analysis/parse (target >= 0.5, i.e. the analysis costs at most twice a bare parse),
the number of findings (and how they line up with the bugs the generator planted), and the
slowest files.  The first analysis pass is also reported on its own ("cold"), so caching across
passes cannot hide in the best figure.
"""
from __future__ import annotations

import argparse
import ast
import cProfile
import gc
import io
import json
import os
import pstats
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent
if (REPO / "server" / "gradguard").is_dir() and str(REPO / "server") not in sys.path:
    # run against the working tree even when the package is not (or differently) installed
    sys.path.insert(0, str(REPO / "server"))

from corpus import KINDS, generate_corpus  # noqa: E402

TARGET_RATIO = 0.5


def _load_analyzer():
    try:
        import gradguard
    except Exception as exc:  # the package may be mid-edit: report, do not crash
        return None, f"{type(exc).__name__}: {exc}"
    fn = getattr(gradguard, "analyze_source", None)
    if fn is None:
        return None, "gradguard has no analyze_source"
    return fn, None


def _clock() -> float:
    # CPU time of this process: a busy machine (other jobs on its two cores) slows wall time
    # for both sides unevenly, while CPU time measures only the work itself.
    return time.process_time()


def _time_parse(docs):
    per = []
    t0 = _clock()
    for path, text, _ in docs:
        s = _clock()
        ast.parse(text, filename=path)
        per.append(_clock() - s)
    return _clock() - t0, per


def _time_analysis(analyze, docs, root):
    per, findings, errors = [], [], []
    t0 = _clock()
    for path, text, _ in docs:
        s = _clock()
        try:
            result = analyze(text, path, root)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports failures, it does not stop
            per.append(_clock() - s)
            errors.append((path, f"{type(exc).__name__}: {exc}"))
            findings.append(())
            continue
        per.append(_clock() - s)
        findings.append(tuple(result.findings))
    return _clock() - t0, per, findings, errors


def _best(passes):
    """passes: list of (total, per_file) -> (best total, per-file minimum over passes)."""
    best_total = min(p[0] for p in passes)
    per_file = [min(vals) for vals in zip(*(p[1] for p in passes))]
    return best_total, per_file


def _fmt_rate(lines, seconds):
    return f"{lines / seconds:>12,.0f} lines/s" if seconds > 0 else "        inf lines/s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200, help="number of generated files (default 200)")
    ap.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    ap.add_argument("--repeat", type=int, default=3, help="timed passes per measurement; best is kept")
    ap.add_argument("--profile", action="store_true",
                    help="also run cProfile over one analysis pass and print the top 25 functions")
    ap.add_argument("--slowest", type=int, default=5, help="how many slowest files to list")
    ap.add_argument("--keep", metavar="DIR", help="write the corpus to DIR (kept) instead of a temp dir")
    ap.add_argument("--no-root", action="store_true", help="call analyze_source without a project root")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = ap.parse_args(argv)
    if args.files < 1 or args.repeat < 1:
        ap.error("--files and --repeat must be at least 1")

    tmp = None
    if args.keep:
        out_dir = Path(args.keep)
        out_dir.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="gradguard-bench-")
        out_dir = Path(tmp.name)
    try:
        return _run(args, out_dir)
    finally:
        if tmp is not None:
            tmp.cleanup()


def _run(args, out_dir: Path) -> int:
    t0 = time.perf_counter()
    records = generate_corpus(out_dir, n_files=args.files, seed=args.seed)
    gen_s = time.perf_counter() - t0
    docs = []
    for rec in records:
        text = rec.path.read_text(encoding="utf-8")
        docs.append((str(rec.path), text, rec))
    lines = [len(text.splitlines()) for _, text, _ in docs]
    total_lines = sum(lines)
    total_bytes = sum(len(text.encode("utf-8")) for _, text, _ in docs)
    kinds = Counter(rec.kind for rec in records)
    planted_files = sum(1 for rec in records if rec.planted)
    root = None if args.no_root else str(out_dir)

    print(f"GradGuard engine throughput  (seed {args.seed}, best of {args.repeat} passes, "
          f"Python {sys.version.split()[0]})")
    print(f"corpus: {len(docs)} files, {total_lines:,} lines, {total_bytes / 1e6:.2f} MB, "
          f"{min(lines)}-{max(lines)} lines/file  (generated in {gen_s:.2f} s)")
    print("  kinds: " + ", ".join(f"{k} {kinds[k]}" for k in KINDS if kinds[k]))
    print(f"  planted bugs: {planted_files} files "
          f"({', '.join(f'{k} {v}' for k, v in sorted(Counter(p for r in records for p in r.planted).items()))})")

    figures = {"seed": args.seed, "files": len(docs), "lines": total_lines, "bytes": total_bytes,
               "repeat": args.repeat, "planted_files": planted_files}

    analyze, why = _load_analyzer()

    # (a) bare parse and (b) full analysis, passes interleaved so that load from other
    # processes affects both alike; the best pass of each is kept
    parse_passes, passes = [], []
    findings = errors = None
    for i in range(args.repeat):
        gc.collect()
        parse_passes.append(_time_parse(docs))
        if analyze is not None:
            gc.collect()
            total, per, f, e = _time_analysis(analyze, docs, root)
            passes.append((total, per))
            if i == 0:
                findings, errors = f, e
    parse_s, parse_per = _best(parse_passes)
    print(f"ast.parse:  {parse_s:8.3f} s  {_fmt_rate(total_lines, parse_s)}")
    figures["parse_seconds"] = parse_s
    figures["parse_lines_per_s"] = total_lines / parse_s

    if analyze is None:
        print(f"analysis:   unavailable ({why})")
        print("ratio analysis/parse: n/a")
        _write_json(args.json, figures)
        return 1

    cold_s = passes[0][0]
    ana_s, ana_per = _best(passes)
    ratio = (total_lines / ana_s) / (total_lines / parse_s)
    print(f"analysis:   {ana_s:8.3f} s  {_fmt_rate(total_lines, ana_s)}   "
          f"(cold first pass {cold_s:.3f} s, {total_lines / cold_s:,.0f} lines/s)")
    verdict = "meets target" if ratio >= TARGET_RATIO else "BELOW target"
    print(f"ratio analysis/parse: {ratio:.3f}  (target >= {TARGET_RATIO}: {verdict}; "
          f"analysis costs {ana_s / parse_s:.1f}x a bare parse)")

    codes = Counter(fd.code for fs in findings for fd in fs)
    n_findings = sum(codes.values())
    flagged = [bool(fs) for fs in findings]
    planted_flagged = sum(1 for (_, _, rec), fl in zip(docs, flagged) if rec.planted and fl)
    clean_flagged = sum(1 for (_, _, rec), fl in zip(docs, flagged) if not rec.planted and fl)
    print(f"findings: {n_findings}"
          + (f" ({', '.join(f'{c} {n}' for c, n in sorted(codes.items()))})" if codes else "")
          + f" in {sum(flagged)} files")
    print(f"  files with a planted bug that got a finding: {planted_flagged}/{planted_files}; "
          f"files without a planted bug that got one: {clean_flagged}/{len(docs) - planted_files}")
    missed = [(os.path.relpath(p, out_dir), rec.planted) for (p, _, rec), fl in zip(docs, flagged)
              if rec.planted and not fl]
    for rel, planted in missed[:10]:
        print(f"    missed: {rel} ({', '.join(planted)})")
    if errors:
        print(f"analysis raised on {len(errors)} files, e.g.:")
        for path, msg in errors[:5]:
            print(f"  {os.path.relpath(path, out_dir)}: {msg[:200]}")

    order = sorted(range(len(docs)), key=lambda i: -ana_per[i])[: args.slowest]
    print(f"slowest {len(order)} files (analysis, best of {args.repeat}):")
    for rank, i in enumerate(order, 1):
        rel = os.path.relpath(docs[i][0], out_dir)
        print(f"  {rank}. {rel:<32} {lines[i]:>4} lines  {ana_per[i] * 1e3:8.2f} ms  "
              f"(parse {parse_per[i] * 1e3:.2f} ms, {ana_per[i] / max(parse_per[i], 1e-9):.1f}x; "
              f"{lines[i] / ana_per[i]:,.0f} lines/s)")

    figures.update({
        "analysis_seconds": ana_s, "analysis_cold_seconds": cold_s,
        "analysis_lines_per_s": total_lines / ana_s, "ratio": ratio, "target_ratio": TARGET_RATIO,
        "findings": n_findings, "findings_by_code": dict(codes), "files_with_findings": sum(flagged),
        "planted_files_flagged": planted_flagged, "missed": [m[0] for m in missed], "unplanted_files_flagged": clean_flagged,
        "analysis_errors": len(errors),
        "slowest": [{"file": os.path.relpath(docs[i][0], out_dir), "lines": lines[i],
                     "analysis_ms": ana_per[i] * 1e3, "parse_ms": parse_per[i] * 1e3} for i in order],
    })

    if args.profile:
        prof = cProfile.Profile()
        gc.collect()
        prof.enable()
        for path, text, _ in docs:
            try:
                analyze(text, path, root)
            except Exception:  # noqa: BLE001 - already reported above
                pass
        prof.disable()
        for key, title in (("cumulative", "cumulative time"), ("tottime", "own time")):
            buf = io.StringIO()
            stats = pstats.Stats(prof, stream=buf)
            stats.strip_dirs().sort_stats(key).print_stats(25)
            print(f"\n--- cProfile: one analysis pass, top 25 by {title} ---")
            text = buf.getvalue()
            # drop pstats' preamble up to the header row
            start = text.find("   ncalls")
            print(text[start:].rstrip() if start >= 0 else text.rstrip())

    _write_json(args.json, figures)
    return 0 if not errors else 1


def _write_json(path, figures) -> None:
    if path:
        Path(path).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
