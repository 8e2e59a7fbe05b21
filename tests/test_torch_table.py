"""The generated torch facts (gradguard/torchdata) checked against the installed torch.

``aten.json`` is derived again whole from the torchgen files the wheel ships; a seeded random
sample of ``api.json`` is derived again by running torch (all of it takes the generator ~20 s);
both must equal what is committed. Also: how much they cover, that the two sources agree, and
that the analyser reads the facts without importing torch.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from gradguard.torchdata import generate

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                                        "ignore::FutureWarning")

DATA = Path(generate.__file__).resolve().parent
API = json.loads((DATA / "api.json").read_text(encoding="utf-8"))
ATEN = json.loads((DATA / "aten.json").read_text(encoding="utf-8"))["ops"]
SAMPLE_SIZE = 60


def _entries():
    return [(section, name) for section in generate.SECTIONS for name in sorted(API[section])]


def _sample():
    return random.Random(25).sample(_entries(), SAMPLE_SIZE)


def test_generated_by_this_torch():
    assert API["generated_by"]["torch"] == torch.__version__


def test_every_recipe_has_an_entry():
    for section, recipes in generate.SECTIONS.items():
        assert set(API[section]) == set(recipes), section


@pytest.mark.parametrize("section,name", _sample(), ids=lambda x: x)
def test_sampled_entry_derives_again(section, name):
    torch.set_num_threads(1)
    facts = generate.derive(section, name)
    stored = {k: v for k, v in API[section][name].items() if k != "aten"}
    assert json.loads(json.dumps(facts)) == stored


def test_aten_facts_derive_again():
    assert json.loads(json.dumps(generate.aten_facts())) == ATEN


def test_result_fields_derive_again():
    assert generate.result_fields(ATEN) == API["result_fields"]


def test_coverage():
    with_node = [op for op, f in ATEN.items() if f["node"] is not None]
    assert len(with_node) >= 600  # a backward formula: saved tensors (or none) and outputs
    assert sum(1 for f in ATEN.values() if f["saved"]) >= 400
    assert sum(1 for f in ATEN.values() if f.get("view_of")) >= 80
    assert sum(1 for f in ATEN.values() if f.get("kind") == "inplace") >= 300
    assert sum(1 for f in ATEN.values() if f.get("inplace")) >= 140  # functional op -> its x_ variant
    assert len(API["functions"]) >= 150 and len(API["methods"]) >= 90 and len(API["modules"]) >= 80
    linked = [f for s in generate.SECTIONS for f in API[s].values() if f["aten"]]
    assert len(linked) >= 300


def test_known_facts():
    # a few facts spelled out, so a generator that goes wrong everywhere at once is caught too
    assert ATEN["mul.Tensor"]["saved"] == {"other": ["self"], "self": ["other"]}
    assert ATEN["exp"]["saved"] == {"result": ["self"]}
    assert ATEN["max.dim"]["outputs"] == {"values": True, "indices": False}
    assert ATEN["transpose.int"]["view_of"] == ["self"]
    assert ATEN["add_.Tensor"]["writes"] == ["self"] and ATEN["add_.Tensor"]["kind"] == "inplace"
    assert ATEN["sin"]["inplace"] == "sin_"
    assert API["functions"]["torch.mul"]["keeps"] == "each_other"
    assert API["methods"]["view"]["view_of"] == 0 and not API["methods"]["view"]["saves"]
    # on operands laid out transposed: reshape copies, view refuses, transpose is a view still
    assert API["methods"]["reshape"]["view_of_strided"] is None
    assert API["methods"]["view"]["view_of_strided"] == "refused"
    assert API["methods"]["transpose"]["view_of_strided"] == 0
    assert API["modules"]["torch.nn.ReLU"]["inplace_flag"] == ["inplace", 0]
    assert API["functions"]["torch.autograd.Variable"]["graph"] is False  # a tensor without the graph


def test_runtime_saved_names_are_in_derivatives_yaml():
    """What the top node of each call saves at run time is among what derivatives.yaml says its
    ATen operator saves: the two sources agree."""
    checked = 0
    for section in generate.SECTIONS:
        for name, facts in API[section].items():
            op = facts["aten"]
            if op is None:
                continue
            observed = set(facts["saved"].get(facts["grad_fn"], ()))
            assert observed <= set(ATEN[op]["saved"]), (section, name, op)
            checked += bool(observed)
    assert checked >= 150


def test_analyser_reads_the_table_without_torch():
    code = ("import sys; from gradguard import torch_api as api; "
            "assert 'torch' not in sys.modules; print(len(api.FUNCTIONS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout) == sum(1 for f in API["functions"].values() if f["graph"])


def test_table_ships_with_the_package():
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8"))
    data = pyproject["tool"]["setuptools"]["package-data"]
    assert "*.json" in data["gradguard.torchdata"]


def test_underscore_names_are_in_place_ops():
    """The analyser takes a trailing underscore for an in-place write (``is_in_place_method``):
    every ATen in-place operator is named so, and every Tensor method named so is one, or is one
    of the few Python-level methods the generator runs (``not_writing`` are those that write
    nothing autograd sees)."""
    from gradguard import torch_api as api

    in_place = {op.split(".")[0] for op, f in ATEN.items() if f.get("kind") == "inplace"}
    assert all(name.endswith("_") for name in in_place)
    methods = {n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")}
    assert methods - in_place == set(generate.PYTHON_UNDERSCORE_METHODS)
    assert generate.not_writing() == API["not_writing"] == ["share_memory_"]
    assert api.is_in_place_method("add_") and not api.is_in_place_method("share_memory_")


def test_legacy_variable_is_a_copy_constructor():
    """``Variable(t)`` (the generated entry without a graph) is read as ``torch.tensor(t)``: a leaf
    without t's graph that requires grad only when asked."""
    from torch.autograd import Variable

    from gradguard import torch_api as api

    assert "torch.autograd.Variable" in api.COPY_CONSTRUCTORS
    x = torch.randn(3, requires_grad=True) * 2
    plain, asked = Variable(x), Variable(x, requires_grad=True)
    assert plain.is_leaf and not plain.requires_grad
    assert asked.is_leaf and asked.requires_grad


