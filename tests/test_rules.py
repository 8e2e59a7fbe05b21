"""The rule registry (gradguard/rules/): every rule is one module, found by the registry, with
texts in every locale and a doc page; and the event rules on three-line programs, with the
facts they decide on printed (code, line) so that a refactor that changes them shows here."""
from __future__ import annotations

import textwrap

import pytest

from gradguard import rules
from gradguard.analysis import analyze_source


def test_every_rule_is_a_module_with_texts_and_a_doc_page():
    assert {"GG101", "GG102", "GG106", "GG107", "GG108"} <= set(rules.RULES)
    for code, rule in rules.RULES.items():
        assert rule.code == code and rule.severity in ("error", "warning", "info")
        for texts in (rule.summary, rule.message, rule.fix_help):
            assert set(texts) == set(rules.LOCALES), (code, texts)
        page = rules.DOCS_DIR / f"{code}.md"
        assert page.read_text(encoding="utf-8").startswith(f"# {code}:"), page
        for event in rule.events:
            assert rule in rules.SUBSCRIBERS[event]


def _codes(program: str) -> list:
    result = analyze_source(textwrap.dedent(program), "<snippet>")
    return [(f.code, f.location.line) for f in result.findings]


@pytest.mark.parametrize("program, expected", [
    # GG107: what requires grad, not where it is converted
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\n", [("GG107", 3)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    (w * 2).numpy()\n", []),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    w.numpy()\n", [("GG107", 4)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\n(w * 2).detach().numpy()\n", []),
    ("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nnp.mean([w * 2, w * 3])\n",
     [("GG107", 4)]),
    # np.mean of one tensor calls the tensor's own mean(): a TypeError, not GG107
    ("import numpy as np\nimport torch\nw = torch.ones(2, requires_grad=True)\nnp.mean(w * 2)\n", []),
    ("import torch\nx = torch.ones(2)\n(x * 2).numpy()\n", []),
    # GG108: only with grad recording known to be on
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw -= 0.1\n", [("GG108", 3)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nwith torch.no_grad():\n    w -= 0.1\n", []),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw[0] = 1.0\n", [("GG108", 3)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw.clamp_(0, 1)\n", [("GG108", 3)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw.requires_grad_(False)\nw.clamp_(0, 1)\n", []),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nh = w * 2\nh.clamp_(0, 1)\n", []),
    # a helper nothing calls may run under no_grad where it is called
    ("import torch\ndef update(w, lr):\n    w -= lr * w.grad\n", []),
    # the program stops at the first error
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw.numpy()\nw -= 1\n", [("GG107", 3)]),
])
def test_event_rules_on_snippets(program, expected):
    assert _codes(program) == expected


@pytest.mark.parametrize("program, expected", [
    ("import torch\nw = torch.ones(2, requires_grad=True) * 2\nw.sum().backward()\nw.grad\n", [("GG106", 4)]),
    ("import torch\nw = torch.ones(2, requires_grad=True)\nw.sum().backward()\nw.grad\n", []),
    ("import torch\nw = torch.ones(2, requires_grad=True) * 2\nw.retain_grad()\nw.sum().backward()\nw.grad\n", []),
    # the None is never "not None": the guarded update does not run, and is not reported
    ("import torch\nw = torch.ones(2, requires_grad=True) * 2\nw.sum().backward()\n"
     "if w.grad is not None:\n    print(w.grad)\n", [("GG106", 4)]),
    # using the None raises (TypeError): torch never reaches the second backward
    ("import torch\nw = torch.ones(2, requires_grad=True) * 2\nfor i in range(2):\n"
     "    (w * w).sum().backward()\n    w = w - 0.1 * w.grad\n", [("GG106", 5)]),
])
def test_grad_of_a_non_leaf(program, expected):
    assert _codes(program) == expected


W = "import torch\nw = torch.ones(3, requires_grad=True)\n"


@pytest.mark.parametrize("program, expected", [
    # GG103: what the node kept, not what was touched
    (W + "p = torch.sigmoid(w * 2)\np.clamp_(0, 1)\np.sum().backward()\n", [("GG103", 5)]),
    (W + "h = w * 2\np = h.exp()\nh.add_(1)\np.sum().backward()\n", []),  # exp keeps its result
    (W + "h = w * 2\np = h.log()\nh.add_(1)\np.sum().backward()\n", [("GG103", 6)]),  # log keeps its input
    (W + "x = torch.ones(3)\ny = (w * x).sum()\nx.add_(1)\ny.backward()\n", [("GG103", 6)]),  # x kept for w
    (W + "x = torch.ones(3)\ny = (w * 2 * x).sum()\nw.data.add_(1)\ny.backward()\n", []),  # .data: no version
    # GG104: certainly no graph, and only then
    (W + "with torch.no_grad():\n    loss = (w * 2).sum()\nloss.backward()\n", [("GG104", 5)]),
    (W + "loss = (w.detach() * 2).sum()\nloss.backward()\n", [("GG104", 4)]),
    (W + "loss = torch.tensor((w * 2).sum().item())\nloss.backward()\n", [("GG104", 4)]),
    ("import torch\ndef f(x):\n    return (x * 2).sum()\n", []),
    ("import torch\nimport lib\nloss = (lib.model(torch.ones(3)) * 2).sum()\nloss.backward()\n", []),
    # a buffer filled with a graph in a helper: the buffer may now require grad
    (W + "buf = torch.zeros(3)\ndef fill(b):\n    b[0] = w[0] * 2\nfill(buf)\nbuf.sum().backward()\n", []),
    # GG104 through frozen parameters: only when every one is frozen on every path
    ("import torch\nm = torch.nn.Linear(2, 1)\nfor p in m.parameters():\n    p.requires_grad = False\n"
     "m(torch.ones(3, 2)).sum().backward()\n", [("GG104", 5)]),
    ("import torch\nm = torch.nn.Linear(2, 1)\nm.requires_grad_(False)\nm(torch.ones(3, 2)).sum().backward()\n",
     [("GG104", 4)]),
    ("import torch\nm = torch.nn.Linear(2, 1)\nm.weight.requires_grad = False\n"
     "m(torch.ones(3, 2)).sum().backward()\n", []),  # the bias still requires grad
    ("import torch\nimport sys\nm = torch.nn.Linear(2, 1)\nfor p in m.parameters():\n    if sys.argv:\n"
     "        p.requires_grad = False\nm(torch.ones(3, 2)).sum().backward()\n", []),
    # GG105: the shape is followed as far as "one element or not"
    (W + "(w * 2).backward()\n", [("GG105", 3)]),
    (W + "(w * 2).sum().backward()\n", []),
    (W + "(w * 2)[0].backward()\n", []),
    (W + "(w * 2).backward(torch.ones(3))\n", []),
    ("import torch\nimport lib\nw = torch.ones(3, requires_grad=True)\n(lib.f(w) * 2).backward()\n", []),
])
def test_error_family_on_snippets(program, expected):
    assert _codes(program) == expected


