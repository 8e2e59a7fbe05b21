"""GradGuard's first-look figures on the blind set (tests/blind/): real user reports, not tuned to.

    python bench/blind.py                      # the wheel users install (build_under_test.py)
    python bench/blind.py --build source       # the working tree's sources, pure Python
    python bench/blind.py --json out.json

Every ``<topic>_bug.py`` reproduces a report and carries the marks torch gives it
(tests/test_blind.py checks them); every ``<topic>_ok.py`` is the fixed program, unmarked (as is a
``_bug`` program that torch 2.13 runs clean). Printed:

* **recall per kind**: a mark (file, line, code) is caught when GradGuard reports that code on
  that line; caught as error and as warning only are counted apart;
* **false errors**: error-severity findings, of any code, that match no mark (in a correct program
  that is any error; in a buggy one, any error but the marked code on the marked line);
* **false warnings**: warning-severity findings that match no mark, likewise;
* one line per program. Exit status 1 when the analysis failed on a program.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import build_under_test  # noqa: E402

KINDS = ("GG101", "GG103", "GG104", "GG105", "GG106", "GG107", "GG108")


def findings(program: Path, analyze_path, recall) -> set[tuple[str, int, str, str]]:
    """(file, line, code, severity) of every finding GradGuard reports in the program's files."""
    out = set()
    for file in recall.files(program):
        for f in analyze_path(str(file)).findings:
            where = Path(f.location.path)
            if not where.is_absolute():
                where = next((b / where for b in (Path.cwd(), file.parent) if (b / where).is_file()), file)
            rel = os.path.relpath(where.resolve(), recall.root(program).resolve()).replace(os.sep, "/")
            out.add((rel, f.location.line, f.code, f.severity))
    return out


def measure(base: Path, analyze_path, recall) -> dict:
    rows, failed = [], []
    start = time.perf_counter()
    for program in recall.programs(base):
        expected = recall.marks(program)
        try:
            found = findings(program, analyze_path, recall)
        except Exception as exc:  # an analysis crash is reported, the others still run
            failed.append(f"{program.name}: {type(exc).__name__}: {exc}")
            continue
        caught = {}
        for f, line, code in expected:
            severities = {sev for ff, ll, cc, sev in found if (ff, ll, cc) == (f, line, code)}
            caught[f"{f}:{line} {code}"] = "error" if "error" in severities else \
                "warning" if severities else None
        stray = sorted((f, line, c, sev) for f, line, c, sev in found if (f, line, c) not in expected)
        rows.append({
            "program": program.name,
            "marks": sorted(c for _, _, c in expected),
            "caught": caught,
            "false_errors": [f"{f}:{line} {c}" for f, line, c, sev in stray if sev == "error"],
            "false_warnings": [f"{f}:{line} {c}" for f, line, c, sev in stray if sev != "error"],
        })
    per_kind = {k: Counter() for k in KINDS}
    for r in rows:
        for site, sev in r["caught"].items():
            kind = site.rsplit(" ", 1)[1]
            per_kind.setdefault(kind, Counter())["marks"] += 1
            per_kind[kind][sev or "missed"] += 1
    buggy = [r for r in rows if r["marks"]]
    return {
        "programs": len(rows),
        "buggy": len(buggy),
        "correct": len(rows) - len(buggy),
        "per_kind": {k: dict(c) for k, c in per_kind.items()},
        "false_errors": sum(len(r["false_errors"]) for r in rows),
        "false_error_programs": sum(bool(r["false_errors"]) for r in rows),
        "false_errors_in_correct": sum(len(r["false_errors"]) for r in rows if not r["marks"]),
        "false_warnings": sum(len(r["false_warnings"]) for r in rows),
        "false_warning_programs": sum(bool(r["false_warnings"]) for r in rows),
        "seconds": round(time.perf_counter() - start, 2),
        "failed": failed,
        "rows": rows,
    }


def state(r: dict) -> str:
    if r["marks"]:
        got = list(r["caught"].values())
        if all(got):
            return "caught (" + "+".join(sorted(set(got))) + ")"
        return "MISSED" if not any(got) else f"PARTLY ({sum(map(bool, got))}/{len(got)})"
    return "FLAGGED" if r["false_errors"] or r["false_warnings"] else "clean"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=REPO / "tests" / "blind", help="the blind set")
    ap.add_argument("--build", choices=build_under_test.BUILDS, default="wheel",
                    help="the GradGuard measured (default: the wheel users install)")
    ap.add_argument("--json", type=Path, help="write the figures and the per-program rows here")
    args = ap.parse_args(argv)

    site = build_under_test.folder(args.build)
    sys.path.insert(0, site)
    from gradguard.analysis import analyze_path  # from the build under test, before recall imports it
    import gradguard
    import recall  # bench/recall.py: the set's layout and its marks

    assert Path(gradguard.__file__).resolve().is_relative_to(Path(site).resolve()), gradguard.__file__

    print(build_under_test.describe(site))
    m = measure(args.dir, analyze_path, recall)
    print(f"\n{'program':42} {'marks':14} {'result':18} false findings")
    for r in m["rows"]:
        extra = [f"error {x}" for x in r["false_errors"]] + [f"warning {x}" for x in r["false_warnings"]]
        print(f"{r['program']:42} {' '.join(r['marks']) or '-':14} {state(r):18} {'; '.join(extra)}")
    print(f"\nblind set: {m['buggy']} buggy programs, {m['correct']} correct programs ({args.dir})")
    print(f"{'kind':6} {'marks':>5} {'error':>5} {'warn':>5} {'missed':>6}  recall")
    total = Counter()
    for kind, c in m["per_kind"].items():
        total.update(c)
        n = c.get("marks", 0)
        hit = c.get("error", 0) + c.get("warning", 0)
        print(f"{kind:6} {n:5} {c.get('error', 0):5} {c.get('warning', 0):5} {c.get('missed', 0):6}  "
              f"{hit}/{n}" + (f" = {100 * hit / n:.0f} %" if n else ""))
    hit = total.get("error", 0) + total.get("warning", 0)
    print(f"{'all':6} {total['marks']:5} {total.get('error', 0):5} {total.get('warning', 0):5} "
          f"{total.get('missed', 0):6}  {hit}/{total['marks']} = {100 * hit / max(total['marks'], 1):.0f} %")
    print(f"false errors: {m['false_errors']} (in {m['false_error_programs']} programs; "
          f"{m['false_errors_in_correct']} in correct programs)")
    print(f"false warnings: {m['false_warnings']} (in {m['false_warning_programs']} programs)")
    print(f"analysis time: {m['seconds']} s")
    for line in m["failed"]:
        print(f"analysis failed: {line}")
    if args.json:
        args.json.write_text(json.dumps(m, indent=1) + "\n", encoding="utf-8")
    return 1 if m["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
