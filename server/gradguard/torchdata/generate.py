"""Generates the torch facts GradGuard reads (``aten.json`` and ``api.json`` here) from torch itself.

    .venv/bin/python -m gradguard.torchdata.generate

* ``aten.json``, per ATen operator, from the files torchgen ships in the torch wheel:
  ``derivatives.yaml`` (which inputs and outputs each backward formula uses, that is saves, and
  for the gradient of which inputs, so under which condition; which outputs are differentiable)
  and ``native_functions.yaml`` (``Tensor(a!)``: writes its argument, in place or ``out=``;
  ``Tensor(a)``: returns a view of it).
* ``api.json``, per name of the Python API GradGuard follows (``torch.*``, ``Tensor`` methods,
  operators, attributes, indexing, ``nn`` layers), from *running* it on small tensors that require
  grad: its ``grad_fn`` and each new node's ``_saved_*`` tensors, whether a second backward raises
  (saved tensors are freed by the first), which of its operands and outputs written in place make
  the backward raise (what it keeps, and when), whether its result is a view of an input (a shared
  version counter), which outputs require grad, and what ``inplace=True`` layers write; and how
  each function's and method's result shape follows its arguments (``shape``).

This module imports torch; the analyser never imports it (it reads the JSON files).
"""
from __future__ import annotations

import inspect
import json
import operator
import sys
from pathlib import Path

import torch
import torch.nn as nn

HERE = Path(__file__).resolve().parent
IN_PLACE_ERROR = "modified by an inplace operation"
SECOND_TIME = "backward through the graph a second time"


# ----------------------------------------------------------------------------- ATen operators

def aten_facts() -> dict:
    """Per ATen operator (``mul.Tensor``): its backward node, the tensors it saves (name -> the
    inputs whose gradient needs it: saved when one of those requires grad), its outputs (name ->
    differentiable), the arguments it returns a view of, the arguments it writes, its kind
    (functional, inplace, out, ...) and its in-place variant."""
    import torchgen
    from torchgen.api import cpp
    from torchgen.api.autograd import is_differentiable, uses_single_grad
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    root = Path(torchgen.__file__).parent / "packaged"
    native, tags = root / "ATen/native/native_functions.yaml", root / "ATen/native/tags.yaml"
    functions = parse_native_yaml(str(native), str(tags)).native_functions
    infos, _ = load_derivatives(str(root / "autograd/derivatives.yaml"), str(native), str(tags))
    by_name = {str(f.func.name): f for f in functions}
    inplace_of = {}
    for f in functions:
        name = f.func.name.name
        if name.inplace:
            inplace_of[f"{name.base}.{f.func.name.overload_name}".rstrip(".")] = str(f.func.name)
    out = {}
    for schema, per_key in infos.items():
        info = per_key.get("Default") or next(iter(per_key.values()))
        name = str(schema.name)
        saved = {}
        for derivative in info.derivatives:
            for attr in (*derivative.saved_inputs, *derivative.saved_outputs):
                if "Tensor" in attr.nctype.type.cpp_type():  # not sizes, scalars, dtypes
                    saved.setdefault(attr.nctype.name, set()).update(derivative.var_names)
        returns = list(zip(cpp.return_names(by_name[name]), schema.returns))
        if info.output_differentiability is not None:
            differentiable = list(info.output_differentiability)
        else:  # as torchgen decides (gen_differentiable_outputs)
            differentiable = [is_differentiable(n, r.type, info) for n, r in returns]
            if uses_single_grad(info) and True in differentiable:
                first = differentiable.index(True)
                differentiable = [i == first for i in range(len(returns))]
        out[name] = {"node": info.op, "saved": {k: sorted(v) for k, v in sorted(saved.items())},
                     "outputs": {n: d for (n, _), d in zip(returns, differentiable)}}
    for name, f in by_name.items():
        writes = [a.name for a in f.func.arguments.flat_all if a.annotation is not None and a.annotation.is_write]
        views = [a.name for a in f.func.arguments.flat_all if a.annotation is not None and not a.annotation.is_write]
        if name not in out and not writes and not f.is_view_op:
            continue
        entry = out.setdefault(name, {"node": None, "saved": {}, "outputs": {}})
        entry["kind"] = f.func.kind().name
        entry["view_of"] = views if f.is_view_op else []
        entry["writes"] = writes
        if name in inplace_of:
            entry["inplace"] = inplace_of[name]
    return dict(sorted(out.items()))


# ----------------------------------------------------------------------------- running the API

class Inputs:
    """Makes the operands of a recipe: fresh tensors that require grad (``grads[i]`` says for
    operand ``i``), non-leaves made by ``clone()`` (which saves nothing) so they can be written in
    place. ``made`` holds them in order."""

    def __init__(self, grads=None, strided=False):
        self.grads = grads
        self.strided = strided  # laid out transposed: not contiguous (2-D and up)
        self.made = []

    def _wrap(self, t):
        i = len(self.made)
        if self.strided and t.dim() > 1:
            dims = tuple(range(t.dim() - 1, -1, -1))
            t = t.permute(*dims).contiguous().permute(*dims)
        if self.grads is None or (self.grads[i] if i < len(self.grads) else True):
            t = t.requires_grad_().clone()
        self.made.append(t)
        return t

    def __call__(self, *shape):
        return self._wrap(torch.randn(*shape))

    def pos(self, *shape):  # in [0.5, 1.5): log, sqrt, division
        return self._wrap(torch.rand(*shape) + 0.5)

    def prob(self, *shape):  # in [0.1, 0.9): binary cross entropy
        return self._wrap(torch.rand(*shape) * 0.8 + 0.1)

    def cplx(self, *shape):
        return self._wrap(torch.randn(*shape, dtype=torch.cfloat))


def c(*shape):
    """A constant: does not require grad."""
    return torch.randn(*shape)


def idx(*values):
    return torch.tensor(values)


def tensors(out) -> list:
    """The tensors of a result, nested tuples flattened, in order."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for x in out for t in tensors(x)]
    return []


def _loss(out):
    t = tensors(out)[0]
    return (t.real if t.is_complex() else t).sum()


def _backward(out) -> str:
    """'ok', 'in_place' (a written saved tensor), 'second_time', 'no_derivative' or 'no_graph'."""
    if not tensors(out)[0].requires_grad:
        return "no_graph"
    try:
        _loss(out).backward()
    except RuntimeError as e:
        for text, kind in ((IN_PLACE_ERROR, "in_place"), (SECOND_TIME, "second_time"),
                           ("is not implemented", "no_derivative")):
            if text in str(e):
                return kind
        raise
    return "ok"


def _new_nodes(out, operands) -> list:
    """The backward nodes the call made: from its outputs down to its operands' nodes."""
    stop = {t.grad_fn for t in operands if t.grad_fn is not None}
    seen, todo, nodes = set(), [t.grad_fn for t in tensors(out) if t.grad_fn is not None], []
    while todo:
        node = todo.pop()
        if node in seen or node in stop or type(node).__name__ == "AccumulateGrad":
            continue
        seen.add(node)
        nodes.append(node)
        todo.extend(n for n, _ in node.next_functions if n is not None)
    return nodes


def _saved_tensors(node) -> list:
    names = []
    for attr in dir(node):
        if attr.startswith("_saved_"):
            value = getattr(node, attr)
            if isinstance(value, torch.Tensor) or (isinstance(value, (tuple, list)) and any(
                    isinstance(v, torch.Tensor) for v in value)):
                names.append(attr[len("_saved_"):])
    return names


def _keeps_index_input(cls, build, forward) -> bool:
    """A module given integer indices (no operand that requires grad) whose backward raises when
    they are written in place after the call: it saved them."""
    torch.manual_seed(0)
    inputs = forward(Inputs())
    if not inputs or not isinstance(inputs[0], torch.Tensor) or inputs[0].is_floating_point():
        return False
    out = build(cls)(*inputs)
    if not tensors(out) or not tensors(out)[0].requires_grad:
        return False
    _write(inputs[0])
    return _backward(out) == "in_place"


def _write(t) -> None:
    with torch.no_grad():  # as an optimizer step writes: the version counts all the same
        t.add_(0)


def _view_of(outs, operands):
    """The position of the operand the first output is a view of (shares the version counter
    of: a write through either bumps both), or None."""
    for i, operand in enumerate(operands):
        if outs and outs[0] is not operand and _shares_version(outs[0], operand):
            return i
    return None


def _shares_version(out, operand) -> bool:
    before = out._version
    _write(operand)
    return out._version != before


KINDS = ("result", "self", "self_result", "each_other", "both")


def _predicted(kind: str, grads: tuple) -> tuple:
    """Which writes GradGuard expects to make the backward raise for an op of this kind (as
    ``autograd._kept`` reads it) whose tensor operands require grad as ``grads`` says: (its output,
    each operand)."""
    n = len(grads)
    if kind == "result":
        return (True,) + (False,) * n
    if kind == "self":
        return (False, True) + (False,) * (n - 1)
    if kind == "self_result":  # its input and its output (a norm, amax, prod, logsumexp)
        return (True, True) + (False,) * (n - 1)
    if n < 2:  # each_other, both: nothing with a single tensor
        return (False,) * (n + 1)
    if kind == "both":  # both operands, whatever requires grad (a convolution's input and weight)
        return (False, True, True) + (False,) * (n - 2)
    return (False, grads[1], grads[0]) + (False,) * (n - 2)


def _write_pattern(run, n: int) -> dict:
    """For each way its operands may require grad, which of (its output, each operand) written
    in place make its backward raise. ``run(grads)`` makes fresh operands: (operands, output, layer)."""
    def raises(grads, target):
        operands, out, _ = run(grads)
        victim = tensors(out)[0] if target is None else operands[target]
        try:
            _write(victim)
            return _backward(out) == "in_place"
        except RuntimeError:  # an expanded tensor cannot be written; a split's views refuse it
            return False

    combos = [(True,) * n] if n < 2 else [(True, True), (True, False), (False, True)]
    return {grads: tuple(raises(grads, t) for t in (None, *range(n))) for grads in combos}


def _layer_keeps(run) -> str | None:
    """A layer with a weight: its operands are its input and its weight (``each_other``, or
    ``both`` when it saves them whatever requires grad, as a convolution does)."""
    def raises(grad, target):
        operands, out, layer = run((grad,))
        _write(tensors(out)[0] if target == "out" else layer.weight if target == "weight" else operands[0])
        return _backward(out) == "in_place"

    pattern = {g: tuple(raises(g, t) for t in ("out", "input", "weight")) for g in (True, False)}
    if pattern == {True: (False, True, True), False: (False, True, False)}:
        return "each_other"
    return "both" if pattern == {True: (False, True, True), False: (False, True, True)} else None


