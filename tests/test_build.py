"""scripts/test.sh runs the suite on the sources (pure Python), then on the installed compiled
wheel (GRADGUARD_COMPILE=1, GRADGUARD_TEST_SITE): each run must test the build it names, in this
process and in the child processes the CLI and language-server tests start."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import gradguard
import pytest
from cliutil import REPO, SERVER, env

PROBE = ("import json, gradguard, gradguard.engine as e; "
         "print(json.dumps([gradguard.__file__, e.__file__, e.COMPILED]))")


def _expected() -> tuple[Path, bool]:
    """(the folder the package comes from, whether its engine is compiled)."""
    wheel = bool(os.environ.get("GRADGUARD_TEST_SITE"))
    return (SERVER if wheel else REPO / "server"), wheel


def test_this_process_imports_the_build_under_test():
    from gradguard import engine

    folder, compiled = _expected()
    assert Path(gradguard.__file__).resolve().is_relative_to(folder.resolve()), gradguard.__file__
    assert engine.COMPILED is compiled, engine.__file__
    assert engine.__file__.endswith(".py") is not compiled, engine.__file__


def test_child_processes_import_the_build_under_test():
    proc = subprocess.run([sys.executable, "-c", PROBE], env=env(), capture_output=True, text=True,
                          cwd=str(REPO.parent), timeout=60, check=True)
    package, engine_file, is_compiled = json.loads(proc.stdout)
    folder, compiled = _expected()
    assert Path(package).resolve().is_relative_to(folder.resolve()), package
    assert is_compiled is compiled, engine_file


def test_version_says_how_the_engine_runs():
    proc = subprocess.run([sys.executable, "-m", "gradguard", "--version"], env=env(), capture_output=True,
                          text=True, cwd=str(REPO.parent), timeout=60, check=True)
    _, compiled = _expected()
    assert proc.stdout.strip() == f"gradguard {gradguard.__version__} ({'compiled' if compiled else 'pure Python'})"


def test_the_wheel_compiles_every_module_but_the_language_servers():
    """What setup.py promises: in the wheel each module but ``__init__``, ``__main__``, the
    language server's and torchdata's (data and the script that generates it with torch) has its
    compiled extension next to its source."""
    folder, compiled = _expected()
    if not compiled:
        pytest.skip("the suite runs on the sources: nothing is compiled")
    package = folder / "gradguard"
    sources = {p.relative_to(package).with_suffix("") for p in package.rglob("*.py")}
    extensions = {p.relative_to(package).with_suffix("").with_suffix("") for p in package.rglob("*.so")} | \
        {p.relative_to(package).with_suffix("").with_suffix("") for p in package.rglob("*.pyd")}
    plain = {s for s in sources if s.name in ("__init__", "__main__") or s.parts[0] in ("lsp", "torchdata")}
    assert extensions == sources - plain, sorted(map(str, (sources - plain) ^ extensions))


def test_one_version_everywhere():
    """gradguard.__version__ is the one version: pyproject.toml reads it, package.json (the
    extension) must say it, and so do ``gradguard --version`` and the server's serverInfo."""
    import tomllib  # Python 3.11+, as the suite's venv

    import gradguard
    version = gradguard.__version__
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gradguard.__version__"}
    assert json.loads((REPO / "package.json").read_text(encoding="utf-8"))["version"] == version
    env_ = env()
    proc = subprocess.run([sys.executable, "-m", "gradguard", "--version"], env=env_, cwd=REPO.parent,
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.split()[:2] == ["gradguard", version], proc.stdout
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}})
    request = f"Content-Length: {len(body)}\r\n\r\n{body}".encode()
    server = subprocess.Popen([sys.executable, "-m", "gradguard", "lsp"], env=env_, cwd=REPO.parent,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        server.stdin.write(request)
        server.stdin.flush()
        length = int(re.match(rb"Content-Length: (\d+)", server.stdout.readline()).group(1))
        while server.stdout.readline().strip():
            pass
        reply = json.loads(server.stdout.read(length))
    finally:
        server.kill()
        server.wait(timeout=30)
    assert reply["result"]["serverInfo"] == {"name": "gradguard", "version": version}, reply
