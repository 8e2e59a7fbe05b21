"""gradguard.fixes: fix intents -> minimal text edits (no server involved)."""
from __future__ import annotations

import ast

import pytest

from gradguard.findings import Finding, Fix, Location
from gradguard.fixes import (FixError, apply_edits, fix_all_edits, fix_edits, fix_from_data,
                             fix_to_data, suppression_edit)


def loc(line, col, end_line, end_col, cell=None):
    return Location("/p/x.py", line, col, end_line, end_col, cell)


def fixed(src: str, fix: Fix) -> str:
    out = apply_edits(src, fix_edits(fix, {None: src}))
    ast.parse(out)
    return out


def span_of(src: str, needle: str, line_no: int) -> Location:
    """The Location of ``needle`` on 1-based ``line_no`` (code-point columns)."""
    line = src.splitlines()[line_no - 1]
    col = line.index(needle) + 1
    return loc(line_no, col, line_no, col + len(needle))


# --- retain_graph ------------------------------------------------------------------------------

def test_retain_graph_inserts_keyword_in_empty_and_filled_calls():
    src = "a.backward()\nb.backward(g)\ntorch.autograd.grad(y, [x])\n"
    fix = Fix("retain_graph", "t", (("call0", span_of(src, "a.backward()", 1)),
                                    ("call1", span_of(src, "b.backward(g)", 2)),
                                    ("call2", span_of(src, "torch.autograd.grad(y, [x])", 3))))
    assert fixed(src, fix) == ("a.backward(retain_graph=True)\nb.backward(g, retain_graph=True)\n"
                               "torch.autograd.grad(y, [x], retain_graph=True)\n")


def test_retain_graph_replaces_an_explicit_false_and_keeps_comments():
    src = "loss.backward(retain_graph=False)  # first\n"
    fix = Fix("retain_graph", "t", (("call0", span_of(src, "loss.backward(retain_graph=False)", 1)),))
    assert fixed(src, fix) == "loss.backward(retain_graph=True)  # first\n"


def test_retain_graph_on_a_multi_line_call_with_trailing_comma():
    src = "loss.backward(\n    grad,  # why\n)\n"
    fix = Fix("retain_graph", "t", (("call0", loc(1, 1, 3, 2)),))
    assert fixed(src, fix) == "loss.backward(\n    grad, retain_graph=True,  # why\n)\n"


@pytest.mark.parametrize("src, expected", [
    ("loss.backward(retain_graph=True)\n", "loss.backward()\n"),
    ("g = grad(y, x, retain_graph=True)\n", "g = grad(y, x)\n"),
    ("g = grad(y, (w, b), retain_graph=True)  # why\n", "g = grad(y, (w, b))  # why\n"),
    ("g = grad(y, x, retain_graph=True, create_graph=False)\n", "g = grad(y, x, create_graph=False)\n"),
    ("loss.backward(retain_graph=True, inputs=[w])\n", "loss.backward(inputs=[w])\n"),
])
def test_drop_retain_graph_keeps_the_other_arguments_whole(src, expected):
    call = src.split(" = ")[-1].split("  #")[0].rstrip("\n")
    assert fixed(src, Fix("drop_retain_graph", "t", (("call", span_of(src, call, 1)),))) == expected


# --- detach ------------------------------------------------------------------------------------

@pytest.mark.parametrize("src, needle, expected", [
    ("y = f(x)\n", "f(x)", "y = f(x).detach()\n"),
    ("y = a * b + c\n", "a * b + c", "y = (a * b + c).detach()\n"),
    ("y = self.net(x)[0]\n", "self.net(x)[0]", "y = self.net(x)[0].detach()\n"),
    ("y = -x\n", "-x", "y = (-x).detach()\n"),
])
def test_detach_parenthesises_only_non_atomic_expressions(src, needle, expected):
    assert fixed(src, Fix("detach", "t", (("expr", span_of(src, needle, 1)),))) == expected


@pytest.mark.parametrize("src, needle, expected", [
    ("a = h.numpy()\n", "h", "a = h.detach().cpu().numpy()\n"),
    ("a = (x * 2).numpy()\n", "x * 2", "a = (x * 2).detach().cpu().numpy()\n"),
    ("a = np.array(-x)\n", "-x", "a = np.array((-x).detach().cpu())\n"),
])
def test_detach_cpu_for_numpy_holds_on_any_device(src, needle, expected):
    assert fixed(src, Fix("detach_cpu", "t", (("expr", span_of(src, needle, 1)),))) == expected


def test_detach_elements_bring_each_tensor_to_the_cpu():
    src = "m = np.mean(losses)\n"
    assert fixed(src, Fix("detach_elements", "t", (("expr", span_of(src, "losses", 1)),))) == \
        "m = np.mean([t.detach().cpu() for t in losses])\n"


