"""Messages name variables as the user wrote them at the place the user looks: the caller's name,
not the callee's parameter or a factory's local; the related places keep their own names."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

from gradguard import analyze_source

FACTORY = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def build():
        g = nn.Linear(2, 2)
        return g


    def make_target(net, x):
        t = net(x)
        return t


    G = build()
    z = torch.randn(4, 2)
    target = make_target(G, z)
    features = G(z)
    for _ in range(2):
        loss = (G(z) - target).pow(2).sum()
        loss.backward()
""")

METHOD = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Linear(4, 4)
            self.a = nn.Linear(4, 1)
            self.b = nn.Linear(4, 1)

        def forward(self, x):
            h = self.trunk(x)
            return self.a(h), self.b(h)


    model = TwoHeads()
    out_a, out_b = model(torch.randn(2, 4))
    out_a.sum().backward()
    out_b.sum().backward()
""")


def test_callee_parameters_are_named_as_the_caller_passed_them():
    (finding,) = analyze_source(FACTORY, "factory.py").findings
    assert "`target` was computed from the parameters of `G` on line 11" in finding.message, finding.message
    built = next(r for r in finding.related if r.key == "built")
    # at line 11, inside make_target, the names are the callee's own
    assert (built.location.line, built.message) == (11, "`t` was computed here from the parameters of `net`")
    made = next(r for r in finding.related if r.key == "origin_params")
    assert (made.location.line, made.message) == (6, "parameters of `g` are created here")


def test_self_is_named_as_the_caller_holds_the_module():
    (finding,) = analyze_source(METHOD, "method.py").findings
    assert "the parameters of `model.trunk` on line 13" in finding.message, finding.message
    built = next(r for r in finding.related if r.key == "built")
    assert built.message == "`h` was computed here from the parameters of `self.trunk`"


def test_a_factory_result_is_named_where_it_is_used():
    text = FACTORY.replace("(G(z) - target)", "features")
    (finding,) = analyze_source(text, "factory.py").findings
    assert "`features` was computed from the parameters of `G`" in finding.message, finding.message


def test_a_comprehension_variable_is_named_by_what_the_comprehension_builds():
    """``e`` of ``ema = [0.9 * e + 0.1 * p for e, p in ...]`` is nothing the user can point at:
    the finding names ``ema``, the list its graph was built into."""
    text = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F
        student = torch.nn.Linear(4, 3)
        ema = [p.detach().clone() for p in student.parameters()]
        x = torch.randn(8, 4)
        for step in range(3):
            loss = (student(x) - F.linear(x, ema[0], ema[1])).pow(2).mean()
            loss.backward()
            ema = [0.9 * e + 0.1 * p for e, p in zip(ema, student.parameters())]
        """)
    (finding,) = analyze_source(text, "ema.py").findings
    assert "`ema` was computed from the parameters of `student` on line 9" in finding.message, finding.message
    ran = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True, timeout=300)
    assert "backward through the graph a second time" in ran.stderr
    assert re.findall(r'File "<string>", line (\d+)', ran.stderr)[-1] == str(finding.location.line) == "8"
