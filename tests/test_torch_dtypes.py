"""What the analysis knows of dtypes, checked against torch: which names are dtypes of tensors that
can require grad (generated), which calls make integer or bool tensors, and what follows from
torch refusing grad to those (a cast to one cuts the graph; asking one to require grad raises,
stopping a script, and in a notebook only the cell)."""
from __future__ import annotations

import textwrap
import traceback

import pytest
import torch

from gradguard import torch_api as api
from gradguard.analysis import analyze_cells, analyze_source
from gradguard.torchdata import generate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _integral(t: torch.Tensor) -> bool:
    return not (t.dtype.is_floating_point or t.dtype.is_complex)


def test_dtypes_derive_again():
    assert generate.dtypes() == api.DTYPES
    assert api.DTYPES["torch.long"] is False and api.DTYPES["torch.LongTensor"] is False
    assert api.DTYPES["torch.float64"] is True and api.DTYPES["int"] is False


def _x():
    return torch.randn(3, requires_grad=True)


METHOD_RECIPES = {
    **{n: (lambda n=n: getattr(_x(), n)()) for n in ("long", "int", "short", "byte", "bool", "argmax", "argmin",
                                                     "argsort", "nonzero", "isnan", "isinf", "isfinite",
                                                     "logical_not", "any", "all", "count_nonzero")},
    **{n: (lambda n=n: getattr(_x(), n)(0.0)) for n in ("eq", "ne", "gt", "lt", "ge", "le")},
}
FUNCTION_RECIPES = {
    "torch.nn.functional.one_hot": lambda: torch.nn.functional.one_hot(torch.tensor([0, 1])),
    "torch.multinomial": lambda: torch.multinomial(torch.rand(3, requires_grad=True), 1),
    "torch.bucketize": lambda: torch.bucketize(_x(), torch.tensor([0.0])),
    "torch.searchsorted": lambda: torch.searchsorted(torch.tensor([0.0, 1.0]), _x()),
    "torch.randint": lambda: torch.randint(0, 5, (3,)),
    "torch.randperm": lambda: torch.randperm(3),
    **{f"torch.{n}": (lambda n=n: getattr(torch, n)(_x())) for n in ("argmax", "argmin", "argsort", "nonzero",
                                                                     "isnan", "isinf", "isfinite", "logical_not")},
    **{f"torch.{n}": (lambda n=n: getattr(torch, n)(_x(), _x())) for n in ("eq", "ne", "gt", "lt", "ge", "le",
                                                                           "logical_and", "logical_or")},
}


@pytest.mark.parametrize("name", sorted(api.INTEGRAL_METHODS))
def test_integral_method(name):
    assert name in api.SEVER_METHODS
    out = METHOD_RECIPES[name]()
    assert _integral(out) and not out.requires_grad


@pytest.mark.parametrize("name", sorted(api.BOOL_METHODS))
def test_bool_method(name):
    """A mask: indexing by it selects, so the result's first dim is the count of true elements."""
    assert name in api.INTEGRAL_METHODS
    out = METHOD_RECIPES[name]()
    assert out.dtype == torch.bool
    assert torch.rand(out.shape + (2,))[out].shape == (int(out.sum()), 2)


@pytest.mark.parametrize("name", sorted(api.INTEGRAL_FUNCTIONS))
def test_integral_function(name):
    assert name in api.FACTORIES
    out = FUNCTION_RECIPES[name]()
    assert _integral(out) and not out.requires_grad


@pytest.mark.parametrize("name", sorted(api.INDEX_METHODS | api.INDEX_FUNCTIONS))
def test_index_dtype(name):
    """Never bool: as an index it picks rows (the result has the index's shape, then the rest)."""
    assert name in (api.INTEGRAL_FUNCTIONS if name.startswith("torch.") else api.INTEGRAL_METHODS)
    out = (FUNCTION_RECIPES if name.startswith("torch.") else METHOD_RECIPES)[name]()
    assert _integral(out) and out.dtype != torch.bool
    picked = torch.rand(4, 2)[out.clamp(0, 3)]
    assert picked.shape == out.shape + (2,)


DATA_RECIPES = {  # (ints at the typed positions, a float among them)
    "torch.tensor": (lambda: torch.tensor([[1, 2], [True, 0]]), lambda: torch.tensor([1, 2.0])),
    "torch.as_tensor": (lambda: torch.as_tensor([1, 2]), lambda: torch.as_tensor([1.0])),
    "torch.asarray": (lambda: torch.asarray([1, 2]), lambda: torch.asarray([1.0])),
    "torch.arange": (lambda: torch.arange(1, 7, 2), lambda: torch.arange(1, 7, 0.5)),
    "torch.full": (lambda: torch.full((2,), 3), lambda: torch.full((2,), 3.0)),
}


