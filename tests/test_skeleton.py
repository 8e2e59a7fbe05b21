"""Lazily parsed function bodies (skeleton.py): which bodies are left out, and that reading them
gives exactly the tree a whole parse gives, positions included."""
from __future__ import annotations

import ast
import sys

import pytest

from gradguard import resolve, skeleton
from gradguard.analysis import analyze_source
from gradguard.invariants import written_attributes
from gradguard.skeleton import LazyBody, parse_lazily
from gradguard.sources import SourceError

FILL = "    # " + "x" * (skeleton.MIN_LAZY_CHARS + 10) + "\n"  # makes a body long enough to be left out


def _lazy(tree) -> list:
    """The names of the functions whose bodies are not parsed yet, in line order."""
    found = [s for s in skeleton._statements(tree.body)
             if type(s) in (ast.FunctionDef, ast.AsyncFunctionDef) and type(s.body) is LazyBody]
    return [s.name for s in sorted(found, key=lambda s: s.lineno)]


def _same_as_whole(code: str) -> ast.Module:
    """The skeleton, once every body is read, dumps exactly as a whole parse (positions too)."""
    tree = parse_lazily(code, "t.py")
    for _ in ast.walk(tree):  # reads every body
        pass
    assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(code), include_attributes=True)
    return tree


CASES = {
    "plain": ("def f(x):\n" + FILL + "    return x\n", ["f"]),
    "decorated async": ("@dec(a=1)\nasync def f(x):\n" + FILL + "    await x\n", ["f"]),
    "methods": ("class A(B):\n    k = 1\n\n    def f(self):\n" + FILL.replace("    ", "        ", 1)
                + "        return self.k\n\n    def g(self): return 2\n", ["f"]),
    "nested def stays in its body": ("def f():\n" + FILL + "    def g():\n" + FILL + "        pass\n    return g\n",
                                     ["f"]),
    "signature with colons and strings": ("def f(a: 'x:y' = {1: 2}, b=lambda q: q, *, c=\"#\") -> dict[str, int]:\n"
                                          + FILL + "    return a  # trailing comment\n", ["f"]),
    "multi-line signature": ("def f(\n    a,  # a comment (with a bracket\n    b=(1,\n 2),\n):\n" + FILL
                             + "    pass\n", ["f"]),
    "comment at column 0 in a body": ("def f():\n" + FILL + "# out of line\n    return 1\nx = 2\n", ["f"]),
    "a string at column 0 keeps the body in": ('def f():\n' + FILL + '    s = """\nnot code\n"""\n    return s\n',
                                               []),
    "a bracket spanning a dedent keeps it in": ("def f():\n" + FILL + "    x = g(1,\n2)\n    return x\n", []),
    "a backslash at its end keeps it in": ("def f():\n" + FILL + "    x = 1 + \\\n2\n    return x\n", []),
    "a def in a docstring is left alone": ('"""Example:\n\n    def g():\n' + FILL.replace("    ", "        ", 1)
                                           + '        pass\n"""\ndef f():\n' + FILL + "    pass\n", ["f"]),
    "tabs are left alone": ("class A:\n\tdef f(self):\n\t" + FILL + "\t\tpass\n", []),
    "crlf line ends": (("def f(x):\n" + FILL + "    return x\n\nclass A:\n    def g(self):\n"
                        + FILL.replace("    ", "        ", 1) + "        pass\n").replace("\n", "\r\n"), ["f", "g"]),
    "non-ASCII": ("def f(é='ü'):\n" + FILL + "    return 'ü' + é  # ü\n", ["f"]),
    "inside if and try": ("if X:\n    def f():\n" + FILL.replace("    ", "        ", 1) + "        pass\nelse:\n"
                          "    f = None\ntry:\n    def g():\n" + FILL.replace("    ", "        ", 1)
                          + "        pass\nexcept E:\n    pass\n", ["f", "g"]),
    "short bodies stay in": ("def f(x):\n    return x\n", []),
}


@pytest.mark.parametrize("name", list(CASES))
def test_bodies_left_out_and_read_back(name):
    code, lazy = CASES[name]
    assert _lazy(parse_lazily(code, "t.py")) == lazy
    _same_as_whole(code)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="type parameters are Python 3.12 syntax")
def test_type_parameters():
    code = "def f[T](x: T) -> T:\n" + FILL + "    return x\n"
    assert _lazy(parse_lazily(code, "t.py")) == ["f"]
    _same_as_whole(code)


