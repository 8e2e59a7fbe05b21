"""Every claim in ``gradguard/torch_api.py`` checked against the installed torch.

The table is what the engine believes about torch; these tests keep it honest. Each table entry
has an input recipe here (an entry without one fails), is run on inputs that require grad (a
leaf, and a non-leaf made by ``clone()``, which saves nothing), its result's graph is walked by
``backward()`` twice, and the second walk must raise "backward through the graph a second
time" exactly when the table says ``saves: True``.

Recipes may give several variants (e.g. ``x * y`` and ``x * 2``): every variant must agree with
the table. Argument forms that behave differently from the table's usual case are pinned in
SUBTLE_CASES, so the comments in the table cannot drift either.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import importlib.util
import inspect
import json
import operator
import re
import sys
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from gradguard import shapes
from gradguard.torchdata import generate
from gradguard.torchdata.generate import c, idx  # constants and indices, as the generator's recipes make them

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                                        "ignore::FutureWarning")


def _load_table():
    # Loaded from its file, not through ``import gradguard``: the table must be checkable on its
    # own, whatever state the rest of the package (the engine) is in.
    path = Path(__file__).resolve().parents[1] / "server" / "gradguard" / "torch_api.py"
    spec = importlib.util.spec_from_file_location("_gradguard_torch_api_under_test", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


api = _load_table()

SECOND_TIME = "backward through the graph a second time"
NO_DERIVATIVE = "no_derivative"  # first backward already fails: "derivative for ... is not implemented"
HAS_CUDA = torch.cuda.is_available()


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # the inputs are tiny: thread start-up would cost more than the ops
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


# ----------------------------------------------------------------------------- helpers

def resolve(name: str):
    """The object a fully qualified table name denotes (fails the test if there is none)."""
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[: i + 1]))
    return obj


class Inputs:
    """Makes fresh tensors that require grad: leaves, or non-leaves (``leaf.clone()``)."""

    def __init__(self, leaf: bool):
        self.leaf = leaf

    def _wrap(self, t: torch.Tensor) -> torch.Tensor:
        t.requires_grad_()
        return t if self.leaf else t.clone()  # CloneBackward0 saves no tensors

    def __call__(self, *shape):
        return self._wrap(torch.randn(*shape))

    def pos(self, *shape):  # in [0.5, 1.5): for log, sqrt, division
        return self._wrap(torch.rand(*shape) + 0.5)

    def prob(self, *shape):  # in [0.1, 0.9): for binary cross entropy
        return self._wrap(torch.rand(*shape) * 0.8 + 0.1)

    def cplx(self, *shape):
        return self._wrap(torch.randn(*shape, dtype=torch.cfloat))


def first_tensor(out):
    while isinstance(out, (tuple, list)):
        out = out[0]
    return out


def second_backward_raises(out):
    """Walk ``out``'s graph twice: True if the second walk raises the second-time error."""
    t = first_tensor(out)
    assert isinstance(t, torch.Tensor), f"recipe gave {type(t).__name__}, not a tensor"
    assert t.requires_grad, "recipe output does not require grad: the recipe checks nothing"
    loss = (t.real if t.is_complex() else t).sum()
    try:
        loss.backward()
    except RuntimeError as e:
        if "is not implemented" in str(e):
            return NO_DERIVATIVE
        raise
    try:
        loss.backward()
    except RuntimeError as e:
        if SECOND_TIME in str(e):
            return True
        raise
    return False


def variants(recipe):
    return list(recipe) if isinstance(recipe, (list, tuple)) else [recipe]


def recipe_for(recipes: dict, name: str):
    if name not in recipes:
        pytest.fail(f"{name!r} is in the table but has no input recipe in {__name__}: add one")
    return recipes[name]


def check_saves(expected, recipe, *lead_args, leaf: bool):
    for i, build in enumerate(variants(recipe)):
        got = second_backward_raises(build(*lead_args, Inputs(leaf)))
        said = {True: "raises", False: "does not raise"}.get(got, got)
        assert got == expected, f"variant {i}: second backward {said}, table says saves={expected}"


LEAF = pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "nonleaf"])


# ----------------------------------------------------------------------------- FUNCTIONS

def _same(*variants):
    """Several argument forms of one entry; each must agree with the table."""
    return list(variants)


FUNCTION_RECIPES = {
    "torch.add": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), 1.0), lambda f, g: f(g(3), c(3))),
    "torch.sub": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), 1.0)),
    "torch.subtract": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), 1.0)),
    "torch.sum": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 0)),
    "torch.reshape": _same(lambda f, g: f(g(2, 3), (3, 2)), lambda f, g: f(g(2, 3).t(), (6,))),
    "torch.mean": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 0),
                        lambda f, g: f(g(3, 4), dim=1, keepdim=True)),
    "torch.diag": _same(lambda f, g: f(g(3, 3)), lambda f, g: f(g(3))),
    "torch.lerp": _same(lambda f, g: f(g(3), g(3), 0.3), lambda f, g: f(g(3), c(3), 0.3)),
    "torch.as_tensor": _same(lambda f, g: f(g(3)), lambda f, g: f(g(3), dtype=torch.float64)),
    "torch.nn.functional.pad": _same(lambda f, g: f(g(2, 3), (1, 1)),
                                     lambda f, g: f(g(2, 3), (1, 1), value=0.5)),
    "torch.nn.functional.interpolate": _same(
        lambda f, g: f(g(1, 1, 2, 2), scale_factor=2),
        lambda f, g: f(g(1, 1, 2, 2), scale_factor=2, mode="bilinear"),
        lambda f, g: f(g(1, 1, 2, 2), size=(4, 4), mode="bicubic"),
        lambda f, g: f(g(1, 1, 4), size=8, mode="linear")),
    "torch.nn.functional.dropout": _same(lambda f, g: f(g(4, 4), 0.5),
                                         lambda f, g: f(g(4, 4), p=0.2, training=True)),
    "torch.mul": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), 2), lambda f, g: f(g(3), c(3))),
    "torch.multiply": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), 2)),
    "torch.div": _same(lambda f, g: f(g(3), g.pos(3)), lambda f, g: f(g(3), 2.0),
                       lambda f, g: f(g(3), 2.0, rounding_mode=None)),
    "torch.divide": _same(lambda f, g: f(g(3), g.pos(3)), lambda f, g: f(g(3), 2.0)),
    "torch.true_divide": _same(lambda f, g: f(g(3), g.pos(3)), lambda f, g: f(g(3), 2.0)),
    "torch.mm": _same(lambda f, g: f(g(2, 3), g(3, 4)), lambda f, g: f(g(2, 3), c(3, 4))),
    "torch.matmul": _same(lambda f, g: f(g(2, 3), g(3, 4)), lambda f, g: f(g(5, 2, 3), c(3, 4)),
                          lambda f, g: f(g(3), g(3))),
    "torch.einsum": _same(lambda f, g: f("ij,jk->ik", g(2, 3), g(3, 4)),
                          lambda f, g: f("bij,bjk->bik", g(2, 2, 3), c(2, 3, 4))),
    "torch.pow": _same(lambda f, g: f(g(3), 2), lambda f, g: f(g(3), 3.0),
                       lambda f, g: f(g.pos(3), g(3)), lambda f, g: f(2.0, g(3))),
    "torch.norm": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), dim=1), lambda f, g: f(g(3), p=1)),
    "torch.max": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 1), lambda f, g: f(g(3, 4), g(3, 4))),
    "torch.min": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 1), lambda f, g: f(g(3, 4), c(3, 4))),
    "torch.maximum": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), c(3))),
    "torch.minimum": _same(lambda f, g: f(g(3), g(3)), lambda f, g: f(g(3), c(3))),
    "torch.std": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 1)),
    "torch.var": _same(lambda f, g: f(g(3, 4)), lambda f, g: f(g(3, 4), 1)),
    "torch.prod": _same(lambda f, g: f(g(3)), lambda f, g: f(g(3, 4), 1)),
    "torch.where": _same(lambda f, g: f(c(3) > 0, g(3), g(3)), lambda f, g: f(c(3) > 0, g(3), 0.0)),
    "torch.clamp": _same(lambda f, g: f(g(3), 0, 1), lambda f, g: f(g(3), min=0),
                         lambda f, g: f(g(3), max=0.5), lambda f, g: f(g(3), min=c(3))),
    "torch.scatter": _same(lambda f, g: f(g(3, 4), 1, idx([0], [1], [2]), g(3, 1)),
                           lambda f, g: f(g(3, 4), 1, idx([0], [1], [2]), 0.5)),
    "torch.nn.functional.linear": _same(lambda f, g: f(g(2, 3), g(4, 3)),
                                        lambda f, g: f(g(2, 3), g(4, 3), g(4)),
                                        lambda f, g: f(g(2, 3), c(4, 3))),
    "torch.nn.functional.mse_loss": _same(lambda f, g: f(g(3), c(3)), lambda f, g: f(g(3), g(3))),
    "torch.nn.functional.l1_loss": _same(lambda f, g: f(g(3), c(3)), lambda f, g: f(g(3), g(3))),
    "torch.nn.functional.cross_entropy": _same(lambda f, g: f(g(2, 5), idx(1, 3)),
                                               lambda f, g: f(g(2, 5), torch.rand(2, 5).softmax(-1))),
    "torch.nn.functional.layer_norm": _same(lambda f, g: f(g(2, 3), (3,)),
                                            lambda f, g: f(g(2, 3), (3,), g(3), g(3))),
    "torch.nn.functional.batch_norm": _same(
        lambda f, g: f(g(4, 3), torch.zeros(3), torch.ones(3), training=True),
        lambda f, g: f(g(4, 3), torch.zeros(3), torch.ones(3), training=False)),
}
# The names the generator follows beyond these: called as it calls them (gradguard/torchdata).
FUNCTION_RECIPES = {**{n: r for n, r in generate.FUNCTIONS.items() if n in api.FUNCTIONS}, **FUNCTION_RECIPES}


@LEAF
@pytest.mark.parametrize("name", sorted(api.FUNCTIONS))
def test_function_saves(name, leaf):
    recipe = recipe_for(FUNCTION_RECIPES, name)
    check_saves(api.FUNCTIONS[name], recipe, resolve(name), leaf=leaf)


# ----------------------------------------------------------------------------- TENSOR_METHODS

METHOD_RECIPES = {
    "add": _same(lambda m, g: m(g(3), g(3)), lambda m, g: m(g(3), 1)),
    "sub": _same(lambda m, g: m(g(3), g(3)), lambda m, g: m(g(3), 1)),
    "sum": _same(lambda m, g: m(g(3, 4)), lambda m, g: m(g(3, 4), 1)),
    "mean": _same(lambda m, g: m(g(3, 4)), lambda m, g: m(g(3, 4), 1)),
    "contiguous": _same(lambda m, g: m(g(2, 3).t()), lambda m, g: m(g(3))),
    "to": _same(lambda m, g: m(g(3), torch.float64), lambda m, g: m(g(3), "cpu"),
                lambda m, g: m(g(3), torch.float32), lambda m, g: m(g(3), c(1).double())),
    "cuda": lambda m, g: m(g(3)) if HAS_CUDA else pytest.skip("needs CUDA (same ToCopy node as to())"),
    "float": _same(lambda m, g: m(g(3)), lambda m, g: m(g(3).double())),
    "type_as": _same(lambda m, g: m(g(3), c(1).double()), lambda m, g: m(g(3), c(1))),
    "unflatten": lambda m, g: m(g(4), 0, (2, 2)),
    "round": _same(lambda m, g: m(g(3)), lambda m, g: m(g(3), decimals=1)),
    "mul": _same(lambda m, g: m(g(3), g(3)), lambda m, g: m(g(3), 2)),
    "div": _same(lambda m, g: m(g(3), g.pos(3)), lambda m, g: m(g(3), 2)),
    "matmul": lambda m, g: m(g(2, 3), c(3, 4)),
    "pow": _same(lambda m, g: m(g(3), 2), lambda m, g: m(g.pos(3), g(3))),
    "norm": _same(lambda m, g: m(g(3, 4)), lambda m, g: m(g(3, 4), dim=1)),
    "max": _same(lambda m, g: m(g(3, 4)), lambda m, g: m(g(3, 4), 1), lambda m, g: m(g(3, 4), c(3, 4))),
    "min": _same(lambda m, g: m(g(3, 4)), lambda m, g: m(g(3, 4), 1)),
    "clamp": _same(lambda m, g: m(g(3), 0, 1), lambda m, g: m(g(3), min=0)),
    "maximum": lambda m, g: m(g(3), c(3)),
    "minimum": lambda m, g: m(g(3), c(3)),
}
METHOD_RECIPES = {**{n: r for n, r in generate.METHODS.items() if r is not None}, **METHOD_RECIPES}


@LEAF
@pytest.mark.parametrize("name", sorted(api.TENSOR_METHODS))
def test_tensor_method_saves(name, leaf):
    recipe = recipe_for(METHOD_RECIPES, name)
    method = inspect.getattr_static(torch.Tensor, name)
    assert not isinstance(method, property) and callable(method), f"Tensor.{name} is not a method"
    check_saves(api.TENSOR_METHODS[name], recipe, getattr(torch.Tensor, name), leaf=leaf)


# ----------------------------------------------------------------------------- TENSOR_ATTRIBUTE_VIEWS

ATTRIBUTE_RECIPES = {  # the receiver; the test reads the attribute from it
    "T": lambda g: g(2, 3),
    "mT": lambda g: g(2, 2, 3),
    "H": _same(lambda g: g(2, 3), lambda g: g.cplx(2, 3)),
    "mH": _same(lambda g: g(2, 2, 3), lambda g: g.cplx(2, 2, 3)),
    "real": lambda g: g.cplx(3),
    "imag": lambda g: g.cplx(3),
}


