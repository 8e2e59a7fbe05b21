"""The shape tables of torch_api (GG105), checked against torch: every entry is run on concrete
tensors, and what gradguard.shapes predicts from the arguments must agree with the shape torch
gives: a known dimension must be the size torch gives, NONSCALAR must not be one element. The
same prediction is also made from partial knowledge (sizes forgotten, ranks forgotten) and must
still agree: what the analysis does not know must never turn into a wrong claim."""
from __future__ import annotations

import itertools

import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from gradguard import shapes
from gradguard import torch_api as api
from gradguard.torchdata import generate
from gradguard.shapes import NONSCALAR, OPAQUE, Of


def a():
    return torch.rand(3, 4) + 0.5


def row():
    return torch.rand(4) + 0.5


def one():
    return torch.rand(1, 1) + 0.5


def scalar():
    return torch.rand(()) + 0.5


def probs():
    return torch.rand(3, 4) * 0.8 + 0.1


def resolve(name: str):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _agrees(predicted, actual: tuple) -> bool:
    if predicted is None:
        return True
    if predicted == NONSCALAR:
        return torch.Size(actual).numel() != 1
    return len(predicted) == len(actual) and all(p is None or p == d for p, d in zip(predicted, actual))


def _abstract(value, how: str):
    """A concrete argument as the engine would see it, knowing everything (``exact``), the
    ranks only (``ranks``), or for each tensor only whether it is one element and of each number
    nothing (``numel``)."""
    if isinstance(value, torch.Tensor):
        shape = tuple(value.shape)
        if how == "ranks":
            shape = tuple(None for _ in shape)
        elif how == "numel":
            shape = NONSCALAR if value.numel() != 1 else None
        return Of(shape)
    if isinstance(value, (list, tuple)):
        return type(value)(_abstract(v, how) for v in value)
    if isinstance(value, torch.dtype):
        return OPAQUE
    if how == "numel" and type(value) in (int, float):
        return shapes.NUMBER  # a number whose value is not known
    return value


HOW = ("exact", "ranks", "numel")


def _check(predict, args, kwargs, actual):
    exact = None
    for how in HOW:
        got = predict([_abstract(v, how) for v in args], {k: _abstract(v, how) for k, v in kwargs.items()})
        assert _agrees(got, actual), (how, got, actual)
        if how == "exact":
            exact = got
    return exact


def _shape(out) -> tuple:
    return tuple(out.shape)


def _run(fn, args, kwargs):
    """torch's result, or None when torch refuses these arguments (no claim to check then)."""
    try:
        return fn(*args, **kwargs)
    except (TypeError, RuntimeError, IndexError, ValueError):
        return None