def test_detach_after_existing_parentheses_across_lines():
    src = "y = (a +\n     b)  # sum\n"
    fix = Fix("detach", "t", (("expr", loc(1, 6, 2, 7)),))
    assert fixed(src, fix) == "y = (a +\n     b).detach()  # sum\n"


def test_detach_with_non_ascii_text_before_the_expression():
    src = 's = "😀"; 目标 = torch.mm(x, w)\n'
    assert fixed(src, Fix("detach", "t", (("expr", span_of(src, "torch.mm(x, w)", 1)),))) == \
        's = "😀"; 目标 = torch.mm(x, w).detach()\n'


# --- no_grad -----------------------------------------------------------------------------------

def test_no_grad_wraps_a_module_level_statement():
    src = "import torch\nY = torch.mm(X, w) + b  # target\nprint(Y)\n"
    fix = Fix("no_grad", "t", (("stmt", loc(2, 1, 2, 23)),))
    assert fixed(src, fix) == ("import torch\nwith torch.no_grad():\n    Y = torch.mm(X, w) + b  # target\n"
                               "print(Y)\n")


def test_no_grad_keeps_indentation_comments_and_multi_line_strings():
    src = ("import torch as th\n"
           "def f():\n"
           "    a = g(x,\n"
           "          y)\n"
           "    # note\n"
           "    s = '''one\n"
           "two'''\n"
           "    return a\n")
    fix = Fix("no_grad", "t", (("stmt", loc(3, 5, 7, 7)),))
    assert fixed(src, fix) == ("import torch as th\n"
                               "def f():\n"
                               "    with th.no_grad():\n"
                               "        a = g(x,\n"
                               "              y)\n"
                               "        # note\n"
                               "        s = '''one\n"
                               "two'''\n"
                               "    return a\n")


def test_no_grad_uses_tabs_when_the_file_does():
    src = "import torch\nif ok:\n\tt = f(w)\n"
    fix = Fix("no_grad", "t", (("stmt", loc(3, 2, 3, 10)),))
    assert fixed(src, fix) == "import torch\nif ok:\n\twith torch.no_grad():\n\t\tt = f(w)\n"


def test_no_grad_adds_the_torch_import_after_docstring_and_future_imports():
    src = '"""Doc."""\nfrom __future__ import annotations\nfrom torch import nn\nt = f(w)\n'
    fix = Fix("no_grad", "t", (("stmt", loc(4, 1, 4, 9)),))
    assert fixed(src, fix) == ('"""Doc."""\nfrom __future__ import annotations\nimport torch\n'
                               'from torch import nn\nwith torch.no_grad():\n    t = f(w)\n')


def test_no_grad_refuses_a_statement_sharing_its_line():
    src = "import torch\na = 1; t = f(w)\n"
    with pytest.raises(FixError):
        fix_edits(Fix("no_grad", "t", (("stmt", loc(2, 8, 2, 16)),)), {None: src})


def test_no_grad_keeps_crlf_line_endings():
    src = "import torch\r\nt = f(w)\r\n"
    out = apply_edits(src, fix_edits(Fix("no_grad", "t", (("stmt", loc(2, 1, 2, 9)),)), {None: src}))
    assert out == "import torch\r\nwith torch.no_grad():\r\n    t = f(w)\r\n"


# --- sum_losses --------------------------------------------------------------------------------

def sum_fix(src, first_line, second_line, first="loss1", second="loss2"):
    first_loc = span_of(src, f"{first}.backward()", first_line)
    second_call = src.splitlines()[second_line - 1].strip().split("  #")[0]
    return Fix("sum_losses", "t", (("first", first_loc), ("second", span_of(src, second_call, second_line))),
               texts=(("first_loss", first), ("second_loss", second)))


def test_sum_losses_removes_the_first_backward_and_sums():
    src = "def step():\n    loss1.backward()  # a\n    loss2.backward()  # b\n    opt.step()\n"
    assert fixed(src, sum_fix(src, 2, 3)) == "def step():\n    (loss1 + loss2).backward()  # b\n    opt.step()\n"


def test_sum_losses_keeps_arguments_and_parenthesises_operands():
    src = "loss1.backward()\n(a - b).backward(g)\n"
    fix = Fix("sum_losses", "t", (("first", loc(1, 1, 1, 17)), ("second", loc(2, 1, 2, 20))),
              texts=(("first_loss", "loss1"), ("second_loss", "a - b")))
    assert fixed(src, fix) == "(loss1 + (a - b)).backward(g)\n"


def test_sum_losses_leaves_pass_in_an_otherwise_empty_block():
    src = "if warmup:\n    loss1.backward()\nloss2.backward()\n"
    assert fixed(src, sum_fix(src, 2, 3)) == "if warmup:\n    pass\n(loss1 + loss2).backward()\n"