@LEAF
@pytest.mark.parametrize("name", sorted(api.TENSOR_ATTRIBUTE_VIEWS))
def test_tensor_attribute_view_saves(name, leaf):
    recipe = recipe_for(ATTRIBUTE_RECIPES, name)
    assert inspect.isdatadescriptor(inspect.getattr_static(torch.Tensor, name)), f"Tensor.{name} is no attribute"
    check_saves(api.TENSOR_ATTRIBUTE_VIEWS[name],
                [lambda g, r=r: getattr(r(g), name) for r in variants(recipe)], leaf=leaf)


# ----------------------------------------------------------------------------- OPERATORS

# ast operator class name -> what Python calls for it
PYTHON_OPERATOR = {
    "Add": operator.add, "Sub": operator.sub, "Mult": operator.mul, "Div": operator.truediv,
    "MatMult": operator.matmul, "Pow": operator.pow, "FloorDiv": operator.floordiv,
    "Mod": operator.mod, "USub": operator.neg, "UAdd": operator.pos,
}

OPERATOR_RECIPES = {
    "Add": _same(lambda op, g: op(g(3), g(3)), lambda op, g: op(g(3), 1), lambda op, g: op(1, g(3))),
    "Sub": _same(lambda op, g: op(g(3), g(3)), lambda op, g: op(g(3), 1), lambda op, g: op(1, g(3))),
    "USub": lambda op, g: op(g(3)),
    "UAdd": lambda op, g: op(g(3)),
    "Mult": _same(lambda op, g: op(g(3), g(3)), lambda op, g: op(g(3), 2), lambda op, g: op(2, g(3)),
                  lambda op, g: op(g(3), c(3))),
    "Div": _same(lambda op, g: op(g(3), g.pos(3)), lambda op, g: op(g(3), 2), lambda op, g: op(2, g.pos(3))),
    "MatMult": _same(lambda op, g: op(g(2, 3), g(3, 4)), lambda op, g: op(g(2, 3), c(3, 4))),
    "Pow": _same(lambda op, g: op(g(3), 2), lambda op, g: op(g(3), 1), lambda op, g: op(2, g(3)),
                 lambda op, g: op(g.pos(3), g(3))),
    "FloorDiv": _same(lambda op, g: op(g(3), 2), lambda op, g: op(g(3), g.pos(3))),
    "Mod": _same(lambda op, g: op(g(3), 2), lambda op, g: op(g(3), c(3).abs() + 1)),
}


@LEAF
@pytest.mark.parametrize("name", sorted(api.OPERATORS))
def test_operator_saves(name, leaf):
    recipe = recipe_for(OPERATOR_RECIPES, name)
    node = getattr(ast, name, None)
    assert inspect.isclass(node) and issubclass(node, (ast.operator, ast.unaryop)), f"ast.{name}?"
    op = PYTHON_OPERATOR[name]
    if name == "FloorDiv":
        # no derivative at all: pinned separately, and the table must not claim saved tensors
        for build in variants(recipe):
            assert second_backward_raises(build(op, Inputs(leaf))) == NO_DERIVATIVE
        assert api.OPERATORS[name] is False
        return
    check_saves(api.OPERATORS[name], recipe, op, leaf=leaf)


# ----------------------------------------------------------------------------- SUBSCRIPT_SAVES

SUBSCRIPT_RECIPES = {
    "basic": _same(lambda g: g(4, 3)[1:3], lambda g: g(4, 3)[0], lambda g: g(4, 3)[..., 1],
                   lambda g: g(4, 3)[None], lambda g: g(4, 3)[:, 1:2], lambda g: g(4, 3)[::2, -1]),
    "advanced": _same(lambda g: g(4, 3)[idx(0, 2)], lambda g: g(4, 3)[[0, 2]],
                      lambda g: g(4, 3)[torch.tensor([True, False, True, False])],
                      lambda g: g(4, 3)[c(4, 3) > 0], lambda g: g(4, 3)[:, idx(1)]),
}


@LEAF
@pytest.mark.parametrize("kind", sorted(api.SUBSCRIPT_SAVES))
def test_subscript_saves(kind, leaf):
    check_saves(api.SUBSCRIPT_SAVES[kind], recipe_for(SUBSCRIPT_RECIPES, kind), leaf=leaf)


# ----------------------------------------------------------------------------- MODULES

# name -> (construct from the class, the forward arguments): the generator's recipes, and here
# only where this test calls a layer otherwise
MODULE_RECIPES = {**generate.MODULES,
                  "torch.nn.CTCLoss": (lambda M: M(), lambda g: (g(5, 1, 3), idx([1, 2]), idx(5), idx(2)))}


def _check_returns(kind: str, out):
    if kind == "tensor":
        assert isinstance(out, torch.Tensor), type(out)
    elif kind == "tuple":
        assert isinstance(out, tuple) and all(isinstance(t, torch.Tensor) for t in out), out
    elif kind == "output_and_hidden":  # RNN, GRU: (output, h)
        assert isinstance(out, tuple) and len(out) == 2
        assert all(isinstance(t, torch.Tensor) for t in out)
    elif kind == "output_and_hidden_pair":  # LSTM: (output, (h, c))
        assert isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], torch.Tensor)
        assert isinstance(out[1], tuple) and len(out[1]) == 2
        assert all(isinstance(t, torch.Tensor) for t in out[1])
    else:
        pytest.fail(f"unknown returns kind {kind!r}")


@LEAF
@pytest.mark.parametrize("name", sorted(api.MODULES))
def test_module(name, leaf):
    spec = api.MODULES[name]
    construct, forward_args = recipe_for(MODULE_RECIPES, name)
    cls = resolve(name)
    assert inspect.isclass(cls) and issubclass(cls, nn.Module)
    module = construct(cls)
    assert module.training
    has_params = any(p.requires_grad for p in module.parameters())
    assert has_params == spec["params"], f"has trainable parameters: {has_params}"
    out = module(*forward_args(Inputs(leaf)))
    _check_returns(spec.get("returns", "tensor"), out)
    got = second_backward_raises(out)
    assert got == spec["saves"], f"second backward {'raises' if got else 'does not raise'}"


# ----------------------------------------------------------------------------- subtle cases

