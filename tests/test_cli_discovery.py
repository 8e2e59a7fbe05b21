"""Which files ``gradguard check`` analyses, and what it says at the end of every run."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from cliutil import BUGGY, BUGGY_LINE, CLEAN, findings, run_check


def write(path, text=BUGGY):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def shown(proc) -> list[str]:
    return sorted(proc.stdout.splitlines())


def test_build_dist_and_dot_folders_are_searched(tmp_path):
    for rel in ("src/mylib/dist/bug.py", "build/bug.py", ".config/bug.py", "a/b.py"):
        write(tmp_path / rel)
    proc = run_check("-q", ".", cwd=tmp_path)
    assert sorted(name for name, _, _ in findings(proc.stdout)) == ["b.py", "bug.py", "bug.py", "bug.py"], proc.stdout
    assert proc.returncode == 1
    assert shown(run_check("--show-files", ".", cwd=tmp_path)) == sorted(
        os.path.join(*p.split("/")) for p in ("src/mylib/dist/bug.py", "build/bug.py", ".config/bug.py", "a/b.py"))


def test_virtualenvs_and_tool_caches_are_skipped(tmp_path):
    write(tmp_path / "main.py")
    write(tmp_path / "env" / "pyvenv.cfg", "home = /usr/bin\n")
    write(tmp_path / "env" / "lib" / "site.py")
    write(tmp_path / "conda" / "conda-meta" / "history", "")
    write(tmp_path / "conda" / "x.py")
    for cache in (".git", "__pycache__", ".mypy_cache", ".tox", "node_modules", ".gradguard_cache"):
        write(tmp_path / cache / "m.py")
    assert shown(run_check("--show-files", ".", cwd=tmp_path)) == ["main.py"]


def test_gitignore_and_exclude_are_honoured(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write(tmp_path / ".gitignore", "generated/\n*_tmp.py\n!keep_tmp.py\n")
    write(tmp_path / "pkg" / ".gitignore", "local.py\n")
    write(tmp_path / "pyproject.toml", '[tool.gradguard]\nexclude = ["legacy"]\n')
    for rel in ("generated/g.py", "x_tmp.py", "keep_tmp.py", "pkg/local.py", "pkg/m.py", "legacy/old.py", "main.py"):
        write(tmp_path / rel)
    files = shown(run_check("--show-files", ".", cwd=tmp_path))
    assert files == sorted(["keep_tmp.py", os.path.join("pkg", "m.py"), "main.py"]), files
    # a walk that starts below the repository root still reads the root's .gitignore
    assert shown(run_check("--show-files", "pkg", cwd=tmp_path)) == [os.path.join("pkg", "m.py")]
    # a folder named on the command line is searched, though ignored (its own .gitignore applies)
    write(tmp_path / "generated" / ".gitignore", "skip.py\n")
    write(tmp_path / "generated" / "skip.py")
    assert shown(run_check("--show-files", "generated", cwd=tmp_path)) == [os.path.join("generated", "g.py")]
    # a file named on the command line is analysed whatever ignores it
    proc = run_check("-q", "generated/g.py", "legacy/old.py", cwd=tmp_path)
    assert [(n, line) for n, line, _ in findings(proc.stdout)] == [("g.py", BUGGY_LINE), ("old.py", BUGGY_LINE)]


def test_named_file_is_analysed_whatever_its_name(tmp_path):
    write(tmp_path / "train_script", BUGGY)  # no .py
    write(tmp_path / "notes.txt", "just some words, not python at all: (\n")
    proc = run_check("train_script", "notes.txt", cwd=tmp_path)
    assert findings(proc.stdout) == [("train_script", BUGGY_LINE, "GG101")]
    assert re.search(r"notes\.txt:1: syntax error", proc.stderr), proc.stderr  # not Python: said so
    assert proc.returncode == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_and_devices_never_block(tmp_path):
    write(tmp_path / "main.py")
    os.mkfifo(tmp_path / "pipe.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    proc = run_check("-q", ".", cwd=tmp_path, timeout=60)  # a read of either would hang
    assert findings(proc.stdout) == [("main.py", BUGGY_LINE, "GG101")]
    assert proc.returncode == 1, proc.stderr
    named = run_check("pipe.py", "zero.py", "main.py", cwd=tmp_path, timeout=60)
    assert named.returncode == 2
    assert re.search(r"pipe\.py: not a regular file", named.stderr), named.stderr
    assert re.search(r"zero\.py: not a regular file", named.stderr), named.stderr
    assert findings(named.stdout) == [("main.py", BUGGY_LINE, "GG101")]


def test_every_run_ends_with_a_summary(tmp_path):
    write(tmp_path / "clean.py", CLEAN)
    proc = run_check("clean.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""
    assert re.fullmatch(r"gradguard: 1 file analysed in \d+\.\d\d s: no findings\n", proc.stderr), proc.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_check(".", cwd=empty)
    assert "0 files analysed" in proc.stderr  # "nothing analysed" is not "clean"
    write(tmp_path / "bug.py")
    write(tmp_path / "warn.py", "import torch\nx = torch.ones(2, requires_grad=True)\ny = x + 1\n"
                                "y.sum().backward()\ny.sum().backward()\n")
    proc = run_check("--no-cache", ".", cwd=tmp_path)
    assert re.search(r"3 files analysed in \d+\.\d\d s: 1 error, 1 warning\n$", proc.stderr), proc.stderr


def test_quiet_prints_only_findings(tmp_path):
    write(tmp_path / "bug.py")
    write(tmp_path / "clean.py", CLEAN)
    proc = run_check("-q", ".", cwd=tmp_path)
    assert proc.stderr == ""
    assert findings(proc.stdout) == [("bug.py", BUGGY_LINE, "GG101")]


def test_progress_only_on_a_terminal(tmp_path):
    """Run with stderr on a pseudo-terminal and a progress delay of zero: progress is drawn and
    wiped; with stderr on a pipe (every other test) it never is."""
    pty = pytest.importorskip("pty")
    write(tmp_path / "a.py")
    write(tmp_path / "b.py", CLEAN)
    code = ("import sys, gradguard.cli as c; c.PROGRESS_AFTER = 0; c.PROGRESS_EVERY = 0;"
            "sys.exit(c.main(['check', '--no-cache', '-j', '1', '.']))")
    master, slave = pty.openpty()
    from cliutil import env
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env(), stdout=subprocess.PIPE,
                          stderr=slave, timeout=120)
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    text = err.decode()
    assert "files analysed" in text and "\r" in text and "2/2" in text, text
    assert proc.returncode == 1


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this platform")
def test_a_file_reached_twice_is_analysed_once(tmp_path):
    """Named twice, or reached again through a linked folder: one file, one finding."""
    write(tmp_path / "pkg/main.py")
    os.symlink(tmp_path / "pkg", tmp_path / "alias")
    proc = run_check("-q", "pkg", "pkg/main.py", "alias/main.py", cwd=tmp_path)
    assert findings(proc.stdout) == [("main.py", BUGGY_LINE, "GG101")], proc.stdout
    assert shown(run_check("--show-files", "pkg", "alias/main.py", cwd=tmp_path)) == [os.path.join("pkg", "main.py")]