# --- suppression, fix-all, data, cells -----------------------------------------------------------

def finding(code, location, fixes=()):
    return Finding(code, "error", "m", location, fixes=tuple(fixes))


def test_suppression_comment_is_added_then_extended():
    src = "loss.backward()  # again\n"
    f101 = finding("GG101", loc(1, 1, 1, 16))
    once = apply_edits(src, [suppression_edit(f101, {None: src})])
    assert once == "loss.backward()  # again  # gradguard: ignore[GG101]\n"
    twice = apply_edits(once, [suppression_edit(finding("GG102", loc(1, 1, 1, 16)), {None: once})])
    assert twice == "loss.backward()  # again  # gradguard: ignore[GG101, GG102]\n"
    with pytest.raises(FixError):
        suppression_edit(f101, {None: once})


def test_suppression_is_honoured_by_the_engine():
    from gradguard import analyze_source
    src = "import torch\nw = torch.randn(2, requires_grad=True)\nl = w.exp().sum()\nl.backward()\nl.backward()\n"
    (found,) = analyze_source(src, "/tmp/s.py").findings
    fixed_src = apply_edits(src, [suppression_edit(found, {None: src})])
    assert analyze_source(fixed_src, "/tmp/s.py").findings == []


def test_fix_all_applies_each_preferred_fix_once_and_skips_collisions():
    src = "a.backward()\nb.backward()\n"
    retain_a = Fix("retain_graph", "ra", (("call0", loc(1, 1, 1, 13)),), preferred=True)
    retain_a_too = Fix("retain_graph", "ra2", (("call0", loc(1, 1, 1, 13)),), preferred=True)
    retain_b = Fix("retain_graph", "rb", (("call0", loc(2, 1, 2, 13)),), preferred=True)
    findings = [finding("GG101", loc(2, 1, 2, 13), [retain_a]), finding("GG101", loc(2, 1, 2, 13), [retain_a]),
                finding("GG101", loc(2, 1, 2, 13), [retain_a_too]), finding("GG102", loc(2, 1, 2, 13), [retain_b])]
    out = apply_edits(src, fix_all_edits(findings, {None: src}))
    assert out == "a.backward(retain_graph=True)\nb.backward(retain_graph=True)\n"


def test_stale_targets_raise_fix_error():
    with pytest.raises(FixError):
        fix_edits(Fix("retain_graph", "t", (("call0", loc(1, 1, 1, 13)),)), {None: "x = 1\n"})
    with pytest.raises(FixError):
        fix_edits(Fix("detach", "t", (("expr", loc(1, 1, 1, 3)),)), {None: "def (:\n"})


def test_fix_data_round_trip():
    fix = Fix("sum_losses", "t", (("first", loc(1, 1, 1, 5, cell=2)), ("second", loc(3, 1, 3, 9, cell=3))),
              preferred=True, texts=(("first_loss", "a"), ("second_loss", "b")))
    assert fix_from_data(fix_to_data(fix)) == fix


def test_cells_edit_the_right_cell_and_see_imports_of_other_cells():
    cells = {1: "import torch as T\n%matplotlib inline\n", 2: "t = f(w)\n"}
    edits = fix_edits(Fix("no_grad", "t", (("stmt", loc(1, 1, 1, 9, cell=2)),)), cells)
    assert {e.cell for e in edits} == {2}
    assert apply_edits(cells[2], edits) == "with T.no_grad():\n    t = f(w)\n"


def test_insert_before_at_the_statement_indentation():
    src = "for batch in data:\n    out = net(h)  # step\n    h = out\n"
    fix = Fix("insert_before", "t", (("before", loc(2, 5, 2, 17)),),
              texts=(("statement", "h = h.detach()\nc = c.detach()"),))
    assert fixed(src, fix) == ("for batch in data:\n    h = h.detach()\n    c = c.detach()\n"
                               "    out = net(h)  # step\n    h = out\n")


def test_insert_after_a_statement_and_at_the_end_of_the_text():
    src = "for batch in data:\n    loss.backward()  # step\n    h = out\n"
    fix = Fix("insert_after", "t", (("after", loc(2, 5, 2, 20)),), texts=(("statement", "h = h.detach()"),))
    assert fixed(src, fix) == "for batch in data:\n    loss.backward()  # step\n    h = h.detach()\n    h = out\n"
    last = "for batch in data:\n    loss.backward()"
    fix = Fix("insert_after", "t", (("after", loc(2, 5, 2, 20)),), texts=(("statement", "h = h.detach()"),))
    assert fixed(last, fix) == "for batch in data:\n    loss.backward()\n    h = h.detach()"
