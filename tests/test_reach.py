"""The cheap scan (reach.py) that decides which files are interpreted, and the budgets that
bound what is: small projects in a temporary folder, the printed decision checked."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from gradguard import engine as engine_module
from gradguard.analysis import analyze_path, analyze_source
from gradguard import reach
from gradguard.reach import Outline, Reach, calls_backward, identifiers
from gradguard.resolve import Project


@pytest.mark.parametrize("text, expected", [
    ("loss.backward()", True),
    ("scaler.scale(loss).backward(retain_graph=True)", True),
    ("g, = torch.autograd.grad(y, x)", True),
    ("from torch import autograd\nautograd.backward([l1, l2])", True),
    ("from torch.autograd import Variable, grad as G", True),
    ("import torch.autograd as ag", True),
    ("class F(torch.autograd.Function):\n    @staticmethod\n    def backward(ctx, g):\n        return g", False),
    ("from torch.autograd import Function", False),
    ("self.manual_backward(loss)", False),  # Lightning's: its own text calls loss.backward()
    ("x = 1  # nothing here", False),
])
def test_backward_call_sites(text, expected):
    assert calls_backward(text) is expected


def test_outline_reads_imports_and_definitions_from_text():
    out = Outline("m.py", textwrap.dedent("""\
        from .layers import (Mlp,
            Attention as Attn)
        from .. import helpers
        from pkg.sub import *
        import os, numpy as np
        def build(): pass
        class Net: pass
        REGISTRY = {}
        def train():
            from .loops import fit
    """))
    assert out.imports == {"Mlp": ("layers", 1, "Mlp"), "Attn": ("layers", 1, "Attention"),
                           "helpers": ("", 2, "helpers"), "fit": ("loops", 1, "fit")}
    assert out.stars == [("pkg.sub", 0)]
    assert out.modules == {"os": ("os", False), "np": ("numpy", True)}
    assert {"build", "Net", "REGISTRY"} <= out.defined


# Texts the fast scan must read exactly as the plain regexes do: imports and definitions in
# strings, indented, continued, parenthesised, a ``from`` inside another's parentheses, words
# that are not identifiers, CRLF, no final newline, empty.
_TRICKY = [
    "", "x", "\n", "@dec\nclass C: pass", "def f(): return 1e5 + x1 + é_x + _y + 3d_conv",
    "from a import 3d, élan as b, c\nimport 1x, .y, z.w as q\n3abc = 1\nα = 2\n",
    "  from x import (a,\n  from y import b)\nfrom z import c\n",
    "import a\\\n, b\nfrom . import *\n\tfrom .m import (k as j,  # a comment\n l)\n",
    'doc = """\nfrom fake import thing\nimport other\n"""\nx: int = 1\ny == 2\n',
    "import os\r\nfrom pkg import a\r\ndef g():\r\n    import sub.mod as m\r\n    return m.f.g\r\n",
    "text = 'import x; from y import z'\nfrom_a = 1\nimported = 2\nif 1: import q\n",
]


@pytest.mark.parametrize("text", _TRICKY)
def test_the_fast_scan_reads_what_the_line_patterns_match(text):
    def spans(text):
        starts = [m.start() for m in re.finditer(r"^[A-Za-z_@]", text, re.M)] + [len(text)]
        out = {}
        for m in reach._DEFINED.finditer(text):
            i = max(i for i, s in enumerate(starts) if s <= m.start())
            out.setdefault(m.group(1) or m.group(2), []).append((starts[i], starts[i + 1]))
        return out

    out = Outline("m.py", text)
    assert out._spans == spans(text)
    assert [m.span() for m in reach._line_matches(reach._FROM, reach._FROM_WORD, text)] == \
        [m.span() for m in reach._FROM.finditer(text)]
    assert [m.span() for m in reach._line_matches(reach._IMPORT, reach._IMPORT_WORD, text)] == \
        [m.span() for m in reach._IMPORT.finditer(text)]
    assert identifiers(text) == set(reach._IDENT.findall(text))
    words = identifiers(text)
    assert out.whole() == out.mentions(text, words)  # names taken from the imports: the same


def _project(tmp_path, files: dict) -> str:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return str(tmp_path)


def _reaches(root: str, name: str) -> bool:
    path = f"{root}/{name}"
    return Reach(Project(root), path, open(path).read()).module(path)


def test_names_are_followed_through_a_package_hub(tmp_path):
    """A package's __init__ re-exports a layer and a trainer: importing the layer does not
    make a model file reach the trainer's backward; importing the trainer does."""
    root = _project(tmp_path, {
        "zoo/__init__.py": "from .layers import Mlp\nfrom .trainer import fit\n",
        "zoo/layers.py": "import torch\nclass Mlp(torch.nn.Module):\n    pass\n",
        "zoo/trainer.py": "def fit(model, loss):\n    loss.backward()\n",
        "model.py": "from zoo import Mlp\nnet = Mlp()\n",
        "train.py": "from zoo import fit, Mlp\nfit(Mlp(), None)\n",
        "whole.py": "import zoo.trainer\n",
    })
    assert not _reaches(root, "model.py")
    assert _reaches(root, "train.py")
    assert _reaches(root, "whole.py")