def _keeps(patterns: list) -> str | None:
    """The kind (``autograd._kept``) that predicts exactly which writes raise in the canonical
    form (which must keep something), and in every other form nothing that does not raise (it may
    miss some: ``2 ** x`` keeps x and its result, ``self`` says x)."""
    canonical, others = patterns[0], patterns[1:]
    if not any(any(got) for got in canonical.values()):
        return None
    for kind in KINDS:
        if all(_predicted(kind, grads) == got for grads, got in canonical.items()) and all(
                not (said and not seen) for pattern in others for grads, got in pattern.items()
                for said, seen in zip(_predicted(kind, grads), got)):
            return kind
    return None


def probe(call, layer=None, variants=()) -> dict:
    """Run ``call(inputs)`` (operands all requiring grad) and record what torch did. ``layer``:
    holds the module ``call`` built; ``variants``: other forms of the call, in which what it
    keeps must hold too."""
    torch.manual_seed(0)
    g = Inputs()
    out = call(g)
    outs = tensors(out)
    nodes = _new_nodes(out, g.made)
    top = outs[0].grad_fn if outs else None
    saved = {}  # node class -> what its instances save
    for node in nodes:
        names = _saved_tensors(node)
        if names:
            saved.setdefault(type(node).__name__, set()).update(names)
    facts = {
        "grad_fn": type(top).__name__ if top is not None else None,
        "saved": {name: sorted(names) for name, names in sorted(saved.items())},
        "outputs_require_grad": [t.requires_grad for t in outs],
        "identity": bool(outs) and any(outs[0] is t for t in g.made),
    }
    facts["view_of"] = _view_of(outs, g.made)
    # the same call on operands that are not contiguous: a view still, a copy (reshape, flatten)
    # or refused (view)
    torch.manual_seed(0)
    strided = Inputs(strided=True)
    try:
        facts["view_of_strided"] = _view_of(tensors(call(strided)), strided.made)
    except RuntimeError:
        facts["view_of_strided"] = "refused"
    torch.manual_seed(0)
    first = _backward(call(Inputs()))
    facts["no_derivative"] = first == "no_derivative"
    facts["graph"] = first != "no_graph"
    if first == "ok":
        torch.manual_seed(0)
        again = call(Inputs())
        _loss(again).backward()
        facts["saves"] = _backward(again) == "second_time"
    else:
        facts["saves"] = False

    def runner(build):
        def run(grads):
            torch.manual_seed(0)
            made = Inputs(grads)
            return made.made, build(made), layer.module if layer else None
        return run

    facts["keeps"] = None
    if first == "ok" and outs[0].requires_grad:
        if layer is not None and isinstance(getattr(layer.module, "weight", None), nn.Parameter):
            facts["keeps"] = _layer_keeps(runner(call)) if len(g.made) == 1 else None
        elif 0 < len(g.made) <= 2:
            patterns = [_write_pattern(runner(call), len(g.made))]
            for variant in variants:
                made = Inputs()
                variant(made)
                patterns.append(_write_pattern(runner(variant), len(made.made)))
            facts["keeps"] = _keeps(patterns)
    return facts


# ----------------------------------------------------------------------------- recipes
# The canonical call of each name (the one GradGuard's verdict is about); ``f`` is the named
# function, ``g`` makes operands that require grad (``c``/``idx`` make constants). An op whose
# result is a view or a copy depending on the layout (reshape, flatten, ravel, view) is given
# operands of two dimensions or more: the generator calls it on transposed ones too.