SUBTLE_CASES = {  # each pins a comment in the table: id -> (build, does the 2nd backward raise)
    "x*2 (python scalar is wrapped and saved)": (lambda g: g(3) * 2, True),
    "2*x": (lambda g: 2 * g(3), True),
    "x/2": (lambda g: g(3) / 2, True),
    "2/x": (lambda g: 2 / g.pos(3), True),
    "x+1": (lambda g: g(3) + 1, False),
    "1-x": (lambda g: 1 - g(3), False),
    "-x": (lambda g: -g(3), False),
    "x**2 (int exponent)": (lambda g: g(3) ** 2, True),
    "x**1": (lambda g: g(3) ** 1, True),
    "x**0": (lambda g: g(3) ** 0, True),
    "2**x": (lambda g: 2 ** g(3), True),
    "x % 2": (lambda g: g(3) % 2, False),
    "x % y, y requires grad": (lambda g: g(3) % g.pos(3), True),
    "x // 2 (no derivative)": (lambda g: g(3) // 2, NO_DERIVATIVE),
    "x.mean()": (lambda g: g(3, 4).mean(), False),
    "x.mean(0)": (lambda g: g(3, 4).mean(0), False),
    "x.sum()": (lambda g: g(3, 4).sum(), False),
    "x.max()": (lambda g: g(3, 4).max(), True),
    "x.max(0) (saves indices)": (lambda g: g(3, 4).max(0), True),
    "torch.max(x, y)": (lambda g: torch.max(g(3), c(3)), True),
    "x.to(float64)": (lambda g: g(3).to(torch.float64), False),
    "x.to(float32) is x": (lambda g: g(3).to(torch.float32), False),
    "x.float() is x": (lambda g: g(3).float(), False),
    "x.clamp(0, 1)": (lambda g: g(3).clamp(0, 1), True),
    "x.clamp(min=0)": (lambda g: g(3).clamp(min=0), True),
    "torch.where(c, x, y)": (lambda g: torch.where(c(3) > 0, g(3), g(3)), True),
    "torch.where(c, x, 0.)": (lambda g: torch.where(c(3) > 0, g(3), 0.0), True),
    "torch.cat": (lambda g: torch.cat([g(2), g(3)]), False),
    "softmax (saves its result)": (lambda g: g(3).softmax(-1), True),
    "relu (saves its result)": (lambda g: g(3).relu(), True),
    "F.dropout training": (lambda g: nn.functional.dropout(g(4, 4), 0.5), True),
    "F.dropout training=False": (lambda g: nn.functional.dropout(g(4, 4), 0.5, training=False), False),
    "F.dropout p=0": (lambda g: nn.functional.dropout(g(4, 4), 0.0), False),
    "nn.Dropout eval()": (lambda g: nn.Dropout(0.5).eval()(g(4, 4)), False),
    "nn.MaxPool2d": (lambda g: nn.MaxPool2d(2)(g(1, 1, 4, 4)), True),
    "nn.AvgPool2d (saves its input)": (lambda g: nn.AvgPool2d(2)(g(1, 1, 4, 4)), True),
    "nn.AdaptiveAvgPool2d(1) (a mean)": (lambda g: nn.AdaptiveAvgPool2d(1)(g(1, 1, 4, 4)), False),
    "F.adaptive_avg_pool2d(x, 1)": (lambda g: nn.functional.adaptive_avg_pool2d(g(1, 1, 4, 4), 1), False),
    "nn.BatchNorm1d train": (lambda g: nn.BatchNorm1d(3)(g(4, 3)), True),
    "nn.BatchNorm1d eval": (lambda g: nn.BatchNorm1d(3).eval()(g(4, 3)), True),
    "nn.BatchNorm1d(affine=False) eval": (lambda g: nn.BatchNorm1d(3, affine=False).eval()(g(4, 3)), True),
    "x[1:3]": (lambda g: g(4)[1:3], False),
    "x[0]": (lambda g: g(4, 3)[0], False),
    "x[idx_tensor]": (lambda g: g(4)[idx(0, 2)], True),
    "x[bool_mask]": (lambda g: g(4)[c(4) > 0], True),
    "x[[0, 2]]": (lambda g: g(4)[[0, 2]], True),
    "x.T": (lambda g: g(2, 3).T, False),
    "nn.Linear(bias=False)": (lambda g: nn.Linear(3, 2, bias=False)(g(4, 3)), True),
    "nn.Linear on an input without grad": (lambda g: nn.Linear(3, 2)(c(4, 3)), True),
    "x @ W, W constant": (lambda g: g(2, 3) @ c(3, 4), True),
    "x * c, c constant tensor": (lambda g: g(3) * c(3), True),
    "F.pad reflect": (lambda g: nn.functional.pad(g(1, 3, 3), (1, 1), mode="reflect"), True),
    "F.pad replicate": (lambda g: nn.functional.pad(g(1, 3, 3), (1, 1), mode="replicate"), True),
    "F.interpolate area": (lambda g: nn.functional.interpolate(g(1, 1, 4, 4), scale_factor=0.5, mode="area"), True),
    "einsum with one operand": (lambda g: torch.einsum("ij->ji", g(2, 3)), False),
    "addcmul, only self requires grad": (lambda g: torch.addcmul(g(3), c(3), c(3)), False),
    "lerp with a weight tensor": (lambda g: torch.lerp(g(3), c(3), torch.full((3,), 0.5)), True),
    "repeat_interleave with a repeats tensor": (lambda g: g(3).repeat_interleave(idx(1, 2, 1)), True),
    "torch.normal(mean_tensor, 1.) keeps the graph": (lambda g: torch.normal(g(3), 1.0), False),
    "sign keeps the graph": (lambda g: (g(3) * c(3)).sign(), True),  # walks into the saving mul
    "round keeps the graph": (lambda g: (g(3) * c(3)).round(), True),
    "torch.Tensor(t) aliases t": (lambda g: torch.Tensor(g(3) * c(3)), True),
    "torch.as_tensor(t) is t": (lambda g: torch.as_tensor(g(3) * c(3)), True),
}


@LEAF
@pytest.mark.parametrize("case", list(SUBTLE_CASES))
def test_subtle_case(case, leaf):
    build, expected = SUBTLE_CASES[case]
    assert second_backward_raises(build(Inputs(leaf))) == expected


def test_subtle_refusals():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        nn.ReLU(inplace=True)(x)
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        (x * 2)[:2].detach_()
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf"):
        (x * 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        x.numpy()
    assert x.real is x  # real of a real tensor is the tensor itself
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        x.imag
    with pytest.raises(TypeError):
        torch.LongTensor(x)


# ----------------------------------------------------------------------------- FACTORIES etc.

FACTORY_RECIPES = {  # name -> (call without requires_grad, call asking for it, or None if it cannot)
    "torch.randn": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.rand": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.randint": (lambda f, g: f(0, 5, (3,)), lambda f: f(0, 5, (3,), dtype=torch.float32, requires_grad=True)),
    "torch.zeros": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.ones": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.empty": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.full": (lambda f, g: f((3,), 1.0), lambda f: f((3,), 1.0, requires_grad=True)),
    "torch.arange": (lambda f, g: f(3.0), lambda f: f(3.0, requires_grad=True)),
    "torch.linspace": (lambda f, g: f(0, 1, 3), lambda f: f(0, 1, 3, requires_grad=True)),
    "torch.logspace": (lambda f, g: f(0, 1, 3), lambda f: f(0, 1, 3, requires_grad=True)),
    "torch.eye": (lambda f, g: f(3), lambda f: f(3, requires_grad=True)),
    "torch.normal": (lambda f, g: f(0.0, 1.0, (3,)), lambda f: f(0.0, 1.0, (3,), requires_grad=True)),
    "torch.randn_like": (lambda f, g: f(g(3)), lambda f: f(torch.ones(3), requires_grad=True)),
    "torch.rand_like": (lambda f, g: f(g(3)), lambda f: f(torch.ones(3), requires_grad=True)),
    "torch.zeros_like": (lambda f, g: f(g(3)), lambda f: f(torch.ones(3), requires_grad=True)),
    "torch.ones_like": (lambda f, g: f(g(3)), lambda f: f(torch.ones(3), requires_grad=True)),
    "torch.empty_like": (lambda f, g: f(g(3)), lambda f: f(torch.ones(3), requires_grad=True)),
    "torch.full_like": (lambda f, g: f(g(3), 2.0), lambda f: f(torch.ones(3), 2.0, requires_grad=True)),
    "torch.randint_like": (lambda f, g: f(g(3), 5), lambda f: f(torch.ones(3), 5, requires_grad=True)),
    "torch.randperm": (lambda f, g: f(4), lambda f: f(4, dtype=torch.float32, requires_grad=True)),
    "torch.from_numpy": (lambda f, g: f(g(3).detach().numpy()), None),
    "torch.nn.functional.one_hot": (lambda f, g: f(idx(0, 2), 3), None),
    "torch.argmax": (lambda f, g: f(g(3)), None),
    "torch.argmin": (lambda f, g: f(g(3)), None),
    "torch.argsort": (lambda f, g: f(g(3)), None),
    "torch.multinomial": (lambda f, g: f(g.prob(3), 2), None),
    "torch.bucketize": (lambda f, g: f(g(3), torch.tensor([-1.0, 0.0, 1.0])), None),
    "torch.searchsorted": (lambda f, g: f(torch.tensor([-1.0, 0.0, 1.0]), g(3)), None),
    "torch.nonzero": (lambda f, g: f(g(3)), None),
    "torch.isnan": (lambda f, g: f(g(3)), None),
    "torch.isinf": (lambda f, g: f(g(3)), None),
    "torch.isfinite": (lambda f, g: f(g(3)), None),
    "torch.eq": (lambda f, g: f(g(3), g(3)), None),
    "torch.ne": (lambda f, g: f(g(3), 0.0), None),
    "torch.gt": (lambda f, g: f(g(3), 0.0), None),
    "torch.lt": (lambda f, g: f(g(3), 0.0), None),
    "torch.ge": (lambda f, g: f(g(3), 0.0), None),
    "torch.le": (lambda f, g: f(g(3), 0.0), None),
    "torch.logical_not": (lambda f, g: f(g(3)), None),
    "torch.logical_and": (lambda f, g: f(g(3), g(3)), None),
    "torch.logical_or": (lambda f, g: f(g(3), g(3)), None),
}


@LEAF
@pytest.mark.parametrize("name", sorted(api.FACTORIES))
def test_factory(name, leaf):
    plain, asked = recipe_for(FACTORY_RECIPES, name)
    f = resolve(name)
    out = plain(f, Inputs(leaf))
    assert isinstance(out, torch.Tensor) and out.is_leaf and not out.requires_grad
    if asked is not None:
        out = asked(f)
        assert out.is_leaf and out.requires_grad


def _longtensor(f, g):
    with pytest.raises(TypeError):  # a float tensor (one that could carry a graph) is refused
        f(g(3))
    return [f([1, 2]), f(torch.tensor([1, 2])), f(3)]


COPY_RECIPES = {
    "torch.tensor": lambda f, g: [f(g(3)), f(g(3), dtype=torch.float64), f([1.0, 2.0])],
    "torch.LongTensor": _longtensor,
    "torch.detach": lambda f, g: [f(g(3))],
    "torch.autograd.Variable": lambda f, g: [f(g(3)), f(g(3) * 2)],
}


@LEAF
@pytest.mark.parametrize("name", sorted(api.COPY_CONSTRUCTORS))
def test_copy_constructor(name, leaf):
    for out in recipe_for(COPY_RECIPES, name)(resolve(name), Inputs(leaf)):
        assert isinstance(out, torch.Tensor) and out.is_leaf and not out.requires_grad


def test_copy_constructor_can_ask_for_grad():
    out = torch.tensor(torch.randn(3, requires_grad=True) * 2, requires_grad=True)
    assert out.is_leaf and out.requires_grad


@LEAF
@pytest.mark.parametrize("name", sorted(api.PARAMETERS))
def test_parameter(name, leaf):
    p = resolve(name)(Inputs(leaf)(3) * 2)  # even from a non-leaf with a graph
    assert isinstance(p, nn.Parameter) and p.is_leaf and p.requires_grad and p.grad_fn is None


# ----------------------------------------------------------------------------- SEVER_*

def _numpy(m, g):
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        m(g(3))
    return None  # refused outright: it never hands out the graph


SEVER_RECIPES = {  # result must not be a tensor that requires grad
    "detach": lambda m, g: m(g(3)),
    "item": lambda m, g: m(g(1)),
    "tolist": lambda m, g: m(g(3)),
    "numpy": _numpy,
    "argmax": lambda m, g: m(g(3)),
    "argmin": lambda m, g: m(g(3)),
    "size": lambda m, g: m(g(3)),
    "dim": lambda m, g: m(g(3)),
    "numel": lambda m, g: m(g(3)),
    "nelement": lambda m, g: m(g(3)),
    "element_size": lambda m, g: m(g(3)),
    "long": lambda m, g: m(g(3)),
    "int": lambda m, g: m(g(3)),
    "bool": lambda m, g: m(g(3)),
    "short": lambda m, g: m(g(3)),
    "byte": lambda m, g: m(g(3)),
    "eq": lambda m, g: m(g(3), 0.0),
    "ne": lambda m, g: m(g(3), 0.0),
    "gt": lambda m, g: m(g(3), 0.0),
    "lt": lambda m, g: m(g(3), 0.0),
    "ge": lambda m, g: m(g(3), 0.0),
    "le": lambda m, g: m(g(3), 0.0),
    "nonzero": lambda m, g: m(g(3)),
    "argsort": lambda m, g: m(g(3)),
    "isnan": lambda m, g: m(g(3)),
    "isinf": lambda m, g: m(g(3)),
    "isfinite": lambda m, g: m(g(3)),
    "any": lambda m, g: m(g(3)),
    "all": lambda m, g: m(g(3)),
    "logical_not": lambda m, g: m(g(3)),
    "equal": lambda m, g: m(g(3), c(3)),
    "allclose": lambda m, g: m(g(3), c(3)),
    "isclose": lambda m, g: m(g(3), c(3)),
    "is_contiguous": lambda m, g: m(g(3)),
    "is_floating_point": lambda m, g: m(g(3)),
    "stride": lambda m, g: m(g(3)),
    "count_nonzero": lambda m, g: m(g(3)),
    "new_zeros": lambda m, g: m(g(3), (2,)),
    "new_ones": lambda m, g: m(g(3), (2,)),
    "new_empty": lambda m, g: m(g(3), (2,)),
    "new_full": lambda m, g: m(g(3), (2,), 1.0),
    "new_tensor": lambda m, g: m(g(3), g(3)),
}


def _carries_no_graph(value) -> bool:
    return not (isinstance(value, torch.Tensor) and value.requires_grad)


@LEAF
@pytest.mark.parametrize("name", sorted(api.SEVER_METHODS))
def test_sever_method(name, leaf):
    recipe = recipe_for(SEVER_RECIPES, name)
    assert callable(inspect.getattr_static(torch.Tensor, name))
    assert _carries_no_graph(recipe(getattr(torch.Tensor, name), Inputs(leaf)))


@pytest.mark.parametrize("name", sorted(api.LIKE_METHODS))
def test_like_method_takes_no_graph_from_its_argument(name):
    """The argument lends dtype, device or shape: only the receiver's graph is in the result."""
    other = torch.randn(1, 3, requires_grad=True)
    assert not getattr(torch.randn(3), name)(other).requires_grad
    assert getattr(torch.randn(3, requires_grad=True), name)(other.detach()).requires_grad


def _with_grad(g):
    x = torch.randn(3, requires_grad=True)
    (x * x).sum().backward()
    return x


SEVER_ATTRIBUTE_RECIPES = {name: (lambda g: g(2, 3)) for name in (
    "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "grad_fn", "ndim",
    "is_cuda", "layout", "nbytes", "itemsize")}
SEVER_ATTRIBUTE_RECIPES["grad"] = _with_grad


@LEAF
@pytest.mark.parametrize("name", sorted(api.SEVER_ATTRIBUTES))
def test_sever_attribute(name, leaf):
    receiver = recipe_for(SEVER_ATTRIBUTE_RECIPES, name)(Inputs(leaf))
    value = getattr(receiver, name)
    assert not callable(value) or name == "grad_fn"
    assert _carries_no_graph(value)
    if name in ("grad", "data"):
        assert isinstance(value, torch.Tensor)


@pytest.mark.parametrize("name", sorted(api.TENSOR_HOOK_METHODS))
def test_tensor_hook_method(name):
    """Registering a hook returns a handle and leaves the tensor and its graph as they were."""
    y = torch.randn(3, requires_grad=True) * 2
    fn, version = y.grad_fn, y._version
    handle = getattr(y, name)(lambda g: g)
    assert callable(getattr(handle, "remove", None))
    assert y.grad_fn is fn and y._version == version


@pytest.mark.parametrize("name", sorted(api.DETACHED_ATTRIBUTES))
def test_detached_attribute(name):
    """The tensor's memory (an in-place write through it shows in the tensor), without graph."""
    y = torch.randn(3, requires_grad=True) * 2
    value = getattr(y, name)
    assert api.DETACHED_ATTRIBUTES <= api.SEVER_ATTRIBUTES
    assert not value.requires_grad and value.grad_fn is None
    value.zero_()
    assert torch.equal(y.detach(), torch.zeros(3))


@pytest.mark.parametrize("name", sorted(api.DETACH_IN_PLACE))
def test_detach_in_place(name):
    y = torch.randn(3, requires_grad=True) * 2
    getattr(y, name)()
    assert not y.requires_grad and y.is_leaf and y.grad_fn is None
    assert api.is_in_place_method(name)


def test_requires_grad_setter():
    name = api.REQUIRES_GRAD_SETTER
    t = torch.randn(3)
    assert getattr(t, name)() is t and t.requires_grad and t.is_leaf  # the flag defaults to True
    u = torch.randn(3, requires_grad=True)
    getattr(u, name)(False)
    assert not u.requires_grad


# ----------------------------------------------------------------------------- BACKWARD_CALLS

def _backward_call(name):
    return torch.Tensor.backward if name == "Tensor.backward" else resolve(name)


@pytest.mark.parametrize("name", sorted(api.BACKWARD_CALLS))
def test_backward_call_signature(name):
    spec = api.BACKWARD_CALLS[name]
    params = list(inspect.signature(_backward_call(name)).parameters)
    if spec["tensors"] is None:
        assert params[0] == "self"
        params = params[1:]  # positions count after the receiver
    else:
        assert params[spec["tensors"]] == spec["tensors_kw"]
    assert tuple(params) == spec["parameters"]
    assert params[spec["retain_pos"]] == api.RETAIN_GRAPH
    assert params[spec["create_pos"]] == api.CREATE_GRAPH
    assert params[spec["inputs_pos"]] == api.INPUTS
    assert params[spec["gradient"][0]] == spec["gradient"][1]


def test_named_keywords_and_attributes():
    """The names the interpreter reads off calls and classes, as torch spells them."""
    assert getattr(torch.zeros(1, **{api.REQUIRES_GRAD: True}), api.REQUIRES_GRAD) is True
    assert importlib.import_module(api.TORCH) is torch
    assert resolve(api.MODULE_DICT) is nn.ModuleDict
    assert api.MODULE_FORWARD in vars(nn.Module) and api.MODULE_FORWARD in vars(nn.Linear)
    for name, mode in api.GRAD_MODE.items():
        if mode in ("arg0", "not_arg0"):
            enabled = torch.is_grad_enabled()
            with resolve(name)(**{api.GRAD_MODE_KEYWORD: True}):  # accepted by keyword
                pass
            torch.set_grad_enabled(enabled)


def test_inputs_limit_what_a_backward_frees():
    """``autograd.grad(out, inputs)`` and ``backward(inputs=...)`` run only the graph between
    the outputs and the inputs: a part off those paths survives for a later backward."""
    w_trunk = torch.randn(3, requires_grad=True)
    w_head = torch.randn(3, requires_grad=True)
    trunk = (w_trunk * 2).exp()
    out = (trunk * w_head).sum()
    torch.autograd.grad(out, [w_head])
    (trunk * 3).sum().backward()  # the trunk's saved tensors are intact
    trunk2 = (w_trunk * 2).exp()
    out2 = (trunk2 * w_head).sum()
    out2.backward(inputs=[w_head])
    assert w_trunk.grad is not None and w_head.grad is not None
    trunk2.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        out2.backward(inputs=[w_head])  # what it walked (the product with the head) was freed


@pytest.mark.parametrize("flag", ["retain_pos", "create_pos", None])
@pytest.mark.parametrize("name", sorted(api.BACKWARD_CALLS))
def test_backward_call_positional(name, flag):
    spec = api.BACKWARD_CALLS[name]
    fn = _backward_call(name)
    x = torch.randn(3, requires_grad=True)
    loss = (x * x).sum()  # MulBackward0 saves x
    by_name = {"tensors": loss, "outputs": loss, "inputs": [x]}
    params = list(inspect.signature(fn).parameters)
    receiver = [loss] if spec["tensors"] is None else []
    params = params[len(receiver):]
    last = spec[flag] if flag else max(spec["retain_pos"], spec["create_pos"])
    args = [by_name.get(p) for p in params[: last + 1]]
    if flag:
        args[spec[flag]] = True
    else:
        args = [a for a, p in zip(args, params) if p in by_name]  # only the required ones
    result = fn(*receiver, *args)
    if spec.get("returns") == "grads":  # one gradient per input
        assert isinstance(result, tuple) and len(result) == 1 and isinstance(result[0], torch.Tensor)
    else:
        assert result is None
    grad = result[0] if result is not None else x.grad
    # create_graph makes the gradient itself differentiable; retain_graph alone does not
    assert grad.requires_grad is (flag == "create_pos")
    if flag:
        torch.autograd.backward(loss)  # the graph was kept: a second walk works
    else:
        with pytest.raises(RuntimeError, match=SECOND_TIME):
            torch.autograd.backward(loss)


# ----------------------------------------------------------------------------- GRAD_MODE

@pytest.fixture
def restore_grad_mode():
    enabled = torch.is_grad_enabled()
    yield
    torch.set_grad_enabled(enabled)


def _result_requires_grad(make, outer: bool, decorate: bool) -> bool:
    """Does ``x * 2`` require grad under ``make()`` (grad mode ``outer`` around it)?"""
    x = torch.randn(3, requires_grad=True)
    with torch.set_grad_enabled(outer):
        # make() runs inside: torch.set_grad_enabled(flag) switches the mode as soon as it is
        # *called*, even without ``with`` (the table's "arg0" entries behave so)
        if decorate:
            return make()(lambda: x * 2)().requires_grad
        with make():
            return (x * 2).requires_grad


@pytest.mark.parametrize("name", sorted(api.GRAD_MODE))
def test_grad_mode(name, restore_grad_mode):
    obj = resolve(name)
    mode = api.GRAD_MODE[name]
    if mode == "arg0":
        for flag in (True, False):
            assert _result_requires_grad(lambda: obj(flag), not flag, decorate=False) is flag
            assert _result_requires_grad(lambda: obj(flag), not flag, decorate=True) is flag
            # a bare call switches the mode for what follows
            with torch.set_grad_enabled(not flag):
                obj(flag)
                assert torch.is_grad_enabled() is flag
        return
    if mode == "not_arg0":
        assert _result_requires_grad(lambda: obj(True), True, decorate=False) is False
        for outer in (True, False):  # mode=False turns recording on
            assert _result_requires_grad(lambda: obj(False), outer, decorate=False) is True
        mode = False  # and without an argument it is off, like no_grad
    assert isinstance(mode, bool)
    assert _result_requires_grad(obj, not mode, decorate=False) is mode
    assert _result_requires_grad(obj, not mode, decorate=True) is mode
    # also usable as a bare decorator (@torch.no_grad)
    assert _result_requires_grad(lambda: obj, not mode, decorate=True) is mode


def test_inference_mode_false_keeps_grad():
    assert _result_requires_grad(lambda: torch.inference_mode(False), True, decorate=False)


# ----------------------------------------------------------------------------- modules: the rest

@pytest.mark.parametrize("name", sorted(api.MODULE_CONTAINERS))
def test_module_container(name):
    a, b = nn.Linear(3, 3), nn.Linear(3, 2)
    x = torch.randn(4, 3)
    assert torch.equal(resolve(name)(a, b)(x), b(a(x)))


@pytest.mark.parametrize("name", sorted(api.MODULE_BASES))
def test_module_base(name):
    base = resolve(name)

    class User(base):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x) * 3

    m = User()
    x = torch.randn(4, 3)
    assert torch.equal(m(x), m.lin(x) * 3)
    assert issubclass(base, nn.Module)


@pytest.mark.parametrize("name", sorted(api.AUTOGRAD_FUNCTION_BASES))
def test_autograd_function_base(name):
    base = resolve(name)
    assert base is torch.autograd.Function
    assert hasattr(base, api.FUNCTION_APPLY)

    class Double(base):
        @staticmethod
        def forward(ctx, x):
            assert not torch.is_grad_enabled()  # the forward runs with grad recording off
            getattr(ctx, api.SAVE_FOR_BACKWARD)(x)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = torch.ones(2, requires_grad=True)
    y = getattr(Double, api.FUNCTION_APPLY)(x)
    assert y.requires_grad and len(y.grad_fn.saved_tensors) == 1
    assert any(hasattr(y.grad_fn, name) for name in api.SAVED_TENSORS)


@pytest.mark.parametrize("name", sorted(api.MODULE_WRAPPERS))
def test_module_wrapper(name):
    """A wrapper runs the module it wraps (on the CPU: DataParallel without devices calls it;
    DistributedDataParallel needs a process group, so only its signature is checked)."""
    cls = resolve(name)
    pos, key = api.MODULE_WRAPPERS[name]
    params = list(inspect.signature(cls).parameters)
    assert params[pos] == key
    if issubclass(cls, nn.parallel.DistributedDataParallel):
        assert cls.forward is not nn.Module.forward
        return
    inner = nn.Linear(3, 2)
    wrapped = cls(inner)
    x = torch.randn(4, 3)
    assert torch.equal(wrapped(x), inner(x))
    assert [id(p) for p in wrapped.parameters()] == [id(p) for p in inner.parameters()]
    assert wrapped.module is inner


@pytest.mark.parametrize("name", sorted(api.MODULE_HOLDERS))
def test_module_holder(name):
    children = [nn.Linear(3, 3), nn.ReLU()]
    holder = resolve(name)(children)
    assert [id(m) for m in holder] == [id(m) for m in children]  # iterating yields the children
    with pytest.raises(NotImplementedError):  # a holder has no forward
        holder(torch.randn(2, 3))


def test_module_dict_iterates_keys():  # why ModuleDict is not in MODULE_HOLDERS
    md = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
    assert list(md) == ["a", "b"] and [type(m) for m in md.values()] == [nn.ReLU, nn.Tanh]


PARAMETER_METHOD_RECIPES = {  # how to get the tensors out of what the method yields
    "parameters": lambda it: list(it),
    "named_parameters": lambda it: [p for _, p in it],
}


@pytest.mark.parametrize("name", sorted(api.MODULE_PARAMETER_METHODS))
def test_module_parameter_method(name):
    m = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))  # BatchNorm also has buffers
    got = recipe_for(PARAMETER_METHOD_RECIPES, name)(getattr(m, name)())
    assert {id(p) for p in got} == {id(m[0].weight), id(m[0].bias), id(m[1].weight), id(m[1].bias)}
    assert all(isinstance(p, nn.Parameter) and p.requires_grad and p.is_leaf for p in got)
    pairs = all(isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)
                for item in getattr(m, name)())
    assert pairs == (name in api.MODULE_NAMED_METHODS)