def test_only_code_a_file_runs_makes_it_worth_interpreting(tmp_path):
    """The analysed file's own findings come from what it runs: its top-level statements and
    the functions they name. Importing a training loop, naming it in ``__all__`` or a string,
    or using it in a function nothing runs, is no reason to interpret the file."""
    root = _project(tmp_path, {
        "zoo/__init__.py": "from .trainer import fit\n__all__ = ['fit']\nVERSION = '1'\n",
        "zoo/trainer.py": "def fit(model, loss):\n    loss.backward()\n",
        "hub.py": "from zoo import fit\ntry:\n    import zoo.trainer\nexcept ImportError:\n    pass\n",
        "lib.py": "from zoo import fit\ndef later(m):\n    fit(m, None)\nNAME = 'fit'\n",
        "script.py": "from zoo import fit\ndef main():\n    fit(None, None)\n"
                     "if __name__ == '__main__':\n    main()\n",
        "assigned.py": "from zoo import fit\nrun = fit\n",
        "fstring.py": "from zoo import fit\nprint(f'{fit(None, None)}')\n",
    })
    runs = {name: Reach(Project(root), f"{root}/{name}", open(f"{root}/{name}").read()).runs(f"{root}/{name}")
            for name in ["zoo/__init__.py", "hub.py", "lib.py", "script.py", "assigned.py", "fstring.py"]}
    assert runs == {"zoo/__init__.py": False, "hub.py": False, "lib.py": False,
                    "script.py": True, "assigned.py": True, "fstring.py": True}
    # whereas importing them, each of these modules may reach the backward
    assert all(_reaches(root, name) for name in runs)


def test_reach_is_transitive_through_the_defining_module(tmp_path):
    root = _project(tmp_path, {
        "steps.py": "def step(loss):\n    loss.backward()\n",
        "loop.py": "from steps import step\ndef run(loss):\n    step(loss)\n",
        "main.py": "from loop import run\nrun(None)\n",
        "other.py": "from loop import missing_name\n",
    })
    assert _reaches(root, "main.py")
    # a name loop.py does not define: whatever loop.py uses may be behind it
    assert _reaches(root, "other.py")


def test_an_answer_resting_on_an_import_cycle_is_not_kept_too_early(tmp_path):
    """a.A calls b.B, which calls a.A back: while A is being answered, B meets A in progress
    (answered "no" for now). A then reaches a backward through c.C (attribute chains are
    followed after names), so B does too; the "no" B got on the way must not be remembered
    for the next file that asks about B."""
    root = _project(tmp_path, {
        "a.py": "import c\nfrom b import B\ndef A():\n    B()\n    c.C()\n",
        "b.py": "from a import A\ndef B():\n    A()\n",
        "c.py": "def C(loss):\n    loss.backward()\n",
        "d.py": "from b import A\ndef D():\n    A()\n",
        "main.py": "from a import A\nA()\n",
        "main2.py": "from b import B\nB()\n",
        "lone.py": "from d import D\nD()\n",
    })
    project = Project(root)  # one project: answers are shared between the files' questions
    for name, expected in [("main.py", True), ("main2.py", True), ("lone.py", True)]:
        path = f"{root}/{name}"
        assert Reach(project, path, open(path).read()).module(path) is expected, name


def test_a_cycle_that_reaches_nothing_is_answered_no(tmp_path):
    root = _project(tmp_path, {
        "a.py": "from b import B\ndef A():\n    B()\n",
        "b.py": "from a import A\ndef B():\n    A()\n",
        "main.py": "from a import A\nfrom b import B\nA()\nB()\n",
    })
    assert not _reaches(root, "main.py")