FUNCTIONS = {
    "torch.add": lambda f, g: f(g(3), g(3)),
    "torch.sub": lambda f, g: f(g(3), g(3)),
    "torch.subtract": lambda f, g: f(g(3), g(3)),
    "torch.neg": lambda f, g: f(g(3)),
    "torch.sum": lambda f, g: f(g(3, 4)),
    "torch.cat": lambda f, g: f([g(2, 3), g(1, 3)]),
    "torch.concat": lambda f, g: f([g(2, 3), g(1, 3)]),
    "torch.concatenate": lambda f, g: f([g(2, 3), g(1, 3)]),
    "torch.stack": lambda f, g: f([g(3), g(3)]),
    "torch.flatten": lambda f, g: f(g(2, 3)),
    "torch.reshape": lambda f, g: f(g(2, 3), (3, 2)),
    "torch.squeeze": lambda f, g: f(g(3, 1)),
    "torch.unsqueeze": lambda f, g: f(g(3), 0),
    "torch.transpose": lambda f, g: f(g(2, 3), 0, 1),
    "torch.t": lambda f, g: f(g(2, 3)),
    "torch.clone": lambda f, g: f(g(3)),
    "torch.chunk": lambda f, g: f(g(4), 2),
    "torch.split": lambda f, g: f(g(4), 2),
    "torch.narrow": lambda f, g: f(g(4), 0, 1, 2),
    "torch.permute": lambda f, g: f(g(2, 3), (1, 0)),
    "torch.mean": lambda f, g: f(g(3, 4)),
    "torch.cumsum": lambda f, g: f(g(3), 0),
    "torch.trace": lambda f, g: f(g(3, 3)),
    "torch.diagonal": lambda f, g: f(g(3, 3)),
    "torch.diag": lambda f, g: f(g(3, 3)),
    "torch.triu": lambda f, g: f(g(3, 3)),
    "torch.tril": lambda f, g: f(g(3, 3)),
    "torch.roll": lambda f, g: f(g(4), 1),
    "torch.flip": lambda f, g: f(g(4), (0,)),
    "torch.movedim": lambda f, g: f(g(2, 3), 0, 1),
    "torch.swapaxes": lambda f, g: f(g(2, 3), 0, 1),
    "torch.unbind": lambda f, g: f(g(2, 3)),
    "torch.broadcast_to": lambda f, g: f(g(3), (2, 3)),
    "torch.tile": lambda f, g: f(g(3), (2,)),
    "torch.select": lambda f, g: f(g(2, 3), 0, 1),
    "torch.repeat_interleave": lambda f, g: f(g(3), 2),
    "torch.lerp": lambda f, g: f(g(3), g(3), 0.3),
    "torch.sign": lambda f, g: f(g(3)),
    "torch.round": lambda f, g: f(g(3)),
    "torch.floor": lambda f, g: f(g(3)),
    "torch.ceil": lambda f, g: f(g(3)),
    "torch.as_tensor": lambda f, g: f(g(3)),
    "torch.asarray": lambda f, g: f(g(3)),
    "torch.Tensor": lambda f, g: f(g(3)),
    "torch.FloatTensor": lambda f, g: f(g(3)),
    "torch.DoubleTensor": lambda f, g: f(g(3).double()),
    "torch.HalfTensor": lambda f, g: f(g(3).half()),
    "torch.BFloat16Tensor": lambda f, g: f(g(3).bfloat16()),
    "torch.nn.functional.pad": lambda f, g: f(g(2, 3), (1, 1)),
    "torch.nn.functional.interpolate": lambda f, g: f(g(1, 1, 2, 2), scale_factor=2),
    "torch.nn.functional.pixel_shuffle": lambda f, g: f(g(1, 4, 2, 2), 2),
    "torch.nn.functional.dropout": lambda f, g: f(g(4, 4), 0.5),
    "torch.nn.functional.dropout2d": lambda f, g: f(g(1, 4, 3, 3), 0.5),
    "torch.mul": lambda f, g: f(g(3), g(3)),
    "torch.multiply": lambda f, g: f(g(3), g(3)),
    "torch.div": lambda f, g: f(g(3), g.pos(3)),
    "torch.divide": lambda f, g: f(g(3), g.pos(3)),
    "torch.true_divide": lambda f, g: f(g(3), g.pos(3)),
    "torch.mm": lambda f, g: f(g(2, 3), g(3, 4)),
    "torch.sparse.mm": lambda f, g: f(g(2, 3).to_sparse(), g(3, 4)),
    "torch.matmul": lambda f, g: f(g(2, 3), g(3, 4)),
    "torch.bmm": lambda f, g: f(g(2, 2, 3), g(2, 3, 4)),
    "torch.addmm": lambda f, g: f(g(4), g(2, 3), g(3, 4)),
    "torch.baddbmm": lambda f, g: f(g(2, 2, 4), g(2, 2, 3), g(2, 3, 4)),
    "torch.mv": lambda f, g: f(g(2, 3), g(3)),
    "torch.dot": lambda f, g: f(g(3), g(3)),
    "torch.outer": lambda f, g: f(g(3), g(2)),
    "torch.tensordot": lambda f, g: f(g(2, 3), g(3, 4), dims=1),
    "torch.einsum": lambda f, g: f("ij,jk->ik", g(2, 3), g(3, 4)),
    "torch.exp": lambda f, g: f(g(3)),
    "torch.log": lambda f, g: f(g.pos(3)),
    "torch.pow": lambda f, g: f(g(3), 2),
    "torch.sqrt": lambda f, g: f(g.pos(3)),
    "torch.rsqrt": lambda f, g: f(g.pos(3)),
    "torch.sin": lambda f, g: f(g(3)),
    "torch.cos": lambda f, g: f(g(3)),
    "torch.tanh": lambda f, g: f(g(3)),
    "torch.log1p": lambda f, g: f(g.pos(3)),
    "torch.expm1": lambda f, g: f(g(3)),
    "torch.reciprocal": lambda f, g: f(g.pos(3)),
    "torch.erf": lambda f, g: f(g(3)),
    "torch.atan2": lambda f, g: f(g(3), g(3)),
    "torch.sigmoid": lambda f, g: f(g(3)),
    "torch.relu": lambda f, g: f(g(3)),
    "torch.abs": lambda f, g: f(g(3)),
    "torch.softmax": lambda f, g: f(g(3, 4), -1),
    "torch.log_softmax": lambda f, g: f(g(3, 4), -1),
    "torch.logsumexp": lambda f, g: f(g(3, 4), 1),
    "torch.norm": lambda f, g: f(g(3, 4)),
    "torch.linalg.norm": lambda f, g: f(g(3, 4)),
    "torch.linalg.vector_norm": lambda f, g: f(g(3)),
    "torch.max": lambda f, g: f(g(3, 4)),
    "torch.min": lambda f, g: f(g(3, 4)),
    "torch.maximum": lambda f, g: f(g(3), g(3)),
    "torch.minimum": lambda f, g: f(g(3), g(3)),
    "torch.amax": lambda f, g: f(g(3, 4), 1),
    "torch.amin": lambda f, g: f(g(3, 4), 1),
    "torch.sort": lambda f, g: f(g(5)),
    "torch.topk": lambda f, g: f(g(5), 2),
    "torch.std": lambda f, g: f(g(3, 4)),
    "torch.var": lambda f, g: f(g(3, 4)),
    "torch.cumprod": lambda f, g: f(g(3), 0),
    "torch.prod": lambda f, g: f(g(3)),
    "torch.where": lambda f, g: f(c(3) > 0, g(3), g(3)),
    "torch.clamp": lambda f, g: f(g(3), 0, 1),
    "torch.clip": lambda f, g: f(g(3), -0.5, 0.5),
    "torch.square": lambda f, g: f(g(3)),
    "torch.gather": lambda f, g: f(g(3, 4), 1, idx([0], [1], [2])),
    "torch.scatter": lambda f, g: f(g(3, 4), 1, idx([0], [1], [2]), g(3, 1)),
    "torch.index_select": lambda f, g: f(g(4, 3), 0, idx(0, 2)),
    "torch.masked_fill": lambda f, g: f(g(3), c(3) > 0, 0.0),
    "torch.masked_select": lambda f, g: f(g(3), c(3) > 0),
    "torch.addcmul": lambda f, g: f(g(3), g(3), g(3)),
    "torch.cdist": lambda f, g: f(g(2, 3), g(4, 3)),
    "torch.nan_to_num": lambda f, g: f(g(3)),
    "torch.nn.functional.relu": lambda f, g: f(g(3)),
    "torch.nn.functional.leaky_relu": lambda f, g: f(g(3)),
    "torch.nn.functional.gelu": lambda f, g: f(g(3)),
    "torch.nn.functional.silu": lambda f, g: f(g(3)),
    "torch.nn.functional.elu": lambda f, g: f(g(3)),
    "torch.nn.functional.relu6": lambda f, g: f(g(3)),
    "torch.nn.functional.hardtanh": lambda f, g: f(g(3)),
    "torch.nn.functional.softplus": lambda f, g: f(g(3)),
    "torch.nn.functional.mish": lambda f, g: f(g(3)),
    "torch.nn.functional.hardswish": lambda f, g: f(g(3)),
    "torch.nn.functional.logsigmoid": lambda f, g: f(g(3)),
    "torch.nn.functional.glu": lambda f, g: f(g(4)),
    "torch.nn.functional.sigmoid": lambda f, g: f(g(3)),
    "torch.nn.functional.tanh": lambda f, g: f(g(3)),
    "torch.nn.functional.softmax": lambda f, g: f(g(3, 4), dim=-1),
    "torch.nn.functional.log_softmax": lambda f, g: f(g(3, 4), dim=-1),
    "torch.nn.functional.gumbel_softmax": lambda f, g: f(g(3, 4)),
    "torch.nn.functional.linear": lambda f, g: f(g(2, 3), g(4, 3)),
    "torch.nn.functional.conv1d": lambda f, g: f(g(1, 2, 5), g(3, 2, 3)),
    "torch.nn.functional.conv2d": lambda f, g: f(g(1, 2, 5, 5), g(3, 2, 3, 3)),
    "torch.nn.functional.conv_transpose2d": lambda f, g: f(g(1, 2, 3, 3), g(2, 3, 3, 3)),
    "torch.nn.functional.max_pool2d": lambda f, g: f(g(1, 1, 4, 4), 2),
    "torch.nn.functional.avg_pool2d": lambda f, g: f(g(1, 1, 4, 4), 2),
    "torch.nn.functional.adaptive_avg_pool2d": lambda f, g: f(g(1, 1, 4, 4), 2),
    "torch.nn.functional.mse_loss": lambda f, g: f(g(3), c(3)),
    "torch.nn.functional.l1_loss": lambda f, g: f(g(3), c(3)),
    "torch.nn.functional.cross_entropy": lambda f, g: f(g(2, 5), idx(1, 3)),
    "torch.nn.functional.nll_loss": lambda f, g: f(g(2, 5), idx(1, 3)),
    "torch.nn.functional.binary_cross_entropy": lambda f, g: f(g.prob(3), torch.rand(3)),
    "torch.nn.functional.binary_cross_entropy_with_logits": lambda f, g: f(g(3), torch.rand(3)),
    "torch.nn.functional.smooth_l1_loss": lambda f, g: f(g(3), c(3)),
    "torch.nn.functional.huber_loss": lambda f, g: f(g(3), c(3)),
    "torch.nn.functional.kl_div": lambda f, g: f(g(2, 3), torch.rand(2, 3), reduction="batchmean"),
    "torch.nn.functional.normalize": lambda f, g: f(g(2, 3)),
    "torch.nn.functional.layer_norm": lambda f, g: f(g(2, 3), (3,)),
    "torch.nn.functional.batch_norm": lambda f, g: f(g(4, 3), torch.zeros(3), torch.ones(3), training=True),
    "torch.nn.functional.group_norm": lambda f, g: f(g(2, 4, 3), 2),
    "torch.nn.functional.instance_norm": lambda f, g: f(g(2, 3, 4)),
    "torch.nn.functional.embedding": lambda f, g: f(idx(0, 2), g(4, 3)),
    "torch.nn.functional.cosine_similarity": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.nn.functional.scaled_dot_product_attention": lambda f, g: f(g(1, 2, 4), g(1, 2, 4), g(1, 2, 4)),
    # elementwise math, reductions and linear algebra beyond the first table
    **{f"torch.{n}": (lambda f, g: f(g(3))) for n in (
        "asin", "acos", "atan", "sinh", "cosh", "asinh", "tan", "erfc", "exp2", "trunc", "frac",
        "sinc", "negative", "absolute", "arctan", "deg2rad", "rad2deg", "fix", "positive", "sgn",
        "angle")},
    **{f"torch.{n}": (lambda f, g: f(g.pos(3))) for n in ("log2", "log10", "lgamma", "digamma", "arcsinh")},
    **{f"torch.{n}": (lambda f, g: f(g.prob(3))) for n in ("atanh", "erfinv", "logit", "arcsin", "arccos")},
    **{f"torch.{n}": (lambda f, g: f(g(3), g.pos(3))) for n in (
        "hypot", "logaddexp", "logaddexp2", "xlogy", "fmod", "remainder", "copysign", "fmax", "fmin",
        "float_power", "dist", "rsub")},
    "torch.addcdiv": lambda f, g: f(g(3), g(3), g.pos(3)),
    "torch.addmv": lambda f, g: f(g(2), g(2, 3), g(3)),
    "torch.addr": lambda f, g: f(g(2, 3), g(2), g(3)),
    "torch.addbmm": lambda f, g: f(g(2, 4), g(3, 2, 3), g(3, 3, 4)),
    "torch.cross": lambda f, g: f(g(2, 3), g(2, 3), dim=1),
    "torch.kron": lambda f, g: f(g(2, 2), g(2, 2)),
    "torch.diff": lambda f, g: f(g(4)),
    "torch.logcumsumexp": lambda f, g: f(g(4), 0),
    "torch.cummax": lambda f, g: f(g(4), 0),
    "torch.cummin": lambda f, g: f(g(4), 0),
    "torch.median": lambda f, g: f(g(5)),
    "torch.nanmedian": lambda f, g: f(g(5)),
    "torch.kthvalue": lambda f, g: f(g(5), 2),
    "torch.mode": lambda f, g: f(g(5)),
    "torch.nansum": lambda f, g: f(g(3, 4)),
    "torch.nanmean": lambda f, g: f(g(3, 4)),
    "torch.std_mean": lambda f, g: f(g(3, 4)),
    "torch.var_mean": lambda f, g: f(g(3, 4)),
    "torch.aminmax": lambda f, g: f(g(3, 4)),
    "torch.take": lambda f, g: f(g(3, 4), idx(0, 5)),
    "torch.take_along_dim": lambda f, g: f(g(3, 4), idx([0], [1], [2]), 1),
    "torch.index_add": lambda f, g: f(g(4, 3), 0, idx(0, 2), g(2, 3)),
    "torch.index_copy": lambda f, g: f(g(4, 3), 0, idx(0, 2), g(2, 3)),
    "torch.index_fill": lambda f, g: f(g(4, 3), 0, idx(0, 2), 0.5),
    "torch.masked_scatter": lambda f, g: f(g(3), c(3) > 0, g(3)),
    "torch.scatter_add": lambda f, g: f(g(3, 4), 1, idx([0], [1], [2]), g(3, 1)),
    "torch.ravel": lambda f, g: f(g(2, 3)),
    "torch.swapdims": lambda f, g: f(g(2, 3), 0, 1),
    "torch.moveaxis": lambda f, g: f(g(2, 3), 0, 1),
    "torch.hstack": lambda f, g: f([g(2, 3), g(2, 3)]),
    "torch.vstack": lambda f, g: f([g(2, 3), g(2, 3)]),
    "torch.dstack": lambda f, g: f([g(2, 3), g(2, 3)]),
    "torch.column_stack": lambda f, g: f([g(3), g(3)]),
    "torch.atleast_2d": lambda f, g: f(g(3)),
    "torch.rot90": lambda f, g: f(g(2, 3)),
    "torch.fliplr": lambda f, g: f(g(2, 3)),
    "torch.flipud": lambda f, g: f(g(2, 3)),
    "torch.diag_embed": lambda f, g: f(g(2, 3)),
    "torch.block_diag": lambda f, g: f(g(2, 2), g(1, 3)),
    "torch.cartesian_prod": lambda f, g: f(g(2), g(3)),
    "torch.meshgrid": lambda f, g: f(g(2), g(3), indexing="ij"),
    "torch.broadcast_tensors": lambda f, g: f(g(2, 3), g(3)),
    "torch.inner": lambda f, g: f(g(3), g(3)),
    "torch.vdot": lambda f, g: f(g(3), g(3)),
    "torch.det": lambda f, g: f(g(3, 3)),
    "torch.logdet": lambda f, g: f(torch.eye(3) * 2 + g(3, 3) * 0.1),
    "torch.inverse": lambda f, g: f(g(3, 3)),
    "torch.pinverse": lambda f, g: f(g(3, 2)),
    "torch.trapezoid": lambda f, g: f(g(4)),
    "torch.cosine_similarity": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.pairwise_distance": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.linalg.inv": lambda f, g: f(g(3, 3)),
    "torch.linalg.eigh": lambda f, g: f(g(3, 3)),
    "torch.linalg.eigvalsh": lambda f, g: f(g(3, 3)),
    "torch.linalg.svd": lambda f, g: f(g(3, 2)),
    "torch.linalg.qr": lambda f, g: f(g(3, 2)),
    "torch.linalg.cholesky": lambda f, g: f(torch.eye(3, requires_grad=True)),
    "torch.linalg.det": lambda f, g: f(g(3, 3)),
    "torch.linalg.solve": lambda f, g: f(g(3, 3), g(3)),
    "torch.linalg.matrix_norm": lambda f, g: f(g(3, 3)),
    "torch.linalg.pinv": lambda f, g: f(g(3, 2)),
    "torch.linalg.cross": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.linalg.vecdot": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.linalg.matmul": lambda f, g: f(g(2, 3), g(3, 4)),
    "torch.nn.functional.selu": lambda f, g: f(g(3)),
    "torch.nn.functional.celu": lambda f, g: f(g(3)),
    "torch.nn.functional.softsign": lambda f, g: f(g(3)),
    "torch.nn.functional.tanhshrink": lambda f, g: f(g(3)),
    "torch.nn.functional.softshrink": lambda f, g: f(g(3)),
    "torch.nn.functional.hardshrink": lambda f, g: f(g(3)),
    "torch.nn.functional.hardsigmoid": lambda f, g: f(g(3)),
    "torch.nn.functional.softmin": lambda f, g: f(g(3, 4), dim=-1),
    "torch.nn.functional.threshold": lambda f, g: f(g(3), 0.1, 0.0),
    "torch.nn.functional.prelu": lambda f, g: f(g(3), g(1)),
    "torch.nn.functional.conv3d": lambda f, g: f(g(1, 1, 3, 3, 3), g(2, 1, 2, 2, 2)),
    "torch.nn.functional.conv_transpose1d": lambda f, g: f(g(1, 2, 4), g(2, 3, 3)),
    "torch.nn.functional.max_pool1d": lambda f, g: f(g(1, 1, 4), 2),
    "torch.nn.functional.avg_pool1d": lambda f, g: f(g(1, 1, 4), 2),
    "torch.nn.functional.adaptive_max_pool2d": lambda f, g: f(g(1, 1, 4, 4), 2),
    "torch.nn.functional.adaptive_avg_pool1d": lambda f, g: f(g(1, 1, 4), 2),
    "torch.nn.functional.pairwise_distance": lambda f, g: f(g(2, 3), g(2, 3)),
    "torch.nn.functional.triplet_margin_loss": lambda f, g: f(g(2, 3), g(2, 3), g(2, 3)),
    "torch.nn.functional.margin_ranking_loss": lambda f, g: f(g(3), g(3), torch.tensor([1.0, -1.0, 1.0])),
    "torch.nn.functional.soft_margin_loss": lambda f, g: f(g(3), torch.tensor([1.0, -1.0, 1.0])),
    "torch.nn.functional.poisson_nll_loss": lambda f, g: f(g(3), torch.rand(3)),
    "torch.nn.functional.gaussian_nll_loss": lambda f, g: f(g(3), c(3), g.pos(3)),
    "torch.nn.functional.cosine_embedding_loss": lambda f, g: f(g(2, 3), g(2, 3), torch.tensor([1.0, -1.0])),
    "torch.nn.functional.multilabel_soft_margin_loss": lambda f, g: f(g(2, 3), torch.tensor([[1.0, 0, 1], [0, 1, 0]])),
    "torch.nn.functional.hinge_embedding_loss": lambda f, g: f(g(3), torch.tensor([1.0, -1.0, 1.0])),
    "torch.nn.functional.unfold": lambda f, g: f(g(1, 1, 3, 3), 2),
    "torch.nn.functional.fold": lambda f, g: f(g(1, 4, 4), (3, 3), 2),
    "torch.nn.functional.local_response_norm": lambda f, g: f(g(1, 3, 2, 2), 2),
    "torch.nn.functional.pixel_unshuffle": lambda f, g: f(g(1, 1, 2, 2), 2),
    "torch.nn.functional.dropout1d": lambda f, g: f(g(2, 3, 4), 0.5),
    "torch.nn.functional.dropout3d": lambda f, g: f(g(1, 2, 2, 2, 2), 0.5),
    "torch.nn.functional.alpha_dropout": lambda f, g: f(g(4, 4), 0.5, training=True),
    "torch.nn.functional.embedding_bag": lambda f, g: f(idx([1, 2], [3, 0]), g(4, 3)),
    "torch.nn.functional.grid_sample": lambda f, g: f(g(1, 1, 3, 3), g(1, 2, 2, 2), align_corners=False),
    "torch.nn.functional.affine_grid": lambda f, g: f(g(1, 2, 3), [1, 1, 2, 2], align_corners=False),
    "torch.nn.functional.rms_norm": lambda f, g: f(g(2, 3), (3,)),
    # the discrete Fourier transforms (spectral layers, audio): complex results, followed by
    # their real parts
    **{f"torch.fft.{n}": lambda f, g: f(g(2, 4, 6)) for n in (
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
        "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftshift", "ifftshift")},
    # legacy: Variable(t) is a new tensor without t's graph
    "torch.autograd.Variable": lambda f, g: f(g(3)),
}