SELF_METHOD_ARGS = {
    "train": (), "eval": (), "to": (torch.float32,), "cuda": (), "cpu": (), "float": (),
    "double": (), "requires_grad_": (), "half": (), "bfloat16": (), "type": (torch.float64,),
    "apply": (lambda mod: None,), "share_memory": (),
}


@pytest.mark.parametrize("name", sorted(api.MODULE_SELF_METHODS))
def test_module_self_method(name):
    args = recipe_for(SELF_METHOD_ARGS, name)
    if name == "cuda" and not HAS_CUDA:
        pytest.skip("needs CUDA")
    m = nn.Linear(3, 2)
    assert getattr(m, name)(*args) is m


# ----------------------------------------------------------------------------- optimizers

def _optimizers():
    out = []
    for attr in dir(torch.optim):
        obj = getattr(torch.optim, attr)
        if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer) and obj is not torch.optim.Optimizer:
            out.append(attr)
    return sorted(out)


@pytest.mark.parametrize("attr", _optimizers())
def test_optimizer_step(attr):
    """step() updates the parameters in place; step(closure) runs the closure once, except the
    optimizers in OPTIMIZER_REPEATS_CLOSURE."""
    cls = getattr(torch.optim, attr)
    qual = f"torch.optim.{attr}"
    assert qual.startswith(api.OPTIMIZER_PREFIXES)
    for method in api.OPTIMIZER_STEP_METHODS:
        assert callable(getattr(cls, method, None))
    if attr == "SparseAdam":
        emb = nn.Embedding(4, 3, sparse=True)
        params, loss_fn = [emb.weight], lambda: emb(idx(1, 2)).sum()
    else:
        w = nn.Parameter(torch.randn(3, 3))
        params, loss_fn = [w], lambda: (w * w).sum()
    opt = cls(params, lr=0.1)
    before = [(p._version, p.detach().clone()) for p in params]
    calls = 0

    def closure():
        nonlocal calls
        calls += 1
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    closure()
    calls = 0
    opt.step(closure)
    for p, (version, value) in zip(params, before):
        assert p._version > version and not torch.equal(p.detach(), value)  # updated in place
    assert (calls > 1) is (qual in api.OPTIMIZER_REPEATS_CLOSURE), f"step(closure) ran it {calls} times"


def test_optimizer_repeats_closure_names_are_optimizers():
    assert api.OPTIMIZER_REPEATS_CLOSURE <= {f"torch.optim.{a}" for a in _optimizers()}


def test_optimizer_prefix_also_matches_lr_schedulers():
    # Pins the caution in the table: a scheduler's step() is under the prefix but leaves the
    # parameters alone.
    assert "torch.optim.lr_scheduler.StepLR".startswith(api.OPTIMIZER_PREFIXES)
    assert "torch.optim.lr_scheduler.StepLR".startswith(api.NOT_OPTIMIZER_PREFIXES)
    assert not any(f"torch.optim.{a}".startswith(api.NOT_OPTIMIZER_PREFIXES) for a in _optimizers())
    w = nn.Parameter(torch.randn(3))
    opt = torch.optim.SGD([w], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    version = w._version
    opt.step()  # no grad: leaves w alone (and keeps the scheduler from warning)
    sched.step()
    assert w._version == version


# ----------------------------------------------------------------------------- is_in_place_method

IN_PLACE_CALLS = {
    "add_": (1.0,), "sub_": (1.0,), "mul_": (2.0,), "div_": (2.0,), "zero_": (), "fill_": (1.0,),
    "copy_": (torch.ones(3),), "clamp_": (0, 1), "relu_": (), "exp_": (), "sigmoid_": (),
    "masked_fill_": (torch.tensor([True, False, True]), 0.0), "normal_": (), "uniform_": (),
    "index_add_": (0, idx(0), torch.ones(1)), "scatter_": (0, idx(0), 1.0), "pow_": (2,),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE_CALLS))
def test_in_place_method_modifies_receiver(name):
    assert api.is_in_place_method(name)
    t = torch.randn(3)
    version = t._version
    assert getattr(t, name)(*IN_PLACE_CALLS[name]) is t and t._version > version


@pytest.mark.parametrize("name", ["add", "mul", "clamp", "detach", "__iadd__", "_version", "relu"])
def test_not_in_place_method(name):
    assert not api.is_in_place_method(name)


def _writes_self(op: str) -> bool:
    """ATen's schema of every overload of ``op`` marks its first argument written (``Tensor(a!) self``)."""
    schemas = [str(s) for s in torch._C._jit_get_schemas_for_operator(f"aten::{op}")]
    return bool(schemas) and all(re.search(r"\(Tensor\(a!\) self\b", s) for s in schemas)


# in-place functions left out of both tables: not autograd-relevant writes of a tensor that
# requires grad (sparse resizing, the embedding renorm run under no_grad) or not a functional
# form with an ``inplace`` flag (rrelu's and the feature dropouts' are not followed)
IN_PLACE_FUNCTIONS_LEFT_OUT = {"torch.resize_as_sparse_", "torch.embedding_renorm_", "torch.rrelu_",
                               "torch.feature_dropout_", "torch.feature_alpha_dropout_",
                               "torch.nn.functional.rrelu_"}


def test_in_place_functions_are_all_known():
    import torch.nn.functional as F
    found = {f"torch.{n}" for n in dir(torch) if n.endswith("_") and not n.startswith("_")
             and callable(getattr(torch, n)) and _writes_self(n)}
    found |= {f"torch.nn.functional.{n}" for n in dir(F) if n.endswith("_") and not n.startswith("_")}
    assert found == set(api.IN_PLACE_METHOD_FUNCTIONS) | set(api.IN_PLACE_FLAG_FUNCTIONS) | IN_PLACE_FUNCTIONS_LEFT_OUT


@pytest.mark.parametrize("name", sorted(api.IN_PLACE_METHOD_FUNCTIONS))
def test_in_place_function_is_its_method(name):
    # ``torch.relu_(x)`` writes x as ``x.relu_()`` does
    method = name[len("torch."):]
    assert callable(getattr(torch, method)) and api.is_in_place_method(method) and _writes_self(method)
    assert callable(getattr(torch.Tensor, method))


@pytest.mark.parametrize("name", sorted(api.IN_PLACE_FLAG_FUNCTIONS))
def test_in_place_function_is_its_inplace_form(name):
    # ``F.elu_(x)`` writes x, as ``F.elu(x, inplace=True)`` does; a leaf that requires grad is refused
    fn, twin = resolve(name), api.IN_PLACE_FLAG_FUNCTIONS[name]
    assert twin in api.IN_PLACE_FUNCTIONS
    args = (0.2, True) if "dropout" in name else (0.1, 0.0) if "threshold" in name else ()
    t = torch.randn(8)
    version = t._version
    fn(t, *args)
    assert t._version > version
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        fn(torch.randn(8, requires_grad=True), *args)


# ----------------------------------------------------------------------------- COPIES, RESULT_FIELDS

@pytest.mark.parametrize("name", sorted(api.COPIES))
def test_copy_gives_a_module_parameters_of_its_own(name):
    m = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 1))
    n = resolve(name)(m)
    assert type(n) is type(m) and [type(c) for c in n] == [type(c) for c in m]
    ours, theirs = {id(p) for p in m.parameters()}, {id(p) for p in n.parameters()}
    assert len(theirs) == len(ours) and not ours & theirs
    assert all(p.is_leaf and p.requires_grad for p in n.parameters())


@pytest.mark.parametrize("name", sorted(api.SHALLOW_COPIES))
def test_shallow_copy_shares_parameters(name):  # why copy.copy is not in COPIES
    shallow = resolve(name)
    m = nn.Linear(2, 2)
    assert shallow(m).weight is m.weight

    class Batch:
        def __init__(self, obs):
            self.obs = obs
    batch = Batch(torch.randn(2))
    copied = shallow(batch)
    assert copied is not batch and copied.obs is batch.obs
    items = [torch.randn(2)]
    assert shallow(items) is not items and shallow(items)[0] is items[0]
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="deepcopy protocol"):
        copy.deepcopy(x * 2)


