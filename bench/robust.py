"""Real code as the fuzzer: the compiled wheel over every file of three sources, one file at a time.

    python bench/robust.py [--sources corpus,packages,new] [--sample N] [--seed S] [--jobs 2]
                           [--timeout 60] [--build wheel|source] [--commit REV] [--records FILE]

Sources: ``corpus``, the real-code corpus (``real/repos.txt``, rebuilt into ``real/.corpus/``);
``packages``, the Python sources installed in this interpreter's site-packages (torch, numpy,
sympy, libcst, jedi, pygls, ...), analysed where they are, each top-level package its own project
root (a top-level module's root is site-packages); ``new``, repositories new to the project
(``real/robust_repos.txt``, rebuilt into ``real/.corpus-new/``). ``--sample N`` takes a seeded
sample of N files from each source.

Each file is analysed as ``gradguard check`` does (project caches cleared when the project
changes; a file from which no backward can run is only scanned, as there), or with ``--facts`` as
the editor does (hover facts: every file parsed and interpreted), in a pool of ``--jobs``
long-lived child processes with ``faulthandler`` on, each analysing one file at a time; a child
that dies is a **crash** (its faulthandler trace is kept) and is replaced. A file whose analysis
passes ``--timeout`` CPU-seconds is stopped (an interval timer in the child; compiled code that
never returns to the interpreter is sent SIGABRT by the parent, so faulthandler shows where it
was). Every file is also compiled by CPython, to tell the
analysis's **refusals** (a SourceError, reported to the user) of code CPython cannot compile
either from those of valid code; any other exception is an **internal error**.

The GradGuard measured is built from the working tree (``build_under_test.py``), or with
``--commit REV`` from that commit alone (``git archive``: edits in progress stay out of it).

Prints files, lines, crashes (file and the trace's top frames, with what the pure-Python sources
say about the same file), timeouts, internal errors, refusals, analyses over 1 CPU-s (the 10
slowest) and the peak RSS of a child. Writes one JSON line per file to ``--records``. Exit
status 1 when anything crashed, timed out, raised, or refused code CPython compiles.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import select
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "real"))  # real/corpus.py, not bench/corpus.py

import build_under_test  # noqa: E402
import corpus  # noqa: E402

SOURCES = ("corpus", "packages", "new")
NEW_LIST = os.path.join(HERE, "real", "robust_repos.txt")
NEW_DEST = os.path.join(HERE, "real", ".corpus-new")
SLOW = 1.0  # CPU-seconds: an analysis over this is listed
FRAMES = 8  # of a faulthandler trace, the innermost shown


# ---- the child: one file at a time, a JSON line in, a JSON line out ----

class _OverTime(Exception):
    pass


def _over_time(_signum, _frame):
    raise _OverTime


def _lines(path: str) -> int:
    if path.endswith(".ipynb"):
        from gradguard.sources import read_notebook
        try:
            return sum(c.text.count("\n") + 1 for c in read_notebook(path))
        except Exception:  # noqa: BLE001 - an unreadable notebook has no lines
            return 0
    with open(path, "rb") as f:
        return f.read().count(b"\n") + 1


def _cpython_compiles(path: str) -> bool:
    """Whether CPython compiles the file (a notebook: every code cell, IPython's magics taken out)."""
    import warnings

    from gradguard.sources import read_notebook, strip_magics
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if path.endswith(".ipynb"):
                for cell in read_notebook(path):
                    compile(strip_magics(cell.text), path, "exec", dont_inherit=True)
            else:
                with open(path, "rb") as f:
                    compile(f.read(), path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, UnicodeDecodeError):
        return False
    except Exception:  # noqa: BLE001 - a notebook that is not JSON, etc.
        return False
    return True


def child_main() -> None:
    import faulthandler
    import resource
    import traceback

    faulthandler.enable()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the analysis prints must not mix with the replies
    signal.signal(signal.SIGPROF, _over_time)
    from gradguard import engine, reach, resolve
    from gradguard.analysis import analyze_path
    from gradguard.sources import SourceError

    resolve.hold_stamps()  # as gradguard check: the files do not change during the run
    out.write("ready\n")
    root_now = None
    for line in sys.stdin:
        task = json.loads(line)
        path, root, limit = task["path"], task["root"], task["timeout"]
        if root != root_now:  # a new project: cold caches, as a gradguard check run over it
            resolve.clear_caches()
            reach.clear_outlines()
            engine.forget_calls()
            root_now = root
        print(f"@@ {path}", file=sys.stderr, flush=True)
        record = {"outcome": "ok"}
        signal.setitimer(signal.ITIMER_PROF, limit)
        start = time.process_time()
        try:
            analysis = analyze_path(path, root, facts=task["facts"])
            if task["facts"]:
                analysis.fact_at(1, 1)  # builds the hover index, as the editor's first hover does
            record["findings"] = [[f.code, f.severity, f.location.line] for f in analysis.findings]
            # interpreted, or only scanned (no backward can run from it: gradguard check skips it)
            record["interpreted"] = analysis._main is not None
            record["truncated"] = len(analysis.truncated)  # places left unanalysed over the budget
        except SourceError as exc:
            record.update(outcome="refused", message=exc.message, line=exc.line)
        except _OverTime:
            record.update(outcome="timeout", message="".join(traceback.format_exc().splitlines(True)[-2 * FRAMES:]))
        except Exception as exc:  # noqa: BLE001 - what the bench looks for
            record.update(outcome="error", message=f"{type(exc).__name__}: {exc}"[:500],
                          trace="".join(traceback.format_exc().splitlines(True)[-2 * FRAMES:]))
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
        record["cpu"] = round(time.process_time() - start, 4)
        record["lines"] = _lines(path)
        record["cpython_compiles"] = _cpython_compiles(path)
        record["rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        out.write(json.dumps(record) + "\n")


# ---- the parent: which files, the pool, the report ----

def _files(top: str, suffixes: tuple) -> list[str]:
    out = []
    for d, dirs, files in os.walk(top):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        out.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(suffixes))
    return out


def repositories(folder: str) -> list[tuple[str, str]]:
    """(root, path) for every .py and .ipynb file of each repository under ``folder``."""
    return [(os.path.join(folder, name), path) for name in sorted(os.listdir(folder)) if not name.startswith(".")
            for path in _files(os.path.join(folder, name), (".py", ".ipynb"))]


def packages(site: str) -> list[tuple[str, str]]:
    """(root, path) for every .py file installed in ``site``: each top-level package is a root."""
    out = []
    for name in sorted(os.listdir(site)):
        full = os.path.join(site, name)
        if os.path.isdir(full) and not name.startswith((".", "_")) and "." not in name:
            out += [(full, path) for path in _files(full, (".py",))]
        elif name.endswith(".py"):
            out.append((site, full))
    return out


def collect(sources: list[str], mirror: str | None) -> dict[str, list[tuple[str, str]]]:
    found = {}
    for source in sources:
        if source == "corpus":
            found[source] = repositories(corpus.build(corpus.DEFAULT_DEST, mirror, log=open(os.devnull, "w")))
        elif source == "new":
            found[source] = repositories(corpus.build(NEW_DEST, mirror, log=open(os.devnull, "w"), listing=NEW_LIST))
        else:
            found[source] = packages(sysconfig.get_paths()["purelib"])
    return found


def _cpu_of(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Child:
    """A long-lived analysis process; its stderr (faulthandler's trace) goes to a file."""

    def __init__(self, site: str, workdir: str, number: int):
        self.err_path = os.path.join(workdir, f"child-{number}.err")
        self.err = open(self.err_path, "ab")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([site, HERE]), PYTHONFAULTHANDLER="1")
        self.proc = subprocess.Popen([sys.executable, "-c", "import robust; robust.child_main()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                                     env=env, cwd=workdir, text=True, bufsize=1)
        self.task = None
        if self.proc.stdout.readline() != "ready\n":  # GradGuard did not even import: no file is to blame
            self.proc.wait()
            with open(self.err_path, encoding="utf-8", errors="replace") as f:
                raise SystemExit(f"the analysis process did not start:\n{f.read()[-3000:]}")

    def send(self, task: dict) -> None:
        self.task = dict(task, err_at=os.path.getsize(self.err_path), cpu_at=_cpu_of(self.proc.pid))
        self.proc.stdin.write(json.dumps({k: task[k] for k in ("path", "root", "timeout", "facts")}) + "\n")
        self.proc.stdin.flush()

    def trace(self) -> str:
        self.err.flush()
        with open(self.err_path, "rb") as f:
            f.seek(self.task["err_at"])
            return f.read().decode("utf-8", "replace")

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait()
        self.err.close()


def top_frames(trace: str) -> str:
    """The faulthandler trace's header and innermost frames (it prints them innermost first)."""
    lines = [line for line in trace.splitlines() if line and not line.startswith("@@ ")]
    head = [i for i, line in enumerate(lines) if line.startswith(("Fatal Python error", "Current thread",
                                                                  "Thread 0x"))]
    start = head[0] if head else max(0, len(lines) - FRAMES)
    return "\n".join(lines[start:start + FRAMES + 2])


def source_build_says(path: str, root: str) -> str:
    """The same file under the pure-Python sources, in a fresh process: its exception's last frames."""
    code = ("import sys, traceback\nsys.setrecursionlimit(3000)\nfrom gradguard.analysis import analyze_path\n"
            "try:\n    analyze_path(sys.argv[1], sys.argv[2]); print('runs clean')\n"
            "except Exception as e:\n"
            "    tb = traceback.format_exc().splitlines(); print('\\n'.join(tb[:1] + tb[-12:]))\n")
    env = dict(os.environ, PYTHONPATH=build_under_test.folder("source"))
    try:
        run = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code, path, root], capture_output=True,
                             text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return "over 300 s"
    return (run.stdout + run.stderr[-2000:]).strip() or f"exit status {run.returncode}"


def run_pool(tasks: list[dict], site: str, jobs: int, timeout: float, records, progress=sys.stderr) -> list[dict]:
    results = []
    pending = list(reversed(tasks))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gradguard-robust-") as workdir:
        spawned = 0
        children = []
        for _ in range(max(1, min(jobs, len(tasks)))):
            children.append(Child(site, workdir, spawned))
            spawned += 1

        def finish(child: Child, record: dict) -> None:
            task = child.task
            record = dict(source=task["source"], root=task["root"], path=task["path"], **record)
            results.append(record)
            records.write(json.dumps(record) + "\n")
            records.flush()
            child.task = None
            if len(results) % 500 == 0:
                print(f"  {len(results):,}/{len(tasks):,} files, {time.monotonic() - started:.0f} s", file=progress,
                      flush=True)

        for child in children:
            if pending:
                child.send(pending.pop())
        while any(c.task for c in children):
            busy = {c.proc.stdout: c for c in children if c.task}
            ready, _, _ = select.select(list(busy), [], [], 1.0)
            for stream in ready:
                child = busy[stream]
                line = stream.readline()
                if line:
                    finish(child, json.loads(line))
                else:  # the child died analysing this file
                    _pid, status, usage = os.wait4(child.proc.pid, 0)
                    child.proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else \
                        os.WEXITSTATUS(status)
                    finish(child, {"outcome": "timeout" if child.task.get("killed") else "crash",
                                   "exit": child.proc.returncode,
                                   "cpu": round(usage.ru_utime + usage.ru_stime - child.task["cpu_at"], 2),
                                   "rss_mb": round(usage.ru_maxrss / 1024, 1),
                                   "trace": top_frames(child.trace()), "lines": _lines_quiet(child.task["path"])})
                    child.close()
                    children[children.index(child)] = child = Child(site, workdir, spawned)
                    spawned += 1
                if pending and child.task is None:
                    child.send(pending.pop())
            for child in children:  # compiled code deaf to the interval timer: SIGABRT, and faulthandler speaks
                if child.task and not child.task.get("killed"):
                    used = _cpu_of(child.proc.pid) - child.task["cpu_at"]
                    if used > timeout + 10:
                        child.task["killed"] = round(used, 2)
                        child.proc.send_signal(signal.SIGABRT)
        for child in children:
            child.close()
    return results


def _lines_quiet(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n") + 1
    except OSError:
        return 0


def report(results: list[dict], sources: list[str], build: str, wall: float, out=sys.stdout) -> int:
    def say(text=""):
        print(text, file=out)

    by = {}
    for r in results:
        by.setdefault(r["outcome"], []).append(r)
    for source in sources:
        mine = [r for r in results if r["source"] == source]
        counts = {k: sum(1 for r in mine if r["outcome"] == k) for k in ("crash", "timeout", "error", "refused")}
        read = [r for r in mine if r.get("interpreted")]
        say(f"{source:>9}: {len(mine):,} files, {sum(r.get('lines', 0) for r in mine):,} lines "
            f"(interpreted: {len(read):,} files, {sum(r['lines'] for r in read):,} lines; the rest only scanned), "
            f"{sum(r.get('cpu', 0) for r in mine):.1f} CPU-s of analysis; "
            + ", ".join(f"{k} {v}" for k, v in counts.items()))
    say(f"    total: {len(results):,} files, {sum(r.get('lines', 0) for r in results):,} lines, "
        f"{wall:.0f} s wall ({build} build)")
    truncated = [r for r in results if r.get("truncated")]
    say(f"analyses that left code unanalysed over the budget: {len(truncated)} files")
    crashes, timeouts, errors = by.get("crash", []), by.get("timeout", []), by.get("error", [])
    refused = by.get("refused", [])
    invalid = [r for r in refused if not r["cpython_compiles"]] if refused else []
    valid = [r for r in refused if r.get("cpython_compiles")]
    say(f"crashes (the process died): {len(crashes)}")
    for r in crashes:
        say(f"  {r['path']} ({r['lines']} lines): exit {r['exit']}")
        say("    " + r["trace"].replace("\n", "\n    "))
        say("    pure-Python sources: " + source_build_says(r["path"], r["root"]).replace("\n", "\n      "))
    say(f"timeouts (over the per-file limit): {len(timeouts)}")
    for r in timeouts:
        say(f"  {r['path']} ({r['lines']} lines)")
        say("    " + (r.get("trace") or r.get("message", "")).strip().replace("\n", "\n    "))
    say(f"internal errors (an exception but a refusal): {len(errors)}")
    shown = set()
    for r in errors:  # each distinct trace once
        say(f"  {r['path']}: {r['message']}")
        if r["trace"] not in shown:
            shown.add(r["trace"])
            say("    " + r["trace"].strip().replace("\n", "\n    "))
    say(f"refusals: {len(refused)}: {len(invalid)} of code CPython cannot compile either, {len(valid)} of code it "
        f"compiles")
    for r in valid:
        say(f"  refused, CPython compiles it: {r['message']}")
    for r in invalid[:10]:
        say(f"  (CPython refuses too) {r['message']}")
    if len(invalid) > 10:
        say(f"  ... and {len(invalid) - 10} more CPython refuses too")
    analysed_invalid = sum(1 for r in results if r["outcome"] == "ok" and not r.get("cpython_compiles", True))
    say(f"files CPython cannot compile that the analysis read without a refusal (the error is in code it "
        f"never reads, or in a notebook cell it leaves out): {analysed_invalid}")
    slow = sorted((r for r in results if r["outcome"] != "crash"), key=lambda r: -r.get("cpu", 0))
    over = [r for r in slow if r.get("cpu", 0) > SLOW]
    say(f"analyses over {SLOW:g} CPU-s: {len(over)}; the 10 slowest:")
    for r in slow[:10]:
        say(f"  {r['cpu']:7.3f} CPU-s  {r.get('lines', 0):6,} lines  {r['path']}")
    findings = {}
    for r in results:
        for _code, severity, _line in r.get("findings", []):
            findings[severity] = findings.get(severity, 0) + 1
    say(f"findings: {findings}")
    say(f"peak RSS of a child: {max((r.get('rss_mb', 0) for r in results), default=0):.0f} MB")
    return 1 if crashes or timeouts or errors or valid else 0


def built(build: str, commit: str | None, scratch: str) -> tuple[str, str]:
    """The folder to import the GradGuard under test from, and what it is."""
    if commit is None:
        site = build_under_test.folder(build)
        return site, build_under_test.describe(site)
    sha = subprocess.run(["git", "-C", REPO, "rev-parse", "--verify", commit + "^{commit}"], check=True,
                         capture_output=True, text=True).stdout.strip()
    archive = subprocess.run(["git", "-C", REPO, "archive", sha], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", scratch], input=archive, check=True)
    spec = importlib.util.spec_from_file_location("exported_build",
                                                  os.path.join(scratch, "bench", "build_under_test.py"))
    exported = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(exported)  # its REPO is the export: the wheel is built from the commit
    site = exported.folder(build)
    return site, f"{exported.describe(site)}, commit {sha[:10]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sources", default=",".join(SOURCES), help="comma-separated: " + ", ".join(SOURCES))
    parser.add_argument("--sample", type=int, help="a seeded sample of N files from each source")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0, help="CPU-seconds per file (default 60)")
    parser.add_argument("--build", choices=build_under_test.BUILDS, default="wheel")
    parser.add_argument("--commit", help="measure this commit (default: the working tree)")
    parser.add_argument("--facts", action="store_true",
                        help="analyse as the editor does, with hover facts: every file interpreted")
    parser.add_argument("--mirror", help="bare clones for corpus.py (owner+name/repo)")
    parser.add_argument("--records", default=os.path.join(tempfile.gettempdir(), "gradguard-robust.jsonl"),
                        help="one JSON line per file")
    parser.add_argument("--extra", action="append", default=[], metavar="ROOT",
                        help="also every .py file under ROOT, a project of its own (source 'extra')")
    args = parser.parse_args(argv)
    sources = [s for s in args.sources.split(",") if s]
    unknown = set(sources) - set(SOURCES)
    if unknown:
        parser.error(f"unknown sources: {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory(prefix="gradguard-export-") as scratch:
        site, what = built(args.build, args.commit, scratch)
        print(what, flush=True)
        return measure(args, sources, site)


def measure(args, sources: list[str], site: str) -> int:
    found = collect(sources, args.mirror)
    for root in args.extra:
        found.setdefault("extra", []).extend((root, p) for p in _files(root, (".py", ".ipynb")))
    tasks = []
    for source, files in found.items():
        if args.sample is not None and args.sample < len(files):
            files = sorted(random.Random(f"{args.seed}:{source}").sample(files, args.sample))
        tasks += [{"source": source, "root": root, "path": path, "timeout": args.timeout, "facts": args.facts}
                  for root, path in files]
    print(f"{len(tasks):,} files from {', '.join(found)}; {args.jobs} children; records in {args.records}",
          flush=True)
    started = time.monotonic()
    with open(args.records, "w") as records:
        results = run_pool(tasks, site, args.jobs, args.timeout, records)
    return report(results, list(found), args.build, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(main())