# Tensor methods: ``m`` is the unbound method (``m(x, ...)`` is ``x.name(...)``).
METHODS = {
    "add": lambda m, g: m(g(3), g(3)),
    "sub": lambda m, g: m(g(3), g(3)),
    "neg": lambda m, g: m(g(3)),
    "sum": lambda m, g: m(g(3, 4)),
    "mean": lambda m, g: m(g(3, 4)),
    "view": lambda m, g: m(g(2, 3), 6),
    "view_as": lambda m, g: m(g(2, 3), c(3, 2)),
    "reshape": lambda m, g: m(g(2, 3), 3, 2),
    "flatten": lambda m, g: m(g(2, 3)),
    "squeeze": lambda m, g: m(g(3, 1)),
    "unsqueeze": lambda m, g: m(g(3), 0),
    "t": lambda m, g: m(g(2, 3)),
    "transpose": lambda m, g: m(g(2, 3), 0, 1),
    "permute": lambda m, g: m(g(2, 3), 1, 0),
    "clone": lambda m, g: m(g(3)),
    "contiguous": lambda m, g: m(g(2, 3).t()),
    "expand": lambda m, g: m(g(3, 1), 3, 4),
    "expand_as": lambda m, g: m(g(3, 1), c(3, 4)),
    "repeat": lambda m, g: m(g(3), 2),
    "to": lambda m, g: m(g(3), torch.float64),
    "cpu": lambda m, g: m(g(3)),
    "cuda": None,  # needs a GPU: the same ToCopyBackward0 as ``to``
    "float": lambda m, g: m(g(3).double()),
    "double": lambda m, g: m(g(3)),
    "half": lambda m, g: m(g(3)),
    "bfloat16": lambda m, g: m(g(3)),
    "type_as": lambda m, g: m(g(3), c(1).double()),
    "type": lambda m, g: m(g(3), torch.float64),  # (x.type() with no dtype is a string)
    "chunk": lambda m, g: m(g(4), 2),
    "split": lambda m, g: m(g(4), 2),
    "narrow": lambda m, g: m(g(4), 0, 1, 2),
    "unflatten": lambda m, g: m(g(3, 4), 1, (2, 2)),
    "select": lambda m, g: m(g(2, 3), 0, 1),
    "unbind": lambda m, g: m(g(2, 3)),
    "flip": lambda m, g: m(g(4), 0),
    "roll": lambda m, g: m(g(4), 1),
    "diagonal": lambda m, g: m(g(3, 3)),
    "movedim": lambda m, g: m(g(2, 3), 0, 1),
    "swapaxes": lambda m, g: m(g(2, 3), 0, 1),
    "tile": lambda m, g: m(g(3), (2,)),
    "unfold": lambda m, g: m(g(4), 0, 2, 1),
    "cumsum": lambda m, g: m(g(3), 0),
    "triu": lambda m, g: m(g(3, 3)),
    "tril": lambda m, g: m(g(3, 3)),
    "repeat_interleave": lambda m, g: m(g(3), 2),
    "lerp": lambda m, g: m(g(3), g(3), 0.5),
    "sign": lambda m, g: m(g(3)),
    "round": lambda m, g: m(g(3)),
    "floor": lambda m, g: m(g(3)),
    "ceil": lambda m, g: m(g(3)),
    "mul": lambda m, g: m(g(3), g(3)),
    "div": lambda m, g: m(g(3), g.pos(3)),
    "mm": lambda m, g: m(g(2, 3), g(3, 4)),
    "matmul": lambda m, g: m(g(2, 3), g(3, 4)),
    "bmm": lambda m, g: m(g(2, 2, 3), g(2, 3, 4)),
    "exp": lambda m, g: m(g(3)),
    "log": lambda m, g: m(g.pos(3)),
    "pow": lambda m, g: m(g(3), 2),
    "sqrt": lambda m, g: m(g.pos(3)),
    "sin": lambda m, g: m(g(3)),
    "cos": lambda m, g: m(g(3)),
    "tanh": lambda m, g: m(g(3)),
    "sigmoid": lambda m, g: m(g(3)),
    "relu": lambda m, g: m(g(3)),
    "abs": lambda m, g: m(g(3)),
    "softmax": lambda m, g: m(g(3, 4), -1),
    "log_softmax": lambda m, g: m(g(3, 4), -1),
    "norm": lambda m, g: m(g(3, 4)),
    "max": lambda m, g: m(g(3, 4)),
    "min": lambda m, g: m(g(3, 4)),
    "prod": lambda m, g: m(g(3)),
    "clamp": lambda m, g: m(g(3), 0, 1),
    "square": lambda m, g: m(g(3)),
    "clip": lambda m, g: m(g(3), -0.5, 0.5),
    "rsqrt": lambda m, g: m(g.pos(3)),
    "log1p": lambda m, g: m(g.pos(3)),
    "reciprocal": lambda m, g: m(g.pos(3)),
    "logsumexp": lambda m, g: m(g(3, 4), 1),
    "std": lambda m, g: m(g(3, 4)),
    "var": lambda m, g: m(g(3, 4)),
    "cumprod": lambda m, g: m(g(3), 0),
    "amax": lambda m, g: m(g(3, 4), 1),
    "amin": lambda m, g: m(g(3, 4), 1),
    "sort": lambda m, g: m(g(5)),
    "topk": lambda m, g: m(g(5), 2),
    "gather": lambda m, g: m(g(3, 4), 1, idx([0], [1], [2])),
    "scatter": lambda m, g: m(g(3, 4), 1, idx([0], [1], [2]), 0.5),
    "index_select": lambda m, g: m(g(4, 3), 0, idx(0, 2)),
    "masked_fill": lambda m, g: m(g(3), c(3) > 0, 0.0),
    "masked_select": lambda m, g: m(g(3), c(3) > 0),
    "where": lambda m, g: m(g(3), c(3) > 0, 0.0),
    "mv": lambda m, g: m(g(2, 3), g(3)),
    "dot": lambda m, g: m(g(3), g(3)),
    "outer": lambda m, g: m(g(3), g(2)),
    "nan_to_num": lambda m, g: m(g(3)),
    "maximum": lambda m, g: m(g(3), g(3)),
    "minimum": lambda m, g: m(g(3), g(3)),
    **{n: (lambda m, g: m(g(3))) for n in (
        "asin", "acos", "atan", "sinh", "cosh", "tan", "erf", "erfc", "expm1", "exp2", "trunc",
        "frac", "sinc", "negative", "absolute", "sgn", "positive", "fix")},
    "ravel": lambda m, g: m(g(2, 3)),  # 2-D: laid out transposed, it copies
    **{n: (lambda m, g: m(g.pos(3))) for n in ("log2", "log10", "lgamma", "digamma")},
    **{n: (lambda m, g: m(g.prob(3))) for n in ("atanh", "erfinv", "logit")},
    **{n: (lambda m, g: m(g(3), g.pos(3))) for n in (
        "atan2", "hypot", "logaddexp", "xlogy", "fmod", "remainder", "copysign", "fmax", "fmin",
        "float_power", "dist", "subtract", "multiply", "divide", "true_divide")},
    "addcmul": lambda m, g: m(g(3), g(3), g(3)),
    "addcdiv": lambda m, g: m(g(3), g(3), g.pos(3)),
    "addmm": lambda m, g: m(g(4), g(2, 3), g(3, 4)),
    "addmv": lambda m, g: m(g(2), g(2, 3), g(3)),
    "baddbmm": lambda m, g: m(g(2, 2, 4), g(2, 2, 3), g(2, 3, 4)),
    "cross": lambda m, g: m(g(2, 3), g(2, 3), dim=1),
    "kron": lambda m, g: m(g(2, 2), g(2, 2)),
    "diff": lambda m, g: m(g(4)),
    "cummax": lambda m, g: m(g(4), 0),
    "cummin": lambda m, g: m(g(4), 0),
    "logcumsumexp": lambda m, g: m(g(4), 0),
    "median": lambda m, g: m(g(5)),
    "kthvalue": lambda m, g: m(g(5), 2),
    "mode": lambda m, g: m(g(5)),
    "nansum": lambda m, g: m(g(3, 4)),
    "nanmean": lambda m, g: m(g(3, 4)),
    "aminmax": lambda m, g: m(g(3, 4)),
    "take": lambda m, g: m(g(3, 4), idx(0, 5)),
    "take_along_dim": lambda m, g: m(g(3, 4), idx([0], [1], [2]), 1),
    "index_add": lambda m, g: m(g(4, 3), 0, idx(0, 2), g(2, 3)),
    "index_fill": lambda m, g: m(g(4, 3), 0, idx(0, 2), 0.5),
    "masked_scatter": lambda m, g: m(g(3), c(3) > 0, g(3)),
    "scatter_add": lambda m, g: m(g(3, 4), 1, idx([0], [1], [2]), g(3, 1)),
    "swapdims": lambda m, g: m(g(2, 3), 0, 1),
    "moveaxis": lambda m, g: m(g(2, 3), 0, 1),
    "rot90": lambda m, g: m(g(2, 3)),
    "fliplr": lambda m, g: m(g(2, 3)),
    "flipud": lambda m, g: m(g(2, 3)),
    "diag": lambda m, g: m(g(3, 3)),
    "diag_embed": lambda m, g: m(g(2, 3)),
    "inner": lambda m, g: m(g(3), g(3)),
    "vdot": lambda m, g: m(g(3), g(3)),
    "det": lambda m, g: m(g(3, 3)),
    "inverse": lambda m, g: m(g(3, 3)),
    "pinverse": lambda m, g: m(g(3, 2)),
    "trace": lambda m, g: m(g(3, 3)),
    "clamp_min": lambda m, g: m(g(3), 0.0),
    "clamp_max": lambda m, g: m(g(3), 0.0),
    "sum_to_size": lambda m, g: m(g(2, 3), 1, 3),
    "broadcast_to": lambda m, g: m(g(3), (2, 3)),
    "as_strided": lambda m, g: m(g(4), (2,), (1,)),
}