@pytest.mark.parametrize("program, expected", [
    # GG201: adding to applied gradients, then applying them again
    (W + "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(3):\n    (w * 2).sum().backward()\n    opt.step()\n",
     [("GG201", 5)]),
    (W + "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(3):\n    opt.zero_grad()\n"
         "    (w * 2).sum().backward()\n    opt.step()\n", []),
    (W + "opt = torch.optim.SGD([w], lr=0.1)\nfor i in range(3):\n    (w * 2).sum().backward()\n"
         "    opt.step()\n    w.grad = None\n", []),
    # GG202: a total nobody walks, but not one that is backwarded
    (W + "total = 0\nfor i in range(3):\n    total += (w * i).sum()\n", [("GG202", 5)]),
    (W + "total = 0\nfor i in range(3):\n    total += (w * i).sum().item()\n", []),
    (W + "total = 0\nfor i in range(3):\n    total += (w * i).sum()\ntotal.backward()\n", []),
    # GG203: a retained graph nothing walks later
    (W + "for i in range(2):\n    (w * 2).sum().backward(retain_graph=True)\n", [("GG203", 4)]),
    (W + "y = (w * 2).sum()\nfor i in range(2):\n    y.backward(retain_graph=True)\n", []),
    # ... but a create_graph=True call keeps its graph by design (retain_graph defaults to it)
    (W + "for i in range(2):\n    (g,) = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)\n", []),
    (W + "for i in range(2):\n    (w ** 3).sum().backward(create_graph=True)\n    w.grad = None\n", []),
    (W + "for i in range(2):\n    (g,) = torch.autograd.grad((w ** 3).sum(), w, create_graph=False, retain_graph=True)\n",
     [("GG203", 4)]),
    # ... nor one a later backward over values the analysis did not follow may walk
    (W + "import lib\ny = (w * 2).sum()\ny.backward(retain_graph=True)\ntorch.autograd.backward(lib.outputs())\n", []),
    # ... such as a list that a loop's branch may have extended (what the other path knew of
    # its items is known no more after the join)
    (W + "import sys\ny = (w * 2).sum()\ny.backward(retain_graph=True)\npairs = []\nfor arg in sys.argv:\n"
         "    if arg:\n        pairs.extend(zip([y], [None]))\nouts, grads = zip(*pairs)\n"
         "torch.autograd.backward(outs, grads)\n", []),
    # GG202: fast weights stepped by their own gradient are an unrolled inner loop, not a total
    (W + "fast = w\nfor i in range(3):\n    (g,) = torch.autograd.grad((fast ** 3).sum(), fast, create_graph=True)\n"
         "    fast = fast - 0.1 * g\n", []),
    (W + "fast = w\nfor i in range(3):\n    (g,) = torch.autograd.grad((fast ** 3).sum(), fast)\n"
         "    fast = fast - 0.1 * g\n", []),
    (W + "fast = w\nfor i in range(3):\n    fast = fast - 0.1 * (w ** 3)\n", [("GG202", 5)]),  # new graph each step
])
def test_good_practice_rules_on_snippets(program, expected):
    assert _codes(program) == expected


@pytest.mark.parametrize("second, twice", [
    ("y.backward()", True),
    ("torch.autograd.grad(y, w)", False),
])
def test_gg102_says_twice_only_when_both_walks_accumulate(second, twice):
    """``autograd.grad`` returns its gradients: nothing is accumulated twice, and clearing ``.grad``
    is no fix for it."""
    program = W + f"y = (w + 1).sum()\ny.backward()\n{second}\n"
    (finding,) = analyze_source(program, "<snippet>").findings
    assert finding.code == "GG102"
    assert ("accumulated twice" in finding.message) is twice
    assert ("累加两次" in rules.render(finding, "zh-cn")) is twice
    kinds = [f.kind for f in finding.fixes]
    assert kinds == (["retain_graph_and_insert_before"] if twice else ["retain_graph"]), kinds
