"""A worker that dies costs the file it was on, never the run (``gradguard.workers``).

The test-only hook ``GRADGUARD_TEST_CRASH_ON=<file name>`` makes the analysis process abort on
that file, as a segfault in compiled code would end it."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cliutil import BUGGY, BUGGY_LINE, CLEAN, SERVER, TIMEOUT, env

from gradguard.workers import CRASH_ON


def check(tmp_path, *args, crash_on="crash_here.py"):
    return subprocess.run([sys.executable, "-m", "gradguard", "check", "--no-cache", "--format", "json", *args],
                          cwd=tmp_path, env={**env(), CRASH_ON: crash_on}, capture_output=True, text=True,
                          timeout=TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.fixture
def tree(tmp_path):
    """Twelve buggy files, two clean ones, and one that crashes its worker, amid them."""
    for i in range(12):
        (tmp_path / f"bug{i:02}.py").write_text(BUGGY, encoding="utf-8")
    (tmp_path / "clean_a.py").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "clean_b.py").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "crash_here.py").write_text(BUGGY, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("jobs", ["1", "2", "3"])
def test_a_crashing_file_costs_only_itself(tree, jobs):
    proc = check(tree, "--jobs", jobs, ".")
    assert proc.returncode == 2, proc.stderr  # an input could not be analysed
    findings = json.loads(proc.stdout)
    assert sorted((f["path"].lstrip("./"), f["line"], f["code"]) for f in findings) == \
        [(f"bug{i:02}.py", BUGGY_LINE, "GG101") for i in range(12)]
    problems = [line for line in proc.stderr.splitlines() if "internal error" in line]
    assert len(problems) == 1, proc.stderr
    line = problems[0]
    assert "crash_here.py" in line and "gradguard 0.1" in line and "died (signal SIGABRT)" in line
    assert ("compiled" in line) == (SERVER.name != "server")  # the build that ran
    assert "--debug" in line and "Traceback" not in proc.stderr


def test_debug_prints_the_crashed_process_stack(tree):
    proc = check(tree, "--jobs", "1", "--debug", "crash_here.py", "bug00.py")
    assert proc.returncode == 2
    assert "Fatal Python error: Aborted" in proc.stderr and "analyse" in proc.stderr
    assert [f["path"] for f in json.loads(proc.stdout)] == ["bug00.py"]


def test_an_internal_error_prints_one_line_and_debug_its_traceback(tmp_path, monkeypatch):
    """A Python exception of ours (not a crash) in one file: one line, the traceback on --debug."""
    from gradguard import cli

    (tmp_path / "bug.py").write_text(BUGGY, encoding="utf-8")
    (tmp_path / "boom.py").write_text(CLEAN, encoding="utf-8")
    real = cli.analyse_file

    def failing(path):
        if path.endswith("boom.py"):
            from gradguard import analysis
            monkeypatch.setattr(analysis, "analyze_path", lambda p: 1 / 0)
        return real(path)

    monkeypatch.setattr(cli, "analyse_file", failing)
    monkeypatch.chdir(tmp_path)
    for debug in ([], ["--debug"]):
        import io
        from contextlib import redirect_stderr, redirect_stdout
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = cli.main(["check", "--no-cache", "-j", "1", *debug, "bug.py", "boom.py"])
        assert code == 2
        lines = [line for line in err.getvalue().splitlines() if "internal error" in line]
        assert len(lines) == 1 and "boom.py" in lines[0] and "ZeroDivisionError" in lines[0]
        assert ("Traceback (most recent call last)" in err.getvalue()) == bool(debug)
        assert "bug.py:5:" in out.getvalue()


def _pid_of(path):
    import os
    return ("ok", os.getpid())


def test_a_project_stays_with_one_worker():
    """Each child loads a project's modules once: a project's runs go to the child already on
    it, and a free child starts a project no other child is on. Only the last project, when
    nothing else is left, may be shared (so that no core idles)."""
    from gradguard import cli
    from gradguard.workers import run_isolated

    sizes = [60, 60, 10, 10, 10]  # two projects of two runs each, three of one
    todo = [(f"p{p}/f{i:02}.py", None) for p, n in enumerate(sizes) for i in range(n)]
    project = lambda path: path.split("/")[0]  # noqa: E731
    runs = cli.batches(todo, 2, project)
    assert all(len({project(path) for path, _ in run}) == 1 for run in runs)
    done = {}
    run_isolated(runs, 2, _pid_of, lambda path, digest, result: done.__setitem__(path, result[1]),
                 lambda path, how: ("internal", how), key=project)
    assert sorted(done) == sorted(path for path, _ in todo)
    assert len(runs) == 7
    shared = [p for p, n in enumerate(sizes) if len({done[f"p{p}/f{i:02}.py"] for i in range(n)}) > 1]
    assert len(shared) <= 1, shared
