"""``.gradguard_cache/``: a hit costs reading and hashing, never parsing; content, imported
project modules, GradGuard's version and the settings invalidate; ``--no-cache``; ``--jobs``."""
from __future__ import annotations

import json
import os

import pytest

from cliutil import BUGGY, CLEAN, findings, run_check
from gradguard import cli
from gradguard.cache import DIRNAME, Cache

IMPORTER = "import torch\nfrom helper import make\nx = make()\ny = x * 2\ny.sum().backward()\ny.sum().backward()\n"
HELPER_GRAD = "import torch\ndef make():\n    return torch.ones(2, requires_grad=True)\n"
HELPER_NOGRAD = "import torch\ndef make():\n    return torch.ones(2)\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.gradguard]\n", encoding="utf-8")
    (tmp_path / "bug.py").write_text(BUGGY, encoding="utf-8")
    (tmp_path / "ok.py").write_text(CLEAN, encoding="utf-8")
    (tmp_path / "main.py").write_text(IMPORTER, encoding="utf-8")
    (tmp_path / "helper.py").write_text(HELPER_GRAD, encoding="utf-8")
    return tmp_path


class _Analysed:
    """The names of the files a spy saw analysed, kept in a file: the analyses run in child
    processes (gradguard.workers), which inherit the spy and append to it."""

    def __init__(self, log):
        self.log = log

    def _names(self) -> list:
        return self.log.read_text(encoding="utf-8").split() if self.log.exists() else []

    def clear(self) -> None:
        self.log.unlink(missing_ok=True)

    def __iter__(self):
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __eq__(self, other) -> bool:
        return self._names() == list(other)


@pytest.fixture
def analysed(monkeypatch, tmp_path_factory):
    """The files the CLI really analysed."""
    log = tmp_path_factory.mktemp("spy") / "analysed.txt"
    real = cli.analyse_file

    def spy(path):
        with open(log, "a", encoding="utf-8") as f:
            f.write(os.path.basename(path) + "\n")
        return real(path)

    monkeypatch.setattr(cli, "analyse_file", spy)
    return _Analysed(log)


def check(project, *args) -> int:
    cwd = os.getcwd()
    os.chdir(project)
    try:
        return cli.main(["check", "-j", "1", "-q", *args, "."])
    finally:
        os.chdir(cwd)


def test_unchanged_tree_is_not_analysed_again(project, analysed, capsys):
    assert check(project) == 1
    first = capsys.readouterr().out
    assert sorted(analysed) == ["bug.py", "helper.py", "main.py", "ok.py"]
    assert (project / DIRNAME / ".gitignore").read_text().strip().endswith("*")
    analysed.clear()
    assert check(project) == 1
    assert analysed == []  # every result came from the cache
    assert capsys.readouterr().out == first  # the same findings, fixes and links


def test_content_and_dependencies_invalidate(project, analysed, capsys):
    check(project)
    capsys.readouterr()
    analysed.clear()
    (project / "ok.py").write_text(CLEAN + "# changed\n", encoding="utf-8")
    (project / "helper.py").write_text(HELPER_NOGRAD, encoding="utf-8")  # main.py imports it
    check(project)
    assert sorted(analysed) == ["helper.py", "main.py", "ok.py"]
    out = capsys.readouterr().out
    # main.py's second-time error went with the helper's grad: its first backward now has nothing to walk
    assert [(n, code) for n, _, code in findings(out)] == [("bug.py", "GG101"), ("main.py", "GG104")]


def test_version_and_settings_name_the_cache(project):
    top = str(project / DIRNAME)
    a = Cache(top, {"analysis": 1})
    assert os.path.basename(a.directory).startswith(cli.__version__ + "-")
    assert Cache(top, {"analysis": 2}).directory != a.directory
    assert Cache(top, {"analysis": 1}).directory == a.directory


