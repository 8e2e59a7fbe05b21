"""``gradguard check`` for people and CI, ``gradguard lsp`` for editors.

Exit codes of ``check``: 0 nothing of error severity (or ``--exit-zero``), 1 some error-severity
finding (with ``--diff``: some fix to show), 2 a usage or configuration error, or an input that
could not be read or parsed (reported on stderr; the other files are still analysed).

stdout carries only the findings (text, JSON, SARIF, ``--statistics``, ``--diff``,
``--show-files``); progress and the closing summary go to stderr.
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import sys
import time
from collections import Counter
import traceback
from typing import Optional

from . import __version__
from .cache import DIRNAME, Cache, file_hash, finding_from_data
from .config import SEVERITIES, Config, load_project_config
from .discovery import SUFFIXES, discover
from .findings import Finding
from .output import FORMATS, Report, display_path, statistics
from .resolve import hold_stamps
from .selection import Layer, SelectionError, parse_selectors
from .workers import run_isolated

PROGRESS_AFTER = 2.0  # seconds before a terminal run starts showing progress
PROGRESS_EVERY = 0.2


# --- analysing one file (also in worker processes) ------------------------------------------------

def analyse_file(path: str) -> tuple:
    """("ok", findings, dependencies) | ("error", message) | ("internal", message, traceback)."""
    from .analysis import analyze_path
    from .sources import SourceError, parse, read_python

    hold_stamps()  # (released by ``analyse_all`` once the run's analyses are done)
    try:
        if not path.endswith(SUFFIXES):  # named on the command line: it must at least be Python
            parse(read_python(path), path)
        analysis = analyze_path(path)
    except SourceError as exc:
        return ("error", exc.message)
    except Exception as exc:  # a bug of ours must not cost the user the other files' results
        return ("internal", _internal(path, f"{type(exc).__name__}: {exc}"), traceback.format_exc())
    return ("ok", list(analysis.findings), tuple(analysis.dependencies))


def _internal(path: str, what: str) -> str:
    """The one line a user can send us: the file, this GradGuard, and how to learn more."""
    return (f"{path}: internal error in gradguard {__version__} ({_engine_build()}, Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}): {what} (please report this line; "
            f"--debug prints the traceback)")


def _died(path: str, how: str) -> tuple:
    return ("internal", _internal(path, f"the analysis process died ({how})"), None)


# Files per worker task: up to this many neighbours, two tasks a worker at least so that one
# slow task does not hold up the end. (A task per file cost a third more CPU than one process:
# a message each way per file, and each worker loading the modules the others had loaded.
# Tasks of 64 files cost 10-18 % more, of 200 to 400 files 2-12 %.)
MAX_BATCH = 256
BATCHES_PER_JOB = 2


def batches(todo: list, jobs: int, key=None) -> list:
    """``todo`` (in path order: a folder's files together) cut into runs for the workers; with
    ``key`` (a path's project), a run holds one project's files."""
    size = max(1, min(MAX_BATCH, len(todo) // (jobs * BATCHES_PER_JOB)))
    runs: list = []
    for i, item in enumerate(todo):
        if not runs or len(runs[-1]) >= size or (key is not None and key(item[0]) != key(todo[i - 1][0])):
            runs.append([])
        runs[-1].append(item)
    return runs


class _Progress:
    """``[n/N]`` on stderr, only on a terminal and only once a run has lasted a while."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled = total, enabled and sys.stderr.isatty()
        self.start = self.last = time.monotonic()
        self.shown = False

    def update(self, done: int) -> None:
        now = time.monotonic()
        if self.enabled and now - self.start >= PROGRESS_AFTER and now - self.last >= PROGRESS_EVERY:
            self.last, self.shown = now, True
            sys.stderr.write(f"\rgradguard: {done}/{self.total} files analysed")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def analyse_all(files: list[str], jobs: int, cache: Optional[Cache], progress: _Progress, debug: bool = False) -> dict:
    """path -> analyse_file's result, from the cache where it is still valid."""
    results: dict[str, tuple] = {}
    todo: list[tuple[str, Optional[str]]] = []
    for path in files:
        # an over-size file is not hashed whole: the analysis refuses it with a message
        digest = cache.hash_of(path) if cache is not None else None
        entry = cache.lookup(path, digest) if digest is not None else None
        try:
            if entry is not None and "error" in entry:
                results[path] = ("error", str(entry["error"]))
            elif entry is not None:
                results[path] = ("ok", [finding_from_data(d) for d in entry["findings"]], tuple(entry["deps"]))
        except (KeyError, TypeError, ValueError):  # an entry damaged by hand: analysed again
            entry, cache.hits, cache.misses = None, cache.hits - 1, cache.misses + 1
        if entry is None:
            todo.append((path, digest))
    done = len(results)
    progress.update(done)

    def record(path: str, digest: Optional[str], result: tuple) -> None:
        nonlocal done
        results[path] = result
        done += 1
        progress.update(done)
        if cache is not None and digest is not None and result[0] != "internal":
            if result[0] == "error":
                cache.store(path, digest, error=result[1])
            else:
                cache.store(path, digest, findings=result[1], dependencies=result[2])

    # every analysis runs in a child process, so that a crash costs one file (workers.py)
    from .analysis import project_root  # (the children, forked, find it loaded)

    project = functools.lru_cache(maxsize=None)(project_root)
    run_isolated(batches(todo, jobs, project), jobs, analyse_file, record, _died, debug, key=project)
    hold_stamps(False)  # ``--fix`` may write files and analyse them again, here
    return results


# --- check -------------------------------------------------------------------------------------

def _selection(args) -> Layer:
    def joined(values, where):
        return parse_selectors(values, where) if values else ()
    select = joined(args.select, "--select")
    return Layer(select=select or None, extend_select=joined(args.extend_select, "--extend-select"),
                 ignore=joined(args.ignore, "--ignore"))


def _summary(n_files: int, cached: int, seconds: float, findings: list[Finding], problems: int,
             fixed: int, verb: str) -> str:
    counts = Counter(f.severity for f in findings)
    order = sorted(counts, key=lambda sev: SEVERITIES.index(sev) if sev in SEVERITIES else len(SEVERITIES))
    found = ", ".join(f"{counts[sev]} {sev}{'s' if counts[sev] != 1 and sev in ('error', 'warning') else ''}"
                      for sev in order) or "no findings"
    files = f"{n_files} file{'s' if n_files != 1 else ''}"
    parts = [f"gradguard: {files} analysed in {seconds:.2f} s" + (f" ({cached} from cache)" if cached else "")
             + f": {found}"]
    if fixed:
        parts.append(f"{fixed} {verb}")
    if problems:
        parts.append(f"{problems} input{'s' if problems != 1 else ''} could not be analysed (see above)")
    return "; ".join(parts) + "\n"


def _fail(message: str) -> int:
    print(f"gradguard: error: {message}", file=sys.stderr)
    return 2


def check(args) -> int:
    started = time.monotonic()
    cpu_jobs = os.cpu_count() or 1
    jobs = args.jobs if args.jobs and args.jobs > 0 else cpu_jobs
    try:
        layer = _selection(args)
    except SelectionError as exc:
        return _fail(exc.message)
    paths = args.paths or ["."]
    first = paths[0] if os.path.isdir(paths[0]) else os.path.dirname(os.path.abspath(paths[0]))
    config = load_project_config(os.path.abspath(first))
    if config.warnings:  # an invalid config must not silently change what is checked
        for warning in config.warnings:
            print(f"gradguard: error: {warning}", file=sys.stderr)
        return 2
    config = config.with_layer(layer)

    found = discover(paths, config.excludes)
    problems = list(found.problems)
    for path, why in found.problems:
        print(f"gradguard: {path}: {why}", file=sys.stderr)
    if args.show_files:
        sys.stdout.write("".join(f"{display_path(p)}\n" for p in sorted(found.files)))
        return 2 if problems else 0

    cache = None
    if not args.no_cache:
        # like Ruff's: in the project that configures GradGuard, else where the command runs
        home = config.root if config.source else os.getcwd()
        cache = Cache(args.cache_dir or os.path.join(home, DIRNAME), {"analysis": 1})
    progress = _Progress(len(found.files), not args.quiet)
    results = analyse_all(found.files, jobs, cache, progress, args.debug)
    progress.close()
    if cache is not None:
        cache.save()

    fixed_count, diffs = 0, []
    if args.fix or args.diff:
        fixed_count, diffs = _apply_fixes(found.files, results, config, args, cache)
        if cache is not None:
            cache.save()

    findings, seen = [], set()
    for path in found.files:
        result = results[path]
        if result[0] != "ok":
            print(f"gradguard: {result[1]}", file=sys.stderr)
            if result[0] == "internal" and args.debug and result[2]:
                print(result[2], file=sys.stderr, end="")
            problems.append((path, result[1]))
            continue
        for finding in config.apply(result[1]):
            loc = finding.location
            key = (loc.path, loc.cell, loc.line, loc.column, finding.code)
            if key not in seen:  # a module's finding is also seen from the files importing it
                seen.add(key)
                findings.append(finding)
    findings.sort(key=lambda f: (f.location.path, f.location.cell or 0, f.location.line, f.location.column, f.code))
    report = Report(findings, problems)
    if args.diff:
        sys.stdout.write("".join(diffs))
    elif args.statistics:
        sys.stdout.write(statistics(report))
    else:
        sys.stdout.write(FORMATS[args.format](report))
    if not args.quiet:
        cached = cache.hits if cache is not None else 0
        verb = "would be fixed (--diff)" if args.diff else "fixed"
        sys.stderr.write(_summary(len(found.files), cached, time.monotonic() - started, findings,
                                  len(problems), fixed_count, verb))
    if problems:
        return 2
    if args.exit_zero:
        return 0
    if args.diff:
        return 1 if diffs else 0
    return 1 if any(f.severity == "error" for f in findings) else 0


def _apply_fixes(files, results, config: Config, args, cache: Optional[Cache]) -> tuple[int, list[str]]:
    from . import autofix

    total, diffs = 0, []
    for path in files:
        result = results[path]
        if result[0] != "ok" or not result[1]:
            continue
        try:
            fixed = autofix.fix_file(path, args.unsafe_fixes, config.enabled)
        except Exception as exc:  # noqa: BLE001 - one file's fix must not cost the others
            print(f"gradguard: {path}: could not apply fixes: {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        if fixed is None:
            continue
        total += fixed.fixed
        if args.diff:
            diffs.append(autofix.diff(fixed, display_path(path).replace(os.sep, "/")))
            continue
        autofix.write(fixed)
        results[path] = ("ok", fixed.findings, fixed.dependencies)
        digest = file_hash(path)
        if cache is not None and digest is not None:
            cache.store(path, digest, findings=fixed.findings, dependencies=fixed.dependencies)
    return total, diffs


def _engine_build() -> str:
    """How this installation runs the engine, for ``--version`` (and bug reports): the wheel's
    compiled extension, or the source (editable installs, the .vsix, no C compiler at install)."""
    origin = importlib.util.find_spec(".engine", __package__).origin or ""
    return "pure Python" if origin.endswith(".py") else "compiled"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradguard",
                                     description="Find PyTorch autograd graph-lifetime bugs before the code runs.")
    parser.add_argument("--version", action="version", version=f"gradguard {__version__} ({_engine_build()})")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("check", help="analyse .py files, notebooks and directories",
                       description="Analyse .py files, notebooks and directories. Selectors are rule codes or "
                                   "prefixes (GG101, GG1, ALL), case-insensitive, comma-separated or repeated.")
    p.add_argument("paths", nargs="*", help="files or directories (default: .)")
    p.add_argument("--format", choices=sorted(FORMATS), default="text", help="output format (default: text)")
    p.add_argument("--select", action="append", metavar="CODES", help="report only these rules (replaces the config's select)")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="report these rules as well")
    p.add_argument("--ignore", action="append", metavar="CODES", help="do not report these rules")
    p.add_argument("--fix", action="store_true", help="apply the preferred fix of each finding where it is safe")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="with --fix or --diff: also apply fixes that change which gradients flow (detach, no_grad, recompute)")
    p.add_argument("--diff", action="store_true", help="show the fixes as a unified diff instead of writing them; exit 1 if there are any")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when error-severity findings are reported")
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    p.add_argument("--show-files", action="store_true", help="list the files that would be analysed, and stop")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (default: all cores)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="where the cache lives (default: .gradguard_cache/ beside the pyproject.toml, else in the current folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else (no progress, no summary)")
    p.add_argument("--debug", action="store_true",
                   help="print the traceback of an internal error (and of a crashed analysis process, its Python stack)")
    p_explain = sub.add_parser("explain", help="draw the graph behind the finding on a line",
                               description="Draw the graph behind the finding at PATH:LINE (PATH:CELL:LINE in a "
                                           "notebook): its requires_grad origins, the steps that saved tensors, the "
                                           "backward that freed them and what walks or changes them again.")
    p_explain.add_argument("place", metavar="PATH:LINE")
    p_explain.add_argument("--format", choices=("svg", "html", "text"), default="text",
                           help="output format (default: text)")
    p_lsp = sub.add_parser("lsp", help="run the language server (stdio by default)")
    p_lsp.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio (debugging)")
    p_lsp.add_argument("--host", default="127.0.0.1")
    p_lsp.add_argument("--port", type=int, default=2087)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lsp"]:
        from .lsp.server import start

        return start(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "explain":
        from .explain import explain

        return explain(args.place, args.format)
    return check(args)


def run() -> None:
    """The ``gradguard`` command. After ``check`` the process exits without tearing down the
    heap the analyses left (the modules they loaded): 2 % of a large run's CPU, for nothing, as
    mypy exits. Its output is flushed first; nothing else was left to run at exit. The language
    server exits normally (its analysis process is stopped at exit)."""
    code = main()
    if sys.argv[1:2] == ["lsp"]:
        raise SystemExit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (``| head``): what could be written was
        pass
    os._exit(code)
