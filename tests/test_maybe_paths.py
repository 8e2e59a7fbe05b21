"""An error is a proof: a graph that a branch whose test the analysis cannot decide may cut
(``h = torch.zeros(...)``, ``self.v = 0.``, a buffer's ``detach_()``) is held on some paths only,
so a backward over it is a warning with that reason, never an error. Each program is run with
real torch both ways: the branch taken (clean) and not taken (it raises)."""
from __future__ import annotations

import textwrap

import pytest

import torchrun

from gradguard.analysis import analyze_source

PROGRAMS = {
    "a carried state reset on some steps": """\
        import sys
        import torch
        w = torch.randn(3, requires_grad=True)
        h = torch.zeros(3)
        for step in range(3):
            h = h * w + 1
            h.sum().backward()
            if len(sys.argv) > 1:  # an episode ends
                h = torch.zeros(3)
        """,
    "a neuron's potential reset when its layer says so": """\
        import sys
        import torch
        import torch.nn as nn

        class Neuron(nn.Module):
            def __init__(self):
                super().__init__()
                self.v = 0.

            def reset(self):
                if len(sys.argv) > 1:
                    self.v = 0.

            def forward(self, x):
                self.v = self.v * 0.5 + x
                return torch.sigmoid(self.v)

        fc, neuron = nn.Linear(4, 4), Neuron()
        for step in range(3):
            neuron(fc(torch.randn(2, 4))).sum().backward()
            neuron.reset()
        """,
    "an in-place write into a saved tensor whose loss a branch may replace": """\
        import sys
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(w * 2)  # saves its output
        loss = y.sum()
        y.add_(1)
        if len(sys.argv) > 1:  # a step skipped: a loss without graph
            loss = torch.zeros((), requires_grad=True)
        loss.backward()
        """,
    "a penalty weight kept by max() of a number and a graph": """\
        import sys
        import torch
        w = torch.ones(3, requires_grad=True)
        offset = 100.0 if len(sys.argv) > 1 else -100.0  # cut: the weight stays the number 0
        beta = 0.0
        for _ in range(3):
            bottleneck = (w * 2).sum() - offset
            beta = max(0, beta + 0.1 * bottleneck)  # one of them, as their values decide
            loss = (w ** 2).sum() + beta * bottleneck
            loss.backward()
        """,
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_graph_a_branch_may_cut_is_a_warning(name, tmp_path):
    source = textwrap.dedent(PROGRAMS[name])
    path = tmp_path / "prog.py"
    path.write_text(source)
    kept, cut = torchrun.run(path), torchrun.run(path, "cut")
    assert kept.returncode != 0 and "RuntimeError" in kept.stderr, kept.stderr[-2000:]
    assert cut.returncode == 0, cut.stderr[-2000:]
    found = [f for f in analyze_source(source, str(path)).findings if f.code in ("GG101", "GG103")]
    assert found and all(f.severity == "warning" for f in found), [(f.code, f.severity) for f in found]
    assert all("a branch GradGuard cannot decide" in f.message for f in found), [f.message for f in found]
