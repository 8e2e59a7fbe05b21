"""The fix kinds added for --fix on every fixture: their edits, and the rules' choice of them."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gradguard.analysis import analyze_source
from gradguard.findings import Fix, Location
from gradguard.fixes import Edit, apply_edits, fix_edits, moved


def at(src: str, needle: str, line: int) -> Location:
    col = src.splitlines()[line - 1].index(needle) + 1
    return Location("/p/x.py", line, col, line, col + len(needle))


def fixed(src: str, fix: Fix) -> str:
    out = apply_edits(src, fix_edits(fix, {None: src}))
    ast.parse(out)
    return out


def preferred(src: str, code: str):
    finding = next(f for f in analyze_source(src, "/p/x.py").findings if f.code == code)
    return next(f for f in finding.fixes if f.preferred)


def test_keep_tensors_drops_the_item_calls_and_groups_only_operands():
    src = "loss = torch.tensor(a.item() + 0.1 * b.item())\nm = 2 * torch.tensor(c.item() - 1)\n"
    fix = Fix("keep_tensors", "t", (("expr", at(src, "torch.tensor(a.item() + 0.1 * b.item())", 1)),
                                    ("value", at(src, "a.item() + 0.1 * b.item()", 1))))
    assert fixed(src, fix).splitlines()[0] == "loss = a + 0.1 * b"
    fix = Fix("keep_tensors", "t", (("expr", at(src, "torch.tensor(c.item() - 1)", 2)),
                                    ("value", at(src, "c.item() - 1", 2))))
    assert fixed(src, fix).splitlines()[1] == "m = 2 * (c - 1)"


def test_retain_graph_and_insert_before():
    src = "y.backward()\nprint(x.grad)\ny.backward()\n"
    fix = Fix("retain_graph_and_insert_before", "t", (("call0", at(src, "y.backward()", 1)),
                                                      ("before", at(src, "y.backward()", 3))),
              texts=(("statement", "x.grad = None"),))
    assert fixed(src, fix) == "y.backward(retain_graph=True)\nprint(x.grad)\nx.grad = None\ny.backward()\n"


def test_moved_follows_insertions_and_replacements():
    edits = [Edit(None, 2, 1, 2, 1, "a = 1\nb = 2\n"), Edit(None, 3, 5, 3, 5, "(")]
    assert moved((3, 5), edits) == (5, 6)
    assert moved((1, 3), edits) == (1, 3)
    assert moved((4, 1), [Edit(None, 2, 1, 3, 1, "")]) == (3, 1)


def test_out_of_place_keeps_the_value_whole():
    src = "x /= n + 1e-6\ny *= w  # scale\n"
    fix = Fix("out_of_place", "t", (("stmt", at(src, "x /= n + 1e-6", 1)), ("value", at(src, "n + 1e-6", 1))),
              texts=(("target", "x"), ("operator", "/")))
    assert fixed(src, fix) == "x = x / (n + 1e-6)\ny *= w  # scale\n"
    fix = Fix("out_of_place", "t", (("stmt", at(src, "y *= w", 2)), ("value", at(src, "w", 2))),
              texts=(("target", "y"), ("operator", "*")))
    assert fixed(src, fix) == "x /= n + 1e-6\ny = y * w  # scale\n"


def test_move_after_takes_every_statement_in_order():
    src = "if 1:\n    a.step()\n    f()\n    b.step()\n    loss.backward()\n    g()\n"
    fix = Fix("move_after", "t", (("stmt", at(src, "a.step()", 2)), ("stmt1", at(src, "b.step()", 4)),
                                  ("after", at(src, "loss.backward()", 5))))
    assert fixed(src, fix) == "if 1:\n    f()\n    loss.backward()\n    a.step()\n    b.step()\n    g()\n"
    late = Fix("move_after", "t", (("stmt", at(src, "a.step()", 2)), ("stmt1", at(src, "g()", 6)),
                                   ("after", at(src, "loss.backward()", 5))))
    with pytest.raises(Exception, match="sibling before"):
        fixed(src, late)


IMPORT = "import torch\n"


def test_gg201_hand_written_update_resets_every_updated_grad():
    src = IMPORT + ("W = torch.zeros(3, requires_grad=True)\nb = torch.zeros(1, requires_grad=True)\n"
                    "for _ in range(3):\n    (W.sum() + b.sum()).backward()\n    with torch.no_grad():\n"
                    "        W -= 0.1 * W.grad\n        b -= 0.1 * b.grad\n")
    fix = preferred(src, "GG201")
    assert fix.kind == "insert_after" and fix.text("statement") == "W.grad = None\nb.grad = None"


def test_gg101_empties_the_episode_buffer_and_what_is_consumed_with_it():
    src = IMPORT + ("w = torch.ones(2, requires_grad=True)\nlps, rewards = [], []\nfor ep in range(3):\n"
                    "    for t in range(2):\n        lps.append((w * t).sum())\n        rewards.append(float(t))\n"
                    "    r = torch.tensor(rewards)\n    loss = (torch.stack(lps) * r).sum()\n    loss.backward()\n")
    fix = preferred(src, "GG101")
    assert fix.kind == "insert_after" and fix.text("statement") == "lps.clear()\nrewards.clear()"


def test_gg101_carrier_that_may_be_a_number_is_detached_only_as_a_tensor():
    src = (Path(__file__).parent / "fixtures" / "settled_flag_bug.py").read_text()  # alpha = 0.5, then a tensor
    fix = preferred(src, "GG101")
    assert fix.text("statement") == "alpha = alpha.detach() if isinstance(alpha, torch.Tensor) else alpha"


def test_gg102_second_walk_keeps_the_graph_and_clears_the_gradients():
    src = IMPORT + "x = torch.ones(2, requires_grad=True)\ny = (x + 1).sum()\ny.backward()\ny.backward()\n"
    fix = preferred(src, "GG102")
    assert fix.kind == "retain_graph_and_insert_before" and fix.text("statement") == "x.grad = None"


def test_gg104_rebuilt_from_items_keeps_the_tensors():
    src = IMPORT + ("w = torch.ones(2, requires_grad=True)\na, b = (w * 2).sum(), w.abs().mean()\n"
                    "loss = torch.tensor(a.item() + 0.1 * b.item())\nloss.backward()\n")
    assert preferred(src, "GG104").kind == "keep_tensors"


def test_gg101_ema_update_with_grad_on_runs_under_no_grad_loop_and_all():
    src = (Path(__file__).parent / "fixtures" / "ema_teacher_bug.py").read_text()
    fix = preferred(src, "GG101")
    assert fix.kind == "no_grad"
    out = fixed(src, fix)
    assert ("    with torch.no_grad():\n"
            "        for t_param, s_param in zip(teacher.parameters(), student.parameters()):\n"
            "            t_param.mul_(alpha).add_((1 - alpha) * s_param)\n") in out


def test_gg101_running_statistics_buffers_updated_under_no_grad_together():
    src = (Path(__file__).parent.parent / "tests" / "recall" / "buggy" / "running_stats_grad_update.py").read_text()
    fix = preferred(src, "GG101")
    assert fix.kind == "no_grad"
    out = fixed(src, fix)
    assert ("        if self.training:\n            with torch.no_grad():\n"
            "                self.mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))\n"
            "                self.var.mul_(1 - self.momentum).add_(self.momentum * x.var(0))\n"
            "        return") in out


FROZEN = IMPORT + ("import torch.nn as nn\nmodel = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))\n"
                   "for p in model.parameters():\n    p.requires_grad = False\n{opt}\n"
                   "for _ in range(2):\n    opt.zero_grad()\n    model(torch.randn(2, 3)).sum().backward()\n"
                   "    opt.step()\n")


def test_gg104_frozen_optimizer_parameters_require_grad_again_before_the_optimizer():
    src = FROZEN.format(opt="opt = torch.optim.SGD(model[1].parameters(), lr=0.1)")
    fix = preferred(src, "GG104")
    assert fix.kind == "insert_before" and not fix.safe
    assert "for p in model[1].parameters():\n    p.requires_grad_(True)\nopt = torch.optim.SGD(" in fixed(src, fix)


def test_gg104_no_unfreezing_where_the_parameters_cannot_be_named_again():
    finding = lambda src: next(f for f in analyze_source(src, "/p/x.py").findings if f.code == "GG104")
    params = FROZEN.format(opt="params = model[1].parameters()\nopt = torch.optim.SGD(params, lr=0.1)")
    assert finding(params).fixes == ()  # a generator: evaluated again, it is empty
    later = FROZEN.replace("for p in model.parameters():\n    p.requires_grad = False\n{opt}\n",
                           "{opt}\nmodel.requires_grad_(False)\n")
    assert finding(later.format(opt="opt = torch.optim.SGD(model.parameters(), lr=0.1)")).fixes == ()


def test_gg104_unfreezing_is_not_offered_twice():
    src = FROZEN.format(opt="opt = torch.optim.SGD(model[1].parameters(), lr=0.1)")
    once = fixed(src, preferred(src, "GG104"))
    again = [f for f in analyze_source(once, "/p/x.py").findings if f.code == "GG104"]
    assert all(not f.fixes for f in again)  # (the engine does not model the unfreezing yet)


def test_move_block_after():
    src = "for i in range(2):\n    a()\n    b()  # two\n    c()\n    for j in k:\n        d()\n    e()\n"
    fix = Fix("move_block_after", "t", (("stmt", Location("/p/x.py", 2, 5, 3, 8)), ("after", at(src, "for j in k:", 5))))
    assert fixed(src, fix) == "for i in range(2):\n    c()\n    for j in k:\n        d()\n    a()\n    b()  # two\n    e()\n"


RETAIN = (Path(__file__).parent / "fixtures" / "retain_then_final_bug.py").read_text()


def test_gg101_training_step_moves_after_the_backwards_that_keep_its_graph():
    fix = preferred(RETAIN, "GG101")
    assert fix.kind == "move_block_after" and not fix.safe
    ok = (Path(__file__).parent / "fixtures" / "retain_then_final_ok.py").read_text()
    body = lambda text: [line.split("  #")[0] for line in text.splitlines()[1:]]
    assert body(fixed(RETAIN, fix)) == body(ok)


def test_gg101_training_step_stays_where_the_code_between_would_see_it():
    gg101 = lambda src: next(f for f in analyze_source(src, "/p/x.py").findings if f.code == "GG101")
    forward = RETAIN.replace("        optimizer.zero_grad()\n        term.backward",
                             "        optimizer.zero_grad()\n        model(x).sum().backward()\n        term.backward")
    assert "move_block_after" not in [f.kind for f in gg101(forward).fixes]  # weights read after the step
    unreset = RETAIN.replace("        optimizer.zero_grad()\n        term.backward", "        term.backward")
    assert "move_block_after" not in [f.kind for f in gg101(unreset).fixes]  # .grad holds the step's gradients


# --- fixes that hold on the GPU: the same text must run on a CUDA tensor as on a CPU one ---------

NUMPY_SRC = IMPORT + "import numpy as np\nw = torch.ones(3, requires_grad=True)\nh = w * 2\n"


@pytest.mark.parametrize("line, expected", [
    ("a = h.numpy()", "a = h.detach().cpu().numpy()"),
    ("b = h.cpu().numpy()", "b = h.cpu().detach().numpy()"),
    ("c = np.mean([h, h])", "c = np.mean([t.detach().cpu() for t in [h, h]])"),
])
def test_gg107_fix_brings_the_tensor_to_the_cpu_before_numpy(line, expected):
    """``.detach().numpy()`` raises "can't convert cuda:0 device type tensor to numpy" on CUDA."""
    program = NUMPY_SRC + line + "\n"
    assert fixed(program, preferred(program, "GG107")).splitlines()[-1] == expected


_FACTORIES = {"tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
              "linspace", "eye"}


def _host_only(tree: ast.AST) -> list[str]:
    """What in ``tree`` works on a CPU tensor only: a detached tensor handed to NumPy without
    ``.cpu()`` (``x.detach().numpy()``, ``np.f(x.detach())``, ``[t.detach() for t in …]``), and
    tensors made without a device (``torch.zeros(3)`` next to a model on the GPU)."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        method = lambda e, name: isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == name
        detached = lambda e: method(e, "detach") and not method(e.func.value, "cpu")  # not x.cpu().detach()
        if isinstance(func, ast.Attribute) and func.attr == "numpy" and detached(func.value):
            out.append(ast.unparse(node))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy"):
            out += [ast.unparse(a) for a in node.args
                    if detached(a) or isinstance(a, ast.ListComp) and detached(a.elt)]
        elif isinstance(func, ast.Attribute) and func.attr in _FACTORIES and ast.unparse(func.value) == "torch" \
                and not any(k.arg == "device" for k in node.keywords):
            # the user's own call stays the user's with its requires_grad taken out (leaf_after)
            kept = [k for k in node.keywords if k.arg != "requires_grad"]
            out.append(ast.unparse(ast.Call(func, node.args, kept)))
    return out


