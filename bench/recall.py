"""GradGuard's recall and false findings on the recall set (tests/recall/).

    python bench/recall.py                 # the figures
    python bench/recall.py --list          # plus one line per program
    python bench/recall.py --json out.json

The set holds real-world-shaped one-bug programs of the backward-twice family (``buggy/``, one
``# expect: GG101`` or ``# expect: GG102`` mark each) and correct programs of the same shapes
(``correct/``, no marks). tests/test_recall.py runs every program under torch and checks the
marks; this command needs no torch: it imports ``gradguard`` from this working tree.

* A buggy program is **caught** when GradGuard reports the marked code on the marked line
  (of error or warning severity; both are counted, and shown apart).
* A **false error** is an error-severity GG101/GG102 finding on a line without that mark, in any
  program; a **false warning** likewise. Exit status 1 when the analysis failed on a program.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
import time
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if (REPO / "server" / "gradguard").is_dir() and str(REPO / "server") not in sys.path:
    sys.path.insert(0, str(REPO / "server"))

from gradguard.analysis import analyze_path  # noqa: E402

CODES = ("GG101", "GG102")
EXPECT = re.compile(r"#\s*expect:\s*(.*)$")
CODE = re.compile(r"\bGG\d{3}\b")


def programs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if (p.suffix == ".py" and p.is_file()) or (p / "main.py").is_file())


def files(program: Path) -> list[Path]:
    return sorted(program.rglob("*.py")) if program.is_dir() else [program]


def root(program: Path) -> Path:
    return program if program.is_dir() else program.parent


def marks(program: Path) -> set[tuple[str, int, str]]:
    found = set()
    for file in files(program):
        source = file.read_text(encoding="utf-8")
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and (m := EXPECT.search(tok.string)):
                found |= {(file.relative_to(root(program)).as_posix(), tok.start[0], c)
                          for c in CODE.findall(m.group(1))}
    return found


def findings(program: Path) -> set[tuple[str, int, str, str]]:
    """(file, line, code, severity) of GradGuard's GG101/GG102 findings in the program's files."""
    out = set()
    for file in files(program):
        for f in analyze_path(str(file)).findings:
            if f.code not in CODES:
                continue
            where = Path(f.location.path)
            if not where.is_absolute():
                where = next((b / where for b in (Path.cwd(), file.parent) if (b / where).is_file()), file)
            rel = os.path.relpath(where.resolve(), root(program).resolve()).replace(os.sep, "/")
            out.add((rel, f.location.line, f.code, f.severity))
    return out


def measure(base: Path) -> dict:
    rows, failed = [], []
    start = time.perf_counter()
    for kind in ("buggy", "correct"):
        for program in programs(base / kind):
            expected = marks(program)
            try:
                found = findings(program)
            except Exception as exc:  # an analysis crash is reported, the others still run
                failed.append(f"{kind}/{program.name}: {type(exc).__name__}: {exc}")
                continue
            on_mark = {(f, line, c): sev for f, line, c, sev in found if (f, line, c) in expected}
            stray = [(f, line, c, sev) for f, line, c, sev in found if (f, line, c) not in expected]
            rows.append({
                "program": f"{kind}/{program.name}",
                "buggy": kind == "buggy",
                "caught": sorted(set(on_mark.values())),
                "false_errors": [f"{f}:{line} {c}" for f, line, c, sev in sorted(stray) if sev == "error"],
                "false_warnings": [f"{f}:{line} {c}" for f, line, c, sev in sorted(stray) if sev != "error"],
            })
    buggy = [r for r in rows if r["buggy"]]
    caught = [r for r in buggy if r["caught"]]
    return {
        "buggy": len(buggy),
        "correct": len(rows) - len(buggy),
        "caught": len(caught),
        "caught_as_error": sum("error" in r["caught"] for r in caught),
        "recall": len(caught) / len(buggy) if buggy else 0.0,
        "false_errors": sum(len(r["false_errors"]) for r in rows),
        "false_error_programs": sum(bool(r["false_errors"]) for r in rows),
        "false_warnings": sum(len(r["false_warnings"]) for r in rows),
        "seconds": round(time.perf_counter() - start, 2),
        "failed": failed,
        "programs": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=REPO / "tests" / "recall", help="the recall set")
    ap.add_argument("--list", action="store_true", help="one line per program")
    ap.add_argument("--json", type=Path, help="write the figures and the per-program rows here")
    args = ap.parse_args(argv)
    m = measure(args.dir)
    if args.list:
        for r in m["programs"]:
            state = ("caught " + "+".join(r["caught"]) if r["caught"] else "MISSED") if r["buggy"] else "clean"
            extra = [f"false error {x}" for x in r["false_errors"]] + \
                    [f"false warning {x}" for x in r["false_warnings"]]
            if not r["buggy"] and extra:
                state = "FLAGGED"
            print(f"{r['program']:55} {state:22} {'; '.join(extra)}")
        print()
    print(f"recall set: {m['buggy']} buggy programs, {m['correct']} correct programs ({args.dir})")
    print(f"recall: {m['caught']}/{m['buggy']} = {100 * m['recall']:.1f} % "
          f"({m['caught_as_error']} as error, {m['caught'] - m['caught_as_error']} as warning only)")
    print(f"false errors: {m['false_errors']} (in {m['false_error_programs']} programs); "
          f"false warnings: {m['false_warnings']}")
    print(f"analysis time: {m['seconds']} s")
    for line in m["failed"]:
        print(f"analysis failed: {line}")
    if args.json:
        args.json.write_text(json.dumps(m, indent=1) + "\n", encoding="utf-8")
    return 1 if m["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