def test_cache_dir_option(project, analysed, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("ci-cache")
    check(project, "--cache-dir", str(elsewhere))
    assert not (project / DIRNAME).exists() and (elsewhere / ".gitignore").exists()
    analysed.clear()
    check(project, "--cache-dir", str(elsewhere))
    assert analysed == []


def test_selection_changes_need_no_new_analysis(project, analysed, capsys):
    check(project)
    capsys.readouterr()
    analysed.clear()
    check(project, "--select", "GG102")
    assert analysed == [] and findings(capsys.readouterr().out) == []


def test_no_cache_reads_and_writes_nothing(project, analysed):
    check(project, "--no-cache")
    assert not (project / DIRNAME).exists()
    check(project)
    analysed.clear()
    check(project, "--no-cache")
    assert len(analysed) == 4


def test_corrupt_entries_are_misses(project, analysed):
    check(project)
    for root, _, files in os.walk(project / DIRNAME):
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(root, name), "w") as fh:
                    fh.write("{not json")
    analysed.clear()
    assert check(project) == 1
    assert len(analysed) == 4


def test_entries_of_the_wrong_shape_are_misses(project, analysed, capsys):
    """Valid JSON, damaged entries (a hand edit, a tool rewriting the file): analysed again."""
    check(project)
    [saved] = [os.path.join(root, name) for root, _, files in os.walk(project / DIRNAME)
               for name in files if name.endswith(".json")]
    with open(saved, encoding="utf-8") as fh:
        entries = json.load(fh)
    assert len(entries) == 4  # one file for the project's entries
    damage = {"bug.py": {"findings": [{"code": 1}]}, "helper.py": {"deps": ["x"]}, "main.py": {"findings": None}}
    for path, entry in entries.items():
        entry.update(damage.get(os.path.basename(path), {}))
    with open(saved, "w", encoding="utf-8") as fh:
        json.dump(entries, fh)
    analysed.clear()
    capsys.readouterr()
    assert check(project) == 1
    assert sorted(analysed) == ["bug.py", "helper.py", "main.py"]  # ok.py's entry was left whole
    assert {name for name, _, _ in findings(capsys.readouterr().out)} == {"bug.py", "main.py"}


def test_fix_refreshes_the_cache(project, analysed):
    check(project, "--fix")
    analysed.clear()
    assert check(project) == 0  # bug.py and main.py were fixed (retain_graph=True), and cached so
    assert analysed == []
    assert "retain_graph=True" in (project / "bug.py").read_text()


def test_jobs_give_the_same_results(project):
    one = run_check("--no-cache", "-j", "1", "--format", "json", ".", cwd=project)
    two = run_check("--no-cache", "-j", "2", "--format", "json", ".", cwd=project)
    assert one.returncode == two.returncode == 1
    assert json.loads(one.stdout) == json.loads(two.stdout)
    assert {f["path"] for f in json.loads(two.stdout)} == {"bug.py", "main.py"}


@pytest.mark.parametrize("files, jobs", [(3_400, 2), (3_400, 16), (20, 2), (3, 8), (1, 1)])
def test_workers_get_runs_of_neighbouring_files(files, jobs):
    """Every file once, in order, in runs of at most ``MAX_BATCH``, and at least two runs a
    worker when there are files enough."""
    from gradguard import cli

    todo = [(f"p/{i:05}.py", None) for i in range(files)]
    runs = cli.batches(todo, jobs)
    assert [item for run in runs for item in run] == todo
    assert max(map(len, runs)) <= cli.MAX_BATCH
    assert len(runs) >= min(files, jobs * cli.BATCHES_PER_JOB)


def test_a_settled_file_is_not_read_again_while_its_stat_holds(project, analysed, monkeypatch):
    """A file last changed two seconds or more before it was hashed keeps its stat in the
    entry: the next run takes its hash from there. A change of the same size is still seen
    (its times move), and a file changed just before the run is read every time."""
    from gradguard import cache as cache_module

    old = 1_600_000_000
    for name in ("bug.py", "ok.py", "main.py", "helper.py"):
        os.utime(project / name, (old, old))
    read = []
    real = cache_module.file_hash
    monkeypatch.setattr(cache_module, "file_hash", lambda path, limit=None: read.append(os.path.basename(path))
                        or real(path, limit))
    check(project)
    assert sorted(set(read)) == ["bug.py", "helper.py", "main.py", "ok.py"]
    read.clear()
    analysed.clear()
    assert check(project) == 1 and read == [] and analysed == []
    (project / "helper.py").write_text(HELPER_NOGRAD.replace("ones", "zero"), encoding="utf-8")  # same size
    check(project)
    assert read == ["helper.py"] and sorted(analysed) == ["helper.py", "main.py"]
    read.clear()
    check(project)
    assert read == ["helper.py"]  # changed a moment ago: its stat is not trusted yet
