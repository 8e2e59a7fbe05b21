"""Suppression comments and quick fixes with every line ending Python accepts (LF, CRLF, a lone
CR) and with characters ``str.splitlines`` breaks on but Python does not (form feed, U+2028)
inside comments."""
from __future__ import annotations

import pytest

from gradguard import analyze_source
from gradguard.fixes import apply_edits, fix_all_edits, fix_edits, python_lines, suppression_edit

ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
ODD = {"plain": "", "formfeed": "\x0c", "u2028": "\u2028", "u2029": "\u2029", "vt": "\x0b", "nel": "\x85"}

RETAIN = ("import torch\n# part one{odd} of two\nx = torch.ones(2, requires_grad=True)\n"
          "y = x.exp()  # saves{odd} its output\ny.sum().backward()\ny.sum().backward(){suffix}\n")
STALE = ("import torch\nw = torch.ones(2, requires_grad=True)\ntarget = (w * 2).exp()  # fixed{odd} target\n"
         "for _ in range(3):\n    # step{odd}\n    loss = ((w - target) ** 2).sum()\n    loss.backward(){suffix}\n")
CARRIED = ("import torch\nrnn = torch.nn.RNNCell(2, 2)\nh = torch.zeros(1, 2)\nfor _ in range(3):\n"
           "    h = rnn(torch.ones(1, 2), h)  # carry{odd}\n    h.sum().backward(){suffix}\n")
PROGRAMS = {"retain": RETAIN, "stale": STALE, "carried": CARRIED}


def program(name, ending, odd, suffix=""):
    return PROGRAMS[name].format(odd=ODD[odd], suffix=suffix).replace("\n", ENDINGS[ending])


def codes(text):
    return [(f.code, f.location.line) for f in analyze_source(text, "prog.py").findings]


@pytest.mark.parametrize("odd", sorted(ODD))
@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_suppression_comments(name, ending, odd):
    plain = program(name, ending, odd)
    found = codes(plain)
    assert found and found[0][0] == "GG101", found
    assert codes(program(name, ending, odd, "  # gradguard: ignore[GG101]")) == []
    assert codes(program(name, ending, odd, "  # gradguard: ignore")) == []
    assert codes(program(name, ending, odd, "  # gradguard: ignore[GG102]")) == found  # another code


@pytest.mark.parametrize("odd", sorted(ODD))
@pytest.mark.parametrize("ending", sorted(ENDINGS))
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_quick_fixes_and_suppression_edits(name, ending, odd):
    text = program(name, ending, odd)
    findings = analyze_source(text, "prog.py").findings
    assert findings
    for finding in findings:
        assert finding.fixes, finding
        for fix in finding.fixes:
            fixed = apply_edits(text, fix_edits(fix, {None: text}))
            assert codes(fixed) == [], (fix.kind, fixed)
            assert ODD[odd] in fixed or not ODD[odd]  # comments kept
            newline = ENDINGS[ending]
            assert all(line.endswith(newline) for line in python_lines(fixed)), (fix.kind, repr(fixed))
        suppressed = apply_edits(text, [suppression_edit(finding, {None: text})])
        assert codes(suppressed) == []
    edits = fix_all_edits(findings, {None: text})
    assert edits and codes(apply_edits(text, edits)) == []  # fix-all is never an empty edit


def test_python_lines_split_only_where_python_does():
    assert python_lines("a\x0cb\u2028c\r\nd\re\nf") == ["a\x0cb\u2028c\r\n", "d\r", "e\n", "f"]