# name -> calls (args, kwargs); an entry's recipes must make at least one exact prediction
SAME = [((a(),), {}), ((one(),), {}), ((scalar(),), {})]
SOFTMAX = [((a(),), {"dim": 1}), ((a(), 0), {})]
FUNCTION_CALLS = {
    **{n: SAME for n, kind in api.SHAPE_FUNCTIONS.items() if kind == "same"},
    "torch.softmax": SOFTMAX, "torch.log_softmax": SOFTMAX,
    "torch.nn.functional.softmax": SOFTMAX, "torch.nn.functional.log_softmax": SOFTMAX,
    "torch.nn.functional.glu": [((a(),), {})],
    "torch.nn.functional.instance_norm": [((torch.rand(2, 3, 5),), {}), ((torch.rand(1, 1, 5, 5),), {})],
    "torch.nn.functional.layer_norm": [((a(), (4,)), {}), ((torch.rand(1, 1, 5), [5]), {})],
    "torch.nn.functional.batch_norm": [((a(), torch.zeros(4), torch.ones(4)), {}), ((torch.rand(2, 1, 3), torch.zeros(1), torch.ones(1)), {})],
    "torch.nn.functional.group_norm": [((a(), 2), {}), ((torch.rand(2, 4, 3), 1), {})],
    **{n: [((a(), row()), {}), ((a(), 2.0), {}), ((scalar(), a()), {}), ((one(), row()), {})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind == "broadcast"},
    "torch.clamp": [((a(),), {"min": 0.0}), ((a(), row()), {}), ((one(),), {"max": row()})],
    "torch.clip": [((a(),), {"min": 0.0}), ((a(), row()), {})],
    **{n: [((a(),), {}), ((a(), 1), {}), ((a(),), {"dim": 0, "keepdim": True}), ((a(), (0, 1)), {}),
           ((a(), -1, True), {})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind in ("reduce", "spread")},
    "torch.std": [((a(),), {}), ((a(), 1), {}), ((a(), 1, True), {}), ((a(), 1, True, True), {}),
                  ((a(),), {"dim": 0, "keepdim": True})],
    "torch.logsumexp": [((a(), 1), {}), ((a(),), {"dim": 0, "keepdim": True})],
    "torch.max": [((a(),), {}), ((a(), row()), {})],
    "torch.min": [((a(),), {}), ((a(), row()), {})],
    "torch.norm": [((a(),), {}), ((a(), 2), {}), ((a(),), {"dim": 1}), ((a(), 2, 1), {})],
    "torch.flatten": [((a(),), {}), ((torch.rand(2, 3, 4), 1), {})],
    "torch.reshape": [((a(), (2, -1)), {}), ((a(), (12,)), {}), ((a(),), {"shape": (-1,)})],
    "torch.unsqueeze": [((a(), 0), {}), ((row(), -1), {}), ((scalar(), 0), {})],
    "torch.squeeze": [((torch.rand(3, 1),), {}), ((one(),), {}), ((torch.rand(3, 1), 1), {}), ((a(), 0), {})],
    "torch.transpose": [((a(), 0, 1), {}), ((torch.rand(2, 3, 4), 0, 2), {})],
    "torch.t": [((a(),), {}), ((row(),), {})],
    "torch.matmul": [((a(), torch.rand(4, 5)), {}), ((row(), row()), {}), ((torch.rand(2, 3, 4), row()), {})],
    "torch.mm": [((a(), torch.rand(4, 5)), {})],
    "torch.stack": [(([a(), a()],), {}), (([a(), a()],), {"dim": 1}), (([scalar()],), {}), (((row(), row(), row()), -1), {})],
    "torch.gather": [((a(), 1, torch.zeros(3, 1, dtype=torch.long)), {}),
                     ((a(), 0), {"index": torch.zeros(1, 1, dtype=torch.long)})],
    "torch.einsum": [(("bixy,ioxy->boxy", torch.rand(2, 3, 4, 4), torch.rand(3, 5, 4, 4)), {}),
                     (("ij,jk", a(), torch.rand(4, 1)), {}), (("i,i->", row(), row()), {}),
                     (("bi,bj->bij", one(), torch.rand(1, 3)), {}), (("ii->i", torch.rand(3, 3)), {}),
                     (("ij,jk->ik", [a(), torch.rand(4, 2)]), {})],
    "torch.where": [((a() > 1, a(), row()), {}), ((row() > 1, one(), 0.0), {})],
    **{n: [(([a(), a()],), {}), (([a(), a()], 1), {}), (((a(), torch.rand(2, 4)),), {"dim": 0}),
           (([row(), row()], -1), {})] for n in ("torch.cat", "torch.concat")},
    # the Fourier transforms: default sizes and dims, n / s given (-1: the input's), dims given
    **{n: [((torch.rand(2, 3, 6),), {}), ((torch.rand(2, 3, 6), 8), {}), ((torch.rand(4, 5),), {"dim": 0}),
           ((torch.rand(2, 3, 5),), {"n": 4, "dim": 1}), ((torch.rand(7),), {})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind.endswith("fft1")},
    **{n: [((torch.rand(2, 3, 6),), {}), ((torch.rand(2, 3, 6), (4, 8)), {}), ((torch.rand(2, 3, 6),), {"s": (-1, 5)}),
           ((torch.rand(4, 5, 3),), {"dim": (0, 1)})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind.endswith("fft2")},
    **{n: [((torch.rand(2, 3, 6),), {}), ((torch.rand(2, 3, 6), (4, 8)), {}), ((torch.rand(2, 3, 6),), {"dim": (0, 2)}),
           ((torch.rand(2, 3, 6),), {"s": (5,), "dim": (1,)})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind.endswith("fftn")},
    "torch.cdist": [((a(), torch.rand(5, 4)), {}), ((torch.rand(2, 3, 4), torch.rand(5, 4)), {}),
                    ((torch.rand(1, 3, 2), torch.rand(4, 1, 2)), {})],
    "torch.nn.functional.pad": [((torch.rand(2, 3, 4), (1, 2)), {}), ((torch.rand(2, 3, 4), (0, 1, 2, 0)), {}),
                                ((torch.rand(1, 1, 4), (1, 1)), {"mode": "reflect"}), ((torch.rand(3, 4),), {"pad": [2, -1]})],
    # pooling as its module does: batched and not, the stride given or its kernel's, ceil_mode
    **{n: [((torch.rand(2, 3, *(9,) * int(kind[-1])), 3), {}), ((torch.rand(3, *(8,) * int(kind[-1])), 2, 1, 1), {}),
           ((torch.rand(2, 3, *(7,) * int(kind[-1])), 3), {"stride": 2, "ceil_mode": True})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind.startswith("functional_pool")},
    **{n: [((torch.rand(2, 3, *(9,) * int(kind[-1])), 4), {}), ((torch.rand(3, *(8,) * int(kind[-1])), 1), {}),
           ((torch.rand(2, 3, *(9,) * int(kind[-1])),), {"output_size": 2})]
       for n, kind in api.SHAPE_FUNCTIONS.items() if kind.startswith("functional_adaptive")},
}


@pytest.mark.parametrize("name", sorted(api.SHAPE_FUNCTIONS))
def test_function_shape(name):
    fn, kind = resolve(name), api.SHAPE_FUNCTIONS[name]
    exact = [_check(lambda x, k: shapes.result(kind, x, k), args, kwargs, _shape(out))
             for args, kwargs in FUNCTION_CALLS[name] if (out := _run(fn, args, kwargs)) is not None]
    assert any(e is not None for e in exact), "no recipe exercises the entry"


METHOD_CALLS = {
    **{n: [((), {}), ((0,), {}) if n in ("softmax", "log_softmax") else ((), {})]
       for n, kind in api.SHAPE_METHODS.items() if kind == "same"},
    "softmax": [((1,), {})], "log_softmax": [((1,), {}), ((), {"dim": 0})],
    **{n: [((row(),), {}), ((2.0,), {})] for n, kind in api.SHAPE_METHODS.items() if kind == "broadcast"},
    "clamp": [((), {"min": 0.0}), ((row(),), {})], "clip": [((), {"max": 1.0})],
    **{n: [((), {}), ((1,), {}), ((), {"dim": 0, "keepdim": True}), (((0, 1),), {})]
       for n, kind in api.SHAPE_METHODS.items() if kind in ("reduce", "spread")},
    "var": [((), {}), ((1,), {}), ((1, False), {}), ((1, True, True), {}), ((), {"dim": 0, "keepdim": True})],
    "logsumexp": [((1,), {}), ((0, True), {})],
    "max": [((), {}), ((row(),), {})], "min": [((), {})],
    "norm": [((), {}), ((2,), {}), ((), {"dim": 1}), ((2, 0), {})],
    "view": [((12,), {}), ((2, -1), {}), (((6, 2),), {}), ((-1, 1), {})],
    "reshape": [((2, 6), {}), (((-1,),), {})],
    "flatten": [((), {}), ((0, 1), {})],
    "unsqueeze": [((0,), {}), ((-1,), {})],
    "squeeze": [((), {}), ((0,), {})],
    "transpose": [((0, 1), {}), ((1, 0), {})], "t": [((), {})],
    "matmul": [((torch.rand(4, 2),), {}), ((row(),), {})], "mm": [((torch.rand(4, 2),), {})],
    "to": [((torch.float64,), {}), ((), {"dtype": torch.float16})],
    "permute": [((1, 0), {}), (((1, 0),), {}), ((0,), {})],
    "where": [((row() > 1, row()), {}), ((row() > 1, 0.0), {})],
    "masked_fill": [((row() > 1, 0.0), {}), ((torch.rand(3, 1) > 1, 1.0), {})],
    "gather": [((1, torch.zeros(1, 1, dtype=torch.long)), {}), ((0,), {"index": torch.zeros(1, 1, dtype=torch.long)})],
}


# Methods the generator takes as another, which this build of torch cannot run (``cuda`` needs a GPU).
STAND_INS = {name: "to" for name, recipe in generate.METHODS.items() if recipe is None}


@pytest.mark.parametrize("name", sorted(api.SHAPE_METHODS))
def test_method_shape(name):
    kind = api.SHAPE_METHODS[name]
    name = STAND_INS.get(name, name)
    exact = []
    for receiver in (a(), one()):
        for args, kwargs in METHOD_CALLS[name]:
            out = _run(getattr(receiver, name), args, kwargs)
            if out is None:
                continue  # not an op torch runs on these (view sizes of the other receiver)
            exact.append(_check(lambda x, k: shapes.result(kind, x, k), (receiver,) + args, kwargs, _shape(out)))
    assert any(e is not None for e in exact), "no recipe exercises the entry"


@pytest.mark.parametrize("name", sorted(api.SHAPE_ATTRIBUTES))
def test_attribute_shape(name):
    for receiver in (a(), one(), torch.rand(2, 3, 4)):
        got = shapes.result(api.SHAPE_ATTRIBUTES[name], [Of(tuple(receiver.shape))], {})
        assert _agrees(got, _shape(getattr(receiver, name)))


OPERATOR_CALLS = {
    "Add": lambda x, y: x + y, "Sub": lambda x, y: x - y, "Mult": lambda x, y: x * y,
    "Div": lambda x, y: x / y, "Pow": lambda x, y: x ** y, "Mod": lambda x, y: x % y,
    "FloorDiv": lambda x, y: x // y, "MatMult": lambda x, y: x @ y,
    "USub": lambda x: -x, "UAdd": lambda x: +x,
}


@pytest.mark.parametrize("name", sorted(api.SHAPE_OPERATORS))
def test_operator_shape(name):
    op, kind = OPERATOR_CALLS[name], api.SHAPE_OPERATORS[name]
    if kind == "same":
        cases = [(x,) for x in (a(), one(), scalar())]
    elif kind == "matmul":
        cases = [(a(), torch.rand(4, 2)), (row(), row())]
    else:
        cases = [(a(), row()), (a(), 2.0), (3.0, a()), (one(), row()), (scalar(), scalar())]
    exact = [_check(lambda x, k: shapes.result(kind, x, k), case, {}, _shape(op(*case))) for case in cases]
    assert any(e is not None for e in exact)


FACTORY_CALLS = {
    **{n: [((3, 4), {}), (((3, 4),), {}), ((), {"size": (2,)}), ((5,), {}), ((), {"size": ()})]
       for n, kind in api.FACTORY_SHAPES.items() if kind == "sizes"},
    "torch.full": [(((2, 3), 1.0), {}), (((),), {"fill_value": 2.0})],
    "torch.randint": [((0, 5, (3,)), {}), ((5, (2, 2)), {}), ((0, 5), {"size": (4,)})],
    "torch.linspace": [((0, 1, 7), {}), ((0, 1), {"steps": 1})],
    "torch.logspace": [((0, 1, 5), {})],
    "torch.eye": [((3,), {}), ((2, 3), {})],
    "torch.randperm": [((5,), {}), ((0,), {}), ((), {"n": 3})],
    "torch.arange": [((5,), {}), ((1, 7, 2), {}), ((0.0, 1.0, 0.3), {}), ((2, 4), {}), ((), {"end": 3}),
                     ((), {"start": 1, "end": 6, "step": 2})],
    **{n: [((a(),), {}), ((scalar(),), {})] for n, kind in api.FACTORY_SHAPES.items()
       if kind == "like" and not n.endswith(("full_like", "randint_like"))},
    "torch.full_like": [((a(), 1.0), {})], "torch.randint_like": [((a(), 5), {})],
    "torch.tensor": [(([[1.0, 2.0], [3.0, 4.0]],), {}), ((3.0,), {}), (([0.2, 1.0, 3.0],), {}), (([],), {})],
    **{n: [(([[1.0, 2.0], [3.0, 4.0]],), {}), ((3.0,), {}), (([0.2, 1.0, 3.0],), {})]
       for n in ("torch.as_tensor", "torch.asarray")},
    **{n: [(([1, 3],), {}), (([[1, 3]],), {}), (((2, 5),), {}), ((2, 3), {}), ((4,), {})]
       for n, kind in api.FACTORY_SHAPES.items() if kind == "legacy"},
}


@pytest.mark.parametrize("name", sorted(api.FACTORY_SHAPES))
def test_factory_shape(name):
    fn, kind = resolve(name), api.FACTORY_SHAPES[name]
    exact = [_check(lambda x, k: shapes.factory(kind, x, k), args, kwargs, _shape(fn(*args, **kwargs)))
             for args, kwargs in FACTORY_CALLS[name]]
    assert any(e is not None for e in exact)


def _targets(name: str):
    if "binary" in name or "BCE" in name:
        return probs(), probs()
    if "cross_entropy" in name or "CrossEntropy" in name:
        return torch.rand(5, 3), torch.randint(0, 3, (5,))
    if "nll" in name or "NLL" in name:
        return torch.rand(5, 3).log_softmax(1), torch.randint(0, 3, (5,))
    if "kl_div" in name or "KLDiv" in name:
        return a().log_softmax(1), a().softmax(1)
    return a(), a()


@pytest.mark.parametrize("name", sorted(api.LOSS_SHAPES))
def test_loss_shape(name):
    kind, leading = api.LOSS_SHAPES[name]
    inputs = _targets(name)
    module = name.rsplit(".", 1)[-1][:1].isupper()
    legacy = ({"reduce": False}, {"size_average": False}, {"reduce": True, "size_average": True})
    has_legacy = "huber" not in name.lower()  # (HuberLoss came after the legacy flags)
    for options in ({}, {"reduction": "none"}, {"reduction": "sum"}, *(legacy if has_legacy else ())):
        if module:
            out = resolve(name)(**options)(*inputs)
            predict = lambda x, k, o=options: shapes.loss(kind, x, o, 0 - leading)  # noqa: E731
        else:
            out = resolve(name)(*inputs, **options)
            predict = lambda x, k, o=options: shapes.loss(kind, x, o, len(inputs) - leading)  # noqa: E731
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch deprecates the legacy flags)
            got = _check(predict, inputs, {}, _shape(out))
        assert got is not None, options
    # a positional argument past the leading ones may be the reduction: no claim then
    assert shapes.loss(kind, [Of((5, 3))], {}, 1) is None


MODULE_CALLS = {
    **{n: [((), a())] for n, kind in api.MODULE_SHAPES.items() if kind == "same"},
    "torch.nn.Softmax": [((1,), a())], "torch.nn.LogSoftmax": [((1,), a())],
    "torch.nn.LayerNorm": [((4,), a())], "torch.nn.BatchNorm1d": [((4,), a())],
    "torch.nn.BatchNorm2d": [((2,), torch.rand(2, 2, 3, 3))],
    "torch.nn.Softmin": [((1,), a())], "torch.nn.RMSNorm": [((4,), a())], "torch.nn.GroupNorm": [((2, 4), a())],
    "torch.nn.BatchNorm3d": [((2,), torch.rand(2, 2, 3, 3, 3))], "torch.nn.InstanceNorm1d": [((3,), torch.rand(2, 3, 5))],
    "torch.nn.InstanceNorm2d": [((3,), torch.rand(2, 3, 5, 5))],
    "torch.nn.TransformerEncoderLayer": [((4, 2, 8), a()), ((4, 2, 8), torch.rand(2, 3, 4)), ((4, 1, 8, 0.0), one().expand(1, 4))],
    "torch.nn.Linear": [((4, 6), a()), ((4, 1), torch.rand(1, 4)), ((4, 2), row())],
    "torch.nn.Flatten": [((), torch.rand(2, 3, 4)), ((0,), torch.rand(2, 3)), ((1, 2), torch.rand(2, 3, 4, 5))],
    "torch.nn.Unflatten": [((1, (2, 3)), torch.rand(4, 6)), ((-1, (1, 1)), torch.rand(5, 1)), ((0, [2, 2]), row())],
    # batched and unbatched; one output channel, one input: the batch keeps it several
    **{f"torch.nn.Conv{d}d": [((3, 5, 3), torch.rand(2, 3, *[6] * d)), ((3, 1, 3), torch.rand(3, *[6] * d)),
                              ((3, 1, 1), torch.rand(4, 3, *[1] * d))] for d in (1, 2, 3)},
    **{f"torch.nn.ConvTranspose{d}d": [((3, 5, 4, 2, 1), torch.rand(2, 3, *[4] * d)), ((3, 1, 3), torch.rand(3, *[5] * d)),
                                       ((3, 2, 3, 2, 1, 1), torch.rand(1, 3, *[3] * d)), ((3, 1, 1), torch.rand(1, 3, *[1] * d)),
                                       ((3, 2, 3, 1, 0, 0, 1, True, 2), torch.rand(2, 3, *[4] * d))]
       for d in (1, 2, 3)},
    **{f"torch.nn.{k}Pool{d}d": [((2,), torch.rand(2, 3, *[6] * d)), ((2,), torch.rand(3, *[6] * d)),
                                 ((1,), torch.rand(1, 1, *[1] * d)), ((3, 2, 1), torch.rand(2, 3, *[7] * d))]
       for k in ("Max", "Avg") for d in (1, 2, 3)},
    # (None keeps the input's size, from two dimensions on)
    **{f"torch.nn.Adaptive{k}Pool{d}d": [((1,), torch.rand(2, 3, *[6] * d)), ((2,), torch.rand(3, *[5] * d))]
       + ([(((None,) * d,), torch.rand(2, 3, *[4] * d))] if d > 1 else [])
       for k in ("Max", "Avg") for d in (1, 2, 3)},
    "torch.nn.Upsample": [((None, 2), torch.rand(2, 3, 4, 4)), ((None, 3), torch.rand(1, 2, 5))],
    # strides, paddings, dilations, per-dim tuples, "same"
    "torch.nn.Conv2d": [((3, 5, 3), torch.rand(2, 3, 6, 6)), ((3, 1, 3), torch.rand(3, 6, 6)),
                        ((3, 1, 1), torch.rand(4, 3, 1, 1)), ((3, 8, 3, 2, 1), torch.rand(4, 3, 8, 8)),
                        ((3, 4, (3, 1), (2, 1), (1, 0), 2), torch.rand(1, 3, 9, 5)),
                        ((3, 4, 5, 1, "same"), torch.rand(2, 3, 7, 7))],
}


@pytest.mark.parametrize("name", sorted(api.MODULE_SHAPES))
def test_module_shape(name):
    kind = api.MODULE_SHAPES[name]
    exact = []
    for ctor, x in MODULE_CALLS[name]:
        out = resolve(name)(*ctor)(x)
        exact.append(_check(lambda i, k, c=ctor: shapes.module(kind, c, {}, i), (x,), {}, _shape(out)))
    assert any(e is not None for e in exact)


@pytest.mark.parametrize("name", sorted(api.BACKWARD_CALLS))
def test_gradient_argument(name):
    """Without the gradient argument a vector output raises; with it, at the position or by
    the keyword the table gives, it does not; a single element needs none."""
    pos, keyword = api.BACKWARD_CALLS[name]["gradient"]

    def call(out, leaf, gradient, by_keyword):
        if name == "Tensor.backward":
            args = [gradient] if gradient is not None and not by_keyword else []
            return out.backward(*args, **({keyword: gradient} if by_keyword and gradient is not None else {}))
        fn = resolve(name)
        args = [out] + ([leaf] if name.endswith("grad") else [])
        if gradient is not None and not by_keyword:
            args += [None] * (pos - len(args)) + [gradient]
        return fn(*args, **({keyword: gradient} if by_keyword and gradient is not None else {}))

    for by_keyword, gradient in itertools.product((False, True), ("ones", None)):
        leaf = torch.rand(3, requires_grad=True)
        out = leaf * 2
        if gradient is None:
            with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
                call(out, leaf, None, by_keyword)
        else:
            call(out, leaf, torch.ones_like(out), by_keyword)
        single = torch.rand(1, requires_grad=True)
        call(single * 2, single, None, by_keyword)


BASIC_INDEXES = [(slice(None, 3),), (slice(1, -1),), (slice(None, None, 2),), (slice(-2, None),),
                 (slice(5, 9),), (0, slice(1, 3)), (Ellipsis, slice(None, 1)), (None, slice(2, None)), (slice(3, 1),),
                 (slice(None), 1)]


@pytest.mark.parametrize("items", BASIC_INDEXES, ids=repr)
def test_basic_index_shape(items):
    # a slice of known bounds has the size torch gives it; one of unknown bounds, no size
    x = torch.rand(4, 6)
    assert shapes.index((4, 6), list(items)) == _shape(x[items])
    unknown = [shapes.SOME_SLICE if type(i) is slice and i != slice(None) else i for i in items]
    got = shapes.index((4, 6), unknown)
    assert len(got) == x[items].dim() and all(g in (None, s) for g, s in zip(got, x[items].shape))


RNN_CALLS = [((3, 4), {}, (5, 2, 3)), ((3, 4, 2), {"batch_first": True}, (2, 5, 3)),
             ((3, 4), {"bidirectional": True, "num_layers": 3}, (5, 2, 3)), ((3, 4), {}, (5, 3)),
             ((3, 4, 1, True, True), {}, (2, 6, 3))]


@pytest.mark.parametrize("name", sorted(api.RNN_SHAPES))
@pytest.mark.parametrize("call", range(len(RNN_CALLS) + 1))
def test_rnn_shapes(name, call):
    # the output's and the state's shapes, as torch gives them (an LSTM's projection too)
    params = api.RNN_SHAPES[name]
    ctor, kwargs, size = RNN_CALLS[call] if call < len(RNN_CALLS) else ((3, 6), {"proj_size": 2}, (4, 2, 3))
    if "proj_size" in kwargs and "proj_size" not in params:
        pytest.skip("no projection")
    if name == "torch.nn.RNN" and len(ctor) > 3:
        ctor, kwargs = ctor[:3], {**kwargs, "bias": ctor[3], "batch_first": ctor[4]}  # (its 4th is nonlinearity)
    layer = resolve(name)(*ctor, **kwargs)
    out, state = layer(torch.rand(size))
    states = state if isinstance(state, tuple) else (state,)
    got = shapes.rnn(params, ctor, kwargs, [Of(size)])
    assert got[0] == _shape(out) and all(g == _shape(s) for g, s in zip(got[1:], states))
