"""Which flags cannot change (invariants.py), printed for tiny programs, and what the engine does
with them: the branches of two tests of one settled flag are taken together."""
from __future__ import annotations

import ast
import re
import textwrap

import pytest

import torchrun

from gradguard.analysis import analyze_source
from gradguard.invariants import settled_names, written_attributes


def _settled(code: str) -> list:
    """Walked as the engine does (only the statements on lines of the text holding a walrus
    are looked into), which must agree with looking into every statement."""
    code = textwrap.dedent(code)
    tree = ast.parse(code)
    scope = tree.body[0] if isinstance(tree.body[0], ast.FunctionDef) else tree
    assert settled_names(scope, code) == settled_names(scope)
    return sorted(settled_names(scope, code))


@pytest.mark.parametrize("code, expected", [
    ("FLAG = x\ny = 1\ny = 2\n", ["FLAG"]),
    ("for i in r:\n    k = i\n", []),  # bound once in the text, once per iteration at run time
    ("while c:\n    k = 1\n", []),
    ("import os\nfrom a import b as c\n", ["c", "os"]),
    ("def f(a, *b, c, **d):\n    e = 1\n    a = 2\n", ["b", "c", "d", "e"]),
    ("def f(flag):\n    def g():\n        nonlocal flag\n        flag = 0\n    return g\n", ["g"]),
    ("def f():\n    [y := i for i in r]\n", []),  # a walrus in a comprehension: once per element
    ("FLAG = 1\ndef f():\n    global FLAG\n    FLAG = 2\n", ["f"]),
    ("try:\n    pass\nexcept E as err:\n    pass\n", ["err"]),
    ("with open(p) as fh:\n    pass\n", ["fh"]),
    ("x = 1\ndel x\n", []),
    ("def f():\n    k = 0\n    if c:\n        while (\n            k\n            := g()):\n            pass\n", []),
    ("match p:\n    case [a, *rest]:\n        b = 1\n", ["a", "b", "rest"]),
    ("K = 1\nclass C:\n    def f(self):\n        if x:\n            def g():\n                global K\n"
     "                K = 2\n", ["C"]),
])
def test_names_bound_once_outside_loops(code, expected):
    assert _settled(code) == expected


@pytest.mark.parametrize("code, expected", [
    ("class A:\n    def __init__(self, t):\n        self.tune = t\n", []),
    ("class A:\n    def step(self):\n        self.alpha = 1\n        self.n += 1\n", ["alpha", "n"]),
    ("a.flag = False\n", ["flag"]),
    ("setattr(a, 'flag', 1)\n", ["flag"]),
    ("setattr(a, name, 1)\n", ["*"]),
    ("del a.cache\n", ["cache"]),
    ("class A:\n    def __init__(self):\n        def later():\n            self.k = 1\n", []),
    ("class A:\n    def f(self):\n        if x:\n            for k in ks:\n                f(\n                    setattr(\n"
     "                        self, 'mode', 1))\n", ["mode"]),
    ("def clear(o, name):\n    delattr(o, name)\n", ["*"]),
])
def test_attributes_written_outside_init(code, expected):
    """Walked as the engine does (the expressions of statements on lines naming setattr or
    delattr), which must agree with looking into every statement's."""
    tree = ast.parse(code)
    assert written_attributes(tree, code) == written_attributes(tree)
    assert sorted(written_attributes(tree, code)) == expected


_TUNED = """\
import sys
import torch

w = torch.randn(3, requires_grad=True)
log_alpha = torch.zeros(1, requires_grad=True)
{setup}
for episode in range(3):
    for step in range(min(len(sys.argv), 1) + 2):
        loss = (agent.alpha * (w * torch.randn(3))).sum()
        loss.backward()
        {flip}
        agent.update()
"""

_AGENT = """\
class Agent:
    def __init__(self, tune):
        self.tune = tune
        self.alpha = 0.5

    def update(self):
        if self.tune:
            self.alpha = log_alpha.exp()

agent = Agent(len(sys.argv) > 0)
"""


def _torch_raises_at(program: str, tmp_path) -> int | None:
    """Run the program with torch: the line of the program the error it raises comes from."""
    path = tmp_path / "program.py"
    path.write_text(program)
    proc = torchrun.run(path)
    if proc.returncode == 0:
        return None
    assert "Trying to backward through the graph a second time" in proc.stderr, proc.stderr[-2000:]
    return int(re.findall(r'program\.py", line (\d+)', proc.stderr)[-1])


def test_an_attribute_set_only_in_init_correlates_its_tests(tmp_path):
    """One update rebuilding alpha and the next keeping it never happen together."""
    silent = _TUNED.format(setup=_AGENT, flip="")
    assert _torch_raises_at(silent, tmp_path) is None
    assert analyze_source(silent, "<t>").findings == []
    # flipped from outside the class, the attribute is no settled flag: the stale alpha is walked
    flipped = _TUNED.format(setup=_AGENT, flip="agent.tune = not agent.tune")
    line = _torch_raises_at(flipped, tmp_path)
    assert [(f.code, f.location.line) for f in analyze_source(flipped, "<t>").findings] == [("GG101", line)]


def test_a_walrus_or_match_capture_binds_too():
    assert _settled("if (n := f()):\n    pass\nk = 1\n") == ["k"]
    assert _settled("match p:\n    case [a, *rest]:\n        pass\n    case {'k': v, **others}:\n        pass\n") \
        == ["a", "others", "rest", "v"]
    assert _settled("def f(a):\n    match a:\n        case b:\n            b = 2\n") == ["a"]