# Tensor attributes that are differentiable (``x.T``): the receiver.
ATTRIBUTES = {
    "T": lambda g: g(2, 3), "mT": lambda g: g(2, 2, 3), "H": lambda g: g(2, 3),
    "mH": lambda g: g(2, 2, 3), "real": lambda g: g.cplx(3), "imag": lambda g: g.cplx(3),
}

# Python operators (ast class name): the function Python calls and its canonical operands.
OPERATORS = {
    "Add": (operator.add, lambda g: (g(3), g(3))),
    "Sub": (operator.sub, lambda g: (g(3), g(3))),
    "USub": (operator.neg, lambda g: (g(3),)),
    "UAdd": (operator.pos, lambda g: (g(3),)),
    "Mult": (operator.mul, lambda g: (g(3), g(3))),
    "Div": (operator.truediv, lambda g: (g(3), g.pos(3))),
    "MatMult": (operator.matmul, lambda g: (g(2, 3), g(3, 4))),
    "Pow": (operator.pow, lambda g: (g(3), 2)),
    "FloorDiv": (operator.floordiv, lambda g: (g(3), 2)),
    "Mod": (operator.mod, lambda g: (g(3), 2)),
}

SUBSCRIPTS = {  # basic: slices and ints; advanced: a tensor of indices
    "basic": lambda g: g(4, 3)[1:3],
    "advanced": lambda g: g(4, 3)[idx(0, 2)],
}


def _tel(**kw):
    return dict(d_model=8, nhead=2, dim_feedforward=16, **kw)