@pytest.mark.parametrize("name", sorted(api.DATA_TYPED))
def test_data_typed_factory(name):
    ints, floats = DATA_RECIPES[name]
    assert _integral(ints()) and not _integral(floats())


def _codes(program: str) -> list:
    return [(f.code, f.location.line) for f in analyze_source(textwrap.dedent(program), "<snippet>").findings]


def _runs(program: str):
    """None when it runs clean under torch, else the line and message of what it raised."""
    try:
        exec(compile(textwrap.dedent(program), "<snippet>", "exec"), {})
    except Exception as exc:
        line = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<snippet>"][-1]
        return line, str(exc)
    return None


# Integer tensors built the ways the analysis knows; each refuses to require grad.
INTEGER_MAKERS = ["torch.tensor([2, 3])", "torch.tensor(True)", "torch.arange(4)", "torch.full((2,), 3)",
                  "torch.zeros(2, dtype=torch.long)", "torch.LongTensor([1, 2])", "torch.randint(0, 5, (2,))",
                  "torch.randn(2).long()", "torch.randn(2).to(torch.int32)", "torch.randn(2).type('torch.ByteTensor')",
                  "torch.randn(2).to('cpu', dtype=bool)", "torch.as_tensor(torch.randn(2), dtype=torch.int64)"]


@pytest.mark.parametrize("maker", INTEGER_MAKERS)
@pytest.mark.parametrize("ask", ["b.requires_grad_()", "b.requires_grad = True"])
def test_requires_grad_on_an_integer_tensor_stops_a_script(maker, ask):
    """The refused statement raises: nothing after it runs (a backward twice there is no finding)."""
    program = f"""
        import torch
        b = {maker}
        {ask}
        w = torch.randn(2, requires_grad=True)
        l = (w * w).sum()
        l.backward()
        l.backward()
        """
    line, message = _runs(program)
    assert line == 4 and "floating point" in message
    assert _codes(program) == []


def test_requires_grad_keyword_on_integer_data_stops_a_script():
    program = """
        import torch
        b = torch.tensor([1, 2], requires_grad=True)
        w = torch.randn(2, requires_grad=True)
        l = (w * w).sum()
        l.backward()
        l.backward()
        """
    assert _runs(program)[0] == 3
    assert _codes(program) == []


CELLS = ["import torch\nb = torch.tensor([2])",
         "b.requires_grad_(True)",  # raises: the cell stops, b is unchanged
         "b = b.type(torch.float64)\nb.requires_grad_(True)",
         "l = torch.exp(b).sum()\nl.backward()\nprint(b.grad)",  # b is a leaf: no warning
         "l.backward()"]  # exp's saved result was freed: raises


def test_requires_grad_on_an_integer_tensor_stops_only_its_notebook_cell():
    namespace, raised = {}, []
    for number, cell in enumerate(CELLS, 1):
        try:
            exec(compile(cell, f"<cell {number}>", "exec"), namespace)
        except RuntimeError as exc:
            raised.append((number, str(exc)))
    assert [n for n, _ in raised] == [2, 5] and "second time" in raised[1][1]
    findings = analyze_cells(CELLS, "/tmp/notebook.ipynb").findings
    assert [(f.code, f.location.cell, f.location.line) for f in findings] == [("GG101", 5, 1)]


@pytest.mark.parametrize("cast,kept", [("type(torch.LongTensor)", False), ("to(torch.long)", False),
                                       ("to(dtype=torch.bool)", False), ("type(torch.float64)", True),
                                       ("to(torch.double)", True)])
def test_a_cast_keeps_the_graph_only_to_a_floating_dtype(cast, kept):
    program = f"""
        import torch
        w = torch.randn(3, requires_grad=True)
        y = (w * w).{cast}
        print(y.requires_grad, y.grad_fn)
        """
    namespace = {}
    source = textwrap.dedent(program).replace("print(y.requires_grad, y.grad_fn)", "result = y.requires_grad")
    exec(compile(source, "<snippet>", "exec"), namespace)
    assert namespace["result"] is kept
    # a second backward through y: a floating cast walks w * w again (it saved w), an integer one
    # has no graph to walk
    twice = textwrap.dedent(program) + "for _ in range(2):\n    (w + y).sum().backward()\n"
    run = _runs(twice)
    assert (run is not None and "second time" in run[1]) is kept
    assert [code for code, _ in _codes(twice)] == (["GG101"] if kept else [])