RESULT_FIELD_OPS = {  # calls returning (values, indices) named tuples
    "torch.max(x, 1)": lambda x: torch.max(x, 1), "x.max(1)": lambda x: x.max(1),
    "x.min(1)": lambda x: x.min(1), "torch.sort": lambda x: torch.sort(x), "x.sort()": lambda x: x.sort(),
    "torch.topk": lambda x: torch.topk(x, 2), "x.median(1)": lambda x: x.median(1),
    "x.kthvalue(2)": lambda x: x.kthvalue(2), "x.mode()": lambda x: x.mode(),
    "x.cummax(1)": lambda x: x.cummax(1), "x.cummin(1)": lambda x: x.cummin(1),
}


@pytest.mark.parametrize("op", list(RESULT_FIELD_OPS))
def test_result_fields(op):
    result = RESULT_FIELD_OPS[op](torch.randn(3, 4, requires_grad=True) * 1)
    for field, carries in api.RESULT_FIELDS.items():
        assert getattr(result, field).requires_grad is carries, field
    assert result[0] is result.values or torch.equal(result[0], result.values)


# ----------------------------------------------------------------------------- recipe hygiene

@pytest.mark.parametrize("recipes,table", [
    (FUNCTION_RECIPES, api.FUNCTIONS), (METHOD_RECIPES, api.TENSOR_METHODS),
    (ATTRIBUTE_RECIPES, api.TENSOR_ATTRIBUTE_VIEWS), (OPERATOR_RECIPES, api.OPERATORS),
    (SUBSCRIPT_RECIPES, api.SUBSCRIPT_SAVES), (MODULE_RECIPES, api.MODULES),
    (FACTORY_RECIPES, api.FACTORIES), (COPY_RECIPES, api.COPY_CONSTRUCTORS),
    (SEVER_RECIPES, api.SEVER_METHODS), (SEVER_ATTRIBUTE_RECIPES, api.SEVER_ATTRIBUTES),
    (PARAMETER_METHOD_RECIPES, api.MODULE_PARAMETER_METHODS), (SELF_METHOD_ARGS, api.MODULE_SELF_METHODS),
], ids=["functions", "methods", "attributes", "operators", "subscripts", "modules", "factories",
        "copies", "sever_methods", "sever_attributes", "parameter_methods", "self_methods"])
def test_no_stale_recipes(recipes, table):
    assert set(recipes) <= set(table), f"recipes for names not in the table: {set(recipes) - set(table)}"


def test_table_shapes():
    assert all(isinstance(v, bool) for v in api.FUNCTIONS.values())
    assert all(isinstance(v, bool) for v in api.TENSOR_METHODS.values())
    assert all(isinstance(v, bool) for v in api.TENSOR_ATTRIBUTE_VIEWS.values())
    assert all(isinstance(v, bool) for v in api.OPERATORS.values())
    assert set(api.SUBSCRIPT_SAVES) == {"basic", "advanced"}
    for spec in api.MODULES.values():
        assert set(spec) <= {"params", "saves", "returns", "keeps_state"} and isinstance(spec["saves"], bool)
    assert not (api.MODULE_HOLDERS & api.MODULE_CONTAINERS)
    assert not (set(api.TENSOR_METHODS) & api.SEVER_METHODS), "a method cannot both keep and sever"
    assert not (set(api.FUNCTIONS) & (api.FACTORIES | api.COPY_CONSTRUCTORS))
    assert not (api.FACTORIES & api.COPY_CONSTRUCTORS)
    for spec in api.BACKWARD_CALLS.values():
        assert {"tensors", "retain_pos", "create_pos", "inputs_pos", "gradient", "parameters"} <= set(spec) <= {
            "tensors", "retain_pos", "inputs_pos", "create_pos", "returns", "gradient", "tensors_kw", "parameters"}
        assert spec.get("returns", "grads") == "grads"
    assert all(isinstance(v, bool) for v in api.RESULT_FIELDS.values())


@pytest.mark.parametrize("name", sorted(api.DETACHES))
def test_detaches_keep_the_values(name):
    x = torch.randn(3, requires_grad=True) * 2
    out = getattr(x, name)()
    assert name in api.SEVER_METHODS
    assert torch.equal(out, x) and not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("name", sorted(api.ACCUMULATING_OPERATORS))
def test_accumulating_operators_keep_both_graphs(name):
    total, term = torch.ones(2, requires_grad=True), torch.ones(2, requires_grad=True)
    PYTHON_OPERATOR[name](total * 2, term * 3).sum().backward()
    assert total.grad is not None and term.grad is not None


@pytest.mark.parametrize("name", sorted(api.GRAD_RESET_METHODS))
def test_grad_reset_methods(name):
    model = nn.Linear(2, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for owner in (model, opt):
        model(torch.randn(3, 2)).sum().backward()
        getattr(owner, name)()
        assert all(p.grad is None or not p.grad.any() for p in model.parameters())


@pytest.mark.parametrize("name", sorted(api.GRAD_TENSOR_RESETS))
def test_grad_tensor_resets(name):
    w = torch.ones(3, requires_grad=True)
    (w * 2).sum().backward()
    getattr(w.grad, name)()
    (w * 2).sum().backward()
    assert torch.equal(w.grad, torch.full((3,), 2.0))  # only the new gradient


def test_is_tensor_says_whether_its_argument_is_a_tensor():
    fn = resolve(api.IS_TENSOR)
    assert fn(torch.zeros(2)) and fn(torch.nn.Parameter(torch.zeros(2)))
    assert not any(fn(v) for v in (1.0, 3, [torch.zeros(1)], (torch.zeros(1),)))


@pytest.mark.parametrize("name", sorted(api.MODULE_ADDERS))
@pytest.mark.parametrize("container", sorted(api.MODULE_CONTAINERS | api.MODULE_HOLDERS))
def test_module_adders_add_at_the_end(container, name):
    """Each adder puts the module(s) its argument at the table's position holds after the
    ones there, and the container is the same object (every holder of it sees them)."""
    first = torch.nn.Linear(2, 2)
    holder = resolve(container)(*([first] if container in api.MODULE_CONTAINERS else [[first]]))
    pos, several = api.MODULE_ADDERS[name]
    added = [torch.nn.ReLU(), torch.nn.Tanh()] if several else torch.nn.ReLU()
    args = ["extra"] * pos + [added]
    same = holder
    getattr(holder, name)(*args)
    assert holder is same
    children = list(holder.children())
    assert children[1:] == (added if several else [added])


@pytest.mark.parametrize("name", sorted(api.MODULE_MODE_METHODS))
def test_mode_methods_set_training_on_every_submodule(name):
    inner = torch.nn.Module()
    outer = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(inner))
    getattr(outer, "eval" if name == "train" else "train")()
    getattr(outer, name)()
    assert all(getattr(m, api.TRAINING_ATTRIBUTE) == (name == "train") for m in outer.modules())
    assert name in api.MODULE_SELF_METHODS and getattr(outer, name)() is outer


@pytest.mark.parametrize("name", sorted(api.RECEIVER_ONLY_METHODS & {"view", "reshape", "expand", "permute",
                                                                     "transpose", "narrow", "unflatten"}))
def test_receiver_only_methods_take_their_graph_from_the_receiver(name):
    """The result is the receiver's data, viewed or copied: its graph leads to the receiver
    alone, whatever sizes are given (the table is the generated ``view_of`` column's input 0)."""
    x = torch.randn(2, 3, 4, requires_grad=True)
    args = {"view": (2, 3, 4), "reshape": (6, 4), "expand": (2, 3, 4), "permute": (2, 1, 0),
            "transpose": (0, 1), "narrow": (1, 0, 2), "unflatten": (2, (2, 2))}[name]
    out = getattr(x, name)(*args)
    assert [type(f).__name__ for f, _ in out.grad_fn.next_functions if f is not None] == ["AccumulateGrad"]
    generated = json.loads((Path(api.__file__).parent / "torchdata" / "api.json").read_text(encoding="utf-8"))
    assert all(generated["methods"][m]["view_of"] == 0 for m in api.RECEIVER_ONLY_METHODS)
    assert api.VIEW_METHODS <= api.RECEIVER_ONLY_METHODS


@pytest.mark.parametrize("name", sorted(api.CHECKPOINTS))
def test_checkpoint_calls_its_function_and_reentrant_needs_a_tensor_input_that_requires_grad(name):
    fn = resolve(name)
    params = inspect.signature(fn).parameters
    taken = {p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY}
    assert api.CHECKPOINT_REENTRANT in taken and taken <= api.CHECKPOINTS[name]
    seen = {}

    def block(x, scale=1.0):
        seen["scale"] = scale
        return lin(x) * scale

    lin = torch.nn.Linear(3, 3)
    x = torch.randn(2, 3)
    assert fn(block, x, scale=2.0, use_reentrant=False).requires_grad and seen["scale"] == 2.0
    assert not fn(block, x, use_reentrant=True).requires_grad
    assert not fn(block, x).requires_grad  # reentrant is the default
    assert fn(block, x.requires_grad_(), use_reentrant=True).requires_grad


# Every table in torch_api.py is checked by a test above; a new table needs one too.
VERIFIED_TABLES = {"PACKED_SEQUENCE_MAKERS", "PACKED_SEQUENCE_FIELDS", "PAD_PACKED_SEQUENCE", "LAYER_SUPERCLASSES", "MODULE_PARAMETER_NAMES", "AUTOGRAD_FUNCTION_BASES", "FUNCTION_APPLY", "SAVE_FOR_BACKWARD", "SAVED_TENSORS", "MODULE_WRAPPERS",
    "RANK_METHOD", "RANK_ATTRIBUTE", "NUMEL_METHODS", "PIECES", "RESHAPES", "DENSE_VIEWS", "DENSE_RESULTS",
    "CHECKPOINTS", "CHECKPOINT_REENTRANT", "RECEIVER_ONLY_METHODS", "IS_TENSOR", "MODULE_ADDERS", "MODULE_MODE_METHODS", "TRAINING_ATTRIBUTE", "IN_PLACE_ATTRIBUTE", "MODULE_LOAD_STATE", "SET_TO_NONE", 
    "TO_NUMPY_METHODS", "NUMPY_CONVERTERS", "GRAD_ATTRIBUTE", "RETAIN_GRAD",
    "FACTORIES", "COPY_CONSTRUCTORS", "PARAMETERS", "FUNCTIONS", "TENSOR_METHODS",
    "TENSOR_ATTRIBUTE_VIEWS", "OPERATORS", "SUBSCRIPT_SAVES", "SEVER_METHODS", "SEVER_ATTRIBUTES",
    "DETACH_IN_PLACE", "REQUIRES_GRAD_SETTER", "BACKWARD_CALLS", "GRAD_MODE", "MODULES",
    "MODULE_CONTAINERS", "MODULE_BASES", "MODULE_PARAMETER_METHODS", "MODULE_SELF_METHODS",
    "OPTIMIZER_PREFIXES", "OPTIMIZER_STEP_METHODS", "COPIES", "RESULT_FIELDS",
    "OPTIMIZER_REPEATS_CLOSURE", "MODULE_HOLDERS", "PYTHON_VALUE_METHODS", "MODULE_PARAMETER_ATTRIBUTES",
    "DATA_CONVERTERS", "SAMPLE_METHODS", "TENSOR_CLASSES", "MODULE_NAMED_METHODS", "MODULE_FORWARD_HOOKS",
    "DETACHES", "GRAD_RESET_METHODS", "GRAD_TENSOR_RESETS", "DETACHED_ATTRIBUTES", "NOT_OPTIMIZER_PREFIXES",
    "TENSOR_HOOK_METHODS", "MODULE_REGISTERS", "DATA_LOADERS", "DATA_LOADER_KEYWORDS", "DATA_LOADER_ORDER_KEYWORDS",
    "DATA_LOADER_WORKER_KEYWORDS", "TENSOR_DATASETS", "NEVER_A_TENSOR_TYPE", "PARAMETER_CONTAINERS",
    "RETAIN_GRAPH", "CREATE_GRAPH", "INPUTS", "REQUIRES_GRAD", "TORCH", "MODULE_FORWARD", "GRAD_MODE_KEYWORD",
    # tests/test_shapes.py
    "SHAPE_FUNCTIONS", "SHAPE_METHODS", "SHAPE_ATTRIBUTES", "SHAPE_OPERATORS", "FACTORY_SHAPES", "SHAPE_ATTRIBUTE",
    "LOSS_SHAPES", "MODULE_SHAPES", "RNN_SHAPES",
    # tests/test_torch_dtypes.py
    "DTYPES", "DTYPE_KEYWORD", "CAST_METHODS", "DTYPE_STRING_METHODS", "INTEGRAL_METHODS", "INTEGRAL_FUNCTIONS",
    "DATA_TYPED", "BOOL_METHODS", "INDEX_METHODS", "INDEX_FUNCTIONS",
    # tests/test_saved.py
    "KEEPS_FUNCTIONS", "KEEPS_METHODS", "KEEPS_OPERATORS", "KEEPS_MODULES", "IN_PLACE_MODULES",
    "KEPT_ARGUMENTS_FUNCTIONS", "KEPT_ARGUMENTS_METHODS", "KEPT_ARGUMENTS_MODULES",
    "IN_PLACE_FUNCTIONS",
    "ACCUMULATING_OPERATORS",
    # tests/test_torch_table.py
    "VIEW_METHODS", "VIEW_FUNCTIONS", "VIEW_ATTRIBUTES", "VIEW_SUBSCRIPTS", "SPLIT_OUTPUTS",
    "BY_DIM_SPLIT_OUTPUTS", "SPLIT_OUTPUT_NAMES", "_MAY_COPY",
    # here, below
    "IN_PLACE_METHOD_FUNCTIONS", "IN_PLACE_FLAG_FUNCTIONS", "SHALLOW_COPIES", "RENORM_MODULES", "RENORM_FUNCTIONS",
    "DISTRIBUTION_SHARED_NODES", "DISTRIBUTION_ATTRIBUTES", "EAGER_QUERIES", "DEVICE", "SET_DEFAULT_DEVICE", "DEVICE_KEYWORD", "CPU", "MOVE_TO_CPU", "MOVE_TO", "DEVICE_METHODS", "CPU_DEVICE", "ONE_OUTPUT_PER_INPUT", "MODULE_MEMBERS", "GRAD_SCALERS", "GRAD_SCALER_SCALE", "GRAD_SCALER_STEP",
    "PRETRAINED_LAYERS", "PRETRAINED_FREEZE", "OPTIMIZER_BASES", "PARAM_GROUPS", "GROUP_PARAMS",
    "NUMBER_MODULES", "NUMBER_MODULES_EXCEPT", "MUTATION_CONTEXTS", "GRAD_READERS", "MULTI_OUTPUTS",
    "MODULE_WALKS", "MODULE_APPLY", "NUMBER_METHODS", "NUMBER_ATTRIBUTES", "NUMBER_BUILTINS", "OPAQUE_PACKAGES",
    "PLAIN_ATTRIBUTES", "LEAF_ATTRIBUTE", "LIKE_METHODS", "SIZE_METHOD", "RETURNS_ITS_MODULE", "IDENTITY_MODULES", "MODULE_DICT_ATTRIBUTE", "IN_PLACE_KEEPS_RESULT", "MODULE_DICT",
    "REGISTER_BUFFER", "MODULE_BUFFER_METHODS", "MODULE_NAMED_BUFFERS", "LAYERS_WITH_BUFFERS", "GRAD_MODE_QUERIES",
}


