"""The KEEPS tables of torch_api (GG103), checked against torch: after the op, each of its tensors
is written in place, and the backward must raise the in-place error exactly when the table says
the op kept that tensor. Also the modules that write into their input (IN_PLACE_MODULES)."""
from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn as nn

from gradguard import torch_api as api
from gradguard.torchdata import generate

IN_PLACE_ERROR = "modified by an inplace operation"


def resolve(name: str):
    obj = torch
    for part in name.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def _tensor(requires_grad: bool) -> torch.Tensor:
    """Positive values (log, sqrt); a non-leaf when it requires grad, so it can be written."""
    t = torch.rand(3, 3) + 0.5
    return t.requires_grad_() * 1 if requires_grad else t


def _raises(loss: torch.Tensor) -> bool:
    try:
        (loss.real if loss.is_complex() else loss).sum().backward()  # (a Fourier transform's result)
    except RuntimeError as e:
        assert IN_PLACE_ERROR in str(e), e
        return True
    return False


def _written_then_raises(make, write_index) -> bool:
    """Run ``make`` (returning the op's operands and output), write operand ``write_index`` (or
    the output, for None) in place, then backward."""
    operands, out = make()
    target = out if write_index is None else operands[write_index]
    with torch.no_grad():  # as an optimizer step writes: the version counts all the same
        target.add_(0)
    return _raises(out)


def _expected(kind: str, write_index, grads) -> bool:
    if kind == "result":
        return write_index is None
    if kind == "self":
        return write_index == 0
    if kind == "self_result":
        return write_index in (None, 0)
    if kind == "each_other":  # operand i is kept when the other one requires grad
        return write_index is not None and grads[1 - write_index]
    if kind == "both":  # both operands, whatever requires grad
        return write_index is not None
    raise AssertionError(kind)


def _check_recipe(build, kind):
    """Every tensor of the op written in place, for each way its operands may require grad: the
    backward raises exactly as ``kind`` says. The op is called as the generator's recipe calls it
    (gradguard/torchdata): ``build(inputs)`` makes its operands with ``inputs``."""
    def call(*grads):
        made = generate.Inputs(grads)
        out = generate.tensors(build(made))[0]
        return made.made, out

    grad_cases = [(True, True), (True, False), (False, True)] if kind in ("each_other", "both") else [(True,)]
    for grads in grad_cases:
        for write_index in [None, *range(len(grads))]:
            got = _written_then_raises(lambda: call(*grads), write_index)
            assert got == _expected(kind, write_index, grads), (grads, write_index, got)


@pytest.mark.parametrize("name", sorted(api.KEEPS_FUNCTIONS))
def test_function_keeps(name):
    fn = resolve(name)
    _check_recipe(lambda g: generate.FUNCTIONS[name](fn, g), api.KEEPS_FUNCTIONS[name])


@pytest.mark.parametrize("name", sorted(api.KEPT_ARGUMENTS_FUNCTIONS))
def test_function_kept_arguments(name):
    """Re-derived: writing each of these arguments (no grad) after the call spoils the backward."""
    fn = resolve(name)
    assert tuple(generate.kept_arguments(generate.FUNCTIONS[name], fn)) == api.KEPT_ARGUMENTS_FUNCTIONS[name]


@pytest.mark.parametrize("name", sorted(api.KEPT_ARGUMENTS_METHODS))
def test_method_kept_arguments(name):
    method = getattr(torch.Tensor, name)
    assert tuple(generate.kept_arguments(generate.METHODS[name], method)) == api.KEPT_ARGUMENTS_METHODS[name]


@pytest.mark.parametrize("name", sorted(api.KEPT_ARGUMENTS_MODULES))
def test_module_kept_arguments(name):
    cls = resolve(name)
    build, forward = generate.MODULES[name]
    found = generate.kept_arguments(lambda f, g: f(*forward(g)), lambda *a: build(cls)(*a))
    assert tuple(found) == api.KEPT_ARGUMENTS_MODULES[name]


@pytest.mark.parametrize("name", sorted(api.KEEPS_METHODS))
def test_method_keeps(name):
    method = getattr(torch.Tensor, name)
    _check_recipe(lambda g: generate.METHODS[name](method, g), api.KEEPS_METHODS[name])


@pytest.mark.parametrize("name", sorted(api.KEEPS_OPERATORS))
def test_operator_keeps(name):
    fn, operands = generate.OPERATORS[name]
    _check_recipe(lambda g: fn(*operands(g)), api.KEEPS_OPERATORS[name])


@pytest.mark.parametrize("name", sorted(api.KEEPS_MODULES))
def test_module_keeps(name):
    cls, kind = resolve(name), api.KEEPS_MODULES[name]
    construct, forward = generate.MODULES[name]
    if kind in ("each_other", "both") and isinstance(getattr(construct(cls), "weight", None), torch.nn.Parameter):
        # the operands are the input and the weight
        for input_grad in (True, False):
            for write in ("input", "weight"):
                torch.manual_seed(0)
                module = construct(cls)
                made = generate.Inputs((input_grad,))
                args = forward(made)
                out = generate.tensors(module(*args))[0]
                with torch.no_grad():
                    (made.made[0] if write == "input" else module.weight).add_(0)
                expected = write == "input" or kind == "both" or input_grad
                assert _raises(out) == expected, (input_grad, write)
        return
    args = forward(generate.Inputs())
    if kind == "self" and isinstance(args[0], torch.Tensor) and not args[0].is_floating_point():
        # integer indices (an embedding): its backward reads them; its weight it does not keep
        for write in ("input", "weight"):
            torch.manual_seed(0)
            module = construct(cls)
            args = forward(generate.Inputs())
            out = generate.tensors(module(*args))[0]
            with torch.no_grad():
                (args[0] if write == "input" else module.weight).add_(0)
            assert _raises(out) == (write == "input"), write
        return
    _check_recipe(lambda g: construct(cls)(*forward(g)), kind)


@pytest.mark.parametrize("name", sorted(api.IN_PLACE_MODULES))
def test_in_place_module(name):
    cls = resolve(name)
    keyword, pos = api.IN_PLACE_MODULES[name]
    params = list(inspect.signature(cls).parameters.values())
    assert params[pos].name == keyword
    positional = [p.default for p in params[:pos]] + [True]
    for module in (cls(**{keyword: True}), cls(*positional)):
        x = _tensor(True)
        version = x._version
        out = module(x)
        assert out.data_ptr() == x.data_ptr() and x._version > version
    x = _tensor(True)
    out = cls()(x)
    assert out.data_ptr() != x.data_ptr()
