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