@pytest.mark.parametrize("name", sorted(api.OPAQUE_PACKAGES))
def test_opaque_package_is_torch_s(name):
    """Shipped with torch (so a project holding its source holds torch's own code)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec(name)
    assert spec is not None and Path(spec.origin).parent.parent == Path(torch.__file__).parent.parent


def _nested():
    inner = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    return torch.nn.Sequential(inner, torch.nn.Linear(2, 1)), inner


@pytest.mark.parametrize("name", sorted(api.MODULE_WALKS))
def test_module_walk(name):
    """(itself first, all the way down, named) as torch walks a model's submodules."""
    itself, deep, named = api.MODULE_WALKS[name]
    model, inner = _nested()
    got = list(getattr(model, name)())
    mods = [m for _, m in got] if named else got
    assert named == all(isinstance(x, tuple) and isinstance(x[0], str) for x in got)
    assert (mods[0] is model) == itself
    assert (inner[0] in mods) == deep and inner in mods


def test_module_apply():
    model, inner = _nested()
    seen = []
    assert getattr(model, api.MODULE_APPLY)(seen.append) is model
    assert sorted(map(id, seen)) == sorted(map(id, model.modules()))
    assert seen[-1] is model  # children first, the module last


@pytest.mark.parametrize("name", sorted(api.NUMBER_METHODS))
def test_number_method(name):
    x = torch.randn(1, 1, requires_grad=True) * 2
    out = getattr(x, name)()
    assert not isinstance(out, torch.Tensor) and name in api.PYTHON_VALUE_METHODS


@pytest.mark.parametrize("name", sorted(api.NUMBER_ATTRIBUTES))
def test_number_attribute(name):
    out = getattr(torch.randn(2, 3, requires_grad=True) * 2, name)
    assert not isinstance(out, torch.Tensor) and name in api.SEVER_ATTRIBUTES


def test_module_dict_attribute_holds_submodules_by_name():
    net = torch.nn.Module()
    net.add_module("gcl_0", torch.nn.Linear(2, 2))
    assert getattr(net, api.MODULE_DICT_ATTRIBUTE)["gcl_0"] is net.gcl_0


@pytest.mark.parametrize("name", sorted(api.IDENTITY_MODULES))
def test_identity_module_returns_its_input(name):
    x = torch.randn(3, requires_grad=True) * 2
    assert resolve(name)()(x) is x


@pytest.mark.parametrize("name", sorted(api.RETURNS_ITS_MODULE))
def test_returns_its_module(name):
    import warnings

    conv = torch.nn.Conv1d(4, 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the old weight_norm is deprecated)
        assert resolve(name)(conv) is conv
        # its forward saves the parameters the weight is made of, even of an input without grad:
        # a step between two backwards over one output spoils that node
        opt = torch.optim.SGD(conv.parameters(), lr=0.1)
        loss = conv(torch.randn(2, 4, 5)).abs().mean()
        loss.backward(retain_graph=True)
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


def test_size_method_gives_the_dim_s_size():
    x = torch.randn(4, 1, 6, requires_grad=True) * 2
    assert [getattr(x, api.SIZE_METHOD)(d) for d in (0, -1)] == [4, 6] and api.SIZE_METHOD in api.SEVER_METHODS


def test_leaf_attribute_tells_leaves_from_op_results():
    """True of a leaf that requires grad and of any tensor that does not (a detached one, one
    made under no_grad); False of an op's result on a tensor that requires grad."""
    w = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        made = w * 2
    read = lambda t: getattr(t, api.LEAF_ATTRIBUTE)
    assert read(w) and read(torch.randn(3)) and read((w * 2).detach()) and read(made)
    assert read(w * 2) is False


@pytest.mark.parametrize("name", sorted(api.PLAIN_ATTRIBUTES))
def test_plain_attribute(name):
    out = getattr(torch.randn(2, 3, requires_grad=True) * 2, name)
    assert not isinstance(out, torch.Tensor) and name in api.SEVER_ATTRIBUTES


@pytest.mark.parametrize("name", sorted(api.NUMBER_BUILTINS))
def test_number_builtin(name):
    import builtins

    x = torch.randn(1, requires_grad=True) * 2
    assert isinstance(getattr(builtins, name)(float(x) if name == "round" else x), (int, float))


@pytest.mark.parametrize("name", sorted(api.PYTHON_VALUE_METHODS))
def test_python_value_method(name):
    assert name in api.SEVER_METHODS
    x = torch.randn(1, requires_grad=True) * 2
    result = getattr(x.detach() if name == "numpy" else x, name)()
    assert not isinstance(result, torch.Tensor)


@pytest.mark.parametrize("name", sorted(api.MODULE_PARAMETER_ATTRIBUTES))
def test_module_parameter_attribute(name):
    for layer in (torch.nn.Linear(2, 3), torch.nn.Conv2d(1, 2, 3)):
        value = getattr(layer, name)
        assert isinstance(value, torch.nn.Parameter) and value.is_leaf and value.requires_grad


@pytest.mark.parametrize("name", sorted(api.OPTIMIZER_BASES))
def test_optimizer_base_makes_param_groups_of_the_parameters(name):
    """A subclass of the listed base gets, from ``super().__init__(params, defaults)``, its
    ``param_groups``: dicts whose "params" list holds the very parameters given (an in-place
    write to one of them is a write to the parameter); torch's own optimizers have them too."""
    base = resolve(name)
    assert base is torch.optim.Optimizer

    class Perturb(base):
        def __init__(self, params):
            super().__init__(params, dict(rho=0.1))

    net = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 2))
    for opt in (Perturb(net.parameters()), torch.optim.SGD(net.parameters(), lr=0.1)):
        groups = getattr(opt, api.PARAM_GROUPS)
        assert isinstance(groups, list) and all(isinstance(g, dict) for g in groups)
        held = [p for g in groups for p in g[api.GROUP_PARAMS]]
        assert len(held) == 4 and all(a is b for a, b in zip(held, net.parameters()))


