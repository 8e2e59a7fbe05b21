"""Notebooks in demo/ and tests/fixtures/: run their code cells in order with torch, and check
the analyzer reports GG101 on exactly the cell and line where torch raises (``# expect: GG101``)."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradguard import analyze_path
from gradguard.analysis import analyze_cells
from gradguard.sources import UNPARSED_CELL, read_notebook, strip_magics, unparsed_stand_in

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


# A cell that does not parse (a course's template, a cell mid-typing) is code the analysis cannot
# see. Cells: the first trains once; the second is the template; the third walks `loss` again.
TRAIN = "import torch\nw = torch.ones(3, requires_grad=True)\nloss = (w * w).sum()\nloss.backward()"
TEMPLATES = [
    # (template cell, a completion of it that a user may write, what the third cell does then)
    ("loss = <YOUR CODE>\nassert loss.dim() == 0", "loss = (w * 3).sum()\nassert loss.dim() == 0", None),
    ("plt.plot(<YOUR CODE>)", None, "GG101"),  # mentions no `loss`: the walk still raises
]


@pytest.mark.parametrize("template,completion,expected", TEMPLATES)
def test_a_cell_that_does_not_parse_is_unknown_code(template, completion, expected):
    cells = [TRAIN, template, "loss.backward()"]
    found = {(f.location.cell, f.location.line, f.code) for f in analyze_cells(cells, "template.ipynb").findings}
    assert found == ({(3, 1, expected)} if expected else set())
    # torch: with the template filled in (or left out, when it cannot change `loss`)
    ran = [(1, TRAIN)] + ([(2, completion)] if completion else []) + [(3, "loss.backward()")]
    proc = subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(ran), capture_output=True,
                          text=True, timeout=300)
    raised = json.loads(proc.stdout.strip().splitlines()[-1])
    assert (raised is None) == (expected is None), raised
    if raised:
        assert "backward through the graph a second time" in raised["message"] and raised["cell"] == 3


def test_what_a_cell_that_does_not_parse_may_bind():
    stand_in = unparsed_stand_in("x, y = <YOUR CODE>\nmodel.fc = nn.Linear(len(x), 2)\nprint(torch.\n", {"nn", "torch"})
    assert stand_in == f"x = y = YOUR = CODE = model = {UNPARSED_CELL}()\n\n\n"  # not fc, nn, torch, len, print
    assert unparsed_stand_in("s = 'open\n", set()).count("\n") == 1
