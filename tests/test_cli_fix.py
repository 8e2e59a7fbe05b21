"""``gradguard check --fix`` / ``--diff`` / ``--unsafe-fixes``: the editor's fixes applied by the CLI.

The corpus test copies every bug fixture the analyzer finds (tests/fixtures/PENDING lists the ones
it does not find yet), fixes the copies with one CLI run, and runs the results under real torch
(tests/oracle.py): none may raise any more.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from cliutil import BUGGY, findings, run_check

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"

TWO_LOSSES = (  # GG101; preferred fix: one backward on the sum (safe)
    "import torch\n"
    "w = torch.ones(2, requires_grad=True)\n"
    "h = (w * 3).exp()\n"
    "loss1 = h.sum()\n"
    "loss2 = (h * 2).sum()\n"
    "loss1.backward()\n"
    "loss2.backward()\n"
)
STALE_TARGET = (  # GG101; preferred fix: compute the target under no_grad (unsafe)
    "import torch\n"
    "w = torch.ones(2, requires_grad=True)\n"
    "target = (w * 2).exp()\n"
    "for _ in range(3):\n"
    "    loss = ((w - target) ** 2).sum()\n"
    "    loss.backward()\n"
)


def pending() -> set[str]:
    path = FIXTURES / "PENDING"
    names = [line.split("#")[0].strip() for line in path.read_text().splitlines()] if path.exists() else []
    return {n for n in names if n}


def test_fix_on_every_fixture_yields_programs_that_run_clean(tmp_path):
    skip = pending()
    copies = []
    for entry in sorted([*FIXTURES.glob("*_bug.py"), *FIXTURES.glob("*_bug")]):
        name = entry.stem if entry.is_file() else entry.name
        if name in skip:
            continue
        target = tmp_path / entry.name
        (shutil.copytree if entry.is_dir() else shutil.copy)(entry, target)
        copies.append(target)
    assert len(copies) >= 40, copies
    proc = run_check("--fix", "--unsafe-fixes", "--no-cache", "-q", *[c.name for c in copies], cwd=tmp_path)
    assert proc.returncode in (0, 1), proc.stderr
    # every finding is fixed, and the fixed programs run clean
    assert not re.findall(r"^(.+?):\d+:\d+: GG\d{3} ", proc.stdout, re.M), proc.stdout
    oracle = subprocess.run([sys.executable, str(TESTS / "oracle.py"), *map(str, copies)],
                            capture_output=True, text=True, timeout=1800)
    assert oracle.returncode == 0, oracle.stderr[-3000:]
    results = json.loads(oracle.stdout)
    bad = {Path(p).name: r for p, r in results.items() if r["status"] != "clean"}
    assert not bad, bad
    unchanged = [c.name for c in copies if c.is_file() and c.read_text() == (FIXTURES / c.name).read_text()]
    assert not unchanged, unchanged


def test_safe_fixes_only_without_unsafe_fixes(tmp_path):
    (tmp_path / "two.py").write_text(TWO_LOSSES, encoding="utf-8")
    (tmp_path / "stale.py").write_text(STALE_TARGET, encoding="utf-8")
    proc = run_check("--fix", "--no-cache", ".", cwd=tmp_path)
    assert "(loss1 + loss2).backward()" in (tmp_path / "two.py").read_text()
    assert (tmp_path / "stale.py").read_text() == STALE_TARGET  # detach/no_grad change meaning
    assert [(n, code) for n, _, code in findings(proc.stdout)] == [("stale.py", "GG101")]
    assert "--unsafe-fixes" in proc.stdout
    assert "1 fixed" in proc.stderr and proc.returncode == 1
    proc = run_check("--fix", "--unsafe-fixes", "--no-cache", ".", cwd=tmp_path)
    assert "with torch.no_grad():" in (tmp_path / "stale.py").read_text()
    assert findings(proc.stdout) == [] and proc.returncode == 0, proc.stdout


def test_diff_shows_and_writes_nothing(tmp_path):
    (tmp_path / "bug.py").write_text(BUGGY, encoding="utf-8")
    proc = run_check("--diff", "bug.py", cwd=tmp_path)
    assert (tmp_path / "bug.py").read_text() == BUGGY
    assert proc.returncode == 1
    assert "--- a/bug.py" in proc.stdout and "+++ b/bug.py" in proc.stdout
    assert "+y.sum().backward(retain_graph=True)" in proc.stdout, proc.stdout
    clean = run_check("--diff", "--select", "GG102", "bug.py", cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""


def test_fix_keeps_encoding_bom_and_line_endings(tmp_path):
    for name, data in {"crlf.py": b"\xef\xbb\xbf" + BUGGY.replace("\n", "\r\n").encode(),
                       "cr.py": BUGGY.replace("\n", "\r").encode(),
                       "latin.py": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + BUGGY.encode()}.items():
        (tmp_path / name).write_bytes(data)
    proc = run_check("--fix", "--no-cache", ".", cwd=tmp_path)
    assert findings(proc.stdout) == [] and proc.returncode == 0, proc.stdout + proc.stderr
    crlf = (tmp_path / "crlf.py").read_bytes()
    assert crlf.startswith(b"\xef\xbb\xbf") and crlf.count(b"\r\n") == BUGGY.count("\n") and b"retain_graph=True" in crlf
    cr = (tmp_path / "cr.py").read_bytes()
    assert b"\n" not in cr and b"retain_graph=True" in cr
    latin = (tmp_path / "latin.py").read_bytes()
    assert b"caf\xe9" in latin and b"retain_graph=True" in latin


def test_fix_in_a_notebook(tmp_path):
    cells = ["import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n", "y.sum().backward()\n",
             "y.sum().backward()\n"]
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["notes"]}]
          + [{"cell_type": "code", "metadata": {}, "source": c.splitlines(keepends=True), "outputs": [],
              "execution_count": None} for c in cells], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
    proc = run_check("--fix", "--no-cache", "nb.ipynb", cwd=tmp_path)
    assert findings(proc.stdout) == [] and proc.returncode == 0, proc.stdout + proc.stderr
    fixed = json.loads((tmp_path / "nb.ipynb").read_text())
    assert fixed["cells"][0] == nb["cells"][0]
    assert "".join(fixed["cells"][2]["source"]) == "y.sum().backward(retain_graph=True)\n"
    assert [c["source"] for c in fixed["cells"][1:2] + fixed["cells"][3:]] == [nb["cells"][1]["source"],
                                                                              nb["cells"][3]["source"]]


def test_no_graph_cutting_fix_where_autograd_grad_needs_the_graph(tmp_path):
    """A WGAN-GP critic loop: detaching `fake` would make the penalty's autograd.grad(scores,
    interpolates) raise, so only recomputing it is offered, and that runs clean."""
    from gradguard import analyze_path

    program = tmp_path / "wgan.py"
    shutil.copy(FIXTURES / "wgan_gp_critic_line_bug.py", program)
    kinds = [fix.kind for f in analyze_path(str(program)).findings for fix in f.fixes]
    assert kinds and not {"detach", "no_grad"} & set(kinds), kinds
    run_check("--fix", "--unsafe-fixes", "--no-cache", "-q", program.name, cwd=tmp_path)
    oracle = subprocess.run([sys.executable, str(TESTS / "oracle.py"), str(program)], capture_output=True,
                            text=True, timeout=600)
    assert json.loads(oracle.stdout)[str(program)]["status"] == "clean", oracle.stdout