def test_a_body_parsed_on_first_read_ends_where_its_holders_end():
    code = "class A:\n    def f(self):\n" + FILL.replace("    ", "        ", 1) + "        return 1  # done\n"
    tree = parse_lazily(code, "t.py")
    cls = tree.body[0]
    method = cls.body[0]
    assert type(method.body) is LazyBody
    assert (cls.end_lineno, method.end_lineno) == (4, 4)  # whole lines are right before the parse
    method.body.force()
    assert type(method.body) is list and (cls.end_col_offset, method.end_col_offset) == (16, 16)


def test_a_syntax_error_in_a_body_is_found_when_it_is_read():
    code = "def f():\n" + FILL + "    x = = 1\n"
    tree = parse_lazily(code, "t.py")  # the skeleton parses
    with pytest.raises(SourceError, match=r"t.py:3: syntax error"):
        tree.body[0].body.force()
    assert list(tree.body[0].body) == []


def test_the_analysed_file_reports_a_syntax_error_in_a_function_that_runs(tmp_path):
    """Only then: the bodies of the others are never parsed (as files no backward can run
    from never are)."""
    resolve.clear_caches()
    broken = "def f():\n" + FILL + "    x = = 1\n"
    assert analyze_source(broken + "loss.backward()\n", str(tmp_path / "a.py"), str(tmp_path)).findings == []
    with pytest.raises(SourceError, match="syntax error"):
        analyze_source(broken + "f()\nloss.backward()\n", str(tmp_path / "b.py"), str(tmp_path))


def test_an_imported_function_that_does_not_parse_is_unknown(tmp_path):
    """Its call is unknown: the caller's own graph is still followed."""
    resolve.clear_caches()
    (tmp_path / "helpers.py").write_text("def f(x):\n" + FILL + "    x = = 1\n")
    main = ("import torch\nfrom helpers import f\nw = torch.ones(2, requires_grad=True)\n"
            "y = (w * 2).sum()\nf(y)\ny.backward()\ny.backward()\n")
    found = analyze_source(main, str(tmp_path / "main.py"), str(tmp_path)).findings
    assert [(f.code, f.location.line) for f in found if f.severity == "error"] == [("GG101", 7)]


def test_a_skeleton_cut_wrong_is_found_and_the_analysis_runs_again_on_the_whole_tree(tmp_path):
    """Three quotes inside a one-line string, and in a comment, pair with those of a string cut
    at a column-0 line: the cut passes every check and the skeleton parses, with ``y = w * 2``
    a statement of the module. Reading the body finds it out."""
    resolve.clear_caches()
    code = ("import torch\n"
            "def f(w):\n" + FILL + "    q = '\"\"\"'\n    s = \"\"\"\ny = w * 2\n\"\"\"\n"
            "    return (w * 2).sum()  # \"\"\"\n"
            "w = torch.ones(2, requires_grad=True)\nloss = f(w)\nloss.backward()\nloss.backward()\n")
    tree = parse_lazily(code, "t.py")
    assert _lazy(tree) == ["f"] and isinstance(tree.body[2], ast.Assign)  # ``y = w * 2``
    before = skeleton.mismatches
    found = analyze_source(code, str(tmp_path / "cut.py"), str(tmp_path)).findings
    assert skeleton.mismatches == before + 1 and str(tmp_path / "cut.py") in skeleton.WHOLE
    assert [(f.code, f.location.line) for f in found if f.severity == "error"] == [("GG101", 12)]


def test_written_attributes_skip_the_bodies_not_parsed():
    code = ("class A:\n    def __init__(self):\n" + FILL.replace("    ", "        ", 1) + "        self.a = 1\n"
            "    def step(self):\n" + FILL.replace("    ", "        ", 1) + "        self.b = 2\n")
    tree = parse_lazily(code, "t.py")
    unparsed = []
    assert written_attributes(tree, code, unparsed) == frozenset()
    assert [fn.name for fn in unparsed] == ["step"]  # __init__'s writes never count
    assert written_attributes(ast.Module(body=unparsed, type_ignores=[]), code) == {"b"}


def test_a_line_too_long_in_a_body_left_out_is_refused_as_anywhere():
    from gradguard.sources import MAX_LINE_CHARS

    code = "def f():\n" + FILL + "    x = [" + "1, " * (MAX_LINE_CHARS // 3) + "]\n"
    with pytest.raises(SourceError, match="a line of"):
        parse_lazily(code, "t.py")
