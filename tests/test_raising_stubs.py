"""An exercise's stub raises before any backward, so what follows never runs: a name no path has
bound raises NameError where it is read (a forward that returns names it never set), and an
optimizer refuses a model without parameters (an empty ``nn.Sequential()``). Each program runs
with real torch: as written it raises that error; completed, it raises the autograd error the
analysis then reports."""
from __future__ import annotations

import textwrap

import torchrun

from gradguard.analysis import analyze_source

STUB = """\
    import torch
    import torch.nn as nn

    class AttnDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.out = nn.Linear(4, 4)

        def forward(self, x):
            # your code here
            {body}
            return output, attn_weights

    decoder = AttnDecoder()
    x = torch.randn(2, 4)
    y, attn = decoder(x)
    loss = (y * y).sum()
    y.add_(1)
    loss.backward()
    """


def _program(body: str) -> str:
    return textwrap.dedent(STUB).replace("{body}", body)


def test_a_name_never_bound_ends_the_path(tmp_path):
    stub, done = _program("pass"), _program("output = self.out(x); attn_weights = None")
    for name, source in (("stub.py", stub), ("done.py", done)):
        (tmp_path / name).write_text(source)
    raised = torchrun.run(tmp_path / "stub.py")
    assert raised.returncode != 0 and "NameError: name 'output' is not defined" in raised.stderr, raised.stderr[-2000:]
    completed = torchrun.run(tmp_path / "done.py")
    assert completed.returncode != 0 and "modified by an inplace operation" in completed.stderr, completed.stderr[-2000:]
    assert analyze_source(stub, str(tmp_path / "stub.py")).findings == []
    assert [f.code for f in analyze_source(done, str(tmp_path / "done.py")).findings] == ["GG103"]


def test_a_name_something_unseen_may_bind_is_no_proof(tmp_path):
    """A star import of another library may bind it: the path goes on to the next backward."""
    later = "w = torch.randn(3, requires_grad=True)\nz = (w * w).sum()\nz.backward()\nz.backward()\n"
    stub = _program("pass") + later
    assert analyze_source(stub, str(tmp_path / "stub.py")).findings == []
    starred = "from math import *\n" + stub
    assert [f.code for f in analyze_source(starred, str(tmp_path / "star.py")).findings] == ["GG101"]


EMPTY_MODEL = """\
    import torch
    import torch.nn as nn

    x = torch.linspace(-1, 1, 20).unsqueeze(1)
    net = nn.Sequential(
        {layers}
    )
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    for p in net.parameters():
        p.requires_grad_(False)
    loss = (net(x) - x).pow(2).mean()
    loss.backward()
    """


def test_an_optimizer_over_no_parameters_raises_first(tmp_path):
    stub = textwrap.dedent(EMPTY_MODEL).replace("{layers}", "# TODO")
    done = textwrap.dedent(EMPTY_MODEL).replace("{layers}", "nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1)")
    for name, source in (("stub.py", stub), ("done.py", done)):
        (tmp_path / name).write_text(source)
    raised = torchrun.run(tmp_path / "stub.py")
    assert raised.returncode != 0 and "optimizer got an empty parameter list" in raised.stderr, raised.stderr[-2000:]
    completed = torchrun.run(tmp_path / "done.py")
    assert completed.returncode != 0 and "does not require grad" in completed.stderr, completed.stderr[-2000:]
    assert analyze_source(stub, str(tmp_path / "stub.py")).findings == []
    assert [f.code for f in analyze_source(done, str(tmp_path / "done.py")).findings] == ["GG104"]