# nn layers: how to build one from its class, and its forward arguments.
MODULES = {
    "torch.nn.Linear": (lambda M: M(3, 2), lambda g: (g(4, 3),)),
    "torch.nn.Bilinear": (lambda M: M(3, 3, 2), lambda g: (g(4, 3), g(4, 3))),
    "torch.nn.Conv1d": (lambda M: M(2, 3, 3), lambda g: (g(1, 2, 5),)),
    "torch.nn.Conv2d": (lambda M: M(2, 3, 3), lambda g: (g(1, 2, 5, 5),)),
    "torch.nn.Conv3d": (lambda M: M(1, 2, 2), lambda g: (g(1, 1, 3, 3, 3),)),
    "torch.nn.ConvTranspose1d": (lambda M: M(2, 3, 3), lambda g: (g(1, 2, 4),)),
    "torch.nn.ConvTranspose2d": (lambda M: M(2, 3, 3), lambda g: (g(1, 2, 3, 3),)),
    "torch.nn.Embedding": (lambda M: M(10, 3), lambda g: (idx(1, 2, 4),)),
    "torch.nn.EmbeddingBag": (lambda M: M(10, 3), lambda g: (idx([1, 2], [4, 5]),)),
    "torch.nn.BatchNorm1d": (lambda M: M(3), lambda g: (g(4, 3),)),
    "torch.nn.BatchNorm2d": (lambda M: M(2), lambda g: (g(2, 2, 3, 3),)),
    "torch.nn.BatchNorm3d": (lambda M: M(2), lambda g: (g(2, 2, 2, 2, 2),)),
    "torch.nn.LayerNorm": (lambda M: M(3), lambda g: (g(2, 3),)),
    "torch.nn.GroupNorm": (lambda M: M(2, 4), lambda g: (g(2, 4, 3),)),
    "torch.nn.InstanceNorm1d": (lambda M: M(3), lambda g: (g(2, 3, 5),)),
    "torch.nn.InstanceNorm2d": (lambda M: M(3), lambda g: (g(2, 3, 4, 4),)),
    "torch.nn.RNN": (lambda M: M(3, 4), lambda g: (g(5, 2, 3),)),
    "torch.nn.LSTM": (lambda M: M(3, 4), lambda g: (g(5, 2, 3),)),
    "torch.nn.GRU": (lambda M: M(3, 4), lambda g: (g(5, 2, 3),)),
    "torch.nn.RNNCell": (lambda M: M(3, 4), lambda g: (g(2, 3),)),
    "torch.nn.GRUCell": (lambda M: M(3, 4), lambda g: (g(2, 3),)),
    "torch.nn.LSTMCell": (lambda M: M(3, 4), lambda g: (g(2, 3),)),
    "torch.nn.MultiheadAttention": (lambda M: M(4, 2), lambda g: (g(3, 2, 4), g(3, 2, 4), g(3, 2, 4))),
    "torch.nn.TransformerEncoderLayer": (lambda M: M(**_tel()), lambda g: (g(3, 2, 8),)),
    "torch.nn.TransformerDecoderLayer": (lambda M: M(**_tel()), lambda g: (g(3, 2, 8), g(4, 2, 8))),
    "torch.nn.TransformerEncoder": (lambda M: M(nn.TransformerEncoderLayer(**_tel()), 2,
                                                enable_nested_tensor=False),
                                    lambda g: (g(3, 2, 8),)),
    "torch.nn.TransformerDecoder": (lambda M: M(nn.TransformerDecoderLayer(**_tel()), 1),
                                    lambda g: (g(3, 2, 8), g(4, 2, 8))),
    "torch.nn.Transformer": (lambda M: M(num_encoder_layers=1, num_decoder_layers=1, **_tel()),
                             lambda g: (g(3, 2, 8), g(4, 2, 8))),
    "torch.nn.PReLU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.ReLU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.ReLU6": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.LeakyReLU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.ELU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.GELU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.SiLU": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Mish": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Hardswish": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Hardtanh": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Softplus": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.GLU": (lambda M: M(), lambda g: (g(4),)),
    "torch.nn.Sigmoid": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Tanh": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.Softmax": (lambda M: M(dim=-1), lambda g: (g(3, 4),)),
    "torch.nn.LogSoftmax": (lambda M: M(dim=-1), lambda g: (g(3, 4),)),
    "torch.nn.Dropout": (lambda M: M(0.5), lambda g: (g(4, 4),)),
    "torch.nn.Dropout1d": (lambda M: M(0.5), lambda g: (g(2, 3, 4),)),
    "torch.nn.Dropout2d": (lambda M: M(0.5), lambda g: (g(1, 3, 4, 4),)),
    "torch.nn.MaxPool1d": (lambda M: M(2), lambda g: (g(1, 1, 4),)),
    "torch.nn.MaxPool2d": (lambda M: M(2), lambda g: (g(1, 1, 4, 4),)),
    "torch.nn.MaxPool3d": (lambda M: M(2), lambda g: (g(1, 1, 2, 2, 2),)),
    "torch.nn.AvgPool1d": (lambda M: M(2), lambda g: (g(1, 1, 4),)),
    "torch.nn.AvgPool2d": (lambda M: M(2), lambda g: (g(1, 1, 4, 4),)),
    "torch.nn.AdaptiveAvgPool1d": (lambda M: M(2), lambda g: (g(1, 1, 4),)),
    "torch.nn.AdaptiveAvgPool2d": (lambda M: M((2, 2)), lambda g: (g(1, 1, 4, 4),)),
    "torch.nn.AdaptiveMaxPool2d": (lambda M: M(2), lambda g: (g(1, 1, 4, 4),)),
    "torch.nn.Upsample": (lambda M: M(scale_factor=2), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.ZeroPad2d": (lambda M: M(1), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.ConstantPad2d": (lambda M: M(1, 0.5), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.ReflectionPad2d": (lambda M: M(1), lambda g: (g(1, 1, 3, 3),)),
    "torch.nn.ReplicationPad2d": (lambda M: M(1), lambda g: (g(1, 1, 3, 3),)),
    "torch.nn.PixelShuffle": (lambda M: M(2), lambda g: (g(1, 4, 2, 2),)),
    "torch.nn.Flatten": (lambda M: M(), lambda g: (g(2, 3, 4),)),
    "torch.nn.Unflatten": (lambda M: M(1, (2, 2)), lambda g: (g(3, 4),)),
    "torch.nn.Identity": (lambda M: M(), lambda g: (g(3),)),
    "torch.nn.CosineSimilarity": (lambda M: M(), lambda g: (g(2, 3), g(2, 3))),
    "torch.nn.PairwiseDistance": (lambda M: M(), lambda g: (g(2, 3), g(2, 3))),
    "torch.nn.MSELoss": (lambda M: M(), lambda g: (g(3), c(3))),
    "torch.nn.L1Loss": (lambda M: M(), lambda g: (g(3), c(3))),
    "torch.nn.CrossEntropyLoss": (lambda M: M(), lambda g: (g(2, 5), idx(1, 3))),
    "torch.nn.NLLLoss": (lambda M: M(), lambda g: (g(2, 5), idx(1, 3))),
    "torch.nn.BCELoss": (lambda M: M(), lambda g: (g.prob(3), torch.rand(3))),
    "torch.nn.BCEWithLogitsLoss": (lambda M: M(), lambda g: (g(3), torch.rand(3))),
    "torch.nn.SmoothL1Loss": (lambda M: M(), lambda g: (g(3), c(3))),
    "torch.nn.KLDivLoss": (lambda M: M(reduction="batchmean"), lambda g: (g(2, 3), torch.rand(2, 3))),
    "torch.nn.HuberLoss": (lambda M: M(), lambda g: (g(3), c(3))),
    "torch.nn.MarginRankingLoss": (lambda M: M(), lambda g: (g(3), g(3), torch.tensor([1.0, -1.0, 1.0]))),
    "torch.nn.TripletMarginLoss": (lambda M: M(), lambda g: (g(2, 3), g(2, 3), g(2, 3))),
    "torch.nn.CosineEmbeddingLoss": (lambda M: M(), lambda g: (g(2, 3), g(2, 3), torch.tensor([1.0, -1.0]))),
    "torch.nn.GaussianNLLLoss": (lambda M: M(), lambda g: (g(3), c(3), g.pos(3))),
    "torch.nn.PoissonNLLLoss": (lambda M: M(), lambda g: (g(3), torch.rand(3))),
    "torch.nn.SoftMarginLoss": (lambda M: M(), lambda g: (g(3), torch.tensor([1.0, -1.0, 1.0]))),
    "torch.nn.MultiLabelSoftMarginLoss": (lambda M: M(), lambda g: (g(2, 3), torch.tensor([[1.0, 0, 1], [0, 1, 0]]))),
    "torch.nn.CTCLoss": (lambda M: M(), lambda g: (g(5, 1, 3).log_softmax(2), idx([1, 2]), idx(5), idx(2))),
    **{f"torch.nn.{n}": (lambda M: M(), lambda g: (g(3),)) for n in (
        "SELU", "CELU", "Softsign", "Hardsigmoid", "RReLU", "Tanhshrink", "Softshrink",
        "Hardshrink", "LogSigmoid")},
    "torch.nn.Softmin": (lambda M: M(dim=-1), lambda g: (g(3, 4),)),
    "torch.nn.Softmax2d": (lambda M: M(), lambda g: (g(1, 2, 2, 2),)),
    "torch.nn.Threshold": (lambda M: M(0.1, 0.0), lambda g: (g(3),)),
    "torch.nn.AlphaDropout": (lambda M: M(0.5), lambda g: (g(4, 4),)),
    "torch.nn.FeatureAlphaDropout": (lambda M: M(0.5), lambda g: (g(1, 3, 4, 4),)),
    "torch.nn.Dropout3d": (lambda M: M(0.5), lambda g: (g(1, 2, 2, 2, 2),)),
    "torch.nn.InstanceNorm3d": (lambda M: M(2), lambda g: (g(2, 2, 2, 2, 2),)),
    "torch.nn.LocalResponseNorm": (lambda M: M(2), lambda g: (g(1, 3, 2, 2),)),
    "torch.nn.RMSNorm": (lambda M: M(3), lambda g: (g(2, 3),)),
    "torch.nn.LPPool1d": (lambda M: M(2, 2), lambda g: (g.pos(1, 1, 4),)),
    "torch.nn.LPPool2d": (lambda M: M(2, 2), lambda g: (g.pos(1, 1, 4, 4),)),
    "torch.nn.AdaptiveMaxPool1d": (lambda M: M(2), lambda g: (g(1, 1, 4),)),
    "torch.nn.AdaptiveAvgPool3d": (lambda M: M(1), lambda g: (g(1, 1, 2, 2, 2),)),
    "torch.nn.AvgPool3d": (lambda M: M(2), lambda g: (g(1, 1, 2, 2, 2),)),
    "torch.nn.ConvTranspose3d": (lambda M: M(1, 2, 2), lambda g: (g(1, 1, 2, 2, 2),)),
    "torch.nn.Fold": (lambda M: M((3, 3), 2), lambda g: (g(1, 4, 4),)),
    "torch.nn.Unfold": (lambda M: M(2), lambda g: (g(1, 1, 3, 3),)),
    "torch.nn.ReflectionPad1d": (lambda M: M(1), lambda g: (g(1, 1, 3),)),
    "torch.nn.ReplicationPad1d": (lambda M: M(1), lambda g: (g(1, 1, 3),)),
    "torch.nn.ZeroPad1d": (lambda M: M(1), lambda g: (g(1, 1, 3),)),
    "torch.nn.ConstantPad1d": (lambda M: M(1, 0.5), lambda g: (g(1, 1, 3),)),
    "torch.nn.ConstantPad3d": (lambda M: M(1, 0.5), lambda g: (g(1, 1, 2, 2, 2),)),
    "torch.nn.CircularPad1d": (lambda M: M(1), lambda g: (g(1, 1, 3),)),
    "torch.nn.ChannelShuffle": (lambda M: M(2), lambda g: (g(1, 4, 2, 2),)),
    "torch.nn.PixelUnshuffle": (lambda M: M(2), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.UpsamplingNearest2d": (lambda M: M(scale_factor=2), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.UpsamplingBilinear2d": (lambda M: M(scale_factor=2), lambda g: (g(1, 1, 2, 2),)),
    "torch.nn.MultiMarginLoss": (lambda M: M(), lambda g: (g(2, 3), idx(0, 2))),
    "torch.nn.MultiLabelMarginLoss": (lambda M: M(), lambda g: (g(2, 3), idx([0, -1, 1], [2, -1, 0]))),
    "torch.nn.HingeEmbeddingLoss": (lambda M: M(), lambda g: (g(3), torch.tensor([1.0, -1.0, 1.0]))),
    "torch.nn.TripletMarginWithDistanceLoss": (lambda M: M(), lambda g: (g(2, 3), g(2, 3), g(2, 3))),
}


# Other forms of a call, in which what the canonical one keeps must hold too (a number first:
# ``2 ** x`` keeps x and its result; ``2 * x`` keeps nothing).
VARIANTS = {
    "functions": {"torch.pow": [lambda f, g: f(2.0, g(3))], "torch.mul": [lambda f, g: f(g(3), 2)]},
    "operators": {"Pow": [lambda g: (2, g(3))], "Mult": [lambda g: (2, g(3)), lambda g: (g(3), 2)]},
}


def resolve(name: str):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


class _Built:
    """The layer a module recipe built last (its weight is an operand of the keeps probe)."""
    module = None


def _returns(out) -> str:
    if isinstance(out, torch.Tensor):
        return "tensor"
    if isinstance(out[1], tuple):
        return "output_and_hidden_pair"  # LSTM: (output, (h, c))
    return "tuple"


def _in_place_flag(cls):
    """``(keyword, position)`` of the constructor flag that makes a layer write into its input,
    when built with only that flag it does (its data, its version counter bumped)."""
    params = list(inspect.signature(cls).parameters.values())
    names = [p.name for p in params]
    if "inplace" not in names or any(p.default is inspect.Parameter.empty for p in params):
        return None
    x = torch.randn(3, 4, requires_grad=True).clone()
    version = x._version
    out = cls(inplace=True)(x)
    if out.data_ptr() == x.data_ptr() and x._version > version:
        return ["inplace", names.index("inplace")]
    return None


def with_arguments(fn, names: list, values: dict):
    """``fn`` with these arguments (by name), however its recipe passes the others."""
    def call(*args, **kwargs):
        args = list(args)
        for key, value in values.items():
            if names.index(key) < len(args):
                args[names.index(key)] = value
            else:
                kwargs[key] = value
        return fn(*args, **kwargs)
    return call


def writes_first(name: str, fn) -> bool:
    """Whether ``fn`` run on the recipe of function ``name`` writes into its first operand (its
    version moves) and returns it."""
    g = Inputs()
    out = FUNCTIONS[name](fn, g)
    return g.made[0]._version > 0 and isinstance(out, torch.Tensor) and out.data_ptr() == g.made[0].data_ptr()


def _in_place_argument(name: str, fn):
    """``[inplace, training, training_default, p]`` for a function that, given ``inplace=True``,
    writes its result into its first argument (``F.relu(x, inplace=True)``): the positions of
    its ``inplace`` parameter and of the ``training`` one its write also needs (dropouts write
    only when training; None where there is none), that one's default, and the position of a
    ``p`` whose 0 leaves the input alone (a dropout of nothing; else None)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature (F.gelu): no such parameter
        return None
    names = [p.name for p in params]
    if "inplace" not in names:
        return None
    flags = {"inplace": True, **({"training": True} if "training" in names else {})}

    def given(**values):
        return with_arguments(fn, names, values)

    if not writes_first(name, given(**flags)):
        return None
    training = None
    if "training" in names:  # (dropout1d/dropout3d write whether training or not)
        training = None if writes_first(name, given(**{**flags, "training": False})) else names.index("training")
    p = None
    if "p" in names:
        p = None if writes_first(name, given(**flags, p=0.0)) else names.index("p")
    return [names.index("inplace"), training, None if training is None else params[training].default, p]


def _renorm_argument(name: str, fn):
    """``[max_norm, weight]`` positions for a function that, given a ``max_norm``, rescales the
    rows it looks up of its weight in place (``F.embedding``): the version of the weight moves
    (a node that saved the weight raises), whatever the rows' norms."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    if "max_norm" not in names or "weight" not in names:
        return None
    g = Inputs()  # (the recipe's only float operand is the weight: the indices are not made here)
    FUNCTIONS[name](with_arguments(fn, names, {"max_norm": 1e6}), g)
    return [names.index("max_norm"), names.index("weight")] if any(t._version > 0 for t in g.made) else None


def _renorm_flag(cls, build, forward):
    """``(keyword, position)`` of the constructor's ``max_norm``, when a layer built with one
    rescales its own weight in place in forward (``nn.Embedding``): its version moves, whatever
    the rows' norms, so a node that saved the weight (a tied output layer) raises."""
    names = list(inspect.signature(cls).parameters)
    if "max_norm" not in names:
        return None
    torch.manual_seed(0)
    module = build(cls)
    module.max_norm = 1e6
    versions = [p._version for p in module.parameters()]
    module(*forward(Inputs()))
    if any(p._version > v for p, v in zip(module.parameters(), versions)):
        return ["max_norm", names.index("max_norm")]
    return None


# The state a recurrent layer takes as its second argument, made of plain tensors as a stateful
# model keeps it between batches (zeros, no grad): h, or (h, c) for the LSTMs.
STATES = {
    "torch.nn.RNN": lambda: torch.zeros(1, 2, 4), "torch.nn.GRU": lambda: torch.zeros(1, 2, 4),
    "torch.nn.LSTM": lambda: (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)),
    "torch.nn.RNNCell": lambda: torch.zeros(2, 4), "torch.nn.GRUCell": lambda: torch.zeros(2, 4),
    "torch.nn.LSTMCell": lambda: (torch.zeros(2, 4), torch.zeros(2, 4)),
}


def _keeps_state(cls, build, forward, name: str) -> bool:
    """Whether the layer's backward needs the state it was given unchanged: written in place
    after the forward (a stateful model copying the new state into it), its backward raises."""
    if name not in STATES:
        return False
    torch.manual_seed(0)
    state = STATES[name]()
    out = build(cls)(*forward(Inputs()), state)
    with torch.no_grad():
        for t in (state if isinstance(state, tuple) else (state,)):
            t.add_(1.0)
    return _backward(out) == "in_place"


def kept_arguments(recipe, fn) -> list:
    """The arguments of ``recipe``'s call of ``fn`` that are tensors not requiring grad (a
    target, indices) and that its backward reads: written in place after the call, the backward
    raises. Each as its position in the call (``self`` of a method is 0) or its keyword."""
    seen: dict = {}

    def record(*args, **kwargs):
        seen["args"], seen["kwargs"] = args, kwargs
        return fn(*args, **kwargs)

    torch.manual_seed(0)
    out = recipe(record, Inputs())
    if not tensors(out) or not tensors(out)[0].requires_grad:
        return []
    places = [i for i, a in enumerate(seen["args"]) if isinstance(a, torch.Tensor) and not a.requires_grad]
    places += [k for k, v in seen["kwargs"].items() if isinstance(v, torch.Tensor) and not v.requires_grad]
    kept = []
    for place in places:
        torch.manual_seed(0)
        out = recipe(record, Inputs())
        with torch.no_grad():  # (any dtype: a bool mask, int indices)
            t = seen["args"][place] if isinstance(place, int) else seen["kwargs"][place]
            t.copy_(t.clone())
        if _backward(out) == "in_place":
            kept.append(place)
    return kept


def derive(section: str, name: str) -> dict:
    """The facts of one entry of ``api.json``: ``section`` is its table there."""
    if section == "functions":
        fn = resolve(name)
        forms = VARIANTS["functions"].get(name, ())
        facts = probe(lambda g: FUNCTIONS[name](fn, g), variants=[lambda g, v=v: v(fn, g) for v in forms])
        facts["kept_arguments"] = kept_arguments(FUNCTIONS[name], fn) if facts["graph"] else []
        facts["inplace_flag"] = _in_place_argument(name, fn)
        facts["renorm_flag"] = _renorm_argument(name, fn)
        facts["shape"] = shape_kind(fn)
        return facts
    if section == "methods":
        if METHODS[name] is None:
            return derive("methods", "to")
        method = getattr(torch.Tensor, name)
        facts = probe(lambda g: METHODS[name](method, g))
        facts["kept_arguments"] = kept_arguments(METHODS[name], method) if facts["graph"] else []
        facts["shape"] = shape_kind(method)
        return facts
    if section == "attributes":
        return probe(lambda g: getattr(ATTRIBUTES[name](g), name))
    if section == "operators":
        fn, operands = OPERATORS[name]
        forms = VARIANTS["operators"].get(name, ())
        return probe(lambda g: fn(*operands(g)), variants=[lambda g, v=v: fn(*v(g)) for v in forms])
    if section == "subscripts":
        return probe(SUBSCRIPTS[name])
    if section == "modules":
        cls = resolve(name)
        build, forward = MODULES[name]
        built = _Built()

        def call(g):
            torch.manual_seed(0)
            built.module = build(cls)
            return built.module(*forward(g))

        facts = probe(call, built)
        facts["kept_arguments"] = kept_arguments(lambda f, g: f(*forward(g)), lambda *a: build(cls)(*a)) \
            if facts["graph"] else []
        if facts["keeps"] is None and _keeps_index_input(cls, build, forward):
            facts["keeps"] = "self"  # ``nn.Embedding``: its backward reads the indices it was given
        facts["params"] = any(p.requires_grad for p in built.module.parameters())
        facts["param_names"] = _parameter_names(cls, built.module)
        facts["bases"] = sorted(other for other in MODULES if other != name and issubclass(cls, resolve(other)))
        facts["returns"] = _returns(call(Inputs()))
        facts["inplace_flag"] = _in_place_flag(cls)
        facts["renorm_flag"] = _renorm_flag(cls, build, forward)
        facts["keeps_state"] = _keeps_state(cls, build, forward, name)
        facts["buffers"] = any(True for _ in built.module.buffers())
        return facts
    raise KeyError(section)


def _parameter_names(cls, module) -> list:
    """The names ``named_parameters()`` gives the module's parameters, over the configurations
    that add some: a recurrent layer's second layer and reverse direction, an LSTM's projection
    (each adds names; a test on a name the default omits must not be decided without it)."""
    names = [n for n, _ in module.named_parameters()]
    if issubclass(cls, torch.nn.RNNBase):
        extra = {"num_layers": 2, "bidirectional": True, **({"proj_size": 2} if cls is torch.nn.LSTM else {})}
        names += [n for n, _ in cls(3, 4, **extra).named_parameters()]
    return list(dict.fromkeys(names))


SECTIONS = {"functions": FUNCTIONS, "methods": METHODS, "attributes": ATTRIBUTES,
            "operators": OPERATORS, "subscripts": SUBSCRIPTS, "modules": MODULES}


def api_facts() -> dict:
    import warnings

    torch.set_num_threads(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {section: {name: derive(section, name) for name in sorted(recipes)}
                for section, recipes in SECTIONS.items()}


# Tensor methods named like in-place ops (a trailing underscore) that are not ATen operators:
# how to call each on a tensor.
PYTHON_UNDERSCORE_METHODS = {
    "share_memory_": lambda x: x.share_memory_(),
    "apply_": lambda x: x.apply_(lambda v: v),
    "map_": lambda x: x.map_(x.detach().clone(), lambda a, b: a),
    "map2_": lambda x: x.map2_(x.detach().clone(), x.detach().clone(), lambda a, b, c: a),
}


def not_writing() -> list:
    """Of those, the ones that run on a tensor that requires grad and leave its version counter
    alone: in place in name only (nothing autograd saved is spoiled)."""
    names = []
    for name, call in sorted(PYTHON_UNDERSCORE_METHODS.items()):
        x = torch.randn(3, requires_grad=True).clone()
        version = x._version
        try:
            call(x)
        except RuntimeError:  # "Can't call apply_() on Variable that requires grad"
            continue
        if x._version == version:
            names.append(name)
    return names


def dtypes() -> dict:
    """Every name that stands for a dtype where torch takes one (``torch.long``,
    ``torch.LongTensor``, ``torch.cuda.LongTensor``, ``int``: ``x.to(dtype)``, ``x.type(...)``,
    ``dtype=``) -> whether a tensor of that dtype can require grad (floating and complex ones;
    integer and bool ones are refused: "only Tensors of floating point ... can require gradients")."""
    named = {f"torch.{n}": getattr(torch, n) for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)}
    for prefix, module in (("torch", torch), ("torch.cuda", torch.cuda)):  # the legacy tensor types
        named.update({f"{prefix}.{n}": getattr(module, n).dtype for n in dir(module)
                      if n.endswith("Tensor") and isinstance(getattr(getattr(module, n), "dtype", None), torch.dtype)})
    named.update({t.__name__: t for t in (int, float, bool, complex)})  # Python types torch takes as dtypes
    import warnings

    out = {}
    for name, dtype in sorted(named.items()):
        try:
            with warnings.catch_warnings():  # complex32 is experimental, quantized deprecated
                warnings.simplefilter("ignore")
                t = torch.zeros(1, dtype=dtype)
        except (RuntimeError, TypeError):  # bit and sub-byte dtypes: no tensor of them is made so
            continue
        try:
            t.requires_grad_()
        except RuntimeError:
            out[name] = False
        else:
            out[name] = True
    return out


# ----------------------------------------------------------------------------- shapes
# How an op's result shape follows its arguments (``gradguard.shapes.result``'s kinds), found by
# running the op on tensors of several shapes: a kind is recorded only where it predicts every
# probe. The shapes include 1-element and 0-dim tensors, so that "one element or not" (GG105)
# is never claimed from a rule an op follows only for larger tensors.
SAME_PROBES = ((3, 4), (2, 1, 3), (1,), ())
BROADCAST_PROBES = (((3, 4), (4,)), ((1, 1), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((1,), ()))
REDUCE_PROBES = (((), {}, ()), ((1,), {}, (3,)), ((1, True), {}, (3, 1)), ((), {"dim": 0, "keepdim": True}, (1, 4)),
                 (((0, 1),), {}, ()), ((-1,), {}, (3,)))


def _shape_of(call) -> tuple | None:
    try:
        out = call()
    except Exception:  # not an op these arguments suit
        return None
    return tuple(out.shape) if isinstance(out, torch.Tensor) else None


def _operand(shape) -> torch.Tensor:
    return torch.rand(shape) * 0.8 + 0.1  # in (0.1, 0.9): inside every op's domain


def shape_kind(fn) -> str | None:
    """``same`` (one tensor in, its shape out), ``broadcast`` (two operands: their broadcast),
    ``reduce`` (no dim: one element; a dim, and keepdim, as ``sum`` does), or None."""
    torch.manual_seed(0)
    if all(_shape_of(lambda: fn(_operand(s))) == s for s in SAME_PROBES):
        return "same"
    if all(_shape_of(lambda: fn(_operand(a), _operand(b))) == tuple(torch.broadcast_shapes(a, b))
           for a, b in BROADCAST_PROBES):
        return "broadcast"
    if all(_shape_of(lambda: fn(_operand((3, 4)), *args, **kwargs)) == want for args, kwargs, want in REDUCE_PROBES):
        return "reduce"
    return None


def result_fields(aten: dict) -> dict:
    """The fields of the (values, indices) named tuples ops return (max, sort, topk, ...):
    whether each carries the graph."""
    fields = {}
    for facts in aten.values():
        if set(facts["outputs"]) == {"values", "indices"}:
            for name, differentiable in facts["outputs"].items():
                assert fields.setdefault(name, differentiable) == differentiable, name
    return fields


def link(api: dict, aten: dict) -> None:
    """Name each entry's ATen operator, where its backward node is one of theirs."""
    by_node = {}
    for op, facts in aten.items():
        if facts["node"] is not None:
            by_node.setdefault(facts["node"], op)
    for table in api.values():
        for facts in table.values():
            facts["aten"] = by_node.get(facts["grad_fn"])


# ----------------------------------------------------------------------------- distributions

def _parameter_value(con, grad: bool):
    """A value its constraint admits (vectors of 3, 3x3 matrices), a leaf that requires grad
    when ``grad``; None for a constraint not known here."""
    from torch.distributions import constraints as c
    while type(con).__name__ == "_IndependentConstraint":
        con = con.base_constraint
    kind = type(con).__name__
    if con is c.simplex:
        t = torch.rand(3)
        t = t / t.sum()
    elif con in (c.lower_cholesky, c.positive_definite, c.positive_semidefinite):
        t = torch.eye(3) * 2.0
    elif con is c.unit_interval or kind == "_Interval" and (con.lower_bound, con.upper_bound) == (0, 1):
        t = torch.rand(3) * 0.8 + 0.1
    elif con in (c.positive, c.nonnegative) or kind in ("_GreaterThan", "_GreaterThanEq") and con.lower_bound == 0:
        t = torch.rand(3) + 0.5
    elif con in (c.real, c.real_vector):
        t = torch.randn(3)
    elif con is c.nonnegative_integer or kind == "_IntegerGreaterThan":
        return torch.tensor(5.0)  # a count: never differentiated
    else:
        return None
    return t.requires_grad_() if grad else t


def _builds_shared_node(cls, name: str):
    """Whether a distribution given parameter ``name`` (a leaf that requires grad) computes from it,
    when built, a node that saves tensors and that every later method uses (``Bernoulli(probs)``
    takes the logits once): two ``log_prob`` backwards then meet it freed. None where the
    recipe cannot build it."""
    constraints = cls.arg_constraints
    given = {}
    for param, spec in inspect.signature(cls).parameters.items():
        if param == name or spec.default is inspect.Parameter.empty and param in constraints:
            value = _parameter_value(constraints[param], param == name)
            if value is None:
                return None
            given[param] = value
    try:
        dist = cls(**given)
        sample = dist.sample()
        first, second = dist.log_prob(sample).sum(), dist.log_prob(sample).sum()
    except (ValueError, RuntimeError, TypeError, NotImplementedError):
        return None
    if not first.requires_grad:
        return None
    first.backward()
    return _backward(second) == "second_time"


def distributions() -> dict:
    """Per class of ``torch.distributions`` (of parameters declared on the class), the
    parameters whose node, made when it is built, later methods share."""
    import torch.distributions as dists
    out = {}
    for name in sorted(dists.__all__):
        cls = getattr(dists, name)
        if not (isinstance(cls, type) and issubclass(cls, dists.Distribution)) \
                or not isinstance(cls.__dict__.get("arg_constraints", getattr(cls, "arg_constraints", None)), dict):
            continue
        params = list(inspect.signature(cls).parameters)
        facts = {p: _builds_shared_node(cls, p) for p in cls.arg_constraints if p in params}
        out[f"torch.distributions.{name}"] = out[f"{cls.__module__}.{name}"] = {
            p: [params.index(p), shared] for p, shared in facts.items() if shared is not None}
    return out


# What a distribution's attributes are: ``Normal(loc, scale).mean`` is ``loc`` itself.
DISTRIBUTION_PROPERTIES = ("mean", "mode", "stddev", "variance")


def distribution_attributes() -> dict:
    """Per class of ``torch.distributions``, the attributes (its parameters' names and
    ``DISTRIBUTION_PROPERTIES``) that are a parameter itself when that parameter is given:
    attribute -> [[parameter, position], ...]. Found by building each with its required
    parameters and one optional one (``probs`` or ``logits``, not both), all leaves. Of a
    wrapper (``Independent(base, n)``): [[parameter, position, attribute]], the base's own."""
    import torch.distributions as dists
    out = {}
    for name in sorted(dists.__all__):
        cls = getattr(dists, name)
        if not (isinstance(cls, type) and issubclass(cls, dists.Distribution)) \
                or not isinstance(getattr(cls, "arg_constraints", None), dict):
            continue
        signature = inspect.signature(cls).parameters
        params = list(signature)
        found: dict = {}
        for chosen in [p for p in cls.arg_constraints if p in signature]:
            given = {}
            for param, spec in signature.items():
                if param == chosen or spec.default is inspect.Parameter.empty and param in cls.arg_constraints:
                    value = _parameter_value(cls.arg_constraints[param], True)
                    if value is None:
                        break
                    given[param] = value
            else:
                try:
                    dist = cls(**given)
                except (ValueError, RuntimeError, TypeError, NotImplementedError):
                    continue
                for attr in list(cls.arg_constraints) + list(DISTRIBUTION_PROPERTIES):
                    try:
                        value = getattr(dist, attr)
                    except (AttributeError, NotImplementedError, RuntimeError, ValueError):
                        continue
                    for param, tensor in given.items():
                        if value is tensor and [param, params.index(param)] not in found.get(attr, []):
                            found.setdefault(attr, []).append([param, params.index(param)])
        if "base_distribution" in signature:  # a wrapper: its attributes may be its base's
            base = dists.Normal(torch.randn(3).requires_grad_(), (torch.rand(3) + 0.5).requires_grad_())
            others = {"reinterpreted_batch_ndims": 1, "transforms": []}
            try:
                dist = cls(base, **{p: others[p] for p, spec in signature.items()
                                    if p != "base_distribution" and spec.default is inspect.Parameter.empty})
            except (KeyError, ValueError, RuntimeError, TypeError, NotImplementedError):
                dist = None
            for attr in DISTRIBUTION_PROPERTIES if dist is not None else ():
                try:
                    if getattr(dist, attr) is getattr(base, attr):
                        found[attr] = [["base_distribution", params.index("base_distribution"), attr]]
                except (AttributeError, NotImplementedError, RuntimeError, ValueError):
                    continue
        if found:  # (by both names: ``td.Normal``, ``td.normal.Normal``)
            out[f"torch.distributions.{name}"] = out[f"{cls.__module__}.{name}"] = found
    return out


def module_members() -> list:
    """The names an ``nn.Module`` instance has before its own ``__init__`` adds any: its class's
    members and what ``nn.Module.__init__`` sets (``hasattr(m, name)`` is True of every one)."""
    return sorted(set(dir(torch.nn.Module())))


def main() -> None:
    aten = aten_facts()
    api = api_facts()
    link(api, aten)
    api["result_fields"] = result_fields(aten)
    api["not_writing"] = not_writing()
    api["dtypes"] = dtypes()
    api["distributions"] = distributions()
    api["distribution_attributes"] = distribution_attributes()
    api["module_members"] = module_members()
    meta = {"torch": torch.__version__, "python": sys.version.split()[0],
            "command": "python -m gradguard.torchdata.generate"}
    for file, data in (("aten.json", aten), ("api.json", api)):
        text = json.dumps({"generated_by": meta, **({"ops": data} if file == "aten.json" else data)},
                          indent=1, sort_keys=True)
        (HERE / file).write_text(text + "\n", encoding="utf-8")
        print(f"{file}: {len(data)} entries", file=sys.stderr)


if __name__ == "__main__":
    main()