def test_every_fix_is_device_agnostic():
    """Over every single-file bug program, every fix of every finding adds nothing that holds only
    on the CPU; what it copies from the program (recomputing a statement) is the user's own."""
    from collections import Counter

    tests = Path(__file__).parent
    programs = [*sorted((tests / "fixtures").glob("*_bug.py")), *sorted((tests / "recall" / "buggy").glob("*.py"))]
    kinds = Counter()
    for path in programs:
        src = path.read_text(encoding="utf-8")
        before = set(_host_only(ast.parse(src)))
        for finding in analyze_source(src, str(path)).findings:
            for fix in finding.fixes:
                if any(t.path != str(path) for _, t in fix.targets):
                    continue
                after = set(_host_only(ast.parse(apply_edits(src, fix_edits(fix, {None: src})))))
                assert after <= before, (path.name, finding.code, fix.kind, sorted(after - before))
                kinds[fix.kind] += 1
    assert {"detach_cpu", "detach_elements", "detach", "no_grad", "insert_after", "keep_tensors"} <= set(kinds), kinds


def test_no_reentrant_sets_the_keyword_false_whether_given_or_not():
    src = "h = checkpoint(block, x)\nh = checkpoint(block, x, use_reentrant=flag)\n"
    fix = Fix("no_reentrant", "t", (("call", at(src, "checkpoint(block, x)", 1)),))
    assert fixed(src, fix).splitlines()[0] == "h = checkpoint(block, x, use_reentrant=False)"
    fix = Fix("no_reentrant", "t", (("call", at(src, "checkpoint(block, x, use_reentrant=flag)", 2)),))
    assert fixed(src, fix).splitlines()[1] == "h = checkpoint(block, x, use_reentrant=False)"