def test_a_file_that_cannot_reach_a_backward_is_not_even_parsed(tmp_path):
    """No finding is possible, so the file is scanned, not parsed: its syntax error is not
    GradGuard's to report, and the analysis costs next to nothing."""
    root = _project(tmp_path, {"broken.py": "import torch\ndef f(:\n    pass\n"})
    assert analyze_path(f"{root}/broken.py").findings == []


def _chain_program(steps: int) -> str:
    """A helper long enough to blow the per-call budget, that returns a stale graph."""
    body = "\n".join(f"    if flag == {i}:\n        n = n + {i}" for i in range(steps))
    return textwrap.dedent("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        def helper(flag, n, t):
        {body}
            return t
        def main():  # (a call from the top level is the program: it has several calls' budgets)
            y = (w * 2).sum()
            for i in range(10):  # (a loop run to its fixpoint, not pass by pass)
                out = helper(i, 0, y)
                out.backward()
        main()
    """).replace("{body}", body)


def _severities(result) -> list:
    return [(f.code, f.severity) for f in result.findings]


def test_a_call_over_its_budget_is_unknown_and_never_an_error(monkeypatch):
    """Within budget the stale ``y`` is followed through ``helper`` and torch's error is
    predicted; over budget the call's result is unknown: what passes through it may still be
    stale, but that is no longer a promise that torch raises."""
    assert _severities(analyze_source(_chain_program(10), "<budget>")) == [("GG101", "error")]
    monkeypatch.setattr(engine_module, "CALL_BUDGET", 50)
    engine_module.forget_calls()
    big = analyze_source(_chain_program(40), "<budget>")
    assert ("GG101", "error") not in _severities(big)
    assert big.truncated, "the log must say what was left unanalysed"


def test_a_call_that_ran_out_of_a_budget_is_not_tried_again_with_no_more(monkeypatch):
    """``helper`` finishes in the loop's first pass (``i`` is known: one branch each), runs out
    of its budget in the second (``i`` unknown), and is not interpreted again in the third,
    with no larger budget, only to drop what it did."""
    monkeypatch.setattr(engine_module, "CALL_BUDGET", 50)
    entered = []
    real_block = engine_module.Engine.block
    monkeypatch.setattr(engine_module.Engine, "block", lambda self, stmts, st: entered.append(
        self.frame.func is not None and stmts is self.frame.func.node.body and self.frame.func.node.name == "helper")
        or real_block(self, stmts, st))
    big = analyze_source(_chain_program(40), "<budget>")
    assert big.truncated and ("GG101", "error") not in _severities(big)
    assert sum(entered) == 2


def test_what_a_raising_rule_reported_before_the_budget_ran_out_stands(monkeypatch):
    """``train`` backwards its loss twice, then runs out of its budget: the analysis up to the
    cut is what torch runs, so the finding made there stands (a warning here: the loss passes
    through a call the analysis cannot resolve); the call's result is still unknown."""
    body = "\n".join(f"    if flag == {i}:\n        n = n + {i}" for i in range(40))
    program = textwrap.dedent("""\
        import torch
        from somewhere import scale
        w = torch.randn(3, requires_grad=True)
        def train(flag, n):
            loss = (scale(w) * w).sum()
            loss.backward()
            loss.backward()
        {body}
            return n
        def main():  # (a call from the top level is the program: it has several calls' budgets)
            train(0, 0)
        main()
    """).replace("{body}", body)
    monkeypatch.setattr(engine_module, "CALL_BUDGET", 30)
    engine_module.forget_calls()
    result = analyze_source(program, "<budget>")
    assert result.truncated, "the budget must have run out for this test to mean anything"
    assert [(f.code, f.location.line) for f in result.findings] == [("GG101", 7)]


def test_a_call_from_the_top_level_has_several_calls_budgets(monkeypatch):
    """``main()`` at the top level is the whole program: one call's budget does not cut it, so a
    long training function called there is followed to its end."""
    body = "\n".join(f"    if flag == {i}:\n        n = n + {i}" for i in range(40))
    program = textwrap.dedent("""\
        import torch
        w = torch.randn(3, requires_grad=True)
        def main(flag, n):
        {body}
            loss = (w * 2).sum()
            loss.backward()
            loss.backward()
        main(0, 0)
    """).replace("{body}", body)
    monkeypatch.setattr(engine_module, "CALL_BUDGET", 30)
    engine_module.forget_calls()
    result = analyze_source(program, "<budget>")
    assert not result.truncated
    assert [(f.code, f.location.line, f.severity) for f in result.findings] == [("GG101", 86, "error")]


def test_the_file_budget_bounds_the_whole_analysis(monkeypatch):
    """Past the file's budget the statement running is abandoned with its reports."""
    monkeypatch.setattr(engine_module, "FILE_BUDGET", 12)
    result = analyze_source(_chain_program(30), "<budget>")
    assert result.findings == [] and result.truncated


def test_whole_module_imports_follow_the_attributes_read(tmp_path):
    """``import zoo`` then ``zoo.layers.Mlp``: only what is read off the module counts."""
    root = _project(tmp_path, {
        "zoo/__init__.py": "from . import layers, trainer\nVERSION = '1'\n",
        "zoo/layers.py": "import zoo\nclass Mlp:\n    version = zoo.VERSION\n",
        "zoo/trainer.py": "def fit(model, loss):\n    loss.backward()\n",
        "model.py": "import zoo\nnet = zoo.layers.Mlp()\n",
        "train.py": "import zoo.trainer as t\nt.fit(None, None)\n",
    })
    assert not _reaches(root, "model.py")
    assert _reaches(root, "train.py")


# The triggers' regexes run only on texts holding one of the strings they require.
_PATTERNS = [r"abc", r"a(?:b|c)d", r"\bnp\.\w+\s*\(", r"x?y", r"(?i)abc", r"a|b*", r"(?=foo)\w+",
             r"(?!foo)bar", r"[ab]cd", r"[^ab]cd", r"(ab)+c", r"(ab)*c", r"a{2,}b", r"(?<=x)ab|cd",
             r"\A(?=[\s\S]*(?:\+=|=\s*\w+\s*\+))(?=[\s\S]*(?:loss|crit)\w*\s*\()", r"(a)\1", r"(?i:ab)c"]


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_a_text_a_pattern_matches_holds_a_string_it_requires(pattern):
    import random

    compiled = re.compile(pattern)
    needs = reach.required(compiled)
    rng = random.Random(pattern)
    alphabet = list("abcdxy fo=+(_.\n") + ["np.", "loss(", "crit(", "+=", "AB", "foo", "bar"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        if compiled.search(text):
            assert not needs or any(s in text for s in needs), (pattern, text, needs)


@pytest.mark.parametrize("pattern", _PATTERNS)
def test_a_match_begins_with_a_string_the_pattern_starts_with(pattern):
    import random

    compiled = re.compile(pattern)
    starts = reach.starts(compiled)
    rng = random.Random(pattern)
    alphabet = list("abcdxy fo=+(_.\n") + ["np.", "loss(", "crit(", "+=", "AB", "foo", "bar"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        for at in range(len(text) + 1):
            if starts and compiled.match(text, at):
                assert any(text.startswith(s, at) for s in starts), (pattern, text, at, starts)
        assert reach._found(compiled, frozenset(), starts, text) == bool(compiled.search(text)), (pattern, text)


@pytest.mark.parametrize("pattern", [
    r"\A(?=[\s\S]*(?:\+=|=\s*\w+\s*\+))(?=[\s\S]*(?:loss|crit)\w*\s*\()",
    r"\A(?=[\s\S]*a(?=[\s\S]*b))", r"\A(?=[\s\S]*a)b", r"\A(?=[\s\S]*a\))", r"\A(?=[\s\S]*a)(b)"])
def test_a_pattern_split_into_conjuncts_answers_as_the_whole(pattern):
    import random

    compiled = re.compile(pattern)
    parts = reach.conjuncts(compiled)
    assert len(parts) == (2 if "loss" in pattern else 1)
    rng = random.Random(pattern)
    alphabet = list("ab =+()_\n") + ["loss(", "crit(", "+=", "x + y"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        assert all(p.search(text) for p in parts) == bool(compiled.search(text)), (pattern, text)


def test_the_registered_triggers_are_gated_without_changing_an_answer():
    from gradguard.rules import TRIGGERS

    texts = [*_TRICKY, "a = x.numpy()", "np.mean(x)", "numpy.asarray(t)", "import numpy as np",
             "w = torch.zeros(3, requires_grad=True)", "w.requires_grad_()", "total += loss(y)",
             "acc = acc + criterion(out, y)", "nothing = 1"]
    for text in texts:
        assert reach.triggered(text) == any(t.search(text) for t in TRIGGERS), text


def test_an_uncalled_function_is_an_entry_if_it_names_one_that_frees(monkeypatch):
    """Names are whole identifiers, and a function's own ``def`` names nothing: the other
    ``fit`` and a word that merely holds "fit" do not make entries."""
    ran = []
    original = engine_module.Engine.run_entry

    def run_entry(self, module, fn, st):
        ran.append(fn.node.name)
        return original(self, module, fn, st)

    monkeypatch.setattr(engine_module.Engine, "run_entry", run_entry)
    analyze_source(textwrap.dedent("""
        import torch
        class Trainer:
            def fit(self, loss):
                loss.backward()
        class Other:
            def fit(self, x):
                return x.fitted
        def run(trainer, loss):
            trainer.fit(loss)
        def mode(m):
            return m.training_fit_flag
    """), "<entries>")
    assert sorted(ran) == ["fit", "run"]


def test_a_trigger_counts_only_where_a_tensor_that_requires_grad_can_be(tmp_path, monkeypatch):
    """``np.mean(rewards)`` matches GG107's trigger by its words; a module that neither makes a
    tensor that requires grad (with ``torch.nn`` or ``requires_grad``) nor imports a project
    module that may hand it one is not interpreted."""
    import gradguard.analysis as analysis_module

    root = _project(tmp_path, {
        "stats.py": "import numpy as np\ndef mean(xs):\n    return np.mean(xs)\n",
        "evaluate.py": "import numpy as np\nfrom model import predict\nprint(np.array(predict()))\n",
        "model.py": "import torch\nw = torch.ones(2, requires_grad=True)\ndef predict():\n    return w * 2\n",
        "plain.py": "import numpy as np\nimport torch\nprint(np.mean([1.0]), torch.ones(2).numpy())\n",
        "infer.py": "import torch\nfrom torch import nn\nnet = nn.Linear(2, 1)\nprint(net(torch.ones(2)).numpy())\n",
    })
    parsed = []
    real = analysis_module.tree_of
    monkeypatch.setattr(analysis_module, "tree_of", lambda path, text: parsed.append(path) or real(path, text))
    for name in ("stats.py", "evaluate.py", "plain.py", "infer.py"):
        analyze_path(f"{root}/{name}")
    assert [p.rsplit("/", 1)[1] for p in parsed] == ["evaluate.py", "infer.py"]
    assert [f.code for f in analyze_path(f"{root}/infer.py").findings] == ["GG107"]
    run = subprocess.run([sys.executable, "infer.py"], cwd=root, capture_output=True, text=True)
    assert run.returncode != 0 and "requires grad" in run.stderr
    run = subprocess.run([sys.executable, "plain.py"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert [f.code for f in analyze_path(f"{root}/evaluate.py").findings] == ["GG107"]
    run = subprocess.run([sys.executable, "evaluate.py"], cwd=root, capture_output=True, text=True)
    assert run.returncode != 0 and "requires grad" in run.stderr  # torch agrees


def test_a_trigger_file_is_interpreted_if_a_project_name_it_uses_can_make_grad(tmp_path, monkeypatch):
    """The names it uses from the project's modules are followed to their definitions (and what
    those name): ``load`` from ``data.py`` makes plain tensors, ``build`` from ``nets.py`` a
    layer of ``torch.nn`` bound as ``Linear`` (no ``nn`` word in it)."""
    import gradguard.analysis as analysis_module

    root = _project(tmp_path, {
        "data.py": "import torch\ndef load():\n    return torch.ones(2)\n",
        "layers.py": "from torch.nn import Linear as Dense\n\ndef dense():\n    return Dense(2, 1)\n",
        "nets.py": "from layers import dense\ndef build():\n    return dense()\n",
        "plot.py": "import numpy as np\nfrom data import load\nprint(np.array(load()))\n",
        "infer.py": "import torch\nimport numpy as np\nfrom nets import build\n"
                    "print(np.array(build()(torch.ones(2))))\n",
    })
    parsed = []
    real = analysis_module.tree_of
    monkeypatch.setattr(analysis_module, "tree_of", lambda path, text: parsed.append(path) or real(path, text))
    for name in ("plot.py", "infer.py"):
        analyze_path(f"{root}/{name}")
    assert [p.rsplit("/", 1)[1] for p in parsed] == ["infer.py"]
    assert [f.code for f in analyze_path(f"{root}/infer.py").findings] == ["GG107"]
    run = subprocess.run([sys.executable, "infer.py"], cwd=root, capture_output=True, text=True)
    assert run.returncode != 0 and "requires grad" in run.stderr
    run = subprocess.run([sys.executable, "plot.py"], cwd=root, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