@pytest.mark.parametrize("name", sorted(api.GRAD_SCALERS))
def test_grad_scaler_scale_keeps_the_loss_and_step_is_the_optimizers(name):
    """A disabled scaler's ``scale`` returns the loss itself; an enabled one multiplies it by a
    scale that requires no grad, so the loss's own nodes are what a backward walks. ``step``
    steps the optimizer."""
    import warnings
    cls = resolve(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scaler = cls(enabled=False) if "cpu" in name or "cuda" in name else cls("cpu", enabled=False)
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    opt = torch.optim.SGD([w], lr=0.5)
    loss.backward()
    before = w.detach().clone()
    getattr(scaler, api.GRAD_SCALER_STEP)(opt)
    assert not torch.equal(before, w.detach())
    assert hasattr(scaler, api.GRAD_SCALER_SCALE)


@pytest.mark.parametrize("name", sorted(api.PRETRAINED_LAYERS))
def test_pretrained_layer_is_frozen_unless_told(name):
    """``from_pretrained(w)`` makes the listed layer, its weight frozen by default and trained
    with ``freeze=False`` (the keyword, or the argument after the weight)."""
    make = resolve(name)
    w = torch.randn(4, 3)
    frozen, trained, positional = make(w), make(w, **{api.PRETRAINED_FREEZE: False}), make(w, False)
    assert type(frozen) is resolve(api.PRETRAINED_LAYERS[name])
    assert not frozen.weight.requires_grad and trained.weight.requires_grad and positional.weight.requires_grad


def test_module_members_are_what_every_module_has():
    """``hasattr(m, name)`` is True of each listed name for a bare ``nn.Module`` and of a
    subclass's instance built by ``super().__init__()``; a name not listed is not there."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()

    bare, net = nn.Module(), Net()
    assert api.MODULE_MEMBERS == set(dir(bare))
    assert all(hasattr(bare, n) and hasattr(net, n) for n in api.MODULE_MEMBERS)
    assert {"training", "forward", "parameters", "_modules", "__call__"} <= api.MODULE_MEMBERS
    assert not hasattr(net, "neck") and "neck" not in api.MODULE_MEMBERS


def test_device_names_as_torch_has_them():
    """A tensor on the CPU moved to it is the tensor itself (a leaf stays one); ``torch.device``
    is a context manager that sets where factories put their tensors, as ``set_default_device``
    does for good; factories take the device by that keyword."""
    w = torch.randn(3, requires_grad=True)
    assert getattr(w, api.MOVE_TO_CPU)() is w
    assert getattr(w, api.MOVE_TO)(api.CPU) is w
    assert getattr(w, api.MOVE_TO)(f"{api.CPU}:0") is not w  # another name of it: a copy
    assert getattr(w, api.MOVE_TO)(**{api.DEVICE_KEYWORD: api.CPU}) is w
    assert getattr(w, api.MOVE_TO)(api.CPU, torch.float64) is not w  # a cast copies
    with resolve(api.DEVICE)("meta"):
        assert torch.zeros(2).device.type == "meta"
    assert torch.zeros(2, **{api.DEVICE_KEYWORD: api.CPU}).device.type == api.CPU
    assert str(api.CPU_DEVICE) == str(torch.device(api.CPU))  # ``torch.device("cpu")``'s stand-in
    assert getattr(w, api.MOVE_TO)(torch.device(api.CPU)) is w
    # the methods that may move a tensor elsewhere are tensor methods taking a target
    assert api.DEVICE_METHODS >= {api.MOVE_TO, api.MOVE_TO_CPU, "cuda"}
    for name in api.DEVICE_METHODS:
        doc = (getattr(torch.Tensor, name).__doc__ or "").lower()
        assert "device" in doc or "cpu" in doc or "type" in doc, name
    previous = torch.get_default_device()
    try:
        resolve(api.SET_DEFAULT_DEVICE)("meta")
        assert torch.zeros(2).device.type == "meta"
    finally:
        torch.set_default_device(previous)


@pytest.mark.parametrize("name", sorted(api.EAGER_QUERIES))
def test_eager_queries_are_false_when_run_eagerly(name):
    """Each query of scripting, tracing, exporting or compiling answers False in an eager run,
    in a module's forward called eagerly too."""
    query = resolve(name)
    assert query() is False

    class Probe(torch.nn.Module):
        def forward(self, x):
            return x * 2 if query() else x + 1

    assert torch.equal(Probe()(torch.ones(1)), torch.full((1,), 2.0))


@pytest.mark.parametrize("name", sorted(api.DISTRIBUTION_ATTRIBUTES))
def test_distribution_attribute_is_the_parameter_itself(name):
    """Each listed attribute of a distribution built with broadcast-free leaves (by keyword) is
    the listed parameter itself (``Normal(loc, scale).mean is loc``), or that attribute of the
    wrapped distribution (``Independent(Normal(loc, scale), 1).mean is base.mean``); and the
    position of the parameter is its place in the signature."""
    from gradguard.torchdata.generate import _parameter_value

    cls = resolve(name)
    signature = list(inspect.signature(cls).parameters)
    for attr, entries in api.DISTRIBUTION_ATTRIBUTES[name].items():
        for param, pos, inner in entries:
            assert signature[pos] == param
            if inner is not None:
                base = torch.distributions.Normal(torch.randn(3).requires_grad_(), (torch.rand(3) + 0.5).requires_grad_())
                dist = cls(base, 1)
                assert getattr(dist, attr) is getattr(base, inner)
                continue
            given = {p: _parameter_value(cls.arg_constraints[p], True) for p in signature
                     if p == param or inspect.signature(cls).parameters[p].default is inspect.Parameter.empty
                     and p in cls.arg_constraints}
            # (one of ``probs``/``logits`` must be given besides a count)
            for extra in [None] + [p for p in cls.arg_constraints if p in signature and p not in given]:
                more = {extra: _parameter_value(cls.arg_constraints[extra], False)} if extra else {}
                try:
                    dist = cls(**given, **more)
                except ValueError:
                    continue
                assert getattr(dist, attr) is given[param]
                break
            else:
                raise AssertionError(f"{name} cannot be built with {param}")


def test_distribution_attributes_cover_the_common_ones():
    """The table knows what RL code reads most: a Normal's mean and stddev, through Independent."""
    normal = api.DISTRIBUTION_ATTRIBUTES["torch.distributions.Normal"]
    assert [e[0] for e in normal["mean"]] == ["loc"] and [e[0] for e in normal["stddev"]] == ["scale"]
    assert api.DISTRIBUTION_ATTRIBUTES["torch.distributions.independent.Independent"]["mean"][0][2] == "mean"
    assert "mean" not in api.DISTRIBUTION_ATTRIBUTES.get("torch.distributions.Categorical", {})


@pytest.mark.parametrize("name", sorted(api.DISTRIBUTION_SHARED_NODES))
def test_distribution_built_from_a_parameter_shares_one_node(name):
    """Built from each listed parameter (a leaf that requires grad; by keyword and at its
    position), two ``log_prob`` backwards raise "backward a second time": the node made when it
    was built is shared and freed by the first. Built from a parameter not listed, they do not."""
    from gradguard.torchdata.generate import _parameter_value

    cls = resolve(name)
    shared = api.DISTRIBUTION_SHARED_NODES[name]
    signature = inspect.signature(cls).parameters
    for param in cls.arg_constraints:
        if param not in signature:
            continue
        required = {p: _parameter_value(cls.arg_constraints[p], False) for p, spec in signature.items()
                    if spec.default is inspect.Parameter.empty and p in cls.arg_constraints and p != param}
        value = _parameter_value(cls.arg_constraints[param], True)
        if value is None or None in required.values():
            continue
        try:
            dist = cls(**required, **{param: value})
        except (ValueError, TypeError):
            assert param not in shared
            continue
        sample = dist.sample()
        first, second = dist.log_prob(sample).sum(), dist.log_prob(sample).sum()
        first.backward()
        if param in shared:
            assert list(signature)[shared[param]] == param
            with pytest.raises(RuntimeError, match="second time"):
                second.backward()
        elif second.requires_grad:
            second.backward()


def test_renorm_tables_hold_every_max_norm_of_torch():
    """Every ``nn`` layer and ``torch.nn.functional`` function with a ``max_norm`` parameter is
    in the tables (none left out unseen)."""
    layers = {f"torch.nn.{n}" for n, c in vars(torch.nn).items() if isinstance(c, type)
              and issubclass(c, torch.nn.Module) and "max_norm" in inspect.signature(c).parameters}
    functions = {f"torch.nn.functional.{n}" for n, f in vars(torch.nn.functional).items() if callable(f) and n[0] != "_"
                 and not isinstance(f, type) and "max_norm" in _parameters(f)}
    assert layers == set(api.RENORM_MODULES) and functions == set(api.RENORM_FUNCTIONS)


def _parameters(f) -> list:
    try:
        return list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        return []


@pytest.mark.parametrize("name", sorted(api.RENORM_MODULES))
def test_renorm_module_writes_its_weight_only_with_max_norm(name):
    """A layer built with ``max_norm`` (by keyword or at its position) bumps its weight's
    version in forward, whatever the rows' norms; without it, it does not."""
    cls = resolve(name)
    keyword, pos = api.RENORM_MODULES[name]
    assert list(inspect.signature(cls).parameters)[pos] == keyword
    positional = [10, 3] + [None] * (pos - 2) + [1e6]
    for layer, moves in ((cls(10, 3, **{keyword: 1e6}), True), (cls(*positional), True), (cls(10, 3), False)):
        before = layer.weight._version
        ids = torch.tensor([[1, 2], [4, 5]])
        layer(ids)
        assert (layer.weight._version > before) == moves


@pytest.mark.parametrize("name", sorted(api.RENORM_FUNCTIONS))
def test_renorm_function_writes_its_weight_only_with_max_norm(name):
    fn = resolve(name)
    norm_pos, weight_pos = api.RENORM_FUNCTIONS[name]
    names = list(inspect.signature(fn).parameters)
    assert names[norm_pos] == "max_norm" and names[weight_pos] == "weight"
    for max_norm, moves in ((1e6, True), (None, False)):
        weight = torch.randn(10, 3, requires_grad=True)
        before = weight._version
        fn(torch.tensor([[1, 2], [4, 5]]), weight, max_norm=max_norm)
        assert (weight._version > before) == moves


@pytest.mark.parametrize("name", sorted(api.IN_PLACE_MODULES))
def test_in_place_attribute_switches_a_built_layer(name):
    """``m.inplace = True`` after a layer was built makes it write its input in place (its
    version moves), as the constructor flag does; ``False`` makes it leave the input alone."""
    for flag in (True, False):
        layer = resolve(name)()
        setattr(layer, api.IN_PLACE_ATTRIBUTE, flag)
        layer.train()
        x = torch.rand(4, 6, 3) - 0.5
        before = x._version
        layer(x)
        assert (x._version > before) == flag


@pytest.mark.parametrize("name", sorted(api.IN_PLACE_FUNCTIONS))
def test_in_place_function_writes_its_first_argument(name):
    """``F.relu(x, inplace=True)`` writes into x (its version moves, the result is x's data), and
    only then: not with ``inplace=False``, nor (where it has them) ``training=False`` or ``p=0``;
    the table's positions are the signature's, its training default torch's."""
    import inspect

    from gradguard.torchdata import generate

    fn = resolve(name)
    inplace, training, training_default, p = api.IN_PLACE_FUNCTIONS[name]
    params = list(inspect.signature(fn).parameters.values())
    names = [q.name for q in params]
    assert names[inplace] == "inplace"
    assert training is None or (names[training] == "training" and params[training].default == training_default)
    assert p is None or names[p] == "p"

    def writes(**flags) -> bool:  # on the generator's recipe (inputs of the rank it wants)
        return generate.writes_first(name, generate.with_arguments(fn, names, flags))

    on = {"inplace": True, **({"training": True} if training is not None else {}), **({"p": 0.3} if p is not None else {})}
    assert writes(**on)
    assert not writes(**{**on, "inplace": False})
    if training is not None:
        assert not writes(**{**on, "training": False})
    if p is not None:
        assert not writes(**{**on, "p": 0.0})


def test_shape_attribute_is_the_tuple_of_sizes():
    """``x.shape`` is ``x.size()``: a tuple of the sizes, which slices and spreads as one
    (``x.view(*x.shape[:2], -1)``)."""
    x = torch.rand(2, 3, 4, requires_grad=True)
    shape = getattr(x, api.SHAPE_ATTRIBUTE)
    assert isinstance(shape, tuple) and shape == getattr(x, api.SIZE_METHOD)() == (2, 3, 4)
    assert x.view(*shape[:2], -1).shape == (2, 3, 4)


def test_module_load_state_writes_parameters_in_place():
    """``load_state_dict`` copies into the module's parameters: their versions move, so a graph
    that saved them raises at its backward."""
    model, other = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    before = model.weight._version
    getattr(model, api.MODULE_LOAD_STATE)(other.state_dict())
    assert model.weight._version > before and torch.equal(model.weight, other.weight)


def test_zero_grad_set_to_none_and_the_steps_it_skips():
    """``zero_grad()`` leaves ``.grad`` None (set_to_none defaults to True) and a step skips such
    parameters (no version change); with ``set_to_none=False`` the zero gradients are stepped."""
    for flag, stepped in ((None, False), (True, False), (False, True)):
        p = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.Adam([p], lr=0.1)
        (p * 2).sum().backward()
        opt.zero_grad() if flag is None else opt.zero_grad(**{api.SET_TO_NONE: flag})
        assert (p.grad is None) == (not stepped)
        before = p._version
        opt.step()
        assert (p._version > before) == stepped


def test_rank_and_element_count():
    x = torch.randn(2, 3, 4)
    assert getattr(x, api.RANK_METHOD)() == getattr(x, api.RANK_ATTRIBUTE) == 3
    assert all(getattr(x, name)() == 24 for name in api.NUMEL_METHODS)


@pytest.mark.parametrize("name", sorted(api.PIECES))
@pytest.mark.parametrize("shape, size, dim", [((8, 3), 2, 0), ((7, 3), 3, 0), ((4, 6), 4, 1), ((5, 2), [2, 3], 0),
                                              ((3,), 5, 0)])
def test_pieces_as_torch_cuts(name, shape, size, dim):
    """``shapes.pieces`` gives the number and shape of the pieces torch returns."""
    kind, pos, key = api.PIECES[name]
    if kind == "chunk" and not isinstance(size, int) or kind == "unbind" and size != 2:
        pytest.skip("not a cut this op takes")
    x = torch.randn(*shape)
    fn = resolve(name) if name.startswith("torch.") else getattr(x, name)
    args = ([x] if name.startswith("torch.") else []) + ([size] if pos is not None else [])
    out = fn(*args, dim=dim)
    count, piece = shapes.pieces(kind, shape, size if pos is not None else None, dim)
    assert count == len(out)
    assert all(len(piece) == t.dim() and all(d is None or d == s for d, s in zip(piece, t.shape)) for t in out)
    if pos is not None:  # the size argument by its keyword too
        assert len(fn(*args[:-1], **{key: size}, dim=dim)) == len(out)


@pytest.mark.parametrize("name", sorted(api.RESHAPES))
def test_reshapes_view_a_contiguous_tensor_and_copy_a_transposed_one(name):
    def run(x):
        fn = resolve(name) if name.startswith("torch.") else getattr(x, name)
        args = [x] if name.startswith("torch.") else []
        if name.endswith("reshape"):
            args.append((-1,))
        return fn(*args)
    base = torch.randn(3, 4)
    assert run(base)._base is base
    transposed = torch.randn(4, 3).t()
    assert run(transposed).data_ptr() != transposed.data_ptr()


@pytest.mark.parametrize("name", sorted(api.DENSE_VIEWS))
def test_dense_views_keep_a_contiguous_tensor_contiguous(name):
    x = torch.randn(2, 1, 6)
    method = name.rsplit(".", 1)[-1]
    args = {"view": [(2, 6)], "view_as": [torch.empty(2, 6)], "unsqueeze": [0], "squeeze": [1],
            "unflatten": [2, (2, 3)]}.get(method, [])
    out = resolve(name)(x, *args) if name.startswith("torch.") else getattr(x, method)(*args)
    assert out.is_contiguous() and out.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("name", sorted(api.DENSE_RESULTS))
def test_dense_results_are_contiguous(name):
    assert getattr(torch.randn(3, 4).t(), name)().is_contiguous()


@pytest.mark.parametrize("name", ["torch.nn.Linear", "torch.nn.Conv2d", "torch.nn.BatchNorm1d", "torch.nn.LayerNorm",
                                  "torch.nn.Embedding", "torch.nn.MultiheadAttention", "torch.nn.TransformerEncoderLayer"])
def test_parameter_names_are_what_named_parameters_gives(name):
    build = {"torch.nn.Linear": lambda M: M(3, 4), "torch.nn.Conv2d": lambda M: M(3, 4, 3),
             "torch.nn.BatchNorm1d": lambda M: M(4), "torch.nn.LayerNorm": lambda M: M(4),
             "torch.nn.Embedding": lambda M: M(10, 4), "torch.nn.MultiheadAttention": lambda M: M(4, 2),
             "torch.nn.TransformerEncoderLayer": lambda M: M(4, 2, 8)}[name]
    assert api.MODULE_PARAMETER_NAMES[name] == tuple(n for n, _ in build(resolve(name)).named_parameters())


@pytest.mark.parametrize("config", [{}, {"num_layers": 2}, {"bidirectional": True}, {"num_layers": 2, "bidirectional": True}])
@pytest.mark.parametrize("name", ["torch.nn.RNN", "torch.nn.GRU", "torch.nn.LSTM"])
def test_parameter_names_of_a_recurrent_layer_cover_its_configurations(name, config):
    # a name test decided over the table must have seen every name the configuration gives
    names = {n for n, _ in resolve(name)(3, 4, **config).named_parameters()}
    assert names <= set(api.MODULE_PARAMETER_NAMES[name])


def test_layer_superclasses_are_torch_subclassing():
    names = sorted(api.MODULES)
    for name in names:
        bases = {other for other in names if other != name and issubclass(resolve(name), resolve(other))}
        assert api.LAYER_SUPERCLASSES.get(name, frozenset()) == bases, name


def test_every_table_is_verified():
    tables = {name for name in vars(api) if name.isupper()}
    assert tables - VERIFIED_TABLES == set(), "tables in torch_api.py without a test here"
    assert VERIFIED_TABLES - tables == set(), "tests for tables no longer in torch_api.py"


@pytest.mark.parametrize("name", sorted(api.GRAD_MODE_QUERIES))
def test_grad_mode_query_reads_the_mode_it_names(name):
    query, mode = resolve(name), api.GRAD_MODE_QUERIES[name]
    expected = {"grad": (True, False, False), "inference": (False, False, True)}[mode]
    outside = query()
    with torch.no_grad():
        in_no_grad = query()
    with torch.inference_mode():
        in_inference = query()
    assert (outside, in_no_grad, in_inference) == expected


@pytest.mark.parametrize("name", sorted(api.DATA_CONVERTERS))
@pytest.mark.parametrize("data", [[1.0, 2.0], "numpy", 3.0], ids=["list", "numpy", "number"])
def test_data_converter_of_non_tensor_data_is_a_leaf_without_grad(name, data):
    import numpy as np

    value = np.array([1.0, 2.0], dtype=np.float32) if data == "numpy" else data
    if name in ("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor",
                "torch.BFloat16Tensor") and isinstance(value, float):
        value = [value]  # the legacy constructors read a bare number as a size
    out = resolve(name)(value)
    assert out.is_leaf and not out.requires_grad and out.grad_fn is None
    assert name in api.FUNCTIONS, "given a tensor it keeps the graph: its FUNCTIONS entry says how"


@pytest.mark.parametrize("name", sorted(api.SAMPLE_METHODS))
def test_distribution_sample_draws_without_grad(name):
    mu = torch.zeros(3, requires_grad=True)
    for dist in (torch.distributions.Normal(mu, 1.0), torch.distributions.Bernoulli(logits=mu),
                 torch.distributions.Categorical(logits=mu)):
        drawn = getattr(dist, name)() if name == "sample" else getattr(dist, name)(2)
        assert drawn.grad_fn is None and not drawn.requires_grad
    assert not hasattr(torch.Tensor, name), "a tensor method of that name would be severed too"
    assert torch.distributions.Normal(mu, 1.0).rsample().requires_grad  # the one that keeps grad


@pytest.mark.parametrize("name", sorted(api.TENSOR_CLASSES))
def test_tensor_classes(name):
    cls = resolve(name)
    assert isinstance(torch.randn(2), cls) and isinstance(torch.nn.Parameter(torch.randn(2)), cls)
    assert isinstance((torch.randn(2) * 2), cls) and not isinstance((torch.randn(2),), cls)


@pytest.mark.parametrize("name", sorted(api.MODULE_FORWARD_HOOKS))
def test_forward_hook_sees_the_output_with_its_graph(name):
    layer = nn.Linear(3, 2)
    seen = []
    getattr(layer, name)(lambda module, inputs, output: seen.append((module, inputs, output)))
    x = torch.randn(4, 3)
    out = layer(x)
    (module, inputs, output), = seen
    assert module is layer and inputs[0] is x and output is out and output.grad_fn is not None


@pytest.mark.parametrize("name", sorted(api.MODULE_REGISTERS))
def test_module_register_keeps_the_tensor_as_an_attribute(name):
    module = nn.Module()
    value = (nn.Parameter(torch.randn(2)) if name == "register_parameter" else nn.Linear(2, 2)
             if name in ("add_module", "register_module") else torch.zeros(2))
    getattr(module, name)("stat", value)
    assert module.stat is value


@pytest.mark.parametrize("name", sorted(api.MODULE_BUFFER_METHODS))
def test_module_buffers_are_what_registered_names_hold_now(name):
    """What the analysis models: each module's registered buffers in order, its own by name, a
    submodule's after; a tensor assigned to a registered name replaces the buffer; None is skipped."""
    outer, inner = nn.Module(), nn.Module()
    outer.register_buffer("a", torch.zeros(1))
    outer.register_buffer("gone", None)
    outer.inner = inner
    inner.register_buffer("b", torch.zeros(2))
    outer.a = torch.ones(1) * 3  # a buffer rebound
    got = list(getattr(outer, name)())
    values = [v for _, v in got] if name == api.MODULE_NAMED_BUFFERS else got
    assert [v is x for v, x in zip(values, (outer.a, inner.b))] == [True, True] and len(values) == 2
    assert (name == api.MODULE_NAMED_BUFFERS) == all(isinstance(x, tuple) for x in got)
    assert api.REGISTER_BUFFER in api.MODULE_REGISTERS


@pytest.mark.parametrize("name", sorted(api.MODULES))
def test_layers_with_buffers(name):
    module = resolve(name)
    try:
        built = module(*{"torch.nn.BatchNorm1d": (3,), "torch.nn.BatchNorm2d": (3,),
                         "torch.nn.BatchNorm3d": (3,)}.get(name, ()))
    except TypeError:
        pytest.skip("built with arguments the generator knows (api.json says)")
    assert (name in api.LAYERS_WITH_BUFFERS) == any(True for _ in built.buffers())


NUMPY_MESSAGE = "Can't call numpy() on Tensor that requires grad"


@pytest.mark.parametrize("name", sorted(api.TO_NUMPY_METHODS))
def test_to_numpy_method(name):
    with pytest.raises(RuntimeError, match=re.escape(NUMPY_MESSAGE)):
        getattr(torch.randn(3, requires_grad=True) * 2, name)()
    getattr((torch.randn(3, requires_grad=True) * 2).detach(), name)()


NUMPY_ARGUMENTS = {"numpy.expand_dims": (0,), "numpy.tile": (2,), "numpy.percentile": (50,), "numpy.quantile": (0.5,),
                   "numpy.maximum": (0.0,), "numpy.minimum": (0.0,), "numpy.digitize": ([0.5],),
                   "numpy.full_like": (1.0,), "numpy.isclose": (0.0,), "numpy.allclose": (0.0,),
                   "numpy.array_split": (2,)}  # what they need besides the array


@pytest.mark.parametrize("name", sorted(api.NUMPY_CONVERTERS))
def test_numpy_converter(name):
    """A NumPy function raises on a list of tensors that require grad (it converts them), on
    one such tensor if the table says so, and works on detached ones."""
    import numpy as np

    fn = getattr(np, name.removeprefix("numpy."))
    more = NUMPY_ARGUMENTS.get(name, ())
    w = torch.randn(3, requires_grad=True)
    for bad in ((w * 2, [w * 2, w * 3]) if api.NUMPY_CONVERTERS[name] else ([w * 2, w * 3],)):
        with pytest.raises(RuntimeError, match=re.escape(NUMPY_MESSAGE)):
            fn(bad, *more)
    fn([(w * 2).detach(), (w * 3).detach()], *more)



def test_grad_of_a_non_leaf_is_none_unless_retained():
    w = torch.ones(2, requires_grad=True)
    h = w * 2
    (h * h).sum().backward(retain_graph=True)
    with pytest.warns(UserWarning, match="not a leaf Tensor is being accessed"):
        assert getattr(h, api.GRAD_ATTRIBUTE) is None
    assert getattr(w, api.GRAD_ATTRIBUTE) is not None
    getattr(h, api.RETAIN_GRAD)()
    (h * h).sum().backward()
    assert getattr(h, api.GRAD_ATTRIBUTE) is not None


@pytest.mark.parametrize("name", sorted(api.DATA_LOADERS))
def test_data_loader_stacks_items_with_their_graphs(name):
    loader_class = resolve(name)
    signature = inspect.signature(loader_class.__init__)
    positional = [p for p in signature.parameters if p != "self"][:len(api.DATA_LOADER_KEYWORDS)]
    assert tuple(positional) == api.DATA_LOADER_KEYWORDS
    assert api.DATA_LOADER_ORDER_KEYWORDS <= set(signature.parameters)
    w = torch.ones(3, requires_grad=True)
    x = torch.randn(4, 3) * w
    items = [(x[i], 1.0) for i in range(4)]
    xb, yb = next(iter(loader_class(items, batch_size=2)))
    assert type(xb.grad_fn).__name__ == "StackBackward0" and not yb.requires_grad
    xb, yb = next(iter(loader_class(items, batch_size=None)))
    assert xb is items[0][0]


@pytest.mark.parametrize("name", sorted(api.PARAMETER_CONTAINERS))
def test_parameter_container_is_registered(name):
    """``api.PARAMETER_CONTAINERS``: a list (dict) of the parameters it is given, which the module
    holding it yields from ``parameters()``."""
    kind = api.PARAMETER_CONTAINERS[name]
    params = [torch.nn.Parameter(torch.randn(2)) for _ in range(2)]
    holder = torch.nn.Module()
    holder.ws = resolve(name)(params if kind == "list" else {"a": params[0], "b": params[1]})
    held = list(holder.ws) if kind == "list" else list(holder.ws.values())
    assert all(h is p for h, p in zip(held, params)) and len(held) == 2
    assert {id(p) for p in holder.parameters()} == {id(p) for p in params}


@pytest.mark.parametrize("name", sorted(api.NEVER_A_TENSOR_TYPE))
def test_never_a_tensor_type(name):
    cls = resolve(name)
    w = torch.ones(2, requires_grad=True)
    made = (w, w * 2, cls(w), cls(torch.ones(2)), torch.nn.Parameter(torch.ones(2)), w.detach(), w.data)
    assert all(type(t) is not cls for t in made) and all(isinstance(t, cls) for t in made)


@pytest.mark.parametrize("name", sorted(api.DATA_LOADERS))
def test_data_loader_workers_send_items_without_graph_only(name):
    """``api.DATA_LOADER_WORKER_KEYWORDS``: the loader takes them all; from worker processes a
    batch of items without graph is what the main process would stack, and an item that carries
    a graph is refused."""
    loader_class = resolve(name)
    assert api.DATA_LOADER_WORKER_KEYWORDS <= set(inspect.signature(loader_class.__init__).parameters)
    x = torch.randn(4, 3)
    items = [(x[i], 1.0) for i in range(4)]
    xb, yb = next(iter(loader_class(items, batch_size=2, num_workers=2, pin_memory=False, persistent_workers=False)))
    assert torch.equal(xb, x[:2]) and yb.shape == (2,) and not xb.requires_grad
    w = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError):
        next(iter(loader_class([(x[i] * w,) for i in range(4)], batch_size=2, num_workers=1)))


