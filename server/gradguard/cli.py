"""``gradguard check`` for CI and ``gradguard lsp`` for editors.

Exit codes of ``check``: 0 nothing of error severity, 1 some error-severity finding,
2 usage errors or input that could not be read or parsed (reported on stderr, the run goes on).
"""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .analysis import analyze_path
from .config import load_project_config
from .output import FORMATS
from .sources import SourceError

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv", "venv", ".tox",
             ".mypy_cache", ".pytest_cache", "build", "dist", ".ipynb_checkpoints"}


def collect(paths, config) -> tuple[list[str], list[str]]:
    files, missing = [], []
    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith(".")
                                     and not config.excludes(os.path.join(dirpath, d)))
                for name in sorted(filenames):
                    full = os.path.join(dirpath, name)
                    if name.endswith((".py", ".ipynb")) and not config.excludes(full):
                        files.append(full)
        elif os.path.isfile(path):
            files.append(path)
        else:
            missing.append(path)
    return files, missing


def check(args) -> int:
    config = load_project_config(os.path.abspath(args.paths[0] if args.paths else "."))
    for warning in config.warnings:
        print(f"gradguard: {warning}", file=sys.stderr)
    files, missing = collect(args.paths or ["."], config)
    status = 0
    for path in missing:
        print(f"gradguard: {path}: no such file or directory", file=sys.stderr)
        status = 2
    findings, seen = [], set()
    for path in files:
        try:
            analysis = analyze_path(path)
        except SourceError as exc:
            print(f"gradguard: {exc.message}", file=sys.stderr)
            status = 2
            continue
        except Exception as exc:  # a bug of ours must not cost the user the other files' results
            print(f"gradguard: {path}: internal error, please report it: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
            status = 2
            continue
        for finding in config.apply(analysis.findings):
            if (args.select and finding.code not in args.select) or (args.ignore and finding.code in args.ignore):
                continue
            loc = finding.location
            key = (loc.path, loc.cell, loc.line, loc.column, finding.code)
            if key not in seen:  # a module's finding is also seen from the files importing it
                seen.add(key)
                findings.append(finding)
    findings.sort(key=lambda f: (f.location.path, f.location.cell or 0, f.location.line, f.location.column))
    sys.stdout.write(FORMATS[args.format](findings))
    if status == 0 and any(f.severity == "error" for f in findings):
        status = 1
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="gradguard", description="Find PyTorch autograd graph-lifetime bugs before the code runs.")
    parser.add_argument("--version", action="version", version=f"gradguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_check = sub.add_parser("check", help="analyse .py files, notebooks and directories")
    p_check.add_argument("paths", nargs="*", help="files or directories (default: .)")
    p_check.add_argument("--format", choices=sorted(FORMATS), default="text")
    p_check.add_argument("--select", action="append", metavar="CODE", help="only report these rule codes")
    p_check.add_argument("--ignore", action="append", metavar="CODE", help="do not report these rule codes")
    p_lsp = sub.add_parser("lsp", help="run the language server (stdio by default)")
    p_lsp.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio (debugging)")
    p_lsp.add_argument("--host", default="127.0.0.1")
    p_lsp.add_argument("--port", type=int, default=2087)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["lsp"]:
        from .lsp.server import start

        return start(argv[1:])
    return check(parser.parse_args(argv))