def _recipe(section: str, name: str):
    """The generator's canonical call of a name, as ``call(inputs)``."""
    if section == "functions":
        fn = generate.resolve(name)
        return lambda g: generate.FUNCTIONS[name](fn, g)
    if section == "methods":
        method = getattr(torch.Tensor, name)
        return lambda g: generate.METHODS[name](method, g)
    if section == "attributes":
        return lambda g: getattr(generate.ATTRIBUTES[name](g), name)
    return generate.SUBSCRIPTS[name]


def test_view_tables():
    """Every view the analyser reads (``VIEW_*``) shares its operand's version counter, laid out
    transposed too; the ones it leaves out as may-copy are views only when contiguous."""
    from gradguard import torch_api as api

    views = [("methods", n) for n in api.VIEW_METHODS] + [("functions", n) for n in api.VIEW_FUNCTIONS]
    views += [("attributes", n) for n in api.VIEW_ATTRIBUTES] + [("subscripts", n) for n in api.VIEW_SUBSCRIPTS]
    assert len(views) >= 50
    for section, name in views:
        for strided in (False, True):
            g = generate.Inputs(strided=strided)
            try:
                out = generate.tensors(_recipe(section, name)(g))
            except RuntimeError:  # view, view_as: refused, never a copy
                assert strided and API[section][name]["view_of_strided"] == "refused", name
                continue
            assert generate._view_of(out, g.made) == api.VIEW_FUNCTIONS.get(name, 0), (section, name, strided)
    for name in api._MAY_COPY:
        section = "functions" if name.startswith("torch.") else "methods"
        g = generate.Inputs(strided=True)
        out = generate.tensors(_recipe(section, name)(g))
        assert generate._view_of(out, g.made) is None, name


def test_split_outputs():
    """The ops whose first output carries the graph and the others not (values, indices)."""
    from gradguard import torch_api as api

    assert api.SPLIT_OUTPUTS
    for name, wants in api.SPLIT_OUTPUTS.items():
        section = "functions" if name.startswith("torch.") else "methods"
        out = _recipe(section, name)(generate.Inputs())
        assert tuple(t.requires_grad for t in generate.tensors(out)) == wants, name
        assert all(getattr(out, field) is out[i] for i, field in enumerate(api.SPLIT_OUTPUT_NAMES)), name
    for name in api.BY_DIM_SPLIT_OUTPUTS:  # only given a dim
        x = torch.randn(3, 4, requires_grad=True)
        whole = generate.resolve(name)(x) if name.startswith("torch.") else getattr(x, name)()
        by_dim = generate.resolve(name)(x, 1) if name.startswith("torch.") else getattr(x, name)(1)
        assert isinstance(whole, torch.Tensor) and whole.requires_grad
        values, indices = (getattr(by_dim, field) for field in api.SPLIT_OUTPUT_NAMES)
        assert values.requires_grad and not indices.requires_grad