@pytest.mark.parametrize("name", sorted(api.TENSOR_DATASETS))
def test_tensor_dataset_items_are_rows(name):
    w = torch.ones(3, requires_grad=True)
    x, y = torch.randn(4, 3) * w, torch.arange(4)
    row, label = resolve(name)(x, y)[1]
    assert torch.equal(row, x[1]) and row.grad_fn is not None and label == 1


@pytest.mark.parametrize("name", sorted(n + "_" for n, k in api.KEEPS_METHODS.items() if k == "result"
                                        and hasattr(torch.Tensor, n + "_")))
def test_in_place_forms_that_save_what_they_wrote(name):
    """``api.IN_PLACE_KEEPS_RESULT``: ``x.exp_()`` saves its result as ``x.exp()`` does, so a write
    in place after it spoils the backward; the in-place forms not listed save something else."""
    x = torch.rand(2, 2, dtype=torch.float64, requires_grad=True) + 1.5  # (sqrt: positive)
    out = getattr(x * 1.0, name)(*((2.0,) if name == "float_power_" else ()))
    out.mul_(2.0)
    if name in api.IN_PLACE_KEEPS_RESULT:
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.sum().backward()
    else:
        out.sum().backward()


def test_number_modules_return_numbers_of_tensors_too():
    """Every function of the number modules gives a Python number for a one-element tensor that
    requires grad (or raises on it); those left out give a tensor."""
    import math
    assert api.NUMBER_MODULES == {"math"}
    x = torch.tensor(0.5, requires_grad=True)
    for name, fn in vars(math).items():
        if name.startswith("_") or not callable(fn) or f"math.{name}" in api.NUMBER_MODULES_EXCEPT:
            continue
        arity = {"ldexp": (x, 2), "gcd": (), "lcm": (), "hypot": (x, x), "dist": ([x], [x]), "fsum": ([x, x],),
                 "comb": (3, 2), "perm": (3, 2), "isqrt": (4,), "factorial": (3,)}.get(name)
        for args in ([arity] if arity is not None else [(x,), (x, x)]):
            try:
                out = fn(*args)
            except (TypeError, ValueError):
                continue
            assert not isinstance(out, torch.Tensor), name
    for name in api.NUMBER_MODULES_EXCEPT:
        assert isinstance(getattr(math, name.rsplit(".", 1)[1])([x, x]), torch.Tensor)


@pytest.mark.parametrize("name", sorted(api.MUTATION_CONTEXTS))
def test_mutation_contexts_keep_what_was_saved(name):
    """Within the context, writing a saved tensor in place spoils no backward; outside, it does."""
    def step(inside: bool):
        w = torch.randn(3, requires_grad=True)
        with (resolve(name)() if inside else contextlib.nullcontext()):
            g = torch.sigmoid(w)  # saves its result
            g.mul_(2)
            g.sum().backward()
        return w.grad
    assert step(True) is not None
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        step(False)


@pytest.mark.parametrize("name", sorted(api.GRAD_READERS))
def test_grad_readers_read_the_grad_of_what_they_are_given(name):
    """Given a non-leaf at the position (and keyword) named, the function reads its ``.grad``:
    torch warns that a non-leaf's ``.grad`` is accessed."""
    import warnings
    fn, (pos, key) = resolve(name), api.GRAD_READERS[name]
    assert list(inspect.signature(fn).parameters)[pos] == key
    w = torch.randn(3, requires_grad=True)
    loss = (w * 2).sum()
    loss.backward(retain_graph=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(loss, 1.0)
    assert any("not a leaf Tensor is being accessed" in str(c.message) for c in caught), name


@pytest.mark.parametrize("name", sorted(api.ONE_OUTPUT_PER_INPUT))
def test_one_output_per_input(name):
    """As many outputs as tensors given (so no fixed count), each a view of its own input."""
    fn = resolve(name)
    for count in (2, 3):
        given = [torch.randn(3, requires_grad=True) for _ in range(count)]
        out = fn(*given) if name != "torch.meshgrid" else fn(*given, indexing="ij")
        assert isinstance(out, (tuple, list)) and len(out) == count
        assert all(o is g or o._base is g for o, g in zip(out, given))


@pytest.mark.parametrize("name", sorted(api.MULTI_OUTPUTS))
def test_multi_outputs_return_that_many_outputs_of_one_node(name):
    """The op returns a tuple of exactly that many tensors, each requiring grad, made by one node
    (the same grad_fn), whatever the (valid) arguments."""
    fn = resolve(name) if name.startswith("torch.") else getattr(torch.Tensor, name)
    for size in (3, 4):
        a = torch.randn(size, size, dtype=torch.double, requires_grad=True)
        out = fn(a @ a.T + torch.eye(size, dtype=torch.double))
        assert isinstance(out, tuple) and len(out) == api.MULTI_OUTPUTS[name], name
        assert all(t.requires_grad for t in out) and len({t.grad_fn.name() for t in out}) == 1, name


@pytest.mark.parametrize("name", sorted(api.PACKED_SEQUENCE_MAKERS))
def test_packed_sequences_are_named_tuples_of_their_rows(name):
    """A PackedSequence is a named tuple (data, batch_sizes, sorted_indices, unsorted_indices):
    its data are the rows given, with their graph; a recurrent layer given one returns one, and
    ``pad_packed_sequence`` returns the padded rows with their graph and the lengths."""
    x = torch.randn(3, 2, 4, requires_grad=True)
    where = api.PACKED_SEQUENCE_MAKERS[name]
    fn = resolve(name)
    if where == "items":
        packed = fn([x[:, 0], x[:2, 1]])
    elif name.endswith("PackedSequence"):
        packed = fn(x.reshape(6, 4), torch.tensor([2, 2, 2]))
    else:
        packed = fn(x, torch.tensor([3, 2]))
    assert type(packed) is nn.utils.rnn.PackedSequence and packed._fields == api.PACKED_SEQUENCE_FIELDS
    assert packed.data.grad_fn is not None and packed[0] is packed.data
    out, _ = nn.RNN(4, 4)(packed)
    assert type(out) is nn.utils.rnn.PackedSequence and out.data.grad_fn is not None
    padded, lengths = resolve(api.PAD_PACKED_SEQUENCE)(out)
    assert padded.grad_fn is not None and not lengths.is_floating_point()
