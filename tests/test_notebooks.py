"""Notebooks in demo/ and tests/fixtures/: run their code cells in order with torch, and check
the analyzer reports GG101 on exactly the cell and line where torch raises (``# expect: GG101``)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import analyze_path
from gradguard.sources import read_notebook, strip_magics

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for d in (REPO / "demo", REPO / "tests" / "fixtures") for p in d.rglob("*.ipynb"))
EXPECT = re.compile(r"#\s*expect:\s*(GG\d+)")

# Executes the cells as one program, one compile() per cell so the traceback names the cell.
RUNNER = r"""
import json, sys, traceback
cells = json.load(sys.stdin)
import torch
torch.manual_seed(0)
scope = {"__name__": "__main__"}
for number, text in cells:
    try:
        exec(compile(text, f"<cell {number}>", "exec"), scope)
    except RuntimeError as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<cell ")]
        print(json.dumps({"cell": int(frames[-1].filename[6:-1]), "line": frames[-1].lineno, "message": str(exc)}))
        break
else:
    print(json.dumps(None))
"""


def expectations(path):
    out = set()
    for cell in read_notebook(str(path)):
        for line, text in enumerate(cell.text.split("\n"), 1):
            for match in EXPECT.finditer(text):
                out.add((cell.number, line, match.group(1)))
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_raises_where_marked_and_analyzer_agrees(path):
    cells = [(c.number, strip_magics(c.text)) for c in read_notebook(str(path))]
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(cells), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    raised = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = expectations(path)
    gg101 = {(c, l) for c, l, code in expected if code == "GG101"}
    if raised is None:
        assert not gg101, f"torch ran {path.name} clean, but it is marked to raise at {gg101}"
    else:
        assert "backward through the graph a second time" in raised["message"]
        assert gg101 == {(raised["cell"], raised["line"])}
    found = {(f.location.cell, f.location.line, f.code) for f in analyze_path(str(path)).findings}
    assert found == expected
